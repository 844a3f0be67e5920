"""Secret redaction at the log exit: every record the daemon logs passes `logic.text.redact`.

A warning can quote a tool error, a path or a request field, so the log is one more way out of
the machine's memory (C-20). `install()` adds `RedactingFilter` to every handler of the root
logger (a filter on a logger would not see records propagated from its children).
"""

from __future__ import annotations

import logging

from slmactor.logic.text.redact import redact


class RedactingFilter(logging.Filter):
    """Rewrites a record's message (and its formatted traceback) with secrets replaced."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string: log it as written
            message = str(record.msg)
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
            record.exc_info = None
        return True


def install(logger: logging.Logger | None = None) -> RedactingFilter:
    """Add one `RedactingFilter` to each handler of `logger` (the root logger by default)."""
    target = logger if logger is not None else logging.getLogger()
    log_filter = RedactingFilter()
    for handler in target.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(log_filter)
    return log_filter
