"""Forms that shape the pool: pooling stored runs, marking calibration (gold) pairs."""

from __future__ import annotations

from django import forms

from annotation.access import runs_for_pool
from annotation.models import Campaign
from evaluation.analysis.pool_fairness import MAX_DEPTH
from evaluation.models import Run

from .common import MESSAGES


class RunChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, run):
        return f"{run.system.name}/{run.name} · {run.topic_count:,} topics"


class PoolRunsForm(forms.Form):
    runs = RunChoiceField(
        queryset=Run.objects.listed().select_related("system").order_by("system__name", "name"),
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
        runs = runs_for_pool(campaign).select_related("system").order_by("system__name", "name")
        self.fields["runs"].queryset = runs

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
