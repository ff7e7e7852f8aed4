"""Post-editing with a control group: the machine's grade a judge is shown beside a pair,
and the suggested-versus-blind report (annotation/agreement/anchoring.py does the
statistics; this module reads the grades).

A campaign suggests when its lead chose one of its machine judges (``suggestions_from``);
a seeded ``blind_share`` of each judge's pairs is shown without it, always the same pairs
(``anchoring.is_blind`` on the campaign's seed, the judge and the pair). Both settings are
locked once a human has graded with them (services/campaigns.py)."""

from __future__ import annotations

from annotation.agreement import RESAMPLES
from annotation.agreement.anchoring import Anchoring, Judged, anchoring, is_blind
from annotation.models import Campaign, Judgment, MachineAnswer, MachineOutcome


def shows_suggestion(campaign: Campaign, *, judge_id: int, pair_id: int) -> bool:
    """Whether this judge sees the suggestion on this pair (the campaign suggests and the
    pair is not one of the judge's blind ones)."""
    if campaign.suggestions_from_id is None:
        return False
    return not is_blind(campaign.seed, judge_id, pair_id, campaign.blind_share)


def suggestion_for(campaign: Campaign, *, judge_id: int, pair_id: int) -> dict | None:
    """The machine's grade to show this judge beside this pair, as {grade, label}; None on
    a blind pair, when the campaign does not suggest, or when the machine has no grade of
    the pair (it failed or has not run there yet)."""
    if not shows_suggestion(campaign, judge_id=judge_id, pair_id=pair_id):
        return None
    grade = (
        MachineAnswer.objects.filter(
            machine_id=campaign.suggestions_from_id,
            pair_id=pair_id,
            outcome=MachineOutcome.GRADED,
        )
        .values_list("grade", flat=True)
        .first()
    )
    if grade is None:
        return None
    label = next((item["label"] for item in campaign.scale if item["grade"] == grade), "")
    return {"grade": grade, "label": label}


def anchoring_report(campaign: Campaign, *, resamples: int = RESAMPLES) -> Anchoring | None:
    """Suggested against blind over the campaign's human grades (skips left out); None when
    the campaign does not suggest."""
    if campaign.suggestions_from_id is None:
        return None
    machine = dict(
        MachineAnswer.objects.filter(
            machine_id=campaign.suggestions_from_id, outcome=MachineOutcome.GRADED
        ).values_list("pair_id", "grade")
    )
    graded = Judgment.objects.filter(
        assignment__pair__campaign=campaign, grade__isnull=False
    ).values_list("assignment__pair_id", "assignment__judge_id", "grade", "seconds")
    rows = [
        Judged(
            pair=pair,
            judge=judge,
            grade=grade,
            seconds=seconds,
            suggested=shows_suggestion(campaign, judge_id=judge, pair_id=pair),
            machine=machine.get(pair),
        )
        for pair, judge, grade, seconds in graded.order_by("pk").iterator()
    ]
    return anchoring(rows, resamples=resamples, seed=campaign.seed)


MEASURE_WORDS = {
    "with_machine": "agreement with the machine",
    "with_humans": "agreement with other humans (same condition)",
    "seconds": "median seconds per judgment",
}


def anchoring_text(report: Anchoring) -> str:
    """The comparison as the command line prints it: each measure for suggested and blind
    grades and their difference, with 95% intervals."""

    def shown(stat) -> str:
        if stat.value is None:
            return f"undefined ({stat.reason})"
        interval = f" [{stat.low:.3f}, {stat.high:.3f}]" if stat.low is not None else ""
        return f"{stat.value:.3f}{interval}"

    lines = [
        "Post-editing: grades with the machine's suggestion in view against blind ones",
        f"  judgments: {report.suggested.judgments} suggested, {report.blind.judgments} blind",
    ]
    for name, words in MEASURE_WORDS.items():
        lines.append(f"  {words}:")
        for condition in report.conditions:
            lines.append(f"    {condition.name:<10} {shown(getattr(condition, name))}")
        lines.append(f"    {'difference':<10} {shown(report.difference[name])}")
    return "\n".join(lines) + "\n"
