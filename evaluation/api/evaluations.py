"""Evaluations: a run scored against a qrels version with a set of measures and options."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import mixins, serializers, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import IsEngineer, IsLeadOrEngineer, RolePermissionsMixin
from accounts.services.roles import Role
from evaluation import measures, services
from evaluation.access import readable_qrels, visible_evaluations, visible_runs
from evaluation.api.common import (
    MESSAGES,
    DepthField,
    QueryParameters,
    ScoringOptionsSerializer,
    TrecEvalVersionField,
    VisibleField,
    created,
    measures_field,
    whole_number,
)
from evaluation.measures import specs
from evaluation.measures.inputs import check_measures
from evaluation.models import Evaluation, QrelsVersion, Run


class MeasureSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="trec_eval's output name, e.g. ndcg_cut_10.")
    display = serializers.CharField(help_text="How pages show it, e.g. nDCG@10.")


@extend_schema_field(
    {"type": "object", "additionalProperties": {"type": "number"}, "example": {"map": 0.4}}
)
class MeansField(serializers.DictField):
    pass


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"type": "object", "additionalProperties": {"type": "number"}},
        "example": {"301": {"map": 0.5}},
    }
)
class PerTopicField(serializers.DictField):
    pass


class EvaluationSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:evaluation-detail")
    run_label = serializers.CharField(source="run.__str__", read_only=True)
    qrels_label = serializers.CharField(source="qrels.label", read_only=True)
    options = serializers.DictField(read_only=True, help_text="Measures and options as scored.")
    measures = serializers.SerializerMethodField()
    means = MeansField(read_only=True, help_text="trec_eval's 'all' line, per measure.")

    class Meta:
        model = Evaluation
        fields = [
            "id",
            "url",
            "run",
            "run_label",
            "qrels",
            "qrels_label",
            "options",
            "measures",
            "means",
            "topic_count",
            "seconds",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(MeasureSerializer(many=True))
    def get_measures(self, evaluation) -> list[dict]:
        return [
            {"name": name, "display": measures.display_name(name)} for name in evaluation.measures
        ]


class EvaluationDetailSerializer(EvaluationSerializer):
    per_topic = PerTopicField(read_only=True, help_text="{qid: {measure: value}}.")

    class Meta(EvaluationSerializer.Meta):
        fields = [*EvaluationSerializer.Meta.fields, "per_topic"]
        read_only_fields = fields


class EvaluationRequestSerializer(ScoringOptionsSerializer):
    run = VisibleField(
        queryset=Run.objects.all(),
        visible=lambda user: visible_runs(user, Run.objects.all(), Role.ENGINEER),
        error_messages={"does_not_exist": MESSAGES["unknown_run"]},
    )
    qrels = VisibleField(
        queryset=QrelsVersion.objects.all(),
        visible=lambda user: readable_qrels(user, QrelsVersion.objects.all()),
        error_messages={"does_not_exist": MESSAGES["unknown_qrels"]},
    )
    measures = measures_field(
        "e.g. ['ndcg_cut.10,20', 'map'] or ['nDCG@10', 'AP'].",
        default=list(services.DASHBOARD_MEASURES),
        allow_empty=False,
        error_messages={"empty": MESSAGES["no_measures"]},
    )
    trec_eval_version = TrecEvalVersionField(
        required=False, default=9, help_text="Follow trec_eval 9.0.8 (9) or 10.0 (10)."
    )
    depth = DepthField(
        required=False, allow_null=True, default=None, help_text="-M: score the top DEPTH only."
    )

    def validate_measures(self, names: list[str]) -> list[str]:
        try:
            # Stored qrels are qrels: preference and judgment-group measures need other files.
            requests = measures.parse_requests(names)
            trec = [r.trec for r in requests if r.trec is not None]
            if trec:
                check_measures("qrels", measures.parse_measures(trec))
        except ValueError as error:
            raise ValidationError(str(error)) from None
        return names

    def validate(self, data: dict) -> dict:
        try:
            chosen = specs.read_scoring_options(
                measures=data["measures"],
                gain=data["gain"],
                relevance_level=data["relevance_level"],
                complete=data["complete"],
                depth=data["depth"],
                trec_eval_version=data["trec_eval_version"],
            )
        except specs.OptionsError as error:
            key = error.field if error.field in self.fields else "non_field_errors"
            raise ValidationError({key: [str(error)]}) from None
        data["measures"], data["options"] = list(chosen.measures), chosen.options
        return data


class EvaluationFilter(QueryParameters):
    run = whole_number(help_text="Only this run's evaluations.")
    qrels = whole_number(help_text="Only evaluations against this qrels version.")
    lookups = {"run": "run_id", "qrels": "qrels_id"}


@extend_schema_view(
    list=extend_schema(summary="Evaluations (means only)", parameters=[EvaluationFilter]),
    retrieve=extend_schema(summary="One evaluation with its per-topic values"),
)
class EvaluationViewSet(
    RolePermissionsMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet
):
    """Runs scored against qrels versions. Leads and engineers read them; engineers score a
    run (an evaluation with the same inputs is stored once and returned again)."""

    lookup_value_converter = "int"
    action_permissions = {
        "list": [IsLeadOrEngineer],
        "retrieve": [IsLeadOrEngineer],
        "create": [IsEngineer],
    }

    def get_queryset(self):
        evaluations = visible_evaluations(
            self.request.user, Evaluation.objects.select_related("run__system", "qrels")
        )
        if self.action == "list":
            return evaluations.defer("per_topic").filter(**EvaluationFilter.read(self.request))
        return evaluations

    def get_serializer_class(self):
        return EvaluationSerializer if self.action == "list" else EvaluationDetailSerializer

    @extend_schema(
        summary="Score a run against a qrels version",
        request=EvaluationRequestSerializer,
        responses={
            200: OpenApiResponse(
                EvaluationDetailSerializer, description="Already scored with these inputs."
            ),
            201: EvaluationDetailSerializer,
        },
    )
    def create(self, request, *args, **kwargs):
        form = EvaluationRequestSerializer(data=request.data, context={"request": request})
        form.is_valid(raise_exception=True)
        data = form.validated_data
        run, qrels, specs, options = data["run"], data["qrels"], data["measures"], data["options"]
        stored = Evaluation.objects.filter(
            run=run, qrels=qrels, options_key=services.options_key(specs, options)
        ).exists()
        try:
            # With its bootstrap intervals, so its leaderboard row is ready too.
            evaluation = services.score_run(
                run=run, qrels=qrels, measure_specs=specs, options=options
            )
        except ValueError as error:  # e.g. no topic in common between the run and the qrels
            raise ValidationError({"non_field_errors": [str(error)]}) from None
        body = EvaluationDetailSerializer(evaluation, context=self.get_serializer_context()).data
        if stored:
            return Response(body)
        return created(body, request, "api:evaluation-detail", evaluation.pk)
