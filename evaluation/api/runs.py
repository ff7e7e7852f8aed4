"""Systems and their runs: read by leads and engineers, managed by engineers. A run upload
is imported by a background job."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import (
    IsEngineer,
    IsLeadOrEngineer,
    RolePermissionsMixin,
    team_field,
    team_for,
)
from accounts.services.roles import Role
from common import text_limits
from evaluation import dashboards, services, tasks
from evaluation.access import readable_qrels, visible_runs, visible_systems
from evaluation.api.common import (
    MAX_TAGS,
    MESSAGES,
    QueryParameters,
    ScoringOptionsSerializer,
    measures_field,
    whole_number,
)
from evaluation.api.dashboard_serializers import LeaderboardCertifiedSerializer, certified_body
from evaluation.api.dashboards import RUN_TOPICS_SCHEMA, run_topics_response
from evaluation.judging import judging
from evaluation.models import QrelsVersion, Run, System
from evaluation.services import sha256_of
from evaluation.services.run_files import delete_run_files
from jobs.api import JOB_STARTED, started
from jobs.services import drop_staged, stage_upload, start_job

# --- systems -------------------------------------------------------------------------------


class SystemSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:system-detail")
    name = serializers.CharField(max_length=100)
    description = serializers.CharField(
        required=False, allow_blank=True, max_length=text_limits.DESCRIPTION
    )
    team = team_field()
    tags = serializers.ListField(
        child=serializers.CharField(
            max_length=text_limits.TAG, error_messages={"max_length": MESSAGES["tag_too_long"]}
        ),
        required=False,
        max_length=MAX_TAGS,
    )
    run_count = serializers.IntegerField(read_only=True)
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="A username."
    )

    class Meta:
        model = System
        fields = [
            "id",
            "url",
            "name",
            "description",
            "tags",
            "run_count",
            "team",
            "created_by",
            "created_at",
        ]
        read_only_fields = ["created_at"]
        validators = []  # a name unique in its team: checked in validate(), worded

    def to_representation(self, system):
        data = super().to_representation(system)
        data["team"] = system.team.slug
        return data

    def validate_name(self, name):
        """A name no other system of its team has (a new system's team: the one validate()
        chooses; an unknown team is validate()'s to say)."""
        request = self.context["request"]
        if self.instance is not None:
            team = self.instance.team
        else:
            try:
                team = team_for(request.user, self.initial_data.get("team"), Role.ENGINEER)
            except ValidationError:
                return name
        taken = System.objects.filter(team=team, name=name)
        if self.instance is not None:
            taken = taken.exclude(pk=self.instance.pk)
        if taken.exists():
            raise ValidationError(MESSAGES["system_name_taken"])
        return name

    def validate(self, data):
        """A new system's team: one where the user is an engineer; a system stays in its."""
        if self.instance is None:
            data["team"] = team_for(self.context["request"].user, data.get("team"), Role.ENGINEER)
        else:
            data.pop("team", None)
        return data


@extend_schema_view(
    list=extend_schema(summary="Systems with their number of runs"),
    retrieve=extend_schema(summary="One system"),
    create=extend_schema(summary="Create a system"),
    partial_update=extend_schema(summary="Change a system's name, description or tags"),
    destroy=extend_schema(summary="Delete a system with its runs and their evaluations"),
)
class SystemViewSet(RolePermissionsMixin, viewsets.ModelViewSet):
    """Named rankers. Leads and engineers read them; engineers create, change and delete."""

    serializer_class = SystemSerializer
    lookup_value_converter = "int"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    action_permissions = {
        "list": [IsLeadOrEngineer],
        "retrieve": [IsLeadOrEngineer],
        "create": [IsEngineer],
        "partial_update": [IsEngineer],
        "destroy": [IsEngineer],
    }

    def get_queryset(self):
        """The systems of the user's teams (evaluation/access.py); changing one needs the
        engineer role in its team (in another of their teams it is a 404)."""
        changing = self.action in ("partial_update", "destroy")
        systems = (
            System.objects.select_related("created_by", "team")
            .annotate(run_count=Count("runs"))
            .order_by("name")
        )
        return visible_systems(self.request.user, systems, *([Role.ENGINEER] if changing else []))

    def perform_create(self, serializer):
        system = serializer.save(created_by=self.request.user)
        system.run_count = 0  # what get_queryset annotates: a new system has no run

    def perform_destroy(self, instance):
        with transaction.atomic():
            delete_run_files(list(instance.runs.all()))
            instance.delete()


# --- runs ----------------------------------------------------------------------------------


class RunSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:run-detail")
    system_name = serializers.CharField(source="system.name", read_only=True)
    uploaded_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="A username."
    )
    search = serializers.SerializerMethodField(
        help_text="For a run made by querying a search endpoint: the endpoint (name, version), "
        "the query set, k, and each query's outcome (seconds, attempts, hits, or its error); "
        "failed_count > 0 says some queries failed. null for an uploaded run."
    )

    class Meta:
        model = Run
        fields = [
            "id",
            "url",
            "system",
            "system_name",
            "name",
            "description",
            "tag",
            "original_filename",
            "checksum",
            "size_bytes",
            "line_count",
            "topic_count",
            "uploaded_by",
            "uploaded_at",
            "ir_metadata",
            "search",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "ir_metadata": {
                "help_text": "The file's ir_metadata header (YAML between '# ir_metadata.start' "
                "and '# ir_metadata.end' at its top) as JSON; {} when it has none."
            }
        }

    def get_search(self, run) -> dict | None:
        made = getattr(run, "search", None)
        if made is None:
            return None
        return {
            "endpoint": made.snapshot.get("name"),
            "endpoint_version": made.snapshot.get("version"),
            "query_set": made.query_set,
            "k": made.k,
            "started_at": made.started_at,
            "finished_at": made.finished_at,
            "query_count": made.query_count,
            "failed_count": made.failed_count,
            "queries": made.queries,
        }


class RunDetailSerializer(RunSerializer):
    """One run, with what the run page shows beside its file (issue 33)."""

    certified = serializers.SerializerMethodField(
        help_text="For the lead of a certified campaign that pooled the run: the run's "
        "certified nDCG@10 with its 95% interval and every pair of pooled runs that holds it, "
        "settled or not (as the run page shows them); empty for everyone else."
    )

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "certified"]
        read_only_fields = fields

    @extend_schema_field(LeaderboardCertifiedSerializer(many=True))
    def get_certified(self, run) -> list[dict]:
        return [
            certified_body(board)
            for board in judging().certified_boards(self.context["request"].user, [run])
            if board.runs
        ]


class RunUploadSerializer(ScoringOptionsSerializer):
    file = serializers.FileField(
        help_text="A TREC run file (qid Q0 docno rank score tag), gzip ok."
    )
    system = serializers.CharField(
        max_length=100, help_text="The system's name; a new name creates the system."
    )
    name = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="Defaults to the file name without its extension.",
    )
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=text_limits.DESCRIPTION
    )
    team = team_field()
    qrels = serializers.PrimaryKeyRelatedField(
        queryset=QrelsVersion.objects.all(),
        required=False,
        allow_null=True,
        default=None,
        error_messages={"does_not_exist": MESSAGES["unknown_qrels"]},
        help_text="Score the run against this qrels version as soon as it is imported (the "
        "same job): its leaderboard row is ready when the job finishes.",
    )
    measures = measures_field("with qrels; default the dashboard set.")

    def validate_qrels(self, qrels):
        if qrels is not None and not readable_qrels(
            self.context["request"].user, QrelsVersion.objects.filter(pk=qrels.pk)
        ):
            raise ValidationError(MESSAGES["unknown_qrels"].format(pk_value=qrels.pk))
        return qrels

    def validate(self, data: dict) -> dict:
        data["team"] = team_for(self.context["request"].user, data.get("team"), Role.ENGINEER)
        data["scoring"] = None
        if data["qrels"] is not None:
            try:
                data["scoring"] = dashboards.make_scoring(
                    qrels=data["qrels"],
                    measure_specs=data.get("measures") or None,
                    gain=data["gain"],
                    relevance_level=data["relevance_level"],
                    complete=data["complete"],
                )
            except dashboards.ScoringError as error:
                key = error.field if error.field in self.fields else "non_field_errors"
                raise ValidationError({key: [str(error)]}) from None
        return data


class ConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    run = serializers.IntegerField(help_text="The run already stored.")


def _conflict(message: str, run: Run) -> Response:
    return Response({"detail": message, "run": run.pk}, status=status.HTTP_409_CONFLICT)


class RunFilter(QueryParameters):
    system = whole_number(help_text="Only this system's runs.")
    search = serializers.CharField(
        required=False,
        max_length=200,
        help_text="Only runs whose system, name, tag, description or ir_metadata header "
        "contains this (case-insensitive).",
    )
    lookups = {"system": "system_id"}


@extend_schema_view(
    list=extend_schema(summary="Runs", parameters=[RunFilter]),
    retrieve=extend_schema(summary="One run"),
    destroy=extend_schema(summary="Delete a run, its stored files and its evaluations"),
)
class RunViewSet(
    RolePermissionsMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    """Runs (ranked-list files) of systems. Leads and engineers read them; engineers upload
    and delete. An upload is imported by a background job: the answer is 202 with the job to
    poll (200 when it ran before the answer), whose result names the new run."""

    serializer_class = RunSerializer
    lookup_value_converter = "int"
    action_permissions = {
        "list": [IsLeadOrEngineer],
        "retrieve": [IsLeadOrEngineer],
        "create": [IsEngineer],
        "destroy": [IsEngineer],
        "topics": [IsLeadOrEngineer],
    }
    upload_actions = frozenset({"create"})

    def get_serializer_class(self):
        return RunDetailSerializer if self.action == "retrieve" else RunSerializer

    def get_queryset(self):
        runs = Run.objects.select_related("system", "uploaded_by", "search")
        changing = [Role.ENGINEER] if self.action == "destroy" else []
        runs = visible_runs(self.request.user, runs, *changing)
        if self.action == "list":
            runs = runs.listed()  # a sandbox trial's runs are the trial's, read by id
            filters = RunFilter.read(self.request)
            runs = services.search_runs(runs, filters.pop("search", ""))
            runs = runs.filter(**filters)
        return runs

    @extend_schema(
        summary="Upload a run file; a job imports it",
        request={"multipart/form-data": RunUploadSerializer},
        responses={
            **JOB_STARTED,
            409: OpenApiResponse(
                ConflictSerializer, description="The same file, or the same run name, exists."
            ),
        },
    )
    def create(self, request, *args, **kwargs):
        form = RunUploadSerializer(data=request.data, context={"request": request})
        form.is_valid(raise_exception=True)
        data = form.validated_data
        upload = data["file"]
        team = data["team"]
        existing = Run.objects.filter(checksum=sha256_of(upload)).select_related("system").first()
        if existing is not None:
            if not visible_runs(request.user, Run.objects.filter(pk=existing.pk)).exists():
                # Another team's: refused without naming it (run checksums are unique
                # across teams).
                raise ValidationError({"file": [MESSAGES["duplicate_elsewhere"]]})
            message = MESSAGES["duplicate_run"].format(filename=upload.name, run=existing)
            return _conflict(message, existing)
        if data["name"]:
            taken = Run.objects.filter(
                system__team=team, system__name=data["system"], name=data["name"]
            ).first()
            if taken is not None:
                message = MESSAGES["run_name_taken"].format(
                    filename=upload.name, system=data["system"], name=data["name"]
                )
                return _conflict(message, taken)
        staged = stage_upload(upload, prefix="runs")
        params = {
            "staged": staged,
            "filename": upload.name,
            "system": data["system"],
            "name": data["name"],
            "description": data["description"],
            "team": team.pk,
        }
        scoring = data["scoring"]
        try:
            job = start_job(
                kind="evaluation.import_run" if scoring is None else "evaluation.import_and_score",
                title=f"Import run {upload.name} of {data['system']}",
                user=request.user,
                task=tasks.import_and_score_task,
                scoring=None if scoring is None else scoring.task_params(),
                **params,
            )
        except BaseException:
            drop_staged(staged)
            raise
        return started(job, request)

    def perform_destroy(self, instance):
        with transaction.atomic():
            delete_run_files([instance])
            instance.delete()

    @RUN_TOPICS_SCHEMA
    @action(detail=True, methods=["get"], url_path="topics")
    def topics(self, request, pk=None):
        return run_topics_response(request, self.get_object())
