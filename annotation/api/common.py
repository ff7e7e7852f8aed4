"""What the annotation API's modules share: who may see which campaign and assignment (on
top of annotation/access.py) and who may be made a judge, the validation messages, and the
base of the viewsets nested under a campaign."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q
from rest_framework import serializers

from annotation import services
from annotation.access import (
    campaigns_judged_by,
    campaigns_led_by,
    get_campaign_for_lead,
)
from annotation.models import Assignment, Campaign
from annotation.scales import DEFINITION_CHARS, LABEL_CHARS, SCALES
from common.ids import MAX_ID
from jobs.api import accepted
from jobs.services import start_job

# Active time one submission may add (an hour), as on the judging page: a clock gone wrong
# must not poison the leads' median-seconds statistics.
MAX_SECONDS = 3600.0
MAX_RUNS = 50

MESSAGES = {
    "not_your_assignment": services.MESSAGES["not_your_assignment"],
    "scale_type": (
        "Send a scale name ({names}) or a list of {{grade, label, definition}} objects."
    ).format(names=", ".join(SCALES)),
    "scale_item": (
        f"Grade {{grade}}: the grade is a whole number, the label a text of 1–{LABEL_CHARS} "
        f"characters and the definition a text of at most {DEFINITION_CHARS}."
    ),
    "threshold_outside_scale": services.MESSAGES["threshold_outside_scale"],
    "grade_in_use": "Judgments already use grade {grade}; this scale stops at grade {top}.",
    "not_a_judge_user": "User {pk_value} is not in the judge group.",
    "already_judge": "{user} already judges this campaign.",
    "not_campaign_judge": "{user} does not judge this campaign.",
    "unknown_user": "No user with id {pk_value}.",
    "same_judge": "Choose another judge to move the work to.",
    "unknown_topics": "This campaign has no topic {qids} (import topics first).",
    "no_topics": "Import topics first: pooling keeps only the campaign's topics.",
    "unknown_run": "No run with id {pk_value}.",
    "no_runs": "Choose at least one run.",
    "not_an_id": "A qid or docno is one word without spaces.",
    "pairs_as_file": (
        "Send them as a file instead: POST {url} as multipart/form-data with a `file` of "
        "`qid docno` lines, which a job imports (202; poll the job it returns)."
    ),
    "seconds": "Seconds are a number from 0 to 3600.",
    "skip_needs_reason": services.MESSAGES["skip_needs_reason"],
    "whole_number": "Send a whole number.",
}


def visible_campaigns(user):
    """Campaigns the user leads or judges; every other campaign is a 404 for them."""
    return Campaign.objects.filter(
        Q(pk__in=campaigns_led_by(user).values("pk"))
        | Q(pk__in=campaigns_judged_by(user).values("pk"))
    )


def visible_assignments(user):
    """The user's own assignments in campaigns they judge, and every assignment of the
    campaigns they lead. Nobody else's grades are reachable from here."""
    return Assignment.objects.filter(
        Q(judge=user, pair__campaign__in=campaigns_judged_by(user).values("pk"))
        | Q(pair__campaign__in=campaigns_led_by(user).values("pk"))
    )


def start_campaign_job(request, campaign: Campaign, *, kind: str, title: str, task, **params):
    """A change too large for the request (jobs/services/limits.py), started as a job on
    ``campaign``: the 202 answer with the job to poll."""
    job = start_job(
        kind=f"annotation.{kind}",
        title=f"{title} ({campaign.name})",
        user=request.user,
        task=task,
        campaign_id=campaign.pk,
        **params,
    )
    return accepted(job, request)


def messages_of(error: DjangoValidationError) -> list[str]:
    return list(error.messages)


def whole_number(**kwargs) -> serializers.IntegerField:
    # Capped at the largest database id: a larger number must be a 400, not an overflow.
    return serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        error_messages={"invalid": MESSAGES["whole_number"]},
        **kwargs,
    )


class UserBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class LedCampaignMixin:
    """For viewsets under ``campaigns/<campaign_pk>/``: the campaign must be one the user
    leads (annotation.access.get_campaign_for_lead: 404 for everyone else, its judges too)."""

    campaign: Campaign

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        self.campaign = get_campaign_for_lead(request.user, kwargs["campaign_pk"])

    def _fake(self) -> bool:
        # drf-spectacular builds the views without a request to read their querysets.
        return getattr(self, "swagger_fake_view", False)
