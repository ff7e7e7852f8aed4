# ruff: noqa: F811 (the fixtures imported from tests/api/conftest.py are the parameters below)
"""The post-editing report (suggested against blind grades) is computed by the agreement
refresh and stored with the campaign's agreement numbers (services/agreement.py), so the
agreement page, the API and the command line read it and never compute it per view; the
suggestion settings and the suggested machine's answers make the stored numbers stale, and a
run of that machine queues a refresh under a worker."""

import io
import json

import pytest
from django.core.management import call_command
from django.test import override_settings

from annotation import services
from annotation.models import AgreementRefresh, MachineAnswer, MachineRun
from annotation.services import agreement, machine_runs, suggestions
from tests.annotation.test_suggestions import grade_everything_by_machine, suggest
from tests.api.conftest import api, make_user, world_made  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


WORKER = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}


def graded(world):
    grade_everything_by_machine(world, grade=2)
    suggest(world, share=0.5)
    for judge in (world.users["judge"], world.users["other_judge"]):
        for assignment in services.judge_queue(campaign=world.campaign, judge=judge):
            services.record_judgment(assignment_id=assignment, judge=judge, grade=1, seconds=5)


def never_computed(*args, **kwargs):
    raise AssertionError("the post-editing report was computed on a view")


def test_pages_the_api_and_the_command_read_the_stored_report(client, api, world, monkeypatch):
    graded(world)
    campaign = world.campaign
    agreement.refresh_agreement(campaign=campaign)
    expected = suggestions.anchoring_report(campaign)
    assert expected is not None and expected.suggested.judgments + expected.blind.judgments > 0
    monkeypatch.setattr(agreement, "anchoring_report", never_computed)
    monkeypatch.setattr(suggestions, "anchoring_report", never_computed)

    assert agreement.campaign_agreement(campaign=campaign).anchoring == expected
    client.force_login(world.users["lead"])
    page = client.get(f"/campaigns/{campaign.pk}/agreement/").content.decode()
    assert 'id="anchoring"' in page and "Median seconds per judgment" in page
    body = api(world.users["lead"]).get(f"/api/v1/campaigns/{campaign.pk}/agreement/suggestions/")
    assert body.status_code == 200
    assert body.json()["suggested"]["judgments"] == expected.suggested.judgments
    out = io.StringIO()
    call_command("agreement_report", campaign.pk, "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["suggestions"]["blind"]["judgments"] == (
        expected.blind.judgments
    )


def test_the_machines_answers_and_the_settings_make_the_stored_report_stale(world):
    graded(world)
    campaign = world.campaign
    first = agreement.campaign_agreement(campaign=campaign).anchoring
    assert first.suggested.with_machine.value == 0  # humans said 1, the machine 2
    # The suggested machine regrades: the stored report is stale and recomputed (inline).
    MachineAnswer.objects.filter(machine=world.machine).update(grade=1)
    again = agreement.campaign_agreement(campaign=campaign).anchoring
    assert again.suggested.with_machine.value == 1
    assert again == suggestions.anchoring_report(campaign)
    # Turning suggestions off: no report, whatever was stored.
    campaign.suggestions_from = None
    campaign.save(update_fields=["suggestions_from"])
    assert agreement.campaign_agreement(campaign=campaign).anchoring is None


def test_a_run_of_the_suggested_machine_queues_a_refresh_under_a_worker(world):
    graded(world)
    campaign = world.campaign
    agreement.refresh_agreement(campaign=campaign)
    with override_settings(TASKS=WORKER):
        AgreementRefresh.objects.filter(campaign=campaign).update(requested_at=None)
        run = MachineRun.objects.create(machine=world.machine, scope="pool", pairs=0)
        machine_runs._finish(run)
        assert AgreementRefresh.objects.get(campaign=campaign).requested_at is not None
        assert agreement.campaign_agreement(campaign=campaign).pending
