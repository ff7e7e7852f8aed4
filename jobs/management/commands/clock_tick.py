"""``manage.py clock_tick``: tick the clock once (jobs/services/clock.py), firing the scheduled
evaluations whose time has come. ``manage.py db_worker`` ticks by itself; run this from cron
(every minute) only where the workers are not ours (a Celery or RQ task backend)."""

from django.core.management.base import BaseCommand

from jobs.services.clock import tick_all


class Command(BaseCommand):
    help = "Tick the clock once: fire the scheduled evaluations whose time has come."

    def handle(self, *args, **options):
        for name, result in tick_all().items():
            self.stdout.write(f"{name}: {'failed (see the log)' if result is None else result}")
