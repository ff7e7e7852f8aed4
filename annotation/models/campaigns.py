"""Campaigns and what they are made of: the scale and rules a lead chooses, the judges
taking part, the topics and the documents."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from accounts.services.teams import default_team_pk
from annotation.agreement.anchoring import MAX_BLIND_SHARE, MIN_BLIND_SHARE
from annotation.scales import TREC_DL_SCALE


def _new_seed() -> int:
    return secrets.randbelow(2**31)


class AdjudicationRule(models.TextChoices):
    """What settles a pair whose judges disagree (unanimous pairs are always accepted)."""

    MAJORITY = "majority", "Majority (a tie goes to the lead)"
    MEDIAN = "median", "Median (the lower median on ties)"
    LEAD = "lead", "The lead decides every disagreement"


class PoolOrdering(models.TextChoices):
    """Which pair of the pool judges see next (annotation/strategies/)."""

    RANDOM = "random", "Random, topic by topic"
    MOVE_TO_FRONT = "move_to_front", "Move-to-front (Cormack et al. 1998)"
    BANDIT = "bandit", "Bandit (Losada et al. 2017, MM-NS)"
    BANDIT_ACROSS_TOPICS = (
        "bandit_across_topics",
        "Bandit over every topic's runs (judgments go where relevant documents keep coming)",
    )
    DISCRIMINATIVE = "discriminative", "Discriminative for nDCG@10 (MTC, Carterette et al. 2006)"


class StopRule(models.TextChoices):
    """When judging may stop because the ranking of the pooled runs is settled
    (annotation/live_board.py, evaluated where the live board is refreshed)."""

    NONE = "none", "None: judge the whole pool"
    ADJACENT = "adjacent", "Every pair of adjacent runs settled"
    TOP = "top", "The top k runs settled against every run below them"


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
    # Its machine judges, pool, judgments and publications belong to the campaign's team.
    team = models.ForeignKey(
        "accounts.Team", on_delete=models.PROTECT, default=default_team_pk, related_name="+"
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
    pool_ordering = models.CharField(
        max_length=20,
        choices=PoolOrdering.choices,
        default=PoolOrdering.RANDOM,
        help_text="The order judges get the pool in; all but random adapt to the grades.",
    )
    # {"graded": grades seen by the last recomputation of the order, "at": when; the runs
    # come from pooled_runs}; services/ordering.py owns it.
    pool_ordering_state = models.JSONField(default=dict, blank=True)
    machine_grades_adjudicate = models.BooleanField(
        default=False,
        help_text="Machine judges' grades count in adjudication beside the humans' grades.",
    )
    machine_grades_fill = models.BooleanField(
        default=False,
        help_text="A publication may give pairs no human graded a machine judge's grade "
        "(flagged in the provenance download; the qrels version says how many).",
    )
    # Post-editing with a control group (annotation/agreement/anchoring.py): judges see this
    # machine judge's grade as a suggestion, but for a seeded blind share of their pairs.
    suggestions_from = models.ForeignKey(
        "MachineJudge",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Show judges this machine judge's grade as a suggestion (empty: none).",
    )
    blind_share = models.FloatField(
        default=0.2,
        help_text="The share of each judge's pairs shown without the suggestion (the control).",
    )
    gate_threshold = models.FloatField(
        default=0.02,
        help_text="A machine judge may not fill qrels when a probe raises its relevant calls "
        "on pairs humans graded not relevant by more than this share (the interval's lower "
        "end; 0.02 is 2 points), unless the lead overrides it with a reason.",
    )
    stop_rule = models.CharField(
        max_length=10,
        choices=StopRule.choices,
        default=StopRule.NONE,
        help_text="Pause handing out pairs once the ranking of the pooled runs is settled.",
    )
    stop_confidence = models.FloatField(
        default=0.95,
        help_text="A pair counts as settled when the bounds decide it or the probability "
        "of its order under the model is at least this.",
    )
    stop_top = models.PositiveSmallIntegerField(
        default=3, help_text="k of the top-k rule: the runs that must be settled."
    )
    # The flag the judging paths read (one column of a row they load anyway); set by the
    # background refresh of the live board when the stop rule is met, cleared by the lead.
    paused_at = models.DateTimeField(null=True, blank=True)
    # What the stop rule did: {"rule", "confidence", "top", "measure", "spent", "at"} when it
    # paused judging, plus {"resumed_at", "resumed_by"} once the lead resumed (the rule then
    # stays quiet until the lead sets a rule again). services/stopping.py owns it.
    stop_event = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="campaign_overlap_positive"),
            models.CheckConstraint(
                condition=Q(stop_confidence__gt=0.5) & Q(stop_confidence__lt=1),
                name="campaign_stop_confidence_range",
            ),
            models.CheckConstraint(condition=Q(stop_top__gte=1), name="campaign_stop_top_positive"),
            models.CheckConstraint(
                condition=Q(gate_threshold__gte=0) & Q(gate_threshold__lt=1),
                name="campaign_gate_threshold_range",
            ),
            models.CheckConstraint(
                condition=Q(gold_min_accuracy__gte=0) & Q(gold_min_accuracy__lte=1),
                name="campaign_gold_min_accuracy_fraction",
            ),
            models.CheckConstraint(
                condition=Q(blind_share__gte=MIN_BLIND_SHARE) & Q(blind_share__lte=MAX_BLIND_SHARE),
                name="campaign_blind_share_range",
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


def lacking_text(prefix: str = "") -> Q:
    """A document with neither title nor text (pooling adds docnos before their text is
    imported): judges cannot grade it. ``prefix`` reaches it through a relation, e.g.
    ``"pair__document__"`` from an assignment."""
    return Q(**{f"{prefix}text": "", f"{prefix}title": ""})


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
        indexes = [
            # The pool page's documents without text (usually few of many) and its per-topic
            # counts of them: found without reading every document.
            models.Index(
                fields=["campaign"], condition=lacking_text(), name="document_lacking_text"
            )
        ]

    def __str__(self):
        return self.docno

    @property
    def has_text(self) -> bool:
        return bool(self.text or self.title)
