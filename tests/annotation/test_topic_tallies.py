"""The stored tallies (each pair's, each topic's, each judge's) always equal a recount, and
the topics' counts equal every pair's full state, after any sequence of what judges, leads
and the app do to a campaign: grades, skips, undos, decisions, gold grades, rule changes,
judges added and removed, work moved, pairs added (a hypothesis state machine)."""

import itertools

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from annotation import services
from annotation.models import AdjudicationRule, Assignment, AssignmentStatus, Pair, Topic
from annotation.services import adjudication as adj
from tests.annotation.test_tallies import assert_tallies_current

pytestmark = pytest.mark.django_db

GRADES = st.integers(0, 3)
# Every example's users stay in the test's transaction: names unique across examples.
SERIAL = itertools.count()
PICK = st.integers(0, 10**6)


class CampaignMachine(RuleBasedStateMachine):
    """One campaign of three topics, overlap 2, three judges to begin with."""

    def user(self, prefix: str):
        from django.contrib.auth import get_user_model

        return get_user_model().objects.create_user(f"{prefix}{next(SERIAL)}")

    @initialize()
    def campaign(self):
        self.lead = self.user("lead")
        self.judges = [self.user("judge") for _ in range(3)]
        self.c = services.create_campaign(
            lead=self.lead, name="Machine", overlap=2, judges=self.judges, relevance_threshold=2
        )
        for qid in "123":
            Topic.objects.create(campaign=self.c, qid=qid, query=f"query {qid}")
        services.add_pairs(
            campaign=self.c,
            pairs=[(q, f"d{i}") for q in "12" for i in range(4)],
            source="imported",
        )
        self.docs = 4

    def pick(self, queryset, n: int):
        rows = list(queryset.order_by("pk"))
        return rows[n % len(rows)] if rows else None

    def assignments(self, *statuses):
        return Assignment.objects.filter(pair__campaign=self.c, status__in=statuses)

    @rule(n=PICK, grade=GRADES)
    def grade(self, n, grade):
        a = self.pick(self.assignments("open", "done", "skipped").select_related("judge"), n)
        if a is not None:
            services.record_judgment(assignment_id=a.pk, judge=a.judge, grade=grade)

    @rule(n=PICK)
    def skip(self, n):
        a = self.pick(self.assignments("open", "done").select_related("judge"), n)
        if a is not None:
            services.skip_assignment(assignment_id=a.pk, judge=a.judge, reason="unreadable")

    @rule(n=PICK)
    def undo(self, n):
        a = self.pick(self.assignments("done", "skipped").select_related("judge"), n)
        if a is not None:
            services.undo_judgment(assignment_id=a.pk, judge=a.judge)

    @rule(n=PICK, grade=GRADES)
    def decide(self, n, grade):
        pair = self.pick(Pair.objects.filter(campaign=self.c), n)
        current = pair.decisions.filter(superseded_by__isnull=True).first()
        adj.decide_pair(
            campaign=self.c,
            pair_id=pair.pk,
            lead=self.lead,
            grade=grade,
            reason="read it",
            based_on=current.pk if current else None,
        )

    @rule(n=PICK, grade=st.one_of(st.none(), GRADES))
    def gold(self, n, grade):
        pair = self.pick(Pair.objects.filter(campaign=self.c), n)
        services.mark_gold(campaign=self.c, pair_id=pair.pk, grade=grade)

    @rule(choice=st.sampled_from(list(AdjudicationRule)))
    def change_rule(self, choice):
        self.c = services.update_campaign(campaign=self.c, adjudication_rule=choice).campaign

    @rule()
    def add_judge(self):
        judge = self.user("judge")
        self.judges.append(judge)
        services.add_judge(campaign=self.c, judge=judge)

    @rule(n=PICK)
    def remove_judge(self, n):
        if len(self.judges) > 1:
            judge = self.judges.pop(n % len(self.judges))
            services.remove_judge(campaign=self.c, judge=judge)

    @rule(n=PICK, m=PICK)
    def move_work(self, n, m):
        if len(self.judges) > 1:
            giver = self.judges[n % len(self.judges)]
            others = [j for j in self.judges if j != giver]
            services.reassign(campaign=self.c, from_judge=giver, to_judge=others[m % len(others)])

    @rule(qid=st.sampled_from("123"), k=st.integers(1, 3))
    def add_pairs(self, qid, k):
        pairs = [(qid, f"d{self.docs + i}") for i in range(k)]
        self.docs += k
        services.add_pairs(campaign=self.c, pairs=pairs, source="imported")

    @invariant()
    def tallies_equal_a_recount(self):
        if hasattr(self, "c"):
            self.c.refresh_from_db()
            assert_tallies_current(self.c)
            # The queue counts the topics' tallies give equal the queue's own length.
            for undecided_only in (False, True):
                assert adj.disputed_count(campaign=self.c, undecided_only=undecided_only) == (
                    adj.disputed_pairs(campaign=self.c, undecided_only=undecided_only).count()
                )
            assert not self.assignments(AssignmentStatus.OPEN).filter(judge=self.lead).exists()


def test_stored_tallies_equal_recounts_after_any_sequence_of_changes():
    CampaignMachine.TestCase.settings = settings(
        max_examples=12,
        stateful_step_count=12,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    CampaignMachine.TestCase().runTest()


def test_a_grade_after_the_rule_changed_shifts_its_topic_under_the_new_one(
    django_user_model,
):
    # A grade shifts its topic's counts by its pair's change under the campaign's rule as it
    # reads it after the topic's lock (the statement that stores the pair's tally): a rule
    # changed before (the change recounts the topics in its transaction) is the one the
    # counts and the shift are under, whatever rule the grade's caller read.
    from annotation.models import Campaign, Judgment, TopicTally
    from annotation.services.tallies import tally_locked_pair

    lead = django_user_model.objects.create_user("lead")
    judges = [django_user_model.objects.create_user(name) for name in ("ann", "bob")]
    c = services.create_campaign(lead=lead, name="Rule", overlap=2, judges=judges)
    Topic.objects.create(campaign=c, qid="1", query="query 1")
    services.add_pairs(campaign=c, pairs=[("1", "d0")], source="imported")
    for judge, grade in zip(judges, (1, 2), strict=True):
        mine = Assignment.objects.get(judge=judge)
        services.record_judgment(assignment_id=mine.pk, judge=judge, grade=grade)
    pair = Pair.objects.get()
    # Two grades tied: the majority leaves the pair to the lead, the median settles it.
    assert TopicTally.objects.get().queue == 1
    services.update_campaign(campaign=c, adjudication_rule=AdjudicationRule.MEDIAN)
    assert (TopicTally.objects.get().queue, TopicTally.objects.get().by_rule) == (0, 1)
    # bob's grade changes from 2 to 0: still tied, still settled by the median.
    bobs = Assignment.objects.get(judge=judges[1])
    Judgment.objects.filter(assignment=bobs).update(grade=0)

    tally_locked_pair(pair_id=pair.pk, topic_id=pair.topic_id)

    assert (TopicTally.objects.get().queue, TopicTally.objects.get().by_rule) == (0, 1)
    assert_tallies_current(Campaign.objects.get(pk=c.pk))


# Tallies a pair can have (tallies.FIELDS order): no judges; open; skipped; graded by one,
# some open; complete with agreeing, split and tied grades; a machine among the graders;
# a machine's grade alone.
def _reachable_tallies():
    for assigned, open_, graded, machines in (
        (0, 0, 0, 0),
        (1, 1, 0, 0),
        (1, 0, 0, 0),
        (2, 1, 1, 0),
        (1, 0, 1, 0),
        (2, 0, 2, 0),
        (3, 0, 3, 1),
        (1, 0, 1, 1),
        (2, 1, 2, 1),
    ):
        grades = [(None, None, False)] if not graded else [(1, 1, False)]
        if graded > 1:
            grades += [(0, 2, False), (0, 2, True)]
        for lowest, highest, tied in grades:
            yield (assigned, open_, graded, lowest, highest, tied, machines)


@pytest.mark.parametrize("rule", list(AdjudicationRule))
def test_a_pairs_share_of_its_topics_counts_is_what_a_recount_counts_of_it(django_user_model, rule):
    # A grade shifts its topic's counts by topic_share (Python); a recount counts them with
    # topic_counts (SQL). On every kind of pair (its tally, a gold grade, a current lead
    # decision, a superseded one) the two must agree, or the shifted counts drift.
    from annotation.models import LeadDecision
    from annotation.services.tallies import FIELDS
    from annotation.services.topic_counts import (
        TOPIC_FIELDS,
        lead_decided,
        topic_counts,
        topic_share,
    )

    lead = django_user_model.objects.create_user("lead")
    c = services.create_campaign(lead=lead, name="Shares", overlap=1, judges=[])
    Topic.objects.create(campaign=c, qid="1", query="query 1")
    kinds = list(
        itertools.product(_reachable_tallies(), (None, 2), ("none", "current", "superseded"))
    )
    services.add_pairs(
        campaign=c, pairs=[("1", f"d{i:03d}") for i in range(len(kinds))], source="imported"
    )
    pairs = list(Pair.objects.filter(campaign=c).order_by("document__docno"))
    expected = {}
    for pair, (tally, gold, decided) in zip(pairs, kinds, strict=True):
        Pair.objects.filter(pk=pair.pk).update(
            gold_grade=gold, **dict(zip(FIELDS, tally, strict=True))
        )
        if decided != "none":
            first = LeadDecision.objects.create(pair=pair, grade=1, reason="first")
        if decided == "superseded":
            LeadDecision.objects.create(pair=pair, grade=2, reason="again", supersedes=first)
        share = topic_share(tally, gold_grade=gold, lead=decided != "none", rule=rule)
        expected[pair.pk] = dict(zip(TOPIC_FIELDS, share, strict=True))

    counted = {
        row.pop("pk"): {field: row[field] or 0 for field in TOPIC_FIELDS}
        for row in Pair.objects.filter(campaign=c)
        .annotate(lead_decided=lead_decided())
        .order_by()
        .values("pk")
        .annotate(**topic_counts(rule))
    }

    differing = {
        kinds[pairs.index(next(p for p in pairs if p.pk == pk))]: (expected[pk], counted[pk])
        for pk in expected
        if expected[pk] != counted[pk]
    }
    assert not differing, (
        "topic_share and topic_counts disagree on these pairs (tally, gold, lead decision): "
        f"{differing}; make topic_share count what topic_counts' filters count"
    )
