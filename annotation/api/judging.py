"""Assignments and judgments: a judge lists, grades, skips, undoes and notes their own
assignments and reads their own judgments; a lead reads those of the campaigns they lead.
Nobody else's grades are reachable."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from accounts.permissions import RolePermissionsMixin
from annotation import services
from annotation.api.common import (
    MAX_SECONDS,
    MESSAGES,
    messages_of,
    visible_assignments,
    whole_number,
)
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Document,
    Judgment,
    JudgmentChange,
    Topic,
)
from annotation.services import suggestions
from common import text_limits
from evaluation.api.common import QueryParameters

# --- assignments ---------------------------------------------------------------------------


class JudgmentStateSerializer(serializers.ModelSerializer):
    class Meta:
        model = Judgment
        fields = ["grade", "skip_reason", "note", "seconds", "updated_at"]
        read_only_fields = fields


class AssignmentSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:assignment-detail")
    campaign = serializers.IntegerField(source="pair.campaign_id", read_only=True)
    judge = serializers.SlugRelatedField(
        slug_field="username", read_only=True, help_text="A username."
    )
    qid = serializers.CharField(source="pair.topic.qid", read_only=True)
    docno = serializers.CharField(source="pair.document.docno", read_only=True)
    judgment = serializers.SerializerMethodField()

    class Meta:
        model = Assignment
        fields = [
            "id",
            "url",
            "campaign",
            "judge",
            "qid",
            "docno",
            "status",
            "position",
            "judgment",
        ]
        read_only_fields = fields

    @extend_schema_field(JudgmentStateSerializer(allow_null=True))
    def get_judgment(self, assignment) -> dict | None:
        judgment = getattr(assignment, "judgment", None)  # reverse one-to-one: may be missing
        return JudgmentStateSerializer(judgment).data if judgment is not None else None


class AssignmentTopicSerializer(serializers.ModelSerializer):
    class Meta:
        model = Topic
        fields = ["qid", "query", "description", "narrative"]
        read_only_fields = fields


class AssignmentDocumentSerializer(serializers.ModelSerializer):
    url = serializers.CharField(read_only=True, help_text="Its address; empty when it has none.")

    class Meta:
        model = Document
        fields = ["docno", "title", "text", "url"]
        read_only_fields = fields


class AssignmentDetailSerializer(AssignmentSerializer):
    """What a judge needs to grade the pair; never which system retrieved the document."""

    topic = AssignmentTopicSerializer(source="pair.topic", read_only=True)
    document = AssignmentDocumentSerializer(source="pair.document", read_only=True)
    suggestion = serializers.SerializerMethodField(
        help_text="The machine's grade shown beside the pair as a suggestion ({grade, label}); "
        "null when the campaign shows none, the pair is one of the judge's blind ones, or the "
        "machine has no grade of it."
    )

    class Meta(AssignmentSerializer.Meta):
        fields = [*AssignmentSerializer.Meta.fields, "topic", "document", "suggestion"]
        read_only_fields = fields

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {"grade": {"type": "integer"}, "label": {"type": "string"}},
        }
    )
    def get_suggestion(self, assignment) -> dict | None:
        return suggestions.suggestion_for(
            assignment.pair.campaign, judge_id=assignment.judge_id, pair_id=assignment.pair_id
        )


def _seconds_field() -> serializers.FloatField:
    message = MESSAGES["seconds"]
    return serializers.FloatField(
        min_value=0,
        max_value=MAX_SECONDS,
        default=0.0,
        help_text="Active time spent on the pair since the last submission.",
        error_messages={"invalid": message, "min_value": message, "max_value": message},
    )


class GradeSerializer(serializers.Serializer):
    grade = serializers.IntegerField(error_messages={"invalid": MESSAGES["whole_number"]})
    seconds = _seconds_field()
    request_id = serializers.UUIDField(
        required=False, allow_null=True, default=None, help_text="Makes a retry a no-op."
    )


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(
        max_length=text_limits.SKIP_REASON,
        error_messages={
            "blank": MESSAGES["skip_needs_reason"],
            "required": MESSAGES["skip_needs_reason"],
        },
    )
    seconds = _seconds_field()
    request_id = serializers.UUIDField(required=False, allow_null=True, default=None)


class NoteSerializer(serializers.Serializer):
    note = serializers.CharField(
        max_length=text_limits.NOTE, allow_blank=True, help_text="Empty clears it."
    )


class ChangeSerializer(serializers.ModelSerializer):
    changed_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="A username."
    )

    class Meta:
        model = JudgmentChange
        fields = ["action", "old_grade", "new_grade", "note", "changed_by", "changed_at"]
        read_only_fields = fields


class AssignmentFilter(QueryParameters):
    campaign = whole_number(help_text="Only this campaign.")
    judge = whole_number(help_text="Only this judge (leads).")
    status = serializers.ChoiceField(
        choices=AssignmentStatus.choices, required=False, help_text="open, done or skipped."
    )
    lookups = {"campaign": "pair__campaign_id", "judge": "judge_id"}


@extend_schema_view(
    list=extend_schema(
        summary="Your assignments (judges) or your campaigns' (leads), in queue order",
        parameters=[AssignmentFilter],
    ),
    retrieve=extend_schema(summary="One assignment with its topic and document"),
)
class AssignmentViewSet(RolePermissionsMixin, viewsets.ReadOnlyModelViewSet):
    """Assignments, in each judge's working order (topic by topic, their own shuffled order
    inside a topic). A judge grades, skips, undoes and notes their own."""

    lookup_value_converter = "int"

    def get_serializer_class(self):
        return AssignmentSerializer if self.action == "list" else AssignmentDetailSerializer

    def get_queryset(self):
        assignments = visible_assignments(self.request.user).select_related(
            "pair__topic", "pair__document", "pair__campaign", "judge", "judgment"
        )
        if self.action == "list":
            assignments = assignments.filter(**AssignmentFilter.read(self.request))
            # A judge's own list is their queue: pairs waiting for their document's text are
            # left out, as on the judging page (a lead still lists every assignment).
            assignments = assignments.exclude(
                Q(judge=self.request.user) & services.WAITING_FOR_TEXT
            )
        return assignments.order_by("pair__campaign_id", "judge_id", "pair__topic_id", "position")

    def _own(self) -> Assignment:
        assignment = self.get_object()
        if assignment.judge_id != self.request.user.pk:
            raise PermissionDenied(MESSAGES["not_your_assignment"])
        return assignment

    def _state(self, assignment: Assignment) -> Response:
        fresh = self.get_queryset().get(pk=assignment.pk)
        return Response(
            AssignmentDetailSerializer(fresh, context=self.get_serializer_context()).data
        )

    def _call(self, operation, field: str, **kwargs):
        try:
            return operation(**kwargs)
        except DjangoValidationError as error:
            raise ValidationError({field: messages_of(error)}) from None

    @extend_schema(
        summary="Grade your assignment (again to change the grade)",
        request=GradeSerializer,
        responses=AssignmentDetailSerializer,
    )
    @action(detail=True, methods=["post"])
    def grade(self, request, pk=None):
        assignment = self._own()
        form = GradeSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        self._call(
            services.record_judgment,
            "grade",
            assignment_id=assignment.pk,
            judge=request.user,
            needs_text=True,
            **form.validated_data,
        )
        return self._state(assignment)

    @extend_schema(
        summary="Skip your assignment with a reason",
        request=SkipSerializer,
        responses=AssignmentDetailSerializer,
    )
    @action(detail=True, methods=["post"])
    def skip(self, request, pk=None):
        assignment = self._own()
        form = SkipSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        self._call(
            services.skip_assignment,
            "reason",
            assignment_id=assignment.pk,
            judge=request.user,
            **form.validated_data,
        )
        return self._state(assignment)

    @extend_schema(
        summary="Take back your grade or skip (the history keeps it)",
        request=None,
        responses=AssignmentDetailSerializer,
    )
    @action(detail=True, methods=["post"])
    def undo(self, request, pk=None):
        assignment = self._own()
        services.undo_judgment(assignment_id=assignment.pk, judge=request.user)
        return self._state(assignment)

    @extend_schema(
        summary="Set the note on your judgment",
        request=NoteSerializer,
        responses=AssignmentDetailSerializer,
    )
    @action(detail=True, methods=["post"])
    def note(self, request, pk=None):
        assignment = self._own()
        form = NoteSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        self._call(
            services.set_note,
            "note",
            assignment_id=assignment.pk,
            judge=request.user,
            note=form.validated_data["note"].strip(),
        )
        return self._state(assignment)

    @extend_schema(
        summary="Every change of the judgment, oldest first", responses=ChangeSerializer(many=True)
    )
    @action(detail=True)
    def history(self, request, pk=None):
        # Paged like every list (config/pagination.py): a judge may change a grade any
        # number of times.
        assignment = self.get_object()
        changes = assignment.changes.select_related("changed_by").order_by("changed_at", "pk")
        page = self.paginate_queryset(changes)
        return self.get_paginated_response(ChangeSerializer(page, many=True).data)


# --- judgments -----------------------------------------------------------------------------


class JudgmentSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:judgment-detail")
    campaign = serializers.IntegerField(source="assignment.pair.campaign_id", read_only=True)
    judge = serializers.CharField(source="assignment.judge.username", read_only=True)
    qid = serializers.CharField(source="assignment.pair.topic.qid", read_only=True)
    docno = serializers.CharField(source="assignment.pair.document.docno", read_only=True)

    class Meta:
        model = Judgment
        fields = [
            "id",
            "url",
            "assignment",
            "campaign",
            "judge",
            "qid",
            "docno",
            "grade",
            "skip_reason",
            "note",
            "seconds",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class JudgmentFilter(QueryParameters):
    campaign = whole_number(help_text="Only this campaign.")
    judge = whole_number(help_text="Only this judge (leads).")
    lookups = {"campaign": "assignment__pair__campaign_id", "judge": "assignment__judge_id"}


@extend_schema_view(
    list=extend_schema(
        summary="Your judgments (judges) or your campaigns' (leads)", parameters=[JudgmentFilter]
    ),
    retrieve=extend_schema(summary="One judgment"),
)
class JudgmentViewSet(RolePermissionsMixin, viewsets.ReadOnlyModelViewSet):
    """Judgments: a judge reads their own, a lead their campaigns'. Nobody else's."""

    serializer_class = JudgmentSerializer
    lookup_value_converter = "int"

    def get_queryset(self):
        judgments = Judgment.objects.filter(
            assignment__in=visible_assignments(self.request.user)
        ).select_related(
            "assignment__pair__topic", "assignment__pair__document", "assignment__judge"
        )
        if self.action == "list":
            judgments = judgments.filter(**JudgmentFilter.read(self.request))
        return judgments.order_by("assignment__pair__campaign_id", "assignment_id")
