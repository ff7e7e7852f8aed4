"""The query sandbox over the API, as actions of the search endpoints' viewset
(evaluation/api/search.py): an endpoint's kept versions and a diff of two; trials (an edit
of the template tried against the saved version, or saved versions compared) started as
jobs, read back with per-query deltas, and an edit saved as the next version. The rules are
evaluation/services/sandbox.py's."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from accounts.permissions import IsLeadOrEngineer
from common.ids import parse_id
from evaluation import measures, search
from evaluation.api import search as endpoints
from evaluation.api.search import MappingSerializer
from evaluation.models import SearchEndpointVersion, SearchTrial
from evaluation.search import sandbox as arithmetic
from evaluation.services import sandbox
from evaluation.services.endpoint_versions import versions_of
from evaluation.tasks import start_search_trial
from jobs.api import JOB_STARTED, started

ACTIONS = ("versions", "version_diff", "trials", "trial", "trial_save")
# Ids a user names that they may not reach (a campaign they do not lead, a qrels version they
# may not read) are not found, as everywhere (a guessed id confirms nothing).
NOT_FOUND = {"no_campaign", "no_qrels"}


def refused(error: DjangoValidationError):
    """A service's refusal as the API says it: not found, a conflict, or a 400."""
    codes = {getattr(e, "code", None) for e in error.error_list}
    if codes & NOT_FOUND:
        return NotFound(" ".join(error.messages))
    return ValidationError({"detail": error.messages})


class EndpointVersionSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="A username."
    )

    class Meta:
        model = SearchEndpointVersion
        fields = ["number", "kind", "method", "template", "mapping", "note", "created_by"]
        fields += ["created_at"]


class TrialBriefSerializer(serializers.ModelSerializer):
    """A trial in the endpoint's list: what it compared, on what, whether it was saved."""

    edit = serializers.SerializerMethodField(help_text="Whether it tried an edit.")
    query_set = serializers.CharField(source="query_set_label")

    class Meta:
        model = SearchTrial
        fields = ["id", "base_version", "versions", "edit", "saved_as", "query_set", "measure"]
        fields += ["created_at"]

    def get_edit(self, trial) -> bool:
        return bool(trial.template)


class TrialRequestSerializer(serializers.Serializer):
    template = serializers.CharField(
        max_length=search.templates.MAX_TEMPLATE_CHARS,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        default="",
        help_text="The edit to try. Empty: compare saved versions only.",
    )
    mapping = MappingSerializer(required=False, help_text="The edit's mapping; empty: the saved.")
    versions = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        max_length=arithmetic.MAX_ARMS,
        help_text="Saved versions to ask, the first the baseline. Default: the saved one.",
    )
    campaign = serializers.IntegerField(required=False, help_text="Query set: a campaign you lead.")
    query_qrels = serializers.IntegerField(
        required=False, help_text="Query set: a qrels version's topics."
    )
    qrels = serializers.IntegerField(
        required=False, help_text="Score against this qrels version (default: query_qrels)."
    )
    measure = serializers.CharField(
        max_length=200,
        default=sandbox.DEFAULT_MEASURE,
        help_text="Any measure, either dialect (nDCG@10, ndcg_cut.10, P@5, AP, ...).",
    )
    k = serializers.IntegerField(min_value=1, max_value=search.MAX_K, default=sandbox.DEFAULT_K)

    def validate(self, data):
        if ("campaign" in data) == ("query_qrels" in data):
            raise ValidationError({"detail": "Choose one query set: campaign or query_qrels."})
        return data


class SaveSerializer(serializers.Serializer):
    note = serializers.CharField(
        max_length=sandbox.NOTE_MAX, required=False, allow_blank=True, default=""
    )


def trial_body(trial, measure: str | None = None) -> dict:
    name, table = sandbox.table(trial, measure)
    arms = []
    for arm, mean, delta in zip(trial.arms, table.means, table.mean_deltas(), strict=True):
        arms.append(
            {
                "label": arm["label"],
                "version": arm["version"],
                "run": arm["run"],
                "error": arm["error"],
                "failed_count": arm["failed_count"],
                "mean": mean,
                "mean_delta": delta,
            }
        )
    return {
        "id": trial.pk,
        "endpoint": trial.endpoint_id,
        "base_version": trial.base_version,
        "saved_as": trial.saved_as,
        "template": trial.template,
        "mapping": trial.mapping,
        "query_set": trial.query_set_label,
        "qrels": trial.qrels_id,
        "k": trial.k,
        "measure": name,
        "measure_shown": measures.display_name(name),
        "measures": trial.result["measures"],
        "arms": arms,
        "counts": table.counts(),
        "unjudged": table.unjudged,
        "queries": [
            {"qid": row.qid, "values": row.values, "deltas": row.deltas, "failed": row.failed}
            for row in table.rows
        ],
        "created_at": trial.created_at,
    }


class SandboxActions:
    """Mixed into SearchEndpointViewSet (``get_object`` finds the endpoint)."""

    @extend_schema(
        summary="The endpoint's kept versions, newest first",
        responses={200: EndpointVersionSerializer(many=True)},
    )
    @action(detail=True, methods=["get"])
    def versions(self, request, pk=None):
        endpoint = self.get_object()
        page = self.paginate_queryset(versions_of(endpoint))
        return self.get_paginated_response(EndpointVersionSerializer(page, many=True).data)

    @extend_schema(
        summary="Two versions' templates as a line diff, and their mapping's changes",
        parameters=[
            OpenApiParameter("a", OpenApiTypes.INT, required=True),
            OpenApiParameter("b", OpenApiTypes.INT, required=True),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["get"], url_path="versions/diff")
    def version_diff(self, request, pk=None):
        endpoint = self.get_object()
        numbers = []
        for key in ("a", "b"):
            number = parse_id(request.query_params.get(key))
            if number is None:
                raise ValidationError({key: "A version number."})
            numbers.append(number)
        found = {v.number: v for v in endpoint.versions.filter(number__in=numbers)}
        missing = [n for n in numbers if n not in found]
        if missing:
            raise NotFound(f"{endpoint.name} has no version {missing[0]}.")
        old, new = found[numbers[0]], found[numbers[1]]
        lines = arithmetic.text_diff(
            old.template, new.template, old_label=f"v{old.number}", new_label=f"v{new.number}"
        )
        return Response(
            {
                "a": old.number,
                "b": new.number,
                "template": [{"kind": line.kind, "text": line.text} for line in lines],
                "mapping": [
                    {"field": f, "a": a, "b": b}
                    for f, a, b in arithmetic.mapping_changes(old.mapping, new.mapping)
                ],
            }
        )

    @extend_schema(
        methods=["GET"],
        summary="Your sandbox trials of this endpoint, newest first",
        operation_id="search_endpoints_trials_list",
        responses={200: TrialBriefSerializer(many=True)},
    )
    @extend_schema(
        methods=["POST"],
        summary="Start a sandbox trial: an edit against the saved version, or versions compared",
        request=TrialRequestSerializer,
        responses={**JOB_STARTED, 400: OpenApiResponse(description="Unfit parameters.")},
    )
    @action(detail=True, methods=["get", "post"])
    def trials(self, request, pk=None):
        endpoint = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(sandbox.visible_trials(request.user, endpoint))
            return self.get_paginated_response(TrialBriefSerializer(page, many=True).data)
        asked = TrialRequestSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        data = dict(asked.validated_data)
        try:
            plan = sandbox.plan_trial(endpoint=endpoint, user=request.user, **data)
        except DjangoValidationError as error:
            raise refused(error) from None
        job = start_search_trial(endpoint=endpoint, user=request.user, plan=plan)
        return started(job, request)

    def _trial(self, request, trial_pk):
        endpoint = self.get_object()
        found = parse_id(str(trial_pk))
        if found is None:
            raise NotFound()
        return get_object_or_404(sandbox.visible_trials(request.user, endpoint), pk=found)

    @extend_schema(
        summary="A trial: each arm's mean and the per-query values and deltas",
        operation_id="search_endpoints_trial_retrieve",
        parameters=[OpenApiParameter("measure", OpenApiTypes.STR, required=False)],
        responses={200: OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["get"], url_path="trials/<int:trial_pk>")
    def trial(self, request, pk=None, trial_pk=None):
        trial = self._trial(request, trial_pk)
        return Response(trial_body(trial, request.query_params.get("measure")))

    @extend_schema(
        summary="Save the trial's edit as the endpoint's next version",
        request=SaveSerializer,
        responses={
            200: OpenApiTypes.OBJECT,
            409: OpenApiResponse(description="The endpoint has a newer version since."),
        },
    )
    @action(detail=True, methods=["post"], url_path="trials/<int:trial_pk>/save")
    def trial_save(self, request, pk=None, trial_pk=None):
        trial = self._trial(request, trial_pk)
        asked = SaveSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        try:
            endpoint = sandbox.save_trial(trial=trial, user=request.user, **asked.validated_data)
        except DjangoValidationError as error:
            if error.code == "moved_on":
                return Response({"detail": error.messages}, status=status.HTTP_409_CONFLICT)
            raise refused(error) from None
        return Response({"version": endpoint.version, "saved_as": trial.saved_as})


class SearchEndpointViewSet(SandboxActions, endpoints.SearchEndpointViewSet):
    action_permissions = {
        **endpoints.SearchEndpointViewSet.action_permissions,
        **{name: [IsLeadOrEngineer] for name in ACTIONS},
    }
