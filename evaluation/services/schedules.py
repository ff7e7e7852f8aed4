"""Schedules of search endpoints (issue 31, item 5): creating, changing, pausing and
deleting one, who sees which, and their alerts. A schedule runs as its owner: the query set
and the qrels are checked with the owner's access (a campaign they lead, a qrels version they
read), as a run made by hand is (evaluation/services/endpoint_runs.py). A schedule belongs to
its endpoint's team (its runs land there); only the owner, while a lead or engineer of that
team, and admins see it; anyone else gets a 404, as for every object they may not see.

The firing itself (the clock's tick, the run, its evaluation, the alert and its webhook and
e-mail) is evaluation/services/schedule_runs.py; the rules are evaluation/schedules/ (pure)."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from accounts.services.teams import in_teams
from common import outbound
from common.ids import parse_id, parse_small_int
from common.secrets import seal
from evaluation import measures
from evaluation.access import READERS, readable_qrels, visible_endpoints
from evaluation.measures import specs as measure_specs
from evaluation.models import (
    QrelsVersion,
    Schedule,
    ScheduleAlert,
    ScheduleChange,
    SearchEndpoint,
)
from evaluation.schedules import cron, drops, recipients, webhooks
from evaluation.services import endpoint_runs
from evaluation.services.search import MESSAGES as SEARCH_MESSAGES

MAX_EMAILS = 10
DEFAULT_MEASURES = ("ndcg_cut.10",)
# What a schedule's owner may change; its endpoint, query set and depth k stay (a new
# schedule asks another engine or other topics).
EDITABLE = (
    "name",
    "cron",
    "measures",
    "qrels",
    "threshold",
    "alert_on_interval",
    "webhook_url",
    "webhook_secret",
    "emails",
    "paused",
)

MESSAGES = {
    "name": "Give the schedule a name (at most 100 characters).",
    "no_endpoint": "No search endpoint of your teams has that id.",
    "no_qrels": SEARCH_MESSAGES["no_qrels"],
    "secret": "A webhook needs a shared secret of {low} to {high} printable characters without "
    "spaces, to sign its deliveries.",
    "secret_without_url": "A shared secret signs webhook deliveries: give the webhook's address "
    "too.",
    "webhook_url": "The webhook's address cannot be used: {why}.",
    "emails": "Give at most {n} e-mail addresses, separated by commas or spaces.",
    "not_editable": "{fields}: a schedule's endpoint, query set and k stay; make a new schedule "
    "to change them.",
    "email": "{value!r} is not an e-mail address.",
    "measures": "The measures cannot be used: {why}",
    "boolean": "{field} is true or false.",
}


def min_interval() -> timedelta:
    """The shortest time between two firings of a schedule (SCHEDULE_MIN_INTERVAL_MINUTES)."""
    return timedelta(minutes=settings.SCHEDULE_MIN_INTERVAL_MINUTES)


def zone() -> ZoneInfo:
    """Cron expressions are read in the server's zone (TIME_ZONE)."""
    return ZoneInfo(settings.TIME_ZONE)


def _invalid(key: str, **values) -> ValidationError:
    return ValidationError(MESSAGES[key].format(**values))


# --- who sees what ---------------------------------------------------------------------------


def visible_schedules(user):
    """The schedules ``user`` sees: their own, of the search endpoints of their teams (a
    schedule follows its endpoint's team: one who left the team no longer sees it, and its
    firings fail); an admin's, everyone's."""
    found = Schedule.objects.select_related("endpoint", "qrels", "created_by")
    if user.is_superuser:
        return found
    return in_teams(found.filter(created_by=user), user, *READERS, field="endpoint__team")


def open_alerts(user, *, qrels: QrelsVersion | None = None):
    """Alerts not yet acknowledged, of the schedules ``user`` sees (of one qrels version's,
    for its leaderboard), newest first."""
    alerts = ScheduleAlert.objects.filter(acknowledged_at__isnull=True).select_related(
        "schedule", "firing"
    )
    if not user.is_superuser:
        alerts = alerts.filter(schedule__in=visible_schedules(user).values("pk"))
    if qrels is not None:
        alerts = alerts.filter(schedule__qrels=qrels)
    return alerts


def acknowledge_alert(*, alert: ScheduleAlert, user) -> ScheduleAlert:
    """The banner goes; the alert stays in the schedule's history. A second time changes
    nothing."""
    if alert.acknowledged_at is None:
        alert.acknowledged_at = timezone.now()
        alert.acknowledged_by = user
        alert.save(update_fields=["acknowledged_at", "acknowledged_by"])
    return alert


# --- checking what is given ----------------------------------------------------------------


def check_cron(text, *, now=None) -> str:
    try:
        return cron.check_cron(
            text, min_interval=min_interval(), zone=zone(), now=now or timezone.now()
        )
    except cron.CronError as error:
        raise ValidationError(str(error)) from None


def check_threshold(value) -> float | None:
    try:
        return drops.check_threshold(value)
    except ValueError as error:
        raise ValidationError(str(error)) from None


def check_emails(value) -> list[str]:
    if value in (None, ""):
        return []
    items = value.replace(",", " ").split() if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or len(items) > MAX_EMAILS:
        raise _invalid("emails", n=MAX_EMAILS)
    emails = []
    for item in items:
        text = str(item).strip() if isinstance(item, str) else None
        try:
            if text is None:
                raise ValidationError("")
            validate_email(text)
        except ValidationError:
            raise _invalid("email", value=str(item)[:100]) from None
        if not recipients.domain_allowed(text, settings.ALERT_EMAIL_DOMAINS):
            raise ValidationError(recipients.refusal(text, settings.ALERT_EMAIL_DOMAINS))
        if text not in emails:
            emails.append(text)
    return emails


def check_qrels(value, *, owner) -> QrelsVersion:
    """A qrels version the schedule's owner may read."""
    found = None
    if parse_id(str(value)) is not None:
        found = readable_qrels(owner, QrelsVersion.objects.filter(pk=parse_id(str(value)))).first()
    if found is None:
        raise _invalid("no_qrels")
    return found


def check_webhook(url: str, secret: str | None, *, had_secret: bool = False) -> None:
    """ValidationError naming ``webhook_url`` or ``webhook_secret``: an address the outbound
    policy refuses, or a webhook without a usable secret (``had_secret``: one is stored and
    ``secret`` None keeps it)."""
    if url:
        try:
            webhooks.check_webhook_url(url, outbound.policy_from_settings(settings))
        except outbound.OutboundError as error:
            raise ValidationError(
                {"webhook_url": [MESSAGES["webhook_url"].format(why=error.message)]}
            ) from None
        if secret is None and had_secret:
            return
        if not secret or not (
            webhooks.SECRET_MIN <= len(secret) <= webhooks.SECRET_MAX
            and all(0x21 <= ord(c) <= 0x7E for c in secret)
        ):
            message = MESSAGES["secret"].format(low=webhooks.SECRET_MIN, high=webhooks.SECRET_MAX)
            raise ValidationError({"webhook_secret": [message]})
    elif secret:
        raise ValidationError({"webhook_secret": [MESSAGES["secret_without_url"]]})


def check_measures(value) -> tuple[list[str], str]:
    """Canonical measure specs, and the output name of the first one given (the watched
    measure); ValidationError when one is not a mean over topics or cannot be read."""
    given = [value] if isinstance(value, str) else list(value or DEFAULT_MEASURES)
    options = measures.Options()
    try:
        chosen = measure_specs.read_measures(given, DEFAULT_MEASURES)
        specs = measure_specs.canonical_measures(chosen, options)
        watched = measures.output_names(
            list(measure_specs.canonical_measures(chosen[:1], options)), options
        )[0]
    except ValueError as error:  # OptionsError among them
        raise _invalid("measures", why=str(error)) from None
    return list(specs), watched


def _check_name(name) -> str:
    name = str(name or "").strip()
    if not name or len(name) > 100:
        raise _invalid("name")
    return name


def _check_bool(value, field: str) -> bool:
    if isinstance(value, bool):
        return value
    raise _invalid("boolean", field=field)


# --- creating and changing -----------------------------------------------------------------


@contextmanager
def _about(field: str):
    """A ValidationError raised inside names ``field`` (the API's key, the form's field),
    unless it names its own fields already."""
    try:
        yield
    except ValidationError as error:
        if hasattr(error, "error_dict"):
            raise
        raise ValidationError({field: error.messages}) from None


def create_schedule(
    *,
    user,
    name: str,
    endpoint,
    qrels,
    cron_expression: str,
    k,
    campaign=None,
    topics_qrels=None,
    measure_specs=None,
    threshold=None,
    alert_on_interval: bool = True,
    webhook_url: str = "",
    webhook_secret: str = "",
    emails=None,
    now=None,
) -> Schedule:
    """A new schedule owned by ``user``, waiting for its first slot after now. Each value is
    checked as its owner's runs and dashboards check it; ValidationError names the field and
    says what is wrong."""
    now = now or timezone.now()
    with _about("name"):
        name = _check_name(name)
    found = None
    if parse_id(str(endpoint)) is not None:
        endpoints = visible_endpoints(user, SearchEndpoint.objects.all())
        found = endpoints.filter(pk=parse_id(str(endpoint))).first()
    if found is None:
        raise ValidationError({"endpoint": [MESSAGES["no_endpoint"]]})
    with _about("qrels"):
        scored = check_qrels(qrels, owner=user)
    with _about("k"):
        if isinstance(k, str):  # a form's text: a whole number or refused with check_k's words
            k = parse_small_int(k.strip()) if parse_small_int(k.strip()) is not None else k
        k = endpoint_runs.check_k(k)
    with _about("campaign" if campaign not in (None, "") else "topics_qrels"):
        queries = endpoint_runs.load_query_set(user=user, campaign=campaign, qrels=topics_qrels)
    with _about("measures"):
        specs, watched = check_measures(measure_specs)
    with _about("cron"):
        expression = check_cron(cron_expression, now=now)
    with _about("threshold"):
        threshold = check_threshold(threshold)
    with _about("alert_on_interval"):
        alert_on_interval = _check_bool(alert_on_interval, "Alert outside the interval")
    webhook_url = str(webhook_url or "").strip()
    check_webhook(webhook_url, webhook_secret or "")
    with _about("emails"):
        emails = check_emails(emails)
    return Schedule.objects.create(
        name=name,
        endpoint=found,
        campaign=parse_id(str(campaign)) if campaign not in (None, "") else None,
        topics_qrels_id=parse_id(str(topics_qrels)) if topics_qrels not in (None, "") else None,
        query_set=queries.label[:300],
        qrels=scored,
        measures=specs,
        alert_measure=watched,
        k=k,
        cron=expression,
        threshold=threshold,
        alert_on_interval=alert_on_interval,
        webhook_url=webhook_url,
        webhook_secret_sealed=seal(webhook_secret) if webhook_url else "",
        emails=emails,
        next_run_at=cron.next_after(expression, now, zone=zone()),
        created_by=user,
    )


def _checked_changes(schedule: Schedule, changes: dict, now) -> dict:
    """The model fields ``changes`` set, each checked; ValidationError naming every field
    that is wrong (all of them at once, as a form shows them)."""
    errors: dict[str, list[str]] = {}
    fields: dict = {}

    def check(field, rule, *args, **kwargs):
        try:
            return rule(*args, **kwargs)
        except ValidationError as error:
            named = error.message_dict if hasattr(error, "error_dict") else {field: error.messages}
            for key, messages in named.items():
                errors.setdefault(key, []).extend(messages)

    if "name" in changes:
        fields["name"] = check("name", _check_name, changes["name"])
    if "cron" in changes:
        fields["cron"] = check("cron", check_cron, changes["cron"], now=now)
    if "measures" in changes:
        checked = check("measures", check_measures, changes["measures"])
        if checked:
            fields["measures"], fields["alert_measure"] = checked
    if "qrels" in changes:
        fields["qrels"] = check("qrels", check_qrels, changes["qrels"], owner=schedule.created_by)
    if "threshold" in changes:
        fields["threshold"] = check("threshold", check_threshold, changes["threshold"])
    if "alert_on_interval" in changes:
        fields["alert_on_interval"] = check(
            "alert_on_interval",
            _check_bool,
            changes["alert_on_interval"],
            "Alert outside the interval",
        )
    if "emails" in changes:
        fields["emails"] = check("emails", check_emails, changes["emails"])
    if "webhook_url" in changes or "webhook_secret" in changes:
        url = str(changes.get("webhook_url", schedule.webhook_url) or "").strip()
        secret = changes.get("webhook_secret") or None
        had = bool(schedule.webhook_secret_sealed)
        check("webhook_url", check_webhook, url, secret, had_secret=had)
        fields["webhook_url"] = url
        if not url:
            fields["webhook_secret_sealed"] = ""
        elif secret:
            fields["webhook_secret_sealed"] = seal(secret)
    if "paused" in changes:
        fields["paused"] = check("paused", _check_bool, changes["paused"], "Paused")
    if errors:
        raise ValidationError(errors)
    return fields


def _shown(field: str, value):
    """A field's value as the change history keeps it."""
    if field == "qrels":
        return value.label if value is not None else None
    if field == "alert_measure":
        return measures.display_name(value)
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return value


def update_schedule(*, schedule: Schedule, user=None, now=None, **changes) -> Schedule:
    """Change what EDITABLE names, keeping a ScheduleChange of each field that changed (its
    firings, alerts and history stay). A new cron expression, or a schedule resumed, waits
    for its next slot after now (a paused schedule does not catch up with the slots it slept
    through). An empty ``webhook_url`` removes the webhook and its secret; an absent or empty
    ``webhook_secret`` keeps the stored one (it is never shown back). ValidationError maps
    each wrong field to what is wrong with it."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise ValidationError(
            {field: [MESSAGES["not_editable"].format(fields=field)] for field in sorted(unknown)}
        )
    now = now or timezone.now()
    fields = _checked_changes(schedule, changes, now)
    # Only what differs is saved and kept in the history (a new secret always differs).
    fields = {
        field: value
        for field, value in fields.items()
        if (field == "webhook_secret_sealed" and value) or getattr(schedule, field) != value
    }
    resumed = schedule.paused and fields.get("paused") is False
    if "cron" in fields or resumed:
        fields["next_run_at"] = cron.next_after(fields.get("cron", schedule.cron), now, zone=zone())
    if not fields:
        return schedule
    history = {
        field: [_shown(field, getattr(schedule, field)), _shown(field, value)]
        for field, value in fields.items()
        if field not in ("next_run_at", "webhook_secret_sealed")
    }
    if "webhook_secret_sealed" in fields:  # never the secret itself: whether one is stored
        history["webhook_secret"] = [
            "(stored)" if schedule.webhook_secret_sealed else "",
            "(new)" if fields["webhook_secret_sealed"] else "",
        ]
    for field, value in fields.items():
        setattr(schedule, field, value)
    with transaction.atomic():
        schedule.save(update_fields=[*fields, "updated_at"])
        ScheduleChange.objects.create(
            schedule=schedule, changed_by=user, changed_at=now, changes=history
        )
    return schedule


def delete_schedule(*, schedule: Schedule) -> None:
    """The schedule, its firings and alerts go; the runs and evaluations it made stay."""
    schedule.delete()


def describe_rule(schedule: Schedule) -> str:
    """When an alert is raised, in words."""
    name = measures.display_name(schedule.alert_measure)
    rules = []
    if schedule.threshold is not None:
        rules.append(f"{name} falls by more than {schedule.threshold:.4f}")
    if schedule.alert_on_interval:
        rules.append(f"{name} falls below the previous firing's 95% interval")
    return " or ".join(rules) if rules else "never (no rule set)"
