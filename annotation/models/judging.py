"""Who judges what and the grades they give: assignments, judgments and the history of
every change to them.

The database itself keeps the two promises judges and leads rely on, also when requests
race: a pair never has more than its campaign's overlap of judges (unique slot per pair,
slot within the overlap), and a judge never holds the same pair twice.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from .pool import Pair


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
