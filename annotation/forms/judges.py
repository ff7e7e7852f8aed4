"""Forms that add or remove a campaign's judges and move open work between them."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from annotation import formats
from annotation.models import Campaign, CampaignJudge, Topic

from .common import MESSAGES, JudgeChoiceField, judge_users


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
            if not judge_users([self.campaign.team_id]).filter(pk=judge.pk).exists():
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
        in_team = judge_users([campaign.team_id])
        self.fields["judge"].queryset = in_team.exclude(pk__in=campaign.judges.values("pk"))


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
