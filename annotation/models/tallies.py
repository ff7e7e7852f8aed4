"""Counts kept by annotation.services.tallies in the transaction of every change, so the
lead's pages add up a row per judge or topic instead of counting every assignment."""

from django.conf import settings
from django.db import models

from .campaigns import Campaign, Topic


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


class TopicTally(models.Model):
    """A topic's counts of its pairs of each kind, recounted from the pairs' tallies
    (Pair.judges_* …) by annotation.services.tallies in the transaction of every change
    to them, to a lead decision, a gold grade or the campaign's rule, under a lock on the
    topic's row: the lead's pages (the queue, publishing, progress, the pool, the campaign)
    add up a row per topic instead of counting every pair. A topic without a row has no
    pairs yet."""

    topic = models.OneToOneField(Topic, on_delete=models.CASCADE, related_name="tally")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="topic_tallies")
    pairs = models.IntegerField(default=0)
    judged = models.IntegerField(default=0, help_text="Pairs graded by at least one judge.")
    assigned = models.IntegerField(default=0, help_text="Sum of the pairs' judges_assigned.")
    open = models.IntegerField(default=0, help_text="Sum of the pairs' judges_open.")
    graded = models.IntegerField(default=0, help_text="Sum of the pairs' judges_graded.")
    disputed = models.IntegerField(default=0, help_text="Pairs graded differently.")
    waiting = models.IntegerField(default=0, help_text="Pairs a judge has still to do.")
    queue = models.IntegerField(
        default=0, help_text="Disputed pairs every judge has done that no rule or lead settled."
    )
    # The basis each decided pair has its final grade on (GradeBasis; by_rule: the
    # campaign's majority or median rule, unanimous pairs apart).
    lead = models.IntegerField(default=0)
    gold = models.IntegerField(default=0)
    unanimous = models.IntegerField(default=0)
    by_rule = models.IntegerField(default=0)

    def __str__(self):
        return f"{self.topic_id}: {self.pairs} pairs, {self.queue} to decide"
