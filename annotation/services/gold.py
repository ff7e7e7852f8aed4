"""Gold (calibration) pairs: pairs of the pool with a known grade, which every judge of the
campaign gets unmarked among their other pairs. Marking them (one pair, a list, or a gold
file: :func:`import_gold`) and each judge's calibration against them, for the calibration
page, the downloads, the API and ``manage.py calibration`` / ``import_gold``.

Agreement between the judges themselves is services.agreement; calibration reads the graded
judgments and names its weights as that module does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation import agreement as stats
from annotation import formats
from annotation.agreement import Calibration
from annotation.models import Campaign, CampaignJudge, Pair, PairSource
from annotation.services import common
from annotation.services.agreement import (
    DEFAULT_WEIGHTS,
    RESAMPLES,
    graded_judgments,
    weights_value,
)
from annotation.services.assignments import assign_pending
from annotation.services.campaigns import PoolChange, add_pairs
from annotation.services.tallies import count_topics
from jobs.services.limits import TooLargeForRequest

# A judge whose weighted kappa against gold is below this is flagged whatever their accuracy:
# accuracy rewards giving every pair the most common gold grade, kappa does not. 0.6 is the
# top of Landis & Koch's "moderate" band (annotation.agreement.flag_judges' default).
GOLD_MIN_KAPPA = 0.6
# Gold files are read inside the request: they are small (tens to thousands of pairs).
MAX_GOLD_BYTES = 1024 * 1024

MESSAGES = {
    "grade_off_scale": "grade {grade} is not on this campaign's scale ({grades})",
    "no_gold_graded": "has graded none of the gold pairs yet",
    "low_accuracy": "accuracy {accuracy:.1%} on gold pairs is below the campaign's {bar:.0%}",
    "gold_in_parts": "Import the file in parts of at most that many lines: each part adds its "
    "gold pairs to those already marked.",
}


# --- marking gold pairs --------------------------------------------------------------------


def set_gold(*, campaign: Campaign, entries: Iterable[tuple[str, str, int]]) -> PoolChange:
    """Mark (qid, docno) pairs as calibration pairs with a known grade, adding those not yet
    in the pool; every judge of the campaign gets each of them, unmarked among their other
    pairs. A grade off the scale or an unknown qid is refused and nothing changes."""
    entries = list(entries)
    grades = campaign.grades
    wrong = sorted({g for _, _, g in entries if g not in grades})
    if wrong:
        raise ValidationError(
            common.MESSAGES["grade_not_in_scale"].format(
                grade=", ".join(map(str, wrong)), grades=", ".join(map(str, grades))
            )
        )
    with transaction.atomic():
        change = add_pairs(
            campaign=campaign,
            pairs=[(qid, docno) for qid, docno, _ in entries],
            source=PairSource.GOLD,
            assign=False,
        )
        # One UPDATE per grade, not one per pair (a gold file of thousands of lines).
        grade_of = {(qid, docno): grade for qid, docno, grade in entries}  # the last line wins
        pk_of = {
            (qid, docno): pk
            for qid, docno, pk in campaign.pairs.filter(
                document__docno__in={docno for _, docno in grade_of}
            ).values_list("topic__qid", "document__docno", "pk")
        }
        by_grade: dict[int, list[int]] = defaultdict(list)
        for key, grade in grade_of.items():
            by_grade[grade].append(pk_of[key])
        for grade, pks in by_grade.items():
            for start in range(0, len(pks), 2000):  # SQLite's bound on query parameters
                Pair.objects.filter(pk__in=pks[start : start + 2000]).update(gold_grade=grade)
        assigned = assign_pending(campaign=campaign)
        count_topics(
            topic_ids=campaign.topics.filter(qid__in={q for q, _, _ in entries}).values_list(
                "pk", flat=True
            )
        )
    return PoolChange(change.added, change.already, change.new_documents, assigned)


def mark_gold(*, campaign: Campaign, pair_id: int, grade: int | None) -> PoolChange:
    """Make one pool pair a calibration pair with a known ``grade`` (every judge gets it,
    unmarked among their other pairs), change its known grade, or with ``grade=None`` make
    it an ordinary pair again. Pair.DoesNotExist if the campaign has no such pair; a grade
    off the scale is a ValidationError and changes nothing."""
    pair = Pair.objects.select_related("topic", "document").get(pk=pair_id, campaign=campaign)
    if grade is None:
        clear_gold(campaign=campaign, pair_ids=[pair.pk])
        return PoolChange(added=0, already=1, new_documents=0, assigned=0)
    return set_gold(campaign=campaign, entries=[(pair.topic.qid, pair.document.docno, grade)])


def clear_gold(*, campaign: Campaign, pair_ids: Iterable[int]) -> int:
    """Make calibration pairs ordinary pairs again (their judges' grades stay)."""
    with transaction.atomic():
        gold = campaign.pairs.filter(pk__in=list(pair_ids), gold_grade__isnull=False)
        topics = set(gold.values_list("topic_id", flat=True))
        cleared = gold.update(gold_grade=None)
        count_topics(topic_ids=topics)
    return cleared


# --- a gold file ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldImport:
    marked: int  # lines of the file: pairs now calibration pairs with its grade
    change: PoolChange


def import_gold(
    *,
    campaign: Campaign,
    source,
    filename: str,
    max_bytes: int | None = MAX_GOLD_BYTES,
    max_rows: int | None = None,
) -> GoldImport:
    """Read a gold file (formats.read_gold) and mark its pairs as calibration pairs with
    their grades (services.set_gold), adding pairs not in the pool yet. All or nothing: a
    bad line, a topic not in the campaign or a grade off its scale raises TrecFormatError
    with every such line, and nothing changes. More than ``max_rows`` lines (a request's
    SYNC_WRITE_ROWS) raise jobs.services.limits.TooLargeForRequest before anything is written."""
    unknown_topics, grades = common.topics_check(campaign), campaign.grades

    def check(records):
        """A topic the campaign does not have, a grade off its scale: with the file's other
        problems, in one answer (not for a file too large for the request: refused below)."""
        if max_rows is not None and len(records) > max_rows:
            return
        yield from unknown_topics(records)
        off_scale = MESSAGES["grade_off_scale"]
        for record in records:
            if record.grade not in grades:
                yield (
                    record.line,
                    off_scale.format(grade=record.grade, grades=", ".join(map(str, grades))),
                )

    records = formats.read_gold(source, name=filename, max_bytes=max_bytes, check=check)
    if max_rows is not None and len(records) > max_rows:
        raise TooLargeForRequest(
            count=len(records), what="gold pairs", instead=MESSAGES["gold_in_parts"]
        )
    change = set_gold(campaign=campaign, entries=[(r.qid, r.docno, r.grade) for r in records])
    return GoldImport(len(records), change)


# --- calibration against gold --------------------------------------------------------------


@dataclass(frozen=True)
class GoldPair:
    pair_id: int
    qid: str
    docno: str
    grade: int
    graded_by: int  # judges who graded it


@dataclass(frozen=True)
class JudgeCalibration:
    """A judge against gold. status: "ok", "flagged" (below a bar) or "unchecked" (no gold
    pair graded, or kappa undefined); reasons say why."""

    judge: str
    calibration: Calibration
    status: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class CampaignCalibration:
    gold: list[GoldPair]
    judges: list[JudgeCalibration]
    weights: str
    min_accuracy: float
    min_kappa: float

    @property
    def flagged(self) -> list[JudgeCalibration]:
        return [j for j in self.judges if j.status == "flagged"]


def campaign_calibration(
    *, campaign: Campaign, weights: str = DEFAULT_WEIGHTS, resamples: int = RESAMPLES
) -> CampaignCalibration:
    """Every judge (of the campaign, or who graded a gold pair) against the gold pairs.

    Flagged: accuracy below campaign.gold_min_accuracy (the lead's bar), or weighted kappa
    against gold below GOLD_MIN_KAPPA (annotation.agreement.flag_judges). Three queries."""
    weighting = weights_value(weights)
    gold_rows = list(
        Pair.objects.filter(campaign=campaign, gold_grade__isnull=False).values_list(
            "pk", "topic__qid", "document__docno", "gold_grade"
        )
    )
    gold = {pk: grade for pk, _, _, grade in gold_rows}
    grades_of: dict[str, dict[int, int]] = defaultdict(dict)
    graded_by: dict[int, int] = defaultdict(int)
    for g in graded_judgments(campaign=campaign, gold_only=True):
        grades_of[g.judge][g.pair_id] = g.grade
        graded_by[g.pair_id] += 1
    members = CampaignJudge.objects.filter(campaign=campaign).values_list(
        "judge__username", flat=True
    )
    judges = sorted(set(members) | set(grades_of))
    calibrations = {
        judge: stats.calibrate_judge(
            grades_of.get(judge, {}),
            gold,
            scale=campaign.grades,
            weights=weighting,
            resamples=resamples,
            seed=campaign.seed,
        )
        for judge in judges
    }
    kappa_flags = {
        flag.judge: flag
        for flag in stats.flag_judges(
            {j: c for j, c in calibrations.items() if c.n}, min_kappa=GOLD_MIN_KAPPA
        )
    }
    rows = [
        _judge_calibration(j, calibrations[j], kappa_flags.get(j), campaign.gold_min_accuracy)
        for j in judges
    ]
    pairs = [
        GoldPair(pk, qid, docno, grade, graded_by.get(pk, 0))
        for pk, qid, docno, grade in sorted(gold_rows, key=lambda row: (row[1], row[2]))
    ]
    return CampaignCalibration(pairs, rows, weights, campaign.gold_min_accuracy, GOLD_MIN_KAPPA)


def _judge_calibration(judge, calibration, kappa_flag, min_accuracy) -> JudgeCalibration:
    if calibration.n == 0:
        return JudgeCalibration(judge, calibration, "unchecked", (MESSAGES["no_gold_graded"],))
    reasons = []
    low_accuracy = calibration.accuracy.value < min_accuracy
    if low_accuracy:
        reasons.append(
            MESSAGES["low_accuracy"].format(accuracy=calibration.accuracy.value, bar=min_accuracy)
        )
    if kappa_flag is not None:  # kappa below the bar, or undefined ("cannot be checked")
        reasons.append(kappa_flag.reason)
    low_kappa = kappa_flag is not None and kappa_flag.kappa.value is not None
    status = "flagged" if low_accuracy or low_kappa else "unchecked" if reasons else "ok"
    return JudgeCalibration(judge, calibration, status, tuple(reasons))
