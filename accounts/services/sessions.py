"""Django's database sessions, with the lookup every logged-in request makes (the session by
its key, unexpired) written once and, on PostgreSQL, prepared (common.compiled): the ORM
compiled the same query on every request, and PostgreSQL planned it again, about a tenth of
a grade's CPU in the web process (issue 34). Same table, same rows, same answers: sessions
made before keep working. SESSION_ENGINE names this module."""

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connection
from django.utils import timezone

from common.compiled import prepared_cursor

__all__ = ["SessionStore"]


class SessionStore(DatabaseSessionStore):
    def _get_session_from_db(self):
        key = self.session_key  # None when the cookie's key is malformed (SessionBase)
        if key is None:
            return None
        model = self.model
        quote = connection.ops.quote_name
        sql = (
            f"SELECT {quote('session_data')} FROM {quote(model._meta.db_table)} "
            f"WHERE {quote('session_key')} = %s AND {quote('expire_date')} > %s"
        )
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with prepared_cursor() as cursor:
            cursor.execute(sql, [key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None  # as Django's: an unknown or expired key starts anew
            return None
        return model(session_key=key, session_data=row[0])
