# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Config rewrites the tests share."""

from __future__ import annotations

from typing import Any

# Tofino2's front panel starts at device port 8 (2-5 are CPU Ethernet ports).
TOFINO2_PORT_SHIFT = 8


def bfcc_on_tofino2(raw: dict[str, Any]) -> None:
    """A BFCC config written for Tofino's ports, moved onto Tofino2's front
    panel in place: every port it names shifts by the same amount, so no link
    lands on a CPU Ethernet port."""
    shift = TOFINO2_PORT_SHIFT
    raw["chip"] = "tofino2"
    raw["routes"] = [dict(r, port=r["port"] + shift) for r in raw["routes"]]
    raw["trusted_ports"] = [p + shift for p in raw["trusted_ports"]]
    for key in ("upstream_ports", "congestion_points", "reaction_points", "source_bindings"):
        raw[key] = [dict(e, port=e["port"] + shift) for e in raw.get(key, [])]
    for g in raw.get("groups", []):
        if g.get("upstream_port") is not None:
            g["upstream_port"] += shift
