"""Schedules of search endpoints from the command line (evaluation/services/schedules.py).

    manage.py search_schedule add nightly --user lea --endpoint es-bm25 --campaign 3 \\
        --qrels 7 --cron "0 3 * * *" --k 100 --measure nDCG@10 --threshold 0.02 \\
        --email oncall@example.org
    manage.py search_schedule list [--user lea]
    manage.py search_schedule pause nightly --user lea     # resume, delete likewise
    manage.py search_schedule alerts [--user lea] [--open]
    manage.py search_schedule tick [--now 2026-12-01T03:00:00+00:00]

A webhook's shared secret is never taken on the command line (it would sit in the shell's
history and the process list): set the webhook on the page or through the API. ``tick``
turns the clock once, as the task worker does every CLOCK_TICK_SECONDS.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from common.commands import user_named
from evaluation import measures
from evaluation.access import visible_endpoints
from evaluation.models import Schedule, ScheduleAlert, SearchEndpoint
from evaluation.services import schedule_runs
from evaluation.services import schedules as service


class Command(BaseCommand):
    help = "Create, list, pause, resume and delete schedules of search endpoints; see alerts."

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
            teams = ", ".join(e.team.slug for e in found)
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

    def _pause(self, *, name, user, **options):
        schedule = service.update_schedule(schedule=self._schedule(name, user), paused=True)
        self.stdout.write(f"Paused {schedule.name}.")

    def _resume(self, *, name, user, **options):
        schedule = service.update_schedule(schedule=self._schedule(name, user), paused=False)
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
