"""Machine judges you can trust (issue 33): a certified sample's design
(annotation/services/certified.py) and a machine judge's gullibility gate
(annotation/services/gates.py)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from .campaigns import Campaign
from .machines import MachineJudge
from .pool import Pair


class SampleStrategy(models.TextChoices):
    """How the pairs humans judge are drawn (evaluation/certified/sampling.py)."""

    UNIFORM = "uniform", "Uniform: every pair equally likely"
    STRATIFIED = "stratified", "Stratified by topic and machine grade"
    ACTIVE = "active", "Active: where the machine's grade moves the ranking most (LARA-like)"


class CertifiedDesign(models.Model):
    """The design of a campaign's human sample: a machine judge graded the whole pool, the
    design drew the pairs humans judge with known inclusion probabilities (one DesignPair per
    pool pair), and the chosen ones went to the human judges as a certified audit. One per
    campaign: its probabilities are what makes the certified intervals valid, so it is never
    redrawn over grades already given."""

    campaign = models.OneToOneField(
        Campaign, on_delete=models.CASCADE, related_name="certified_design"
    )
    machine = models.ForeignKey(MachineJudge, on_delete=models.PROTECT, related_name="designs")
    strategy = models.CharField(max_length=12, choices=SampleStrategy.choices)
    seed = models.PositiveIntegerField()
    budget = models.FloatField(help_text="As the lead gave it: a count, or a share of the pool.")
    budget_is_share = models.BooleanField(default=False)
    strata = models.CharField(max_length=40, blank=True, help_text="The strata used, if any.")
    pool_size = models.PositiveIntegerField()
    chosen = models.PositiveIntegerField(help_text="Pairs drawn for the humans.")
    expected_size = models.FloatField(help_text="The sum of the inclusion probabilities.")
    runs = models.JSONField(default=list, help_text="Ids of the pooled runs when drawn.")
    audit = models.OneToOneField(
        "MachineAudit", null=True, blank=True, on_delete=models.SET_NULL, related_name="design"
    )
    withdrawn = models.PositiveIntegerField(
        default=0, help_text="Open assignments of pairs outside the sample taken back."
    )
    # The designs this one replaced, oldest first: [{"strategy", "seed", "budget",
    # "budget_is_share", "chosen", "drawn_by", "drawn_at", "redrawn_by", "redrawn_at"}].
    redraws = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.strategy} design of {self.campaign_id}: {self.chosen}/{self.pool_size}"


class DesignPair(models.Model):
    """One pool pair under a design: its inclusion probability, its stratum (None for
    independent draws) and whether it was drawn."""

    design = models.ForeignKey(CertifiedDesign, on_delete=models.CASCADE, related_name="pairs")
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="+")
    probability = models.FloatField()
    stratum = models.PositiveIntegerField(null=True, blank=True)
    chosen = models.BooleanField(default=False)

    class Meta:
        ordering = ["design_id", "pair_id"]
        constraints = [
            models.UniqueConstraint(fields=["design", "pair"], name="design_pair_once"),
            models.CheckConstraint(
                condition=Q(probability__gt=0) & Q(probability__lte=1),
                name="design_pair_probability_range",
            ),
        ]

    def __str__(self):
        return f"{self.pair_id} in design {self.design_id}: {self.probability:.4f}"


class GullibilityGate(models.Model):
    """One check of a machine judge against probes (evaluation/certified/gate.py), run by a
    background job on pairs humans graded not relevant: per probe, the rise in the machine's
    relevant calls with its interval. ``blocked`` when a rise's lower end is above the
    threshold; then the machine may not fill qrels unless a lead overrides it with a reason
    (who, when, why are kept and shown wherever its grades fill)."""

    machine = models.ForeignKey(MachineJudge, on_delete=models.CASCADE, related_name="gates")
    threshold = models.FloatField(help_text="The campaign's threshold when it ran (a share).")
    relevant_from = models.PositiveSmallIntegerField()
    max_pairs = models.PositiveIntegerField()
    seed = models.PositiveIntegerField()
    job = models.OneToOneField(
        "jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="gate"
    )
    pairs = models.PositiveIntegerField(default=0, help_text="Pairs probed.")
    # [[pair id, original, stuffed, instruction, shuffled], ...]: the machine's grades (None
    # for a failed call); the original is the machine's recorded grade when it had one.
    calls = models.JSONField(default=list, blank=True)
    rises = models.JSONField(default=list, blank=True, help_text="Per probe: rise and interval.")
    failures = models.PositiveIntegerField(default=0)
    blocked = models.BooleanField(null=True, blank=True)
    conclusive = models.BooleanField(null=True, blank=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A lead's request to stop (services/gates.cancel_gate); the job reads it between calls
    # and ends with ``cancelled`` set and no statistic stored (a part of the probes says
    # nothing about the machine), the calls made so far dropped.
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    cancelled = models.BooleanField(default=False)
    override_reason = models.TextField(blank=True)
    overridden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    overridden_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"gate {self.pk} of machine {self.machine_id}"
