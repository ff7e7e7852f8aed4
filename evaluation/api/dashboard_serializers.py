"""The JSON shapes of the dashboard endpoints (evaluation/api/dashboards.py): output
serializers, which give the OpenAPI schema its components, and the functions that turn the
dashboards' objects (evaluation.dashboards) into the dicts those serializers render."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from evaluation import dashboards, measures
from evaluation.analysis import significance


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


class BoundsSerializer(serializers.Serializer):
    """A residual: the value with the unjudged documents of each top k judged not relevant
    (worst) and relevant at the qrels' top grade (best)."""

    worst = serializers.FloatField()
    best = serializers.FloatField()


def bounds_body(value: tuple[float, float] | None) -> dict | None:
    return None if value is None else {"worst": value[0], "best": value[1]}


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
    residual = BoundsSerializer(
        allow_null=True,
        help_text="With residuals=true: the mean of residual_measure if the unjudged documents "
        "were judged (null: not asked, or the measure has none).",
    )


class LeaderboardCertifiedRunSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    ndcg_cut_10 = serializers.FloatField(help_text="The certified estimate of nDCG@10.")
    low = serializers.FloatField(help_text="95% prediction-powered interval, lower end.")
    high = serializers.FloatField()


class LeaderboardCertifiedPairSerializer(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    a_label = serializers.CharField()
    b_label = serializers.CharField()
    difference = serializers.FloatField(help_text="a minus b.")
    low = serializers.FloatField()
    high = serializers.FloatField()
    p_holm = serializers.FloatField()
    settled = serializers.BooleanField(help_text="The interval excludes 0 after Holm.")


class LeaderboardCertifiedSerializer(serializers.Serializer):
    campaign = serializers.CharField()
    campaign_url = serializers.CharField(help_text="The campaign's certified leaderboard.")
    humans = serializers.IntegerField(help_text="Human grades on the designed sample.")
    pool_size = serializers.IntegerField()
    runs = LeaderboardCertifiedRunSerializer(many=True)
    pairs = LeaderboardCertifiedPairSerializer(many=True)


def certified_body(board) -> dict:
    """A judging.CertifiedBoard as the API gives it."""
    return {
        "campaign": board.campaign,
        "campaign_url": board.campaign_url,
        "humans": board.humans,
        "pool_size": board.pool_size,
        "runs": [
            {"run": r.run, "ndcg_cut_10": r.ndcg, "low": r.low, "high": r.high} for r in board.runs
        ],
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "a_label": p.a_label,
                "b_label": p.b_label,
                "difference": p.difference,
                "low": p.low,
                "high": p.high,
                "p_holm": p.p_holm,
                "settled": p.settled,
            }
            for p in board.pairs
        ],
    }


class LeaderboardSerializer(serializers.Serializer):
    scoring = ScoringSerializer()
    measures = NamedMeasureSerializer(many=True)
    residual_measure = serializers.CharField(
        allow_null=True, help_text="The measure of the rows' residuals (the sort measure)."
    )
    rows = LeaderboardRowSerializer(many=True, help_text="Grouped by system, sorted.")
    unscored_runs = serializers.IntegerField(help_text="Stored runs not scored with these.")
    certified = LeaderboardCertifiedSerializer(
        many=True,
        help_text="For the lead of a certified campaign that published these qrels: its runs' "
        "certified nDCG@10 with 95% intervals and the pairs among them, settled or not (the "
        "campaign's certified leaderboard); empty for everyone else.",
    )


class TopicValuesSerializer(serializers.Serializer):
    qid = serializers.CharField()
    query = serializers.CharField(help_text="A campaign topic's query, or empty.")
    values = serializers.DictField(child=serializers.FloatField())
    unjudged = serializers.IntegerField(help_text="Unjudged documents in the top k.")
    retrieved = serializers.IntegerField(help_text="Documents in the top k (≤ k).")
    unjudged_docnos = serializers.ListField(child=serializers.CharField())
    residual = BoundsSerializer(
        allow_null=True, help_text="The measure's value if the top k's unjudged were judged."
    )


class RunTopicsSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    run_label = serializers.CharField()
    evaluation = serializers.IntegerField()
    scoring = ScoringSerializer()
    measure = serializers.CharField(help_text="The measure the topics are sorted by.")
    k = serializers.IntegerField()
    means = serializers.DictField(child=serializers.FloatField())
    intervals = serializers.DictField(child=IntervalSerializer())
    residual = BoundsSerializer(
        allow_null=True,
        help_text="The measure's mean if the unjudged documents of each topic's top k were "
        "judged (null: the measure has none).",
    )
    top_grade = serializers.IntegerField(
        allow_null=True, help_text="The grade 'best' gives the unjudged documents."
    )
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
    certified = LeaderboardCertifiedSerializer(
        many=True,
        help_text="For the lead of a certified campaign that pooled one of the compared runs: "
        "their certified nDCG@10 with 95% intervals and the pairs among them, settled or not "
        "(as the comparison page shows them); empty for everyone else.",
    )


class NotFoundSerializer(serializers.Serializer):
    detail = serializers.CharField()


NOT_SCORED = OpenApiResponse(NotFoundSerializer, description="A run is not scored with these.")


def interval_body(pair) -> dict:
    low, high = pair if pair else (None, None)
    return {"low": low, "high": high}


def paired_test_body(test: significance.PairedTest) -> dict:
    return {
        "statistic": test.statistic,
        "p_value": test.p_value,
        "p_adjusted": test.p_adjusted,
        "reason": test.reason,
    }


def contrast_body(contrast: dashboards.Contrast) -> dict:
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
        "t_test": paired_test_body(c.t_test),
        "wilcoxon": paired_test_body(c.wilcoxon),
        "randomisation": paired_test_body(c.randomisation),
        "cohens_d": c.cohens_d,
        "cohens_d_reason": c.cohens_d_reason,
        "verdict": contrast.verdict,
        "deltas": [
            {"qid": qid, "baseline": a, "run": b, "delta": d} for qid, a, b, d in contrast.deltas
        ],
    }
