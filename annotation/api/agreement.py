"""A campaign's agreement report and gold import over the API, for its lead (the actions
``agreement`` and ``gold`` of the campaign viewset in annotation/api/campaigns.py). Thin
over annotation/services/agreement.py; the report has the JSON download's shape."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.api.common import messages_of
from annotation.models import Campaign
from annotation.services import agreement as agreement_service
from annotation.services import agreement_export
from evaluation.api.common import QueryParameters, trec_errors
from evaluation.trec import TrecFormatError

MESSAGES = {
    "gold_too_large": "Gold files are read at once: at most {limit} KB.",
}


class AgreementStatisticSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True, help_text="Null when undefined.")
    low = serializers.FloatField(allow_null=True, help_text="95% bootstrap interval.")
    high = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField(help_text="Pairs the value is computed over.")
    se = serializers.FloatField(allow_null=True, help_text="Analytic standard error, if known.")
    reason = serializers.CharField(help_text="Why the value is undefined (empty if it is not).")
    note = serializers.CharField(help_text="A caveat about a defined value, or empty.")


class BandedAgreementStatisticSerializer(AgreementStatisticSerializer):
    band = serializers.CharField(
        help_text="Landis & Koch's words for a kappa, Krippendorff's for an alpha."
    )


class AgreementOverallSerializer(serializers.Serializer):
    fleiss_kappa = BandedAgreementStatisticSerializer()
    fleiss_kappa_at_threshold = BandedAgreementStatisticSerializer(
        help_text="Relevant (grade >= the threshold) or not."
    )
    alpha_ordinal = BandedAgreementStatisticSerializer()
    alpha_interval = BandedAgreementStatisticSerializer()
    observed = AgreementStatisticSerializer(
        help_text="Share of pairs of grades of a pair that agree."
    )
    within_one = AgreementStatisticSerializer(help_text="… that are at most one grade apart.")


class AgreementJudgePairSerializer(serializers.Serializer):
    judge_a = serializers.CharField()
    judge_b = serializers.CharField()
    shared_pairs = serializers.IntegerField()
    kappa = BandedAgreementStatisticSerializer(help_text="Cohen's kappa with the chosen weights.")
    kappa_unweighted = BandedAgreementStatisticSerializer()
    kappa_at_threshold = BandedAgreementStatisticSerializer()
    observed = AgreementStatisticSerializer()
    within_one = AgreementStatisticSerializer()
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Counts over the scale: rows judge_a's grade, columns judge_b's.",
    )


class TopicAgreementSerializer(serializers.Serializer):
    topic_id = serializers.IntegerField()
    qid = serializers.CharField()
    query = serializers.CharField()
    pairs = serializers.IntegerField(help_text="Pairs with any grade.")
    multiply_judged = serializers.IntegerField(help_text="Pairs graded by two or more judges.")
    disputed = serializers.IntegerField(help_text="Of those, pairs graded differently.")
    alpha_ordinal = BandedAgreementStatisticSerializer()
    observed = AgreementStatisticSerializer()


class JudgeProfileSerializer(serializers.Serializer):
    judge = serializers.CharField()
    judged = serializers.IntegerField(help_text="Pairs graded.")
    grade_counts = serializers.ListField(
        child=serializers.IntegerField(), help_text="Grades given, in the order of ``scale``."
    )
    leniency = AgreementStatisticSerializer(
        help_text="Mean of (grade − the other judges' median grade) over shared pairs."
    )
    tendency = serializers.ChoiceField(choices=["lenient", "strict", "in line", ""])


class AgreementCampaignSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class AgreementCountsSerializer(serializers.Serializer):
    pairs = serializers.IntegerField(help_text="Pairs with any grade.")
    multiply_judged = serializers.IntegerField()
    judgments = serializers.IntegerField(help_text="Grades (skips do not count).")
    judges = serializers.IntegerField()


class AgreementReportSerializer(serializers.Serializer):
    campaign = AgreementCampaignSerializer()
    weights = serializers.ChoiceField(choices=list(agreement_service.WEIGHTS))
    scale = serializers.ListField(child=serializers.IntegerField())
    relevance_threshold = serializers.IntegerField()
    resamples = serializers.IntegerField()
    seed = serializers.IntegerField()
    confidence = serializers.FloatField()
    counts = AgreementCountsSerializer()
    overall = AgreementOverallSerializer()
    pairwise = AgreementJudgePairSerializer(many=True)
    topics = TopicAgreementSerializer(many=True, help_text="Worst agreement first.")
    judges = JudgeProfileSerializer(many=True)


class AgreementParameters(QueryParameters):
    weights = serializers.ChoiceField(
        choices=list(agreement_service.WEIGHTS),
        default=agreement_service.DEFAULT_WEIGHTS,
        help_text="Weights of pairwise Cohen's kappa.",
    )


class GoldUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="qid docno grade, or TREC qrels lines qid iter docno grade; plain or gzip."
    )

    def validate_file(self, upload):
        limit = agreement_service.MAX_GOLD_BYTES
        if upload.size > limit:
            raise ValidationError(MESSAGES["gold_too_large"].format(limit=limit // 1024))
        return upload


class GoldImportedSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="Pairs of the file, now gold with its grade.")
    added = serializers.IntegerField(help_text="Of those, pairs new to the pool.")
    already = serializers.IntegerField(help_text="Of those, pairs already in the pool.")
    new_documents = serializers.IntegerField(help_text="Placeholders for docnos not yet here.")
    assigned = serializers.IntegerField(help_text="New assignments (every judge gets each).")


def agreement_response(request, campaign: Campaign) -> Response:
    weights = AgreementParameters.read(request)["weights"]
    result = agreement_service.campaign_agreement(campaign=campaign, weights=weights)
    return Response(AgreementReportSerializer(agreement_export.report_data(result)).data)


def gold_response(request, campaign: Campaign) -> Response:
    form = GoldUploadSerializer(data=request.data)
    form.is_valid(raise_exception=True)
    upload = form.validated_data["file"]
    try:
        done = agreement_service.import_gold(campaign=campaign, source=upload, filename=upload.name)
    except TrecFormatError as error:
        return trec_errors(error)
    except DjangoValidationError as error:
        raise ValidationError({"file": messages_of(error)}) from None
    change = done.change
    body = {
        "marked": done.marked,
        "added": change.added,
        "already": change.already,
        "new_documents": change.new_documents,
        "assigned": change.assigned,
    }
    return Response(GoldImportedSerializer(body).data)
