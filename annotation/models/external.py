"""Judges who do not judge on the campaign's pages (outside people and machines), the
imports that bring their grades, and the grades themselves."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.formats.judgments import JUDGMENT_FORMAT_LIST

from .campaigns import Campaign
from .pool import Pair


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


# The formats a JudgmentImport may have: the registry's (annotation.formats.judgments), so a
# format added there is a choice here too (ImportFormat.UMBRELA == "umbrela").
ImportFormat = models.TextChoices(
    "ImportFormat", [(f.name.upper(), (f.name, f.label)) for f in JUDGMENT_FORMAT_LIST]
)


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
