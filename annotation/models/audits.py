"""Audits of the machine judges (annotation/services/audits.py): the pairs a lead sent to
human judges to check them, and why."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from .campaigns import Campaign
from .pool import Pair


class AuditKind(models.TextChoices):
    """Which pairs a lead sends to human judges to check the machines (annotation/auditing.py)."""

    DISAGREEMENT = "disagreement", "Machine judges disagree with each other"
    THRESHOLD = "threshold", "A machine's grade straddles the relevance threshold"
    SAMPLE = "sample", "A random sample of machine-only pairs"
    CERTIFIED = "certified", "A certified sample (a design with inclusion probabilities)"


# The kinds a lead sends by hand (services/audits.py); a certified sample is drawn on the
# certified leaderboard (services/certified.py), with its design.
SENT_BY_HAND = (AuditKind.DISAGREEMENT, AuditKind.THRESHOLD, AuditKind.SAMPLE)


class MachineAudit(models.Model):
    """Pairs a lead sent to human judges to check the machine judges
    (annotation/services/audits.py): they were given to the campaign's judges with its
    overlap, and the agreement report measures each machine on those the humans have
    graded since. A pair is sent once, whatever the kind; a random sample is known by its
    seed and size, so asking for it again sends nothing."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="audits")
    kind = models.CharField(max_length=20, choices=AuditKind.choices)
    size = models.PositiveIntegerField(null=True, blank=True, help_text="A sample's size.")
    seed = models.PositiveIntegerField(null=True, blank=True, help_text="A sample's seed.")
    sent = models.PositiveIntegerField(default=0, help_text="Pairs sent to human judges.")
    assigned = models.PositiveIntegerField(default=0, help_text="New assignments made.")
    sent_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-sent_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "seed", "size"],
                condition=Q(kind="sample"),
                name="machine_audit_sample_once",
            )
        ]

    def __str__(self):
        return f"{self.kind} audit of {self.campaign_id}: {self.sent} pairs"


class AuditPair(models.Model):
    """A pair sent for audit, and why (the reason annotation/auditing.py gave)."""

    audit = models.ForeignKey(MachineAudit, on_delete=models.CASCADE, related_name="audit_pairs")
    pair = models.OneToOneField(Pair, on_delete=models.CASCADE, related_name="audit")
    reason = models.TextField()

    class Meta:
        ordering = ["audit_id", "pair_id"]

    def __str__(self):
        return f"{self.pair_id} in audit {self.audit_id}"
