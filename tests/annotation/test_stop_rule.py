"""The stop rule (issue 13 part 4, services.stopping): evaluated where the live board is
refreshed, it pauses handing out pairs once the ranking is settled, says so, and the lead
resumes."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation import tasks
from annotation.models import Assignment, Campaign, LiveBoardSnapshot, StopRule
from annotation.services import live, stopping
from tests.annotation.live_data import grade, live_world
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


def made_world():
    return live_world(get_user_model())


world_made = made_once(made_world)


@pytest.fixture
def world(world_copy):
    """live_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def choose(campaign, rule=StopRule.ADJACENT, confidence=0.95, top=3):
    chosen = stopping.read_stop_settings(rule=rule, confidence=confidence, top=top)
    return stopping.set_stop_rule(campaign=campaign, settings=chosen, by=campaign.lead)


def refresh(campaign):
    live.refresh_live_board(campaign=campaign, measure=stopping.STOP_MEASURE)
    campaign.refresh_from_db()
    return campaign


def grade_until_paused(campaign):
    """Grade one pair at a time and refresh the board (as the background does) until the
    rule pauses judging; how many grades that took."""
    spent = 0
    while grade(campaign, limit=1):
        spent += 1
        if refresh(campaign).paused_at is not None:
            return spent
    return spent


def test_the_adjacent_rule_pauses_judging_once_the_pair_is_settled_and_says_when(world):
    campaign, *_ = world
    campaign = choose(campaign)
    assert stopping.rule_armed(campaign)
    pairs = campaign.pairs.count()
    spent = grade_until_paused(campaign)
    assert campaign.paused_at is not None
    assert 0 < spent < pairs, "the rule should stop judging before the whole pool is graded"
    event = campaign.stop_event
    assert event["rule"] == "adjacent" and event["confidence"] == 0.95
    assert event["spent"] == spent and event["undecided"] == pairs - spent
    assert event["described"] == "every pair of adjacent runs settled at 95% (nDCG@10)"
    # Once paused, another refresh changes nothing (the rule is not armed any more).
    when = campaign.paused_at
    grade(campaign, limit=1)
    assert refresh(campaign).paused_at == when and campaign.stop_event["spent"] == spent


def test_without_a_rule_judging_never_pauses(world):
    campaign, *_ = world
    assert campaign.stop_rule == StopRule.NONE
    grade(campaign, limit=campaign.pairs.count() - 1)
    assert refresh(campaign).paused_at is None and campaign.stop_event == {}


def test_a_grade_never_evaluates_the_rule(world):
    campaign, *_ = world
    campaign = choose(campaign, confidence=0.51)
    grade(campaign, limit=campaign.pairs.count() - 1)  # records grades through the service
    campaign.refresh_from_db()
    assert campaign.paused_at is None
    assert not LiveBoardSnapshot.objects.filter(campaign=campaign).exists()


def test_the_background_refresh_after_grades_checks_the_rule(world, settings):
    campaign, *_ = world
    campaign = choose(campaign, confidence=0.51)
    grade(campaign, limit=campaign.pairs.count() - 1)
    assert live.refresh_for_stop_rule(campaign=campaign) is True
    campaign.refresh_from_db()
    assert campaign.paused_at is not None
    # The agreement task (queued by every burst of grades) runs it; paused, nothing to do.
    assert live.refresh_for_stop_rule(campaign=campaign) is False
    tasks.refresh_agreement_task.call(campaign_id=campaign.pk)


def test_the_background_refresh_skips_campaigns_without_a_rule(world):
    campaign, *_ = world
    grade(campaign, limit=3)
    assert live.refresh_for_stop_rule(campaign=campaign) is False
    assert not LiveBoardSnapshot.objects.filter(campaign=campaign).exists()


def test_resume_hands_out_pairs_again_and_the_rule_stays_quiet_until_set_again(world):
    campaign, lead, *_ = world
    campaign = choose(campaign, confidence=0.51)
    grade_until_paused(campaign)
    campaign, resumed = stopping.resume_judging(campaign=campaign, by=lead)
    assert resumed and campaign.paused_at is None
    assert campaign.stop_event["resumed_by"] == "lead" and campaign.stop_event["spent"] > 0
    assert not stopping.rule_armed(campaign)
    grade(campaign, limit=1)
    assert refresh(campaign).paused_at is None
    # The repeat is a no-op.
    assert stopping.resume_judging(campaign=campaign, by=lead)[1] is False
    # Setting a rule again arms it afresh.
    campaign = choose(campaign, confidence=0.51)
    assert stopping.rule_armed(campaign) and campaign.stop_event == {}
    if grade(campaign, limit=1):
        assert refresh(campaign).paused_at is not None


def test_choosing_no_rule_lifts_a_pause(world):
    campaign, *_ = world
    campaign = choose(campaign, confidence=0.51)
    grade_until_paused(campaign)
    campaign = choose(campaign, rule=StopRule.NONE)
    assert campaign.paused_at is None and campaign.stop_event["resumed_by"] == "lead"


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"rule": "sometime"}, "rule"),
        ({"confidence": "0.5"}, "confidence"),
        ({"confidence": "1"}, "confidence"),
        ({"confidence": "nine"}, "confidence"),
        ({"top": "0"}, "top"),
        ({"top": "2.5"}, "top"),
        ({"top": "1001"}, "top"),  # issue 27: 40,000 overflowed the column on PostgreSQL
        ({"top": "1e300"}, "top"),
    ],
)
def test_bad_choices_are_refused_naming_the_field(given, field):
    values = {"rule": "top", "confidence": "0.95", "top": "3", **given}
    with pytest.raises(ValidationError) as refused:
        stopping.read_stop_settings(**values)
    assert list(refused.value.message_dict) == [field]


# --- pages -----------------------------------------------------------------------------------


def test_the_largest_k_is_accepted_and_one_more_is_refused_with_the_range():
    assert stopping.read_stop_settings(rule="top", confidence=0.95, top=1000).top == 1000
    with pytest.raises(ValidationError) as refused:
        stopping.read_stop_settings(rule="top", confidence=0.95, top=40_000)
    assert refused.value.message_dict == {
        "top": ["k must be a whole number from 1 to 1,000, got 40000."]
    }


def test_the_lead_sets_the_rule_from_the_live_board(client, world):
    campaign, lead, *_ = world
    client.force_login(lead)
    url = reverse("annotation:stop-rule", args=[campaign.pk])
    response = client.post(url, {"rule": "top", "confidence": "0.9", "top": "1"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotation:live-board", args=[campaign.pk])
    assert "Stop rule: the top 1 run settled at 90% (nDCG@10)." in response.text
    campaign.refresh_from_db()
    assert (campaign.stop_rule, campaign.stop_confidence, campaign.stop_top) == ("top", 0.9, 1)
    response = client.post(url, {"rule": "top", "confidence": "2", "top": "1", "back": "campaign"})
    assert response.url == campaign.get_absolute_url()
    page = client.get(response.url).text
    assert "Stop rule not saved: The confidence must be a number above 0.5" in page
    assert "The top 1 run settled at 90% (nDCG@10)" in page
    assert client.get(url).status_code == 405


def test_judges_and_other_leads_cannot_touch_the_rule(client, world, django_user_model):
    from tests.annotation.live_data import person

    campaign, _, judges, _ = world
    for user in (judges[0], person(django_user_model, "other", "lead")):
        client.force_login(user)
        for name in ("stop-rule", "resume"):
            url = reverse(f"annotation:{name}", args=[campaign.pk])
            assert (
                client.post(url, {"rule": "none", "confidence": "0.95", "top": "3"}).status_code
                == 404
            )
    campaign.refresh_from_db()
    assert campaign.stop_rule == StopRule.NONE


def test_the_pause_is_on_the_campaign_page_and_the_live_board_and_the_lead_resumes(client, world):
    campaign, lead, *_ = world
    campaign = choose(campaign, confidence=0.51)
    client.force_login(lead)
    armed = client.get(campaign.get_absolute_url()).text
    assert 'data-testid="stop-armed"' in armed
    spent = grade_until_paused(campaign)
    for url in (campaign.get_absolute_url(), reverse("annotation:live-board", args=[campaign.pk])):
        page = client.get(url).text
        assert "Judging is paused: the ranking is settled." in page
        assert f'data-testid="stop-spent">{spent}<' in page
        assert "every pair of adjacent runs settled at 51% (nDCG@10)" in page
    response = client.post(
        reverse("annotation:resume", args=[campaign.pk]), {"back": "campaign"}, follow=True
    )
    assert "Judging resumed" in response.text and 'data-testid="stop-resumed"' in response.text
    assert Campaign.objects.get(pk=campaign.pk).paused_at is None
    again = client.post(reverse("annotation:resume", args=[campaign.pk]), follow=True)
    assert stopping.MESSAGES["not_paused"] in again.text


def test_a_judge_finishing_their_pair_is_told_the_campaign_has_paused(client, world):
    campaign, _, judges, _ = world
    judge = judges[0]
    client.force_login(judge)
    first = Assignment.objects.filter(judge=judge, status="open").order_by("pk").first()
    page = client.get(reverse("annotation:judge", args=[campaign.pk]))
    assert page.context["config"]["paused"] is False
    assert "data-paused" not in page.text.split('id="paused-template"')[0]
    Campaign.objects.filter(pk=campaign.pk).update(paused_at="2026-11-26T12:00:00Z")
    # The grade of the pair on screen is taken, and its answer says the campaign paused.
    url = reverse("annotation:judge-grade", args=[campaign.pk, first.pk])
    answer = client.post(url, {"grade": "3"})
    assert answer.status_code == 200 and answer.json()["paused"] is True
    page = client.get(reverse("annotation:judge", args=[campaign.pk]))
    assert page.status_code == 200 and page.context["config"]["paused"] is True
    body = page.text.split('id="paused-template"')[0]
    assert "This campaign has paused: the ranking is settled" in body
    assert "data-assignment=" not in body  # no open pair is shown
    # judge.js swaps the template's card in for an open pair once a grade's answer says so.
    template = page.text.split('id="paused-template"')[1].split("</template>")[0]
    assert 'data-part="topic"' in template and "data-paused" in template


# --- API ---------------------------------------------------------------------------------------


def test_the_api_sets_reads_and_resumes_the_rule(client, world):
    campaign, lead, *_ = world
    client.force_login(lead)
    url = f"/api/v1/campaigns/{campaign.pk}/stop-rule/"
    body = client.get(url).json()
    assert body["rule"] == "none" and body["paused"] is False and body["event"] == {}
    answer = client.put(
        url, {"rule": "adjacent", "confidence": 0.51}, content_type="application/json"
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["described"] == "every pair of adjacent runs settled at 51% (nDCG@10)"
    assert answer.json()["top"] == 3 and answer.json()["measure"] == "ndcg_cut_10"
    refused = client.put(url, {"rule": "top", "confidence": 1.5}, content_type="application/json")
    assert refused.status_code == 400 and "confidence" in refused.json()
    assert "above 0.5 and below 1" in refused.json()["confidence"][0]
    assert client.put(url, {"rule": "soon"}, content_type="application/json").status_code == 400
    spent = grade_until_paused(Campaign.objects.get(pk=campaign.pk))
    body = client.get(url).json()
    assert body["paused"] is True and body["event"]["spent"] == spent
    assert body["event"]["rule"] == "adjacent" and body["event"]["at"]
    live_body = client.get(f"/api/v1/campaigns/{campaign.pk}/live/").json()
    assert live_body["stop_rule"]["paused"] is True
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/").json()["paused_at"]
    resumed = client.post(f"/api/v1/campaigns/{campaign.pk}/resume/").json()
    assert resumed["paused"] is False and resumed["event"]["resumed_by"] == "lead"
    assert client.post(f"/api/v1/campaigns/{campaign.pk}/resume/").status_code == 200


def test_the_api_keeps_the_rule_from_judges(client, world):
    campaign, _, judges, _ = world
    client.force_login(judges[0])
    url = f"/api/v1/campaigns/{campaign.pk}/stop-rule/"
    assert client.get(url).status_code == 404
    assert client.put(url, {"rule": "none"}, content_type="application/json").status_code == 404
    assert client.post(f"/api/v1/campaigns/{campaign.pk}/resume/").status_code == 404
