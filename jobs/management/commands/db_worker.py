"""``manage.py db_worker``: django-tasks-db's worker, which outlives a locked database.

django-tasks-db's loop takes the next task inside ``BEGIN EXCLUSIVE`` on SQLite. When another
connection holds the write lock for longer than the busy timeout (a long import, a large
write), that ``BEGIN`` raises "database is locked" outside the loop's own handling of locks,
and the worker process exits (issue 27): queued jobs then wait for a worker that is gone.
Recording a finished task's outcome can meet the same lock, after the library's three quick
attempts, and end the worker likewise.

This is the same worker, with the same options (this command replaces django_tasks_db's
because ``jobs`` comes before it in INSTALLED_APPS), with three changes: after a locked
database the loop starts again, pausing with exponential backoff; a task's outcome that
could not be recorded is recorded again, patiently, so its queue row never stays "running";
and it starts without system checks, which a locked database fails (see Command). Any other
error still ends the worker, as before.

It also runs the clock (jobs/services/clock.py): a thread that ticks at start and every
CLOCK_TICK_SECONDS, firing the scheduled evaluations whose time has come; ``--no-clock``
leaves it out (and ``--batch``, which drains the queue and exits, never runs it). A job whose own work met the lock fails cleanly, as
retryable, with a message saying so (jobs.services.running).
"""

import logging
import os
import time

from django.core.management.base import CommandError
from django.db import OperationalError
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker

from common.database import is_database_locked
from jobs.services import patiently
from jobs.services.clock import Clock

logger = logging.getLogger("django_tasks_db")

# Pauses between restarts of the loop after "database is locked": doubling from the first to
# the last, which then repeats for as long as the lock lasts; back to the first after a
# quiet spell of that length.
FIRST_PAUSE = 0.5
LAST_PAUSE = 30.0

OUTCOME_FIELDS = ["status", "return_value", "finished_at", "exception_class_path", "traceback"]


class Backoff:
    """The next pause after a failure: doubling up to ``last``, reset after ``last`` seconds
    without a failure."""

    def __init__(self, first: float = FIRST_PAUSE, last: float = LAST_PAUSE, clock=time.monotonic):
        self.first, self.last, self.clock = first, last, clock
        self.pause = 0.0
        self.failed_at: float | None = None

    def next_pause(self) -> float:
        now = self.clock()
        quiet = self.failed_at is None or now - self.failed_at > self.last
        self.pause = self.first if quiet else min(self.last, self.pause * 2)
        self.failed_at = now
        return self.pause


class Worker(db_worker.Worker):
    def run(self) -> None:
        backoff = Backoff()
        while True:
            try:
                return super().run()
            except OperationalError as error:
                if not is_database_locked(error) or not self.running:
                    raise
                pause = backoff.next_pause()
                logger.warning(
                    "worker_id=%s: the database is locked (%s); trying again in %.1f s",
                    self.worker_id,
                    error,
                    pause,
                )
                self.startup_delay = False  # the herd has spread out already
                time.sleep(pause)

    def run_task(self, db_task_result) -> None:
        try:
            super().run_task(db_task_result)
        except OperationalError as error:
            if not is_database_locked(error):
                raise
            # The task ran; storing its outcome met the lock (set_failed re-raises after its
            # quick attempts). The outcome is set on the object already: store it again.
            patiently(
                lambda: db_task_result.save(update_fields=OUTCOME_FIELDS),
                what=f"task {db_task_result.id}",
            )


class Command(db_worker.Command):
    help = (
        "Run a database background worker that waits out a locked database "
        "(django-tasks-db's db_worker; jobs/management/commands/db_worker.py)"
    )
    # No system checks at start: Django's check of SQLite's JSON support opens a transaction,
    # which takes the write lock (transaction_mode IMMEDIATE), and while a long write holds it
    # the check reports "SQLite does not support JSONFields" and the worker would not start.
    # `manage.py migrate` and `check --deploy` run the checks when the site is deployed.
    requires_system_checks = []

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--no-clock",
            action="store_true",
            help="Do not tick the clock that fires scheduled evaluations (another process does).",
        )

    def handle(
        self,
        *,
        verbosity: int,
        queue_name: str,
        interval: float,
        batch: bool,
        backend_name: str,
        startup_delay: bool,
        reload: bool,
        max_tasks: int | None,
        worker_id: str,
        exclude_queues: str,
        no_clock: bool = False,
        **options,
    ) -> None:
        """django-tasks-db 0.13's handle, building our Worker."""
        self.configure_logging(verbosity)
        if reload and batch:
            logger.warning(
                "Warning: --reload and --batch cannot be specified together. Disabling autoreload."
            )
            reload = False
        queue_names = queue_name.split(",")
        excluded_queue_names = exclude_queues.split(",") if exclude_queues else []
        if excluded_queue_names and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = Worker(
            queue_names=queue_names,
            interval=interval,
            batch=batch,
            backend_name=backend_name,
            startup_delay=startup_delay,
            max_tasks=max_tasks,
            worker_id=worker_id,
            excluded_queue_names=excluded_queue_names,
        )
        clock = None if batch or no_clock else Clock()
        if reload:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
                worker.configure_signals()  # only the reloader's child
                if clock is not None:
                    clock.start()
            run_with_reloader(worker.run)
        else:
            worker.configure_signals()
            if clock is not None:
                clock.start()
            worker.run()
