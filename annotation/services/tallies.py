"""Each pair's tally of its judges (Pair.judges_assigned … grades_tied), kept up to date in
the transaction of every change to the pair's assignments or judgments, so the lead's pages
filter, count and order pairs in the database (annotation/services/adjudication.py).

Every service that creates, deletes or changes assignments or judgments calls
:func:`tally_pairs` with the pairs it touched (judging: the one pair, under a lock on its
row; assigning, removing a judge, restoring a backup: many at once). Code that writes the
tables directly (tests, a repair) calls it too; ``tally_pairs(campaign=…)`` recounts every
pair of a campaign.

The grades of outside people (imported) count as a judge's who has graded the pair; so do a
machine judge's when its campaign lets machine grades count in adjudication
(Campaign.machine_grades_adjudicate; changing it recounts the campaign).

Each topic's counts of its pairs of each kind (TopicTally: pairs, judged, disputed, waiting,
to decide, decided on each basis, and the sums of the pairs' tallies) are recounted from
the pairs' tallies by :func:`count_topics`, under a lock on the topic's row, in the same
transaction: by tally_pairs for the topics of the pairs it counted, and by the services that
change what decides a pair without touching its judges (a lead's decision, a gold grade, the
campaign's rule) or add pairs. A grade, a skip or an undo shifts its topic's counts by its
pair's change instead (:func:`tally_locked_pair`, annotation/services/topic_counts.py), under
the same lock. The lead's pages add up one row per topic.

Each judge's tally in a campaign (JudgeTally) is kept by annotation/services/judge_tallies.py.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from django.db import connection, transaction
from django.db.models import F, OuterRef, Q, Subquery, Sum

from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    ExternalGrade,
    JudgeKind,
    Judgment,
    Pair,
    Topic,
    TopicTally,
)
from annotation.services.topic_counts import (
    TOPIC_FIELDS,
    lead_decided,
    topic_counts,
    topic_share,
)
from common.compiled import Write, prepared_cursor, send_together

FIELDS = (
    "judges_assigned",
    "judges_open",
    "judges_graded",
    "lowest_grade",
    "highest_grade",
    "grades_tied",
    "machines_graded",
)
# Pairs read, and updated per statement, at a time: within every database's parameter limit.
CHUNK = 5000


def tally_of(judgments: Iterable[tuple[str, int | None]], machine_grades: int = 0) -> tuple:
    """The tally (in FIELDS order) of a pair's (assignment status, grade or None) rows, of
    which ``machine_grades`` are machine judges' grades (status done)."""
    rows = list(judgments)
    grades = [grade for status, grade in rows if status == AssignmentStatus.DONE]
    grades = [g for g in grades if g is not None]
    counts = sorted(Counter(grades).values(), reverse=True)
    return (
        len(rows),
        sum(1 for status, _ in rows if status == AssignmentStatus.OPEN),
        len(grades),
        min(grades) if grades else None,
        max(grades) if grades else None,
        len(counts) > 1 and counts[0] == counts[1],
        machine_grades,
    )


def _tallies(rows: dict[int, list], outside: Iterable[tuple[int, int, str]]) -> dict[int, tuple]:
    """The tally of each pair of ``rows`` (pair id -> its judges' (status, grade or None)
    rows, extended in place) with its counted outside grades (pair id, grade, judge kind)
    folded in as done judgments, the machines' counted as such."""
    machines: Counter = Counter()
    for pair_id, grade, kind in outside:
        rows[pair_id].append((AssignmentStatus.DONE, grade))
        machines[pair_id] += kind == JudgeKind.MACHINE
    return {pk: tally_of(judgments, machines[pk]) for pk, judgments in rows.items()}


def adjudicating_grades() -> Q:
    """The external grades that count in adjudication: every outside person's, and a
    machine's where its campaign says so."""
    return Q(judge__kind=JudgeKind.OUTSIDE) | Q(
        judge__kind=JudgeKind.MACHINE, pair__campaign__machine_grades_adjudicate=True
    )


def tally_pairs(
    *, pair_ids: Iterable[int] | None = None, campaign: Campaign | None = None, lock=False
) -> int:
    """Recount the tallies of ``pair_ids`` (or of every pair of ``campaign``) from their
    assignments and judgments; ``lock``: lock the pairs' rows first (so two judges grading
    one pair at once count each other's grade). Returns how many pairs were counted."""
    if pair_ids is None:
        pair_ids = Pair.objects.filter(campaign=campaign).values_list("pk", flat=True)
    ids = sorted(set(pair_ids))
    if lock and len(ids) == 1:
        with transaction.atomic(savepoint=False):
            _tally_one(ids[0])
        return 1
    groups: dict[tuple, list[int]] = defaultdict(list)
    topics: set[int] = set()
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        pairs = Pair.objects.filter(pk__in=chunk)
        if lock:
            pairs = pairs.select_for_update()
        topics.update(pairs.values_list("topic_id", flat=True))
        rows: dict[int, list] = {pk: [] for pk in chunk}
        for pair_id, status, grade in Assignment.objects.filter(pair_id__in=chunk).values_list(
            "pair_id", "status", "judgment__grade"
        ):
            rows[pair_id].append((status, grade))
        outside = ExternalGrade.objects.filter(adjudicating_grades(), pair_id__in=chunk)
        counted = _tallies(rows, outside.values_list("pair_id", "grade", "judge__kind"))
        for pk, tally in counted.items():
            groups[tally].append(pk)
    # One UPDATE per distinct tally (a few dozen in a campaign), not one per pair.
    for tally, pks in groups.items():
        values = dict(zip(FIELDS, tally, strict=True))
        for start in range(0, len(pks), CHUNK):
            Pair.objects.filter(pk__in=pks[start : start + CHUNK]).update(**values)
    count_topics(topic_ids=topics)
    return len(ids)


def count_topics(
    *, topic_ids: Iterable[int] | None = None, campaign: Campaign | None = None
) -> None:
    """Recount the TopicTally of ``topic_ids`` (or of every topic of ``campaign``) from
    their pairs, after locking the topics' rows: a recount waits for another transaction
    recounting the same topic to commit, then reads its pairs as that one left them, so
    no change is lost between two grades of one topic."""
    topics = Topic.objects.all()
    if topic_ids is not None:
        ids = sorted(set(topic_ids))
        if not ids:
            return
        topics = topics.filter(pk__in=ids)
    else:
        topics = topics.filter(campaign=campaign)
    # No savepoint of its own: the lock holds to the end of the caller's transaction (or of
    # this one, called outside any).
    with transaction.atomic(savepoint=False):
        if topic_ids is not None and len(ids) == 1:
            _count_one(ids[0])
        else:
            _count_locked(topics)


# The statements of every grade (one pair's tally, its topic's recount) are compiled once
# per database (and rule) and kept: compiling the ORM's queries took as much CPU as the rest
# of the grade. A query is compiled with a sentinel where the pair's or topic's id goes.
_SENTINEL = -7_654_321
_STATEMENTS: dict[tuple, tuple] = {}


def _compiled(queryset) -> tuple[str, list, int]:
    """The queryset's SQL, its parameters, and where the sentinel is among them (once)."""
    sql, params = queryset.query.sql_with_params()
    params = list(params)
    at = params.index(_SENTINEL)
    assert _SENTINEL not in params[at + 1 :]
    return sql, params, at


def _run(cursor, statement: tuple[str, list, int], value: int) -> list[tuple]:
    sql, params, at = statement
    params = list(params)
    params[at] = value
    cursor.execute(sql, params)
    return cursor.fetchall()


def _pair_statements() -> tuple:
    key = (connection.vendor, connection.alias, "pair")
    if key not in _STATEMENTS:
        quote = connection.ops.quote_name
        lock = _compiled(Pair.objects.filter(pk=_SENTINEL).values_list("topic_id"))
        if connection.features.has_select_for_update:
            lock = (lock[0] + " FOR UPDATE", lock[1], lock[2])
        judges = _compiled(
            Assignment.objects.filter(pair_id=_SENTINEL).values_list("status", "judgment__grade")
        )
        outside = _compiled(
            ExternalGrade.objects.filter(adjudicating_grades(), pair_id=_SENTINEL).values_list(
                "pair_id", "grade", "judge__kind"
            )
        )
        update = (
            f"UPDATE {quote(Pair._meta.db_table)} SET "
            + ", ".join(f"{quote(f)} = %s" for f in FIELDS)
            + f" WHERE {quote('id')} = %s"
        )
        _STATEMENTS[key] = (lock, judges, outside, update)
    return _STATEMENTS[key]


def _tally_one(pair_id: int) -> None:
    """tally_pairs of one pair under a lock on its row (a grade's): lock, read its judges'
    and the counted outside grades, store, then recount its topic."""
    lock, judges, outside, update = _pair_statements()
    with prepared_cursor() as cursor:
        found = _run(cursor, lock, pair_id)
        if not found:
            return
        rows = {pair_id: _run(cursor, judges, pair_id)}
        tally = _tallies(rows, _run(cursor, outside, pair_id))[pair_id]
        cursor.execute(update, [*tally, pair_id])
    _count_one(found[0][0])


def _locked_pair_statements() -> tuple:
    """A grade's tally statements (tally_locked_pair), written once per database: one read
    of the pair's judges' rows, its counted outside grades and what its topic's counts need
    of the pair as it is (its tally, gold grade, current lead decision, its campaign's
    rule), a UNION of three queries, its rows told apart by their first column; the pair's
    new tally stored; and its topic's counts shifted by the difference."""
    key = (connection.vendor, connection.alias, "locked")
    if key not in _STATEMENTS:
        quote = connection.ops.quote_name
        # Each assignment's grade by its judgment's unique index, never a join the planner
        # may turn round: where PostgreSQL had no statistics for the pair's assignments (no
        # ANALYZE since a bulk import, autovacuum off), it guessed hundreds of them and
        # hashed them against a scan of every judgment of the database, on every grade
        # (1.1 ms at 11,600 judgments instead of 0.16, and growing with the table).
        grade = Judgment.objects.filter(assignment_id=OuterRef("pk")).values("grade")
        judges = _compiled(
            Assignment.objects.filter(pair_id=_SENTINEL)
            .order_by()
            .annotate(tally_status=F("status"), tally_grade=Subquery(grade))
            .values_list("id", "tally_status", "tally_grade")
        )
        outside = _compiled(
            ExternalGrade.objects.filter(adjudicating_grades(), pair_id=_SENTINEL)
            .order_by()
            .annotate(tally_grade=F("grade"), tally_kind=F("judge__kind"))
            .values_list("tally_grade", "tally_kind")
        )
        pair = _compiled(
            Pair.objects.filter(pk=_SENTINEL)
            .order_by()
            .annotate(share_lead=lead_decided(), share_rule=F("campaign__adjudication_rule"))
            .values_list(*FIELDS, "gold_grade", "share_lead", "share_rule")
        )
        rest = ", ".join(["NULL"] * (len(FIELDS) + 3))
        # The pair's row first: PostgreSQL types a UNION's NULLs from the queries before them.
        read = (
            f"SELECT 'p', NULL, NULL, NULL, NULL, p.* FROM ({pair[0]}) p UNION ALL "
            f"SELECT 'j', j.{quote('id')}, j.{quote('tally_status')}, j.{quote('tally_grade')}, "
            f"NULL, {rest} FROM ({judges[0]}) j UNION ALL SELECT 'o', NULL, NULL, "
            f"o.{quote('tally_grade')}, o.{quote('tally_kind')}, {rest} FROM ({outside[0]}) o",
            pair[1] + judges[1] + outside[1],
            [pair[2], len(pair[1]) + judges[2], len(pair[1] + judges[1]) + outside[2]],
        )
        update = _pair_statements()[3]
        shift = (
            f"UPDATE {quote(TopicTally._meta.db_table)} SET "
            + ", ".join(f"{quote(f)} = {quote(f)} + %s" for f in TOPIC_FIELDS)
            + f" WHERE {quote('topic_id')} = %s"
        )
        _STATEMENTS[key] = (read, update, shift)
    return _STATEMENTS[key]


def tally_locked_pair(
    *,
    pair_id: int,
    topic_id: int,
    own: tuple[int, str, int | None] | None = None,
    along: Sequence[Write] = (),
) -> list[tuple[int, object]]:
    """tally_pairs and count_topics of one pair whose row and whose topic's row the caller
    locked in this transaction (a grade, a skip, an undo: services.judging): read its
    judges' and counted outside grades and the pair as it is (one statement), store its new
    tally, and shift its topic's counts by what the pair adds to them now less what it
    added before (topic_counts.topic_share) instead of counting the topic's pairs again
    (no shift is sent when nothing moves).

    ``own``: the caller's assignment (id, status, grade or None) as it is once ``along`` is
    written: ``along``, the caller's own writes, go with the tally's (common.compiled.
    send_together: one round trip on PostgreSQL). Returns their outcomes.

    The shift holds because every change to what a topic counts (a grade, a lead's
    decision, a gold grade, the campaign's rule, pairs added) takes the topic's lock in its
    transaction before it recounts or shifts, and the pair's lead decision, gold grade and
    rule are read here after the caller took that lock: the counts the shift starts from
    are those of the pair's state read here. A topic without its counts' row is counted."""
    read, update, shift = _locked_pair_statements()
    params = list(read[1])
    for place in read[2]:
        params[place] = pair_id
    judges, outside, before = [], [], None
    with prepared_cursor() as cursor:
        cursor.execute(read[0], params)
        for part, assignment_id, status, grade, kind, *state in cursor.fetchall():
            if part == "j":
                if own is not None and assignment_id == own[0]:
                    status, grade = own[1], own[2]
                judges.append((status, grade))
            elif part == "o":
                outside.append((pair_id, grade, kind))
            else:
                before = state
    *old, gold_grade, lead, rule = before
    old[FIELDS.index("grades_tied")] = bool(old[FIELDS.index("grades_tied")])
    tally = _tallies({pair_id: judges}, outside)[pair_id]
    now = topic_share(tally, gold_grade=gold_grade, lead=bool(lead), rule=rule)
    then = topic_share(tuple(old), gold_grade=gold_grade, lead=bool(lead), rule=rule)
    moved = [a - b for a, b in zip(now, then, strict=True)]
    writes = [*along, Write(update, [*tally, pair_id])]
    if any(moved):
        writes.append(Write(shift, [*moved, topic_id]))
    outcomes = send_together(writes)
    if any(moved) and not outcomes[-1][0]:  # a topic whose counts were never stored
        _count_one(topic_id)
    return outcomes[: len(along)]


def _statements(rule: str) -> tuple:
    key = (connection.vendor, connection.alias, rule)
    if key not in _STATEMENTS:
        counts = (
            Pair.objects.filter(topic_id=_SENTINEL)
            .annotate(lead_decided=lead_decided())
            .order_by()
            .values("topic_id")
            .annotate(**topic_counts(rule))
        )
        names = [*counts.query.values_select, *counts.query.annotation_select]
        quote = connection.ops.quote_name
        table = quote(TopicTally._meta.db_table)
        columns = ["topic_id", "campaign_id", *TOPIC_FIELDS]
        upsert = (
            f"INSERT INTO {table} ({', '.join(quote(c) for c in columns)}) "
            f"VALUES ({', '.join(['%s'] * len(columns))}) "
            f"ON CONFLICT ({quote('topic_id')}) DO UPDATE SET "
            + ", ".join(f"{quote(f)} = EXCLUDED.{quote(f)}" for f in TOPIC_FIELDS)
        )
        _STATEMENTS[key] = (_compiled(counts), names, upsert)
    return _STATEMENTS[key]


def _count_one(topic_id: int) -> None:
    """count_topics of one topic (the grade's): lock it, count, store; three statements."""
    quote = connection.ops.quote_name
    lock = (
        f"SELECT t.{quote('campaign_id')}, c.{quote('adjudication_rule')} "
        f"FROM {quote(Topic._meta.db_table)} t JOIN {quote(Campaign._meta.db_table)} c "
        f"ON c.{quote('id')} = t.{quote('campaign_id')} WHERE t.{quote('id')} = %s"
    )
    if connection.features.has_select_for_update_of:
        lock += " FOR UPDATE OF t"
    with prepared_cursor() as cursor:
        cursor.execute(lock, [topic_id])
        row = cursor.fetchone()
        if row is None:
            return
        campaign_id, rule = row
        counts, names, upsert = _statements(rule)
        found = _run(cursor, counts, topic_id)
        figures = dict(zip(names, found[0], strict=True)) if found else {}
        cursor.execute(
            upsert,
            [topic_id, campaign_id, *(figures.get(f) or 0 for f in TOPIC_FIELDS)],
        )


def _count_locked(topics) -> None:
    # The topics' rows only (of=self), with their campaign's rule as it stands.
    locked = topics.select_for_update(of=("self",)).order_by("pk")
    by_campaign: dict[int, list[int]] = defaultdict(list)
    rules: dict[int, str] = {}
    for pk, campaign_id, rule in locked.values_list(
        "pk", "campaign_id", "campaign__adjudication_rule"
    ):
        by_campaign[campaign_id].append(pk)
        rules[campaign_id] = rule
    rows = []
    for campaign_id, ids in by_campaign.items():
        counted = {
            row.pop("topic_id"): row
            for row in Pair.objects.filter(topic_id__in=ids)
            .annotate(lead_decided=lead_decided())
            .order_by()
            .values("topic_id")
            .annotate(**topic_counts(rules[campaign_id]))
        }
        for pk in ids:
            figures = {k: v or 0 for k, v in counted.get(pk, {}).items()}
            rows.append(TopicTally(topic_id=pk, campaign_id=campaign_id, **figures))
    for start in range(0, len(rows), CHUNK):
        TopicTally.objects.bulk_create(
            rows[start : start + CHUNK],
            update_conflicts=True,
            unique_fields=["topic"],
            update_fields=list(TOPIC_FIELDS),
        )


def topic_sums(queryset) -> dict[str, int]:
    """TOPIC_FIELDS summed over a TopicTally queryset (0 where it has no rows)."""
    sums = queryset.aggregate(**{field: Sum(field) for field in TOPIC_FIELDS})
    return {field: value or 0 for field, value in sums.items()}
