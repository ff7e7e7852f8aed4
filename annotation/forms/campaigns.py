"""The form that creates or edits a campaign, its scale's grades among its fields."""

from __future__ import annotations

from django import forms
from django.db.models import Max

from annotation import access, services
from annotation.models import AdjudicationRule, Campaign, Judgment, PoolOrdering
from annotation.scales import DEFINITION_CHARS, LABEL_CHARS, SCALES
from common import text_limits

from .common import (
    MAX_OVERLAP,
    MESSAGES,
    SCALE_CHOICES,
    JudgesField,
    judge_users,
)


def scale_key_of(scale: list[dict]) -> str:
    """The scale choice ("0-3", "0-5") a stored scale corresponds to, by its grades."""
    for key, default in SCALES.items():
        if len(default) == len(scale):
            return key
    return "0-3"


class CampaignForm(forms.Form):
    """Create or edit a campaign. The grade rows (``label_<g>``, ``definition_<g>``) follow
    the chosen scale: an edit keeps the campaign's own wording while the size stays."""

    name = forms.CharField(max_length=text_limits.NAME)
    description = forms.CharField(
        required=False,
        max_length=text_limits.DESCRIPTION,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    scale = forms.ChoiceField(choices=SCALE_CHOICES, initial="0-3", label="Scale")
    guidelines = forms.CharField(
        required=False,
        max_length=text_limits.GUIDELINES,
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
        help_text="The judges of the campaign's team.",
    )

    team = forms.CharField(required=False, max_length=60)  # a new campaign's (slug)

    def __init__(
        self, *args, campaign: Campaign | None = None, scale_key: str = "", user=None, **kwargs
    ):
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
        if campaign is not None:
            self.fields["judges"].queryset = judge_users([campaign.team_id])
        elif user is not None:
            self.fields["judges"].queryset = access.judges_for(user).order_by("username")
        else:
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
