# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc --program dadctcp status` prints: its sections and columns
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
            ("K packets", "k_packets"),
            ("K_port packets", "k_port_packets"),
            ("K1 cells", "k1_cells"),
            ("K2 cells", "k2_cells"),
            ("depth cells", "depth_cells"),
            ("CE marked", "ce_marked"),
            ("not-ECT drops", "not_ect_dropped"),
        ),
    ),
    (PORTS_SECTION, PORT_GUARD_COLUMNS),
)
