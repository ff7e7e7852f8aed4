"""The judge's operations: their queue, grading, skipping, undoing and notes (the progress
leads read is services/progress.py)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from django.db.models import BooleanField, Exists, ExpressionWrapper, F, OuterRef, QuerySet

from annotation.access import campaign_by_pk
from annotation.models import (
    AgreementRefresh,
    Assignment,
    AssignmentStatus,
    Campaign,
    Judgment,
    JudgmentAction,
    JudgmentChange,
    Pair,
    Topic,
    lacking_text,
)
from annotation.services.agreement import mark_agreement_stale
from annotation.services.common import MESSAGES
from annotation.services.judge_tallies import judge_tally_shift, tally_judges
from annotation.services.ordering import queue_order
from annotation.services.tallies import tally_locked_pair
from common import compiled, text_limits
from common.compiled import Statement, Write

# --- judging -------------------------------------------------------------------------------


# Pairs whose document has neither title nor text wait outside every judge's queue: the
# queue is read afresh on each request, so a documents import that fills the text in puts
# them back in their place with no further step (and grading one is refused meanwhile).
WAITING_FOR_TEXT = lacking_text("pair__document__")


def judge_assignments(*, campaign: Campaign, judge) -> QuerySet[Assignment]:
    """The judge's assignments in the campaign that can be graded now: the one place a
    judge's queue is chosen (the judging page, its resume point and the API's list)."""
    return Assignment.objects.filter(pair__campaign=campaign, judge=judge).exclude(WAITING_FOR_TEXT)


def waiting_for_text(*, campaign: Campaign, judge) -> int:
    """How many of the judge's assignments wait for their document's text."""
    return (
        Assignment.objects.filter(pair__campaign=campaign, judge=judge)
        .filter(WAITING_FOR_TEXT)
        .count()
    )


def judge_queue(*, campaign: Campaign, judge) -> list[int]:
    """The judge's gradable assignment ids in working order: topic by topic, then their own
    shuffled order inside the topic (an adaptive pool ordering: its order, across topics)."""
    return list(
        judge_assignments(campaign=campaign, judge=judge)
        .order_by(*queue_order(campaign))
        .values_list("pk", flat=True)
    )


def next_open_assignment(*, campaign: Campaign, judge) -> Assignment | None:
    """Where the judge left off: the first open assignment in their queue."""
    return (
        judge_assignments(campaign=campaign, judge=judge)
        .filter(status=AssignmentStatus.OPEN)
        .select_related("pair__topic", "pair__document")
        .order_by(*queue_order(campaign))
        .first()
    )


def _request_uuid(request_id) -> uuid.UUID | None:
    """Retries are recognised by their id; accept the text form API clients send."""
    if request_id is None or request_id == "" or isinstance(request_id, uuid.UUID):
        return request_id or None
    try:
        return uuid.UUID(str(request_id))
    except ValueError:
        raise ValidationError(MESSAGES["bad_request_id"].format(value=request_id)) from None


def _locked(campaign_scoped: bool) -> Statement:
    """The judge's assignment, locked, with what a grade needs of its pair and document."""

    def build(assignment_id, judge_id=None, campaign_id=None):
        # No order (the model's would sort the one row by its pair's topic and position).
        locked = (
            Assignment.objects.select_for_update(of=("self",)).filter(pk=assignment_id).order_by()
        )
        if campaign_scoped:
            locked = locked.filter(
                judge_id=judge_id,
                pair__campaign_id=campaign_id,
                pair__campaign__judges=judge_id,
            )
        return locked.annotate(
            lacks_text=ExpressionWrapper(WAITING_FOR_TEXT, output_field=BooleanField()),
            docno=F("pair__document__docno"),
        ).values_list(*_LOCKED_FIELDS, "pair__campaign_id", "pair__topic_id", "lacks_text", "docno")

    if campaign_scoped:
        return Statement("judging.locked_in_campaign", build, 3)
    return Statement("judging.locked", build, 1)


_LOCKED_FIELDS = ("id", "pair_id", "judge_id", "status")
_LOCKED = {True: _locked(True), False: _locked(False)}
_JUDGMENT = Statement(
    "judging.judgment", lambda pk: Judgment.objects.filter(assignment_id=pk).order_by(), 1
)
_CAMPAIGN_FIELDS = tuple(f.attname for f in Campaign._meta.concrete_fields)
_JUDGMENT_FIELDS = tuple(f.attname for f in Judgment._meta.concrete_fields)


def _pair_state(assignment_id):
    """What a change to a judgment needs once its assignment is locked, in one statement:
    its pair's and topic's rows locked (the tallies it recounts), the campaign, the judgment
    (or NULLs), and whether an agreement refresh is queued (mark_agreement_stale)."""
    queued = AgreementRefresh.objects.filter(
        campaign_id=OuterRef("pair__campaign_id"), requested_at__isnull=False
    )
    return (
        Assignment.objects.filter(pk=assignment_id)
        .order_by()
        .annotate(refresh_queued=Exists(queued))
        .values_list(
            *(f"pair__campaign__{name}" for name in _CAMPAIGN_FIELDS),
            # A column of the topic's row, so the topic is joined (and locked).
            "pair__topic__campaign_id",
            *(f"judgment__{name}" for name in _JUDGMENT_FIELDS),
            "refresh_queued",
        )
    )


# PostgreSQL locks a row's tables in the order the FROM clause joins them: the pair, then its
# topic, as every other change to both does (a lead's decision, a gold grade, work assigned:
# the pair's row first, then the topic's recount), so the two never wait for each other in
# opposite orders.
_PAIR_STATE = Statement("judging.pair_state", _pair_state, 1, lock_of=(Pair, Topic))


def _own_assignment(
    assignment_id: int, judge, campaign_id: int | None = None, *, lock_pair: bool = False
) -> Assignment:
    """The judge's assignment, locked until the change commits (only the assignment row:
    judges grading other pairs of the campaign never wait for each other).

    With ``campaign_id`` (the judging page's URL), an assignment of another judge, of another
    campaign, or of a campaign the judge no longer judges is ``Assignment.DoesNotExist``;
    without it, another judge's assignment is PermissionDenied (the API's contract).

    Its statements are compiled once (common.compiled); the assignment comes with its id,
    pair, judge and status, its other fields are read if asked for (deferred), and its pair
    with its campaign and topic.

    ``lock_pair`` (a grade, a skip, an undo: they recount the pair's and topic's tallies):
    the second statement also locks the pair's and the topic's rows, reads the judgment
    (``assignment.found_judgment``) and whether an agreement refresh is queued
    (``assignment.refresh_queued``), so the grade sends none of these again. Locks are
    taken in the order assignment, pair, topic, as before (the judge's tally, an UPDATE,
    comes after the pair, as when work is assigned: pairs, then judges' tallies).
    """
    if campaign_id is None:
        found = _LOCKED[False].rows(assignment_id)
    else:
        found = _LOCKED[True].rows(assignment_id, judge.pk, campaign_id)
    if not found:
        raise Assignment.DoesNotExist("Assignment matching query does not exist.")
    *fields, campaign, topic, lacks_text, docno = found[0]
    assignment = Assignment.from_db(connection.alias, _LOCKED_FIELDS, fields)
    if campaign_id is None and assignment.judge_id != judge.pk:
        raise PermissionDenied(MESSAGES["not_your_assignment"])
    assignment.lacks_text, assignment.docno = bool(lacks_text), docno
    pair = Pair.from_db(
        connection.alias, ("id", "campaign_id", "topic_id"), (fields[1], campaign, topic)
    )
    assignment.pair = pair
    # The campaign is read after the lock, in a statement of its own, so it is never older
    # than the lock: update_campaign locks every assignment of the campaign before it
    # changes the scale, so a grade is checked against the scale it is stored under. The
    # judgment too: only a holder of the assignment's lock writes it, so a retry that
    # waited for the lock sees the judgment the first attempt committed. (Should the
    # statement wait for the pair's or topic's lock, PostgreSQL reads the campaign and the
    # judgment as they were when it started, after the assignment's lock: still current.)
    if not lock_pair:
        pair.campaign = campaign_by_pk(campaign)
        return assignment
    row = _PAIR_STATE.rows(assignment.pk)[0]
    width = len(_CAMPAIGN_FIELDS)
    pair.campaign = Campaign.from_db(connection.alias, _CAMPAIGN_FIELDS, row[:width])
    judgment = row[width + 1 : width + 1 + len(_JUDGMENT_FIELDS)]
    assignment.found_judgment = None
    if judgment[0] is not None:
        assignment.found_judgment = Judgment.from_db(connection.alias, _JUDGMENT_FIELDS, judgment)
        assignment.found_judgment.assignment = assignment
    assignment.refresh_queued = bool(row[-1])
    return assignment


def _own_judgment(assignment: Assignment) -> Judgment | None:
    # A statement of its own after the lock (not a join in it): a retry that waited for the
    # lock must see the judgment the first attempt committed.
    if hasattr(assignment, "found_judgment"):  # read with the pair's lock (_own_assignment)
        return assignment.found_judgment
    found = _JUDGMENT.instances(assignment.pk)
    judgment = found[0] if found else None
    if judgment is not None:
        judgment.assignment = assignment  # the locked instance, not a fresh query's
    return judgment


def _store(
    assignment: Assignment, status: str, grade: int | None, along: Sequence[Write] = ()
) -> list[tuple[int, object]]:
    """Store the assignment's new ``status`` (its judgment's grade now ``grade``) with the
    caller's writes ``along``, shift its judge's tally, recount the pair's and its topic's
    tallies (their rows locked by _own_assignment's lock_pair), all sent together (one round
    trip on PostgreSQL: common.compiled.send_together), and mark the campaign's agreement
    stale. Returns the outcomes of ``along``."""
    campaign = assignment.pair.campaign
    old, assignment.status = assignment.status, status
    writes = list(along)
    if old != status:
        quote = connection.ops.quote_name
        writes.append(
            Write(
                f"UPDATE {quote(Assignment._meta.db_table)} SET {quote('status')} = %s "
                f"WHERE {quote('id')} = %s",
                [status, assignment.pk],
            )
        )
        writes.append(
            judge_tally_shift(
                campaign_id=campaign.pk, judge_id=assignment.judge_id, old=old, new=status
            )
        )
    outcomes = tally_locked_pair(
        pair_id=assignment.pair_id,
        topic_id=assignment.pair.topic_id,
        own=(assignment.pk, status, grade),
        along=writes,
    )
    if old != status and not outcomes[-1][0]:  # the judge's tally row is missing: count it
        tally_judges(campaign_id=campaign.pk, judge_ids=[assignment.judge_id])
    mark_agreement_stale(campaign_id=campaign.pk, queued=assignment.refresh_queued)
    return outcomes[: len(along)]


# What a grade changes on a judgment it finds (updated_at set on the way).
_REGRADED_FIELDS = ("grade", "skip_reason", "seconds", "last_request", "updated_at")


def record_judgment(
    *,
    assignment_id: int,
    judge,
    grade: int,
    seconds: float = 0.0,
    request_id: uuid.UUID | None = None,
    campaign_id: int | None = None,
    needs_text: bool = False,
) -> Judgment:
    """Record (or change) the judge's grade for their assignment. ``request_id`` makes a
    retried submission a no-op, so a flaky connection never counts time twice.

    ``needs_text``: refuse a pair whose document has neither title nor text (it is not in
    the judge's queue: judge_assignments). The judge's own doors, the judging page and the
    API, pass True; callers that stand in for judges (the demo, tests) may grade any pair."""
    request_id = _request_uuid(request_id)
    with transaction.atomic():
        assignment = _own_assignment(assignment_id, judge, campaign_id, lock_pair=True)
        if needs_text and assignment.lacks_text:
            raise ValidationError(MESSAGES["document_lacks_text"].format(docno=assignment.docno))
        grades = assignment.pair.campaign.grades
        if grade not in grades:
            raise ValidationError(
                MESSAGES["grade_not_in_scale"].format(
                    grade=grade, grades=", ".join(map(str, grades))
                )
            )
        judgment = _own_judgment(assignment)
        if judgment is not None and request_id is not None and judgment.last_request == request_id:
            return judgment
        old_grade = judgment.grade if judgment else None
        if judgment is None:
            judgment = Judgment(assignment=assignment)
        judgment.grade = grade
        judgment.skip_reason = ""
        judgment.seconds += max(0.0, float(seconds))
        judgment.last_request = request_id
        # Written with SQL compiled once (common.compiled), as save() and create() would, and
        # sent with the status, the judge's, pair's and topic's tallies in one round trip.
        created = judgment.pk is None
        if created:
            writes = [compiled.insert_write(judgment)]
        else:
            writes = [compiled.update_write(judgment, _REGRADED_FIELDS)]
        change = None
        if old_grade != grade:
            change = JudgmentChange(
                assignment=assignment,
                action=JudgmentAction.GRADED if old_grade is None else JudgmentAction.REGRADED,
                old_grade=old_grade,
                new_grade=grade,
                changed_by=judge,
            )
            writes.append(compiled.insert_write(change))
        outcomes = _store(assignment, AssignmentStatus.DONE, grade, writes)
        if created:
            compiled.inserted(judgment, outcomes[0][1])
        if change is not None:
            compiled.inserted(change, outcomes[-1][1])
    return judgment


def skip_assignment(
    *,
    assignment_id: int,
    judge,
    reason: str,
    seconds: float = 0.0,
    request_id: uuid.UUID | None = None,
    campaign_id: int | None = None,
) -> Judgment:
    request_id = _request_uuid(request_id)
    reason = reason.strip()
    if not reason:
        raise ValidationError(MESSAGES["skip_needs_reason"])
    # Refused, not cut: the history keeps the reason as it was given.
    too_long = text_limits.length_errors(reason=(reason, text_limits.SKIP_REASON))
    if too_long:
        raise ValidationError(too_long)
    with transaction.atomic():
        assignment = _own_assignment(assignment_id, judge, campaign_id, lock_pair=True)
        judgment = _own_judgment(assignment) or Judgment(assignment=assignment)
        if judgment.pk and request_id is not None and judgment.last_request == request_id:
            return judgment
        old_grade = judgment.grade
        judgment.grade = None
        judgment.skip_reason = reason
        judgment.seconds += max(0.0, float(seconds))
        judgment.last_request = request_id
        judgment.save()
        JudgmentChange.objects.create(
            assignment=assignment,
            action=JudgmentAction.SKIPPED,
            old_grade=old_grade,
            note=reason,
            changed_by=judge,
        )
        _store(assignment, AssignmentStatus.SKIPPED, None)
    return judgment


def undo_judgment(*, assignment_id: int, judge, campaign_id: int | None = None) -> Assignment:
    """Take back a grade or a skip: the pair is open again; the history keeps what it was."""
    with transaction.atomic():
        assignment = _own_assignment(assignment_id, judge, campaign_id, lock_pair=True)
        judgment = _own_judgment(assignment)
        if judgment is None:
            return assignment
        JudgmentChange.objects.create(
            assignment=assignment,
            action=JudgmentAction.UNDONE,
            old_grade=judgment.grade,
            # What is taken back: the skip reason, or the note that goes with the grade.
            note=judgment.skip_reason or judgment.note,
            changed_by=judge,
        )
        judgment.delete()
        _store(assignment, AssignmentStatus.OPEN, None)
    return assignment


def set_note(
    *, assignment_id: int, judge, note: str, campaign_id: int | None = None
) -> Judgment | None:
    """Attach a note to the judge's judgment of the pair (kept in the history too)."""
    too_long = text_limits.length_errors(note=(note, text_limits.NOTE))
    if too_long:
        raise ValidationError(too_long)
    with transaction.atomic():
        assignment = _own_assignment(assignment_id, judge, campaign_id)
        judgment = _own_judgment(assignment)
        if judgment is None:
            raise ValidationError(MESSAGES["note_needs_judgment"])
        if judgment.note != note:
            judgment.note = note
            judgment.save(update_fields=["note", "updated_at"])
            JudgmentChange.objects.create(
                assignment=assignment,
                action=JudgmentAction.NOTED,
                old_grade=judgment.grade,
                new_grade=judgment.grade,
                note=note,
                changed_by=judge,
            )
            mark_agreement_stale(campaign_id=assignment.pair.campaign_id)
    return judgment
