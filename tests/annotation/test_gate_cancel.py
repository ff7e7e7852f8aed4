"""Cancelling a machine judge's gullibility gate (issue 33): a lead stops a running gate from
its page, the API or the command line, as a machine run is stopped; the job ends cancelled,
saying so, and the gate ends cancelled with no calls, rises or verdict stored (a part
of the probes says nothing about the machine), so filling still needs a finished gate. A gate
whose job is still queued ends at once, and its job does nothing when a worker takes it."""

from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation import tasks
from annotation.services import gates, machine_judges, machine_runs
from annotation.services.machine_runs import Cancelled
from annotation.tasks import gullibility_gate_job
from jobs.models import Job, JobStatus
from tests.annotation.trust_data import grade_open, trust_world
from tests.llm_server import KEY, ChatServer, honest_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]


@pytest.fixture(autouse=True)
def fast_backoff(settings):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01


@pytest.fixture
def graded(django_user_model):
    """A campaign whose humans graded every pair, and an honest machine over its pool."""
    campaign, lead, _judges, _runs = trust_world(django_user_model)
    grade_open(campaign)
    with ChatServer(default=honest_grade) as server:
        machine = machine_judges.create_machine_judge(
            campaign=campaign, name="honest", model_name="m", base_url=server.base_url, api_key=KEY
        )
        machine_runs.run_machine_judge(run=machine_runs.prepare_run(machine=machine, scope="pool"))
        yield campaign, lead, machine, server


class CancelOnStep:
    """A job's progress that cancels the gate at its first report (after 20 calls)."""

    def __init__(self, gate):
        self.gate = gate
        self.steps = 0

    def step(self, text, *, done, total):
        self.steps += 1
        gates.cancel_gate(gate=self.gate)


def test_a_gate_cancelled_mid_run_stops_asking_and_stores_no_verdict(graded, monkeypatch):
    _campaign, lead, machine, server = graded
    monkeypatch.setattr(gates, "CANCEL_CHECK_SECONDS", 0)  # look at the flag before each call
    gate = gates.GullibilityGate.objects.create(
        machine=machine,
        threshold=0.02,
        relevant_from=1,
        max_pairs=28,
        seed=1,
        pairs=28,
        started_by=lead,
    )
    asked_before = len(server.requests)
    with pytest.raises(Cancelled, match=r"Cancelled after 2\d of 84 calls: no verdict"):
        gates.run_gate(gate=gate, progress=CancelOnStep(gate))
    asked = len(server.requests) - asked_before
    assert 20 <= asked < 84, asked  # the calls in flight finish; no new one starts
    gate.refresh_from_db()
    assert gate.cancelled and gate.finished_at is not None and gate.cancel_requested_at
    assert (gate.calls, gate.rises, gate.blocked, gate.conclusive) == ([], [], None, None)
    assert gates.verdict(gate) == "cancelled"
    found = gates.clearance(machine)
    assert (
        not found.cleared
        and found.problem == "machine:honest's latest gullibility gate was cancelled"
    )
    # A cancelled or finished gate cannot be cancelled again, nor overridden.
    assert gates.cancel_gate(gate=gate) == gates.CANCEL_LATE
    with pytest.raises(gates.ValidationError, match="nothing to override"):
        gates.override_gate(gate=gate, user=lead, reason="because")


def test_a_gate_cancelled_before_its_job_starts_ends_at_once_and_its_job_never_runs(
    graded, django_capture_on_commit_callbacks
):
    """A queued job may wait for a worker for a long time (or forever, with none running):
    the gate must not show "running, asked to stop" until then."""
    _campaign, lead, machine, server = graded
    asked_before = len(server.requests)
    with django_capture_on_commit_callbacks(execute=True):
        job = gates.start_gate(machine=machine, user=lead, max_pairs=10)
        gate = machine.gates.get(job=job)
        assert gates.verdict(gate) == "running"
        assert gates.cancel_gate(gate=gate) == gates.CANCEL_ENDED
        # Ended now, before any worker took the job.
        gate.refresh_from_db()
        job.refresh_from_db()
        assert gate.cancelled and gate.finished_at and gate.cancel_requested_at
        assert gates.verdict(gate) == "cancelled"
        assert job.status == "cancelled" and job.step == gates.MESSAGES["cancel_ended"]
        assert job.finished_at is not None and not job.retryable
        ended = (job.updated_at, job.finished_at)
        assert gates.cancel_gate(gate=gate) == gates.CANCEL_LATE
    # The queued task ran when the block ended (a worker taking it late): it did nothing.
    job.refresh_from_db()
    gate.refresh_from_db()
    assert (job.status, job.step, (job.updated_at, job.finished_at)) == (
        "cancelled",
        gates.MESSAGES["cancel_ended"],
        ended,
    )
    assert len(server.requests) == asked_before
    assert (gate.calls, gate.rises, gate.blocked) == ([], [], None)
    assert gates.verdict(gate) == "cancelled"
    # A new gate runs as usual afterwards.
    with django_capture_on_commit_callbacks(execute=True):
        again = gates.start_gate(machine=machine, user=lead, max_pairs=10)
    again.refresh_from_db()
    assert again.status == "succeeded"
    assert gates.verdict(gates.latest_gate(machine)) == "passed"


def test_a_gate_cancelled_just_as_a_worker_takes_its_job_is_not_run(graded, monkeypatch):
    """The worker looked (not cancelled), then the lead cancelled the queued job, then the
    worker marked it running: the job reads the gate before its first call and ends."""
    _campaign, lead, machine, server = graded
    job = gates.start_gate(machine=machine, user=lead, max_pairs=10)  # queued: no worker here
    gate = machine.gates.get(job=job)
    marked_running = tasks.running

    def cancelled_first(job_id):
        assert gates.cancel_gate(gate=gate) == gates.CANCEL_ENDED
        return marked_running(job_id)

    monkeypatch.setattr(tasks, "running", cancelled_first)
    asked_before = len(server.requests)
    gullibility_gate_job.call(job_id=job.pk, gate_id=gate.pk)
    job.refresh_from_db()
    assert (job.status, job.step) == ("cancelled", gates.MESSAGES["cancel_ended"])
    assert not job.retryable and len(server.requests) == asked_before
    assert gates.verdict(gates.latest_gate(machine)) == "cancelled"


def test_a_gate_whose_job_started_is_asked_to_stop_and_stops_at_its_next_look(graded, monkeypatch):
    """A worker marked the job running: the gate is only asked, and its job ends it."""
    _campaign, lead, machine, server = graded
    monkeypatch.setattr(gates, "CANCEL_CHECK_SECONDS", 0)
    job = gates.start_gate(machine=machine, user=lead, max_pairs=10)  # queued: no worker here
    gate = machine.gates.get(job=job)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)  # a worker took it
    assert gates.cancel_gate(gate=gate) == gates.CANCEL_ASKED
    gate.refresh_from_db()
    job.refresh_from_db()
    assert gate.cancel_requested_at and not gate.cancelled and gate.finished_at is None
    assert job.status == "running" and gates.verdict(gate) == "running"
    assert gates.cancel_gate(gate=gate) == gates.CANCEL_LATE
    asked_before = len(server.requests)
    gullibility_gate_job.call(job_id=job.pk, gate_id=gate.pk)  # the worker's run
    job.refresh_from_db()
    gate.refresh_from_db()
    assert job.status == "cancelled" and job.step.startswith("Cancelled after 0 of 30 calls")
    assert len(server.requests) == asked_before
    assert gate.cancelled and gates.verdict(gate) == "cancelled"


def test_a_lead_cancels_a_gate_on_its_page_over_the_api_and_from_the_command_line(graded, client):
    campaign, lead, machine, _server = graded
    page = f"/campaigns/{campaign.pk}/machines/{machine.pk}/gate/"
    client.force_login(lead)
    job = gates.start_gate(machine=machine, user=lead, max_pairs=10)  # queued: no worker here
    gate = machine.gates.get(job=job)
    html = client.get(page).content.decode()
    assert 'data-testid="gate-cancel-form"' in html and "Running" in html
    answer = client.post(page + "cancel/", follow=True)
    assert answer.redirect_chain[-1][0] == page
    text = answer.content.decode()
    assert "Cancelled before it started: no probe was asked" in text
    assert "Cancelled by a lead: no verdict" in text and "asked to stop" not in text
    assert 'data-testid="gate-cancel-form"' not in text
    assert client.get(page + "cancel/").status_code == 405
    again = client.post(page + "cancel/", follow=True).content.decode()
    assert "That gate had finished or was stopping already." in again

    # A gate whose job a worker started is asked to stop, and says so until its job looks.
    job = gates.start_gate(machine=machine, user=lead, max_pairs=10)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
    gate = machine.gates.get(job=job)
    text = client.post(page + "cancel/", follow=True).content.decode()
    assert "Asked the gate to stop" in text and "Running, asked to stop" in text
    again = client.post(page + "cancel/", follow=True).content.decode()
    assert "That gate had finished or was stopping already." in again

    # The API and the command line, on the running gate asked again.
    gate.cancel_requested_at = None
    gate.save(update_fields=["cancel_requested_at"])
    url = f"/api/v1/campaigns/{campaign.pk}/machine-gates/{gate.pk}/cancel/"
    api = APIClient()
    api.force_login(lead)
    body = api.post(url).json()
    assert body["cancel_requested_at"] and body["verdict"] == "running"
    assert body["cancelled"] is False
    assert api.post(url).status_code == 200  # late: nothing changes
    gate.cancel_requested_at = None
    gate.save(update_fields=["cancel_requested_at"])
    err = StringIO()
    call_command("gate", campaign.pk, machine.pk, "--cancel", stdout=StringIO(), stderr=err)
    assert "Asked the gate to stop" in err.getvalue()
    err = StringIO()
    call_command("gate", campaign.pk, machine.pk, "--cancel", stdout=StringIO(), stderr=err)
    assert "had finished or was stopping already" in err.getvalue()

    # Over the API, a queued gate ends at once.
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED)  # its worker died
    queued = gates.start_gate(machine=machine, user=lead, max_pairs=10)
    fresh = machine.gates.get(job=queued)
    body = api.post(f"/api/v1/campaigns/{campaign.pk}/machine-gates/{fresh.pk}/cancel/").json()
    assert body["cancelled"] is True and body["verdict"] == "cancelled"
    queued.refresh_from_db()
    assert queued.status == "cancelled" and queued.step == gates.MESSAGES["cancel_ended"]
