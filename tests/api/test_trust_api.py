"""The certified leaderboard and the gullibility gate over the API and the command line,
against real scripted machines on loopback: the same numbers as the service, hostile input
refused with the reason (never a 500)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.services import certified_board as boards
from annotation.services import machine_judges, machine_runs
from tests.annotation.trust_data import grade_open, trust_world
from tests.llm_server import KEY, ChatServer, gullible_grade, honest_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]


@pytest.fixture(autouse=True)
def fast_backoff(settings):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01


def machine_over_pool(campaign, server, name):
    machine = machine_judges.create_machine_judge(
        campaign=campaign, name=name, model_name="m", base_url=server.base_url, api_key=KEY
    )
    machine_runs.run_machine_judge(run=machine_runs.prepare_run(machine=machine, scope="pool"))
    return machine


def test_the_certified_leaderboard_over_the_api_and_the_command_line(
    api, django_user_model, django_capture_on_commit_callbacks
):
    campaign, lead, _judges, _runs = trust_world(django_user_model)
    client = api(lead)
    url = f"/api/v1/campaigns/{campaign.pk}/certified/"
    with ChatServer(default=honest_grade) as server:
        machine = machine_over_pool(campaign, server, "honest")
    body = client.get(url).json()
    assert body["state"] == "no_design" and body["runs"] == []

    for bad, field in (
        ({"machine": machine.pk, "strategy": "uniform", "budget": "lots"}, "detail"),
        ({"machine": machine.pk, "strategy": "lucky", "budget": "10"}, "strategy"),
        ({"machine": 999999, "strategy": "uniform", "budget": "10"}, "machine"),
        ({"machine": machine.pk, "strategy": "uniform", "budget": "61"}, "detail"),
    ):
        answer = client.post(url, bad, format="json")
        assert answer.status_code == 400, answer.content
        assert field in answer.json()

    answer = client.post(
        url, {"machine": machine.pk, "strategy": "stratified", "budget": "20%", "seed": 5}
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["state"] == "humans_pending"
    assert body["design"]["chosen"] == 12 and body["design"]["machine"] == "machine:honest"
    assert body["progress"] == {"chosen": 12, "graded": 0, "assigned": 12, "skipped_only": 0}
    again = client.post(url, {"machine": machine.pk, "strategy": "uniform", "budget": "5"})
    assert again.status_code == 400 and "not drawn again" in str(again.json())

    grade_open(campaign)
    body = client.get(url).json()
    assert body["state"] == "certified", body["message"]
    board = boards.certified_board(campaign=campaign)
    assert [r["ndcg_cut_10"] for r in body["runs"]] == [r.estimate for r in board.certified.runs]
    assert next(r["run_label"] for r in body["runs"]) == "best/best"
    assert len(body["pairs"]) == 3 and {"p_holm", "settled_holm"} <= set(body["pairs"][0])

    out = StringIO()
    call_command("certify", campaign.pk, "--json", stdout=out)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(boards.as_dict(board)))
    out = StringIO()
    call_command("certify", campaign.pk, stdout=out)
    text = out.getvalue()
    assert "Certified from 12 human grades" in text
    first = board.certified.runs[0]
    assert f"best/best\t{first.estimate:.4f}\t{first.low:.4f}\t{first.high:.4f}" in text
    with pytest.raises(CommandError, match="not drawn again"):
        call_command("certify", campaign.pk, "--draw", "--machine", str(machine.pk))

    # The CSV download has the same numbers.
    client.force_login(lead)
    csv = client.get(f"/campaigns/{campaign.pk}/certified.csv").content.decode()
    assert f"best/best,{first.estimate:.4f},{first.low:.4f},{first.high:.4f}" in csv


def test_the_gate_over_the_api_and_the_command_line(
    api, django_user_model, django_capture_on_commit_callbacks
):
    campaign, lead, _judges, _runs = trust_world(django_user_model)
    grade_open(campaign)
    client = api(lead)
    url = f"/api/v1/campaigns/{campaign.pk}/machine-gates/"
    with ChatServer(default=gullible_grade) as server:
        machine = machine_over_pool(campaign, server, "gullible")
        assert client.post(url, {"machine": machine.pk, "max_pairs": 0}).status_code == 400
        with django_capture_on_commit_callbacks(execute=True):
            answer = client.post(url, {"machine": machine.pk, "max_pairs": 20, "seed": 3})
        assert answer.status_code in (200, 202), answer.content
        assert answer.json()["kind"] == "annotation.gullibility_gate"
    gates_listed = client.get(url).json()["results"]
    assert len(gates_listed) == 1
    gate = gates_listed[0]
    assert gate["verdict"] == "blocked" and gate["pairs"] == 20
    stuffed = next(r for r in gate["rises"] if r["probe"] == "stuffed")
    assert stuffed["exceeds"] and stuffed["low"] > 0.02

    override = f"{url}{gate['id']}/override/"
    assert client.post(override, {"reason": ""}).status_code == 400
    out = StringIO()
    call_command("gate", campaign.pk, machine.pk, stdout=out)
    assert "blocked (threshold 2.0 points, 20 pairs" in out.getvalue()
    assert "stuffed\t20\t+" in out.getvalue()
    with pytest.raises(CommandError, match="needs --user"):
        call_command("gate", campaign.pk, machine.pk, "--override", "fine")
    call_command(
        "gate",
        campaign.pk,
        machine.pk,
        "--override",
        "Checked by hand.",
        "--user",
        "lead",
        stdout=StringIO(),
    )
    body = client.get(f"{url}{gate['id']}/").json()
    assert body["verdict"] == "overridden" and body["override_reason"] == "Checked by hand."
    assert body["overridden_by"] == "lead"
    assert client.post(override, {"reason": "again"}).status_code == 200


def test_the_commands_refuse_bad_input_with_the_reason(django_user_model):
    campaign, *_ = trust_world(django_user_model)
    with ChatServer(default=honest_grade) as server:
        machine = machine_over_pool(campaign, server, "honest")
    cases = [
        (("certify", campaign.pk, "--draw"), "needs --machine"),
        (("certify", campaign.pk, "--draw", "--machine", "999999"), "not one of this campaign"),
        (
            ("certify", campaign.pk, "--draw", "--machine", str(machine.pk), "--budget", "lots"),
            "A budget is",
        ),
        (("gate", campaign.pk, 999999), "no such machine judge"),
        (("gate", campaign.pk, machine.pk, "--run"), "needs pairs the humans graded"),
        (("gate", campaign.pk, machine.pk, "--override", "x", "--user", "lead"), "not finished"),
        (("gate", campaign.pk, machine.pk, "--user", "ghost"), "no user 'ghost'"),
    ]
    for args, words in cases:
        with pytest.raises(CommandError, match=words):
            call_command(*args, stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command("certify", campaign.pk, stdout=out)
    assert "No sample has been drawn by a design yet" in out.getvalue()
