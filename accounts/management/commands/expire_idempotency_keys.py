"""``manage.py expire_idempotency_keys``: delete Idempotency-Keys older than 24 hours (run it
from cron, e.g. hourly beside ``recover_jobs``)."""

from django.core.management.base import BaseCommand

from accounts.services.idempotency import KEEP, expire_keys


class Command(BaseCommand):
    help = "Delete the Idempotency-Keys (and their stored answers) older than 24 hours."

    def handle(self, *args, **options):
        deleted = expire_keys()
        hours = int(KEEP.total_seconds() // 3600)
        self.stdout.write(f"Deleted {deleted} idempotency key(s) older than {hours} hours.")
