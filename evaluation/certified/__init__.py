"""Machine judges you can trust: the pure statistics (no Django).

A machine grades every pair of a pool, humans grade a sample; these modules say how far the
leaderboard built on that can be trusted, and whether a machine is fooled by what a passage
says instead of what it means.

- pool: the pool as arrays; nDCG@k exactly as trec_eval's ndcg_cut (the all-human value);
- sampling: which pairs humans judge (uniform, stratified by topic and machine grade,
  active), each with the inclusion probabilities the estimator needs;
- means: each run's certified mean nDCG@k with a prediction-powered interval, which pairs
  of runs are settled, and the leaderboard's order (estimator: the cross-fitted estimate
  computed; ranking: the ranking score, the estimate shrunk towards the filled-in qrels);
- gate: the gullibility gate's probes (pure text) and its statistic and decision.
"""

from .gate import (
    GateResult,
    Rise,
    check_gate,
    inject_instruction,
    measure_rise,
    shuffle_sentences,
    stuff_query_words,
)
from .means import Certified, RunEstimate, Settlement, certify_means
from .pool import Pool, build_pool, ndcg_means, ndcg_per_topic
from .sampling import (
    Sample,
    budget_count,
    influence_scores,
    sample_active,
    sample_stratified,
    sample_uniform,
)

__all__ = [
    "Certified",
    "GateResult",
    "Pool",
    "Rise",
    "RunEstimate",
    "Sample",
    "Settlement",
    "budget_count",
    "build_pool",
    "certify_means",
    "check_gate",
    "influence_scores",
    "inject_instruction",
    "measure_rise",
    "ndcg_means",
    "ndcg_per_topic",
    "sample_active",
    "sample_stratified",
    "sample_uniform",
    "shuffle_sentences",
    "stuff_query_words",
]
