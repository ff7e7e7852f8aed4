"""Schedules of search endpoints from the command line (evaluation/services/schedules.py).

    manage.py search_schedule add nightly --user lea --endpoint es-bm25 --campaign 3 \\
        --qrels 7 --cron "0 3 * * *" --k 100 --measure nDCG@10 --threshold 0.02 \\
        --email oncall@example.org
    manage.py search_schedule list [--user lea]
    manage.py search_schedule edit nightly --user lea --cron "30 4 * * *" --measure P@10 \
        --qrels 8 --threshold 0.03 --email oncall@example.org --resume
    manage.py search_schedule pause nightly --user lea     # resume, delete likewise
    manage.py search_schedule alerts [--user lea] [--open]
    manage.py search_schedule tick [--now 2026-12-01T03:00:00+00:00]

A webhook's shared secret is never taken on the command line (it would sit in the shell's
history and the process list): ``edit --webhook-url URL --webhook-secret-env NAME`` reads it
from the environment variable NAME. A refused value is named with its field. ``tick``
turns the clock once, as the task worker does every CLOCK_TICK_SECONDS.
"""

from __future__ import annotations

import os
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from common.commands import user_named
from evaluation import measures
from evaluation.access import visible_endpoints
from evaluation.models import AlertKind, Schedule, ScheduleAlert, SearchEndpoint
from evaluation.services import schedule_runs
from evaluation.services import schedules as service


class Command(BaseCommand):
    help = (
        "Create, list, change, pause, resume and delete schedules of search endpoints; see alerts."
    )

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="action", required=True)
        listing = commands.add_parser("list", help="the schedules")
        listing.add_argument("--user", default="", help="only this user's")
        add = commands.add_parser("add", help="schedule an endpoint on a query set")
        add.add_argument("name")
        add.add_argument("--user", required=True, help="the owner, whose access rules apply")
        add.add_argument(
            "--endpoint", required=True, help="a search endpoint's name, in one of --user's teams"
        )
        sets = add.add_mutually_exclusive_group(required=True)
        sets.add_argument("--campaign", type=int, help="a campaign's id (led by --user)")
        sets.add_argument("--topics-qrels", type=int, help="a qrels version's id: its topics")
        add.add_argument("--qrels", type=int, required=True, help="scored against this version")
        add.add_argument("--cron", required=True, help="e.g. '0 3 * * *' (server's TIME_ZONE)")
        add.add_argument("--k", type=int, default=100)
        add.add_argument("--measure", action="append", default=[], help="repeatable")
        add.add_argument("--threshold", default=None, help="alert on a drop larger than this")
        add.add_argument("--no-interval", action="store_true", help="no interval rule")
        add.add_argument("--email", action="append", default=[], help="repeatable")
        edit = commands.add_parser("edit", help="change a schedule (only what is given)")
        edit.add_argument("name")
        edit.add_argument("--user", required=True, help="the owner")
        edit.add_argument("--rename", help="a new name")
        edit.add_argument("--cron", help="a new cron expression; the next firing follows it")
        edit.add_argument("--measure", action="append", help="repeatable: the measures anew")
        edit.add_argument("--qrels", type=int, help="score against this qrels version")
        limit = edit.add_mutually_exclusive_group()
        limit.add_argument("--threshold", help="alert on a drop larger than this")
        limit.add_argument("--no-threshold", action="store_true", help="no threshold rule")
        interval = edit.add_mutually_exclusive_group()
        interval.add_argument("--interval", action="store_true", help="the interval rule on")
        interval.add_argument("--no-interval", action="store_true", help="the interval rule off")
        mails = edit.add_mutually_exclusive_group()
        mails.add_argument("--email", action="append", help="repeatable: the recipients anew")
        mails.add_argument("--no-email", action="store_true", help="no e-mail")
        hook = edit.add_mutually_exclusive_group()
        hook.add_argument("--webhook-url", help="the webhook's address")
        hook.add_argument("--no-webhook", action="store_true", help="remove the webhook")
        edit.add_argument(
            "--webhook-secret-env", metavar="NAME", help="read the shared secret from $NAME"
        )
        state = edit.add_mutually_exclusive_group()
        state.add_argument("--pause", action="store_true")
        state.add_argument("--resume", action="store_true")
        for name in ("pause", "resume", "delete"):
            sub = commands.add_parser(name, help=f"{name} a schedule")
            sub.add_argument("name")
            sub.add_argument("--user", required=True, help="the owner")
        alerts = commands.add_parser("alerts", help="alerts, newest first")
        alerts.add_argument("--user", default="", help="only this user's schedules'")
        alerts.add_argument("--open", action="store_true", help="only those not acknowledged")
        tick = commands.add_parser("tick", help="turn the clock once")
        tick.add_argument("--now", default="", help="ISO time with a zone (default: now)")

    def handle(self, *args, action, **options):
        try:
            getattr(self, f"_{action}")(**options)
        except ValidationError as error:
            if hasattr(error, "error_dict"):
                raise CommandError(
                    "; ".join(
                        f"{field}: {' '.join(messages)}"
                        for field, messages in error.message_dict.items()
                    )
                ) from None
            raise CommandError(" ".join(error.messages)) from None

    def _schedule(self, name: str, username: str) -> Schedule:
        found = service.visible_schedules(user_named(username)).filter(name=name).first()
        if found is None:
            raise CommandError(f"{username} has no schedule named {name!r}")
        return found

    def _list(self, *, user, **options):
        schedules = Schedule.objects.select_related("endpoint", "qrels", "created_by")
        if user:
            schedules = schedules.filter(created_by=user_named(user))
        for schedule in schedules:
            state = (
                "paused" if schedule.paused else f"next {schedule.next_run_at:%Y-%m-%d %H:%M %Z}"
            )
            self.stdout.write(
                f"{schedule.name}\t{schedule.created_by.username}\t{schedule.endpoint.name}\t"
                f"{schedule.query_set}\t{schedule.qrels.label}\t{schedule.cron}\t{state}"
            )

    def _add(self, *, name, user, endpoint, campaign, topics_qrels, qrels, cron, k, **options):
        owner = user_named(user)
        endpoints = visible_endpoints(owner, SearchEndpoint.objects.filter(name=endpoint))
        found = list(endpoints.select_related("team")[:10])
        if not found:
            raise CommandError(f"{user} has no search endpoint named {endpoint!r} in their teams")
        if len(found) > 1:
            teams = ", ".join(sorted(e.team.slug for e in found))
            raise CommandError(f"several of {user}'s teams have an endpoint {endpoint!r}: {teams}")
        found = found[0]
        schedule = service.create_schedule(
            user=owner,
            name=name,
            endpoint=found.pk,
            qrels=qrels,
            campaign=campaign,
            topics_qrels=topics_qrels,
            cron_expression=cron,
            k=k,
            measure_specs=options["measure"] or None,
            threshold=options["threshold"],
            alert_on_interval=not options["no_interval"],
            emails=options["email"],
        )
        self.stdout.write(
            f"Saved schedule {schedule.name} (id {schedule.pk}); it fires next at "
            f"{schedule.next_run_at:%Y-%m-%d %H:%M %Z}."
        )

    def _edit(self, *, name, user, **options):
        schedule = self._schedule(name, user)
        changes = {
            field: options[option]
            for option, field in (("rename", "name"), ("cron", "cron"), ("qrels", "qrels"))
            if options[option] is not None
        }
        if options["measure"]:
            changes["measures"] = options["measure"]
        if options["threshold"] is not None or options["no_threshold"]:
            changes["threshold"] = None if options["no_threshold"] else options["threshold"]
        if options["interval"] or options["no_interval"]:
            changes["alert_on_interval"] = bool(options["interval"])
        if options["email"] or options["no_email"]:
            changes["emails"] = [] if options["no_email"] else options["email"]
        if options["webhook_url"] is not None or options["no_webhook"]:
            changes["webhook_url"] = "" if options["no_webhook"] else options["webhook_url"]
        if options["webhook_secret_env"]:
            variable = options["webhook_secret_env"]
            if not os.environ.get(variable):
                raise CommandError(f"--webhook-secret-env: ${variable} is not set")
            changes["webhook_secret"] = os.environ[variable]
        if options["pause"] or options["resume"]:
            changes["paused"] = bool(options["pause"])
        if not changes:
            raise CommandError("Nothing to change: give --cron, --measure, --qrels, ... (--help)")
        before = schedule.changes.count()
        schedule = service.update_schedule(schedule=schedule, user=user_named(user), **changes)
        if schedule.changes.count() == before:
            self.stdout.write(f"Nothing changed on {schedule.name}.")
            return
        change = schedule.changes.first()
        state = (
            "paused"
            if schedule.paused
            else f"fires next at {schedule.next_run_at:%Y-%m-%d %H:%M %Z}"
        )
        self.stdout.write(
            f"Changed {schedule.name} ({', '.join(sorted(change.changes))}); it {state}."
        )

    def _pause(self, *, name, user, **options):
        schedule = service.update_schedule(
            schedule=self._schedule(name, user), user=user_named(user), paused=True
        )
        self.stdout.write(f"Paused {schedule.name}.")

    def _resume(self, *, name, user, **options):
        schedule = service.update_schedule(
            schedule=self._schedule(name, user), user=user_named(user), paused=False
        )
        self.stdout.write(
            f"Resumed {schedule.name}; it fires next at {schedule.next_run_at:%Y-%m-%d %H:%M %Z}."
        )

    def _delete(self, *, name, user, **options):
        schedule = self._schedule(name, user)
        service.delete_schedule(schedule=schedule)
        self.stdout.write(f"Deleted {name}; the runs it made stay.")

    def _alerts(self, *, user, open, **options):
        alerts = ScheduleAlert.objects.select_related("schedule", "firing")
        if user:
            alerts = alerts.filter(schedule__created_by=user_named(user))
        if open:
            alerts = alerts.filter(acknowledged_at__isnull=True)
        for alert in alerts:
            if alert.kind == AlertKind.FAILURE:
                self.stdout.write(
                    f"{alert.firing.slot:%Y-%m-%d %H:%M}\t{alert.schedule.name}\tfailed"
                    f" ({alert.failures} in a row)\t{alert.message}\twebhook "
                    f"{alert.webhook_status}\temail {alert.email_status}"
                    + ("\tacknowledged" if alert.acknowledged_at else "")
                )
                continue
            self.stdout.write(
                f"{alert.firing.slot:%Y-%m-%d %H:%M}\t{alert.schedule.name}\t"
                f"{measures.display_name(alert.measure)}\t{alert.previous:.4f} -> "
                f"{alert.current:.4f}\t{','.join(alert.reasons)}\twebhook {alert.webhook_status}"
                f"\temail {alert.email_status}"
                + ("\tacknowledged" if alert.acknowledged_at else "")
            )

    def _tick(self, *, now, **options):
        when = None
        if now:
            try:
                when = datetime.fromisoformat(now)
            except ValueError:
                raise CommandError("--now is an ISO time, e.g. 2026-12-01T03:00:00+00:00") from None
            if when.tzinfo is None:
                raise CommandError("--now needs a zone, e.g. +00:00")
        self.stdout.write(str(schedule_runs.tick(now=when)))
