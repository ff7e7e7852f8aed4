"""Calibration (gold) pairs in judges' queues: spread at seeded random places among the
pairs still to do (annotation/assignment.py interleave, services.assign_pending), and
never marked on the judging page or in the judge's API."""

import json
from collections import Counter

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.test import APIClient

from annotation import services
from annotation.assignment import interleave
from annotation.models import Assignment, AssignmentStatus, Document, Pair, PairSource, Topic

# --- interleave (pure) ---------------------------------------------------------------------


@given(
    existing=st.lists(st.integers(0, 999), unique=True, max_size=30),
    new=st.lists(st.integers(1000, 1999), unique=True, max_size=10),
    seed=st.integers(),
)
def test_interleave_keeps_both_orders_and_every_item(existing, new, seed):
    merged = interleave(existing, new, seed=seed)
    assert sorted(merged) == sorted(existing + new)
    assert [x for x in merged if x < 1000] == existing
    assert [x for x in merged if x >= 1000] == new


def test_interleave_is_reproducible_for_a_seed_and_changes_with_it():
    existing, new = list(range(40)), ["g1", "g2", "g3"]
    assert interleave(existing, new, seed=(7, 1, 2)) == interleave(existing, new, seed=(7, 1, 2))
    orders = {tuple(interleave(existing, new, seed=seed)) for seed in range(20)}
    assert len(orders) > 1, "the seed should change where the new items go"


def test_interleave_puts_new_items_anywhere_not_only_at_the_end():
    # Over many seeds the first new item lands in every slot, the first one included.
    firsts = Counter(
        interleave(list(range(5)), ["new"], seed=seed).index("new") for seed in range(300)
    )
    assert set(firsts) == set(range(6))


# --- in a campaign -------------------------------------------------------------------------

pytestmark_db = pytest.mark.django_db
OPEN_PAIRS = 60  # per topic; 3 gold pairs all landing last has probability 1 / C(63, 3)


@pytest.fixture
def campaign(django_user_model):
    """Two judges who both hold every pair of one topic of 60 pairs (overlap 2), with a
    fixed seed; the pool comes first, gold pairs later, as when a lead imports them."""
    lead = django_user_model.objects.create_user("lead")
    judge_group, _ = Group.objects.get_or_create(name="judge")
    judges = []
    for name in ("judy", "otto"):
        judge = django_user_model.objects.create_user(name)
        judge.groups.add(judge_group)
        judges.append(judge)
    campaign = services.create_campaign(lead=lead, name="Parrots", overlap=2, judges=judges)
    campaign.seed = 2026
    campaign.save(update_fields=["seed"])
    Topic.objects.create(campaign=campaign, qid="1", query="parrots")
    services.add_pairs(
        campaign=campaign,
        pairs=[("1", f"d{i:02}") for i in range(OPEN_PAIRS)],
        source=PairSource.POOLED,
    )
    give_text(campaign)
    return campaign


def give_text(campaign):
    """Judges' queues hold only pairs whose document has text (pooling adds docnos bare)."""
    Document.objects.filter(campaign=campaign).update(text="A passage.")


def queue_docnos(campaign, judge) -> list[str]:
    ids = services.judge_queue(campaign=campaign, judge=judge)
    docno = dict(Assignment.objects.filter(pk__in=ids).values_list("pk", "pair__document__docno"))
    return [docno[pk] for pk in ids]


def add_gold(campaign):
    services.set_gold(campaign=campaign, entries=[("1", f"g{i}", i) for i in range(3)])
    give_text(campaign)


@pytestmark_db
def test_gold_pairs_imported_after_the_pool_are_not_all_at_the_end_of_any_queue(campaign):
    add_gold(campaign)
    for judge in campaign.judges.all():
        queue = queue_docnos(campaign, judge)
        assert len(queue) == OPEN_PAIRS + 3
        gold_at = sorted(i for i, docno in enumerate(queue) if docno.startswith("g"))
        assert gold_at != [OPEN_PAIRS, OPEN_PAIRS + 1, OPEN_PAIRS + 2], (
            f"{judge}'s gold pairs all come last: {gold_at}"
        )
        assert gold_at[0] < OPEN_PAIRS, f"{judge}: no gold pair among the open ones"


@pytestmark_db
def test_gold_goes_only_among_the_pairs_still_to_do_and_the_others_keep_their_order(campaign):
    judge = campaign.judges.get(username="judy")
    before = queue_docnos(campaign, judge)
    done = before[:10]
    for assignment in Assignment.objects.filter(judge=judge, pair__document__docno__in=done):
        services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=1)
    add_gold(campaign)
    after = queue_docnos(campaign, judge)
    assert after[:10] == done, "the graded pairs stay where they were"
    assert [d for d in after if not d.startswith("g")] == before, "the others keep their order"
    first_open = services.next_open_assignment(campaign=campaign, judge=judge)
    assert first_open.pair.document.docno == after[10]


@pytestmark_db
def test_the_gold_order_is_reproducible_for_the_campaign_seed(campaign):
    add_gold(campaign)
    judges = list(campaign.judges.order_by("username"))
    first = [queue_docnos(campaign, judge) for judge in judges]
    gold_pairs = Pair.objects.filter(campaign=campaign, gold_grade__isnull=False)

    Assignment.objects.filter(pair__in=gold_pairs).delete()
    services.assign_pending(campaign=campaign)
    assert [queue_docnos(campaign, judge) for judge in judges] == first

    campaign.seed = 7
    campaign.save(update_fields=["seed"])
    Assignment.objects.filter(pair__in=gold_pairs).delete()
    services.assign_pending(campaign=campaign)
    assert [queue_docnos(campaign, judge) for judge in judges] != first, (
        "another seed should put the gold pairs elsewhere"
    )


@pytestmark_db
def test_the_judging_page_and_the_judges_api_do_not_mark_gold_pairs(campaign):
    add_gold(campaign)
    judge = campaign.judges.get(username="judy")
    mine = Assignment.objects.filter(judge=judge).select_related("pair__document")
    gold = next(a for a in mine if a.pair.gold_grade is not None)
    plain = next(a for a in mine if a.pair.gold_grade is None)
    # Make a gold pair the one the page opens on.
    Assignment.objects.filter(judge=judge).exclude(pk=gold.pk).update(status=AssignmentStatus.DONE)

    client = Client()
    client.force_login(judge)
    page = client.get(reverse("annotation:judge", args=[campaign.pk])).content.decode()
    assert gold.pair.document.docno in page
    fragment = client.get(
        reverse("annotation:judge-pair", args=[campaign.pk, gold.pk])
    ).content.decode()
    for text in (page, fragment):
        assert "gold" not in text.lower() and "calibration" not in text.lower()

    api = APIClient()
    api.force_login(judge)
    listing = api.get("/api/v1/assignments/", {"page_size": 500})
    assert listing.status_code == 200
    body = json.dumps(listing.json()).lower()
    assert "gold" not in body and "calibration" not in body
    gold_detail = api.get(f"/api/v1/assignments/{gold.pk}/").json()
    plain_detail = api.get(f"/api/v1/assignments/{plain.pk}/").json()
    assert set(gold_detail) == set(plain_detail)
    assert "gold" not in json.dumps(gold_detail).lower()
