# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc --program spie status` prints: its sections and columns
(heading, row key), the rows' "section" naming the table they go in."""

from __future__ import annotations

from ..common import PORT_GUARD_COLUMNS, PORTS_SECTION
from . import app

SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        app.PORTS + " (S-PIE)",
        (
            ("port", "port"),
            ("mode", "mode"),
            ("speed (Gb/s)", "speed_gbps"),
            ("settings", "settings"),
            ("entries", "entries"),
            ("p", "p"),
            ("PI steps", "pi_updates"),
            ("large-flow drops", "large_drops"),
            ("random drops", "random_drops"),
        ),
    ),
    (PORTS_SECTION, PORT_GUARD_COLUMNS),
)
