"""A campaign's way to qrels over the API, for its lead: the disagreement queue, decisions
(409 when another lead decided first), publications with the provenance of every grade, and
every judge's raw judgments. Thin over annotation/services/adjudication.py
(and final_grades.py)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import RolePermissionsMixin
from annotation import tasks
from annotation.api.common import (
    LedCampaignMixin,
    messages_of,
    start_campaign_job,
    whole_number,
)
from annotation.models import GradeBasis, LeadDecision, Publication
from annotation.services import adjudication as service
from annotation.services import final_grades, grade_tables
from common import text_limits
from common.ids import MAX_ID
from evaluation.api.common import QueryParameters
from jobs.api import JobSerializer
from jobs.services.limits import fits_in_request


class JudgeGradeSerializer(serializers.Serializer):
    judge = serializers.CharField(source="username")
    grade = serializers.IntegerField(allow_null=True, help_text="Null: skipped.")
    skip_reason = serializers.CharField()
    note = serializers.CharField()
    seconds = serializers.FloatField()


class PairStateSerializer(serializers.Serializer):
    pair = serializers.IntegerField(source="pair_id")
    qid = serializers.CharField()
    docno = serializers.CharField()
    judgments = JudgeGradeSerializer(many=True)
    open = serializers.IntegerField(help_text="Judges who have not graded it yet.")
    spread = serializers.IntegerField()
    grade = serializers.IntegerField(allow_null=True, help_text="The final grade, if any.")
    basis = serializers.ChoiceField(choices=GradeBasis.choices, allow_null=True)
    why = serializers.CharField(help_text="How the grade was reached, or why there is none.")
    decision = serializers.IntegerField(
        source="decision.pk", allow_null=True, default=None, help_text="The current decision."
    )


class QueueParameters(QueryParameters):
    topic = whole_number(help_text="One topic's pairs (its id).")
    show = serializers.ChoiceField(
        choices=["undecided", "all"], default="undecided", help_text="Undecided only, or all."
    )


@extend_schema_view(
    list=extend_schema(
        summary="Disputed pairs in the order to decide them",
        parameters=[QueueParameters],
        responses=PairStateSerializer(many=True),
    )
)
class DisagreementViewSet(LedCampaignMixin, RolePermissionsMixin, viewsets.GenericViewSet):
    """Pairs whose judges disagree: those straddling the relevance threshold first, then by
    spread, widest first; a page at a time ({count, next, previous, results})."""

    serializer_class = PairStateSerializer
    # Paged like every list of the API (config.pagination): a campaign of hundreds of
    # thousands of judgments has tens of thousands of disputed pairs.
    # The queue's own parameters (QueueParameters) filter it; no generic filter backends.
    filter_backends = []

    def get_queryset(self):
        return LeadDecision.objects.none()  # for the schema only: list() builds the queue

    def list(self, request, campaign_pk=None):
        query = QueueParameters.read(request)
        # The pairs are chosen, ordered and paged in the database; only the page's pairs
        # are read in full.
        ids = service.disputed_page(
            campaign=self.campaign,
            topic_id=query.get("topic"),
            undecided_only=query["show"] == "undecided",
        )
        page = self.paginate_queryset(ids)
        states = final_grades.states_of(campaign=self.campaign, pair_ids=list(page))
        return self.get_paginated_response(PairStateSerializer(states, many=True).data)


class DecisionSerializer(serializers.ModelSerializer):
    decided_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    qid = serializers.CharField(source="pair.topic.qid", read_only=True)
    docno = serializers.CharField(source="pair.document.docno", read_only=True)

    class Meta:
        model = LeadDecision
        fields = ["id", "pair", "qid", "docno", "grade", "reason", "rule", "decided_by"]
        fields += ["decided_at", "supersedes"]
        extra_kwargs = {"rule": {"help_text": "The campaign's rule in force when decided."}}
        read_only_fields = fields


class DecideSerializer(serializers.Serializer):
    pair = serializers.IntegerField()
    grade = serializers.IntegerField()
    reason = serializers.CharField(max_length=service.MAX_REASON)
    based_on = serializers.IntegerField(
        allow_null=True,
        default=None,
        help_text="The current decision you saw (null: none). Another one since is a 409.",
    )


class DecisionConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    current = DecisionSerializer(required=False, help_text="The decision made meanwhile.")


@extend_schema_view(
    list=extend_schema(summary="Every decision on the campaign's pairs, oldest first"),
    create=extend_schema(
        summary="Decide a pair's final grade",
        request=DecideSerializer,
        responses={201: DecisionSerializer, 409: DecisionConflictSerializer},
    ),
)
class DecisionViewSet(
    LedCampaignMixin, RolePermissionsMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    serializer_class = DecisionSerializer

    def get_queryset(self):
        if self._fake():
            return LeadDecision.objects.none()
        return LeadDecision.objects.filter(pair__campaign=self.campaign).select_related(
            "decided_by", "pair__topic", "pair__document"
        )

    def list(self, request, campaign_pk=None):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(DecisionSerializer(page, many=True).data)

    def create(self, request, campaign_pk=None):
        form = DecideSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        if not self.campaign.pairs.filter(pk=data["pair"]).exists():
            raise ValidationError({"pair": "No such pair in this campaign."})
        try:
            decision = service.decide_pair(
                campaign=self.campaign,
                pair_id=data["pair"],
                lead=request.user,
                grade=data["grade"],
                reason=data["reason"],
                based_on=data["based_on"],
            )
        except service.DecisionConflict as conflict:
            body = {"detail": str(conflict)}
            if conflict.current is not None:
                body["current"] = DecisionSerializer(conflict.current).data
            return Response(body, status=status.HTTP_409_CONFLICT)
        except DjangoValidationError as error:
            raise ValidationError({"non_field_errors": messages_of(error)}) from None
        return Response(
            DecisionSerializer(self.get_queryset().get(pk=decision.pk)).data,
            status=status.HTTP_201_CREATED,
        )


class PublicationSerializer(serializers.ModelSerializer):
    qrels = serializers.IntegerField(source="qrels.pk")
    label = serializers.CharField(source="qrels.label")
    checksum = serializers.CharField(source="qrels.checksum")
    published_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Publication
        fields = ["id", "qrels", "label", "checksum", "rule", "relevance_threshold", "counts"]
        fields += ["left_out", "machine_gates", "published_by", "published_at"]
        read_only_fields = fields


class PublishSerializer(serializers.Serializer):
    name = serializers.CharField(
        max_length=100, required=False, allow_blank=True, help_text="Default: the campaign's slug."
    )
    description = serializers.CharField(
        max_length=text_limits.DESCRIPTION, required=False, allow_blank=True
    )
    leave_out_undecided = serializers.BooleanField(
        default=False, help_text="Publish without the undecided pairs (else they block it)."
    )
    identical_to = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=MAX_ID,
        help_text="Publish even though the grades equal this qrels version (its id, as a 409 "
        "names it), the newest of the name: the copy is made only while that version is "
        "still the newest, so sending the request twice never makes two.",
    )


class PublishedGradeSerializer(serializers.Serializer):
    qid = serializers.CharField()
    docno = serializers.CharField()
    grade = serializers.IntegerField()
    basis = serializers.ChoiceField(choices=GradeBasis.choices)
    judges = serializers.DictField(child=serializers.IntegerField(allow_null=True))
    reason = serializers.CharField(source="decision.reason", default="")
    lead = serializers.CharField(
        source="decision.decided_by.username", default="", help_text="Who decided, if a lead."
    )
    decided_at = serializers.DateTimeField(
        source="decision.decided_at", default=None, allow_null=True
    )
    rule_in_force = serializers.CharField(
        source="decision.rule", default="", help_text="The campaign's rule when the lead decided."
    )


class PublishBlockedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    undecided = PairStateSerializer(
        many=True, required=False, help_text="The pairs still without a grade."
    )
    identical_to = serializers.DictField(
        required=False,
        help_text="When the grades equal the newest version of the name: its id, label and "
        "checksum. Send identical_to=id to publish the copy anyway.",
    )


@extend_schema_view(
    list=extend_schema(summary="The campaign's published qrels versions"),
    retrieve=extend_schema(summary="One publication: counts and the pairs left out"),
    create=extend_schema(
        summary="Publish the final grades as the next qrels version (a job for a campaign of "
        "more than SYNC_WRITE_ROWS pairs: 202 with the job to poll); 409 when pairs are "
        "undecided, or when the grades equal the newest version of the name (identical_to)",
        request=PublishSerializer,
        responses={
            201: PublicationSerializer,
            202: JobSerializer,
            409: PublishBlockedSerializer,
        },
    ),
)
class PublicationViewSet(
    LedCampaignMixin,
    RolePermissionsMixin,
    mixins.CreateModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    serializer_class = PublicationSerializer
    lookup_value_converter = "int"

    def get_queryset(self):
        if self._fake():
            return Publication.objects.none()
        return Publication.objects.filter(campaign=self.campaign).select_related(
            "qrels", "published_by"
        )

    def create(self, request, campaign_pk=None):
        form = PublishSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        if not fits_in_request(self.campaign.pairs.count()):
            return start_campaign_job(
                request,
                self.campaign,
                kind="publish",
                title="Publish the qrels",
                task=tasks.publish_job,
                name=data.get("name", ""),
                description=data.get("description", ""),
                leave_out_undecided=data["leave_out_undecided"],
                identical_to=data["identical_to"],
            )
        try:
            publication = service.publish(
                campaign=self.campaign,
                user=request.user,
                name=data.get("name", ""),
                description=data.get("description", ""),
                leave_out_undecided=data["leave_out_undecided"],
                identical_to=data["identical_to"],
            )
        except service.PublishBlocked as blocked:
            return Response(
                {
                    "detail": str(blocked),
                    "undecided": PairStateSerializer(blocked.undecided, many=True).data,
                },
                status=status.HTTP_409_CONFLICT,
            )
        except service.IdenticalGrades as same:
            latest = same.latest
            return Response(
                {
                    "detail": f"{same.message} Send identical_to={latest.pk} to publish it anyway.",
                    "identical_to": {
                        "id": latest.pk,
                        "label": latest.label,
                        "checksum": latest.checksum,
                    },
                },
                status=status.HTTP_409_CONFLICT,
            )
        except DjangoValidationError as error:
            raise ValidationError({"non_field_errors": messages_of(error)}) from None
        return Response(
            PublicationSerializer(self.get_queryset().get(pk=publication.pk)).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        summary="Provenance of every published grade", responses=PublishedGradeSerializer(many=True)
    )
    @action(detail=True)
    def provenance(self, request, campaign_pk=None, pk=None):
        publication = self.get_object()
        grades = publication.grades.select_related("decision__decided_by")
        page = self.paginate_queryset(grades)
        return self.get_paginated_response(PublishedGradeSerializer(page, many=True).data)


class RawJudgmentSerializer(serializers.Serializer):
    qid = serializers.CharField()
    docno = serializers.CharField()
    judge = serializers.CharField(
        help_text="A username, or outside:NAME / machine:NAME for a judge who does not judge here."
    )
    grade = serializers.IntegerField(allow_null=True, help_text="Null when skipped.")
    skip_reason = serializers.CharField()
    note = serializers.CharField()
    seconds = serializers.FloatField(allow_null=True, help_text="Null when the source gave none.")
    time = serializers.DateTimeField()
    # A string, not an enum: judgment imports name an enum "judge_kind" of two kinds already.
    judge_kind = serializers.CharField(help_text="here, outside or machine.")
    imported_from = serializers.CharField(
        help_text="The file an imported grade came from; empty for grades given here."
    )


FIELDS = tuple(grade_tables.JUDGMENT_HEADER)


@extend_schema_view(list=extend_schema(summary="Every judge's own judgment of every pair"))
class RawJudgmentViewSet(LedCampaignMixin, RolePermissionsMixin, viewsets.GenericViewSet):
    serializer_class = RawJudgmentSerializer

    def list(self, request, campaign_pk=None):
        rows = grade_tables.judgment_rows(self.campaign)
        page = self.paginate_queryset(rows)
        data = [dict(zip(FIELDS, row, strict=True)) for row in page]
        return self.get_paginated_response(RawJudgmentSerializer(data, many=True).data)
