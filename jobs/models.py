"""What a person waits for: one row per long piece of work (an import, a scoring, a pool),
updated by the background task as it goes, read by the progress bar and the API.

django.tasks runs the work (in-process on the embedded default, on workers in production)
but has no notion of progress or of a user-facing error list; this row carries both. It also
keeps which task did the work and with what arguments, so that work a crash or a killed worker
interrupted can be started again (jobs.services.retry_job).

A running job's ``updated_at`` is its heartbeat: jobs.services.running refreshes it every
``HEARTBEAT_SECONDS`` while the work goes on, so a running job not updated for
``STALE_AFTER_SECONDS`` has lost its worker (killed, out of memory, machine gone)."""

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

# Far apart enough to cost nothing, close enough that a dead worker is noticed in minutes.
HEARTBEAT_SECONDS = settings.JOB_HEARTBEAT_SECONDS
STALE_AFTER_SECONDS = settings.JOB_STALE_AFTER_SECONDS


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Done"
    FAILED = "failed", "Failed"
    # Its user stopped the work (a machine judge's run, a gate): not a failure, not retried.
    CANCELLED = "cancelled", "Cancelled"


class Job(models.Model):
    kind = models.CharField(max_length=50)
    title = models.CharField(max_length=300)
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    step = models.CharField(max_length=200, blank=True, help_text="What it is doing now.")
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=1)
    errors = models.JSONField(default=list, blank=True, help_text="file:line errors, capped.")
    error_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True)
    task = models.CharField(
        max_length=200, blank=True, help_text="The task's import path, to start it again."
    )
    params = models.JSONField(default=dict, blank=True, help_text="The task's arguments.")
    task_result_id = models.CharField(
        max_length=64,
        blank=True,
        help_text="The task backend's id of the latest enqueued attempt (the database queue's "
        "row), to find a job whose worker took it and died before starting it.",
    )
    attempt = models.PositiveIntegerField(default=1)
    retryable = models.BooleanField(
        default=False, help_text="It failed in a way that trying again may fix (not a bad file)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.title} ({self.get_status_display()})"

    def get_absolute_url(self):
        return reverse("jobs:job-detail", args=[self.pk])

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)

    @property
    def stalled(self) -> bool:
        """Running, but its worker has not been heard of for too long: it died."""
        cutoff = timezone.now() - timedelta(seconds=STALE_AFTER_SECONDS)
        return self.status == JobStatus.RUNNING and self.updated_at < cutoff

    @property
    def can_retry(self) -> bool:
        return bool(self.task) and (
            (self.status == JobStatus.FAILED and self.retryable) or self.stalled
        )

    @property
    def percent(self) -> int:
        if self.status == JobStatus.SUCCEEDED:
            return 100
        return min(99, round(100 * self.done / self.total)) if self.total else 0
