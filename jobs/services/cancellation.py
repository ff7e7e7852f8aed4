"""Cancelling work a background job does for a record a user can stop (a machine judge's run,
a gullibility gate): one rule for every such kind, so none is left "asked to stop" forever.

The record has a ``job`` (its background job, null when the work runs in a process of its
own, as ``manage.py run_machine_judge`` does), ``cancel_requested_at`` (the work reads it
between steps and stops), ``cancelled`` and ``finished_at``. Asking is not enough while the
job is still queued: no worker has the work yet to read the request, and a queue may keep a
job waiting for a long time, or forever when no worker runs, so the record would show
"asked to stop" until then. Such a job is ended at once instead (its row cancelled, not to
be tried again, ``step`` saying why) and the record ends cancelled with it, nothing of the work
done. The task, if a worker takes it later, must find the record cancelled and do nothing
(jobs know only their row): the work's task checks ``cancelled`` before it marks its job
running and again after, since the end may land in between.
"""

from django.db import transaction
from django.db.models import Model, Q
from django.utils import timezone

from jobs.services import end_queued_job

__all__ = ["CANCEL_ASKED", "CANCEL_ENDED", "CANCEL_LATE", "cancel_work"]

# What cancel_work did (a caller's message table says it to the user).
CANCEL_ENDED = "ended"  # its job had not started: the work ended cancelled at once
CANCEL_ASKED = "asked"  # its job runs (or it has none): it stops at its next look
CANCEL_LATE = "late"  # it had finished, or was asked already: nothing changed


def cancel_work(*, model: type[Model], pk: int, step: str, still_open: Q | None = None) -> str:
    """Stop the work of ``model`` row ``pk`` (see the module). ``still_open``: conditions
    besides not finished, not cancelled and not asked already under which the work can still
    be stopped (a gate with a verdict cannot). Returns CANCEL_ENDED (its job was queued: now
    cancelled with ``step``, the record cancelled and finished), CANCEL_ASKED (a worker has the
    job, or the work has no job: it stops at its next look) or CANCEL_LATE."""
    now = timezone.now()
    with transaction.atomic():
        asked = model.objects.filter(
            still_open or Q(),
            pk=pk,
            cancel_requested_at__isnull=True,
            finished_at__isnull=True,
            cancelled=False,
        ).update(cancel_requested_at=now)
        if not asked:
            return CANCEL_LATE
        job_id = model.objects.filter(pk=pk).values_list("job_id", flat=True)[0]
        # Only while the job row is still queued: a worker marks it running first, so a job
        # that has started is asked instead; one that is marked running after this commits
        # finds the record cancelled and ends (the task's second look).
        if job_id is not None and end_queued_job(job_id=job_id, step=step):
            model.objects.filter(pk=pk).update(cancelled=True, finished_at=now)
            return CANCEL_ENDED
    return CANCEL_ASKED
