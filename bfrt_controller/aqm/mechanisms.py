# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The AQM family's mechanisms (issue 51): the settings each reads, their
defaults (from its paper or RFC), and the curve family whose table entries
it shares with queues of equal settings.

A queue runs one mechanism at a time; a setting of another mechanism on it
would be kept and never used, so config and `set` refuse one
(tna/aqm/README.md, "The AQM family").
"""

from __future__ import annotations

from typing import Literal

Mode = Literal["none", "red", "codel", "pie", "dctcp", "dadctcp", "dualpi2"]
MODES: tuple[Mode, ...] = ("none", "red", "codel", "pie", "dctcp", "dadctcp", "dualpi2")

# The settings each mechanism reads (`ecn` is every marking mechanism's).
USED_BY: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "red": frozenset({"min_th_cells", "max_th_cells", "max_p", "w_q_shift", "ecn"}),
    "codel": frozenset({"target_us", "interval_us", "count_cap", "ecn"}),
    "pie": frozenset(
        {"target_delay_us", "t_update_us", "alpha_per_s", "beta_per_s", "mark_max", "ecn"}
    ),
    "dctcp": frozenset({"k_cells", "ecn"}),
    "dadctcp": frozenset({"k1_cells", "k2_cells", "ecn"}),
    "dualpi2": frozenset(
        {
            "target_delay_us",
            "t_update_us",
            "alpha_per_s",
            "beta_per_s",
            "l_queue",
            "l_step_us",
            "ecn",
        }
    ),
}
ALL_SETTINGS: frozenset[str] = frozenset().union(*USED_BY.values())

# Defaults of the settings that differ between mechanisms (None in the
# config: "the mechanism's own"). PIE: RFC 8033 (alpha 0.125, beta 1.25 per
# second of delay error, 15 ms reference delay and update interval, ECN
# marking below 10 %); DualPI2: RFC 9332 (alpha 0.16, beta 3.2, target
# 15 ms, update 16 ms, L4S step at 1 ms); DCTCP's K = 65 packets of 1500 B
# (Alizadeh et al. 2010, 10 Gb/s) in 80 B cells; DA-DCTCP's K2 = 2 K1
# (seed 004) with K2 at DCTCP's K.
DEFAULTS: dict[str, dict[str, float | int]] = {
    "pie": {"target_delay_us": 15_000, "t_update_us": 15_000, "alpha_per_s": 0.125,
            "beta_per_s": 1.25, "mark_max": 0.1},
    "dualpi2": {"target_delay_us": 15_000, "t_update_us": 16_000, "alpha_per_s": 0.16,
                "beta_per_s": 3.2, "l_step_us": 1_000},
    "dctcp": {"k_cells": 1235},
    "dadctcp": {"k1_cells": 618, "k2_cells": 1235},
}  # fmt: skip

# Queues of equal settings share a curve: their entries in the family's
# table (RED: red_level; CoDel: codel_due; PIE and DualPI2, one PI:
# pi_terms).
CURVE_FAMILY: dict[str, str | None] = {
    "none": None,
    "red": "red",
    "codel": "codel",
    "pie": "pi",
    "dualpi2": "pi",
    "dctcp": None,
    "dadctcp": None,
}

# Mechanisms whose state lives in the slot's registers.
STATEFUL: frozenset[str] = frozenset({"red", "codel", "pie", "dadctcp", "dualpi2"})
