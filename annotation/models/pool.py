"""The pool: the pairs of a campaign (topic × document) and the runs pooled into it."""

from django.db import models
from django.db.models import Q

from .campaigns import Campaign, Document, Topic


class PairSource(models.TextChoices):
    POOLED = "pooled", "Depth-k pooling of runs"
    IMPORTED = "imported", "Pairs file"
    UNJUDGED = "unjudged", "Unjudged documents sent from a dashboard"
    GOLD = "gold", "Calibration pair with a known grade"
    GRADED = "graded", "Graded elsewhere (added by a judgments import)"


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
    machines_graded = models.PositiveSmallIntegerField(
        default=0,
        help_text="Of judges_graded, the machine judges' grades (counted when the campaign "
        "lets them adjudicate): they settle a pair beside a human's grade, never alone.",
    )

    class Meta:
        ordering = ["topic__qid", "document__docno"]
        constraints = [models.UniqueConstraint(fields=["topic", "document"], name="pair_unique")]
        indexes = [
            # The pool page's count of calibration pairs (a few among many).
            models.Index(
                fields=["campaign"], condition=Q(gold_grade__isnull=False), name="pair_gold"
            )
        ]

    def __str__(self):
        return f"{self.topic.qid} × {self.document.docno}"


class PooledRun(models.Model):
    """A stored run pooled into a campaign and the depth it was pooled at: which systems a
    live leaderboard ranks while judges work, and the pool depth the leave-one-run-out test
    of the campaign's qrels uses. Pooling the same run again keeps the deeper depth."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pooled_runs")
    run = models.ForeignKey("evaluation.Run", on_delete=models.CASCADE, related_name="+")
    depth = models.PositiveIntegerField()
    pooled_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "run"]
        constraints = [models.UniqueConstraint(fields=["campaign", "run"], name="pooled_run_once")]

    def __str__(self):
        return f"{self.run_id} pooled at depth {self.depth} into {self.campaign_id}"
