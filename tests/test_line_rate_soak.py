# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The line-rate soak (scripts/soak.py) at CI length: every program's model
under equal flows, an elephant among mice, incast and an idle port waking
up, at 100 and 400 Gb/s in minimum-size frames, with its per-packet
register invariants; and S-PIE's acceptance against plain PIE at both
rates and the paper's 100 Mb/s. `python scripts/soak.py --full` runs a
whole clearing interval (README.md, "Line-rate soak")."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak", ROOT / "scripts" / "soak.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["soak"] = mod
    spec.loader.exec_module(mod)
    return mod


soak = _load()
CI_PACKETS = 300


@pytest.mark.parametrize("gbps", [100.0, 400.0])
@pytest.mark.parametrize("scenario", ["equal", "elephant", "incast", "wake"])
@pytest.mark.parametrize("program", soak.PROGRAMS)
def test_soak(program: str, scenario: str, gbps: float) -> None:
    r = soak.run(program, scenario, gbps, CI_PACKETS)
    assert r.ok, r.failures
    assert sum(f.sent for f in r.flows) == CI_PACKETS


@pytest.mark.parametrize(("gbps", "packets"), [(100.0, 2000), (400.0, 2000), (0.1, 1000)])
def test_spie_equal_flows_within_twice_pies_drop_rate(gbps: float, packets: int) -> None:
    """Four equal congested flows: S-PIE's drop rate (mode spie_pie: p while
    congested; Algorithm 2 alone drops none of them) stays within 2x of
    plain PIE's in every eighth of the run, and Jain >= 0.95."""
    r = soak.spie_against_pie(gbps, packets)
    assert r.ok, r.failures
    assert r.notes["pie_drop_rate"] > 0  # PIE did drop: the comparison means something
    assert r.notes["jain"] >= 0.95


def test_spie_epoch_at_line_rate_is_what_full_runs() -> None:
    """--full's S-PIE run covers a whole clearing interval: 2^16 ticks at
    100 Gb/s in 1500-byte frames is 34,492 packets."""
    assert soak.epoch_packets(100.0, 1500) == 34_492


def test_the_watch_catches_a_wrapped_sum() -> None:
    """The per-packet S-PIE check fails a run whose S falls within an
    epoch, as a 32-bit wrap makes it (the defect the soak exists for)."""
    from bfrt_controller.backends.model import ModelSwitch
    from hw_profiles import load_profile

    model = ModelSwitch("spie", load_profile("tofino")).model
    w = soak.SpieWatch(model, 0, overload=False)
    model.m_count.write(0, 5)
    model.sumsq.write(0, 0xFFFFFFF0)
    w.check(0)
    model.sumsq.write(0, 0x54)
    w.check(1)
    assert any("S fell" in f for f in w.failures)
