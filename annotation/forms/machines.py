"""Forms of the machine judges (annotation/services/machine_judges.py): a new judge, its
endpoint, a run over the pool, an audit by the humans, and how machine grades count."""

from __future__ import annotations

from django import forms

from annotation import formats
from annotation.agreement.anchoring import MAX_BLIND_SHARE, MIN_BLIND_SHARE
from annotation.models import SENT_BY_HAND, AuditKind, Campaign, MachineJudge, SampleStrategy, Topic

from .common import MESSAGES


class MachineSettingsForm(forms.Form):
    machine_grades_adjudicate = forms.BooleanField(
        required=False, label="Machine grades count in adjudication, beside humans' grades"
    )
    machine_grades_fill = forms.BooleanField(
        required=False,
        label="A publication may give pairs no human graded their machine grades (flagged)",
    )
    gate_points = forms.FloatField(
        required=False,
        min_value=0,
        max_value=99,
        label="Gullibility gate threshold (points)",
        help_text="A machine may not fill qrels when a probe raises its relevant calls on pairs "
        "humans graded not relevant by more than this (the interval's lower end). Default 2.",
    )
    suggestions_from = forms.ModelChoiceField(
        queryset=None,
        required=False,
        empty_label="No suggestions",
        label="Show judges a machine's grade as a suggestion",
        help_text="Post-editing with a control group: the agreement report compares the grades "
        "made with the suggestion in view and without. Fixed once judges have graded with it.",
    )
    blind_share = forms.FloatField(
        required=False,
        min_value=MIN_BLIND_SHARE,
        max_value=MAX_BLIND_SHARE,
        label="Blind share",
        help_text="The share of each judge's pairs shown without the suggestion (the control "
        "group), the same pairs on every visit.",
        widget=forms.NumberInput(attrs={"step": "0.05"}),
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["suggestions_from"].queryset = (
            MachineJudge.objects.filter(judge__campaign=campaign)
            .select_related("judge")
            .order_by("pk")
        )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("blind_share") is None:
            cleaned.pop("blind_share", None)  # left empty: the campaign keeps its share
        return cleaned


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
        help_text="Where the API's paths start: https://api.openai.com/v1; a local server "
        "(vLLM, Ollama, llama.cpp: http://127.0.0.1:11434/v1) once the operator has allowed "
        "its address (OUTBOUND_ALLOW).",
    )
    api_key_env = forms.CharField(
        max_length=100,
        required=False,
        label="Key from the environment variable",
        help_text="A QRELSMITH_LLM_KEY_<NAME> variable the operator set on the server and "
        "its workers, e.g. QRELSMITH_LLM_KEY_OPENAI.",
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
    concurrency = forms.IntegerField(min_value=1, initial=4, help_text="Requests at once.")
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
        help_text="Empty keeps the stored key, unless the base URL moves to another host: "
        "then the stored key is removed (type it again to keep sending it).",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")
    concurrency = forms.IntegerField(min_value=1)
    timeout = forms.FloatField(min_value=1, max_value=600, label="Timeout (s)")
    max_retries = forms.IntegerField(min_value=0, label="Retries")
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
        choices=[(k.value, k.label) for k in SENT_BY_HAND],
        initial=AuditKind.SAMPLE,
        widget=forms.RadioSelect,
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


class CertifiedSampleForm(forms.Form):
    """The human sample of a certified leaderboard (annotation/services/certified.py)."""

    machine = forms.TypedChoiceField(coerce=int, label="Machine judge")
    strategy = forms.ChoiceField(choices=SampleStrategy.choices, initial=SampleStrategy.STRATIFIED)
    budget = forms.CharField(
        max_length=20,
        initial="10%",
        label="Human budget",
        help_text="A number of pairs (e.g. 120) or a share of the pool (e.g. 10%).",
    )
    seed = forms.IntegerField(
        required=False, min_value=0, max_value=2**31 - 1, help_text="Empty: the campaign's seed."
    )

    def __init__(self, *args, machines=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["machine"].choices = [(m.pk, m.judge.label) for m in machines]


class CertifiedRedrawForm(forms.Form):
    """Drawing the human sample again before humans judged it (services/certified.py)."""

    strategy = forms.ChoiceField(
        choices=[("", "As before"), *SampleStrategy.choices], required=False
    )
    budget = forms.CharField(
        max_length=20,
        required=False,
        label="Human budget",
        help_text="Empty: as before. A number of pairs (e.g. 120) or a share (e.g. 10%).",
    )
    seed = forms.IntegerField(
        required=False, min_value=0, max_value=2**31 - 1, help_text="Empty: a new random seed."
    )

    def __init__(self, *args, design=None, **kwargs):
        super().__init__(*args, **kwargs)
        if design is not None:
            self.fields["strategy"].initial = design.strategy


class GateForm(forms.Form):
    max_pairs = forms.IntegerField(
        min_value=1,
        max_value=5000,
        initial=600,
        label="Pairs to probe at most",
        help_text="Pairs humans graded not relevant; each costs three requests (four when the "
        "machine has not graded it). About 600 catch a 10-point rise 19 times in 20.",
    )
    seed = forms.IntegerField(
        required=False, min_value=0, max_value=2**31 - 1, help_text="Empty: the campaign's seed."
    )


class GateOverrideForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=10_000,
        label="Why may this machine fill qrels anyway?",
    )
