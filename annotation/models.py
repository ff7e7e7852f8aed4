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
    (annotation/settling.py, evaluated where the live board is refreshed)."""

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
        indexes = [
            # The pool page's documents without text (usually few of many) and its per-topic
            # counts of them: found without reading every document.
            models.Index(
                fields=["campaign"], condition=Q(text="", title=""), name="document_lacking_text"
            )
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


class JudgeKind(models.TextChoices):
    """The three kinds of judge. People who judge here are users (CampaignJudge,
    Assignment, Judgment); the other two are ExternalJudge rows whose grades are
    ExternalGrade rows, outside the assignments, so they never take a slot of a pair's
    overlap."""

    HERE = "here", "A person judging here"
    OUTSIDE = "outside", "An outside person (grades imported, no login)"
    MACHINE = "machine", "A machine"


# The kinds an ExternalJudge (and the judges of an import) may be.
EXTERNAL_JUDGE_KINDS = [c for c in JudgeKind.choices if c[0] != JudgeKind.HERE]


class ExternalJudge(models.Model):
    """A judge of a campaign who does not judge on its pages: an outside person (a crowd
    worker, another tool's assessor) whose grades are imported, or a machine (an LLM judge
    configuration; one configuration, one machine judge: a new prompt version is a new
    judge). Shown as ``kind:name`` (``outside:w17``, ``machine:gpt-4o-umbrela``), which
    no username can be (usernames hold no colon; a name may, the kind ends at the first)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="external_judges")
    kind = models.CharField(max_length=10, choices=EXTERNAL_JUDGE_KINDS)
    name = models.CharField(max_length=150)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="external_judge_name_unique"),
            models.CheckConstraint(
                condition=Q(kind__in=[JudgeKind.OUTSIDE, JudgeKind.MACHINE]),
                name="external_judge_kind_valid",
            ),
        ]

    def __str__(self):
        return self.label

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}"

    @property
    def is_machine(self) -> bool:
        return self.kind == JudgeKind.MACHINE


class ImportFormat(models.TextChoices):
    TABLE = "table", "CSV/TSV: qid, docno, judge, grade"
    JSONL = "jsonl", "JSONL: qid, docno, judge, grade"
    QRELS = "qrels", "TREC qrels file (one named judge)"
    UMBRELA = "umbrela", "UMBRELA JSONL"
    AUTOJUDGE = "autojudge", "autojudge-annotate JSONL"


class JudgmentImport(models.Model):
    """Provenance of imported grades: one file, imported once (the same file again, with
    the same choices, changes nothing and is not recorded twice)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="imports")
    file_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    format = models.CharField(max_length=10, choices=ImportFormat.choices)
    judge_kind = models.CharField(
        max_length=10,
        choices=EXTERNAL_JUDGE_KINDS,
        help_text="The kind of judge the file's judges are.",
    )
    mapping = models.JSONField(
        default=dict, blank=True, help_text="{grade or label in the file: grade on the scale}"
    )
    options = models.JSONField(default=dict, blank=True, help_text="The importer's other choices.")
    counts = models.JSONField(default=dict, help_text="Grades added, changed, unchanged; …")
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-imported_at", "-pk"]

    def __str__(self):
        return f"{self.file_name} ({self.sha256[:12]}) into {self.campaign_id}"


class ExternalGrade(models.Model):
    """An outside or machine judge's grade of a pair: one per pair per judge. ``source`` is
    the import that gave it (None for a grade a machine judge recorded here, whose raw
    answer the runner keeps). ``details`` keeps what the source said about it (an LLM
    tool's model, prompt, reasoning; an annotation tool's label)."""

    judge = models.ForeignKey(ExternalJudge, on_delete=models.CASCADE, related_name="grades")
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="external_grades")
    grade = models.SmallIntegerField()
    note = models.TextField(blank=True)
    seconds = models.FloatField(null=True, blank=True)
    judged_at = models.DateTimeField(null=True, blank=True, help_text="When the source says.")
    details = models.JSONField(default=dict, blank=True)
    source = models.ForeignKey(
        JudgmentImport,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="grades",
    )
    recorded_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pair_id", "judge_id"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "pair"], name="external_grade_once"),
            models.CheckConstraint(
                condition=Q(seconds__isnull=True) | Q(seconds__gte=0),
                name="external_grade_seconds_positive",
            ),
        ]

    def __str__(self):
        return f"{self.pair_id} {self.judge_id}: {self.grade}"


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
    numbers = models.JSONField(help_text="The board, as annotation.settling.LiveBoard.as_dict.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "measure"], name="live_board_once")
        ]

    def __str__(self):
        return f"{self.campaign_id} {self.measure} at {self.computed_at:%Y-%m-%d %H:%M:%S}"


# --- machine judges (annotation/services/machine_judges.py) ----------------------------------


class MachineJudge(models.Model):
    """What makes a machine judge's grades: an LLM behind an OpenAI-compatible chat
    completions endpoint, a prompt template and its version, and the parameters. One
    configuration is one ExternalJudge (kind machine): its model, prompt and parameters never
    change once made (a new prompt version is a new machine judge), so every grade it holds
    was made the same way. Only where it is served (base URL, key) and how hard it is
    pushed (concurrency, timeout, retries, prices) may change.

    The API key is read from the environment variable ``api_key_env`` when set, else from
    ``api_key`` (set in the admin or through the API); it is never shown back anywhere."""

    judge = models.OneToOneField("ExternalJudge", on_delete=models.CASCADE, related_name="machine")
    model_name = models.CharField(max_length=200, help_text="As the endpoint names it.")
    model_version = models.CharField(
        max_length=200, blank=True, help_text="A snapshot date, a quantisation, a commit."
    )
    base_url = models.CharField(
        max_length=500, help_text="Where the API's paths start, e.g. https://api.openai.com/v1"
    )
    api_key_env = models.CharField(
        max_length=100, blank=True, help_text="Environment variable holding the key."
    )
    api_key = models.CharField(max_length=500, blank=True, help_text="Never shown back.")
    template_name = models.CharField(max_length=100)
    template_version = models.CharField(max_length=50)
    system_prompt = models.TextField(blank=True)
    user_prompt = models.TextField()
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=16)
    max_passage_chars = models.PositiveIntegerField(default=8000)
    concurrency = models.PositiveSmallIntegerField(default=4)
    timeout = models.FloatField(default=60.0, help_text="Seconds to wait for an answer.")
    max_retries = models.PositiveSmallIntegerField(default=4)
    input_price = models.FloatField(
        null=True, blank=True, help_text="Cost per million prompt tokens (empty: unknown)."
    )
    output_price = models.FloatField(
        null=True, blank=True, help_text="Cost per million completion tokens (empty: unknown)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(temperature__gte=0) & Q(temperature__lte=2),
                name="machine_judge_temperature_range",
            ),
            models.CheckConstraint(
                condition=Q(concurrency__gte=1) & Q(concurrency__lte=64),
                name="machine_judge_concurrency_range",
            ),
            models.CheckConstraint(
                condition=Q(timeout__gt=0), name="machine_judge_timeout_positive"
            ),
        ]

    def __str__(self):
        return (
            f"{self.judge.label} ({self.model_name}, {self.template_name} v{self.template_version})"
        )

    def get_absolute_url(self):
        return reverse("annotation:machine-judge", args=[self.judge.campaign_id, self.pk])


class MachineScope(models.TextChoices):
    POOL = "pool", "The whole pool"
    TOPIC = "topic", "One topic"
    UNJUDGED = "unjudged", "Pairs no human has graded yet"


class MachineRun(models.Model):
    """One run of a machine judge over part of its campaign's pool, done by a background
    job. Its figures grow as answers come; ``cancel_requested_at`` asks the job to stop
    starting new requests. A run skips the pairs its judge has graded already, so running
    again resumes where a cancelled or crashed run stopped and retries its failures."""

    machine = models.ForeignKey(MachineJudge, on_delete=models.CASCADE, related_name="runs")
    scope = models.CharField(max_length=10, choices=MachineScope.choices)
    topic = models.ForeignKey(
        "Topic", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    job = models.OneToOneField(
        "jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="machine_run"
    )
    pairs = models.PositiveIntegerField(default=0, help_text="Pairs it set out to grade.")
    graded = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost = models.FloatField(null=True, blank=True, help_text="Summed when every cost is known.")
    seconds = models.FloatField(default=0, help_text="Wall-clock time of its requests.")
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    cancelled = models.BooleanField(default=False)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"{self.machine.judge.label} over {self.scope} ({self.graded}/{self.pairs})"


class MachineOutcome(models.TextChoices):
    GRADED = "graded", "Graded"
    FAILED = "failed", "Failed"


class MachineAnswer(models.Model):
    """What a machine judge answered for a pair, kept beside its grade: the raw answer,
    tokens, cost and time; or, for a failure, why and the raw text (an answer that is not a
    grade on the scale is never guessed). One per pair per machine judge: a later run that
    grades a failed pair replaces its failure."""

    machine = models.ForeignKey(MachineJudge, on_delete=models.CASCADE, related_name="answers")
    pair = models.ForeignKey("Pair", on_delete=models.CASCADE, related_name="machine_answers")
    run = models.ForeignKey(
        MachineRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="answers"
    )
    outcome = models.CharField(max_length=10, choices=MachineOutcome.choices)
    grade = models.SmallIntegerField(null=True, blank=True)
    recorded = models.OneToOneField(
        "ExternalGrade",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="machine_answer",
        help_text="The grade as recorded (empty for a failure).",
    )
    failure = models.CharField(
        max_length=20,
        blank=True,
        help_text="timeout, connection, rate_limited, server_error, "
        "refused, bad_response, not_a_grade, no_text",
    )
    reason = models.TextField(blank=True)
    raw = models.TextField(blank=True, help_text="The answer as it came.")
    model = models.CharField(max_length=200, blank=True, help_text="As the endpoint named it.")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    tries = models.PositiveIntegerField(default=1, help_text="Runs that asked for this pair.")
    answered_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pair_id"]
        constraints = [
            models.UniqueConstraint(fields=["machine", "pair"], name="machine_answer_once"),
            models.CheckConstraint(
                condition=(Q(outcome="graded") & Q(grade__isnull=False))
                | (Q(outcome="failed") & Q(grade__isnull=True)),
                name="machine_answer_graded_has_grade",
            ),
        ]
        indexes = [models.Index(fields=["machine", "outcome"], name="machine_answer_outcome")]

    def __str__(self):
        return f"{self.machine_id} {self.pair_id}: {self.grade if self.grade is not None else self.failure}"


class AuditKind(models.TextChoices):
    """Which pairs a lead sends to human judges to check the machines (annotation/auditing.py)."""

    DISAGREEMENT = "disagreement", "Machine judges disagree with each other"
    THRESHOLD = "threshold", "A machine's grade straddles the relevance threshold"
    SAMPLE = "sample", "A random sample of machine-only pairs"


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
