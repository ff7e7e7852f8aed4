"""Qrels versions, systems, runs and their evaluations.

Qrels versions and runs are immutable once stored, so an evaluation keyed on
(run, qrels version, options) can never go stale; the options key also carries the measures
engine version, so a change in how numbers are computed gives new keys, not old numbers.
"""

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from accounts.services.teams import default_team_pk


def _team_field():
    """What belongs to a team (accounts/services/teams.py); code that names none puts it in
    the default team."""
    return models.ForeignKey(
        "accounts.Team", on_delete=models.PROTECT, default=default_team_pk, related_name="+"
    )


class ImmutableError(Exception):
    """Raised when code tries to change a stored qrels version or run."""


class QrelsSource(models.TextChoices):
    IMPORTED = "imported", "Imported from a TREC qrels file"
    CAMPAIGN = "campaign", "Published from a campaign"


class QrelsVersion(models.Model):
    """A published, immutable, versioned set of (qid, docno, grade)."""

    name = models.SlugField(max_length=100, help_text="Several versions share one name.")
    version = models.PositiveIntegerField()
    description = models.TextField(blank=True)
    source = models.CharField(max_length=20, choices=QrelsSource.choices)
    original_filename = models.CharField(max_length=255, blank=True)
    checksum = models.CharField(max_length=64, help_text="SHA-256 of the canonical TREC export.")
    topic_count = models.PositiveIntegerField()
    judgment_count = models.PositiveIntegerField()
    team = _team_field()
    # Teams whose leads and engineers may read (never change) this version besides its own.
    shared_with = models.ManyToManyField("accounts.Team", blank=True, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="qrels_name_version_unique")
        ]

    def __str__(self):
        return self.label

    def save(self, *args, **kwargs):
        if self.pk is not None and not kwargs.get("force_insert"):
            raise ImmutableError(f"qrels {self.label} is published and cannot change")
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return reverse("evaluation:qrels-detail", args=[self.pk])

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version}"


class QrelsEntry(models.Model):
    """One (qid, docno, grade) row of a qrels version."""

    qrels = models.ForeignKey(QrelsVersion, on_delete=models.CASCADE, related_name="entries")
    qid = models.CharField(max_length=100)
    docno = models.CharField(max_length=255)
    grade = models.SmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["qrels", "qid", "docno"], name="qrels_entry_unique")
        ]

    def __str__(self):
        return f"{self.qid} {self.docno} {self.grade}"


class System(models.Model):
    """A named ranker; its runs are the files it produced."""

    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    team = _team_field()  # its runs and their evaluations are the team's too
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="system_name_unique_in_team")
        ]

    def __str__(self):
        return self.name


def _run_upload_path(run, filename):
    return f"runs/{run.checksum[:2]}/{run.checksum}/{filename}"


class RunQuerySet(models.QuerySet):
    def listed(self):
        """The runs lists, pickers and the leaderboard show: all but sandbox trials' runs
        (SearchRun.trial), which their trial's page links to."""
        return self.exclude(search__trial=True)


class Run(models.Model):
    """One ranked-list file of a system. The lines live in a Parquet artifact, not in rows."""

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    tag = models.CharField(max_length=255, blank=True, help_text="The run tag in the file.")
    original_filename = models.CharField(max_length=255)
    original_file = models.FileField(upload_to=_run_upload_path, max_length=255)
    artifact = models.FileField(upload_to=_run_upload_path, max_length=255)
    # Each topic's first top_depth documents in trec_eval's orders (evaluation.analysis.topk.stored_tops),
    # so the diff and the top-k pages read a small file instead of ranking the whole run.
    # Empty (depth 0) for runs stored before it existed, until a page fills it.
    top_lists = models.FileField(upload_to=_run_upload_path, max_length=255, blank=True)
    top_depth = models.PositiveIntegerField(default=0)
    # The file's ir_metadata header (evaluation.trec.metadata): as JSON, and the YAML as
    # written, which the runs list searches. Empty for a run without one.
    ir_metadata = models.JSONField(default=dict, blank=True)
    ir_metadata_text = models.TextField(blank=True)
    checksum = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the upload.")
    size_bytes = models.BigIntegerField()
    line_count = models.PositiveIntegerField()
    topic_count = models.PositiveIntegerField()
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["system__name", "name"]
        constraints = [models.UniqueConstraint(fields=["system", "name"], name="run_name_unique")]

    def __str__(self):
        return f"{self.system.name}/{self.name}"

    def get_absolute_url(self):
        return reverse("evaluation:run-detail", args=[self.pk])


class Evaluation(models.Model):
    """A run scored against one qrels version with one set of options."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="evaluations")
    qrels = models.ForeignKey(QrelsVersion, on_delete=models.PROTECT, related_name="evaluations")
    options_key = models.CharField(max_length=64)
    options = models.JSONField(help_text="Measures and options, as given to the engine.")
    measures = models.JSONField(help_text="Output names in trec_eval order.")
    means = models.JSONField(help_text="trec_eval's 'all' values.")
    per_topic = models.JSONField(help_text="{qid: {measure: value}} for evaluated topics.")
    # Filled once per row (evaluation.services.ensure_intervals) so the leaderboard reads them
    # instead of resampling every run's topics on each request.
    intervals = models.JSONField(
        default=dict,
        blank=True,
        help_text="{measure: [low, high]}: 95% bootstrap interval of the mean over topics.",
    )
    topic_count = models.PositiveIntegerField()
    seconds = models.FloatField(help_text="Time taken to score.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "qrels", "options_key"], name="evaluation_unique_options"
            )
        ]

    def __str__(self):
        return f"{self.run} on {self.qrels}"


class PoolFairnessReport(models.Model):
    """The leave-one-run-out test (evaluation.analysis.pool_fairness) of the runs scored against a
    qrels version with one set of options, at one pool depth. ``runs_key`` names the
    evaluations it was computed from, so a run scored since shows the report as out of date."""

    qrels = models.ForeignKey(
        QrelsVersion, on_delete=models.CASCADE, related_name="fairness_reports"
    )
    options_key = models.CharField(max_length=64)
    depth = models.PositiveIntegerField()
    depth_source = models.CharField(
        max_length=20, help_text="'pool' (the campaign's pool depth) or 'parameter'."
    )
    runs_key = models.CharField(max_length=64)
    report = models.JSONField(help_text="FairnessReport.as_dict, runs named by their id.")
    computed_at = models.DateTimeField(auto_now=True)
    seconds = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["qrels", "options_key", "depth"], name="fairness_report_once"
            )
        ]

    def __str__(self):
        return f"leave-one-run-out of {self.qrels} at depth {self.depth}"


class SearchKind(models.TextChoices):
    ELASTICSEARCH = "elasticsearch", "Elasticsearch / OpenSearch"
    SOLR = "solr", "Solr"
    VESPA = "vespa", "Vespa"
    HTTP_JSON = "http_json", "HTTP JSON (any engine)"


class SearchAuth(models.TextChoices):
    NONE = "none", "No key"
    BEARER = "bearer", "Authorization: Bearer <key>"
    API_KEY = "apikey", "Authorization: ApiKey <key> (Elasticsearch, OpenSearch)"
    BASIC = "basic", "Basic authentication (the key is user:password)"
    HEADER = "header", "A header of your choice carries the key"


class SearchEndpoint(models.Model):
    """A live search engine that a query set can be run against (evaluation/search/). Its
    key is sealed (common/secrets.py) or read from an allowed environment variable; it is
    never shown back, exported or logged. ``version`` counts changes to what a request is
    or how an answer is read, so a run's provenance names the version that made it."""

    name = models.CharField(max_length=100)
    team = _team_field()
    kind = models.CharField(max_length=20, choices=SearchKind.choices)
    url = models.CharField(max_length=2000, help_text="The search address, without a query.")
    method = models.CharField(max_length=4, default="POST", help_text="HTTP JSON kind only.")
    template = models.TextField(help_text="JSON with {{query}}, {{k}} and the topic's fields.")
    mapping = models.JSONField(default=dict, help_text="JMESPath: hits, id, title, text, score.")
    auth = models.CharField(max_length=10, choices=SearchAuth.choices, default=SearchAuth.NONE)
    auth_header = models.CharField(max_length=64, blank=True)
    api_key_sealed = models.TextField(blank=True)
    api_key_env = models.CharField(max_length=100, blank=True)
    timeout = models.FloatField(default=10.0)
    max_retries = models.PositiveSmallIntegerField(default=2)
    concurrency = models.PositiveSmallIntegerField(default=4)
    version = models.PositiveIntegerField(default=1)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="search_endpoint_unique_in_team")
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("evaluation:search-endpoint", args=[self.pk])


class SearchEndpointVersion(models.Model):
    """One saved version of an endpoint: what its request was and how its answer was read
    (``number`` is the endpoint's ``version`` then), who saved it and when. Versions are
    kept so they can be compared (evaluation/services/sandbox.py) and a run's provenance
    read beside the version that made it. The key is never part of a version."""

    endpoint = models.ForeignKey(SearchEndpoint, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=SearchKind.choices)
    url = models.CharField(max_length=2000)
    method = models.CharField(max_length=4)
    template = models.TextField()
    mapping = models.JSONField(default=dict)
    auth = models.CharField(max_length=10, choices=SearchAuth.choices, default=SearchAuth.NONE)
    auth_header = models.CharField(max_length=64, blank=True)
    note = models.CharField(max_length=300, blank=True, help_text="What changed, in words.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["endpoint", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "number"], name="search_endpoint_version_unique"
            )
        ]

    def __str__(self):
        return f"{self.endpoint} v{self.number}"


class SearchTrial(models.Model):
    """A sandbox trial (Quepid's loop): a query set asked of an endpoint once per arm (saved
    versions, and maybe an unsaved edit of the template and mapping), each arm stored as a
    hidden run (``SearchRun.trial``), scored against ``qrels`` with ``measure``, per-query
    deltas against the first arm. Seen by the person who started it (and admins)."""

    endpoint = models.ForeignKey(SearchEndpoint, on_delete=models.CASCADE, related_name="trials")
    base_version = models.PositiveIntegerField(help_text="The endpoint's version at the start.")
    # The unsaved edit, if the trial has one (empty template: versions only).
    template = models.TextField(blank=True)
    mapping = models.JSONField(default=dict, blank=True)
    versions = models.JSONField(default=list, help_text="The saved versions asked, in order.")
    query_set = models.JSONField(help_text='{"campaign": id} or {"qrels": id}.')
    query_set_label = models.CharField(max_length=300)
    qrels = models.ForeignKey(QrelsVersion, on_delete=models.CASCADE, related_name="+")
    measure = models.CharField(max_length=200, help_text="As given, in either dialect.")
    k = models.PositiveIntegerField()
    arms = models.JSONField(default=list, help_text="[{label, version, run, means, failed}].")
    result = models.JSONField(default=dict, help_text="Measures, means, per-query values.")
    saved_as = models.PositiveIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    job_id = models.PositiveIntegerField(null=True, blank=True, unique=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"trial {self.pk} of {self.endpoint}"

    def get_absolute_url(self):
        return reverse("evaluation:search-trial", args=[self.endpoint_id, self.pk])


class SearchRun(models.Model):
    """How a run was made by querying an endpoint: the endpoint and a snapshot of its
    request and mapping (no key), the query set, k, when, and each query's outcome
    (latency, attempts, hits, or its failure). ``failed_count`` > 0 is shown wherever the
    run is."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="search")
    endpoint = models.ForeignKey(
        SearchEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    snapshot = models.JSONField(help_text="The endpoint as it was: kind, url, template, ...")
    query_set = models.CharField(max_length=300)
    k = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    queries = models.JSONField(help_text="[{qid, seconds, attempts, hits, error?}], in order.")
    query_count = models.PositiveIntegerField()
    failed_count = models.PositiveIntegerField()
    documents = models.FileField(max_length=255, blank=True, help_text="Mapped titles, texts.")
    job_id = models.PositiveIntegerField(
        null=True, blank=True, unique=True, help_text="The job that made it (a retry finds it)."
    )
    # A sandbox trial's run (SearchTrial): kept for its trial's diff, hidden from the
    # leaderboard, the runs list and the pickers (Run.objects.listed()).
    trial = models.BooleanField(default=False)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self):
        return f"{self.run} from {self.snapshot.get('name', 'an endpoint')}"

    @property
    def failed(self) -> list[dict]:
        return [query for query in self.queries if query.get("error_kind")]


# Scheduled evaluations and their alerts live in their own module (issue 31, item 5).
from evaluation.schedules.models import (  # noqa: E402, F401
    AlertKind,
    DeliveryStatus,
    FiringStatus,
    Schedule,
    ScheduleAlert,
    ScheduleChange,
    ScheduleFiring,
)
