"""A pause point for the fault tests (tests/faults/): they start a real worker with
``RELEVANCE_PAUSE_AT=<point>`` and ``RELEVANCE_PAUSE_MARKER=<file>``; when the work reaches
that point it creates the marker file and sleeps, so the test can kill the worker exactly
there. Unset (always, outside those tests) it does nothing."""

import os
import time
from pathlib import Path

PAUSE_AT = "RELEVANCE_PAUSE_AT"
PAUSE_MARKER = "RELEVANCE_PAUSE_MARKER"
PAUSE_SECONDS = 120


def pause_point(name: str) -> None:
    if os.environ.get(PAUSE_AT) != name:
        return
    marker = os.environ.get(PAUSE_MARKER)
    if marker:
        Path(marker).write_text(f"{os.getpid()}\n")
    time.sleep(PAUSE_SECONDS)
