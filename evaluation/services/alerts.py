"""A schedule's alerts (issue 31, item 5): raising one when a firing's watched measure dropped
(``raise_alert``) or when a firing failed as a whole (``raise_failure_alert``: one alert for a
run of consecutive failures), and telling about it: the webhook, a JSON POST signed with
the schedule's shared secret (evaluation/schedules/webhooks.py) sent only through the server's
outbound policy and tried again with backoff, and the e-mail through Django's mail settings.
Each outcome (sent, or failed with the class of problem and the attempts made) is kept on the
alert for the schedule's page; a failure is never raised, so one channel failing does not stop
the other, nor the firing."""

from __future__ import annotations

import random
import time

from django.conf import settings
from django.core.mail import EmailMessage
from django.utils import timezone

from common import outbound
from common.secrets import SecretError, unseal
from evaluation import measures
from evaluation.models import AlertKind, DeliveryStatus, FiringStatus, ScheduleAlert, ScheduleFiring
from evaluation.schedules import drops, recipients, webhooks
from evaluation.services.schedules import describe_rule

WEBHOOK_EVENT = "schedule.alert"
FAILURE_EVENT = "schedule.failure"
MAILER = "default"  # settings.MAILERS
ERROR_CHARS = 500

MESSAGES = {
    "subject": "[Qrelsmith] {measure} dropped on {name}: {previous:.4f} → {current:.4f}",
    "reason_threshold": "it fell by more than the threshold of {threshold:.4f}",
    "reason_interval": "it fell below the previous firing's 95% interval ({low:.4f}–{high:.4f})",
    "secret": "the webhook's shared secret cannot be read: {why}",
    "failure_subject": "[Qrelsmith] Schedule {name} failed: {message}",
    "left_out": "Not sent to {addresses}: not at a mail domain ALERT_EMAIL_DOMAINS allows.",
}
SUBJECT_CHARS = 150

# --- raising -------------------------------------------------------------------------------


def previous_firing(firing: ScheduleFiring) -> ScheduleFiring | None:
    """The latest earlier successful firing scored as ``firing`` was (the same watched
    measure and qrels: a schedule edited since compares only like with like)."""
    return (
        ScheduleFiring.objects.filter(
            schedule_id=firing.schedule_id,
            status=FiringStatus.SUCCEEDED,
            slot__lt=firing.slot,
            mean__isnull=False,
            measure=firing.measure,
            qrels_id=firing.qrels_id,
        )
        .order_by("-slot")
        .first()
    )


def raise_alert(firing: ScheduleFiring) -> ScheduleAlert | None:
    """The alert of a firing whose watched measure dropped (drops.find_drop against the
    previous successful firing), made once: a firing started again finds it."""
    existing = ScheduleAlert.objects.filter(firing=firing).first()
    if existing is not None:
        return existing
    schedule = firing.schedule
    before = previous_firing(firing)
    if before is None:
        return None
    interval = (before.low, before.high) if before.low is not None else None
    drop = drops.find_drop(
        previous=before.mean,
        interval=interval,
        current=firing.mean,
        threshold=schedule.threshold,
        use_interval=schedule.alert_on_interval,
    )
    if drop is None:
        return None
    return ScheduleAlert.objects.create(
        schedule=schedule,
        firing=firing,
        measure=schedule.alert_measure,
        previous=drop.previous,
        current=drop.current,
        low=drop.low,
        high=drop.high,
        threshold=drop.threshold,
        reasons=list(drop.reasons),
        created_at=timezone.now(),
        webhook_status=DeliveryStatus.PENDING if schedule.webhook_url else DeliveryStatus.NONE,
        email_status=DeliveryStatus.PENDING if schedule.emails else DeliveryStatus.NONE,
    )


def raise_failure_alert(firing: ScheduleFiring) -> ScheduleAlert | None:
    """The alert of a firing that failed as a whole (``firing.message`` says what failed).
    One alert stands for a run of consecutive failed firings, as one drop raises one alert:
    the first failure after a success (or the first ever) raises it and is sent; each later
    failure, until a firing succeeds, only counts on it (``failures``) and returns None, so
    a schedule failing every night does not send an alert every night."""
    existing = ScheduleAlert.objects.filter(firing=firing).first()
    if existing is not None:
        return existing
    schedule = firing.schedule
    latest = (
        ScheduleAlert.objects.filter(
            schedule=schedule, kind=AlertKind.FAILURE, firing__slot__lt=firing.slot
        )
        .select_related("firing")
        .order_by("-firing__slot")
        .first()
    )
    if latest is not None and not ScheduleFiring.objects.filter(
        schedule=schedule,
        status=FiringStatus.SUCCEEDED,
        slot__gt=latest.firing.slot,
        slot__lt=firing.slot,
    ):
        latest.failures = ScheduleFiring.objects.filter(
            schedule=schedule,
            status=FiringStatus.FAILED,
            slot__gte=latest.firing.slot,
            slot__lte=firing.slot,
        ).count()
        latest.save(update_fields=["failures"])
        return None
    return ScheduleAlert.objects.create(
        schedule=schedule,
        firing=firing,
        kind=AlertKind.FAILURE,
        measure=schedule.alert_measure,
        message=firing.message,
        failures=1,
        created_at=timezone.now(),
        webhook_status=DeliveryStatus.PENDING if schedule.webhook_url else DeliveryStatus.NONE,
        email_status=DeliveryStatus.PENDING if schedule.emails else DeliveryStatus.NONE,
    )


# --- telling -------------------------------------------------------------------------------


def reasons_text(alert: ScheduleAlert) -> str:
    parts = []
    if drops.THRESHOLD in alert.reasons:
        parts.append(MESSAGES["reason_threshold"].format(threshold=alert.threshold))
    if drops.INTERVAL in alert.reasons:
        parts.append(MESSAGES["reason_interval"].format(low=alert.low, high=alert.high))
    return " and ".join(parts)


def payload(alert: ScheduleAlert) -> dict:
    """What the webhook receives (README "Schedules and alerts")."""
    schedule = alert.schedule
    firing = alert.firing
    if alert.kind == AlertKind.FAILURE:
        return {
            "event": FAILURE_EVENT,
            "alert": alert.pk,
            "schedule": {
                "id": schedule.pk,
                "name": schedule.name,
                "path": schedule.get_absolute_url(),
            },
            "message": alert.message,
            "failures": alert.failures,
            "slot": firing.slot.isoformat(),
            "job": firing.job_id,
            "run": {"id": firing.run_id, "path": firing.run.get_absolute_url()}
            if firing.run_id
            else None,
            "qrels": schedule.qrels.label,
            "created_at": alert.created_at.isoformat(),
        }
    return {
        "event": WEBHOOK_EVENT,
        "alert": alert.pk,
        "schedule": {"id": schedule.pk, "name": schedule.name, "path": schedule.get_absolute_url()},
        "measure": measures.display_name(alert.measure),
        "previous": alert.previous,
        "current": alert.current,
        "delta": alert.current - alert.previous,
        "previous_interval": [alert.low, alert.high] if alert.low is not None else None,
        "threshold": alert.threshold,
        "reasons": list(alert.reasons),
        "slot": firing.slot.isoformat(),
        "run": {"id": firing.run_id, "path": firing.run.get_absolute_url()}
        if firing.run_id
        else None,
        "qrels": schedule.qrels.label,
        "created_at": alert.created_at.isoformat(),
    }


def notify(alert: ScheduleAlert, *, sleep=time.sleep) -> ScheduleAlert:
    """Send what is still pending: the webhook, then the e-mail. Each outcome is stored on
    the alert (a failure's class of problem and the attempts made) and never raised: one
    failing does not stop the other, nor the firing."""
    if alert.webhook_status in (DeliveryStatus.PENDING, DeliveryStatus.FAILED):
        _send_webhook(alert, sleep=sleep)
    if alert.email_status in (DeliveryStatus.PENDING, DeliveryStatus.FAILED):
        _send_email(alert)
    return alert


def _send_webhook(alert: ScheduleAlert, *, sleep) -> None:
    schedule = alert.schedule
    fields = ["webhook_status", "webhook_attempts", "webhook_error", "webhook_http_status"]
    if not schedule.webhook_url:
        alert.webhook_status = DeliveryStatus.NONE
        alert.save(update_fields=fields)
        return
    try:
        secret = unseal(schedule.webhook_secret_sealed)
        delivered = webhooks.deliver(
            schedule.webhook_url,
            payload(alert),
            secret=secret,
            event=FAILURE_EVENT if alert.kind == AlertKind.FAILURE else WEBHOOK_EVENT,
            policy=outbound.policy_from_settings(settings),
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            max_retries=settings.WEBHOOK_MAX_RETRIES,
            backoff_base=getattr(settings, "WEBHOOK_BACKOFF_SECONDS", 1.0),
            sleep=sleep,
            rng=random.Random(),
        )
    except SecretError as error:
        alert.webhook_status = DeliveryStatus.FAILED
        alert.webhook_error = MESSAGES["secret"].format(why=error)[:ERROR_CHARS]
    except webhooks.WebhookError as error:
        alert.webhook_status = DeliveryStatus.FAILED
        alert.webhook_attempts += error.attempts
        alert.webhook_error = str(error)[:ERROR_CHARS]
        alert.webhook_http_status = error.status
    except outbound.OutboundError as error:  # the address, refused before any attempt
        alert.webhook_status = DeliveryStatus.FAILED
        alert.webhook_error = error.message[:ERROR_CHARS]
    else:
        alert.webhook_status = DeliveryStatus.SENT
        alert.webhook_attempts += delivered.attempts
        alert.webhook_error = ""
        alert.webhook_http_status = delivered.status
    alert.save(update_fields=fields)


def email_text(alert: ScheduleAlert) -> tuple[str, str]:
    schedule = alert.schedule
    if alert.kind == AlertKind.FAILURE:
        subject = MESSAGES["failure_subject"].format(name=schedule.name, message=alert.message)
        body = (
            f"Schedule {schedule.name} ({schedule.endpoint.name} on {schedule.query_set}, scored "
            f"against {schedule.qrels.label}) failed for {alert.firing.slot:%Y-%m-%d %H:%M %Z}:"
            f"\n\n{alert.message}\n\n"
            "Later failures are counted on this alert, not sent again, until a firing succeeds.\n"
            f"The schedule's page: {schedule.get_absolute_url()}\n"
        )
        return " ".join(subject.split())[:SUBJECT_CHARS], body
    name = measures.display_name(alert.measure)
    subject = MESSAGES["subject"].format(
        measure=name, name=schedule.name, previous=alert.previous, current=alert.current
    )
    body = (
        f"Schedule {schedule.name} ({schedule.endpoint.name} on {schedule.query_set}, scored "
        f"against {schedule.qrels.label}) fired for {alert.firing.slot:%Y-%m-%d %H:%M %Z}.\n\n"
        f"{name}: {alert.previous:.4f} before, {alert.current:.4f} now "
        f"({alert.current - alert.previous:+.4f}): {reasons_text(alert)}.\n\n"
        f"The rule: an alert when {describe_rule(schedule)}.\n"
        f"The schedule's page: {schedule.get_absolute_url()}\n"
    )
    return subject, body


def _send_email(alert: ScheduleAlert) -> None:
    """To the schedule's recipients that ALERT_EMAIL_DOMAINS still allows (it is checked when
    a schedule is saved; one saved before the operator narrowed it keeps its old list): the
    others are left out and named on the alert."""
    domains = settings.ALERT_EMAIL_DOMAINS
    allowed = [a for a in alert.schedule.emails if recipients.domain_allowed(a, domains)]
    left_out = [a for a in alert.schedule.emails if a not in allowed]
    note = MESSAGES["left_out"].format(addresses=", ".join(left_out)) if left_out else ""
    subject, body = email_text(alert)
    try:
        if not allowed:
            raise ValueError("no recipient is at an allowed mail domain")
        EmailMessage(subject, body, None, allowed).send(using=MAILER)
    except Exception as error:  # smtplib's, OSError, a backend's own: all are a failed send
        alert.email_status = DeliveryStatus.FAILED
        alert.email_error = " ".join(filter(None, [f"{type(error).__name__}: {error}", note]))[
            :ERROR_CHARS
        ]
    else:
        alert.email_status = DeliveryStatus.SENT
        alert.email_error = note[:ERROR_CHARS]
    alert.save(update_fields=["email_status", "email_error"])
