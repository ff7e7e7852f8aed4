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
campaign's rule) or add pairs. The lead's pages add up one row per topic.

Each judge's tally in a campaign (JudgeTally) is kept by annotation/services/judge_tallies.py.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Sum

from annotation.models import (
    AdjudicationRule,
    Assignment,
    AssignmentStatus,
    Campaign,
    ExternalGrade,
    JudgeKind,
    LeadDecision,
    Pair,
    Topic,
    TopicTally,
)
from common.compiled import prepared_cursor

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


# --- what decides a pair, as SQL over its tally ----------------------------------------------
#
# The conditions annotation.services.final_grades._settle applies to a PairState, written
# over the pair's tally (and its current lead decision), so pages and TopicTally count and
# filter pairs in the database.


def lead_decided() -> Exists:
    """The pair has a current (not superseded) lead decision."""
    return Exists(LeadDecision.objects.filter(pair=OuterRef("pk"), superseded_by__isnull=True))


def complete() -> Q:
    """Every judge of the pair has graded or skipped it, and at least one who is not a
    machine graded it (machine grades count beside a human's, never alone)."""
    return Q(judges_open=0, judges_graded__gt=F("machines_graded"))


def unanimous() -> Q:
    return Q(lowest_grade=F("highest_grade"))


def by_rule(rule: str) -> Q:
    """adjudication.decide gives a complete pair a grade: unanimous under every rule; the
    median always; the majority unless the most common grades tie; the lead never."""
    if rule == AdjudicationRule.MEDIAN:
        return complete()
    if rule == AdjudicationRule.MAJORITY:
        return complete() & (unanimous() | Q(grades_tied=False))
    return complete() & unanimous()


def disputed() -> Q:
    return Q(highest_grade__gt=F("lowest_grade"))


def to_decide(rule: str) -> Q:
    """Disputed, done by every judge, and settled by neither a gold grade, a lead nor the
    rule: the undecided queue (``lead_decided`` annotated)."""
    return (
        disputed() & Q(judges_open=0, gold_grade__isnull=True, lead_decided=False) & ~by_rule(rule)
    )


def _topic_counts(rule: str) -> dict:
    """TopicTally's counts as aggregates over a topic's pairs (``lead_decided`` annotated)."""
    undecided_by = Q(lead_decided=False, gold_grade__isnull=True)
    # Under the lead's rule only unanimous pairs are settled, and they count as unanimous.
    nothing = Q(pk__isnull=True)
    rule_apart = nothing if rule == AdjudicationRule.LEAD else by_rule(rule) & ~unanimous()
    return {
        "pairs": Count("pk"),
        "judged": Count("pk", filter=Q(judges_graded__gt=0)),
        "assigned": Sum("judges_assigned"),
        "open": Sum("judges_open"),
        "graded": Sum("judges_graded"),
        "disputed": Count("pk", filter=disputed()),
        "waiting": Count("pk", filter=Q(judges_open__gt=0)),
        "queue": Count("pk", filter=to_decide(rule)),
        "lead": Count("pk", filter=Q(lead_decided=True)),
        "gold": Count("pk", filter=Q(lead_decided=False, gold_grade__isnull=False)),
        "unanimous": Count("pk", filter=undecided_by & complete() & unanimous()),
        "by_rule": Count("pk", filter=undecided_by & rule_apart),
    }


TOPIC_FIELDS = (
    "pairs",
    "judged",
    "assigned",
    "open",
    "graded",
    "disputed",
    "waiting",
    "queue",
    "lead",
    "gold",
    "unanimous",
    "by_rule",
)


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


def _locked_pair_statements(rule: str) -> tuple:
    """A grade's two tally statements (tally_locked_pair), written once per database and
    rule: the pair's judges' and counted outside grades in one read (a UNION of the two
    queries tally_pairs runs), and its topic's counts stored by one INSERT … SELECT."""
    key = (connection.vendor, connection.alias, "locked", rule)
    if key not in _STATEMENTS:
        quote = connection.ops.quote_name
        judges = _compiled(
            Assignment.objects.filter(pair_id=_SENTINEL)
            .order_by()
            .annotate(tally_status=F("status"), tally_grade=F("judgment__grade"))
            .values_list("tally_status", "tally_grade")
        )
        outside = _compiled(
            ExternalGrade.objects.filter(adjudicating_grades(), pair_id=_SENTINEL)
            .order_by()
            .annotate(tally_grade=F("grade"), tally_kind=F("judge__kind"))
            .values_list("tally_grade", "tally_kind")
        )
        # Outside grades come with no status (every judge's row has one).
        read = (
            f"SELECT j.{quote('tally_status')}, j.{quote('tally_grade')}, NULL FROM "
            f"({judges[0]}) j UNION ALL SELECT NULL, o.{quote('tally_grade')}, "
            f"o.{quote('tally_kind')} FROM ({outside[0]}) o",
            judges[1] + outside[1],
            [judges[2], len(judges[1]) + outside[2]],
        )
        update = _pair_statements()[3]
        (counts_sql, counts_params, at), _, _ = _statements(rule)
        table = quote(TopicTally._meta.db_table)
        columns = ["topic_id", "campaign_id", *TOPIC_FIELDS]
        # Stored only while the campaign's rule is still the one these counts apply (read
        # afresh by this statement, after the topic's lock): a rule changed meanwhile leaves
        # nothing written, and the topic is recounted under the rule it has now.
        store = (
            f"INSERT INTO {table} ({', '.join(quote(c) for c in columns)}) SELECT %s, %s, "
            + ", ".join(f"COALESCE(x.{quote(f)}, 0)" for f in TOPIC_FIELDS)
            + f" FROM ({counts_sql}) x WHERE (SELECT c.{quote('adjudication_rule')} FROM "
            f"{quote(Campaign._meta.db_table)} c WHERE c.{quote('id')} = %s) = %s "
            f"ON CONFLICT ({quote('topic_id')}) DO UPDATE SET "
            + ", ".join(f"{quote(f)} = EXCLUDED.{quote(f)}" for f in TOPIC_FIELDS)
        )
        _STATEMENTS[key] = (read, update, (store, counts_params, at))
    return _STATEMENTS[key]


def tally_locked_pair(*, pair_id: int, topic_id: int, campaign_id: int, rule: str) -> None:
    """tally_pairs and count_topics of one pair whose row and whose topic's row the caller
    locked in this transaction (a grade, a skip, an undo: services.judging), in three
    statements: read its judges' and counted outside grades, store its tally, count its
    topic's pairs and store them. ``rule`` is the campaign's adjudication rule as the caller
    read it; if it changed since, the topic is recounted as count_topics does."""
    (read, read_params, places), update, (store, counts_params, at) = _locked_pair_statements(rule)
    params = list(read_params)
    for place in places:
        params[place] = pair_id
    counts = list(counts_params)
    counts[at] = topic_id
    with prepared_cursor() as cursor:
        cursor.execute(read, params)
        judges, outside = [], []
        for status, grade, kind in cursor.fetchall():
            if status is None:
                outside.append((pair_id, grade, kind))
            else:
                judges.append((status, grade))
        tally = _tallies({pair_id: judges}, outside)[pair_id]
        cursor.execute(update, [*tally, pair_id])
        cursor.execute(store, [topic_id, campaign_id, *counts, campaign_id, rule])
        stored = cursor.rowcount
    if not stored:  # the rule changed, or the topic has no pairs (then zeros are stored)
        _count_one(topic_id)


def _statements(rule: str) -> tuple:
    key = (connection.vendor, connection.alias, rule)
    if key not in _STATEMENTS:
        counts = (
            Pair.objects.filter(topic_id=_SENTINEL)
            .annotate(lead_decided=lead_decided())
            .order_by()
            .values("topic_id")
            .annotate(**_topic_counts(rule))
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
            .annotate(**_topic_counts(rules[campaign_id]))
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
