"""Campaigns, their topics, documents and pool, who judges what, and every grade given.

The database itself keeps the two promises judges and leads rely on, also when requests
race: a pair never has more than its campaign's overlap of judges (unique slot per pair,
slot within the overlap), and a judge never holds the same pair twice.
"""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from annotation.scales import TREC_DL_SCALE


def _new_seed() -> int:
    return secrets.randbelow(2**31)


class AdjudicationRule(models.TextChoices):
    """What settles a pair whose judges disagree (unanimous pairs are always accepted)."""

    MAJORITY = "majority", "Majority (a tie goes to the lead)"
    MEDIAN = "median", "Median (the lower median on ties)"
    LEAD = "lead", "The lead decides every disagreement"


class Campaign(models.Model):
    """One judging effort: a scale, guidelines, topics, a pool, judges, an overlap."""

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    scale = models.JSONField(default=list, help_text="[{grade, label, definition}], grades 0..n")
    guidelines = models.TextField(blank=True, help_text="Markdown, shown to judges sanitised.")
    overlap = models.PositiveSmallIntegerField(default=1, help_text="Judges per pair.")
    relevance_threshold = models.PositiveSmallIntegerField(
        default=1, help_text="Lowest grade that counts as relevant for binary measures."
    )
    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="led_campaigns"
    )
    judges = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="CampaignJudge", related_name="judged_campaigns"
    )
    seed = models.PositiveIntegerField(
        default=_new_seed, help_text="Seeds each judge's document order (reproducible)."
    )
    adjudication_rule = models.CharField(
        max_length=10,
        choices=AdjudicationRule.choices,
        default=AdjudicationRule.MAJORITY,
        help_text="How disagreements are settled before the lead steps in.",
    )
    gold_min_accuracy = models.FloatField(
        default=0.7,
        help_text="Judges whose accuracy on calibration pairs is below this are flagged.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="campaign_overlap_positive"),
            models.CheckConstraint(
                condition=Q(gold_min_accuracy__gte=0) & Q(gold_min_accuracy__lte=1),
                name="campaign_gold_min_accuracy_fraction",
            ),
        ]

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        if not self.scale:
            self.scale = TREC_DL_SCALE
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return reverse("annotation:campaign-detail", args=[self.pk])

    @property
    def grades(self) -> list[int]:
        return [item["grade"] for item in self.scale]


class CampaignJudge(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE)
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "judge"], name="campaign_judge_unique")
        ]

    def __str__(self):
        return f"{self.judge} judges {self.campaign}"


class Topic(models.Model):
    """A query with its optional description and narrative; ``qid`` is its external id."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="topics")
    qid = models.CharField(max_length=100)
    query = models.TextField()
    description = models.TextField(blank=True)
    narrative = models.TextField(blank=True)

    class Meta:
        ordering = ["qid"]
        constraints = [models.UniqueConstraint(fields=["campaign", "qid"], name="topic_qid_unique")]

    def __str__(self):
        return f"{self.qid}: {self.query[:60]}"


class Document(models.Model):
    """A result that can be judged. Pooling may add a docno before its text is imported."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="documents")
    docno = models.CharField(max_length=255)
    title = models.TextField(blank=True)
    text = models.TextField(blank=True)
    url = models.URLField(max_length=2000, blank=True)

    class Meta:
        ordering = ["docno"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "docno"], name="document_docno_unique")
        ]

    def __str__(self):
        return self.docno

    @property
    def has_text(self) -> bool:
        return bool(self.text or self.title)


class PairSource(models.TextChoices):
    POOLED = "pooled", "Depth-k pooling of runs"
    IMPORTED = "imported", "Pairs file"
    UNJUDGED = "unjudged", "Unjudged documents sent from a dashboard"
    GOLD = "gold", "Calibration pair with a known grade"


class Pair(models.Model):
    """One topic × one document inside a campaign: the thing that is judged."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pairs")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="pairs")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="pairs")
    source = models.CharField(max_length=20, choices=PairSource.choices)
    gold_grade = models.SmallIntegerField(
        null=True,
        blank=True,
        help_text="Known grade of a calibration pair: every judge gets it, unmarked.",
    )
    added_at = models.DateTimeField(auto_now_add=True)
    # The pair's tally of its judges, kept by annotation.services.tallies in the transaction
    # of every change to its assignments or judgments, so a lead's pages (the disagreement
    # queue, publishing) filter, count and order pairs in the database without reading
    # every judgment.
    judges_assigned = models.PositiveSmallIntegerField(default=0)
    judges_open = models.PositiveSmallIntegerField(default=0, help_text="Not graded nor skipped.")
    judges_graded = models.PositiveSmallIntegerField(default=0)
    lowest_grade = models.SmallIntegerField(null=True, blank=True)
    highest_grade = models.SmallIntegerField(null=True, blank=True)
    grades_tied = models.BooleanField(
        default=False, help_text="Two or more grades share the highest count: no majority."
    )

    class Meta:
        ordering = ["topic__qid", "document__docno"]
        constraints = [models.UniqueConstraint(fields=["topic", "document"], name="pair_unique")]

    def __str__(self):
        return f"{self.topic.qid} × {self.document.docno}"


class AssignmentStatus(models.TextChoices):
    OPEN = "open", "To do"
    DONE = "done", "Graded"
    SKIPPED = "skipped", "Skipped"


class Assignment(models.Model):
    """One pair given to one judge. ``slot`` numbers the pair's judges 1..overlap; the unique
    (pair, slot) and the check keep a pair within its overlap even under racing requests."""

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="assignments")
    judge = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    slot = models.PositiveSmallIntegerField()
    overlap = models.PositiveSmallIntegerField(help_text="The campaign's overlap when assigned.")
    position = models.PositiveIntegerField(help_text="Order in the judge's queue for the topic.")
    status = models.CharField(
        max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.OPEN
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pair__topic_id", "position"]  # the judge's working order
        constraints = [
            models.UniqueConstraint(fields=["pair", "judge"], name="assignment_judge_once"),
            models.UniqueConstraint(fields=["pair", "slot"], name="assignment_slot_unique"),
            models.CheckConstraint(
                condition=Q(slot__gte=1) & Q(slot__lte=F("overlap")),
                name="assignment_slot_within_overlap",
            ),
        ]
        indexes = [models.Index(fields=["judge", "status"], name="assignment_queue")]

    def __str__(self):
        return f"{self.pair} → {self.judge}"


class Judgment(models.Model):
    """A judge's grade for an assigned pair. Every change is kept in JudgmentChange."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="judgment")
    grade = models.SmallIntegerField(null=True, blank=True, help_text="Empty when skipped.")
    skip_reason = models.CharField(max_length=200, blank=True)
    note = models.TextField(blank=True)
    seconds = models.FloatField(default=0, help_text="Active time spent, summed over visits.")
    last_request = models.UUIDField(
        null=True, blank=True, help_text="Id of the last applied submission (retries are no-ops)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__isnull=False) | ~Q(skip_reason=""),
                name="judgment_graded_or_skipped",
            ),
            models.CheckConstraint(condition=Q(seconds__gte=0), name="judgment_seconds_positive"),
        ]

    def __str__(self):
        return f"{self.assignment}: {self.grade}"


class JudgmentAction(models.TextChoices):
    GRADED = "graded", "Graded"
    REGRADED = "regraded", "Changed the grade"
    SKIPPED = "skipped", "Skipped"
    UNDONE = "undone", "Undid"
    NOTED = "noted", "Changed the note"


class JudgmentChange(models.Model):
    """History: who changed which judgment when, from what to what."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="changes")
    action = models.CharField(max_length=10, choices=JudgmentAction.choices)
    old_grade = models.SmallIntegerField(null=True, blank=True)
    new_grade = models.SmallIntegerField(null=True, blank=True)
    note = models.TextField(blank=True)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["changed_at", "pk"]

    def __str__(self):
        return f"{self.changed_by} {self.action} {self.assignment_id}: {self.old_grade} → {self.new_grade}"


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


class AgreementSnapshot(models.Model):
    """A campaign's agreement numbers as last computed (annotation/services/agreement.py),
    so no page view computes them from all judgments. ``fingerprint`` names the state of
    the judgments they were computed from; ``numbers`` is what the computation returned,
    pickled (written by the app's own refresh only, like Django's database cache)."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="agreement_snapshots"
    )
    weights = models.CharField(max_length=10)
    resamples = models.PositiveIntegerField()
    fingerprint = models.CharField(max_length=64)
    computed_at = models.DateTimeField()
    seconds = models.FloatField(help_text="How long the computation took.")
    numbers = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "weights", "resamples"], name="agreement_snapshot_once"
            )
        ]

    def __str__(self):
        return f"{self.campaign_id} {self.weights} at {self.computed_at:%Y-%m-%d %H:%M:%S}"


class AgreementRefresh(models.Model):
    """Whether a recomputation of a campaign's agreement is queued: a grade sets
    ``requested_at`` (and enqueues the task) only when it is empty, so a burst of grades
    queues one recomputation; the task empties it when it starts."""

    campaign = models.OneToOneField(
        Campaign, on_delete=models.CASCADE, related_name="agreement_refresh"
    )
    requested_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(
        null=True, blank=True, help_text="When the last refresh started reading judgments."
    )

    def __str__(self):
        return f"{self.campaign_id}: {self.requested_at or 'idle'}"


class JudgeTally(models.Model):
    """A judge's tally of their assignments in a campaign (open, graded, skipped), kept by
    annotation.services.tallies in the transaction of every change to them (a grade: one
    increment), so the progress and campaign pages never count every assignment; and the
    median of their graded judgments' seconds as of ``medians_at``, recomputed with the
    agreement numbers in the background (a median cannot be kept by increments)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judge_tallies")
    judge = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judge_tallies"
    )
    open = models.IntegerField(default=0)
    graded = models.IntegerField(default=0)
    skipped = models.IntegerField(default=0)
    median_seconds = models.FloatField(null=True, blank=True)
    medians_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "judge"], name="judge_tally_once")
        ]

    def __str__(self):
        return f"{self.judge_id} in {self.campaign_id}: {self.open} open, {self.graded} graded"

    @property
    def assigned(self) -> int:
        return self.open + self.graded + self.skipped
