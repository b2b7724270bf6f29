# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc --program p4qcn status` prints: its sections and columns
(heading, row key), the rows' "section" naming the table they go in."""

from __future__ import annotations

from ..buffer_view import COLUMNS as BUFFER_COLUMNS
from ..buffer_view import PAUSE_SECTION
from ..common import PORT_GUARD_COLUMNS, PORTS_SECTION
from ..pfc_watchdog import WATCHDOG_SECTION
from . import app

SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        app.QUEUES,
        (
            ("port", "port"),
            ("queue", "queue"),
            ("mode", "mode"),
            ("Q_min cells", "q_min_cells"),
            ("Q_max cells", "q_max_cells"),
            ("N ticks", "interval_ticks"),
            ("entries", "entries"),
            ("chosen", "chosen"),
            ("feedback", "feedback_sent"),
            ("suppressed", "feedback_suppressed"),
            ("CE marked", "ce_marked"),
        ),
    ),
    (
        app.CLASSES,
        (
            ("DSCP", "dscp"),
            ("queue", "queue"),
            ("iCoS", "icos"),
            ("lossless", "lossless"),
        ),
    ),
    (PORTS_SECTION, PORT_GUARD_COLUMNS),
    (
        WATCHDOG_SECTION,
        (
            ("port", "port"),
            ("CoS", "cos"),
            ("storm", "storm"),
            ("storms", "storms"),
            ("paused us", "rx_paused_us"),
            ("honouring", "honouring"),
            ("watchdog on", "enabled"),
        ),
    ),
    (PAUSE_SECTION, BUFFER_COLUMNS[PAUSE_SECTION]),
)
