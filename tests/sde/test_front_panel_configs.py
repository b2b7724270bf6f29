# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 12 point 6: shipped configs put traffic on front-panel ports.

On Tofino2, device ports 0-7 of pipe 0 are the PCIe CPU port, recirculation
and the CPU Ethernet ports (open-p4studio port_mgr_tof2_map.c); a route or a
feedback session there would leave through the CPU, not a cable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hw_profiles import HwProfile, load_profile

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted([*REPO.glob("examples/*.yaml"), *REPO.glob("bfrt_controller/defaults/*.yaml")])


def port_values(node: Any, key: str = "") -> Iterator[tuple[str, int]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from port_values(v, str(k))
    elif isinstance(node, list):
        for item in node:
            yield from port_values(item, key)
    # recirculation_port names the chip's own recirculation port on purpose.
    elif (
        isinstance(node, int)
        and not isinstance(node, bool)
        and "port" in key
        and "recirculation" not in key
    ):
        yield key, node


def not_front_panel(profile: HwProfile, port: int) -> bool:
    local = port & 0x7F
    return (port < 128 and local < profile.front_panel_port_min) or port in profile.cpu_eth_ports


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_config_ports_are_front_panel_ports(path: Path) -> None:
    raw = yaml.safe_load(path.read_text())
    profile = load_profile(raw["chip"])
    bad = [(k, p) for k, p in port_values(raw) if not_front_panel(profile, p)]
    assert not bad, f"{path.name}: not front-panel ports on {profile.chip}: {bad}"


def test_the_check_catches_tofino2_cpu_ports() -> None:
    t2 = load_profile("tofino2")
    assert [p for p in range(10) if not_front_panel(t2, p)] == list(range(8))
    assert not_front_panel(load_profile("tofino"), 64)
    assert list(port_values({"routes": [{"port": 3}], "recirculation_port": 6})) == [("port", 3)]
