# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc --program aqm status` prints: its sections and columns
(heading, row key), the rows' "section" naming the table they go in."""

from __future__ import annotations

from ..common import PORT_GUARD_COLUMNS, PORTS_SECTION
from . import app

SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        app.QUEUES,
        (
            ("port", "port"),
            ("queue", "queue"),
            ("mode", "mode"),
            ("settings", "settings"),
            ("ECN", "ecn"),
            ("entries", "entries"),
            ("drops", "drops"),
            ("CE marks", "marks"),
        ),
    ),
    (PORTS_SECTION, PORT_GUARD_COLUMNS),
)
