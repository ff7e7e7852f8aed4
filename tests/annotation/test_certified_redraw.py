"""Redrawing a campaign's certified sample (issue 33): a lead draws the human sample again
(a new seed; the same or another strategy and budget) before humans judge it, on the page,
over the API and from the command line; once a human graded or skipped a sampled pair it is
refused with the reason and nothing changes; each replaced design is recorded."""

import json
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Assignment, AuditKind, CertifiedDesign, DesignPair, MachineAudit
from annotation.services import certified, machine_judges, machine_runs
from tests.annotation.trust_data import grade_open, trust_world
from tests.llm_server import KEY, ChatServer, honest_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]


@pytest.fixture
def drawn(django_user_model):
    """A campaign whose machine graded the pool, with a uniform sample of 10 drawn."""
    campaign, lead, _judges, _runs = trust_world(django_user_model)
    with ChatServer(default=honest_grade) as server:
        machine = machine_judges.create_machine_judge(
            campaign=campaign, name="honest", model_name="m", base_url=server.base_url, api_key=KEY
        )
        machine_runs.run_machine_judge(run=machine_runs.prepare_run(machine=machine, scope="pool"))
    certified.draw_sample(
        campaign=campaign, machine=machine, strategy="uniform", budget=10, seed=1, user=lead
    )
    return campaign, lead, machine


def sampled(campaign) -> set[int]:
    return set(
        DesignPair.objects.filter(design__campaign=campaign, chosen=True).values_list(
            "pair_id", flat=True
        )
    )


def held(campaign) -> set[int]:
    return set(Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True))


def test_a_redraw_replaces_the_design_sends_the_new_sample_and_records_the_old(drawn):
    campaign, lead, _machine = drawn
    first = sampled(campaign)
    assert held(campaign) == first and len(first) == 10
    redrawn = certified.redraw_sample(campaign=campaign, seed=99, user=lead)
    design = redrawn.design
    # The same strategy and budget, the new seed; one design, one certified audit.
    assert (design.strategy, design.budget, design.seed, design.chosen) == ("uniform", 10.0, 99, 10)
    assert CertifiedDesign.objects.filter(campaign=campaign).count() == 1
    audits = MachineAudit.objects.filter(campaign=campaign, kind=AuditKind.CERTIFIED)
    assert list(audits) == [design.audit] and design.audit.seed == 99
    second = sampled(campaign)
    assert second != first and DesignPair.objects.filter(design=design).count() == 60
    # The humans hold exactly the new sample: the old one's open assignments were taken back.
    assert held(campaign) == second
    assert redrawn.withdrawn == len(first - second)
    [record] = design.redraws
    assert (record["strategy"], record["seed"], record["chosen"]) == ("uniform", 1, 10)
    assert (record["drawn_by"], record["redrawn_by"]) == ("lead", "lead")
    # Another strategy and budget, and a random seed when none is given.
    again = certified.redraw_sample(campaign=campaign, strategy="stratified", budget="25%")
    assert again.design.strategy == "stratified" and again.design.budget_is_share
    assert again.design.chosen == 15 and len(again.design.redraws) == 2
    assert again.design.redraws[1]["seed"] == 99


@pytest.mark.parametrize("how", ["graded", "skipped"])
def test_a_redraw_is_refused_once_a_human_judged_a_sampled_pair(drawn, how):
    campaign, lead, _machine = drawn
    if how == "graded":
        grade_open(campaign, limit=1)
    else:
        assignment = Assignment.objects.filter(pair__campaign=campaign).order_by("pk").first()
        services.skip_assignment(assignment_id=assignment.pk, judge=assignment.judge, reason="x")
    before = (sampled(campaign), held(campaign), CertifiedDesign.objects.get().pk)
    with pytest.raises(ValidationError, match="humans have judged 1 of its 10 pairs"):
        certified.redraw_sample(campaign=campaign, seed=5, user=lead)
    assert (sampled(campaign), held(campaign), CertifiedDesign.objects.get().pk) == before


def test_a_redraw_that_cannot_be_drawn_changes_nothing(drawn):
    campaign, lead, _machine = drawn
    before = (sampled(campaign), held(campaign), CertifiedDesign.objects.get().pk)
    with pytest.raises(ValidationError, match="more than the pool's 60"):
        certified.redraw_sample(campaign=campaign, budget=500, user=lead)
    with pytest.raises(ValidationError, match="Unknown strategy"):
        certified.redraw_sample(campaign=campaign, strategy="sideways", user=lead)
    assert (sampled(campaign), held(campaign), CertifiedDesign.objects.get().pk) == before


def test_no_design_no_redraw(django_user_model):
    campaign, lead, _judges, _runs = trust_world(django_user_model)
    with pytest.raises(ValidationError, match="No sample has been drawn yet"):
        certified.redraw_sample(campaign=campaign, user=lead)


def test_the_page_offers_a_redraw_until_humans_judge(drawn, client):
    campaign, lead, _machine = drawn
    client.force_login(lead)
    url = f"/campaigns/{campaign.pk}/certified/"
    page = client.get(url).content.decode()
    assert 'data-testid="redraw-form"' in page
    bad = client.post(url + "redraw/", {"budget": "lots", "seed": ""})
    assert bad.status_code == 400 and "A budget is a whole number of pairs" in bad.content.decode()
    done = client.post(url + "redraw/", {"strategy": "", "budget": "", "seed": "42"}, follow=True)
    text = done.content.decode()
    assert "Redrew the sample: 10 pairs for the humans (uniform, seed 42)" in text
    assert 'data-testid="redraws"' in text and "uniform design, seed 1, 10 pairs" in text
    grade_open(campaign, limit=1)
    page = client.get(url).content.decode()
    assert 'data-testid="redraw-form"' not in page
    assert "can no longer be redrawn: humans have judged 1 of its pairs" in page
    refused = client.post(url + "redraw/", {"seed": "43"})
    assert refused.status_code == 400
    assert "humans have judged 1 of its 10 pairs" in refused.content.decode()
    assert client.get(url + "redraw/").status_code == 405


def test_the_api_and_the_command_line_redraw_and_refuse(drawn):
    campaign, lead, _machine = drawn
    api = APIClient()
    api.force_login(lead)
    url = f"/api/v1/campaigns/{campaign.pk}/certified/redraw/"
    assert api.post(url, {"seed": -1}, format="json").status_code == 400
    answer = api.post(url, {"seed": 8, "budget": "12"}, format="json")
    assert answer.status_code == 201, answer.content
    design = answer.json()["design"]
    assert (design["seed"], design["chosen"], design["budget"]) == (8, 12, 12.0)
    assert [r["seed"] for r in design["redraws"]] == [1]

    err = StringIO()
    out = StringIO()
    call_command(
        "certify",
        campaign.pk,
        "--redraw",
        "--seed",
        "9",
        "--user",
        "lead",
        "--json",
        stdout=out,
        stderr=err,
    )
    assert "redrew 12 pairs for the humans (uniform, seed 9)" in err.getvalue()
    assert [r["seed"] for r in json.loads(out.getvalue())["design"]["redraws"]] == [1, 8]
    with pytest.raises(CommandError, match="--draw or --redraw"):
        call_command("certify", campaign.pk, "--draw", "--redraw")

    grade_open(campaign, limit=2)
    refused = api.post(url, {}, format="json")
    assert refused.status_code == 400
    assert "humans have judged 2 of its 12 pairs" in refused.json()["detail"][0]
    with pytest.raises(CommandError, match="nothing redrawn: The sample cannot be redrawn"):
        call_command("certify", campaign.pk, "--redraw")
