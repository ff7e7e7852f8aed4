# ruff: noqa: F811 (the fixtures imported from tests/api/conftest.py are the parameters below)
"""Post-editing with a control group in the product (annotation/services/suggestions.py):
the lead's settings and their lock, the suggestion on the judging page and in the API
(never on a judge's blind pairs), and the suggested-against-blind report on the agreement
page, in the API and on the command line, equal to the pure statistics."""

import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from annotation import services
from annotation.agreement.anchoring import Judged, anchoring, is_blind
from annotation.models import Assignment, MachineAnswer, MachineOutcome
from annotation.services import suggestions
from tests.api.conftest import api, make_user, world_made  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


def grade_everything_by_machine(world, grade=2):
    for pair in world.campaign.pairs.all():
        MachineAnswer.objects.create(
            machine=world.machine, pair=pair, outcome=MachineOutcome.GRADED, grade=grade
        )


def suggest(world, share=0.5):
    """Suggestions on, with the world's judgments set aside (the lock counts human grades)."""
    from annotation.models import Judgment

    Judgment.objects.filter(assignment__pair__campaign=world.campaign).delete()
    Assignment.objects.filter(pair__campaign=world.campaign).update(status="open")
    services.update_campaign(
        campaign=world.campaign, suggestions_from=world.machine.pk, blind_share=share
    )
    world.campaign.refresh_from_db()
    if 0 < share < 1:
        both_conditions(world)


def both_conditions(world):
    """A campaign seed under which every judge has suggested and blind pairs: the split
    hashes the seed with database ids, which differ between databases and runs, and the
    world's few pairs could otherwise fall on one side."""
    campaign = world.campaign
    assignments = list(Assignment.objects.filter(pair__campaign=campaign))
    judges = {a.judge_id for a in assignments}
    for seed in range(1000):
        sides = {
            (a.judge_id, is_blind(seed, a.judge_id, a.pair_id, campaign.blind_share))
            for a in assignments
        }
        if all((judge, side) in sides for judge in judges for side in (True, False)):
            campaign.seed = seed
            campaign.save(update_fields=["seed"])
            return
    raise AssertionError("no seed splits every judge's pairs both ways")


def split(world, judge):
    """The judge's assignments, as (shown the suggestion, blind)."""
    shown, blind = [], []
    for assignment in Assignment.objects.filter(pair__campaign=world.campaign, judge=judge):
        hidden = is_blind(
            world.campaign.seed, judge.pk, assignment.pair_id, world.campaign.blind_share
        )
        (blind if hidden else shown).append(assignment)
    return shown, blind


def test_the_lead_sets_suggestions_on_the_judgments_page(client, world):
    client.force_login(world.users["lead"])
    url = f"/campaigns/{world.campaign.pk}/judgments/"
    page = client.get(url)
    assert "Post-editing with a control group" in page.content.decode()
    from annotation.models import Judgment

    Judgment.objects.filter(assignment__pair__campaign=world.campaign).delete()
    answer = client.post(
        f"/campaigns/{world.campaign.pk}/judgments/settings/",
        {"suggestions_from": world.machine.pk, "blind_share": "0.3"},
    )
    assert answer.status_code == 302
    world.campaign.refresh_from_db()
    assert (world.campaign.suggestions_from_id, world.campaign.blind_share) == (
        world.machine.pk,
        0.3,
    )


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"suggestions_from": "999999", "blind_share": "0.2"}, "Select a valid choice"),
        ({"suggestions_from": "", "blind_share": "1.5"}, "less than or equal to 0.95"),
        ({"suggestions_from": "", "blind_share": "0"}, "greater than or equal to 0.05"),
        ({"suggestions_from": "", "blind_share": "nan"}, "Enter a number"),
    ],
)
def test_bad_settings_are_said_on_the_page(client, world, data, problem):
    client.force_login(world.users["lead"])
    answer = client.post(f"/campaigns/{world.campaign.pk}/judgments/settings/", data)
    assert answer.status_code == 400
    assert problem in answer.content.decode()
    world.campaign.refresh_from_db()
    assert world.campaign.suggestions_from_id is None


def test_the_settings_are_locked_once_humans_graded_with_them(client, api, world):
    suggest(world)
    shown, _ = split(world, world.users["judge"])
    services.record_judgment(
        assignment_id=(shown or split(world, world.users["judge"])[1])[0].pk,
        judge=world.users["judge"],
        grade=1,
    )
    client.force_login(world.users["lead"])
    answer = client.post(
        f"/campaigns/{world.campaign.pk}/judgments/settings/",
        {"suggestions_from": world.machine.pk, "blind_share": "0.4"},
    )
    assert answer.status_code == 400
    assert "would mix the suggested and blind groups" in answer.content.decode()
    patched = api(world.users["lead"]).patch(
        f"/api/v1/campaigns/{world.campaign.pk}/", {"suggestions_from": None}, format="json"
    )
    assert patched.status_code == 400
    assert "would mix" in json.dumps(patched.json())
    world.campaign.refresh_from_db()
    assert (world.campaign.suggestions_from_id, world.campaign.blind_share) == (
        world.machine.pk,
        0.5,
    )


def test_turning_suggestions_on_after_humans_graded_is_refused(world):
    # The world's judges have graded: their grades were made blind, whatever the hash says.
    with pytest.raises(ValidationError) as refused:
        services.update_campaign(campaign=world.campaign, suggestions_from=world.machine.pk)
    assert "would mix" in str(refused.value)


def test_the_api_takes_only_the_campaigns_own_machine(api, world):
    suggest(world)
    client = api(world.users["lead"])
    url = f"/api/v1/campaigns/{world.campaign.pk}/"
    assert client.get(url).json()["suggestions_from"] == world.machine.pk
    assert client.patch(url, {"suggestions_from": 0}, format="json").status_code == 400
    refused = client.patch(url, {"suggestions_from": 10**6}, format="json")
    assert refused.status_code == 400
    assert "machine judge of this campaign" in json.dumps(refused.json())
    too_big = client.patch(url, {"suggestions_from": 10**30}, format="json")
    assert too_big.status_code == 400
    assert client.patch(url, {"blind_share": 2}, format="json").status_code == 400


def test_judges_see_the_suggestion_only_on_their_pairs_that_are_not_blind(client, api, world):
    grade_everything_by_machine(world, grade=3)
    suggest(world, share=0.5)
    judge = world.users["judge"]
    shown, blind = split(world, judge)
    assert shown or blind
    client.force_login(judge)
    for assignment in shown:
        fragment = client.get(f"/campaigns/{world.campaign.pk}/judge/{assignment.pk}/").content
        assert b"Machine suggests" in fragment
        detail = api(judge).get(f"/api/v1/assignments/{assignment.pk}/").json()
        assert detail["suggestion"]["grade"] == 3
    for assignment in blind:
        fragment = client.get(f"/campaigns/{world.campaign.pk}/judge/{assignment.pk}/").content
        assert b"Machine suggests" not in fragment
        assert api(judge).get(f"/api/v1/assignments/{assignment.pk}/").json()["suggestion"] is None


def test_no_suggestion_where_the_machine_has_no_grade(world):
    suggest(world, share=0.05)
    judge = world.users["judge"]
    shown, _ = split(world, judge)
    MachineAnswer.objects.create(
        machine=world.machine,
        pair=shown[0].pair,
        outcome=MachineOutcome.FAILED,
        failure="timeout",
    )
    assert (
        suggestions.suggestion_for(world.campaign, judge_id=judge.pk, pair_id=shown[0].pair_id)
        is None
    )


def test_the_blind_share_holds_over_many_pairs():
    picks = [is_blind(99, 5, pair, 0.3) for pair in range(4000)]
    assert 0.27 < sum(picks) / len(picks) < 0.33


def test_the_report_is_the_pure_statistics_on_the_campaigns_grades(client, api, world):
    grade_everything_by_machine(world, grade=2)
    suggest(world, share=0.5)
    for judge in (world.users["judge"], world.users["other_judge"]):
        for assignment in Assignment.objects.filter(pair__campaign=world.campaign, judge=judge):
            services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=2, seconds=7)
    report = suggestions.anchoring_report(world.campaign)
    rows = [
        Judged(
            a.pair_id,
            a.judge_id,
            2,
            7.0,
            not is_blind(world.campaign.seed, a.judge_id, a.pair_id, 0.5),
            2,
        )
        for a in Assignment.objects.filter(pair__campaign=world.campaign).order_by("judgment__pk")
    ]
    assert report == anchoring(rows, seed=world.campaign.seed)
    assert report.suggested.judgments + report.blind.judgments == len(rows)

    answer = api(world.users["lead"]).get(
        f"/api/v1/campaigns/{world.campaign.pk}/agreement/suggestions/"
    )
    assert answer.status_code == 200
    body = answer.json()
    assert body["machine"] == world.machine.pk and body["blind_share"] == 0.5
    assert body["suggested"]["judgments"] == report.suggested.judgments
    assert body["suggested"]["with_machine"]["value"] == report.suggested.with_machine.value

    client.force_login(world.users["lead"])
    page = client.get(f"/campaigns/{world.campaign.pk}/agreement/").content.decode()
    assert 'id="anchoring"' in page and "Median seconds per judgment" in page

    out = io.StringIO()
    call_command("agreement_report", world.campaign.pk, stdout=out)
    assert "Post-editing: grades with the machine's suggestion in view" in out.getvalue()
    out = io.StringIO()
    call_command("agreement_report", world.campaign.pk, "--format", "json", stdout=out)
    data = json.loads(out.getvalue())["suggestions"]
    assert data["blind"]["judgments"] == report.blind.judgments


def test_a_campaign_without_suggestions_has_no_report(api, world):
    assert suggestions.anchoring_report(world.campaign) is None
    body = (
        api(world.users["lead"])
        .get(f"/api/v1/campaigns/{world.campaign.pk}/agreement/suggestions/")
        .json()
    )
    assert body["machine"] is None and body["suggested"] is None
    # Judges and other leads do not read it (404, as every lead-only report).
    for role in ("judge", "other_lead", "engineer"):
        got = api(world.users[role]).get(
            f"/api/v1/campaigns/{world.campaign.pk}/agreement/suggestions/"
        )
        assert got.status_code in (403, 404)
