"""Marking one pool pair as a gold pair (or unmarking it) from the pool page
(annotation/views/pool.py pool_gold), through the Django test client."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.models import Assignment, Pair
from tests.annotation.test_agreement_views import text_of, user_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(setup):
    campaign, lead, _ = setup
    from django.contrib.auth.models import Group

    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    return campaign


def client_for(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def gold_url(campaign) -> str:
    return reverse("annotation:pool-gold", args=[campaign.pk])


def gold_of(campaign, qid, docno):
    return Pair.objects.get(campaign=campaign, topic__qid=qid, document__docno=docno).gold_grade


def test_the_pool_page_has_the_gold_form_with_the_scale(campaign):
    page = client_for(campaign.lead).get(reverse("annotation:pool-detail", args=[campaign.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert f'action="{gold_url(campaign)}"' in html
    assert "csrfmiddlewaretoken" in html
    assert "3 · Perfectly relevant" in html and "Not gold (an ordinary pair)" in html


def test_a_lead_marks_a_pool_pair_gold_then_unmarks_it(campaign):
    client = client_for(campaign.lead)
    response = client.post(gold_url(campaign), {"qid": "1", "docno": "d1", "grade": "2"})
    assert response.status_code == 302
    assert gold_of(campaign, "1", "d1") == 2
    page = text_of(client.get(response["Location"]).content.decode())
    assert "1 × d1 is a gold pair with grade 2: every judge gets it, unmarked" in page

    response = client.post(gold_url(campaign), {"qid": "1", "docno": "d1", "grade": ""})
    assert response.status_code == 302
    assert gold_of(campaign, "1", "d1") is None
    page = text_of(client.get(response["Location"]).content.decode())
    assert "1 × d1 is an ordinary pair again; its judges&#x27; grades stay." in page

    response = client.post(
        gold_url(campaign), {"qid": "1", "docno": "d1", "grade": ""}, follow=True
    )
    assert "1 × d1 was not a gold pair; nothing changed." in text_of(response.content.decode())


def test_a_gold_pair_goes_to_every_judge(setup, django_user_model):
    campaign, lead, _ = setup
    from django.contrib.auth.models import Group

    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    services.update_campaign(campaign=campaign, overlap=1)
    newcomer = django_user_model.objects.create_user("new")
    services.add_judge(campaign=campaign, judge=newcomer)
    pair = Pair.objects.get(campaign=campaign, topic__qid="2", document__docno="d2")
    before = Assignment.objects.filter(pair=pair).count()
    client_for(lead).post(gold_url(campaign), {"qid": "2", "docno": "d2", "grade": "3"})
    assert Assignment.objects.filter(pair=pair).count() == 4 > before


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"qid": "1", "docno": "nope", "grade": "1"},
            "The pool has no pair 1 × nope: add it first",
        ),
        ({"qid": "1", "docno": "d1", "grade": "9"}, "Select a valid choice. 9 is not one"),
        ({"qid": "", "docno": "d1", "grade": "1"}, "This field is required."),
    ],
)
def test_bad_input_is_a_400_that_says_why_and_changes_nothing(campaign, data, message):
    response = client_for(campaign.lead).post(gold_url(campaign), data)
    assert response.status_code == 400
    assert message in text_of(response.content.decode())
    assert not Pair.objects.filter(campaign=campaign, gold_grade__isnull=False).exists()


def test_only_the_campaigns_lead_may_mark_gold(campaign, django_user_model):
    judge = campaign.judges.first()
    other_lead = user_with(django_user_model, "leo", "lead")
    data = {"qid": "1", "docno": "d1", "grade": "2"}
    assert client_for(judge).post(gold_url(campaign), data).status_code == 404
    assert client_for(other_lead).post(gold_url(campaign), data).status_code == 404
    anonymous = Client().post(gold_url(campaign), data)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert gold_of(campaign, "1", "d1") is None


def test_the_gold_form_is_post_only_and_needs_the_csrf_token(campaign):
    assert client_for(campaign.lead).get(gold_url(campaign)).status_code == 405
    strict = client_for(campaign.lead, enforce_csrf_checks=True)
    response = strict.post(gold_url(campaign), {"qid": "1", "docno": "d1", "grade": "2"})
    assert response.status_code == 403
    assert gold_of(campaign, "1", "d1") is None
