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


def test_a_grade_that_read_the_rule_before_it_changed_counts_its_topic_under_the_new_one(
    django_user_model,
):
    # A grade reads the campaign's rule with its pair's lock and stores its topic's counts
    # in one statement, which checks the rule again: if a lead changed it in between (the
    # change recounts the topics, but may commit before the grade's count), the topic is
    # recounted under the rule as it now stands.
    from annotation.models import Campaign, TopicTally
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
    Campaign.objects.filter(pk=c.pk).update(adjudication_rule=AdjudicationRule.MEDIAN)

    tally_locked_pair(
        pair_id=pair.pk, topic_id=pair.topic_id, campaign_id=c.pk, rule=AdjudicationRule.MAJORITY
    )

    assert (TopicTally.objects.get().queue, TopicTally.objects.get().by_rule) == (0, 1)
    assert_tallies_current(Campaign.objects.get(pk=c.pk))
