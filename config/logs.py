"""What the server log keeps of an error. Django logs a refused request (a 403 from
PermissionDenied, a 400 from a bad body, a SuspiciousOperation such as a wrong Host header)
with the exception's whole traceback, though nothing broke: the client asked for something
it may not have. Those lines are kept, one line each, without the traceback; a crash (5xx)
keeps its traceback."""

import copy
import logging


class ClientErrorFilter(logging.Filter):
    """Drops the traceback from a record about a 4xx answer (Django's request and security
    loggers give its ``status_code``). A copy is changed, not the record, so other handlers
    (an error mailer, a test's capture) still see what Django logged."""

    def filter(self, record: logging.LogRecord) -> bool | logging.LogRecord:
        status = getattr(record, "status_code", None)
        if record.exc_info and isinstance(status, int) and 400 <= status < 500:
            record = copy.copy(record)
            record.exc_info = None
            record.exc_text = None
        return record
