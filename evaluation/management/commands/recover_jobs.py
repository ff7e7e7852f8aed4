"""Clean up after workers that died (killed, out of memory, machine lost). Safe to run at
any time, e.g. from cron every few minutes next to `manage.py db_worker`."""

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from evaluation.services import sweep_orphan_run_files
from jobs.models import STALE_AFTER_SECONDS
from jobs.services import JobNotRetryable, recover_stalled_jobs, retry_job, sweep_staged_files


class Command(BaseCommand):
    help = (
        "Mark failed the running jobs whose worker stopped beating (and with --retry start "
        "them again), and delete stored files nothing points at: run files an import killed "
        "before its commit left, and staged uploads no job will read."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--older-than",
            type=int,
            default=STALE_AFTER_SECONDS,
            metavar="SECONDS",
            help="A running job silent this long has lost its worker, and a file nothing "
            "points at this old is abandoned (default: %(default)s; a live job beats every "
            "30 s, and an import commits moments after writing its files).",
        )
        parser.add_argument(
            "--retry", action="store_true", help="Start the recovered jobs again at once."
        )

    def handle(self, *args, older_than, retry, **options):
        if older_than < 0:
            raise CommandError("--older-than must be 0 or more seconds.")
        age = timedelta(seconds=older_than)
        for job in recover_stalled_jobs(older_than=age):
            self.stdout.write(f"job {job.pk} ({job.title}): its worker stopped; marked failed")
            if retry:
                try:
                    retry_job(job=job)
                except JobNotRetryable as refused:
                    self.stdout.write(f"job {job.pk}: not started again: {refused}")
                else:
                    self.stdout.write(f"job {job.pk}: started again")
        for name in sweep_orphan_run_files(older_than=age):
            self.stdout.write(f"deleted {name} (no run points at it)")
        for name in sweep_staged_files(older_than=age):
            self.stdout.write(f"deleted {name} (no job will read it)")
