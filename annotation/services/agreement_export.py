"""A campaign's agreement report written out: as JSON-ready data (the JSON download, the
API, ``manage.py agreement_report --format json``), as tables for CSV (written by
common/exports.py, which neutralises cells a spreadsheet would run as formulas), and as text
for a terminal. Numbers at full precision;
an undefined statistic is null (empty in CSV) with its reason."""

from __future__ import annotations

from annotation import agreement as stats
from annotation.agreement import Statistic
from annotation.services.agreement import CampaignAgreement
from annotation.services.gold import CampaignCalibration

# The campaign-wide statistics: (key, label, AgreementReport attribute, interpretation).
OVERALL = (
    ("fleiss_kappa", "Fleiss' kappa", "fleiss", stats.landis_koch),
    (
        "fleiss_kappa_at_threshold",
        "Fleiss' kappa, relevant or not",
        "fleiss_at_threshold",
        stats.landis_koch,
    ),
    ("alpha_ordinal", "Krippendorff's alpha, ordinal", "alpha_ordinal", stats.krippendorff_band),
    (
        "alpha_interval",
        "Krippendorff's alpha, interval",
        "alpha_interval",
        stats.krippendorff_band,
    ),
    ("observed", "Observed agreement", "observed", None),
    ("within_one", "Agreement within one grade", "within_one", None),
)
TABLES = ("overall", "pairwise", "topics", "judges")


def statistic_data(stat: Statistic, band=None) -> dict:
    data = {
        "value": stat.value,
        "low": stat.low,
        "high": stat.high,
        "n": stat.n,
        "se": stat.se,
        "reason": stat.reason,
        "note": stat.note,
    }
    if band is not None:
        data["band"] = band(stat.value)
    return data


def report_data(result: CampaignAgreement) -> dict:
    """The report as JSON-ready data (the JSON download and the API answer)."""
    report, campaign = result.report, result.campaign
    kappa = stats.landis_koch
    return {
        "campaign": {"id": campaign.pk, "name": campaign.name},
        "weights": result.weights,
        "scale": list(report.scale),
        "relevance_threshold": campaign.relevance_threshold,
        "resamples": report.resamples,
        "seed": report.seed,
        "confidence": report.confidence,
        "computed_at": result.computed_at.isoformat() if result.computed_at else None,
        "recomputing": result.pending,
        "counts": {
            "pairs": report.items,
            "multiply_judged": report.multiply_judged,
            "judgments": report.judgments,
            "judges": len(report.judges),
        },
        "overall": {
            key: statistic_data(getattr(report, attribute), band)
            for key, _, attribute, band in OVERALL
        },
        "pairwise": [
            {
                "judge_a": p.judge_a,
                "judge_b": p.judge_b,
                "shared_pairs": p.n,
                "kappa": statistic_data(p.kappa, kappa),
                "kappa_unweighted": statistic_data(p.kappa_unweighted, kappa),
                "kappa_at_threshold": statistic_data(p.kappa_at_threshold, kappa),
                "observed": statistic_data(p.observed),
                "within_one": statistic_data(p.within_one),
                "confusion": [list(row) for row in p.confusion],
            }
            for p in report.pairs
        ],
        "topics": [
            {
                "topic_id": t.topic_id,
                "qid": t.qid,
                "query": t.query,
                "pairs": t.agreement.pairs,
                "multiply_judged": t.agreement.multiply_judged,
                "disputed": t.agreement.disputed,
                "alpha_ordinal": statistic_data(t.agreement.alpha_ordinal, stats.krippendorff_band),
                "observed": statistic_data(t.agreement.observed),
            }
            for t in result.topics
        ],
        "judges": [
            {
                "judge": j.judge,
                "judged": j.profile.judged,
                "grade_counts": list(j.profile.grade_counts),
                "leniency": statistic_data(j.profile.leniency),
                "tendency": j.tendency,
            }
            for j in result.judges
        ],
    }


def calibration_data(result: CampaignCalibration, campaign) -> dict:
    """Each judge against the gold pairs as JSON-ready data (the API, ``manage.py
    calibration --format json``)."""
    return {
        "campaign": {"id": campaign.pk, "name": campaign.name},
        "weights": result.weights,
        "min_accuracy": result.min_accuracy,
        "min_kappa": result.min_kappa,
        "gold": [
            {
                "pair": g.pair_id,
                "qid": g.qid,
                "docno": g.docno,
                "grade": g.grade,
                "graded_by": g.graded_by,
            }
            for g in result.gold
        ],
        "judges": [
            {
                "judge": j.judge,
                "status": j.status,
                "reasons": list(j.reasons),
                "gold_pairs": j.calibration.n,
                "accuracy": statistic_data(j.calibration.accuracy),
                "mean_absolute_error": statistic_data(j.calibration.mean_absolute_error),
                "kappa": statistic_data(j.calibration.kappa),
                "weighted_kappa": statistic_data(j.calibration.weighted_kappa),
            }
            for j in result.judges
        ],
        "flagged": [j.judge for j in result.flagged],
    }


CALIBRATION_HEADER = [
    "judge",
    "status",
    "gold_pairs",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "mean_absolute_error",
    "kappa",
    "weighted_kappa",
    "weighted_kappa_low",
    "weighted_kappa_high",
    "reasons",
]


def calibration_table(result: CampaignCalibration) -> tuple[list[str], list[list]]:
    """One row per judge under CALIBRATION_HEADER, full precision, None for undefined."""
    rows = []
    for j in result.judges:
        c = j.calibration
        rows.append(
            [
                j.judge,
                j.status,
                c.n,
                c.accuracy.value,
                c.accuracy.low,
                c.accuracy.high,
                c.mean_absolute_error.value,
                c.kappa.value,
                c.weighted_kappa.value,
                c.weighted_kappa.low,
                c.weighted_kappa.high,
                "; ".join(j.reasons),
            ]
        )
    return list(CALIBRATION_HEADER), rows


def calibration_text(result: CampaignCalibration, campaign) -> str:
    """The calibration for a terminal: the bars, then one line per judge."""
    lines = [
        f"{campaign.name}: {len(result.gold)} gold pairs; a judge is flagged below accuracy "
        f"{result.min_accuracy:.2f} or {result.weights} kappa {result.min_kappa:.2f} against gold",
        "",
        f"{'judge':<20} {'status':<10} {'gold':>5} {'accuracy':>9} {'MAE':>8} {'kappa':>8}  why",
    ]
    for j in result.judges:
        c = j.calibration

        def number(stat, width=8):
            return f"{stat.value:>{width}.4f}" if stat.value is not None else f"{'-':>{width}}"

        lines.append(
            f"{j.judge:<20} {j.status:<10} {c.n:>5} {number(c.accuracy, 9)} "
            f"{number(c.mean_absolute_error)} {number(c.weighted_kappa)}  {'; '.join(j.reasons)}"
        )
    return "\n".join(lines) + "\n"


# The CSV tables' columns: (header, value of a row). The pairwise kappa column is named for
# the weights in report_table.
_PAIRWISE = (
    ("judge_a", lambda p: p.judge_a),
    ("judge_b", lambda p: p.judge_b),
    ("shared_pairs", lambda p: p.n),
    ("kappa", lambda p: p.kappa.value),
    ("kappa_low", lambda p: p.kappa.low),
    ("kappa_high", lambda p: p.kappa.high),
    ("kappa_unweighted", lambda p: p.kappa_unweighted.value),
    ("kappa_unweighted_se", lambda p: p.kappa_unweighted.se),
    ("kappa_at_threshold", lambda p: p.kappa_at_threshold.value),
    ("observed", lambda p: p.observed.value),
    ("within_one", lambda p: p.within_one.value),
    ("reason", lambda p: p.kappa.reason or p.kappa_at_threshold.reason),
)
_TOPICS = (
    ("topic_id", lambda t: t.topic_id),
    ("qid", lambda t: t.qid),
    ("query", lambda t: t.query),
    ("pairs", lambda t: t.agreement.pairs),
    ("multiply_judged", lambda t: t.agreement.multiply_judged),
    ("disputed", lambda t: t.agreement.disputed),
    ("alpha_ordinal", lambda t: t.agreement.alpha_ordinal.value),
    ("observed", lambda t: t.agreement.observed.value),
    ("reason", lambda t: t.agreement.alpha_ordinal.reason),
)
_JUDGE_LENIENCY = (
    ("leniency", lambda j: j.profile.leniency.value),
    ("compared_pairs", lambda j: j.profile.leniency.n),
    ("tendency", lambda j: j.tendency),
    ("reason", lambda j: j.profile.leniency.reason),
)


def report_table(result: CampaignAgreement, table: str) -> tuple[list[str], list[list]]:
    """One of TABLES as a header and rows of plain values (None for none), full precision."""
    report = result.report
    if table == "overall":
        header = ["statistic", "value", "low", "high", "n", "band", "reason", "note"]
        rows = []
        for key, _, attribute, band in OVERALL:
            s = getattr(report, attribute)
            words = band(s.value) if band else ""
            rows.append([key, s.value, s.low, s.high, s.n, words, s.reason, s.note])
        return header, rows
    if table == "pairwise":
        header = [name for name, _ in _PAIRWISE]
        header[3] = f"kappa_{result.weights}"
        return header, [[value(p) for _, value in _PAIRWISE] for p in report.pairs]
    if table == "topics":
        return [name for name, _ in _TOPICS], [
            [value(t) for _, value in _TOPICS] for t in result.topics
        ]
    if table == "judges":
        grades = [f"grade_{g}" for g in report.scale]
        header = ["judge", "judged", *grades, *(name for name, _ in _JUDGE_LENIENCY)]
        rows = [
            [j.judge, j.profile.judged, *j.profile.grade_counts]
            + [value(j) for _, value in _JUDGE_LENIENCY]
            for j in result.judges
        ]
        return header, rows
    raise ValueError(f"unknown table {table!r}; choose one of {', '.join(TABLES)}")


def report_text(result: CampaignAgreement) -> str:
    """The report for a terminal: the overall statistics, then each table."""
    report, campaign = result.report, result.campaign
    lines = [
        f"{campaign.name}: {report.judgments} graded judgments of {report.items} pairs by "
        f"{len(report.judges)} judges; {report.multiply_judged} pairs graded by two or more",
        f"pairwise kappa weights: {result.weights}; {report.confidence:.0%} intervals from "
        f"{report.resamples} bootstrap resamples (seed {report.seed})",
        "",
    ]
    for _, label, attribute, band in OVERALL:
        s = getattr(report, attribute)
        words = f"  {band(s.value)}" if band and s.value is not None else ""
        lines.append(f"{label:<34} {_text(s)}{words}")
    lines += ["", f"{'judges':<30} {'shared':>7} {'kappa':>8}  interval"]
    for p in report.pairs:
        pair = f"{p.judge_a} / {p.judge_b}"
        lines.append(f"{pair:<30} {p.n:>7} {_text(p.kappa, width=8)}")
    lines += ["", f"{'topic':<16} {'pairs':>6} {'disputed':>9} {'alpha':>8}  (worst first)"]
    for t in result.topics:
        a = t.agreement
        lines.append(f"{t.qid:<16} {a.pairs:>6} {a.disputed:>9} {_text(a.alpha_ordinal, width=8)}")
    grades = " ".join(f"{g:>6}" for g in report.scale)
    lines += ["", f"{'judge':<20} {'judged':>7} {grades}  leniency"]
    for j in result.judges:
        counts = " ".join(f"{c:>6}" for c in j.profile.grade_counts)
        lean = j.profile.leniency
        lean_text = f"{lean.value:+.4f} {j.tendency}" if lean.value is not None else lean.reason
        lines.append(f"{j.judge:<20} {j.profile.judged:>7} {counts}  {lean_text}")
    if result.threshold_problem:
        lines += ["", f"note: {result.threshold_problem}"]
    return "\n".join(lines) + "\n"


def _text(stat: Statistic, width: int = 8) -> str:
    if stat.value is None:
        return f"{'-':>{width}}  ({stat.reason})"
    interval = f"  [{stat.low:.4f}, {stat.high:.4f}]" if stat.low is not None else ""
    return f"{stat.value:>{width}.4f}{interval}"
