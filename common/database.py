"""What the apps ask of the database connection itself, below any app: whether an error is
the database's "is locked" (SQLite's busy timeout ran out), which the jobs' retries, the API
token's last-used stamp and the front door's 503 all tell apart from other errors."""

from django.db import OperationalError
from django_tasks_db.utils import is_locked_database_exception


def is_database_locked(error: BaseException) -> bool:
    """Whether ``error`` is a database's "is locked" (SQLite's busy timeout ran out)."""
    return isinstance(error, OperationalError) and is_locked_database_exception(error)
