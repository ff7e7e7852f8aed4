"""Certified hybrid qrels (issue 33, item 1): a machine judge grades the whole pool, humans
grade a sample drawn by a design with known inclusion probabilities, and each pooled run's
mean nDCG@10 is estimated as all-human grades would give it, with a prediction-powered
interval (evaluation/certified/, pure; this module reads the campaign and stores the design).

The sample goes to the human judges through the audits' path (a MachineAudit of kind
``certified``, its pairs given out by assign_pending). Once a campaign has a design, humans
are handed only the pairs sent to them (the sample, audits, calibration pairs): the machine
grades the rest, and open assignments of the other pairs are taken back when it is drawn.

The board is honest about where it stands (``Board.state``): no design drawn yet (human
grades given outside a design certify nothing: no probability says how they were chosen),
the machine has not graded every pool pair, no run is pooled, the pool changed after the
draw, the humans have not graded every sampled pair yet, or certified.
"""

from __future__ import annotations

import re
import secrets
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import polars as pl
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import (
    Assignment,
    AssignmentStatus,
    AuditKind,
    AuditPair,
    Campaign,
    CertifiedDesign,
    DesignPair,
    ExternalGrade,
    JudgeKind,
    MachineAudit,
    MachineJudge,
    Pair,
    PooledRun,
    SampleStrategy,
)
from annotation.services.assignments import assign_pending
from annotation.services.judge_tallies import tally_judges
from annotation.services.tallies import tally_pairs
from evaluation import certified as stats

K = 10  # nDCG@10, the measure the intervals are about
LEVEL = 0.95
MAX_SEED = 2**31 - 1

MESSAGES = {
    "budget": "A budget is a whole number of pairs (e.g. 120) or a share of the pool "
    "(e.g. 0.1 or 10%); got {value!r}.",
    "strategy": "Unknown strategy {value!r}; choose {choices}.",
    "seed": "A seed is a whole number from 0 to 2147483647.",
    "drawn": "This campaign's sample was drawn on {when:%Y-%m-%d %H:%M} UTC ({strategy}, seed "
    "{seed}): its inclusion probabilities are what make the intervals valid, so it is not "
    "drawn again (redraw it instead, before humans judge it).",
    "redraw_none": "No sample has been drawn yet: draw one.",
    "redraw_judged": "The sample cannot be redrawn: humans have judged {n:,} of its {chosen:,} "
    "pairs (graded or skipped). Choosing the sample again after seeing its grades would make "
    "the intervals invalid; keep this sample, or start a new campaign for another design.",
    "machine_elsewhere": "That machine judge is not one of this campaign's.",
    "empty_pool": "The pool is empty: build it first.",
    "machine_unfinished": "{label} has graded {graded:,} of the {total:,} pool pairs: a "
    "certified sample needs the machine's grade on every pair. Run it over the pool "
    "(failures are asked again) and draw the sample once it has finished.",
    "no_design": "No sample has been drawn by a design yet.",
    "no_design_humans": " The {n:,} pairs humans have graded so far were not chosen by a "
    "design, so no probability says how they were picked: they cannot correct the machine.",
    "no_runs": "No stored run is pooled into this campaign: the certified leaderboard ranks "
    "the pooled runs.",
    "pool_changed": "The pool changed after the sample was drawn ({now:,} pairs now, "
    "{then:,} then): pairs outside the design have no inclusion probability, so the "
    "intervals cannot be computed. Certify the pool as it was drawn, or start a new campaign.",
    "humans_pending": "{graded:,} of the {chosen:,} sampled pairs have a human grade: the "
    "intervals need all of them ({left:,} to go).",
    "certified": "Certified from {chosen:,} human grades ({share:.1%} of {pool:,} pool "
    "pairs) and {machine}'s grades on the rest.",
}


class State:
    NO_DESIGN = "no_design"
    MACHINE_UNFINISHED = "machine_unfinished"
    NO_RUNS = "no_runs"
    POOL_CHANGED = "pool_changed"
    HUMANS_PENDING = "humans_pending"
    CERTIFIED = "certified"


SHARE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def parse_budget(value) -> int | float:
    """A budget as the pure sampling reads it: a count (int) or a share of the pool (float
    in (0, 1]); "10%" is 0.1. ValidationError for anything else."""
    if isinstance(value, bool):
        raise ValidationError(MESSAGES["budget"].format(value=value))
    if isinstance(value, int):
        budget: int | float = value
    elif isinstance(value, float):
        budget = value
    else:
        text = str(value).strip()
        match = SHARE.match(text)
        try:
            if match:
                budget = float(match.group(1)) / 100
            elif re.fullmatch(r"\d+", text):
                budget = int(text)
            else:
                budget = float(text)
        except ValueError:
            raise ValidationError(MESSAGES["budget"].format(value=value)) from None
    if isinstance(budget, float) and (not np.isfinite(budget) or not 0 < budget <= 1):
        raise ValidationError(MESSAGES["budget"].format(value=value))
    if isinstance(budget, int) and budget < 1:
        raise ValidationError(MESSAGES["budget"].format(value=value))
    return budget


# --- reading the campaign ----------------------------------------------------------------


def pool_of(campaign: Campaign) -> list[tuple[int, str, str]]:
    """(pair id, qid, docno) of every pool pair."""
    return list(
        Pair.objects.filter(campaign=campaign)
        .order_by("topic__qid", "document__docno")
        .values_list("pk", "topic__qid", "document__docno")
    )


def machine_grades(machine: MachineJudge) -> dict[int, int]:
    return dict(
        ExternalGrade.objects.filter(judge_id=machine.judge_id).values_list("pair_id", "grade")
    )


def human_grades(pair_ids) -> dict[int, list[int]]:
    """pair id -> the grades people gave it (here, and outside people's imported ones)."""
    found: dict[int, list[int]] = defaultdict(list)
    ids = list(pair_ids)
    for start in range(0, len(ids), 2000):
        chunk = ids[start : start + 2000]
        for pair_id, grade in Assignment.objects.filter(
            pair_id__in=chunk, status=AssignmentStatus.DONE, judgment__grade__isnull=False
        ).values_list("pair_id", "judgment__grade"):
            found[pair_id].append(grade)
        for pair_id, grade in ExternalGrade.objects.filter(
            pair_id__in=chunk, judge__kind=JudgeKind.OUTSIDE
        ).values_list("pair_id", "grade"):
            found[pair_id].append(grade)
    return found


def human_grade(grades: list[int]) -> int:
    """One grade per pair for the estimator: the lower median of the people's grades (the
    rule machine filling uses, so a pair's grade never depends on who graded first)."""
    ordered = sorted(grades)
    return ordered[(len(ordered) - 1) // 2]


def pooled_run_ids(campaign: Campaign) -> list[int]:
    return list(
        PooledRun.objects.filter(campaign=campaign)
        .order_by("run_id")
        .values_list("run_id", flat=True)
    )


def run_rankings(run_ids: list[int], qids: set[str], k: int = K) -> dict[str, dict[str, list]]:
    """str(run id) -> qid -> its top k docnos in trec_eval's order (score descending, ties by
    docno descending), documents outside the pool included (they gain 0 but hold a rank)."""
    from evaluation.models import Run
    from evaluation.services import load_run_frame

    rankings = {}
    for run in Run.objects.filter(pk__in=run_ids).order_by("pk"):
        frame = (
            load_run_frame(run)
            .filter(pl.col("qid").is_in(sorted(qids)))
            .sort(["qid", "score", "docno"], descending=[False, True, True])
            .group_by("qid", maintain_order=True)
            .head(k)
        )
        lists: dict[str, list[str]] = defaultdict(list)
        for qid, docno in frame.select("qid", "docno").iter_rows():
            lists[str(qid)].append(str(docno))
        rankings[str(run.pk)] = dict(lists)
    return rankings


def run_labels(run_ids) -> dict[str, tuple[str, str]]:
    """str(run id) -> (label, url of its page)."""
    from evaluation.models import Run

    return {
        str(run.pk): (str(run), run.get_absolute_url())
        for run in Run.objects.filter(pk__in=list(run_ids)).select_related("system")
    }


def graded_machines(campaign: Campaign) -> list[tuple[MachineJudge, int]]:
    """The campaign's machine judges with how many pool pairs each has graded."""
    return [
        (machine, machine.graded_n)
        for machine in MachineJudge.objects.filter(judge__campaign=campaign)
        .select_related("judge")
        .annotate(graded_n=Count("judge__grades", filter=Q(judge__grades__pair__campaign=campaign)))
        .order_by("pk")
    ]


# --- drawing the sample --------------------------------------------------------------------


@dataclass(frozen=True)
class Drawn:
    design: CertifiedDesign
    sent: int  # sampled pairs sent to the human judges now (the others were sent before)
    assigned: int
    withdrawn: int


def _check_strategy(strategy: str) -> None:
    if strategy not in SampleStrategy.values:
        raise ValidationError(
            MESSAGES["strategy"].format(value=strategy, choices=", ".join(SampleStrategy.values))
        )


def draw_sample(
    *,
    campaign: Campaign,
    machine: MachineJudge,
    strategy: str,
    budget,
    seed: int | None = None,
    user=None,
) -> Drawn:
    """Draw the campaign's human sample with ``strategy`` and ``budget`` (a count, a share,
    or text such as "10%"), seeded (the campaign's seed by default); record the design (every
    pool pair's inclusion probability and stratum) and send the chosen pairs to the human
    judges (a certified audit, through assign_pending). All or nothing, under the campaign's
    lock. ValidationError when it cannot be drawn (see MESSAGES)."""
    _check_strategy(strategy)
    budget = parse_budget(budget)
    if seed is not None and (isinstance(seed, bool) or not 0 <= int(seed) <= MAX_SEED):
        raise ValidationError(MESSAGES["seed"])
    if machine.judge.campaign_id != campaign.pk:
        raise ValidationError(MESSAGES["machine_elsewhere"])
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        existing = CertifiedDesign.objects.filter(campaign=campaign).first()
        if existing is not None:
            raise ValidationError(
                MESSAGES["drawn"].format(
                    when=existing.created_at, strategy=existing.strategy, seed=existing.seed
                )
            )
        seed = campaign.seed if seed is None else int(seed)
        pairs = pool_of(campaign)
        if not pairs:
            raise ValidationError(MESSAGES["empty_pool"])
        grades = machine_grades(machine)
        graded = sum(1 for pk, _, _ in pairs if pk in grades)
        if graded < len(pairs):
            raise ValidationError(
                MESSAGES["machine_unfinished"].format(
                    label=machine.judge.label, graded=graded, total=len(pairs)
                )
            )
        if isinstance(budget, int) and budget > len(pairs):
            raise ValidationError(
                f"A budget of {budget:,} pairs is more than the pool's {len(pairs):,}."
            )
        run_ids = pooled_run_ids(campaign)
        pool, ids = pool_arrays(campaign, pairs, run_ids)
        machine_array = np.array([grades[ids[pair]] for pair in pool.pairs], dtype=np.int64)
        try:
            sample = _sample(pool, machine_array, strategy, budget, seed)
        except ValueError as error:
            raise ValidationError(str(error)) from None
        design = CertifiedDesign.objects.create(
            campaign=campaign,
            machine=machine,
            strategy=strategy,
            seed=seed,
            budget=float(budget),
            budget_is_share=isinstance(budget, float),
            strata=sample.strata if strategy == SampleStrategy.STRATIFIED else "",
            pool_size=pool.size,
            chosen=int(sample.chosen.size),
            expected_size=sample.expected_size,
            runs=run_ids,
            created_by=user,
        )
        chosen = set(sample.chosen.tolist())
        DesignPair.objects.bulk_create(
            (
                DesignPair(
                    design=design,
                    pair_id=ids[pair],
                    probability=float(sample.probability[i]),
                    stratum=None if sample.stratum is None else int(sample.stratum[i]),
                    chosen=i in chosen,
                )
                for i, pair in enumerate(pool.pairs)
            ),
            batch_size=2000,
        )
        chosen_ids = [ids[pool.pairs[i]] for i in sorted(chosen)]
        audit = MachineAudit.objects.create(
            campaign=campaign,
            kind=AuditKind.CERTIFIED,
            seed=seed,
            size=len(chosen_ids),
            sent_by=user,
        )
        already = set(
            AuditPair.objects.filter(pair_id__in=chosen_ids).values_list("pair_id", flat=True)
        )
        reason = f"drawn by the certified sample's {strategy} design (seed {seed})"
        AuditPair.objects.bulk_create(
            [
                AuditPair(audit=audit, pair_id=p, reason=reason)
                for p in chosen_ids
                if p not in already
            ],
            batch_size=2000,
        )
        withdrawn = _withdraw_outside(campaign)
        assigned = assign_pending(campaign=campaign, pair_ids=chosen_ids)
        audit.sent, audit.assigned = len(chosen_ids) - len(already), assigned
        audit.save(update_fields=["sent", "assigned"])
        design.audit, design.withdrawn = audit, withdrawn
        design.save(update_fields=["audit", "withdrawn"])
    return Drawn(design, audit.sent, assigned, withdrawn)


def judged_in_sample(design: CertifiedDesign) -> int:
    """How many of the design's sampled pairs a human judged here (graded or skipped, a
    judgment undone included) or an outside person graded."""
    sampled = DesignPair.objects.filter(design=design, chosen=True).values("pair_id")
    judged = set(
        Assignment.objects.filter(pair_id__in=sampled)
        .filter(Q(judgment__isnull=False) | Q(changes__isnull=False))
        .values_list("pair_id", flat=True)
        .distinct()
    )
    judged.update(
        ExternalGrade.objects.filter(
            pair_id__in=sampled, judge__kind=JudgeKind.OUTSIDE
        ).values_list("pair_id", flat=True)
    )
    return len(judged)


def redraw_sample(
    *, campaign: Campaign, strategy=None, budget=None, seed: int | None = None, user=None
) -> Drawn:
    """Draw the campaign's human sample again, with the same machine judge: ``strategy`` and
    ``budget`` default to the current design's, ``seed`` to a new random one. Refused
    (ValidationError) once a human judged any sampled pair: the sample would then be chosen
    after seeing its grades. Otherwise, under the campaign's lock and all or nothing: the old
    sample's certified audit and design are deleted, the new one drawn as :func:`draw_sample`
    does (it sends the new sample and takes back the open assignments of pairs no longer
    sent, counted in the new design's ``withdrawn``), and the old design is recorded in
    ``redraws``."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        old = (
            CertifiedDesign.objects.filter(campaign=campaign)
            .select_related("machine__judge", "created_by")
            .first()
        )
        if old is None:
            raise ValidationError(MESSAGES["redraw_none"])
        judged = judged_in_sample(old)
        if judged:
            raise ValidationError(MESSAGES["redraw_judged"].format(n=judged, chosen=old.chosen))
        if strategy is None:
            strategy = old.strategy
        if budget is None:
            budget = float(old.budget) if old.budget_is_share else int(old.budget)
        if seed is None:
            seed = secrets.randbelow(MAX_SEED + 1)
        record = {
            "strategy": old.strategy,
            "seed": old.seed,
            "budget": old.budget,
            "budget_is_share": old.budget_is_share,
            "chosen": old.chosen,
            "drawn_by": old.created_by.get_username() if old.created_by else None,
            "drawn_at": old.created_at.isoformat(),
            "redrawn_by": user.get_username() if user is not None else None,
            "redrawn_at": timezone.now().isoformat(),
        }
        history = [*old.redraws, record]
        if old.audit_id is not None:
            # Its pairs go with it; the new draw takes back the open assignments of pairs
            # no longer sent to the humans (_withdraw_outside), as any draw does.
            MachineAudit.objects.filter(pk=old.audit_id).delete()
        old.delete()
        drawn = draw_sample(
            campaign=campaign,
            machine=old.machine,
            strategy=strategy,
            budget=budget,
            seed=seed,
            user=user,
        )
        drawn.design.redraws = history
        drawn.design.save(update_fields=["redraws"])
    return drawn


def _withdraw_outside(campaign: Campaign) -> int:
    """Take back the open assignments of pairs the humans no longer judge (not sampled, not
    audited, not calibration pairs): nobody graded them, and the machine's grade stands."""
    open_work = Assignment.objects.filter(
        pair__campaign=campaign,
        status=AssignmentStatus.OPEN,
        pair__audit__isnull=True,
        pair__gold_grade__isnull=True,
    ).exclude(judgment__isnull=False)
    touched = list(open_work.values_list("pair_id", "judge_id"))
    if not touched:
        return 0
    deleted, _ = Assignment.objects.filter(
        pk__in=list(open_work.values_list("pk", flat=True))
    ).delete()
    tally_pairs(pair_ids={p for p, _ in touched})
    tally_judges(campaign_id=campaign.pk, judge_ids=sorted({j for _, j in touched}))
    return deleted


def pool_arrays(campaign: Campaign, pairs, run_ids) -> tuple[stats.Pool, dict]:
    ids = {(qid, docno): pk for pk, qid, docno in pairs}
    rankings = run_rankings(run_ids, {qid for _, qid, _ in pairs}) if run_ids else {}
    pool = stats.build_pool(list(ids), rankings, k=K, top_grade=max(campaign.grades))
    return pool, ids


def _sample(pool, machine, strategy, budget, seed) -> stats.Sample:
    if strategy == SampleStrategy.UNIFORM:
        return stats.sample_uniform(pool.size, budget, seed=seed)
    if strategy == SampleStrategy.STRATIFIED:
        return stats.sample_stratified(pool, machine, budget, seed=seed)
    return stats.sample_active(stats.influence_scores(pool, machine), budget, seed=seed)
