"""Would it change the leaderboard? (issue 12 part 6, issue 17 part 4): the stored runs
scored with two qrels versions (the humans' and a machine's, an old and a new one), and how
far the two system rankings by one measure agree: evaluation.analysis.ranking_agreement's
coefficients, @k, the pairs that swap, bootstrap intervals over topics, per-topic
coefficients. The same for a leaderboard computed elsewhere against ours.

Means are the stored evaluations' trec_eval "all" values; intervals resample the topics
every compared run has under both versions."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from evaluation import measures, services
from evaluation.analysis import ranking_agreement as agreement_math
from evaluation.analysis.significance import RESAMPLES
from evaluation.dashboards.scoring import Scoring, choose_measure, make_scoring, scored
from evaluation.models import QrelsVersion, Run

# Pages and the API: half the command's resamples (significance.RESAMPLES), to answer within
# a second.
PAGE_SAMPLES = RESAMPLES // 2

MESSAGES = {
    "same_qrels": "Choose two different qrels versions.",
    "few_runs": "Compare at least {n} runs scored with both versions ({found} are).",
    "k": "k is a whole number from 1 to the number of runs.",
    "measure": "{measure} is not among the measures compared: {names}.",
}


class RankingError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass
class RunRow:
    label: str
    run: Run | None
    old: float
    new: float
    old_rank: int
    new_rank: int


@dataclass
class RankingComparison:
    """``reference`` (old) against ``other`` (new) by ``measure``."""

    measure: str
    k: int | None
    rows: list[RunRow]  # by the reference's rank
    agreement: agreement_math.Agreement
    # {qid: {coefficient: value}}: TOPIC_COEFFICIENTS of each topic's own system ranking
    per_topic: dict[str, dict[str, float]] = field(default_factory=dict)
    left_out: list[Run] = field(default_factory=list)  # not scored with both

    @property
    def coefficients(self) -> list[dict]:
        """One row per coefficient for tables: value, interval, @k value and interval."""
        a = self.agreement
        out = []
        for name in agreement_math.COEFFICIENTS:
            interval = a.intervals.get(name)
            interval_k = a.intervals_at_k.get(name)
            out.append(
                {
                    "name": name,
                    "label": LABELS[name],
                    "value": a.values[name],
                    "low": interval.low if interval else None,
                    "high": interval.high if interval else None,
                    "at_k": a.at_k[name] if a.at_k else None,
                    "low_k": interval_k.low if interval_k else None,
                    "high_k": interval_k.high if interval_k else None,
                }
            )
        return out

    @property
    def worst_topics(self) -> list[dict]:
        """One row per topic ({qid, kendall, spearman, pearson, tauap_b}), the lowest tau-b
        first; topics where it is undefined (NaN: a ranking with no spread) last, by qid."""

        def key(item):
            tau = item[1]["kendall"]
            return (math.isnan(tau), 0.0 if math.isnan(tau) else tau, item[0].encode())

        return [{"qid": q, **values} for q, values in sorted(self.per_topic.items(), key=key)]

    @property
    def topic_labels(self) -> list[tuple[str, str]]:
        return [(name, TOPIC_LABELS[name]) for name in agreement_math.TOPIC_COEFFICIENTS]


LABELS = {
    "kendall": "Kendall's tau-b",
    "spearman": "Spearman's rho",
    "pearson": "Pearson's r",
    "tauap_b": "tau-AP (ties, tauap_b)",
    "tau_gap": "tau_GAP",
    "rbo": "rank-biased overlap",
}


TOPIC_LABELS = {
    "kendall": "tau-b",
    "spearman": "Spearman",
    "pearson": "Pearson",
    "tauap_b": "tauap_b",
}


TOPIC_SORTS = ("qid", *agreement_math.TOPIC_COEFFICIENTS)


def sort_topics(rows: list[dict], key: str = "kendall", *, descending: bool = False) -> list[dict]:
    """Per-topic rows (RankingComparison.worst_topics) by one column; undefined values (NaN)
    stay last either way, ties by qid."""
    if key not in TOPIC_SORTS:
        raise ValueError(f"sort by one of {', '.join(TOPIC_SORTS)}, not {key!r}")
    if key == "qid":
        return sorted(rows, key=lambda row: row["qid"].encode(), reverse=descending)
    defined = [row for row in rows if not math.isnan(row[key])]
    undefined = [row for row in rows if math.isnan(row[key])]
    defined.sort(key=lambda row: row["qid"].encode())
    defined.sort(key=lambda row: row[key], reverse=descending)
    return defined + undefined


def _ranks(values: dict[str, float]) -> dict[str, int]:
    order = sorted(values, key=lambda n: (-values[n], n))
    return {name: i + 1 for i, name in enumerate(order)}


def rank_comparison(
    reference: dict[str, float],
    other: dict[str, float],
    *,
    measure: str,
    k: int | None = None,
    reference_topics: dict | None = None,
    other_topics: dict | None = None,
    samples: int = PAGE_SAMPLES,
    runs: dict[str, Run] | None = None,
) -> RankingComparison:
    """Two leaderboards ({label: mean}) compared; with per-topic values, intervals and
    per-topic coefficients too."""
    common = sorted(reference.keys() & other.keys())
    if len(common) < agreement_math.MIN_SYSTEMS:
        raise RankingError(
            "runs", MESSAGES["few_runs"].format(n=agreement_math.MIN_SYSTEMS, found=len(common))
        )
    if k is not None and not 1 <= k <= len(common):
        raise RankingError("k", MESSAGES["k"])
    ref = {n: reference[n] for n in common}
    oth = {n: other[n] for n in common}
    result = agreement_math.agreement(
        ref,
        oth,
        k=k,
        reference_topics=reference_topics,
        other_topics=other_topics,
        samples=samples,
    )
    old_ranks, new_ranks = _ranks(ref), _ranks(oth)
    rows = sorted(
        (
            RunRow(n, (runs or {}).get(n), ref[n], oth[n], old_ranks[n], new_ranks[n])
            for n in common
        ),
        key=lambda row: row.old_rank,
    )
    per_topic = {}
    if reference_topics is not None and other_topics is not None:
        per_topic = agreement_math.per_topic_coefficients(reference_topics, other_topics)
    return RankingComparison(measure, k, rows, result, per_topic)


def _scored_values(scoring: Scoring, runs: list[Run], measure: str):
    evaluations = {e.run_id: e for e in scored(scoring).filter(run__in=runs)}
    means, topics = {}, {}
    for run in runs:
        evaluation = evaluations.get(run.pk)
        if evaluation is None or measure not in evaluation.means:
            continue
        label = str(run)
        means[label] = float(evaluation.means[measure])
        topics[label] = {
            q: float(v[measure]) for q, v in evaluation.per_topic.items() if measure in v
        }
    return means, topics


def compare_qrels(
    old: QrelsVersion,
    new: QrelsVersion,
    *,
    runs: list[Run] | None = None,
    measure: str | None = None,
    measure_specs: list[str] | None = None,
    options: dict | None = None,
    k: int | None = None,
    samples: int = PAGE_SAMPLES,
    score_missing: bool = False,
    user=None,
) -> RankingComparison:
    """The runs (default: every stored run) ranked by ``measure`` (default nDCG@10) under
    ``old`` and under ``new``, with the same measures and options (``options``: gain,
    relevance_level, complete as make_scoring takes them). With ``score_missing`` runs not
    yet scored with a version are scored now (the command); otherwise they are left out and
    listed (pages and the API, which must answer quickly). ``user``: whom a page or the API
    answers; only the runs of their teams are ranked (make_scoring's viewer)."""
    if old.pk == new.pk:
        raise RankingError("new", MESSAGES["same_qrels"])
    options = options or {}
    scorings = [
        make_scoring(qrels=q, measure_specs=measure_specs, user=user, **options) for q in (old, new)
    ]
    measure = _measure_named(scorings[0], measure)
    if runs is None:
        runs = scorings[0].runs().select_related("system", "search")
    runs = list(runs)
    if score_missing:
        for scoring in scorings:
            done = set(scored(scoring).filter(run__in=runs).values_list("run_id", flat=True))
            for run in runs:
                if run.pk not in done:
                    services.score_run(
                        run=run,
                        qrels=scoring.qrels,
                        measure_specs=list(scoring.specs),
                        options=scoring.options,
                    )
    (old_means, old_topics), (new_means, new_topics) = (
        _scored_values(s, runs, measure) for s in scorings
    )
    left_out = [r for r in runs if str(r) not in old_means or str(r) not in new_means]
    result = rank_comparison(
        old_means,
        new_means,
        measure=measure,
        k=k,
        reference_topics={n: old_topics[n] for n in old_topics if n in new_topics},
        other_topics={n: new_topics[n] for n in new_topics if n in old_topics},
        samples=samples,
        runs={str(r): r for r in runs},
    )
    result.left_out = left_out
    return result


def _measure_named(scoring: Scoring, wanted: str | None) -> str:
    """An output name (ndcg_cut_10), its -m form (ndcg_cut.10) or display name (nDCG@10)."""
    names = scoring.names
    if not wanted:
        return choose_measure(names, None)
    aliases = {name: name for name in names}
    for name in names:
        aliases.setdefault(measures.display_name(name), name)
        aliases.setdefault(scoring.outputs[name].spec, name)
    if wanted not in aliases:
        raise RankingError(
            "measure", MESSAGES["measure"].format(measure=wanted, names=", ".join(names))
        )
    return aliases[wanted]


__all__ = [
    "LABELS",
    "MESSAGES",
    "PAGE_SAMPLES",
    "TOPIC_LABELS",
    "TOPIC_SORTS",
    "RankingComparison",
    "RankingError",
    "RunRow",
    "compare_qrels",
    "rank_comparison",
    "sort_topics",
]


# --- as JSON (the API's and compare_qrels --json) ----------------------------------------


def _number(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def agreement_body(result: RankingComparison) -> dict:
    """The JSON of a ranking comparison's agreement: the qrels comparison's and the
    leaderboard check's (``old`` is the reference: the old version, or our numbers)."""
    return {
        "measure": result.measure,
        "k": result.k,
        "runs": len(result.rows),
        "samples": result.agreement.samples,
        "topics": result.agreement.topics,
        "topics_left_out": result.agreement.topics_left_out,
        "coefficients": [
            {key: _number(value) for key, value in row.items()} for row in result.coefficients
        ],
        "rows": [
            {
                "run": row.label,
                "old": row.old,
                "new": row.new,
                "old_rank": row.old_rank,
                "new_rank": row.new_rank,
            }
            for row in result.rows
        ],
        "swaps": [
            {"above": s.first, "below": s.second, "old_gap": s.gap, "new_gap": s.other_gap}
            for s in result.agreement.swaps
        ],
        "per_topic": [
            {key: _number(value) for key, value in row.items()} for row in result.worst_topics
        ],
    }


def comparison_body(result: RankingComparison, old, new) -> dict:
    """The JSON of a comparison (the API's and ``compare_qrels --json``)."""
    return {
        "old": {"id": old.pk, "label": old.label},
        "new": {"id": new.pk, "label": new.label},
        **agreement_body(result),
        "left_out": [str(run) for run in result.left_out],
    }
