"""What decides a pair, as SQL over its tally, and what a pair adds to its topic's counts.

The conditions annotation.services.final_grades._settle applies to a PairState, written over
the pair's tally (Pair.judges_assigned … machines_graded, annotation/services/tallies.py) and
its current lead decision, so pages and TopicTally count and filter pairs in the database
(:func:`topic_counts`, aggregates over a topic's pairs). :func:`topic_share` is the same
counts for one pair in Python: a grade shifts its topic's counts by the share its pair had
before and has after (tallies.tally_locked_pair), instead of counting the topic's pairs
again; a test holds the two together on every kind of pair.
"""

from __future__ import annotations

from django.db.models import Count, Exists, F, OuterRef, Q, Sum

from annotation.models import AdjudicationRule, LeadDecision


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


def topic_counts(rule: str) -> dict:
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


def topic_share(tally: tuple, *, gold_grade: int | None, lead: bool, rule: str) -> tuple:
    """What one pair adds to each of its topic's counts (TOPIC_FIELDS order), as
    :func:`topic_counts` counts it: ``tally`` in tallies.FIELDS order, ``gold_grade`` the
    pair's, ``lead`` whether it has a current lead decision, ``rule`` its campaign's."""
    assigned, open_, graded, lowest, highest, tied, machines = tally
    done = open_ == 0 and graded > machines  # complete()
    same = lowest is not None and lowest == highest  # unanimous(): NULLs compare unknown
    split = lowest is not None and highest is not None and highest > lowest  # disputed()
    if rule == AdjudicationRule.MEDIAN:
        settled = done
    elif rule == AdjudicationRule.MAJORITY:
        settled = done and (same or not tied)
    else:
        settled = done and same
    undecided_by = not lead and gold_grade is None
    return (
        1,
        int(graded > 0),
        assigned,
        open_,
        graded,
        int(split),
        int(open_ > 0),
        int(split and open_ == 0 and undecided_by and not settled),
        int(bool(lead)),
        int(not lead and gold_grade is not None),
        int(undecided_by and done and same),
        int(undecided_by and rule != AdjudicationRule.LEAD and settled and not same),
    )
