"""Forms of the evaluation pages: the scoring options every dashboard page shares (read
from the query string), and the run upload."""

from __future__ import annotations

import functools

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import Count, Q

from accounts.services.roles import Role
from accounts.services.teams import choose_team
from common import text_limits
from common.ids import MAX_ID, parse_id
from evaluation import dashboards, measures
from evaluation.access import readable_qrels, visible_runs, visible_systems
from evaluation.measures import specs
from evaluation.models import QrelsVersion, Run, SearchAuth, SearchKind, System
from evaluation.search import MAX_K

NEW_SYSTEM = "new"
MAX_FILES = 20
MAX_TAGS = text_limits.TAGS

MESSAGES = {
    "no_files": "Choose at least one run file.",
    "too_many_files": "Upload at most {n} files at once.",
    "system_required": "Choose a system, or name a new one.",
    "system_taken": "A system named {name} already exists: choose it from the list.",
    "tag_too_long": f"A tag has at most {text_limits.TAG} characters.",
    "too_many_tags": "At most {n} tags.",
}


def parse_tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


class ScoringForm(forms.Form):
    """The qrels version, measures and options of a dashboard page (GET parameters). An
    empty form is the default scoring: the newest qrels, the dashboard measures, linear
    gain, relevance from grade 1, topics missing from a run skipped."""

    qrels = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    # Read, with the measures, by evaluation.measures.specs (as the API and the command
    # read them), so every input shape has the same rules and messages.
    gain = forms.CharField(required=False, max_length=20)
    relevance_level = forms.CharField(required=False, max_length=20)
    complete = forms.CharField(required=False, max_length=10)

    def __init__(self, data=None, *, remembered: int | None = None, user, **kwargs):
        """``remembered``: the qrels version the user chose last (a pk), shown when the
        parameters name none (dashboards.choose_qrels); ``user``: whom the page answers."""
        super().__init__(data, **kwargs)
        self.user = user
        self.measure_specs = data.getlist("measures") if data is not None else []
        self.scoring: dashboards.Scoring | None = None
        self.remembered = remembered
        self.qrels_reason = dashboards.QrelsReason.ASKED

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        qrels = data.get("qrels")
        if qrels is None:
            qrels, self.qrels_reason = dashboards.choose_qrels(self.remembered, user=self.user)
        try:
            self.scoring = dashboards.make_scoring(
                user=self.user,
                qrels=qrels,
                measure_specs=self.measure_specs,
                gain=data.get("gain"),
                relevance_level=data.get("relevance_level"),
                complete=data.get("complete"),
            )
        except dashboards.ScoringError as error:
            self.add_error(error.field if error.field in self.fields else None, str(error))
        return data


def scoring_choices(scoring: dashboards.Scoring | None, user) -> dict:
    """What the options panel lists: qrels versions and measure checkboxes (the menu, plus
    any other measure the scoring has), with the current choice marked."""
    chosen = dashboards.single_specs(scoring.specs, scoring.options) if scoring else []
    menu = [*dashboards.MEASURE_MENU, *(s for s in dashboards.MORE_MEASURES if _computed(s))]
    menu += [s for s in chosen if s not in menu]
    return {
        "qrels_versions": qrels_menu(user),
        "measure_menu": [(spec, _label(spec), spec in chosen) for spec in menu],
    }


def qrels_menu(user) -> list[QrelsVersion]:
    """Every qrels version ``user`` reads, each with its topic count and ``scored_runs``
    (runs of their teams scored against it with any options), so a menu can tell a 5-topic
    version from the one the runs are scored on."""
    versions = readable_qrels(
        user,
        QrelsVersion.objects.only("name", "version", "topic_count", "judgment_count", "created_at"),
    )
    runs = visible_runs(user, Run.objects.all()).values("pk")
    scored = Count("evaluations__run", distinct=True, filter=Q(evaluations__run__in=runs))
    return list(versions.annotate(scored_runs=scored))


@functools.cache
def _label(spec: str) -> str:
    """How a checkbox names a measure of the menu (one output): nDCG@10 for ndcg_cut.10."""
    (output,) = measures.outputs([spec])
    return measures.display_name(output.name)


def _computed(spec: str) -> bool:
    """Whether this installation computes the measure (trec_eval's table grows)."""
    try:
        specs.read_measures([spec])
    except specs.OptionsError:
        return False
    return True


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files under one name (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"multiple": True}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)] if data else []


class RunUploadForm(forms.Form):
    """Run files for one system (chosen, or created with a name, description and tags), and
    the qrels version and options to score them with once imported."""

    files = MultipleFileField(required=False)
    system = forms.CharField(required=False)  # a system's id, or NEW_SYSTEM
    team = forms.CharField(required=False, max_length=60)  # a new system's (slug)
    new_name = forms.CharField(required=False, max_length=100)
    new_description = forms.CharField(
        required=False, max_length=text_limits.DESCRIPTION, widget=forms.Textarea
    )
    # Every tag at its longest, with a comma and a space after each.
    new_tags = forms.CharField(required=False, max_length=text_limits.TAGS * (text_limits.TAG + 2))
    description = forms.CharField(
        required=False, max_length=text_limits.DESCRIPTION, widget=forms.Textarea
    )
    qrels = forms.ModelChoiceField(queryset=QrelsVersion.objects.all(), required=False)
    # Read by evaluation.measures.specs, as on the dashboards and in the API.
    gain = forms.CharField(required=False, max_length=20, initial="linear")
    relevance_level = forms.CharField(required=False, max_length=20, initial=1)
    complete = forms.CharField(required=False, max_length=10)

    def __init__(self, *args, user, **kwargs):
        """``user``: the engineer uploading: the systems of the teams where they are an
        engineer, the qrels versions they read."""
        super().__init__(*args, **kwargs)
        self.user = user
        self.systems = visible_systems(
            user, System.objects.select_related("team").order_by("name"), Role.ENGINEER
        )
        self.fields["qrels"].queryset = readable_qrels(user, QrelsVersion.objects.all())
        self.measure_specs = self.data.getlist("measures") if self.is_bound else []
        self.scoring: dashboards.Scoring | None = None
        self.chosen_system: System | None = None
        self.team = None

    def clean_files(self):
        files = self.cleaned_data["files"]
        if not files:
            raise ValidationError(MESSAGES["no_files"])
        if len(files) > MAX_FILES:
            raise ValidationError(MESSAGES["too_many_files"].format(n=MAX_FILES))
        return files

    def clean_new_tags(self):
        tags = parse_tags(self.cleaned_data["new_tags"])
        if any(len(tag) > text_limits.TAG for tag in tags):
            raise ValidationError(MESSAGES["tag_too_long"])
        if len(tags) > MAX_TAGS:
            raise ValidationError(MESSAGES["too_many_tags"].format(n=MAX_TAGS))
        return tags

    def clean(self):
        data = super().clean()
        choice = data.get("system") or ""
        if choice == NEW_SYSTEM or (not choice and data.get("new_name")):
            name = (data.get("new_name") or "").strip()
            try:
                self.team = choose_team(self.user, data.get("team"), Role.ENGINEER)
            except ValidationError as error:
                self.add_error("team", error)
            if not name:
                self.add_error("new_name", MESSAGES["system_required"])
            elif self.team and System.objects.filter(name=name, team=self.team).exists():
                self.add_error("new_name", MESSAGES["system_taken"].format(name=name))
        elif parse_id(choice) is not None:
            self.chosen_system = self.systems.filter(pk=parse_id(choice)).first()
            if self.chosen_system is None:
                self.add_error("system", MESSAGES["system_required"])
            else:
                self.team = self.chosen_system.team
        else:
            self.add_error("system", MESSAGES["system_required"])
        if data.get("qrels") is not None:
            try:
                self.scoring = dashboards.make_scoring(
                    user=self.user,
                    qrels=data["qrels"],
                    measure_specs=self.measure_specs,
                    gain=data.get("gain"),
                    relevance_level=data.get("relevance_level"),
                    complete=data.get("complete"),
                )
            except dashboards.ScoringError as error:
                field = error.field if error.field in self.fields else None
                self.add_error(field, str(error))
        return data

    def system_name(self) -> str:
        if self.chosen_system is not None:
            return self.chosen_system.name
        return self.cleaned_data["new_name"].strip()

    def new_system(self) -> dict | None:
        """The new system's fields; its import job creates it with the run, so a file that
        is refused leaves no empty system behind."""
        if self.chosen_system is not None:
            return None
        data = self.cleaned_data
        return {"description": data["new_description"], "tags": data["new_tags"]}


def taken_run_names(system: System | None) -> set[str]:
    if system is None or system.pk is None:
        return set()
    return set(Run.objects.filter(system=system).values_list("name", flat=True))


class SearchEndpointForm(forms.Form):
    """A search endpoint's settings (evaluation/services/search.py checks them). The key
    field is never filled back in: left empty on a change, the stored key stays."""

    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(choices=SearchKind.choices)
    url = forms.CharField(
        max_length=2000,
        label="Address",
        help_text="The search address without a query: https://host:9200/index/_search, "
        "http://host:8983/solr/core/select, http://host:8080/search/",
    )
    method = forms.ChoiceField(
        choices=[("", "The kind's"), ("GET", "GET"), ("POST", "POST")],
        required=False,
        help_text="HTTP JSON only: GET sends the template as parameters, POST as the body.",
    )
    template = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
        required=False,
        strip=False,
        help_text="JSON with {{query}}, {{description}}, {{narrative}}, {{qid}} and {{k}}, "
        "escaped where they land. Empty: the kind's starting template.",
    )
    hits = forms.CharField(max_length=500, required=False, label="Hits (JMESPath)")
    id = forms.CharField(max_length=500, required=False, label="Document id")
    title = forms.CharField(max_length=500, required=False, label="Title")
    text = forms.CharField(max_length=500, required=False, label="Text")
    score = forms.CharField(max_length=500, required=False, label="Score")
    auth = forms.ChoiceField(choices=SearchAuth.choices, label="Key")
    auth_header = forms.CharField(max_length=64, required=False, label="Header name")
    api_key = forms.CharField(
        max_length=2000,
        required=False,
        label="Key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Stored sealed and never shown; empty keeps the stored key.",
    )
    api_key_env = forms.CharField(
        max_length=100,
        required=False,
        label="Or the key's environment variable",
        help_text="QRELSMITH_SEARCH_KEY_<NAME>, set by the operator.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")
    timeout = forms.FloatField(min_value=0.5, max_value=120, initial=10)
    max_retries = forms.IntegerField(min_value=0, initial=2, label="Retries")
    concurrency = forms.IntegerField(min_value=1, initial=4)

    MAPPING = ("hits", "id", "title", "text", "score")

    def values(self) -> dict:
        data = dict(self.cleaned_data)
        mapping = {field: data.pop(field) for field in self.MAPPING}
        data["mapping"] = mapping if any(mapping.values()) else None
        return data


class SearchRunForm(forms.Form):
    query_set = forms.CharField(
        label="Query set", help_text="The topics of a campaign you lead or of a qrels version."
    )
    k = forms.IntegerField(min_value=1, max_value=MAX_K, initial=100, label="Depth k")
    system = forms.CharField(
        max_length=100, required=False, help_text="Empty: the endpoint's name."
    )
    name = forms.CharField(max_length=100, required=False, label="Run name")

    def clean_query_set(self):
        value = self.cleaned_data["query_set"]
        kind, _, pk = value.partition(":")
        if kind not in ("campaign", "qrels") or parse_id(pk) is None:
            raise ValidationError("Choose a query set.")
        return {kind: parse_id(pk)}
