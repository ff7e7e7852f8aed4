"""Numbers computed in the background and stored so no page view computes them: a
campaign's agreement and its live leaderboard."""

from django.db import models

from .campaigns import Campaign


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


class LiveBoardSnapshot(models.Model):
    """A running campaign's live leaderboard for one measure as last computed
    (annotation/services/live.py), under a fingerprint of the state of its grades, pool and
    pooled runs, so no page view and no grade computes it."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="live_board_snapshots"
    )
    measure = models.CharField(max_length=100)
    fingerprint = models.CharField(max_length=64)
    computed_at = models.DateTimeField()
    seconds = models.FloatField(help_text="How long the computation took.")
    numbers = models.JSONField(help_text="The board, as annotation.live_board.LiveBoard.as_dict.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "measure"], name="live_board_once")
        ]

    def __str__(self):
        return f"{self.campaign_id} {self.measure} at {self.computed_at:%Y-%m-%d %H:%M:%S}"
