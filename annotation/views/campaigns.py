"""The lead's campaign pages: the list, a new campaign, its detail page and its edit.

Every campaign is fetched through annotation/access.py, so another lead's campaign (or a
guessed id) is a 404. The other lead pages: imports.py (topics, documents and pairs files),
pool.py (the pool and pooling runs), progress.py (progress, judges and reassignment); what
they share is in common.py.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, F, IntegerField, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from accounts.forms import team_picker
from accounts.services.roles import Role, has_role
from accounts.services.teams import choose_team
from annotation import forms, services, tasks
from annotation.access import campaigns_judged_by, campaigns_led_by, get_campaign_for_lead
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignJudge,
    JudgeTally,
    Topic,
    TopicTally,
)
from annotation.services import stopping
from annotation.views.common import (
    MESSAGES,
    campaign_figures,
    paginate,
    plural,
    recent_jobs,
    remove_judge_with_note,
    start_campaign_job,
)
from common.htmx import is_htmx
from jobs.services.limits import fits_in_request


@require_GET
@login_required
def campaign_list(request):
    user = request.user
    led = paginate(request, _with_figures(campaigns_led_by(user)))
    judged = list(campaigns_judged_by(user).order_by("-created_at"))
    # The judge's progress as their judging page counts it: pairs waiting for their
    # document's text are not in their queue yet (services.judge_assignments), said apart.
    gradable = ~services.WAITING_FOR_TEXT
    mine = {
        row["pair__campaign"]: row
        for row in Assignment.objects.filter(judge=user, pair__campaign__in=judged)
        .values("pair__campaign")
        .annotate(
            total=Count("pk", filter=gradable),
            done=Count("pk", filter=gradable & ~Q(status=AssignmentStatus.OPEN)),
            waiting=Count("pk", filter=services.WAITING_FOR_TEXT),
        )
    }
    for campaign in judged:
        figures = mine.get(campaign.pk, {"total": 0, "done": 0, "waiting": 0})
        campaign.my_total, campaign.my_done = figures["total"], figures["done"]
        campaign.my_waiting = figures["waiting"]
    can_lead = user.is_superuser or has_role(user, Role.LEAD)
    return render(
        request,
        "annotation/campaign_list.html",
        {"led": led, "judged": judged, "can_lead": can_lead},
    )


def _count(queryset, field: str = "campaign"):
    """A correlated COUNT(*) of ``queryset`` rows whose ``field`` is the outer campaign: one
    subquery per figure, so several figures never multiply each other's joins."""
    counted = (
        queryset.filter(**{field: OuterRef("pk")})
        .order_by()
        .values(field)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def _summed(field: str):
    """A correlated SUM of the outer campaign's topics' tallies' ``field``."""
    summed = (
        TopicTally.objects.filter(campaign=OuterRef("pk"))
        .order_by()
        .values("campaign")
        .annotate(n=Sum(field))
        .values("n")
    )
    return Coalesce(Subquery(summed, output_field=IntegerField()), 0)


def _with_figures(campaigns):
    # Pairs and assignments from the topics' tallies: a row per topic, not per assignment.
    return campaigns.annotate(
        topic_count=_count(Topic.objects.all()),
        pair_count=_summed("pairs"),
        judge_count=_count(CampaignJudge.objects.all()),
        assigned=_summed("assigned"),
        done=_summed("assigned") - _summed("open"),
    ).select_related("lead")


# --- create and edit -----------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@login_required
def campaign_create(request):
    if not (request.user.is_superuser or has_role(request.user, Role.LEAD)):
        raise PermissionDenied("Only leads create campaigns.")
    if request.method == "POST":
        form = forms.CampaignForm(request.POST, user=request.user)
        if form.is_valid():
            data = form.cleaned_data
            try:
                team = choose_team(request.user, data.get("team"), Role.LEAD)
                campaign = services.create_campaign(
                    team=team,
                    lead=request.user,
                    name=data["name"],
                    description=data["description"],
                    scale=data["scale_items"],
                    guidelines=data["guidelines"],
                    overlap=data["overlap"],
                    relevance_threshold=data["relevance_threshold"],
                    adjudication_rule=data["adjudication_rule"],
                    gold_min_accuracy=data["gold_min_accuracy"],
                    pool_ordering=data["pool_ordering"],
                    judges=data["judges"],
                )
            except ValidationError as error:
                form.add_error(None, error)
            else:
                messages.success(request, MESSAGES["created"].format(name=campaign.name))
                # A judges-per-pair warning is the campaign page's own (figures): not
                # flashed as well, so the page says it once.
                return redirect(campaign)
        return render(
            request,
            "annotation/campaign_form.html",
            {"form": form, **team_picker(request.user, form, Role.LEAD)},
            status=400,
        )
    form = forms.CampaignForm(scale_key=request.GET.get("scale", ""), user=request.user)
    return _render_form(request, form, None)


@require_http_methods(["GET", "POST"])
@login_required
def campaign_edit(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    if request.method == "POST":
        form = forms.CampaignForm(request.POST, campaign=campaign)
        if form.is_valid():
            job = _large_edit_as_job(request, campaign, form.cleaned_data)
            if job is not None:
                return job
            try:
                notes = _save_campaign(campaign, form.cleaned_data)
            except ValidationError as error:
                # The form checked the same rules; this is a judgment or an edit that came in
                # between, seen by services.update_campaign under its lock.
                form.add_error(None, error)
            else:
                for level, text in notes:
                    messages.add_message(request, level, text)
                return redirect(campaign)
        return render(
            request,
            "annotation/campaign_form.html",
            {"form": form, "campaign": campaign},
            status=400,
        )
    form = forms.CampaignForm(campaign=campaign, scale_key=request.GET.get("scale", ""))
    return _render_form(request, form, campaign)


def _render_form(request, form, campaign):
    # The scale select asks for its grade rows again when it changes (htmx): only the
    # fragment comes back.
    template = "annotation/campaign_form.html"
    if is_htmx(request) and "scale" in request.GET:
        template += "#scale-fields"
    teams = team_picker(request.user, form, Role.LEAD) if campaign is None else {}
    return render(request, template, {"form": form, "campaign": campaign, **teams})


def _changes(data: dict) -> dict:
    """The form's settings, as services.update_campaign takes them."""
    return {
        "name": data["name"],
        "description": data["description"],
        "scale": data["scale_items"],
        "guidelines": data["guidelines"],
        "overlap": data["overlap"],
        "relevance_threshold": data["relevance_threshold"],
        "adjudication_rule": data["adjudication_rule"],
        "gold_min_accuracy": data["gold_min_accuracy"],
        "pool_ordering": data["pool_ordering"],
    }


def _large_edit_as_job(request, campaign: Campaign, data: dict):
    """An edit that would write more than a request may (SYNC_WRITE_ROWS: a larger overlap,
    judges added to a large pool or removed from much open work) is saved by a job, as
    _save_campaign would save it; the redirect to the job's page, or None."""
    changes = _changes(data)
    wanted = set(data["judges"])
    current = set(campaign.judges.all())
    added = sorted(wanted - current, key=lambda u: u.username)
    removed = sorted(current - wanted, key=lambda u: u.username)
    rows = services.update_writes(campaign=campaign, changes=changes)
    if added:
        overlap = changes["overlap"]
        rows += services.assignments_due(campaign=campaign, judges=len(wanted), overlap=overlap)
    rows += sum(services.open_work(campaign=campaign, judge=judge) for judge in removed)
    if fits_in_request(rows):
        return None
    return start_campaign_job(
        request,
        campaign,
        kind="edit_campaign",
        title="Save the campaign",
        task=tasks.edit_campaign_job,
        changes=changes,
        add_judges=[judge.pk for judge in added],
        remove_judges=[judge.pk for judge in removed],
    )


def _save_campaign(campaign: Campaign, data: dict) -> list[tuple[int, str]]:
    """Apply an edit in one transaction: the fields (services.update_campaign, which gives
    pairs more judges if the overlap grew), then the judges, added before removed so that a
    removed judge's open work can go to the new ones. Returns the messages to show."""
    notes = [(messages.SUCCESS, MESSAGES["saved"])]
    with transaction.atomic():
        change = services.update_campaign(campaign=campaign, **_changes(data))
        campaign = change.campaign
        if change.assigned:
            n = change.assigned
            notes.append((messages.INFO, MESSAGES["assigned_more"].format(n=n, s=plural(n))))
        wanted = set(data["judges"])
        current = set(campaign.judges.all())
        for judge in sorted(wanted - current, key=lambda u: u.username):
            n = services.add_judge(campaign=campaign, judge=judge)
            notes.append(
                (messages.INFO, MESSAGES["added_judge"].format(user=judge, n=n, s=plural(n)))
            )
        for judge in sorted(current - wanted, key=lambda u: u.username):
            notes.append(remove_judge_with_note(campaign, judge))
    # The campaign page, where the edit leads, warns of too few judges itself (figures).
    return notes


# --- detail --------------------------------------------------------------------------------


@require_GET
@login_required
def campaign_detail(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    return render_detail(request, campaign)


def render_detail(request, campaign, status=200, **forms_given):
    """The detail page; an import form that failed is given back to show its errors."""
    # From the topics' tallies: no pair is counted.
    topics = campaign.topics.annotate(pair_count=Coalesce(F("tally__pairs"), 0)).order_by("qid")
    figures = campaign_figures(campaign)
    context = {
        "campaign": campaign,
        "figures": figures,
        "next_step": _next_step(campaign, figures),
        "judges": _judge_rows(campaign),
        "topics": paginate(request, topics),
        "topics_form": forms_given.get("topics_form") or forms.TopicsImportForm(),
        "documents_form": forms_given.get("documents_form") or forms.DocumentsImportForm(),
        "add_judge_form": forms.AddJudgeForm(campaign=campaign),
        "threshold_label": _label_of(campaign, campaign.relevance_threshold),
        "recent_jobs": recent_jobs(request, campaign),
        "stop": stopping.stop_status(campaign),
    }
    return render(request, "annotation/campaign_detail.html", context, status=status)


def _judge_rows(campaign: Campaign) -> list[dict]:
    """The campaign's judges with their assignments here (total, done)."""
    counts = {
        t.judge_id: {"total": t.assigned, "done": t.graded + t.skipped}
        for t in JudgeTally.objects.filter(campaign=campaign)
    }
    rows = []
    for member in (
        CampaignJudge.objects.filter(campaign=campaign)
        .select_related("judge")
        .order_by("judge__username")
    ):
        figures = counts.get(member.judge_id, {"total": 0, "done": 0})
        rows.append(
            {
                "judge": member.judge,
                "added_at": member.added_at,
                "total": figures["total"],
                "done": figures["done"],
                "open": figures["total"] - figures["done"],
            }
        )
    return rows


def _next_step(campaign: Campaign, figures: dict) -> dict | None:
    """What the lead most likely wants to do next on the detail page, or None."""
    pool = reverse("annotation:pool-detail", args=[campaign.pk])
    if not figures["topics"]:
        return {"text": "Next: import the campaign's topics.", "url": "#import", "link": "Import"}
    if not figures["pairs"]:
        return {
            "text": "Next: build the pool by pooling stored runs or importing a pairs file.",
            "url": pool,
            "link": "Go to the pool",
        }
    if not figures["judges"]:
        return {
            "text": "Next: add judges; the pool waits unassigned.",
            "url": "#judges",
            "link": "Judges",
        }
    if figures["lacking_text"]:
        n = figures["lacking_text"]
        return {
            "text": f"{n:,} document{plural(n)} without text: import a documents file that "
            "holds them so judges can grade their pairs.",
            "url": pool + "#lacking-text",
            "link": "See which",
        }
    return None


def _label_of(campaign: Campaign, grade: int) -> str:
    return next((item["label"] for item in campaign.scale if item["grade"] == grade), "")
