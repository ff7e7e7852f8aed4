"""A pair's final grade: a lead's decisions, and the publications that freeze a campaign's
adjudicated grades as a qrels version with the provenance of each grade."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from .campaigns import AdjudicationRule, Campaign
from .pool import Pair


class LeadDecision(models.Model):
    """A lead's decision on a pair's final grade, with the reason. Append-only: a new
    decision supersedes the pair's current one, and each decision can be superseded once
    (a one-to-one), so two leads deciding at once cannot both win: the second is a
    conflict, not a silent overwrite."""

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="decisions")
    grade = models.SmallIntegerField()
    reason = models.TextField()
    rule = models.CharField(
        max_length=10,
        choices=AdjudicationRule.choices,
        blank=True,
        help_text="The campaign's rule when the lead decided (empty: decided before it was kept).",
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now_add=True)
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )

    class Meta:
        ordering = ["decided_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["pair"],
                condition=Q(supersedes__isnull=True),
                name="lead_decision_first_once",
            )
        ]

    def __str__(self):
        return f"{self.pair_id}: {self.grade} by {self.decided_by}"


class GradeBasis(models.TextChoices):
    """Why a published pair has its grade (its provenance)."""

    UNANIMOUS = "unanimous", "Every judge gave it"
    MAJORITY = "majority", "Most judges gave it"
    MEDIAN = "median", "The median of the judges' grades"
    LEAD = "lead", "The lead decided"
    GOLD = "gold", "Known grade of a calibration pair"
    MACHINE = "machine", "No human graded it: a machine judge's grade"


class Publication(models.Model):
    """A campaign's adjudicated grades frozen as a qrels version, and how they were made."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="publications")
    qrels = models.OneToOneField(
        "evaluation.QrelsVersion", on_delete=models.PROTECT, related_name="publication"
    )
    rule = models.CharField(max_length=10, choices=AdjudicationRule.choices)
    relevance_threshold = models.PositiveSmallIntegerField(
        help_text="The campaign's relevance threshold when published: the binary qrels of "
        "this version use it, whatever the campaign's threshold becomes later."
    )
    counts = models.JSONField(help_text="Published pairs per basis, and pairs left out.")
    left_out = models.JSONField(default=list, help_text="[qid, docno, why] of undecided pairs.")
    machine_gates = models.JSONField(
        default=dict,
        blank=True,
        help_text="{machine label: its gullibility gate when its grades filled pairs: "
        "verdict, gate id, and an override's reason, who and when}.",
    )
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    published_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-published_at"]

    def __str__(self):
        return f"{self.campaign} → {self.qrels}"


class PublishedGrade(models.Model):
    """Provenance of one published grade: its basis and every judge's grade."""

    publication = models.ForeignKey(Publication, on_delete=models.CASCADE, related_name="grades")
    qid = models.CharField(max_length=100)
    docno = models.CharField(max_length=255)
    grade = models.SmallIntegerField()
    basis = models.CharField(max_length=10, choices=GradeBasis.choices)
    judges = models.JSONField(help_text="{username: grade} of the judges who graded it.")
    decision = models.ForeignKey(
        LeadDecision, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["qid", "docno"]
        constraints = [
            models.UniqueConstraint(
                fields=["publication", "qid", "docno"], name="published_grade_once"
            )
        ]

    def __str__(self):
        return f"{self.qid} {self.docno} {self.grade} ({self.basis})"
