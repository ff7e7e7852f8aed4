"""A campaign's progress page (per judge and per topic, judges who grade suspiciously fast),
and the forms on it and on the detail page that change who judges: add or remove a judge,
move one judge's open work to another."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import forms, services, tasks
from annotation.access import get_campaign_for_lead
from annotation.models import Campaign, CampaignJudge
from annotation.views.common import (
    MESSAGES,
    campaign_figures,
    paginate,
    plural,
    remove_judge_with_note,
    sorting,
    start_campaign_job,
)
from jobs.services.limits import fits_in_request

JUDGE_COLUMNS = [
    ("judge", "Judge", False),
    ("percent", "Progress", True),
    ("done", "Done", True),
    ("total", "Assigned", True),
    ("median", "Median s / judgment", True),
]
TOPIC_COLUMNS = [
    ("qid", "Topic", False),
    ("percent", "Progress", True),
    ("done", "Done", True),
    ("total", "Assigned", True),
]


@require_GET
@login_required
def progress(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    members = {
        m.judge_id: m.judge
        for m in CampaignJudge.objects.filter(campaign=campaign).select_related("judge")
    }
    judge_rows = []
    for row in services.judge_progress(campaign=campaign):
        judge_rows.append(
            {
                "judge": row.username,
                "judge_id": row.judge_id,
                "done": row.done,
                "total": row.total,
                "percent": _percent(row.done, row.total),
                "median": row.median_seconds,
                "too_fast": row.too_fast,
                "member": row.judge_id in members,
            }
        )
    seen = {row["judge_id"] for row in judge_rows}
    for judge_id, judge in members.items():
        if judge_id not in seen:
            judge_rows.append(
                {
                    "judge": judge.username,
                    "judge_id": judge_id,
                    "done": 0,
                    "total": 0,
                    "percent": 0.0,
                    "median": None,
                    "too_fast": False,
                    "member": True,
                }
            )
    key, descending, judge_headers = sorting(
        request, JUDGE_COLUMNS, "judge", param="jsort", reset="jpage"
    )
    judge_rows = _sort_rows(judge_rows, key, descending, "judge")

    topic_rows = [
        {
            "qid": row["pair__topic__qid"],
            "query": row["pair__topic__query"],
            "done": row["done"],
            "total": row["total"],
            "percent": _percent(row["done"], row["total"]),
        }
        for row in services.topic_progress(campaign=campaign)
    ]
    key, descending, topic_headers = sorting(request, TOPIC_COLUMNS, "qid")
    topic_rows = _sort_rows(topic_rows, key, descending, "qid")
    medians_at, medians_pending = services.median_times(campaign=campaign)
    figures = campaign_figures(campaign)
    reassign_form = forms.ReassignForm(campaign=campaign)
    target = reassign_form.default_target()
    context = {
        "campaign": campaign,
        "figures": figures,
        "overall_percent": _percent(figures["done"], figures["assigned"]),
        "judge_headers": judge_headers,
        "judge_rows": judge_rows,
        "flagged": [row for row in judge_rows if row["too_fast"]],
        "fast_seconds": services.SUSPICIOUSLY_FAST_SECONDS,
        "medians_at": medians_at,
        "medians_pending": medians_pending,
        "topic_headers": topic_headers,
        "topics": paginate(request, topic_rows),
        "untouched_topics": figures["topics"] - len(topic_rows),
        "add_judge_form": forms.AddJudgeForm(campaign=campaign),
        "reassign_form": reassign_form,
        "can_reassign": target is not None,
        "reassign_default_to": target.pk if target else None,
    }
    return render(request, "annotation/progress.html", context)


def _percent(done: int, total: int) -> float:
    return 100.0 * done / total if total else 0.0


def _sort_rows(rows: list[dict], key: str, descending: bool, tiebreak: str) -> list[dict]:
    # Rows without a value (a judge with no timed judgment yet) go last either way.
    present = [row for row in rows if row[key] is not None]
    missing = [row for row in rows if row[key] is None]
    present.sort(key=lambda row: row[tiebreak])
    present.sort(key=lambda row: row[key], reverse=descending)
    return present + missing


# --- judges and reassignment ---------------------------------------------------------------


@require_POST
@login_required
def campaign_judges(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.JudgeForm(request.POST, campaign=campaign)
    if not form.is_valid():
        messages.error(request, _form_errors(form))
        return redirect(_back(request, campaign))
    judge = form.cleaned_data["judge"]
    adding = form.cleaned_data["action"] == "add"
    if adding:
        rows = services.assignments_due(campaign=campaign, judges=campaign.judges.count() + 1)
    else:
        rows = services.open_work(campaign=campaign, judge=judge)
    if not fits_in_request(rows):
        change = {"add_judges": [judge.pk]} if adding else {"remove_judges": [judge.pk]}
        return start_campaign_job(
            request,
            campaign,
            kind="edit_campaign",
            title=f"{'Add' if adding else 'Remove'} judge {judge}",
            task=tasks.edit_campaign_job,
            **change,
        )
    if adding:
        n = services.add_judge(campaign=campaign, judge=judge)
        messages.success(request, MESSAGES["added_judge"].format(user=judge, n=n, s=plural(n)))
    else:
        level, text = remove_judge_with_note(campaign, judge)
        messages.add_message(request, level, text)
    return redirect(_back(request, campaign))


@require_POST
@login_required
def reassign(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.ReassignForm(request.POST, campaign=campaign)
    if not form.is_valid():
        messages.error(request, _form_errors(form))
        return redirect(_back(request, campaign))
    source, target = form.cleaned_data["from_judge"], form.cleaned_data["to_judge"]
    topic = form.cleaned_data["topic"]
    if not fits_in_request(services.open_work(campaign=campaign, judge=source, topic=topic)):
        return start_campaign_job(
            request,
            campaign,
            kind="reassign",
            title=f"Move {source}'s open pairs to {target}",
            task=tasks.reassign_job,
            from_judge=source.pk,
            to_judge=target.pk,
            topic=topic.pk if topic is not None else None,
        )
    try:
        n = services.reassign(campaign=campaign, from_judge=source, to_judge=target, topic=topic)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect(_back(request, campaign))
    where = f" in topic {topic.qid}" if topic else ""
    if n:
        messages.success(
            request,
            MESSAGES["reassigned"].format(
                n=n, s=plural(n), source=source, target=target, where=where
            ),
        )
    else:
        messages.info(
            request,
            MESSAGES["nothing_reassigned"].format(source=source, target=target, where=where),
        )
    return redirect(_back(request, campaign))


def _back(request, campaign: Campaign) -> str:
    """Where a POST form returns to: the page it was on (progress or detail)."""
    if request.POST.get("back") == "progress":
        return reverse("annotation:progress", args=[campaign.pk])
    return campaign.get_absolute_url()


def _form_errors(form) -> str:
    return " ".join(str(error) for errors in form.errors.values() for error in errors)
