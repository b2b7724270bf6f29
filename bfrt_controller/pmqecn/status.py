"""What `tofcc --program pmqecn status` prints: its sections and columns
(heading, row key), the rows' "section" naming the table they go in."""

from __future__ import annotations

from ..common import PORT_GUARD_COLUMNS, PORTS_SECTION
from .app import CLASSES

SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        CLASSES,
        (
            ("class", "name"),
            ("id", "id"),
            ("qos", "qos"),
            ("queue", "queue"),
            ("K cells", "threshold_cells"),
            ("weight", "weight"),
            ("lambda pps", "rate_pps"),
            ("lambda* pps", "target_rate_pps"),
            ("W ns", "sojourn_ns"),
            ("packets", "packets"),
        ),
    ),
    (PORTS_SECTION, PORT_GUARD_COLUMNS),
)
