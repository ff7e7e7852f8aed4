"""Schedules in the browser: the list with a form for a new one, a schedule's page (its
settings, the open alerts as a banner, the history chart of its measure, its firings, its
alerts with how their webhook and e-mail went, and its changes), its edit form, and pausing,
resuming, deleting and acknowledging an alert. A schedule is its owner's (and admins'): anyone else gets a 404.
The rules live in evaluation/services/schedules.py and schedule_runs.py."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.ids import parse_id
from evaluation import measures
from evaluation.access import readable_qrels, visible_endpoints
from evaluation.models import (
    QrelsVersion,
    ScheduleAlert,
    ScheduleChange,
    ScheduleFiring,
    SearchEndpoint,
)
from evaluation.schedules import cron
from evaluation.services import endpoint_runs, schedule_runs
from evaluation.services import schedules as service
from evaluation.views.common import require_reader

MESSAGES = {
    "created": "Schedule {name} saved: it fires next at {when:%Y-%m-%d %H:%M %Z}.",
    "paused": "Schedule {name} paused.",
    "resumed": "Schedule {name} resumed: it fires next at {when:%Y-%m-%d %H:%M %Z}.",
    "deleted": "Schedule {name} deleted; the runs it made stay.",
    "acknowledged": "Alert acknowledged.",
    "changed": "Schedule {name} saved.",
    "unchanged": "Nothing changed.",
    "query_set": "Choose a query set: a campaign you lead or a qrels version.",
}
FIELDS = (
    "name",
    "endpoint",
    "query_set",
    "qrels",
    "measures",
    "k",
    "cron",
    "threshold",
    "alert_on_interval",
    "webhook_url",
    "emails",
)


def _schedule_for(request, pk):
    require_reader(request.user)
    return get_object_or_404(service.visible_schedules(request.user), pk=pk)


def _form_context(request, values=None) -> dict:
    """The form's choices as (value, label) text pairs, so a refused form keeps each choice."""
    sets = endpoint_runs.query_set_choices(request.user)
    return {
        "endpoints": [
            (str(pk), name)
            for pk, name in visible_endpoints(
                request.user, SearchEndpoint.objects.order_by("name")
            ).values_list("pk", "name")
        ],
        "campaign_sets": [(f"campaign:{pk}", name) for pk, name in sets["campaigns"]],
        "qrels_sets": [(f"qrels:{pk}", label) for pk, label in sets["qrels"]],
        "qrels_choices": [
            (str(q.pk), q.label)
            for q in readable_qrels(request.user, QrelsVersion.objects.order_by("-pk"))
        ],
        "values": values
        or {"cron": "0 3 * * *", "k": 100, "measures": "nDCG@10", "alert_on_interval": True},
        "min_interval": cron.describe_gap(service.min_interval()),
        "time_zone": service.zone(),
        "allowed_domains": settings.ALERT_EMAIL_DOMAINS,
    }


@require_GET
@login_required
def schedule_list(request):
    require_reader(request.user)
    return _render_list(request)


def _render_list(request, *, values=None, error=None, status=200):
    schedules = service.visible_schedules(request.user).order_by("name", "pk")
    return render(
        request,
        "evaluation/schedule_list.html",
        {
            "schedules": schedules,
            "alerts": service.open_alerts(request.user).select_related("schedule")[:20],
            "error": error,
            **_form_context(request, values),
        },
        status=status,
    )


def _query_set(value: str) -> dict:
    kind, _, pk = (value or "").partition(":")
    if kind not in ("campaign", "qrels") or parse_id(pk) is None:
        raise ValidationError(MESSAGES["query_set"])
    return {"campaign": parse_id(pk)} if kind == "campaign" else {"topics_qrels": parse_id(pk)}


@require_POST
@login_required
def schedule_new(request):
    require_reader(request.user)
    values = {field: request.POST.get(field, "")[:5000] for field in FIELDS}
    values["alert_on_interval"] = request.POST.get("alert_on_interval") == "on"
    try:
        schedule = service.create_schedule(
            user=request.user,
            name=values["name"],
            endpoint=values["endpoint"],
            qrels=values["qrels"],
            cron_expression=values["cron"],
            k=values["k"],
            measure_specs=values["measures"].replace(",", " ").split(),
            threshold=values["threshold"],
            alert_on_interval=values["alert_on_interval"],
            webhook_url=values["webhook_url"],
            webhook_secret=request.POST.get("webhook_secret", "")[:1000],
            emails=values["emails"],
            **_query_set(values["query_set"]),
        )
    except ValidationError as error:
        return _render_list(request, values=values, error=" ".join(error.messages), status=400)
    messages.success(
        request, MESSAGES["created"].format(name=schedule.name, when=_local(schedule.next_run_at))
    )
    return redirect(schedule)


def _local(when):
    return when.astimezone(service.zone())


@require_GET
@login_required
def schedule_detail(request, pk):
    schedule = _schedule_for(request, pk)
    firings = ScheduleFiring.objects.filter(schedule=schedule).select_related(
        "run__system", "qrels"
    )[:50]
    return render(
        request,
        "evaluation/schedule_detail.html",
        {
            "schedule": schedule,
            "measure": measures.display_name(schedule.alert_measure),
            "rule": service.describe_rule(schedule),
            "next_run": _local(schedule.next_run_at) if schedule.next_run_at else None,
            "open_alerts": service.open_alerts(request.user).filter(schedule=schedule)[:5],
            "alerts": ScheduleAlert.objects.filter(schedule=schedule).select_related("firing")[:50],
            "changes": ScheduleChange.objects.filter(schedule=schedule).select_related(
                "changed_by"
            )[:50],
            "firings": firings,
            "history": schedule_runs.history(schedule),
            "measure_names": [measures.display_name(name) for name in _watched_first(schedule)],
        },
    )


@require_POST
@login_required
def schedule_pause(request, pk):
    """Pause (``paused=1``) or resume (``paused=0``) a schedule; on to its page."""
    schedule = _schedule_for(request, pk)
    paused = request.POST.get("paused") == "1"
    service.update_schedule(schedule=schedule, user=request.user, paused=paused)
    key = "paused" if paused else "resumed"
    messages.success(
        request,
        MESSAGES[key].format(
            name=schedule.name, when=_local(schedule.next_run_at) if schedule.next_run_at else None
        ),
    )
    return redirect(schedule)


EDITED = (
    "name",
    "cron",
    "measures",
    "qrels",
    "threshold",
    "webhook_url",
    "webhook_secret",
    "emails",
)


def _edit_values(schedule) -> dict:
    """The edit form's values of a stored schedule (never its webhook secret)."""
    return {
        "name": schedule.name,
        "cron": schedule.cron,
        "measures": " ".join(measures.display_name(name) for name in _watched_first(schedule)),
        "qrels": str(schedule.qrels_id),
        "threshold": "" if schedule.threshold is None else f"{schedule.threshold:g}",
        "alert_on_interval": schedule.alert_on_interval,
        "webhook_url": schedule.webhook_url,
        "emails": ", ".join(schedule.emails),
        "paused": schedule.paused,
    }


def _watched_first(schedule) -> list[str]:
    """The schedule's measures' output names, the watched one first (the form's first
    measure is the watched one, so saving the form unchanged keeps it)."""
    names = measures.output_names(list(schedule.measures), measures.Options())
    return sorted(names, key=lambda name: name != schedule.alert_measure)


@require_http_methods(["GET", "POST"])
@login_required
def schedule_edit(request, pk):
    """GET: the form with the schedule's values; POST: save what changed (each wrong field
    shown beside it, 400), on to the schedule's page."""
    schedule = _schedule_for(request, pk)
    values, errors, status = _edit_values(schedule), {}, 200
    if request.method == "POST":
        values = {field: request.POST.get(field, "")[:5000] for field in EDITED}
        values["alert_on_interval"] = request.POST.get("alert_on_interval") == "on"
        values["paused"] = request.POST.get("paused") == "on"
        changes = {
            **{field: values[field] for field in EDITED if field != "measures"},
            "measures": values["measures"].replace(",", " ").split(),
            "alert_on_interval": values["alert_on_interval"],
            "paused": values["paused"],
        }
        if not changes["webhook_secret"]:
            del changes["webhook_secret"]  # empty: keep the stored one
        values["webhook_secret"] = ""  # never sent back, even refused
        before = schedule.changes.count()
        try:
            service.update_schedule(schedule=schedule, user=request.user, **changes)
        except ValidationError as error:
            errors, status = error.message_dict, 400
            schedule.refresh_from_db()
        else:
            changed = schedule.changes.count() > before
            messages.success(
                request,
                MESSAGES["changed" if changed else "unchanged"].format(name=schedule.name),
            )
            return redirect(schedule)
    context = _form_context(request, values)
    context["qrels_choices"] = _with_current(context["qrels_choices"], schedule.qrels)
    return render(
        request,
        "evaluation/schedule_edit.html",
        {**context, "schedule": schedule, "errors": errors},
        status=status,
    )


def _with_current(choices: list, qrels) -> list:
    """The form's qrels choices, with the schedule's own even when its editor (an admin
    editing another's) would not see it in their own list."""
    if any(value == str(qrels.pk) for value, _ in choices):
        return choices
    return [(str(qrels.pk), qrels.label), *choices]


@require_POST
@login_required
def schedule_delete(request, pk):
    schedule = _schedule_for(request, pk)
    name = schedule.name
    service.delete_schedule(schedule=schedule)
    messages.success(request, MESSAGES["deleted"].format(name=name))
    return redirect("evaluation:schedule-list")


@require_POST
@login_required
def alert_acknowledge(request, pk):
    require_reader(request.user)
    alert = get_object_or_404(
        ScheduleAlert.objects.filter(schedule__in=service.visible_schedules(request.user)), pk=pk
    )
    service.acknowledge_alert(alert=alert, user=request.user)
    messages.success(request, MESSAGES["acknowledged"])
    return redirect(alert.schedule)
