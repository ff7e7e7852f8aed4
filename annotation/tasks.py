"""Work on a campaign that can take a while: importing topics, documents and pairs,
pooling stored runs, and recomputing its agreement statistics (``refresh_agreement_task``).

Each piece of work has two layers:

- a plain function (``import_topics``, ``import_documents``, ``import_pairs``,
  ``pool_stored_runs``) that validates everything first and then stores it in one
  transaction, raising :class:`~evaluation.trec.TrecFormatError` (file:line problems) or
  ``ValidationError`` (a refusal that is no line of the file), so nothing is stored on
  failure. The management commands call these directly;
- a ``@task`` (``*_job``) that runs the function inside :func:`jobs.services.running`, reading
  the upload staged in storage and deleting it afterwards, and turns those two errors into
  :class:`~jobs.services.JobFailed` so the job page lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.tasks import task
from django.urls import reverse
from django.utils import timezone

from annotation import background, services
from annotation.models import (
    AgreementRefresh,
    AgreementSnapshot,
    Campaign,
    GullibilityGate,
    MachineRun,
)
from annotation.services import (
    adjudication,
    audits,
    campaign_files,
    gates,
    live,
    machine_runs,
    ordering,
)
from annotation.services import agreement as agreement_service
from annotation.services import imports as judgment_imports
from annotation.services.campaign_files import count_of, pool_summary, step
from common.uploads import max_upload_bytes
from evaluation.models import Run
from evaluation.trec import TrecFormatError
from jobs.models import Job
from jobs.services import JobCancelled, JobFailed, Progress, running

MESSAGES = {
    "campaign_gone": "The campaign no longer exists.",
    "runs_gone": "Some of the chosen runs no longer exist; choose the runs again.",
    "users_gone": "A judge of this change no longer exists; make the change again.",
    "topic_gone": "The topic of this change no longer exists; make the change again.",
    "saved": "Saved the campaign's settings.",
    "assigned_more": "The larger overlap made {n}.",
    "added_judge": "{user} now judges it: {n} made.",
    "removed_judge": "{user} no longer judges it: {n} of theirs given to the others.",
    "reassigned": "Moved {n} from {source} to {target}{where}.",
    "published": "Published {qrels}: {n}.",
    "audit_sent": "Sent {n} to the human judges for audit: {assigned} made.",
}


# --- the jobs --------------------------------------------------------------------------------


def _failure(error: TrecFormatError | ValidationError, filename: str = "") -> JobFailed:
    if isinstance(error, TrecFormatError):
        return JobFailed.not_imported(filename, error)
    return JobFailed(" ".join(error.messages))


def _campaign(campaign_id: int) -> Campaign:
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        raise JobFailed(MESSAGES["campaign_gone"])
    return campaign


def _result(campaign: Campaign, summary: str, *, pool: bool = False) -> dict:
    """What the job page shows when done: a link back (to the pool page after pool work)."""
    if pool:
        url, label = reverse("annotation:pool-detail", args=[campaign.pk]), "See the pool"
    else:
        url, label = campaign.get_absolute_url(), "Back to the campaign"
    return {"url": url, "label": label, "summary": summary, "campaign": campaign.pk}


def _announce(progress: Progress, campaign: Campaign, *, pool: bool = False) -> None:
    """Tie the job to its campaign before the work starts, so that a failed job too is
    listed on the campaign's page and links back to it (running() keeps ``result`` as it is
    on failure and replaces it with ``progress.result`` on success)."""
    progress.result = _result(campaign, "", pool=pool)
    Job.objects.filter(pk=progress.job.pk).update(result=progress.result)


def _run_import(job_id, campaign_id, staged, filename, work, *, pool: bool = False) -> None:
    """The staged upload is running()'s to delete: on success or a refused file, not on a
    crash, so the job can be tried again (jobs.services.retry_job)."""
    with running(job_id) as progress:
        campaign = _campaign(campaign_id)
        _announce(progress, campaign, pool=pool)
        try:
            with default_storage.open(staged, "rb") as file:
                outcome = work(campaign, file, progress)
        except (TrecFormatError, ValidationError) as error:
            raise _failure(error, filename) from None
        summary = pool_summary(outcome) if pool else outcome.summary
        progress.result = _result(campaign, summary, pool=pool)


def _reading(read, **options):
    """The work of an import job: ``read`` (a campaign_files importer) over the staged file,
    within the upload limit, reporting its progress."""

    def work(campaign, file, progress):
        return read(
            campaign=campaign,
            source=file,
            max_bytes=max_upload_bytes(),
            progress=progress,
            **options,
        )

    return work


@task
def import_topics_job(
    *, job_id: int, campaign_id: int, staged: str, filename: str, fmt: str | None = None
) -> None:
    work = _reading(campaign_files.import_topics, filename=filename, fmt=fmt)
    _run_import(job_id, campaign_id, staged, filename, work)


@task
def import_documents_job(
    *, job_id: int, campaign_id: int, staged: str, filename: str, fmt: str | None = None
) -> None:
    work = _reading(campaign_files.import_documents, filename=filename, fmt=fmt)
    _run_import(job_id, campaign_id, staged, filename, work)


@task
def import_pairs_job(*, job_id: int, campaign_id: int, staged: str, filename: str) -> None:
    work = _reading(campaign_files.import_pairs, filename=filename)
    _run_import(job_id, campaign_id, staged, filename, work, pool=True)


@task
def import_judgments_job(
    *,
    job_id: int,
    campaign_id: int,
    staged: str,
    filename: str,
    fmt: str | None = None,
    judge_kind: str | None = None,
    judge_name: str = "",
    mapping: dict[str, int] | None = None,
    add_missing_pairs: bool = False,
) -> None:
    """A judgments file with more grades than a request may write (SYNC_WRITE_ROWS), as
    the page or the API would have imported it (services.imports.import_judgments), in
    the name of who started the job."""
    with running(job_id) as progress:
        campaign = _campaign(campaign_id)
        url = reverse("annotation:judgments", args=[campaign.pk])
        progress.result = {"url": url, "label": "See the judgments", "summary": ""}
        progress.result["campaign"] = campaign.pk
        Job.objects.filter(pk=progress.job.pk).update(result=progress.result)
        step(progress, f"Reading and storing {filename}", done=0, total=1)
        try:
            with default_storage.open(staged, "rb") as file:
                result = judgment_imports.import_judgments(
                    campaign=campaign,
                    source=file,
                    file_name=filename,
                    user=progress.job.created_by,
                    fmt=fmt,
                    judge_kind=judge_kind,
                    judge_name=judge_name,
                    mapping=mapping,
                    add_missing_pairs=add_missing_pairs,
                )
        except (TrecFormatError, ValidationError) as error:
            raise _failure(error, filename) from None
        progress.result = {
            **progress.result,
            "summary": result.summary(),
            "import": result.record.pk if result.record else None,
        }


@task
def pool_runs_job(*, job_id: int, campaign_id: int, run_ids: list[int], depth: int) -> None:
    with running(job_id) as progress:
        campaign = _campaign(campaign_id)
        _announce(progress, campaign, pool=True)
        runs = list(Run.objects.select_related("system").filter(pk__in=run_ids))
        if len(runs) != len(set(run_ids)):
            raise JobFailed(MESSAGES["runs_gone"])
        try:
            change = campaign_files.pool_stored_runs(
                campaign=campaign, runs=runs, depth=depth, progress=progress
            )
        except ValidationError as error:
            raise _failure(error) from None
        progress.result = _result(campaign, pool_summary(change), pool=True)


# --- changes of who judges what, too large for a request -------------------------------------


@task
def edit_campaign_job(
    *,
    job_id: int,
    campaign_id: int,
    changes: dict | None = None,
    add_judges: Sequence[int] = (),
    remove_judges: Sequence[int] = (),
) -> None:
    """A change to a campaign that writes more than a request may (SYNC_WRITE_ROWS): its
    settings (services.update_campaign, ``changes``), then the judges added, then those
    removed (their open work goes to the others), in one transaction, as the edit page
    saves them."""
    with running(job_id) as progress:
        campaign = _campaign(campaign_id)
        _announce(progress, campaign)
        users = get_user_model().objects.in_bulk([*add_judges, *remove_judges])
        if len(users) != len({*add_judges, *remove_judges}):
            raise JobFailed(MESSAGES["users_gone"])
        notes = []
        try:
            with transaction.atomic():
                if changes:
                    change = services.update_campaign(campaign=campaign, **changes)
                    campaign = change.campaign
                    notes.append(MESSAGES["saved"])
                    if change.assigned:
                        n = count_of(change.assigned, "assignment")
                        notes.append(MESSAGES["assigned_more"].format(n=n))
                for pk in add_judges:
                    n = services.add_judge(campaign=campaign, judge=users[pk])
                    notes.append(
                        MESSAGES["added_judge"].format(user=users[pk], n=count_of(n, "assignment"))
                    )
                for pk in remove_judges:
                    n = services.remove_judge(campaign=campaign, judge=users[pk])
                    notes.append(
                        MESSAGES["removed_judge"].format(
                            user=users[pk], n=count_of(n, "open assignment")
                        )
                    )
        except ValidationError as error:
            raise _failure(error) from None
        progress.result = _result(campaign, " ".join(notes))


@task
def reassign_job(
    *, job_id: int, campaign_id: int, from_judge: int, to_judge: int, topic: int | None = None
) -> None:
    """services.reassign of more open assignments than a request may move."""
    with running(job_id) as progress:
        campaign = _campaign(campaign_id)
        _announce(progress, campaign)
        users = get_user_model().objects.in_bulk([from_judge, to_judge])
        if len(users) != 2:
            raise JobFailed(MESSAGES["users_gone"])
        topic_row = None
        if topic is not None:
            topic_row = campaign.topics.filter(pk=topic).first()
            if topic_row is None:
                raise JobFailed(MESSAGES["topic_gone"])
        try:
            n = services.reassign(
                campaign=campaign,
                from_judge=users[from_judge],
                to_judge=users[to_judge],
                topic=topic_row,
            )
        except ValidationError as error:
            raise _failure(error) from None
        where = f" in topic {topic_row.qid}" if topic_row is not None else ""
        summary = MESSAGES["reassigned"].format(
            n=count_of(n, "open assignment"),
            source=users[from_judge],
            target=users[to_judge],
            where=where,
        )
        progress.result = _result(campaign, summary)


@task
def publish_job(
    *,
    job_id: int,
    campaign_id: int,
    name: str = "",
    description: str = "",
    leave_out_undecided: bool = False,
    identical_to: int | None = None,
) -> None:
    """services.adjudication.publish for a campaign of more pairs than a request may write
    (SYNC_WRITE_ROWS): its qrels version and every grade's provenance. Undecided pairs that
    block it fail the job with the reason, as the page and the API would refuse it; grades
    equal to the newest version fail it with a link to confirm the copy on the publish page."""
    with running(job_id) as progress:
        campaign = _campaign(campaign_id)
        _announce(progress, campaign)
        try:
            publication = adjudication.publish(
                campaign=campaign,
                user=progress.job.created_by,
                name=name,
                description=description,
                leave_out_undecided=leave_out_undecided,
                identical_to=identical_to,
            )
        except adjudication.PublishBlocked as blocked:
            raise JobFailed(str(blocked)) from None
        except adjudication.IdenticalGrades as same:
            query = urlencode(
                {"identical_to": same.latest.pk, "name": same.latest.name}
                | ({"description": description} if description else {})
                | ({"leave_out": "on"} if leave_out_undecided else {})
            )
            raise JobFailed(
                same.message,
                result={
                    "url": f"{reverse('annotation:publish', args=[campaign.pk])}?{query}",
                    "label": "Publish the identical copy anyway…",
                },
            ) from None
        except ValidationError as error:
            raise _failure(error) from None
        qrels = publication.qrels
        progress.result = {
            "url": qrels.get_absolute_url(),
            "label": "See the qrels",
            "summary": MESSAGES["published"].format(
                qrels=qrels.label, n=count_of(qrels.judgment_count, "grade")
            ),
            "campaign": campaign.pk,
            "publication": publication.pk,
            "qrels": qrels.pk,
        }


@task
def send_audit_job(*, job_id: int, campaign_id: int, audit_kind: str, size=None, seed=None):
    """services.audits.send_audit of more pairs than a request may write (SYNC_WRITE_ROWS),
    in the name of who started the job; chosen again here, from the grades as they are now."""
    with running(job_id) as progress:
        campaign = _campaign(campaign_id)
        _announce(progress, campaign)
        try:
            result = audits.send_audit(
                campaign=campaign,
                kind=audit_kind,
                size=size,
                seed=seed,
                user=progress.job.created_by,
            )
        except ValidationError as error:
            raise _failure(error) from None
        summary = MESSAGES["audit_sent"].format(
            n=count_of(result.sent, "pair"), assigned=count_of(result.assigned, "assignment")
        )
        progress.result = {
            **_result(campaign, summary),
            "audit": result.audit.pk if result.audit else None,
        }


@task
def refresh_agreement_task(*, campaign_id: int) -> None:
    """Recompute a campaign's agreement snapshots from its judgments as they are now: the
    default weights and every other choice of weights a lead has looked at (a snapshot of
    it exists; the first look at one computes it in the request). Queued by the first
    change to a judgment after the last refresh started
    (services.agreement.mark_agreement_stale); the flag is cleared before the judgments are
    read, so a grade given meanwhile queues the next refresh."""
    started = timezone.now()
    AgreementRefresh.objects.filter(campaign_id=campaign_id).update(
        requested_at=None, started_at=started
    )
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:  # deleted since
        return
    seen = AgreementSnapshot.objects.filter(
        campaign=campaign, resamples=agreement_service.RESAMPLES
    ).values_list("weights", flat=True)
    weights = [
        w for w in agreement_service.WEIGHTS if w in {*seen, agreement_service.DEFAULT_WEIGHTS}
    ]
    # The medians first: seconds, where the agreement numbers of a large campaign take long.
    services.store_judge_medians(campaign=campaign)
    agreement_service.refresh_agreement(campaign=campaign, weights=tuple(weights), as_of=started)
    # The same burst of grades may meet the campaign's stop rule (checked on the live board).
    live.refresh_for_stop_rule(campaign=campaign)
    # The same burst of grades may call for a new pool order (adaptive strategies only).
    if ordering.reorder_due(campaign):
        reorder_pool_task.enqueue(campaign_id=campaign_id)


@task
def reorder_pool_task(*, campaign_id: int) -> None:
    """Recompute the order of a campaign's open assignments with its pool-ordering strategy
    (services.ordering.reorder_pool). Queued after every POOL_REORDER_EVERY grades, when the
    pool or the strategy changes, and by ``manage.py reorder_pools``."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is not None:  # not deleted since
        ordering.reorder_pool(campaign=campaign)


@task
def refresh_live_board_task(*, campaign_id: int, measure: str) -> None:
    """Recompute a campaign's live leaderboard for one measure from its state now (queued
    by a page view that found the stored one stale: services.live.queue_live_refresh)."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:  # deleted since
        return
    live.refresh_live_board(campaign=campaign, measure=measure)


@task
def machine_judge_job(*, job_id: int, run_id: int) -> None:
    """Run a machine judge (annotation/services/machine_runs.py). A cancelled run ends its
    job cancelled, one that gave up on a failing endpoint failed, saying so (not retried:
    running the judge again resumes it); a crash is retryable and resumes likewise. A run
    cancelled while its job waited for a worker has ended already, its job with it: nothing
    to do (machine_runs.cancel_run)."""
    if MachineRun.objects.filter(pk=run_id, cancelled=True).exists():
        return
    with running(job_id) as progress:
        run = (
            MachineRun.objects.select_related("machine__judge__campaign").filter(pk=run_id).first()
        )
        if run is None:
            raise JobFailed(MESSAGES["campaign_gone"])
        if run.cancelled:  # cancelled between the look above and this job marked running
            raise JobCancelled(machine_runs.MESSAGES["cancel_ended"])
        url = run.machine.get_absolute_url()
        progress.result = {"url": url, "label": "See the machine judge", "summary": ""}
        Job.objects.filter(pk=progress.job.pk).update(result=progress.result)
        try:
            summary = machine_runs.run_machine_judge(run=run, progress=progress)
        except machine_runs.Cancelled as stopped:
            raise JobCancelled(str(stopped)) from None
        except machine_runs.GaveUp as stopped:
            raise JobFailed(str(stopped)) from None
        except ValidationError as error:
            raise _failure(error) from None
        progress.result = {**progress.result, "summary": summary}


@task
def gullibility_gate_job(*, job_id: int, gate_id: int) -> None:
    """Run a machine judge's gullibility gate (annotation/services/gates.py). A cancelled
    gate ends as a cancelled job that says so, like a cancelled machine run. A gate cancelled
    while its job waited for a worker has ended already, its job with it: nothing to do."""
    if GullibilityGate.objects.filter(pk=gate_id, cancelled=True).exists():
        return
    with running(job_id) as progress:
        gate = GullibilityGate.objects.select_related("machine__judge").filter(pk=gate_id).first()
        if gate is None:
            raise JobFailed(MESSAGES["campaign_gone"])
        if gate.cancelled:  # cancelled between the look above and this job marked running
            raise JobCancelled(gates.MESSAGES["cancel_ended"])
        url = reverse(
            "annotation:machine-gate", args=[gate.machine.judge.campaign_id, gate.machine_id]
        )
        progress.result = {"url": url, "label": "See the gate", "summary": ""}
        Job.objects.filter(pk=progress.job.pk).update(result=progress.result)
        try:
            progress.result["summary"] = gates.run_gate(gate=gate, progress=progress)
        except machine_runs.Cancelled as stopped:  # a lead cancelled it: says so, not retried
            raise JobCancelled(str(stopped)) from None
        except ValidationError as error:
            raise _failure(error) from None


background.register_background(
    **{
        background.REFRESH_AGREEMENT: refresh_agreement_task,
        background.REORDER_POOL: reorder_pool_task,
        background.REFRESH_LIVE_BOARD: refresh_live_board_task,
        background.MACHINE_JUDGE: machine_judge_job,
        background.GULLIBILITY_GATE: gullibility_gate_job,
    }
)
