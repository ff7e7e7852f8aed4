"""The clock of work that must happen at set times (scheduled evaluations): what ticks and
how often. Apps register a tick (``register_tick``) when they load; the task worker
(``manage.py db_worker``) runs every registered tick from a thread of its own every
CLOCK_TICK_SECONDS, and ``manage.py clock_tick`` runs them once (from cron, for a task backend
whose workers are not ours). A tick takes ``now`` (so tests turn the clock by hand) and must
be safe to run from several processes at once: each decides what is due in the database."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

_ticks: dict[str, Callable[..., object]] = {}


def register_tick(name: str, tick: Callable[..., object]) -> None:
    _ticks[name] = tick


def tick_all(*, now: datetime | None = None) -> dict[str, object]:
    """Every registered tick once; a tick that fails is logged and the others still run."""
    results = {}
    for name, tick in sorted(_ticks.items()):
        try:
            results[name] = tick(now=now)
        except Exception:
            logger.exception("clock tick %s failed", name)
            results[name] = None
    return results


class Clock(threading.Thread):
    """Ticks at start (so downtime is caught up with at once) and every ``interval``
    seconds, on its own database connection, until stopped."""

    def __init__(self, interval: float | None = None):
        super().__init__(name="clock", daemon=True)
        self.interval = settings.CLOCK_TICK_SECONDS if interval is None else interval
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.is_set():
                tick_all()
                connection.close()  # between ticks, as a request would
                self.stopped.wait(self.interval)
        finally:
            connection.close()
