"""The run diff's "send to judging" (evaluation/views_diff.run_diff_send): the unjudged
documents of both runs' top k go to a campaign's pool; only the campaign's lead may send."""

import pytest

from annotation import services as annotation
from annotation.models import Pair, Topic
from tests.evaluation.dashboard_data import small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

SEND = "/evaluation/diff/send/"


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


@pytest.fixture
def campaign(world, django_user_model):
    lead = user(django_user_model, "lea", "lead", "engineer")
    campaign = annotation.create_campaign(lead=lead, name="Pool them", judges=[])
    for qid in ("1", "3"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    return campaign


def form(campaign, qrels, a, b, **extra):
    return {"campaign": campaign.pk, "qrels": qrels.pk, "a": a.pk, "b": b.pk, "k": 10, **extra}


def test_a_lead_sends_the_unjudged_of_both_top_k_of_one_topic(client, world, campaign):
    qrels, bm25, dense = world
    client.force_login(campaign.lead)
    page = f"/evaluation/diff/?qrels={qrels.pk}&a={bm25.pk}&b={dense.pk}&qid=3"
    assert 'data-testid="diff-send"' in client.get(page).content.decode()

    response = client.post(
        SEND, form(campaign, qrels, bm25, dense, qid="3", next=page), follow=True
    )

    assert response.redirect_chain[-1][0] == page
    assert "Sent 4 unjudged pairs to Pool them: 4 new in its pool" in response.content.decode()
    pairs = set(Pair.objects.filter(campaign=campaign).values_list("topic__qid", "document__docno"))
    assert pairs == {("3", "u8"), ("3", "u10"), ("3", "u11"), ("3", "u12")}


def test_every_topic_is_sent_and_missing_topics_are_named(client, world, campaign):
    qrels, bm25, dense = world
    client.force_login(campaign.lead)

    response = client.post(SEND, form(campaign, qrels, bm25, dense, qid=""), follow=True)

    html = response.content.decode()
    # topic 1: u5; topic 3: u8, u10-u12; topic 2 (u6) is not in the campaign.
    assert "Sent 5 unjudged pairs" in html
    assert "1 pair left out: Pool them has no topic 2." in html
    again = client.post(SEND, form(campaign, qrels, bm25, dense, qid=""), follow=True)
    assert "0 new in its pool, 5 already there" in again.content.decode()


def test_nothing_unjudged_is_said(client, world, campaign):
    qrels, bm25, dense = world
    client.force_login(campaign.lead)

    response = client.post(SEND, form(campaign, qrels, bm25, dense, qid="1", k=1), follow=True)

    assert "Every document in the top 1 is judged" in response.content.decode()


def test_only_the_campaigns_lead_sends(client, django_user_model, world, campaign):
    qrels, bm25, dense = world
    for name, roles in (("eng", ("engineer",)), ("other", ("lead",)), ("ann", ("judge",))):
        client.force_login(user(django_user_model, name, *roles))
        assert client.post(SEND, form(campaign, qrels, bm25, dense, qid="3")).status_code == 404
    assert not Pair.objects.exists()


def test_the_action_is_post_only_and_redirects_only_to_this_site(client, world, campaign):
    qrels, bm25, dense = world
    client.force_login(campaign.lead)

    assert client.get(SEND).status_code == 405
    response = client.post(
        SEND, form(campaign, qrels, bm25, dense, qid="3", next="https://evil.example/")
    )
    assert response["Location"] == "/evaluation/diff/"


def test_a_bad_k_or_run_is_refused(client, world, campaign):
    qrels, bm25, dense = world
    client.force_login(campaign.lead)

    bad_k = client.post(SEND, form(campaign, qrels, bm25, dense, k="x"), follow=True)
    unknown_run = client.post(SEND, {**form(campaign, qrels, bm25, dense), "b": 999999})

    assert "k is a whole number from 1 to 1000." in bad_k.content.decode()
    assert unknown_run.status_code == 404
