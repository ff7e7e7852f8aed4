"""Post-editing with a control group, for a campaign's lead: suggested against blind grades
(annotation/services/suggestions.py)."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from annotation.api.agreement import AgreementStatisticSerializer
from annotation.services import agreement


class SuggestionConditionSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=["suggested", "blind"])
    judgments = serializers.IntegerField(help_text="Human grades made in this condition.")
    with_machine = AgreementStatisticSerializer(
        help_text="Share of grades equal to the machine's (pairs it graded)."
    )
    with_humans = AgreementStatisticSerializer(
        help_text="Share of the other humans' grades of the pair, in the same condition, "
        "that are equal."
    )
    seconds = AgreementStatisticSerializer(help_text="Median active seconds per judgment.")


class SuggestionDifferenceSerializer(serializers.Serializer):
    with_machine = AgreementStatisticSerializer()
    with_humans = AgreementStatisticSerializer()
    seconds = AgreementStatisticSerializer()


class SuggestionsReportSerializer(serializers.Serializer):
    machine = serializers.IntegerField(
        allow_null=True, help_text="The machine judge shown as a suggestion; null: none."
    )
    blind_share = serializers.FloatField()
    suggested = SuggestionConditionSerializer(allow_null=True)
    blind = SuggestionConditionSerializer(allow_null=True)
    difference = SuggestionDifferenceSerializer(
        allow_null=True, help_text="Suggested minus blind, with its bootstrap interval."
    )


def suggestions_response(campaign) -> Response:
    # Stored with the agreement snapshot (services/agreement.py), not computed per request.
    report = agreement.campaign_agreement(campaign=campaign).anchoring
    body = {
        "machine": campaign.suggestions_from_id,
        "blind_share": campaign.blind_share,
        "suggested": report.suggested if report else None,
        "blind": report.blind if report else None,
        "difference": report.difference if report else None,
    }
    return Response(SuggestionsReportSerializer(body).data)
