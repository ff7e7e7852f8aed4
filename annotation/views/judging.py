"""The judging page: a judge grades their assigned pairs one keystroke at a time.

The page is rendered once; static/js/judge.js then swaps pairs in from ``pair_fragment`` and
posts grades, skips, undos and notes to the JSON endpoints below. Every object is fetched
through annotation/access.py, so another judge's assignment or a campaign the user does not
judge is a 404, and a judge only ever sees their own grades.
"""

import functools
import math
import uuid

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotation import services
from annotation.access import get_assignment_for_judge, get_campaign_for_judge
from annotation.models import Judgment
from annotation.services import suggestions
from annotation.services.ordering import queue_order
from common import text_limits

# Longest active time one submission may add (an hour): a clock gone wrong in a browser must
# not poison the leads' median-seconds statistics.
MAX_SECONDS = 3600.0
# The skip reason the dialog proposes; the issue names it.
DEFAULT_SKIP_REASON = "can't judge"
# Grade buttons are tinted from red (lowest grade) to green (highest) in this many steps.
TONES = 5

ERRORS = {
    "login": "Your session has ended. Log in again; unsaved grades are kept and retried.",
    "method": "Use POST for this endpoint.",
    "not_found": "No such pair among your assignments in this campaign.",
    "grade_missing": "Send the grade as a whole number.",
    "seconds_invalid": "Send seconds as a number of seconds.",
    "request_id_invalid": "Send request_id as a UUID.",
    "note_too_long": "Keep the note to {limit:,} characters.",
}


# --- helpers -------------------------------------------------------------------------------


def _error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def json_post(view):
    """Contract of the submission endpoints: POST only (405 otherwise), a logged-in user
    (401, not a redirect to the login page that fetch would follow and mistake for success),
    and every refusal as JSON {"error": message} with 400, 403 or 404."""

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method != "POST":
            response = _error(ERRORS["method"], 405)
            response["Allow"] = "POST"
            return response
        if not request.user.is_authenticated:
            return _error(ERRORS["login"], 401)
        try:
            return view(request, *args, **kwargs)
        except (Http404, ObjectDoesNotExist):
            return _error(ERRORS["not_found"], 404)
        except PermissionDenied as denied:
            return _error(str(denied) or "Not allowed.", 403)
        except ValidationError as invalid:
            return _error(" ".join(invalid.messages), 400)

    return wrapper


def _seconds(request) -> float:
    raw = request.POST.get("seconds", "0") or "0"
    try:
        value = float(raw)
    except ValueError:
        raise ValidationError(ERRORS["seconds_invalid"]) from None
    if not math.isfinite(value) or value < 0:
        raise ValidationError(ERRORS["seconds_invalid"])
    return min(value, MAX_SECONDS)


def _request_id(request) -> uuid.UUID | None:
    raw = request.POST.get("request_id", "")
    if not raw:
        return None
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise ValidationError(ERRORS["request_id_invalid"]) from None


def _state(assignment, judgment) -> dict:
    """What the judge's own judgment of the pair is now, in the shape judge.js keeps, and
    whether the stop rule has paused the campaign (read from the campaign row the service
    loaded under the lock anyway: no query, nothing computed)."""
    return {
        "assignment": assignment.pk,
        "status": assignment.status,
        "grade": judgment.grade if judgment else None,
        "skip_reason": judgment.skip_reason if judgment else "",
        "note": judgment.note if judgment else "",
        "paused": assignment.pair.campaign.paused_at is not None,
    }


def _scale(campaign) -> list[dict]:
    top = max(campaign.grades) or 1
    return [
        {**item, "tone": round(item["grade"] * TONES / top), "key": item["grade"] <= 9}
        for item in campaign.scale
    ]


def _pair_context(campaign, assignment, judgment) -> dict:
    return {
        "assignment": assignment,
        "topic": assignment.pair.topic,
        "document": assignment.pair.document,
        "judgment": judgment,
        # The machine's grade, unless the campaign shows none or this pair is blind for
        # this judge (services/suggestions.py: the control group of post-editing).
        "suggestion": suggestions.suggestion_for(
            campaign, judge_id=assignment.judge_id, pair_id=assignment.pair_id
        ),
    }


def _own_judgment(assignment):
    # access.get_assignment_for_judge joins the judgment in; other callers may not have.
    try:
        return assignment.judgment
    except Judgment.DoesNotExist:
        return None


# --- pages ---------------------------------------------------------------------------------


@require_GET
@login_required
def judge_page(request, pk):
    """The judging page, opened where the judge left off: the first open assignment in
    their queue (services.judge_queue order), or a summary when nothing is open."""
    campaign = get_campaign_for_judge(request.user, pk)
    # Same order as services.judge_queue (a test holds them together), with each
    # assignment's topic and status so the page can draw progress without asking again.
    # Pairs whose document has no text yet are left out (services.judge_assignments) and
    # counted, so the judge's done / total stays true and says how many wait.
    queue = list(
        services.judge_assignments(campaign=campaign, judge=request.user)
        .order_by(*queue_order(campaign))
        .values_list("pk", "pair__topic_id", "status")
    )
    waiting = services.waiting_for_text(campaign=campaign, judge=request.user)
    current = services.next_open_assignment(campaign=campaign, judge=request.user)
    scale = _scale(campaign)
    config = {
        "campaign": campaign.pk,
        "user": request.user.pk,
        "base_url": reverse("annotation:judge", args=[campaign.pk]),
        "grades": [g for g in campaign.grades if g <= 9],
        "scale": [{key: item[key] for key in ("grade", "label", "tone")} for item in scale],
        "queue": queue,
        "waiting": waiting,
        "start": current.pk if current else None,
        "default_skip_reason": DEFAULT_SKIP_REASON,
        # The stop rule has paused the campaign (services.stopping): open pairs are not shown.
        "paused": campaign.paused_at is not None,
    }
    context = {
        "campaign": campaign,
        "scale": scale,
        "config": config,
        "queue_size": len(queue),
        "waiting": waiting,
        "default_skip_reason": DEFAULT_SKIP_REASON,
        "paused": config["paused"],
        "skip_reason_chars": text_limits.SKIP_REASON,
        "note_chars": text_limits.NOTE,
    }
    if current is not None and not config["paused"]:
        context.update(_pair_context(campaign, current, None))
    return render(request, "annotation/judge.html", context)


@require_GET
@login_required
def pair_fragment(request, pk, assignment):
    """One pair as an HTML fragment (topic and document), swapped in by judge.js."""
    campaign = get_campaign_for_judge(request.user, pk)
    own = get_assignment_for_judge(request.user, campaign, assignment)
    # Rendered without the request: the fragment needs no context processor, and skipping
    # them saves the navigation's roles query on every pair a judge opens.
    html = render_to_string(
        "annotation/judge.html#pair", _pair_context(campaign, own, _own_judgment(own))
    )
    return HttpResponse(html)


# --- submissions (JSON) --------------------------------------------------------------------
# Each is one call into services, which finds the judge's own assignment in this campaign
# under a row lock (anything else is a 404). Progress is not sent back: judge.js keeps the
# judge's queue and counts it itself, and the grade path stays as short as it can be.


@json_post
def grade(request, pk, assignment):
    """Record or revise the judge's grade: POST grade, seconds (active time), request_id
    (a UUID; a repeat is a no-op). Returns the judge's judgment of the pair as it now is."""
    try:
        value = int(request.POST.get("grade", ""))
    except ValueError:
        raise ValidationError(ERRORS["grade_missing"]) from None
    judgment = services.record_judgment(
        assignment_id=assignment,
        campaign_id=pk,
        judge=request.user,
        grade=value,
        seconds=_seconds(request),
        request_id=_request_id(request),
        needs_text=True,
    )
    return JsonResponse(_state(judgment.assignment, judgment))


@json_post
def skip(request, pk, assignment):
    """Skip the pair with a reason: POST reason, seconds, request_id."""
    judgment = services.skip_assignment(
        assignment_id=assignment,
        campaign_id=pk,
        judge=request.user,
        reason=request.POST.get("reason", ""),
        seconds=_seconds(request),
        request_id=_request_id(request),
    )
    return JsonResponse(_state(judgment.assignment, judgment))


@json_post
def undo(request, pk, assignment):
    """Take back the grade or skip: the pair is open again, the history keeps what it was."""
    reopened = services.undo_judgment(assignment_id=assignment, campaign_id=pk, judge=request.user)
    return JsonResponse(_state(reopened, None))


@json_post
def note(request, pk, assignment):
    """Set the note on the judge's judgment of the pair: POST note (empty clears it)."""
    text = request.POST.get("note", "").strip()
    # The longest note a judge may keep on a pair (common.text_limits; the dialog stops
    # typing there too).
    if len(text) > text_limits.NOTE:
        raise ValidationError(ERRORS["note_too_long"].format(limit=text_limits.NOTE))
    judgment = services.set_note(
        assignment_id=assignment, campaign_id=pk, judge=request.user, note=text
    )
    return JsonResponse(_state(judgment.assignment, judgment))
