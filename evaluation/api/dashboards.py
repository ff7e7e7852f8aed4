"""The dashboards as JSON: the leaderboard, one topic across runs, and comparisons (a run's
per-topic values are the ``topics`` action of runs, in runs.py). Leads and engineers read
them, like runs and evaluations. The numbers are the pages' (evaluation.dashboards).

Every endpoint takes the scoring in the query string: ``qrels`` (a qrels version's id;
default the newest), ``measures`` (trec_eval -m arguments, repeated; default the dashboard
set), ``gain``, ``relevance_level`` and ``complete``. A run not scored with them is a 404
naming it: score it with POST /api/v1/evaluations/ (same options) first.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from config.permissions import IsLeadOrEngineer
from evaluation import dashboards, measures, services, significance
from evaluation.api.common import MAX_MEASURES, MESSAGES, whole_number
from evaluation.models import Run

# --- parameters ----------------------------------------------------------------------------


class ScoringParameters(serializers.Serializer):
    """Which stored evaluations an answer is about."""

    qrels = whole_number(help_text="A qrels version's id (default: the newest one).")
    measures = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        max_length=MAX_MEASURES,
        help_text=(
            "trec_eval -m arguments, repeated (measures=ndcg_cut.10&measures=map); default "
            "the dashboard set: " + ", ".join(services.DASHBOARD_MEASURES)
        ),
    )
    gain = serializers.ChoiceField(choices=["linear", "exp"], default="linear")
    relevance_level = serializers.IntegerField(min_value=1, max_value=32767, default=1)
    complete = serializers.BooleanField(
        default=False, help_text="Topics judged but missing from a run score 0 (-c)."
    )

    def validate(self, data: dict) -> dict:
        try:
            data["scoring"] = dashboards.make_scoring(
                qrels=data.get("qrels"),
                measure_specs=data.get("measures") or None,
                gain=data["gain"],
                relevance_level=data["relevance_level"],
                complete=data["complete"],
            )
        except dashboards.ScoringError as error:
            key = error.field if error.field in ("qrels", "measures") else "non_field_errors"
            raise ValidationError({key: [str(error)]}) from None
        return data


def read_scoring(request) -> dashboards.Scoring:
    params = ScoringParameters(data=request.query_params)
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
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise ValidationError({"k": ["k is a whole number from 1 to 1000."]})
    return int(raw)


def read_ids(request, name: str) -> list[int]:
    ids = []
    for raw in request.query_params.getlist(name):
        if not raw.isdigit() or int(raw) > 2**63 - 1:
            raise ValidationError({name: [MESSAGES["whole_number"]]})
        ids.append(int(raw))
    return ids


# --- shapes --------------------------------------------------------------------------------


class ScoringSerializer(serializers.Serializer):
    qrels = serializers.IntegerField()
    qrels_label = serializers.CharField()
    measures = serializers.ListField(child=serializers.CharField(), help_text="Canonical -m.")
    gain = serializers.CharField()
    relevance_level = serializers.IntegerField()
    complete = serializers.BooleanField()
    trec_eval_version = serializers.IntegerField()


def scoring_body(scoring: dashboards.Scoring) -> dict:
    return {
        "qrels": scoring.qrels.pk,
        "qrels_label": scoring.qrels.label,
        "measures": list(scoring.specs),
        "gain": scoring.options.gain,
        "relevance_level": scoring.options.relevance_level,
        "complete": scoring.options.complete,
        "trec_eval_version": scoring.options.trec_eval_version,
    }


class NamedMeasureSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="trec_eval's output name, e.g. ndcg_cut_10.")
    display = serializers.CharField(help_text="How pages show it, e.g. nDCG@10.")


def measures_body(names) -> list[dict]:
    return [{"name": name, "display": measures.display_name(name)} for name in names]


class IntervalSerializer(serializers.Serializer):
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)


class LeaderboardRowSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    run_label = serializers.CharField()
    system = serializers.IntegerField()
    system_name = serializers.CharField()
    evaluation = serializers.IntegerField()
    topic_count = serializers.IntegerField()
    means = serializers.DictField(child=serializers.FloatField(), help_text="trec_eval's 'all'.")
    intervals = serializers.DictField(
        child=IntervalSerializer(), help_text="95% percentile bootstrap interval of each mean."
    )
    best = serializers.ListField(
        child=serializers.CharField(), help_text="Measures whose best mean this row has."
    )
    warnings = serializers.DictField(
        child=serializers.CharField(), help_text="judged@k below 0.8: why to distrust the row."
    )


class LeaderboardSerializer(serializers.Serializer):
    scoring = ScoringSerializer()
    measures = NamedMeasureSerializer(many=True)
    rows = LeaderboardRowSerializer(many=True, help_text="Grouped by system, sorted.")
    unscored_runs = serializers.IntegerField(help_text="Stored runs not scored with these.")


class TopicValuesSerializer(serializers.Serializer):
    qid = serializers.CharField()
    query = serializers.CharField(help_text="A campaign topic's query, or empty.")
    values = serializers.DictField(child=serializers.FloatField())
    unjudged = serializers.IntegerField(help_text="Unjudged documents in the top k.")
    retrieved = serializers.IntegerField(help_text="Documents in the top k (≤ k).")
    unjudged_docnos = serializers.ListField(child=serializers.CharField())


class RunTopicsSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    run_label = serializers.CharField()
    evaluation = serializers.IntegerField()
    scoring = ScoringSerializer()
    measure = serializers.CharField(help_text="The measure the topics are sorted by.")
    k = serializers.IntegerField()
    means = serializers.DictField(child=serializers.FloatField())
    intervals = serializers.DictField(child=IntervalSerializer())
    topics = TopicValuesSerializer(many=True, help_text="Worst first.")


class RankedDocumentSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    docno = serializers.CharField()
    score = serializers.FloatField()
    grade = serializers.IntegerField(allow_null=True, help_text="null: unjudged.")


class TopicRunSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    run_label = serializers.CharField()
    values = serializers.DictField(
        child=serializers.FloatField(), allow_null=True, help_text="null: no result."
    )
    top = RankedDocumentSerializer(
        many=True, allow_null=True, help_text="The top k (null: not listed)."
    )


class JudgedDocumentSerializer(serializers.Serializer):
    docno = serializers.CharField()
    grade = serializers.IntegerField()


class TopicAcrossRunsSerializer(serializers.Serializer):
    qid = serializers.CharField()
    query = serializers.CharField()
    scoring = ScoringSerializer()
    measure = serializers.CharField()
    k = serializers.IntegerField()
    judged = serializers.IntegerField(help_text="Judged documents of the topic.")
    grades = serializers.DictField(child=serializers.IntegerField(), help_text="grade → count.")
    ideal = JudgedDocumentSerializer(many=True, help_text="The ideal top k.")
    runs = TopicRunSerializer(many=True, help_text="Best first.")


class PairedTestSerializer(serializers.Serializer):
    statistic = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True)
    p_adjusted = serializers.FloatField(allow_null=True, help_text="Holm, when several runs.")
    reason = serializers.CharField(allow_null=True, help_text="Why the test is undefined.")


class DeltaIntervalSerializer(IntervalSerializer):
    level = serializers.FloatField()
    reason = serializers.CharField(allow_null=True)


class DeltaSerializer(serializers.Serializer):
    qid = serializers.CharField()
    baseline = serializers.FloatField()
    run = serializers.FloatField()
    delta = serializers.FloatField()


class ContrastSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    run_label = serializers.CharField()
    mean_baseline = serializers.FloatField()
    mean_run = serializers.FloatField()
    mean_delta = serializers.FloatField()
    delta_interval = DeltaIntervalSerializer()
    wins = serializers.IntegerField()
    ties = serializers.IntegerField()
    losses = serializers.IntegerField()
    t_test = PairedTestSerializer()
    wilcoxon = PairedTestSerializer()
    randomisation = PairedTestSerializer()
    cohens_d = serializers.FloatField(allow_null=True)
    cohens_d_reason = serializers.CharField(allow_null=True)
    verdict = serializers.CharField(help_text="worse, better, same or untestable (p < 0.05).")
    deltas = DeltaSerializer(many=True, help_text="Per topic, by delta ascending.")


class ComparisonSerializer(serializers.Serializer):
    scoring = ScoringSerializer()
    measure = serializers.CharField()
    baseline = serializers.IntegerField()
    baseline_label = serializers.CharField()
    topics = serializers.IntegerField(help_text="Topics every run has: the ones compared.")
    left_out = serializers.IntegerField(help_text="Topics only some runs have.")
    permutations = serializers.IntegerField()
    seed = serializers.IntegerField()
    comparisons = ContrastSerializer(many=True)


class NotFoundSerializer(serializers.Serializer):
    detail = serializers.CharField()


NOT_SCORED = OpenApiResponse(NotFoundSerializer, description="A run is not scored with these.")


def _interval(pair) -> dict:
    low, high = pair if pair else (None, None)
    return {"low": low, "high": high}


def _test(test: significance.PairedTest) -> dict:
    return {
        "statistic": test.statistic,
        "p_value": test.p_value,
        "p_adjusted": test.p_adjusted,
        "reason": test.reason,
    }


# --- endpoints -----------------------------------------------------------------------------


class DashboardView(APIView):
    """Leads and engineers read; a method the endpoint does not offer is a 405 for every
    logged-in user (as on the viewsets)."""

    def get_permissions(self):
        offered = hasattr(self, self.request.method.lower())
        return [IsAuthenticated(), *([IsLeadOrEngineer()] if offered else [])]


class LeaderboardView(DashboardView):
    """Every run scored with the scoring: mean and 95% interval per measure."""

    @extend_schema(
        summary="The leaderboard: each scored run's means with 95% bootstrap intervals",
        parameters=[
            ScoringParameters,
            OpenApiParameter(
                "sort", OpenApiTypes.STR, description="system, or a measure (-name: largest first)."
            ),
        ],
        responses={200: LeaderboardSerializer},
    )
    def get(self, request):
        scoring = read_scoring(request)
        board = dashboards.build_leaderboard(scoring, sort=request.query_params.get("sort", ""))
        body = {
            "scoring": scoring_body(scoring),
            "measures": measures_body(scoring.names),
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
                        cell.name: _interval((cell.low, cell.high)) for cell in row.cells
                    },
                    "best": [cell.name for cell in row.cells if cell.best],
                    "warnings": {cell.name: cell.warning for cell in row.cells if cell.warning},
                }
                for row in board.rows
            ],
            "unscored_runs": board.unscored,
        }
        return Response(LeaderboardSerializer(body).data)


def run_topics_response(request, run: Run) -> Response:
    """GET runs/{id}/topics/: the run's per-topic values, worst first (runs.py routes it)."""
    scoring = read_scoring(request)
    try:
        topics = dashboards.build_run_topics(
            run, scoring, measure=request.query_params.get("measure"), k=read_k(request)
        )
    except dashboards.NotScored as error:
        raise NotFound(str(error)) from None
    rows = dashboards.with_queries(topics.rows)
    evaluation = topics.evaluation
    body = {
        "run": run.pk,
        "run_label": str(run),
        "evaluation": evaluation.pk,
        "scoring": scoring_body(scoring),
        "measure": topics.measure,
        "k": topics.k,
        "means": {name: evaluation.means[name] for name in scoring.names},
        "intervals": {name: _interval(evaluation.intervals.get(name)) for name in scoring.names},
        "topics": [
            {
                "qid": row.qid,
                "query": row.query,
                "values": {name: topics.values[row.qid][name] for name in scoring.names},
                "unjudged": row.unjudged,
                "retrieved": row.retrieved,
                "unjudged_docnos": topics.unjudged_docnos.get(row.qid, []),
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
        found = Run.objects.select_related("system").in_bulk([*baseline_ids, *other_ids])
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
            "comparisons": [_contrast(contrast) for contrast in view.contrasts],
        }
        return Response(ComparisonSerializer(body).data)


def _contrast(contrast: dashboards.Contrast) -> dict:
    c = contrast.comparison
    return {
        "run": contrast.run.pk,
        "run_label": str(contrast.run),
        "mean_baseline": c.mean_a,
        "mean_run": c.mean_b,
        "mean_delta": c.mean_delta,
        "delta_interval": {
            "low": c.delta_interval.low,
            "high": c.delta_interval.high,
            "level": c.delta_interval.level,
            "reason": c.delta_interval.reason,
        },
        "wins": c.wins,
        "ties": c.ties,
        "losses": c.losses,
        "t_test": _test(c.t_test),
        "wilcoxon": _test(c.wilcoxon),
        "randomisation": _test(c.randomisation),
        "cohens_d": c.cohens_d,
        "cohens_d_reason": c.cohens_d_reason,
        "verdict": contrast.verdict,
        "deltas": [
            {"qid": qid, "baseline": a, "run": b, "delta": d} for qid, a, b, d in contrast.deltas
        ],
    }
