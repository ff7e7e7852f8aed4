"""How much one request may write: at most ``settings.SYNC_WRITE_ROWS`` rows (5,000 unless
the operator sets it), the one limit of the synchronous path. A job's transactions are held
to the same size where the work allows it (annotation.services.add_pairs_in_batches).

A request's writes hold a web worker, and on SQLite the database's only write lock, for as
long as they take: every other writer (a judge's grade, the worker taking its next job)
waits, and fails once SQLITE_TIMEOUT has passed. 100,000 pairs posted at once took 74 s
inside the request (issue 27). Bigger work takes another path, named in the refusal: a file
import, which a background job runs (jobs.services.start_job), or a job started for it.

Measured on the project's 2-core machine (SQLite, WAL): adding 10,000 pairs to a pool with
their assignments took about 3 s when the machine was otherwise idle and 10-15 s at a load
average of 8-10 (other builds running), when the busy timeout of 20 s comes close: hence
5,000, half of that.

Callers count what they are about to write in the unit the user knows (pairs, gold pairs,
grades...) and call :func:`check_sync_write`; :class:`TooLargeForRequest` becomes a 413 with
its message, in the API and on pages (config/busy.py), unless the caller turns it into a job.
"""

from django.conf import settings

MESSAGES = {
    "too_large": "{count:,} {what} are more than one request may write: at most {limit:,} "
    "(SYNC_WRITE_ROWS), so that nobody else waits on the database. {instead}",
}


def sync_write_limit() -> int:
    """Rows one request may write (settings.SYNC_WRITE_ROWS)."""
    return settings.SYNC_WRITE_ROWS


class TooLargeForRequest(Exception):
    """Refused before anything was written: ``count`` ``what`` are more than a request may
    write; ``instead`` says how to do it (a file import or a job, which take any size)."""

    def __init__(self, *, count: int, what: str, instead: str):
        self.count, self.what, self.instead = count, what, instead
        super().__init__(
            MESSAGES["too_large"].format(
                count=count, what=what, limit=sync_write_limit(), instead=instead
            )
        )


def fits_in_request(count: int) -> bool:
    return count <= sync_write_limit()


def check_sync_write(count: int, *, what: str, instead: str) -> None:
    """Raise TooLargeForRequest when ``count`` rows are more than a request may write."""
    if not fits_in_request(count):
        raise TooLargeForRequest(count=count, what=what, instead=instead)
