"""A campaign's agreement report: how far its judges agree with each other (their
calibration against gold pairs is services.gold).

A thin layer over annotation.agreement (pure): gather the campaign's graded judgments in one
query (skips left out), hand them over as (pair id, username, grade) triples, and return
what the report page, the downloads, the API and ``manage.py agreement_report`` show.

Computing the report takes seconds on a large campaign (60,000 judgments: ~0.3 s to read
them, ~1.4 s per choice of weights for 1000 bootstrap resamples), and a running campaign
gets a new grade every few seconds. So no page view computes it: the numbers are stored
(AgreementSnapshot, one per choice of weights) under a fingerprint of the campaign's
settings, and recomputed by a background task (tasks.refresh_agreement). A grade only
marks them stale (:func:`mark_agreement_stale`, in the grade's transaction: one SELECT
while a refresh is already queued); a page that finds them stale (the campaign's refresh
row, one query: no page reads every judgment to find out) shows the stored numbers with
their time and that a recomputation is pending. With the inline task backend (no worker) the page computes them itself, as before.
The intervals are seeded with the campaign's seed: the same judgments give the same
intervals, whoever computes them. The post-editing report (suggested against blind grades,
services/suggestions.anchoring_report) is computed by the same refresh and stored with the
numbers, so no page computes it either; the suggestion settings and the suggested machine's
answers are part of the fingerprint, and a run of that machine queues a refresh.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import pickle
import time
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Sum
from django.tasks import DEFAULT_TASK_BACKEND_ALIAS, task_backends
from django.tasks.backends.immediate import ImmediateBackend
from django.utils import timezone

from annotation import agreement as stats
from annotation.agreement import (
    RESAMPLES,
    AgreementReport,
    JudgeProfile,
    PairAgreement,
    Statistic,
    TopicAgreement,
)
from annotation.agreement.anchoring import Anchoring
from annotation.background import REFRESH_AGREEMENT, background
from annotation.models import (
    AgreementRefresh,
    AgreementSnapshot,
    Campaign,
    ExternalGrade,
    JudgeKind,
    Judgment,
    MachineAnswer,
)
from annotation.services.suggestions import anchoring_report
from common.compiled import Statement

# The lead's choice of weights for pairwise kappa, as the page and the API name them.
WEIGHTS = {"quadratic": "quadratic", "linear": "linear", "none": None}
DEFAULT_WEIGHTS = "quadratic"
# A judge whose mean difference from the other judges' consensus is within this many grades
# of zero is "in line"; above it lenient, below it strict.
IN_LINE_GRADES = 0.1
# A refresh queued this long ago that has not started is taken as lost (its worker died, or
# the queue was emptied) and queued again by the next page that finds the numbers stale.
REFRESH_RETRY_SECONDS = 5 * 60

MESSAGES = {
    "unknown_weights": "Unknown weights {weights!r}; choose one of {choices}.",
    "threshold_unusable": (
        "the relevance threshold {threshold} leaves no grade of the scale {side}, so there is "
        "no relevant / not relevant split to agree on"
    ),
}


def weights_value(key: str) -> str | None:
    """The weights annotation.agreement takes for the name a lead chose; ValueError if none."""
    if key not in WEIGHTS:
        raise ValueError(
            MESSAGES["unknown_weights"].format(weights=key, choices=", ".join(WEIGHTS))
        )
    return WEIGHTS[key]


# --- the judgments -------------------------------------------------------------------------


class Graded(NamedTuple):
    """One judge's grade of one pair, with the pair's topic and its gold grade (or None)."""

    pair_id: int
    judge: str
    grade: int
    topic_id: int
    gold_grade: int | None


def graded_judgments(*, campaign: Campaign, gold_only: bool = False) -> list[Graded]:
    """Every graded judgment of the campaign (skips have no grade and are left out) and
    every outside person's grade (machines are not in the humans' statistics), in two
    queries; ``gold_only``: of calibration pairs only."""
    rows = Judgment.objects.filter(
        assignment__pair__campaign=campaign, grade__isnull=False
    ).values_list(
        "assignment__pair_id",
        "assignment__judge__username",
        "grade",
        "assignment__pair__topic_id",
        "assignment__pair__gold_grade",
    )
    outside = ExternalGrade.objects.filter(
        pair__campaign=campaign, judge__kind=JudgeKind.OUTSIDE
    ).values_list("pair_id", "judge__name", "grade", "pair__topic_id", "pair__gold_grade")
    if gold_only:
        rows = rows.filter(assignment__pair__gold_grade__isnull=False)
        outside = outside.filter(pair__gold_grade__isnull=False)
    # Outside people are human judges; named kind:name, which no username can be.
    return list(map(Graded._make, rows)) + [
        Graded(pair_id, f"{JudgeKind.OUTSIDE}:{name}", grade, topic_id, gold)
        for pair_id, name, grade, topic_id, gold in outside
    ]


def _ratings(campaign: Campaign, graded: list[Graded]) -> tuple[stats.Ratings, str]:
    """The Ratings, and why agreement at the threshold is undefined ("" when it is not)."""
    grades, threshold = campaign.grades, campaign.relevance_threshold
    problem = ""
    if not grades[0] < threshold <= grades[-1]:
        side = "below it" if threshold <= grades[0] else "at or above it"
        problem = MESSAGES["threshold_unusable"].format(threshold=threshold, side=side)
        threshold = grades[-1]  # any usable threshold; its statistics are replaced below
    triples = [(g.pair_id, g.judge, g.grade) for g in graded]
    return stats.build_ratings(triples, scale=grades, threshold=threshold), problem


# --- the report ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicRow:
    topic_id: int
    qid: str
    query: str
    agreement: TopicAgreement


@dataclass(frozen=True)
class JudgeRow:
    profile: JudgeProfile
    tendency: str  # "lenient", "strict", "in line", or "" when leniency is undefined

    @property
    def judge(self) -> str:
        return self.profile.judge


@dataclass(frozen=True)
class CampaignAgreement:
    """Everything the report shows: the campaign-wide report (``report.pairs`` holds each
    judge pair with its confusion matrix), topics worst first, judges by name; when the
    numbers were computed, and whether judgments changed since (a recomputation is pending)."""

    campaign: Campaign
    weights: str  # a key of WEIGHTS
    report: AgreementReport
    topics: list[TopicRow]
    judges: list[JudgeRow]
    threshold_problem: str  # why agreement at the threshold is undefined, or ""
    computed_at: dt.datetime | None = None
    pending: bool = False
    # Post-editing: suggested against blind grades; None when the campaign does not suggest.
    anchoring: Anchoring | None = None

    def pair(self, a: str, b: str) -> PairAgreement | None:
        """The two judges' row, in either order; None when they share no graded pair."""
        return self._pairs.get((a, b)) or self._pairs.get((b, a))

    @cached_property
    def _pairs(self) -> dict[tuple[str, str], PairAgreement]:
        return {(p.judge_a, p.judge_b): p for p in self.report.pairs}


def tendency(leniency: Statistic) -> str:
    if leniency.value is None:
        return ""
    if leniency.value > IN_LINE_GRADES:
        return "lenient"
    return "strict" if leniency.value < -IN_LINE_GRADES else "in line"


def campaign_agreement(
    *,
    campaign: Campaign,
    weights: str = DEFAULT_WEIGHTS,
    resamples: int = RESAMPLES,
    wait: bool = False,
) -> CampaignAgreement:
    """The campaign's agreement with pairwise kappa weighted by ``weights`` (a key of
    WEIGHTS), bootstrap intervals from ``resamples`` resamples seeded with campaign.seed.

    The numbers are the campaign's stored snapshot. When the judgments changed since it was
    computed, a recomputation is queued and the snapshot comes back with ``pending`` set;
    it is computed here instead when there is none yet, when ``wait`` (the command line),
    or when tasks run inline. Four queries when the snapshot is current (the state of the
    judgments, the snapshot, the refresh flag, the topics)."""
    weights_value(weights)
    inline = tasks_inline()
    fingerprint = _fingerprint(campaign, weights, resamples, judgments=inline)
    snapshot = (
        AgreementSnapshot.objects.filter(campaign=campaign, weights=weights, resamples=resamples)
        .only("fingerprint", "computed_at", "numbers")
        .first()
    )
    pending = snapshot is None or snapshot.fingerprint != fingerprint
    if not pending and not inline:
        pending = _changed_since(campaign, snapshot.computed_at)
    if pending and (snapshot is None or wait or inline):
        computed, computed_at = refresh_agreement(
            campaign=campaign, weights=(weights,), resamples=resamples
        )
        numbers, pending = computed[weights], False
    else:
        numbers, computed_at = pickle.loads(snapshot.numbers), snapshot.computed_at
        if pending:
            queue_agreement_refresh(campaign_id=campaign.pk, retry_stale=True)
    # Snapshots stored before the post-editing report was part of them have four parts;
    # their fingerprint differs from today's, so they are recomputed (pending) meanwhile.
    report, by_topic, profiles, threshold_problem, *rest = numbers
    anchoring = rest[0] if rest else None
    names = {
        pk: (qid, query) for pk, qid, query in campaign.topics.values_list("pk", "qid", "query")
    }
    topics = [TopicRow(row.topic, *names[row.topic], agreement=row) for row in by_topic]
    judges = [JudgeRow(p, tendency(p.leniency)) for p in profiles]
    return CampaignAgreement(
        campaign,
        weights,
        report,
        topics,
        judges,
        threshold_problem,
        computed_at,
        pending,
        anchoring,
    )


def tasks_inline() -> bool:
    """Tasks run inside the request that enqueues them (no worker): a queued refresh would
    make the request wait anyway, so the page computes the numbers itself."""
    return isinstance(task_backends[DEFAULT_TASK_BACKEND_ALIAS], ImmediateBackend)


def _changed_since(campaign: Campaign, computed_at: dt.datetime) -> bool:
    """Under a task worker: whether a judgment changed after the snapshot's judgments were
    read. Every change marks the campaign (mark_agreement_stale sets requested_at until a
    refresh starts); a refresh that started after them (started_at) and has not stored
    its numbers yet, or never will (it failed), counts as a change too. One query on one
    row, however many judgments: no page reads them all to find out."""
    refresh = (
        AgreementRefresh.objects.filter(campaign=campaign)
        .values_list("requested_at", "started_at")
        .first()
    )
    if refresh is None:
        return False
    requested_at, started_at = refresh
    return requested_at is not None or (started_at is not None and started_at > computed_at)


def _fingerprint(campaign: Campaign, weights: str, resamples: int, judgments: bool = True) -> str:
    """Everything the numbers depend on: the campaign (its creation time tells a new
    campaign that reuses an id), its scale, threshold and seed, the choices, and (with
    ``judgments``) the state of its graded judgments (and of outside people's grades): how many, their latest change (a new
    grade, a regrade), the sum of their grades (a regrade within the same clock tick) and of
    their ids. A judge's new username shows once the judgments change.

    Reading the judgments' state costs a scan of all of them; under a task worker the
    campaign's refresh flags say the same in one row (:func:`_changed_since`), so only the
    inline backend (no worker: tests, a development server) takes it."""
    state = {"n": None, "latest": None, "total": None, "ids": None}
    outside = dict(state)
    machine: dict = {}
    if judgments and campaign.suggestions_from_id is not None:
        machine = MachineAnswer.objects.filter(machine_id=campaign.suggestions_from_id).aggregate(
            n=Count("pk"), latest=Max("answered_at"), total=Sum("grade")
        )
    if judgments:
        state = Judgment.objects.filter(
            assignment__pair__campaign=campaign, grade__isnull=False
        ).aggregate(n=Count("pk"), latest=Max("updated_at"), total=Sum("grade"), ids=Sum("pk"))
        outside = ExternalGrade.objects.filter(
            pair__campaign=campaign, judge__kind=JudgeKind.OUTSIDE
        ).aggregate(n=Count("pk"), latest=Max("updated_at"), total=Sum("grade"), ids=Sum("pk"))
    parts = (
        campaign.pk,
        campaign.created_at.isoformat(),
        campaign.grades,
        campaign.relevance_threshold,
        campaign.seed,
        weights,
        resamples,
        state["n"],
        state["latest"].isoformat() if state["latest"] else "",
        state["total"],
        state["ids"],
        tuple(outside.values()),
        # Post-editing's report: which machine is suggested, the blind share, its answers.
        campaign.suggestions_from_id,
        campaign.blind_share,
        tuple(machine.values()),
        "anchoring",  # snapshots since the report is stored with the numbers
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def refresh_agreement(
    *,
    campaign: Campaign,
    weights: tuple[str, ...] = tuple(WEIGHTS),
    resamples: int = RESAMPLES,
    as_of: dt.datetime | None = None,
) -> tuple[dict, dt.datetime]:
    """Compute the campaign's numbers for each of ``weights`` from its judgments as they are
    now and store them as its snapshots; returns them by weights, and their time. The judgments are read
    once for all weights; the per-topic rows and judge profiles do not depend on them. The
    fingerprint is taken before the judgments are read, so a grade given meanwhile leaves
    the snapshot stale rather than wrongly current. The snapshots' time is ``as_of`` (the
    refresh task's start) or now, taken before the judgments are read: the numbers are
    those of the judgments as they were then."""
    started = time.perf_counter()
    as_of = as_of or timezone.now()
    inline = tasks_inline()
    prints = {w: _fingerprint(campaign, w, resamples, judgments=inline) for w in weights}
    graded = graded_judgments(campaign=campaign)
    ratings, threshold_problem = _ratings(campaign, graded)
    by_topic = stats.agreement_by_topic(ratings, {g.pair_id: g.topic_id for g in graded})
    profiles = stats.judge_profiles(ratings)
    anchoring = anchoring_report(campaign, resamples=resamples)  # the same for every weights
    computed = {}
    for w in weights:
        report = stats.compute_agreement(
            ratings, weights=weights_value(w), resamples=resamples, seed=campaign.seed
        )
        if threshold_problem:
            report = _without_threshold(report, threshold_problem)
        computed[w] = (report, by_topic, profiles, threshold_problem, anchoring)
    seconds = time.perf_counter() - started
    for w, numbers in computed.items():
        _store(campaign, w, resamples, prints[w], as_of, seconds, pickle.dumps(numbers))
    return computed, as_of


def _store(campaign, weights, resamples, fingerprint, now, seconds, numbers) -> None:
    fields = {"fingerprint": fingerprint, "computed_at": now, "seconds": seconds}
    fields["numbers"] = numbers
    key = {"campaign": campaign, "weights": weights, "resamples": resamples}
    if AgreementSnapshot.objects.filter(**key).update(**fields):
        return
    try:
        with transaction.atomic():
            AgreementSnapshot.objects.create(**key, **fields)
    except IntegrityError:  # another refresh stored it first: ours is as new
        AgreementSnapshot.objects.filter(**key).update(**fields)


def mark_agreement_stale(*, campaign_id: int, queued: bool | None = None) -> None:
    """Called in the transaction of every change to a judgment: queue one recomputation of
    the campaign's agreement for after the commit, unless one is queued already (then this
    is one UPDATE that changes nothing). With inline tasks nothing is queued: the next page
    computes the numbers, so a grade never waits for them. ``queued``: whether a refresh
    was queued as the caller read it earlier in this transaction (a grade reads it with its
    pair's lock, services.judging), saving the SELECT."""
    if tasks_inline():
        return
    # While a refresh is queued (the common case during a burst of grades) one SELECT, which
    # takes no lock, is all a grade pays.
    if queued if queued is not None else _REFRESH_QUEUED.rows(campaign_id):
        return
    queue_agreement_refresh(campaign_id=campaign_id)


# mark_agreement_stale's SELECT, compiled once (it runs in every grade).
_REFRESH_QUEUED = Statement(
    "agreement.refresh_queued",
    lambda pk: (
        AgreementRefresh.objects.filter(campaign_id=pk, requested_at__isnull=False)
        .order_by()
        .values_list("pk")[:1]
    ),
    1,
)


def queue_agreement_refresh(*, campaign_id: int, retry_stale: bool = False) -> bool:
    """Enqueue tasks.refresh_agreement_task for the campaign once the current transaction
    commits, unless a refresh is queued already (``retry_stale``: or was queued more than
    REFRESH_RETRY_SECONDS ago and never started). True when this call queued it."""
    now = timezone.now()
    idle = AgreementRefresh.objects.filter(campaign_id=campaign_id, requested_at__isnull=True)
    queued = idle.update(requested_at=now)
    if not queued and retry_stale:
        lost = now - dt.timedelta(seconds=REFRESH_RETRY_SECONDS)
        queued = AgreementRefresh.objects.filter(
            campaign_id=campaign_id, requested_at__lt=lost
        ).update(requested_at=now)
    if not queued and not AgreementRefresh.objects.filter(campaign_id=campaign_id).exists():
        try:
            with transaction.atomic():
                AgreementRefresh.objects.create(campaign_id=campaign_id, requested_at=now)
            queued = 1
        except IntegrityError:  # another request created it (and queued the refresh)
            queued = 0
    if queued:
        transaction.on_commit(
            lambda: background(REFRESH_AGREEMENT).enqueue(campaign_id=campaign_id)
        )
    return bool(queued)


def _without_threshold(report: AgreementReport, reason: str) -> AgreementReport:
    """The report with every statistic at the threshold undefined, for ``reason``."""
    pairs = tuple(
        dataclasses.replace(p, kappa_at_threshold=stats.Statistic(None, reason, n=p.n))
        for p in report.pairs
    )
    fleiss = stats.Statistic(None, reason, n=report.fleiss_at_threshold.n)
    return dataclasses.replace(report, pairs=pairs, fleiss_at_threshold=fleiss)
