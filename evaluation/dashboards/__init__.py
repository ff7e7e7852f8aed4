"""What the dashboards show, read from stored evaluations: the scoring a page is about, the
leaderboard, a run's topics, one topic across runs, and comparisons between runs.

Pages, the API and the tests call these; pages and JSON only format the result. Means are
the stored evaluation's trec_eval "all" values, the numbers `manage.py evaluate` prints;
intervals and comparisons come from evaluation.analysis.significance over the per-topic values,
topics in byte order (as trec_eval orders them).

Modules: scoring (options, constants, messages), leaderboard, runs (a run's topics), topics
(a topic across runs), comparisons.
"""

from evaluation.analysis.verdicts import (
    ALPHA,
    COMPARISON_SEED,
    PERMUTATIONS,
    VERDICTS,
    format_p,
    verdict_of,
)
from evaluation.dashboards.comparisons import (
    ComparisonView,
    Contrast,
    build_comparison,
)
from evaluation.dashboards.fairness import (
    FairnessRow,
    FairnessView,
    build_fairness,
    fairness_depth,
)
from evaluation.dashboards.leaderboard import Cell, Leaderboard, Row, build_leaderboard, parse_sort
from evaluation.dashboards.runs import (
    RunTopics,
    TopicRow,
    build_run_topics,
    topic_queries,
    with_queries,
)
from evaluation.dashboards.scoring import (
    DEFAULT_K,
    HISTOGRAM_BINS,
    JUDGED_WARNING,
    MAX_TOPIC_LISTS,
    MEASURE_MENU,
    MESSAGES,
    MORE_MEASURES,
    NotScored,
    QrelsReason,
    Scoring,
    ScoringError,
    canonical_specs,
    choose_k,
    choose_measure,
    choose_qrels,
    default_qrels,
    make_scoring,
    newer_versions,
    output_names,
    scored,
    scored_runs,
    single_specs,
    unjudged_pairs,
    unscored_runs,
)
from evaluation.dashboards.topics import (
    RankedDocument,
    TopicRun,
    TopicValues,
    TopicView,
    build_topic,
    find_document,
)

__all__ = [
    "ALPHA",
    "COMPARISON_SEED",
    "DEFAULT_K",
    "HISTOGRAM_BINS",
    "JUDGED_WARNING",
    "MAX_TOPIC_LISTS",
    "MEASURE_MENU",
    "MESSAGES",
    "MORE_MEASURES",
    "PERMUTATIONS",
    "VERDICTS",
    "Cell",
    "ComparisonView",
    "Contrast",
    "FairnessRow",
    "FairnessView",
    "Leaderboard",
    "NotScored",
    "QrelsReason",
    "RankedDocument",
    "Row",
    "RunTopics",
    "Scoring",
    "ScoringError",
    "TopicRow",
    "TopicRun",
    "TopicValues",
    "TopicView",
    "build_comparison",
    "build_fairness",
    "build_leaderboard",
    "build_run_topics",
    "build_topic",
    "canonical_specs",
    "choose_k",
    "choose_measure",
    "choose_qrels",
    "default_qrels",
    "fairness_depth",
    "find_document",
    "format_p",
    "make_scoring",
    "newer_versions",
    "output_names",
    "parse_sort",
    "scored",
    "scored_runs",
    "single_specs",
    "topic_queries",
    "unjudged_pairs",
    "unscored_runs",
    "verdict_of",
    "with_queries",
]
