"""The dashboards as JSON: the leaderboard, one topic across runs, and comparisons (a run's
per-topic values are the ``topics`` action of runs, in runs.py). Leads and engineers read
them, like runs and evaluations. The numbers are the pages' (evaluation.dashboards).

Every endpoint takes the scoring in the query string: ``qrels`` (a qrels version's id;
default the newest), ``measures`` (names in trec_eval's or ir_measures' dialect, repeated;
default the dashboard set), ``gain``, ``relevance_level`` and ``complete``. A run not scored with them is a 404
naming it: score it with POST /api/v1/evaluations/ (same options) first.
"""

from __future__ import annotations

from dataclasses import replace

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import IsLeadOrEngineer
from common.ids import parse_id, parse_ids
from evaluation import dashboards, services
from evaluation.access import visible_runs
from evaluation.api.common import (
    MESSAGES,
    ScoringOptionsSerializer,
    measures_field,
    whole_number,
)
from evaluation.api.dashboard_serializers import (
    NOT_SCORED,
    ComparisonSerializer,
    LeaderboardSerializer,
    NotFoundSerializer,
    RunTopicsSerializer,
    TopicAcrossRunsSerializer,
    bounds_body,
    certified_body,
    contrast_body,
    interval_body,
    measures_body,
    scoring_body,
)
from evaluation.dashboards.diff import residuals_or_none
from evaluation.judging import judging
from evaluation.models import Run

# --- parameters ----------------------------------------------------------------------------


class ScoringParameters(ScoringOptionsSerializer):
    """Which stored evaluations an answer is about."""

    qrels = whole_number(help_text="A qrels version's id (default: the newest one).")
    measures = measures_field(
        "default the dashboard set: " + ", ".join(services.DASHBOARD_MEASURES)
    )

    def validate(self, data: dict) -> dict:
        request = self.context.get("request")
        try:
            data["scoring"] = dashboards.make_scoring(
                user=request.user if request is not None else None,
                qrels=data.get("qrels"),
                measure_specs=data.get("measures") or None,
                gain=data["gain"],
                relevance_level=data["relevance_level"],
                complete=data["complete"],
            )
        except dashboards.ScoringError as error:
            key = error.field if error.field in self.fields else "non_field_errors"
            raise ValidationError({key: [str(error)]}) from None
        return data


def read_scoring(request) -> dashboards.Scoring:
    params = ScoringParameters(data=request.query_params, context={"request": request})
    params.is_valid(raise_exception=True)
    return params.validated_data["scoring"]


MEASURE = OpenApiParameter(
    "measure",
    OpenApiTypes.STR,
    description="The output name to rank and compare by, e.g. ndcg_cut_10 (default: "
    "ndcg_cut_10 if scored, else the first measure).",
)
K = OpenApiParameter(
    "k", OpenApiTypes.INT, description="Documents per topic (default: the measure's cutoff)."
)


def read_k(request) -> int | None:
    raw = request.query_params.get("k")
    if raw is None:
        return None
    k = parse_id(raw)
    if k is None or k > 1000:
        raise ValidationError({"k": ["k is a whole number from 1 to 1000."]})
    return k


def read_flag(request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw not in ("true", "false", "1", "0"):
        raise ValidationError({name: ["true or false."]})
    return raw in ("true", "1")


def read_ids(request, name: str) -> list[int]:
    raws = request.query_params.getlist(name)
    ids = parse_ids(raws)
    if len(ids) < len(raws):
        raise ValidationError({name: [MESSAGES["whole_number"]]})
    return ids


# --- endpoints -----------------------------------------------------------------------------


class DashboardView(APIView):
    """Leads and engineers read; a method the endpoint does not offer is a 405 for every
    logged-in user (as on the viewsets)."""

    def get_permissions(self):
        offered = hasattr(self, self.request.method.lower())
        return [IsAuthenticated(), *([IsLeadOrEngineer()] if offered else [])]

    def initial(self, request, *args, **kwargs):
        """A POST reads its parameters from the body alone: one given in the query string
        would be ignored (the scoring of the newest qrels used instead of the one asked
        for), so it is refused, named (400), after the permission checks."""
        super().initial(request, *args, **kwargs)
        if request.method == "POST" and request.query_params:
            raise ValidationError(
                {name: [MESSAGES["query_in_post"]] for name in request.query_params}
            )


class LeaderboardView(DashboardView):
    """Every run scored with the scoring: mean and 95% interval per measure."""

    @extend_schema(
        summary="The leaderboard: each scored run's means with 95% bootstrap intervals",
        parameters=[
            ScoringParameters,
            OpenApiParameter(
                "sort", OpenApiTypes.STR, description="system, or a measure (-name: largest first)."
            ),
            OpenApiParameter(
                "residuals",
                OpenApiTypes.BOOL,
                description="Also each row's residual on the sort measure (nDCG@10 when sorted "
                "by system): its mean if the unjudged documents of each topic's top k were "
                "judged not relevant (worst) or relevant at the top grade (best). Reads every "
                "run's ranking once per process, so it is off by default.",
            ),
        ],
        responses={200: LeaderboardSerializer},
    )
    def get(self, request):
        scoring = read_scoring(request)
        board = dashboards.build_leaderboard(scoring, sort=request.query_params.get("sort", ""))
        wanted = read_flag(request, "residuals")
        measure = board.chart_measure
        residuals = {
            row.run.pk: residuals_or_none(scoring, row.run, measure) if wanted else None
            for row in board.rows
        }
        body = {
            "scoring": scoring_body(scoring),
            "measures": measures_body(scoring.names),
            "residual_measure": measure if wanted else None,
            "rows": [
                {
                    "run": row.run.pk,
                    "run_label": str(row.run),
                    "system": row.run.system_id,
                    "system_name": row.run.system.name,
                    "evaluation": row.evaluation.pk,
                    "topic_count": row.evaluation.topic_count,
                    "means": {cell.name: cell.mean for cell in row.cells},
                    "intervals": {
                        cell.name: interval_body((cell.low, cell.high)) for cell in row.cells
                    },
                    "best": [cell.name for cell in row.cells if cell.best],
                    "warnings": {cell.name: cell.warning for cell in row.cells if cell.warning},
                    "residual": bounds_body(
                        residuals[row.run.pk].means.get(measure) if residuals[row.run.pk] else None
                    ),
                }
                for row in board.rows
            ],
            "unscored_runs": board.unscored,
            "certified": [],
        }
        runs = [row.run for row in board.rows]
        if runs:
            body["certified"] = certified_among(request.user, runs, qrels=scoring.qrels)
        return Response(LeaderboardSerializer(body).data)


def certified_among(user, runs, *, qrels=None) -> list[dict]:
    """The certified boards of the campaigns ``user`` leads that pooled one of ``runs``
    (with ``qrels``: only the campaign that published it), each with its estimates of those
    runs and the pairs among them, as the API gives them (empty for everyone else)."""
    ids = {run.pk for run in runs}
    return [
        certified_body(replace(b, pairs=tuple(b.pairs_among(ids))))
        for b in judging().certified_boards(user, runs, qrels=qrels)
    ]


def run_topics_response(request, run: Run) -> Response:
    """GET runs/{id}/topics/: the run's per-topic values, worst first (runs.py routes it)."""
    scoring = read_scoring(request)
    try:
        topics = dashboards.build_run_topics(
            run, scoring, measure=request.query_params.get("measure"), k=read_k(request)
        )
    except dashboards.NotScored as error:
        raise NotFound(str(error)) from None
    rows = dashboards.with_queries(topics.rows, user=request.user)
    evaluation = topics.evaluation
    residuals = residuals_or_none(scoring, run, topics.measure)
    per_topic = residuals.per_topic if residuals else {}
    body = {
        "run": run.pk,
        "run_label": str(run),
        "evaluation": evaluation.pk,
        "scoring": scoring_body(scoring),
        "measure": topics.measure,
        "k": topics.k,
        "means": {name: evaluation.means[name] for name in scoring.names},
        "intervals": {
            name: interval_body(evaluation.intervals.get(name)) for name in scoring.names
        },
        "residual": bounds_body(residuals.means.get(topics.measure) if residuals else None),
        "top_grade": residuals.top_grade if residuals else None,
        "topics": [
            {
                "qid": row.qid,
                "query": row.query,
                "values": {name: topics.values[row.qid][name] for name in scoring.names},
                "unjudged": row.unjudged,
                "retrieved": row.retrieved,
                "unjudged_docnos": topics.unjudged_docnos.get(row.qid, []),
                "residual": bounds_body(per_topic.get(row.qid, {}).get(topics.measure)),
            }
            for row in rows
        ],
    }
    return Response(RunTopicsSerializer(body).data)


RUN_TOPICS_SCHEMA = extend_schema(
    summary="A run's per-topic values, worst first, with the unjudged documents of each top k",
    parameters=[ScoringParameters, MEASURE, K],
    responses={200: RunTopicsSerializer, 404: NOT_SCORED},
)


class TopicView(DashboardView):
    """One topic across every scored run, with their top k and the ideal ranking."""

    @extend_schema(
        summary="One topic: every scored run's values, top k lists with grades, the ideal",
        parameters=[
            ScoringParameters,
            MEASURE,
            K,
            OpenApiParameter(
                "runs",
                OpenApiTypes.INT,
                many=True,
                description=f"Runs whose top k to list (default: the {dashboards.MAX_TOPIC_LISTS} best).",
            ),
        ],
        responses={200: TopicAcrossRunsSerializer, 404: OpenApiResponse(NotFoundSerializer)},
    )
    def get(self, request, qid: str):
        scoring = read_scoring(request)
        try:
            view = dashboards.build_topic(
                scoring,
                qid,
                user=request.user,
                measure=request.query_params.get("measure"),
                k=read_k(request),
                run_ids=read_ids(request, "runs"),
            )
        except LookupError as error:
            raise NotFound(str(error)) from None
        body = {
            "qid": qid,
            "query": view.query,
            "scoring": scoring_body(scoring),
            "measure": view.measure,
            "k": view.k,
            "judged": view.judged,
            "grades": {str(grade): n for grade, n in view.grades.items()},
            "ideal": [{"docno": docno, "grade": grade} for docno, grade in view.ideal],
            "runs": [
                {
                    "run": item.run.pk,
                    "run_label": str(item.run),
                    "values": item.values,
                    "top": None
                    if item.top is None
                    else [
                        {"rank": d.rank, "docno": d.docno, "score": d.score, "grade": d.grade}
                        for d in item.top
                    ],
                }
                for item in view.runs
            ],
        }
        return Response(TopicAcrossRunsSerializer(body).data)


class ComparisonView(DashboardView):
    """A baseline against one or several runs on one measure."""

    @extend_schema(
        summary="Compare runs with a baseline: deltas, bootstrap interval, paired tests, Holm",
        parameters=[
            ScoringParameters,
            MEASURE,
            OpenApiParameter("baseline", OpenApiTypes.INT, required=True),
            OpenApiParameter(
                "runs", OpenApiTypes.INT, many=True, required=True, description="Repeated."
            ),
        ],
        responses={200: ComparisonSerializer, 404: NOT_SCORED},
    )
    def get(self, request):
        scoring = read_scoring(request)
        baseline_ids, other_ids = read_ids(request, "baseline"), read_ids(request, "runs")
        if len(baseline_ids) != 1:
            raise ValidationError({"baseline": ["Name one baseline run."]})
        if not [pk for pk in other_ids if pk != baseline_ids[0]]:
            raise ValidationError({"runs": [dashboards.MESSAGES["same_run"]]})
        runs = visible_runs(request.user, Run.objects.select_related("system"))
        found = runs.in_bulk([*baseline_ids, *other_ids])
        unknown = [pk for pk in [*baseline_ids, *other_ids] if pk not in found]
        if unknown:
            raise ValidationError({"runs": [MESSAGES["unknown_run"].format(pk_value=unknown[0])]})
        try:
            view = dashboards.build_comparison(
                scoring,
                found[baseline_ids[0]],
                [found[pk] for pk in dict.fromkeys(other_ids)],
                measure=request.query_params.get("measure"),
            )
        except dashboards.NotScored as error:
            raise NotFound(str(error)) from None
        except ValueError as error:
            raise ValidationError({"runs": [str(error)]}) from None
        body = {
            "scoring": scoring_body(scoring),
            "measure": view.measure,
            "baseline": view.baseline.pk,
            "baseline_label": str(view.baseline),
            "topics": view.topics,
            "left_out": view.left_out,
            "permutations": dashboards.PERMUTATIONS,
            "seed": dashboards.COMPARISON_SEED,
            "comparisons": [contrast_body(contrast) for contrast in view.contrasts],
            # The compared runs' certified nDCG@10 on campaigns the user leads, and the
            # pairs among them (the comparison page's, issue 33).
            "certified": certified_among(
                request.user, [view.baseline, *(c.run for c in view.contrasts)]
            ),
        }
        return Response(ComparisonSerializer(body).data)


# --- closing the loop ----------------------------------------------------------------------


class SendUnjudgedParameters(ScoringParameters):
    """What to send: the unjudged documents of one run's top k (every topic), or of every run
    scored with the scoring for one topic; to a campaign the user leads."""

    campaign = whole_number(required=True, help_text="A campaign you lead.")
    k = serializers.IntegerField(min_value=1, max_value=1000, help_text="Documents per topic.")
    run = whole_number(help_text="A run's id: its top k of every topic.")
    qid = serializers.CharField(
        required=False, max_length=100, help_text="A topic: every scored run's top k of it."
    )

    def validate(self, data: dict) -> dict:
        if ("run" in data) == ("qid" in data):
            raise ValidationError({"non_field_errors": ["Name either a run or a topic (qid)."]})
        return super().validate(data)


class SentToJudgingSerializer(serializers.Serializer):
    unjudged = serializers.IntegerField(help_text="Unjudged pairs found in the top k.")
    added = serializers.IntegerField(help_text="New in the campaign's pool.")
    already = serializers.IntegerField(help_text="Already in its pool.")
    assigned = serializers.IntegerField(help_text="Assignments made for the new pairs.")
    left_out = serializers.IntegerField(help_text="Pairs of topics the campaign lacks.")
    missing_qids = serializers.ListField(child=serializers.CharField())


class UnjudgedView(DashboardView):
    """Closing the loop: the documents the qrels do not judge go to a campaign's pool."""

    @extend_schema(
        summary="Send the unjudged top-k documents of a run or a topic to a campaign's pool",
        request=SendUnjudgedParameters,
        responses={200: SentToJudgingSerializer, 404: NotFoundSerializer},
    )
    def post(self, request):
        params = SendUnjudgedParameters(data=request.data, context={"request": request})
        params.is_valid(raise_exception=True)
        data, scoring = params.validated_data, params.validated_data["scoring"]
        campaign = judging().campaign_for_lead(request.user, data["campaign"])
        run = None
        if "run" in data:
            run = visible_runs(request.user, Run.objects.all()).filter(pk=data["run"]).first()
            if run is None:
                raise NotFound(MESSAGES["unknown_run"].format(pk_value=data["run"]))
        pairs = dashboards.unjudged_pairs(scoring, k=data["k"], run=run, qid=data.get("qid", ""))
        runs = [run] if run is not None else dashboards.scored_runs(scoring)
        return sent_response(campaign, pairs, runs)


def sent_response(campaign, pairs: list[tuple[str, str]], runs=()) -> Response:
    """Send the unjudged ``pairs`` to ``campaign``'s pool (with the texts a search engine
    returned in ``runs``); what happened, as the API says it."""
    sent = services.send_unjudged_to_judging(campaign=campaign, pairs=pairs, runs=list(runs))
    body = {
        "unjudged": len(pairs),
        "added": sent.added,
        "already": sent.already,
        "assigned": sent.assigned,
        "left_out": sent.left_out,
        "missing_qids": sent.missing_qids,
    }
    return Response(SentToJudgingSerializer(body).data)
