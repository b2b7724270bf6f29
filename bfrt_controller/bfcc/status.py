# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What `tofcc --program bfcc status` prints: its sections and columns
(heading, row key), the rows' "section" naming the table they go in."""

from __future__ import annotations

from ..common import PORT_GUARD_COLUMNS
from . import rows

SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        rows.CONGESTION_POINTS,
        (
            ("port", "port"),
            ("cp", "cp_id"),
            ("Mb/s", "rate_mbps"),
            ("K packets", "threshold_packets"),
            ("K cells", "threshold_cells"),
            ("T_min ns", "t_min_ns"),
            ("T_max ns", "t_max_ns"),
            ("saturated", "saturated"),
            ("window packets", "window_packets"),
            ("refresh ns", "refresh_ns"),
            ("signalled group", "signalled_group"),
            ("degree", "signalled_degree"),
        ),
    ),
    (
        rows.REACTION_POINTS,
        (
            ("port", "port"),
            ("high qid", "high_qid"),
            ("low qid", "low_qid"),
            ("expiry ns", "expiry_ns"),
            ("named group only", "named_group_only"),
            ("slowed group", "slowed_group"),
            ("degree", "slowed_degree"),
            ("bp received", "backpressure_received"),
            ("flagged", "flagged_departures"),
            ("fakes", "fakes_sent"),
            # Fakes not made (recirculation over its level), and the port
            # the originals recirculate through.
            ("skips", "recirculation_skips"),
            ("recirc", "recirculation_port"),
            ("shaped kb/s", "shaped_kbps"),
        ),
    ),
    (
        rows.RATE_THRESHOLDS,
        (
            ("degree", "degree"),
            ("RT packets", "rt_packets"),
        ),
    ),
    (
        rows.GROUPS,
        (
            ("group", "group"),
            ("senders", "senders"),
            ("upstream port", "upstream_port"),
            ("session", "mirror_session"),
            ("notify port", "notify_port"),
        ),
    ),
    (rows.PORTS, (*PORT_GUARD_COLUMNS, ("fake drops", "fake_drops"))),
)
