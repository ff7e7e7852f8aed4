"""Cancelling a machine judge's run whose job no worker has started (issue 33): it ends
cancelled at once, with no pair asked, its job cancelled saying so, rather than showing "asked to
stop" for as long as the job waits for a worker (forever, with none running); a worker that
takes the job later does nothing. A run whose job a worker has is asked to stop, as before.
The rule is jobs.services.cancellation's, shared with the gullibility gate
(tests/annotation/test_gate_cancel.py)."""

import threading
import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services, tasks
from annotation.models import Document, MachineAnswer, PairSource, Topic
from annotation.services import machine_judges, machine_runs
from annotation.tasks import machine_judge_job
from annotation.views.machines import MESSAGES as PAGE_MESSAGES
from jobs.models import Job, JobStatus
from jobs.services import cancellation
from tests.llm_server import KEY, ChatServer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("outbound_allows_loopback")]

ENDED = machine_judges.MESSAGES["cancel_ended"]


@pytest.fixture
def machine(lead):
    """A machine judge over a campaign of 2 topics x 3 documents, at a live endpoint."""
    campaign = services.create_campaign(lead=lead, name="Tides")
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"tides {qid}")
    for docno in ("d1", "d2", "d3"):
        Document.objects.create(campaign=campaign, docno=docno, text=f"text of {docno}")
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, d) for q in ("1", "2") for d in ("d1", "d2", "d3")],
        source=PairSource.IMPORTED,
    )
    with ChatServer() as server:
        judge = machine_judges.create_machine_judge(
            campaign=campaign, model_name="judge-7b", base_url=server.base_url, api_key=KEY
        )
        judge.server = server
        yield judge


def nothing_done(run, machine):
    """The run asked nothing and stored nothing."""
    run.refresh_from_db()
    assert (run.graded, run.failed, run.prompt_tokens, run.seconds) == (0, 0, 0, 0)
    assert not MachineAnswer.objects.filter(machine=machine).exists()
    assert machine.server.requests == []


def test_a_run_cancelled_before_its_job_starts_ends_at_once_and_its_job_never_runs(
    machine, lead, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)
        run = machine.runs.get(job=job)
        assert machine_runs.active_run(machine) == run
        assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_ENDED
        # Ended now, before any worker took the job.
        run.refresh_from_db()
        job.refresh_from_db()
        assert run.cancelled and run.finished_at and run.cancel_requested_at
        assert (job.status, job.step, job.retryable) == ("cancelled", ENDED, False)
        assert job.finished_at is not None
        assert machine_runs.active_run(machine) is None  # the judge may run again
        ended = (job.updated_at, job.finished_at)
        assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_LATE
    # The queued task ran when the block ended (a worker taking it late): it did nothing.
    job.refresh_from_db()
    assert (job.status, job.step, (job.updated_at, job.finished_at)) == ("cancelled", ENDED, ended)
    nothing_done(run, machine)
    # A new run grades the pool as usual afterwards.
    with django_capture_on_commit_callbacks(execute=True):
        again = machine_runs.start_runner(machine=machine, scope="pool", user=lead)
    again.refresh_from_db()
    assert again.status == "succeeded"
    assert machine.runs.get(job=again).graded == 6


def test_a_run_cancelled_just_as_a_worker_takes_its_job_is_not_run(machine, lead, monkeypatch):
    """The worker looked (not cancelled), then the lead cancelled the queued job, then the
    worker marked it running: the job reads the run before its first request and ends."""
    job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)  # no worker here
    run = machine.runs.get(job=job)
    marked_running = tasks.running

    def cancelled_first(job_id):
        assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_ENDED
        return marked_running(job_id)

    monkeypatch.setattr(tasks, "running", cancelled_first)
    machine_judge_job.call(job_id=job.pk, run_id=run.pk)
    job.refresh_from_db()
    assert (job.status, job.step, job.retryable) == ("cancelled", ENDED, False)
    run.refresh_from_db()
    assert run.cancelled and run.finished_at is not None
    nothing_done(run, machine)


def test_a_job_a_worker_takes_between_the_ask_and_the_end_is_asked_not_ended(
    machine, lead, monkeypatch
):
    """The lead's request is stored, then a worker marks the job running before the queued
    job is ended: the job is not ended under the worker (nothing half-done), the run is only
    asked, and its job stops at its first look with nothing asked."""
    monkeypatch.setattr(machine_runs, "CANCEL_CHECK_SECONDS", 0)
    job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)  # no worker here
    run = machine.runs.get(job=job)
    end_queued_job = cancellation.end_queued_job

    def taken_first(*, job_id, step):
        Job.objects.filter(pk=job_id).update(status=JobStatus.RUNNING)  # the worker's mark
        return end_queued_job(job_id=job_id, step=step)

    monkeypatch.setattr(cancellation, "end_queued_job", taken_first)
    assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_ASKED
    monkeypatch.setattr(cancellation, "end_queued_job", end_queued_job)
    run.refresh_from_db()
    job.refresh_from_db()
    assert run.cancel_requested_at and not run.cancelled and run.finished_at is None
    assert job.status == "running" and job.finished_at is None
    assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_LATE
    machine_judge_job.call(job_id=job.pk, run_id=run.pk)  # the worker's run
    job.refresh_from_db()
    assert job.status == "cancelled" and job.step.startswith("Cancelled after 0 of 6 pairs")
    run.refresh_from_db()
    assert run.cancelled and run.finished_at is not None
    nothing_done(run, machine)


def test_a_running_job_is_asked_to_stop_and_stops_at_its_next_look(machine, lead, monkeypatch):
    monkeypatch.setattr(machine_runs, "CANCEL_CHECK_SECONDS", 0)
    job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)
    run = machine.runs.get(job=job)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)  # a worker took it
    assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_ASKED
    job.refresh_from_db()
    run.refresh_from_db()
    assert job.status == "running" and run.cancel_requested_at and not run.cancelled
    machine_judge_job.call(job_id=job.pk, run_id=run.pk)
    job.refresh_from_db()
    assert job.status == "cancelled" and job.step.startswith("Cancelled after 0 of 6 pairs")
    nothing_done(run, machine)


def test_a_run_without_a_job_is_asked_to_stop(machine):
    """A run of ``manage.py run_machine_judge`` has no job: its process reads the request."""
    run = machine_runs.prepare_run(machine=machine, scope="pool")
    assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_ASKED
    run.refresh_from_db()
    assert run.cancel_requested_at and not run.cancelled and run.finished_at is None
    with pytest.raises(machine_runs.Cancelled, match=r"^Cancelled after 0 of 6 pairs"):
        machine_runs.run_machine_judge(run=run)
    nothing_done(run, machine)


def test_a_lead_cancels_a_queued_run_on_the_page_and_over_the_api(machine, lead, client):
    campaign_id = machine.judge.campaign_id
    page = machine.get_absolute_url()
    client.force_login(lead)
    job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)  # no worker here
    run = machine.runs.get(job=job)
    html = client.get(page).content.decode()
    assert 'data-testid="machine-cancel"' in html and "Running now" in html
    url = reverse("annotation:machine-cancel", args=[campaign_id, machine.pk, run.pk])
    answer = client.post(url, follow=True)
    assert answer.redirect_chain[-1][0] == page
    text = answer.content.decode()
    assert PAGE_MESSAGES["cancel_ended"] == ENDED and ENDED in text
    # Not "running, stopping" until a worker comes: the judge can be run again at once.
    assert 'data-testid="machine-cancel"' not in text and "Running now" not in text
    assert "(cancelled)" in text
    job.refresh_from_db()
    assert (job.status, job.step) == ("cancelled", ENDED)
    again = client.post(url, follow=True).content.decode()
    assert PAGE_MESSAGES["cancel_late"] in again

    # A run whose job a worker started is asked, and the page says it is stopping.
    job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
    run = machine.runs.get(job=job)
    url = reverse("annotation:machine-cancel", args=[campaign_id, machine.pk, run.pk])
    text = client.post(url, follow=True).content.decode()
    assert PAGE_MESSAGES["cancel_asked"] in text and "Stopping…" in text
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED)  # its worker died

    # Over the API, a queued run ends at once; asking again changes nothing.
    api = APIClient()
    api.force_login(lead)
    job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)
    run = machine.runs.get(job=job)
    url = f"/api/v1/campaigns/{campaign_id}/machine-runs/{run.pk}/cancel/"
    body = api.post(url).json()
    assert body["cancelled"] is True and body["finished_at"] and body["cancel_requested_at"]
    job.refresh_from_db()
    assert (job.status, job.step, job.retryable) == ("cancelled", ENDED, False)
    later = api.post(url)
    assert later.status_code == 200 and later.json() == body
    nothing_done(run, machine)


def test_ctrl_c_on_the_command_ends_its_run_cancelled_keeping_its_answers(machine, monkeypatch):
    """The command runs the judge in its own process (no job): interrupted, nothing would
    ever read a request to stop, so its run ends cancelled at once, the answers kept."""
    monkeypatch.setattr(machine_runs, "FLUSH_SECONDS", 0)  # each answer stored as it comes
    machine.concurrency = 1
    machine.save(update_fields=["concurrency"])
    stopping = machine_runs._RunState.stopping
    looks = []

    def interrupted_at_the_third_look(state):
        looks.append(1)
        if len(looks) == 3:
            raise KeyboardInterrupt  # Ctrl-C between two requests
        return stopping(state)

    monkeypatch.setattr(machine_runs._RunState, "stopping", interrupted_at_the_third_look)
    campaign_id = str(machine.judge.campaign_id)
    with pytest.raises(CommandError, match="interrupted: run it again to resume"):
        call_command(
            "run_machine_judge", campaign_id, "--judge", str(machine.pk), stdout=StringIO()
        )
    run = machine.runs.get()
    assert run.cancelled and run.finished_at is not None and run.cancel_requested_at
    kept = MachineAnswer.objects.filter(machine=machine).count()
    assert kept >= 1 and (run.graded, run.failed) == (kept, 0)
    assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_LATE
    monkeypatch.setattr(machine_runs._RunState, "stopping", stopping)
    out = StringIO()
    call_command("run_machine_judge", campaign_id, "--judge", str(machine.pk), stdout=out)
    assert f"{6 - kept} pairs to grade" in out.getvalue()  # it resumes


# --- the race with a real worker, on two connections ------------------------------------------


@pytest.fixture
def no_worker(settings):
    """Committed jobs wait in a queue no worker drains (the tests' default runs them at once
    on commit, and a transactional test commits)."""
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}


def in_thread(target):
    """Start ``target()`` on a thread of its own (its own database connection); returns the
    thread and a list that receives what it returned or raised."""
    outcome = []

    def run():
        try:
            outcome.append(target())
        except Exception as error:  # asserted on by the test
            outcome.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.django_db(transaction=True)
def test_a_worker_marking_the_job_running_while_the_lead_cancels_leaves_it_asked(
    no_worker, machine, lead
):
    """The worker's write holds the job row (PostgreSQL) or the database (SQLite) when the lead
    cancels: the lead's end of the queued job waits for it, then finds the job running and
    only asks; nothing is ended under the worker."""
    job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)  # queued
    run = machine.runs.get(job=job)
    marked, release = threading.Event(), threading.Event()

    def worker_marks_running():
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
            marked.set()
            release.wait(5)
        return "marked"

    thread, outcome = in_thread(worker_marks_running)
    assert marked.wait(5)
    threading.Timer(0.5, release.set).start()  # the worker commits while the lead waits
    assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_ASKED
    thread.join(10)
    assert outcome == ["marked"]
    run.refresh_from_db()
    job.refresh_from_db()
    assert run.cancel_requested_at and not run.cancelled and run.finished_at is None
    assert job.status == "running" and job.finished_at is None


@pytest.mark.django_db(transaction=True)
def test_a_worker_taking_the_job_while_the_lead_ends_it_does_nothing(no_worker, machine, lead):
    """The worker looked (not cancelled: the lead's end is not committed yet) and marks the
    job running once the lead commits: it finds the run cancelled and ends, nothing asked."""
    job = machine_runs.start_runner(machine=machine, scope="pool", user=lead)  # queued
    run = machine.runs.get(job=job)
    with transaction.atomic():
        assert machine_runs.cancel_run(run=run) == machine_runs.CANCEL_ENDED
        thread, outcome = in_thread(
            lambda: machine_judge_job.call(job_id=job.pk, run_id=run.pk) or "ran"
        )
        time.sleep(1)  # the worker has looked and waits to mark its job running
    thread.join(30)
    assert outcome == ["ran"]
    job.refresh_from_db()
    assert (job.status, job.step, job.retryable) == ("cancelled", ENDED, False)
    run.refresh_from_db()
    assert run.cancelled and run.finished_at is not None
    # The worker did mark the job running and end it again (its second look), after the
    # lead's end: not its first look's quiet return.
    assert job.finished_at > run.finished_at
    nothing_done(run, machine)
