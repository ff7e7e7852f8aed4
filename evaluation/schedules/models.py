"""The tables of scheduled evaluations, loaded by evaluation/models.py (so they are the
evaluation app's): a schedule, each of its firings, the alerts a drop or a failed firing
raised, and each change made to a schedule. The related models are named by string, so this
module imports none of evaluation's others."""

from django.conf import settings
from django.db import models
from django.urls import reverse


class Schedule(models.Model):
    """An endpoint asked a query set (a campaign's topics, or a qrels version's) on a cron
    expression; each firing's run is scored against ``qrels`` with ``measures``, and a drop of
    the first measure (``alert_measure``) raises an alert. It runs as its owner, who alone
    (and admins) sees it. ``next_run_at`` is the slot the clock waits for: a tick that finds
    it past fires once and moves it past now (evaluation/schedules/cron.py, ``due``)."""

    name = models.CharField(max_length=100)
    endpoint = models.ForeignKey(
        "evaluation.SearchEndpoint", on_delete=models.CASCADE, related_name="schedules"
    )
    campaign = models.PositiveIntegerField(
        null=True, blank=True, help_text="Query set: the topics of this campaign (its id)."
    )
    topics_qrels = models.ForeignKey(
        "evaluation.QrelsVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Query set: the topics of this qrels version.",
    )
    query_set = models.CharField(max_length=300, help_text="The query set's label.")
    qrels = models.ForeignKey(
        "evaluation.QrelsVersion", on_delete=models.PROTECT, related_name="schedules"
    )
    measures = models.JSONField(help_text="Canonical measure specs, as the dashboards'.")
    alert_measure = models.CharField(max_length=100, help_text="The output name watched.")
    k = models.PositiveIntegerField()
    cron = models.CharField(max_length=100)
    threshold = models.FloatField(null=True, blank=True, help_text="An absolute drop.")
    alert_on_interval = models.BooleanField(default=True)
    webhook_url = models.CharField(max_length=2000, blank=True)
    webhook_secret_sealed = models.TextField(blank=True)
    emails = models.JSONField(default=list, blank=True)
    paused = models.BooleanField(default=False)
    next_run_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="schedules"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        indexes = [models.Index(fields=["paused", "next_run_at"], name="schedule_due")]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("evaluation:schedule-detail", args=[self.pk])


class FiringStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    SUCCEEDED = "succeeded", "Done"
    FAILED = "failed", "Failed"


class ScheduleFiring(models.Model):
    """One firing of a schedule, for one slot (never two rows for a slot: two clocks ticking
    at once make one), with the job that does it, the run and evaluation it made, and the
    watched measure's mean and interval (the history chart's points)."""

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="firings")
    slot = models.DateTimeField(help_text="The cron slot this firing is for.")
    missed = models.PositiveIntegerField(default=0, help_text="Earlier slots caught up with it.")
    fired_at = models.DateTimeField()
    job_id = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=FiringStatus.choices, default=FiringStatus.QUEUED
    )
    message = models.CharField(max_length=1000, blank=True)
    run = models.ForeignKey(
        "evaluation.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    evaluation = models.ForeignKey(
        "evaluation.Evaluation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    mean = models.FloatField(null=True, blank=True)
    low = models.FloatField(null=True, blank=True)
    high = models.FloatField(null=True, blank=True)
    failed_queries = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    # What it was scored with (a schedule's measures and qrels may change): a drop is measured
    # only against an earlier firing scored the same way.
    measure = models.CharField(max_length=100, blank=True, help_text="The watched output name.")
    qrels = models.ForeignKey(
        "evaluation.QrelsVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    recovery = models.CharField(
        max_length=1000, blank=True, help_text="What the clock did when its worker was lost."
    )

    class Meta:
        ordering = ["-slot"]
        constraints = [
            models.UniqueConstraint(fields=["schedule", "slot"], name="schedule_firing_once")
        ]

    def __str__(self):
        return f"{self.schedule} at {self.slot:%Y-%m-%d %H:%M}"


class DeliveryStatus(models.TextChoices):
    NONE = "none", "Not configured"
    PENDING = "pending", "Pending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"


class AlertKind(models.TextChoices):
    DROP = "drop", "Quality dropped"
    FAILURE = "failure", "Firing failed"


class ScheduleAlert(models.Model):
    """A drop a firing showed (evaluation/schedules/drops.py), or a firing that failed as a
    whole (``message`` says what failed; one alert per run of consecutive failed firings,
    ``failures`` counting them), and how telling about it went: the webhook (attempts, the
    last error: shown on the schedule's page) and the e-mail. Shown as a banner until
    someone acknowledges it."""

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="alerts")
    firing = models.OneToOneField(ScheduleFiring, on_delete=models.CASCADE, related_name="alert")
    kind = models.CharField(max_length=10, choices=AlertKind.choices, default=AlertKind.DROP)
    measure = models.CharField(max_length=100)
    previous = models.FloatField(null=True, blank=True)
    current = models.FloatField(null=True, blank=True)
    message = models.CharField(max_length=1000, blank=True, help_text="What failed.")
    failures = models.PositiveIntegerField(
        default=0, help_text="Consecutive failed firings this failure alert stands for."
    )
    low = models.FloatField(null=True, blank=True)
    high = models.FloatField(null=True, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    reasons = models.JSONField(default=list)
    created_at = models.DateTimeField()
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    webhook_status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.NONE
    )
    webhook_attempts = models.PositiveIntegerField(default=0)
    webhook_error = models.CharField(max_length=500, blank=True)
    webhook_http_status = models.PositiveIntegerField(null=True, blank=True)
    email_status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.NONE
    )
    email_error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        if self.kind == AlertKind.FAILURE:
            return f"{self.schedule}: failed ({self.failures} firings)"
        return f"{self.schedule}: {self.measure} {self.previous:.4f} -> {self.current:.4f}"


class ScheduleChange(models.Model):
    """One edit of a schedule: who, when, and each field's value before and after (a
    webhook secret only as "changed": it is never shown)."""

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="changes")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField()
    changes = models.JSONField(help_text="field -> [before, after]")

    class Meta:
        ordering = ["-changed_at", "-pk"]

    def __str__(self):
        return f"{self.schedule} changed {', '.join(self.changes)}"
