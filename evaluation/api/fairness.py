"""The leave-one-run-out test of a qrels version's pool as JSON (evaluation.analysis.pool_fairness):
GET reads the stored report for a scoring and depth, POST starts the job that computes it.
Leads and engineers, like the leaderboard."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from evaluation import dashboards, services, tasks
from evaluation.access import visible_runs
from evaluation.analysis import pool_fairness
from evaluation.api.dashboard_serializers import NotFoundSerializer, scoring_body
from evaluation.api.dashboards import DashboardView, ScoringParameters
from evaluation.models import Run
from jobs.api import JOB_STARTED, started
from jobs.services import start_job

MESSAGES = {
    "not_computed": (
        "The leave-one-run-out test has not been run for these options at depth {depth}: "
        "POST to this endpoint (same options) to run it."
    ),
}


class FairnessParameters(ScoringParameters):
    depth = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=pool_fairness.MAX_DEPTH,
        help_text="Pool depth when the qrels were not published from a campaign pool of "
        "stored runs (then the pool's own depth is used); default 100.",
    )


class RunFairnessSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    run_label = serializers.CharField()
    unique_judged = serializers.IntegerField(help_text="Judged documents only this run pooled.")
    unique_relevant = serializers.IntegerField()
    full = serializers.DictField(child=serializers.FloatField(), help_text="Mean per measure.")
    reduced = serializers.DictField(
        child=serializers.FloatField(), help_text="Mean without its unique documents."
    )
    drop = serializers.DictField(child=serializers.FloatField(), help_text="full − reduced.")
    rank_full = serializers.DictField(child=serializers.IntegerField())
    rank_reduced = serializers.DictField(child=serializers.IntegerField())


class FairnessSerializer(serializers.Serializer):
    scoring = serializers.DictField()
    depth = serializers.IntegerField()
    depth_source = serializers.ChoiceField(choices=["pool", "parameter"])
    computed_at = serializers.DateTimeField()
    stale = serializers.BooleanField(help_text="Runs were scored (or removed) since.")
    measures = serializers.ListField(child=serializers.CharField())
    runs = RunFairnessSerializer(many=True)


def _read(request, data) -> tuple[dashboards.Scoring, int | None]:
    params = FairnessParameters(data=data, context={"request": request})
    params.is_valid(raise_exception=True)
    return params.validated_data["scoring"], params.validated_data.get("depth")


DEPTH = OpenApiParameter("depth", OpenApiTypes.INT, description="Pool depth (see the body).")


class PoolFairnessView(DashboardView):
    @extend_schema(
        summary="The leave-one-run-out test of the runs scored against a qrels version",
        parameters=[ScoringParameters, DEPTH],
        responses={200: FairnessSerializer, 404: NotFoundSerializer},
    )
    def get(self, request):
        scoring, wanted = _read(request, request.query_params)
        depth, _ = services.pool_depth(scoring.qrels, wanted)
        stored = services.find_pool_fairness(qrels=scoring.qrels, key=scoring.key, depth=depth)
        if stored is None:
            raise NotFound(MESSAGES["not_computed"].format(depth=depth))
        labels = {
            str(run.pk): str(run)
            for run in visible_runs(request.user, Run.objects.all())
            .filter(pk__in=[int(r.run) for r in stored.report.runs])
            .select_related("system")
        }
        body = {
            "scoring": scoring_body(scoring),
            "depth": stored.row.depth,
            "depth_source": stored.row.depth_source,
            "computed_at": stored.row.computed_at,
            "stale": stored.stale,
            "measures": stored.report.measures,
            "runs": [
                {
                    "run": int(r.run),
                    "run_label": labels.get(r.run, r.run),
                    "unique_judged": r.unique_judged,
                    "unique_relevant": r.unique_relevant,
                    "full": r.full,
                    "reduced": r.reduced,
                    "drop": {m: r.drop(m) for m in stored.report.measures},
                    "rank_full": r.rank_full,
                    "rank_reduced": r.rank_reduced,
                }
                for r in stored.report.runs
                if r.run in labels  # another team's runs (a shared version) are not named
            ],
        }
        return Response(FairnessSerializer(body).data)

    @extend_schema(
        summary="Run the leave-one-run-out test (a job); GET reads the result",
        request=FairnessParameters,
        responses=JOB_STARTED,
    )
    def post(self, request):
        scoring, depth = _read(request, request.data)
        job = start_job(
            kind="evaluation.analysis.pool_fairness",
            title=f"Leave each run out of the pool of {scoring.qrels.label}",
            user=request.user,
            task=tasks.pool_fairness_task,
            scoring=scoring.task_params(),
            depth=depth,
        )
        return started(job, request)
