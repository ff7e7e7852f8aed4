"""Machine judges (annotation/services/machine_judges.py): an LLM judge's configuration,
its runs over the pool and its answers."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse


class MachineJudge(models.Model):
    """What makes a machine judge's grades: an LLM behind an OpenAI-compatible chat
    completions endpoint, a prompt template and its version, and the parameters. One
    configuration is one ExternalJudge (kind machine): its model, prompt and parameters never
    change once made (a new prompt version is a new machine judge), so every grade it holds
    was made the same way. Only where it is served (base URL, key) and how hard it is
    pushed (concurrency, timeout, retries, prices) may change.

    The API key is read from the environment variable ``api_key_env`` when set (only names
    the operator's prefix allows: services/machine_judges.py), else from the key stored for
    it, encrypted (``api_key_sealed``, common/secrets.py); it is never shown back anywhere,
    and a backup says only that one was stored."""

    # Left out of instance backups (jobs/backup.py): a backup never holds a key.
    secret_fields = ("api_key_sealed",)
    # Its configuration, in the order the API, the admin and backups show it; never its key.
    # The one list: the API's serializers, the admin, the backup schema and the services
    # (what may change, what makes two configurations the same) are derived from these.
    CONFIG_FIELDS = (
        "model_name",
        "model_version",
        "base_url",
        "api_key_env",
        "template_name",
        "template_version",
        "system_prompt",
        "user_prompt",
        "temperature",
        "max_tokens",
        "max_passage_chars",
        "concurrency",
        "timeout",
        "max_retries",
        "input_price",
        "output_price",
    )
    # Of those, where it is served and how hard it is pushed: a lead may change these (and
    # the key) once it is made.
    ENDPOINT_FIELDS = (
        "base_url",
        "api_key_env",
        "concurrency",
        "timeout",
        "max_retries",
        "input_price",
        "output_price",
    )
    # The rest make its grades and never change: a new prompt version is a new machine judge.
    FIXED_FIELDS = tuple(sorted(set(CONFIG_FIELDS) - set(ENDPOINT_FIELDS), key=CONFIG_FIELDS.index))

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
    api_key_sealed = models.TextField(
        blank=True, help_text="The stored key, encrypted (common/secrets.py); never shown back."
    )
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
        help_text="timeout, connection, rate_limited, server_error, unreachable, "
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

    # What an answer records, in the order the API and the backups show it (the references,
    # machine, pair, run and recorded grade, are each place's own business).
    RECORD_FIELDS = (
        "outcome",
        "grade",
        "failure",
        "reason",
        "raw",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "seconds",
        "attempts",
        "tries",
        "answered_at",
    )

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
