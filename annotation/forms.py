"""Forms of the lead's pages: a campaign, file imports, pooling, judges and reassignment.

Forms translate and check input; the rules live in annotation/services.py and
annotation/tasks.py. Messages are constants so tests can assert the exact words.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.db.models import Max

from accounts.roles import Role
from annotation import formats, services
from annotation.models import (
    EXTERNAL_JUDGE_KINDS,
    AdjudicationRule,
    AuditKind,
    Campaign,
    CampaignJudge,
    Judgment,
    PoolOrdering,
    Topic,
)
from annotation.scales import SCALES
from evaluation.models import Run

# PositiveSmallIntegerField's ceiling: the form refuses more instead of the database failing.
MAX_OVERLAP = 32767
MAX_DEPTH = 10_000
LABEL_CHARS = 100
DEFINITION_CHARS = 500

SCALE_CHOICES = [("0-3", "0–3 (TREC Deep Learning)"), ("0-5", "0–5")]

MESSAGES = {
    "label_required": "Grade {grade} needs a label.",
    "grade_in_use": (
        "Judgments already use grade {grade}; a {scale} scale cannot hold it. Keep the "
        "larger scale."
    ),
    "not_a_judge_user": "Choose a user in the judge group.",
    "already_judge": "{user} already judges this campaign.",
    "not_a_judge": services.MESSAGES["not_a_judge"],
    "same_judge": "Choose another judge to move the work to.",
    "unknown_topic": "This campaign has no topic {qid!r}.",
    "no_topics": "Import topics first: pooling keeps only the campaign's topics.",
    "no_runs": "Choose at least one run.",
    "unknown_pair": (
        "The pool has no pair {qid} × {docno}: add it first (a pairs file, pooling, or a gold "
        "file, which adds its pairs)."
    ),
}


def judge_users():
    """Users who may judge: members of the judge group, by name."""
    return (
        get_user_model()
        .objects.filter(is_active=True, groups__name=Role.JUDGE)
        .distinct()
        .order_by("username")
    )


class JudgeChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, user):
        full = user.get_full_name()
        return f"{user.username} ({full})" if full else user.username


class JudgesField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, user):
        full = user.get_full_name()
        return f"{user.username} ({full})" if full else user.username


# --- campaign --------------------------------------------------------------------------------


def scale_key_of(scale: list[dict]) -> str:
    """The scale choice ("0-3", "0-5") a stored scale corresponds to, by its grades."""
    for key, default in SCALES.items():
        if len(default) == len(scale):
            return key
    return "0-3"


class CampaignForm(forms.Form):
    """Create or edit a campaign. The grade rows (``label_<g>``, ``definition_<g>``) follow
    the chosen scale: an edit keeps the campaign's own wording while the size stays."""

    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    scale = forms.ChoiceField(choices=SCALE_CHOICES, initial="0-3", label="Scale")
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="Markdown. Judges see it rendered (sanitised) next to every pair.",
    )
    overlap = forms.IntegerField(
        min_value=1,
        max_value=MAX_OVERLAP,
        initial=1,
        label="Judges per pair",
        help_text="Every pair goes to this many distinct judges (at most the number of judges).",
    )
    relevance_threshold = forms.TypedChoiceField(
        coerce=int,
        label="Relevance threshold",
        help_text="The lowest grade that counts as relevant for binary measures.",
    )
    adjudication_rule = forms.ChoiceField(
        choices=AdjudicationRule.choices,
        initial=AdjudicationRule.MAJORITY,
        required=False,
        label="When judges disagree",
        help_text="Unanimous pairs are accepted as they are; this settles the others.",
    )
    gold_min_accuracy = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0.7,
        required=False,
        label="Calibration threshold",
        help_text="Judges below this on calibration pairs are flagged (0 to 1).",
    )
    pool_ordering = forms.ChoiceField(
        choices=PoolOrdering.choices,
        initial=PoolOrdering.RANDOM,
        required=False,
        label="Order of judging",
        help_text="Random keeps today's order; the others judge first what matters most.",
    )
    judges = JudgesField(
        queryset=None,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Users in the judge group.",
    )

    def __init__(self, *args, campaign: Campaign | None = None, scale_key: str = "", **kwargs):
        self.campaign = campaign
        if campaign is not None:
            kwargs.setdefault(
                "initial",
                {
                    "name": campaign.name,
                    "description": campaign.description,
                    "scale": scale_key_of(campaign.scale),
                    "guidelines": campaign.guidelines,
                    "overlap": campaign.overlap,
                    "relevance_threshold": campaign.relevance_threshold,
                    "adjudication_rule": campaign.adjudication_rule,
                    "gold_min_accuracy": campaign.gold_min_accuracy,
                    "pool_ordering": campaign.pool_ordering,
                    "judges": list(campaign.judges.all()),
                },
            )
        super().__init__(*args, **kwargs)
        self.fields["judges"].queryset = judge_users()
        self.scale_key = self._chosen_scale(scale_key)
        self.fields["scale"].initial = self.scale_key
        self._add_grade_fields()

    def _chosen_scale(self, requested: str) -> str:
        if self.is_bound:
            requested = self.data.get(self.add_prefix("scale"), "")
        if requested in SCALES:
            return requested
        return self.initial.get("scale", "0-3")

    def _add_grade_fields(self) -> None:
        default = SCALES[self.scale_key]
        own = self.campaign.scale if self.campaign is not None else []
        rows = own if len(own) == len(default) else default
        self.grade_names = []
        for item in rows:
            grade = item["grade"]
            label, definition = f"label_{grade}", f"definition_{grade}"
            self.fields[label] = forms.CharField(
                max_length=LABEL_CHARS,
                initial=item["label"],
                label=f"Label of grade {grade}",
                error_messages={"required": MESSAGES["label_required"].format(grade=grade)},
            )
            self.fields[definition] = forms.CharField(
                max_length=DEFINITION_CHARS,
                required=False,
                initial=item["definition"],
                label=f"Definition of grade {grade}",
            )
            self.grade_names.append((grade, label, definition))
        self.fields["relevance_threshold"].choices = [
            (item["grade"], f"{item['grade']} · {item['label']}") for item in rows
        ]
        # TREC's usual binary cut (grade 1 and up); an edit's own value comes from initial.
        self.fields["relevance_threshold"].initial = 1

    def grade_rows(self):
        """(grade, label field, definition field) for the template's table."""
        return [(g, self[label], self[definition]) for g, label, definition in self.grade_names]

    def clean(self):
        cleaned = super().clean()
        # Left out of a post (an older form, a script): the campaign's value, or the default.
        for name in ("adjudication_rule", "gold_min_accuracy", "pool_ordering"):
            if cleaned.get(name) in (None, ""):
                cleaned[name] = (
                    getattr(self.campaign, name)
                    if self.campaign is not None
                    else self.fields[name].initial
                )
        if any(label not in cleaned for _, label, _ in self.grade_names):
            return cleaned
        scale = [
            {
                "grade": grade,
                "label": cleaned[label].strip(),
                "definition": cleaned.get(definition, "").strip(),
            }
            for grade, label, definition in self.grade_names
        ]
        try:
            cleaned["scale_items"] = services.resolve_scale(scale)
        except forms.ValidationError as error:
            self.add_error(None, error)
            return cleaned
        if self.campaign is not None:
            highest = Judgment.objects.filter(assignment__pair__campaign=self.campaign).aggregate(
                m=Max("grade")
            )["m"]
            if highest is not None and highest > scale[-1]["grade"]:
                self.add_error(
                    "scale",
                    MESSAGES["grade_in_use"].format(
                        grade=highest, scale=dict(SCALE_CHOICES)[cleaned.get("scale", "0-3")]
                    ),
                )
        return cleaned


# --- imports ---------------------------------------------------------------------------------


class UploadForm(forms.Form):
    # No size check here: config/uploads.py refuses a body over MAX_UPLOAD_MB with 413
    # before it is read, so a file that reaches a form is within the limit.
    file = forms.FileField(allow_empty_file=False)


def _format_choices(accepted: dict[str, str]) -> list[tuple[str, str]]:
    return [("", "Detect from the file"), *accepted.items()]


class TopicsImportForm(UploadForm):
    format = forms.ChoiceField(
        choices=_format_choices(formats.TOPIC_FORMATS), required=False, label="Format"
    )


class DocumentsImportForm(UploadForm):
    format = forms.ChoiceField(
        choices=_format_choices(formats.DOCUMENT_FORMATS), required=False, label="Format"
    )


class PairsImportForm(UploadForm):
    pass


class JudgmentsImportForm(UploadForm):
    """Judgments made elsewhere (annotation/services/imports.py)."""

    format = forms.ChoiceField(
        choices=_format_choices(formats.JUDGMENT_FORMATS), required=False, label="Format"
    )
    judge_kind = forms.ChoiceField(
        choices=[("", "Machines for UMBRELA, outside people otherwise"), *EXTERNAL_JUDGE_KINDS],
        required=False,
        label="The file's judges are",
    )
    judge_name = forms.CharField(
        max_length=150,
        required=False,
        label="Judge",
        help_text="Required for a qrels file; for another file, takes every grade as this judge's.",
    )
    mapping = forms.CharField(
        required=False,
        max_length=5000,
        label="Grade mapping",
        help_text="When the file's grades are not the scale's: 0:0, 1:1, 2:1, 3:2, 4:3 or "
        "Perfect=3; Mostly Good=2; So-so=1; Bad=0.",
    )
    add_missing_pairs = forms.BooleanField(
        required=False, label="Add pairs missing from the pool (otherwise they are refused)"
    )


class MachineSettingsForm(forms.Form):
    machine_grades_adjudicate = forms.BooleanField(
        required=False, label="Machine grades count in adjudication, beside humans' grades"
    )
    machine_grades_fill = forms.BooleanField(
        required=False,
        label="A publication may give pairs no human graded their machine grades (flagged)",
    )


class RunChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, run):
        return f"{run.system.name}/{run.name} · {run.topic_count:,} topics"


class PoolRunsForm(forms.Form):
    runs = RunChoiceField(
        queryset=Run.objects.select_related("system").order_by("system__name", "name"),
        widget=forms.SelectMultiple(attrs={"size": 6}),
        error_messages={"required": MESSAGES["no_runs"]},
        help_text="Stored runs (Ctrl- or ⌘-click to choose several).",
    )
    depth = forms.IntegerField(
        min_value=1,
        max_value=MAX_DEPTH,
        initial=10,
        label="Depth k",
        help_text="Each run's top k documents per topic go into the pool.",
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign

    def clean(self):
        cleaned = super().clean()
        if not self.campaign.topics.exists():
            raise forms.ValidationError(MESSAGES["no_topics"])
        return cleaned


class GoldPairForm(forms.Form):
    """Mark one pool pair as a calibration (gold) pair with a known grade, or unmark it."""

    qid = forms.CharField(max_length=100, label="Topic (qid)")
    docno = forms.CharField(max_length=255, label="Document (docno)")
    grade = forms.TypedChoiceField(
        coerce=int,
        empty_value=None,
        required=False,
        label="Known grade",
        help_text="Every judge gets a gold pair, unmarked; choose “not gold” to unmark it.",
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        self.fields["grade"].choices = [
            *((item["grade"], f"{item['grade']} · {item['label']}") for item in campaign.scale),
            ("", "Not gold (an ordinary pair)"),
        ]

    def clean(self):
        cleaned = super().clean()
        qid, docno = cleaned.get("qid", "").strip(), cleaned.get("docno", "").strip()
        if qid and docno:
            pair = self.campaign.pairs.filter(topic__qid=qid, document__docno=docno).first()
            if pair is None:
                raise forms.ValidationError(MESSAGES["unknown_pair"].format(qid=qid, docno=docno))
            cleaned["pair"] = pair
        return cleaned


# --- judges ----------------------------------------------------------------------------------


class JudgeForm(forms.Form):
    """Add a judge to the campaign or remove one."""

    action = forms.ChoiceField(choices=[("add", "Add"), ("remove", "Remove")])
    judge = JudgeChoiceField(
        queryset=None, error_messages={"invalid_choice": MESSAGES["not_a_judge_user"]}
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        self.fields["judge"].queryset = get_user_model().objects.all()

    def clean(self):
        cleaned = super().clean()
        judge, action = cleaned.get("judge"), cleaned.get("action")
        if judge is None or action is None:
            return cleaned
        is_member = CampaignJudge.objects.filter(campaign=self.campaign, judge=judge).exists()
        if action == "add":
            if not judge_users().filter(pk=judge.pk).exists():
                self.add_error("judge", MESSAGES["not_a_judge_user"])
            elif is_member:
                self.add_error("judge", MESSAGES["already_judge"].format(user=judge))
        elif not is_member:
            self.add_error("judge", MESSAGES["not_a_judge"].format(user=judge))
        return cleaned


class AddJudgeForm(forms.Form):
    """The select of judges who could be added (rendering only; JudgeForm checks)."""

    judge = JudgeChoiceField(queryset=None, empty_label="Choose a judge…")

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = judge_users().exclude(pk__in=campaign.judges.values("pk"))


class ReassignForm(forms.Form):
    """Move one judge's open work (of one topic, or all) to another judge of the campaign."""

    from_judge = JudgeChoiceField(queryset=None, label="Move the open pairs of")
    to_judge = JudgeChoiceField(
        queryset=None,
        label="to",
        error_messages={"invalid_choice": "Choose a judge of this campaign to move the work to."},
    )
    topic = forms.CharField(
        required=False,
        max_length=formats.MAX_QID_CHARS,
        label="Topic",
        help_text="A qid, or empty for every topic.",
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        users = get_user_model().objects.order_by("username")
        # Judges with open work here, from their tallies (not every assignment).
        self.fields["from_judge"].queryset = users.filter(
            judge_tallies__campaign=campaign, judge_tallies__open__gt=0
        )
        self.fields["to_judge"].queryset = users.filter(pk__in=campaign.judges.values("pk"))

    def default_target(self):
        """Whom to propose as the receiver (a judge other than the first giver), or None
        when no reassignment is possible."""
        givers = list(self.fields["from_judge"].queryset[:1])
        if not givers:
            return None
        return self.fields["to_judge"].queryset.exclude(pk=givers[0].pk).first()

    def clean_topic(self):
        qid = self.cleaned_data["topic"].strip()
        if not qid:
            return None
        topic = Topic.objects.filter(campaign=self.campaign, qid=qid).first()
        if topic is None:
            raise forms.ValidationError(MESSAGES["unknown_topic"].format(qid=qid))
        return topic

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("from_judge") and cleaned.get("from_judge") == cleaned.get("to_judge"):
            self.add_error("to_judge", MESSAGES["same_judge"])
        return cleaned


# --- machine judges (annotation/services/machine_judges.py) ----------------------------------


class MachineJudgeForm(forms.Form):
    """A new machine judge: model, endpoint, prompt and parameters. The key is a password
    field that is never filled back; an environment variable is the better place for it."""

    name = forms.CharField(
        max_length=150,
        required=False,
        help_text="Empty: model-template-version (a new prompt version is a new judge).",
    )
    model_name = forms.CharField(
        max_length=200,
        label="Model",
        help_text="As the endpoint names it, e.g. gpt-4o-mini, llama3.1:8b.",
    )
    model_version = forms.CharField(
        max_length=200,
        required=False,
        label="Model version",
        help_text="A snapshot date, a quantisation, a commit: what makes the grades reproducible.",
    )
    base_url = forms.CharField(
        max_length=500,
        label="Base URL",
        help_text="Where the API's paths start: https://api.openai.com/v1, http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8080/v1 (llama.cpp).",
    )
    api_key_env = forms.CharField(
        max_length=100,
        required=False,
        label="Key from the environment variable",
        help_text="e.g. OPENAI_API_KEY, set on the server and its workers.",
    )
    api_key = forms.CharField(
        max_length=500,
        required=False,
        label="Or the key itself",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Stored, never shown back. Empty for local servers that need none.",
    )
    template_name = forms.CharField(max_length=100, label="Template name")
    template_version = forms.CharField(max_length=50, label="Template version")
    system_prompt = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), label="System message"
    )
    user_prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 14}), label="User message")
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0.0)
    max_tokens = forms.IntegerField(min_value=1, max_value=32768, initial=16, label="Max tokens")
    concurrency = forms.IntegerField(
        min_value=1, max_value=64, initial=4, help_text="Requests at once."
    )
    timeout = forms.FloatField(min_value=1, max_value=600, initial=60, label="Timeout (s)")
    input_price = forms.FloatField(
        min_value=0, required=False, label="Price per million prompt tokens"
    )
    output_price = forms.FloatField(
        min_value=0, required=False, label="Price per million completion tokens"
    )

    # Browsers send a textarea's lines ended by CRLF (the HTML standard): without this the
    # built-in prompt, sent back unchanged, would read as a changed prompt of the same version.
    def clean_system_prompt(self):
        return self.cleaned_data["system_prompt"].replace("\r\n", "\n")

    def clean_user_prompt(self):
        return self.cleaned_data["user_prompt"].replace("\r\n", "\n")


class MachineEndpointForm(forms.Form):
    """What may change on a machine judge: where it is served and how hard it is pushed."""

    base_url = forms.CharField(max_length=500, label="Base URL")
    api_key_env = forms.CharField(
        max_length=100, required=False, label="Key from the environment variable"
    )
    api_key = forms.CharField(
        max_length=500,
        required=False,
        label="New key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Empty keeps the stored key.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")
    concurrency = forms.IntegerField(min_value=1, max_value=64)
    timeout = forms.FloatField(min_value=1, max_value=600, label="Timeout (s)")
    max_retries = forms.IntegerField(min_value=0, max_value=10, label="Retries")
    input_price = forms.FloatField(
        min_value=0, required=False, label="Price per million prompt tokens"
    )
    output_price = forms.FloatField(
        min_value=0, required=False, label="Price per million completion tokens"
    )


class MachineRunForm(forms.Form):
    scope = forms.ChoiceField(
        choices=[
            ("pool", "The whole pool"),
            ("unjudged", "Only pairs no human has graded yet"),
            ("topic", "One topic"),
        ],
        initial="pool",
        widget=forms.RadioSelect,
    )
    topic = forms.CharField(required=False, max_length=formats.MAX_QID_CHARS, label="Topic (qid)")

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign

    def clean(self):
        cleaned = super().clean()
        qid = (cleaned.get("topic") or "").strip()
        cleaned["topic"] = None
        if cleaned.get("scope") == "topic":
            if not qid:
                self.add_error("topic", "Choose the topic to run over.")
                return cleaned
            topic = Topic.objects.filter(campaign=self.campaign, qid=qid).first()
            if topic is None:
                self.add_error("topic", MESSAGES["unknown_topic"].format(qid=qid))
            cleaned["topic"] = topic
        return cleaned


class MachineAuditForm(forms.Form):
    """Send pairs to the human judges to check the machines (services/audits.py)."""

    kind = forms.ChoiceField(
        choices=AuditKind.choices, initial=AuditKind.SAMPLE, widget=forms.RadioSelect
    )
    size = forms.IntegerField(required=False, min_value=1, max_value=1_000_000, label="Sample size")
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=2**31 - 1,
        label="Seed",
        help_text="Empty: the campaign's seed.",
    )
    back = forms.ChoiceField(
        choices=[("machines", "machines"), ("agreement", "agreement")],
        initial="machines",
        widget=forms.HiddenInput,
        required=False,
    )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("kind") != AuditKind.SAMPLE:
            cleaned["size"] = cleaned["seed"] = None  # only a sample takes them
        return cleaned
