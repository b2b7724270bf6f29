# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every tofcc log line is logfmt: `ts=... level=... logger=... key=value ...`.

Callers log either structured fields (`event=pushed switch=s1 writes=42`,
which pass through as they are) or prose, which becomes one quoted `msg=`
field, so a log shipper parses every line the same way.
"""

from __future__ import annotations

import logging
import re
import sys

LOG_LEVELS = ("debug", "info", "warning", "error")

# A message already made of key=value fields (log_event and the apps'
# `event=...` lines).
_FIELDS = re.compile(r'^[a-z_]+=("([^"\\]|\\.)*"|\S*)( [a-z_]+=("([^"\\]|\\.)*"|\S*))*$')


def logfmt_value(value: object) -> str:
    """`value` as one logfmt value: quoted when it holds a space, quote or `=`."""
    text = str(value)
    if text and not any(c.isspace() or c in '"=' for c in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def log_event(log: logging.Logger, event: str, level: int = logging.INFO, **fields: object) -> None:
    """One structured line: event=NAME key=value ..., each value as logfmt_value quotes it."""
    parts = [f"event={event}", *(f"{k}={logfmt_value(v)}" for k, v in fields.items())]
    log.log(level, " ".join(parts))


class LogfmtFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(datefmt="%Y-%m-%dT%H:%M:%S%z")

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += " " + self.formatException(record.exc_info)
        body = message if _FIELDS.match(message) else f"msg={logfmt_value(message)}"
        return (
            f"ts={self.formatTime(record, self.datefmt)} level={record.levelname} "
            f"logger={record.name} {body}"
        )


def configure_logging(level: str) -> None:
    """One stderr handler on the `tofcc` logger (stdout stays the command's
    output: `status --json | jq` never receives a log line)."""
    log = logging.getLogger("tofcc")
    for h in list(log.handlers):
        if getattr(h, "_tofcc", False):
            log.removeHandler(h)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogfmtFormatter())
    handler._tofcc = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.setLevel(level.upper())
    log.propagate = False
