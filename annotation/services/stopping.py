"""The stop rule a lead chooses per campaign (issue 13 part 4): pause handing out pairs once
the ranking of the pooled runs is settled, tell the lead, and let the lead resume.

The rule is evaluated where the live board is refreshed, in the background
(services.live.refresh_live_board, on its STOP_MEASURE board), never in a grade request:
the judging paths only read ``Campaign.paused_at``, a column of the campaign row they load
anyway. While it is set, the judging page and the pair fragments show a judge a "paused"
card instead of their next open pair; a grade for the pair already on a judge's screen is
still taken (and says the campaign paused), so no work is lost and nobody sees an error.

Resuming clears the flag and records who and when in ``stop_event``: the rule, still met,
stays quiet from then on (the lead chose to judge on) until the lead sets a rule again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation import live_board as settling
from annotation.models import Campaign, StopRule

# The stop rule reads the nDCG@10 board: the measure the discriminative strategy and the
# benchmark target, and the one the model behind "settled at 95%" covers.
STOP_MEASURE = "ndcg_cut_10"
# The largest k of the top-k rule: more runs than a leaderboard ranks (the dashboards' k stops
# there too), and within the column (a smallint: 40,000 was a database error on PostgreSQL).
MAX_TOP = 1000

MESSAGES = {
    "confidence": "The confidence must be a number above 0.5 and below 1 (e.g. 0.95), got {value}.",
    "top": f"k must be a whole number from 1 to {MAX_TOP:,}, got {{value}}.",
    "rule": "Unknown stop rule {value!r}; choose from {choices}.",
    "not_paused": "Judging is not paused in this campaign.",
}


@dataclass(frozen=True)
class StopSettings:
    rule: str
    confidence: float
    top: int


def describe_rule(rule: str, confidence: float, top: int) -> str:
    """The rule in words, as the campaign page, the live board and the API say it."""
    percent = f"{confidence * 100:g}%"
    if rule == StopRule.ADJACENT:
        return f"every pair of adjacent runs settled at {percent} (nDCG@10)"
    if rule == StopRule.TOP:
        return f"the top {top} run{'s' if top != 1 else ''} settled at {percent} (nDCG@10)"
    return "none"


def read_stop_settings(*, rule, confidence, top) -> StopSettings:
    """Check a lead's choice; ValidationError keyed by field with a message from MESSAGES."""
    errors = {}
    if rule not in StopRule.values:
        errors["rule"] = MESSAGES["rule"].format(value=rule, choices=", ".join(StopRule.values))
    try:
        confidence = float(confidence)
        if not 0.5 < confidence < 1:
            raise ValueError
    except (TypeError, ValueError):
        errors["confidence"] = MESSAGES["confidence"].format(value=confidence)
    try:
        if isinstance(top, bool) or float(top) != int(float(top)):
            raise ValueError
        if not 1 <= int(float(top)) <= MAX_TOP:
            raise ValueError
        top = int(float(top))
    except (TypeError, ValueError, OverflowError):
        errors["top"] = MESSAGES["top"].format(value=top)
    if errors:
        raise ValidationError(errors)
    return StopSettings(rule=rule, confidence=confidence, top=top)


def set_stop_rule(*, campaign: Campaign, settings: StopSettings, by) -> Campaign:
    """Store the lead's rule. Setting a rule while judging runs arms it afresh (an earlier
    resume no longer silences it); choosing none also lifts a pause, since no rule holds
    judging back any more."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        campaign.stop_rule = settings.rule
        campaign.stop_confidence = settings.confidence
        campaign.stop_top = settings.top
        fields = ["stop_rule", "stop_confidence", "stop_top"]
        if campaign.paused_at is None:
            campaign.stop_event = {}
            fields.append("stop_event")
        if settings.rule == StopRule.NONE and campaign.paused_at is not None:
            campaign.paused_at = None
            campaign.stop_event = {
                **campaign.stop_event,
                "resumed_at": _now(),
                "resumed_by": by.get_username(),
            }
            fields += ["paused_at", "stop_event"]
        campaign.save(update_fields=list(dict.fromkeys(fields)))
    return campaign


def rule_armed(campaign: Campaign) -> bool:
    """Whether the rule may pause judging now: a rule is set, judging runs, and the lead has
    not resumed since it last paused."""
    return (
        campaign.stop_rule != StopRule.NONE
        and campaign.paused_at is None
        and "resumed_at" not in (campaign.stop_event or {})
    )


def apply_stop_rule(*, campaign: Campaign, board: settling.LiveBoard, spent: int) -> bool:
    """Pause judging if the campaign's armed rule is met on ``board`` (the STOP_MEASURE board
    computed from the campaign's grades). True when this call paused it. A board of fewer
    than two runs, or with no undecided pair left, never pauses: there is nothing to stop."""
    if not rule_armed(campaign) or len(board.runs) < 2 or board.unknown == 0:
        return False
    waiting = settling.stop_waiting_for(
        board, rule=campaign.stop_rule, top=campaign.stop_top, confidence=campaign.stop_confidence
    )
    if waiting:
        return False
    now = timezone.now()
    event = {
        "rule": campaign.stop_rule,
        "confidence": campaign.stop_confidence,
        "top": campaign.stop_top,
        "measure": board.measure,
        "described": describe_rule(campaign.stop_rule, campaign.stop_confidence, campaign.stop_top),
        "spent": spent,
        "undecided": board.unknown,
        "at": now.isoformat(),
    }
    with transaction.atomic():
        # Only a campaign still armed with the same rule pauses (the lead may have changed
        # it, or resumed, while the board was computed).
        paused = (
            Campaign.objects.filter(
                pk=campaign.pk,
                paused_at__isnull=True,
                stop_rule=campaign.stop_rule,
                stop_confidence=campaign.stop_confidence,
                stop_top=campaign.stop_top,
            )
            .exclude(stop_event__has_key="resumed_at")
            .update(paused_at=now, stop_event=event)
        )
    if paused:  # the caller's instance tells the page it renders next
        campaign.paused_at, campaign.stop_event = now, event
    return bool(paused)


def resume_judging(*, campaign: Campaign, by) -> tuple[Campaign, bool]:
    """The lead hands out pairs again; the rule stays quiet until the lead sets one again.
    Idempotent: on a campaign that is not paused nothing changes (False)."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if campaign.paused_at is None:
            return campaign, False
        campaign.paused_at = None
        campaign.stop_event = {
            **campaign.stop_event,
            "resumed_at": _now(),
            "resumed_by": by.get_username(),
        }
        campaign.save(update_fields=["paused_at", "stop_event"])
    return campaign, True


def stop_status(campaign: Campaign) -> dict:
    """What the pages and the API say about the rule: the choice, whether judging is paused,
    and what the rule did (when, which rule, judgments spent, resumed by whom)."""
    event = dict(campaign.stop_event or {})
    for key in ("at", "resumed_at"):  # stored as ISO text in the JSON column
        if event.get(key):
            event[key] = dt.datetime.fromisoformat(event[key])
    return {
        "rule": campaign.stop_rule,
        "confidence": campaign.stop_confidence,
        "top": campaign.stop_top,
        "measure": STOP_MEASURE,
        "described": describe_rule(campaign.stop_rule, campaign.stop_confidence, campaign.stop_top),
        "paused": campaign.paused_at is not None,
        "paused_at": campaign.paused_at,
        "event": event,
    }


def _now() -> str:
    return timezone.now().isoformat()
