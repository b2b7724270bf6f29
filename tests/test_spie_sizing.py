# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""S-PIE's sketch sized for the ports it guards (issue 47, Deliver 1): each
port's speed, from the config or the deployment's front panel, sizes the
shared sketch for the fastest S-PIE port, with no sizing field; the
evaluation passes no sizing; the README's per-speed table is what the
controller computes."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller.deployment import resolve
from bfrt_controller.errors import ConfigError
from bfrt_controller.spie import names as n
from bfrt_controller.spie.app import SpieApp
from bfrt_controller.spie.config import (
    COUNT_BUDGET,
    COUNT_BUDGET_EXACT,
    DEFAULT_CONFIG,
    TABLE_SPEEDS_GBPS,
    SpieConfig,
    line_rate_pps,
    parse_config,
    sizing,
    sizing_table,
    sketch_scaling,
)
from bfrt_controller.spie.tables import epoch_mask, large_min_count, sample_mask
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.switch.spie import SPIE_COUNT_CAP

ROOT = Path(__file__).resolve().parents[1]
RAW: dict[str, Any] = yaml.safe_load(DEFAULT_CONFIG.read_text())
TOFINO = load_profile("tofino")


def _cfg(*ports: dict[str, Any], **sketch: Any) -> SpieConfig:
    raw = copy.deepcopy(RAW)
    raw["ports"] = list(ports)
    raw["sketch"].update(sketch)
    return parse_config(raw, "cfg.yaml")


def _sketch_entry(cfg: SpieConfig) -> dict[str, int]:
    app = SpieApp(FlakyModelSwitch("spie"), cfg)
    app.push_all()
    data: dict[str, int] = app.switch.model.table(n.SKETCH_CONFIG).default[1]  # type: ignore[attr-defined]
    return data


def test_a_10g_port_counts_every_packet_in_4ms_epochs() -> None:
    """The issue's case: a 10 Gb/s S-PIE port with no sizing field. Sized
    for the chip's 100 Gb/s it counted 1 packet in 16 and a flow needed
    2,048 packets in 4.19 ms (5.9 Gb/s of 1500-byte frames) to be judged;
    sized for its own speed every packet counts and 16 do."""
    cfg = _cfg({"port": 3, "mode": "spie", "speed_gbps": 10}, {"port": 4, "mode": "pie"})
    assert cfg.sketch.line_rate_gbps is None
    assert sketch_scaling(cfg, TOFINO) == (16, 0)
    entry = _sketch_entry(cfg)
    assert (entry["epoch_mask"], entry["column_mask"], entry["sample_mask"]) == (
        epoch_mask(16),
        1023,
        0,
    )
    assert sizing(10).smallest_share < 0.005


def test_the_shared_sketch_is_sized_for_the_fastest_spie_port() -> None:
    """S-PIE at 25 and 100 Gb/s: sized for 100 (1 in 16). A faster port in
    plain PIE mode does not count: PIE uses no sketch verdict."""
    both = _cfg(
        {"port": 3, "mode": "spie", "speed_gbps": 25},
        {"port": 4, "mode": "spie", "speed_gbps": 100},
    )
    assert sketch_scaling(both, TOFINO) == (16, 4)
    pie_faster = _cfg(
        {"port": 3, "mode": "spie", "speed_gbps": 25},
        {"port": 4, "mode": "pie", "speed_gbps": 100},
    )
    assert sketch_scaling(pie_faster, TOFINO) == (16, 2)


def test_no_speed_is_the_chips_fastest_port_and_the_override_still_rules() -> None:
    assert sketch_scaling(_cfg({"port": 3}), TOFINO) == (16, 4)
    over = _cfg({"port": 3, "speed_gbps": 100}, line_rate_gbps=0.1)
    assert sketch_scaling(over, TOFINO) == (22, 0)
    status = SpieApp(FlakyModelSwitch("spie"), _cfg({"port": 3})).status()
    assert status[0]["speed_gbps"] == "100 (assumed)"


@pytest.mark.parametrize("gbps", [0.05, 0.1, *TABLE_SPEEDS_GBPS])
def test_no_count_or_sum_reaches_its_limit_at_minimum_size_line_rate(gbps: float) -> None:
    """A whole epoch of minimum-size packets at the port's speed, counted 1
    in 2^u: within the budget (below the 16-bit cap, so no count reaches
    the next epoch's start) and S, at most count (count - 1) / 2, below
    2^31; and the epoch is as long as that allows."""
    z = sizing(gbps)
    counts = line_rate_pps(gbps) * z.epoch_s / (1 << z.sample_shift)
    assert counts == pytest.approx(z.max_count)
    budget = COUNT_BUDGET_EXACT if z.sample_shift == 0 else COUNT_BUDGET
    assert counts <= budget < SPIE_COUNT_CAP
    assert z.max_sum < 2**31
    # Shortest first, then sampling: a longer epoch or less sampling overflows.
    if z.sample_shift == 0 and z.epoch_shift < 24:
        assert counts * 2 > COUNT_BUDGET_EXACT
    if z.sample_shift > 0:
        assert z.epoch_shift == 16 and counts * 2 > COUNT_BUDGET


def test_the_minimum_count_follows_the_sampling() -> None:
    """128 (1 - 2^-u): the chance deviation of a count, sqrt((1 - 2^-u) / c),
    at most 1/sqrt(128) (8.8 %), inside the large-flow margin."""
    assert large_min_count(0) == 16
    assert [large_min_count(u) for u in (1, 2, 4, 6)] == [64, 96, 120, 126]
    for u in range(1, 8):
        c = large_min_count(u)
        assert math.sqrt((1 - 2.0**-u) / c) <= 1 / math.sqrt(128) + 1e-12
    assert sample_mask(2) == 3


def test_the_readme_table_is_the_controllers_sizing() -> None:
    readme = (ROOT / "tna" / "spie" / "README.md").read_text().splitlines()
    table = sizing_table()
    start = readme.index(table[0])
    assert readme[start : start + len(table)] == table


def _deployment(ports: list[dict[str, Any]], speeds: dict[str, str]) -> dict[str, Any]:
    raw = copy.deepcopy(RAW)
    raw["ports"] = ports
    # Device ports 3 and 4 of the default config are lanes 32/3 and 13/0 of
    # the 32-port board.
    return {
        "targets": [
            {
                "name": "leaf1",
                "program": "spie",
                "config": raw,
                "front_panel": {
                    "board": "tofino-32q",
                    "ports": [{"port": name, "speed": speed} for name, speed in speeds.items()],
                },
            }
        ]
    }


def test_a_deployments_front_panel_gives_the_ports_speed() -> None:
    raw = _deployment(
        [{"port": 3, "mode": "spie"}, {"port": 4, "mode": "pie"}],
        {"32/3": "25G", "13/0": "100G"},
    )
    _, (target,) = resolve(raw, "deploy.yaml", ROOT)
    speeds = [p.speed_gbps for p in target.config.ports]
    assert speeds == [25.0, 100.0]
    assert sketch_scaling(target.config, TOFINO) == (16, 2)


def test_a_port_speed_above_its_front_panel_speed_is_refused() -> None:
    raw = _deployment([{"port": 3, "mode": "spie", "speed_gbps": 40}], {"32/3": "25G"})
    with pytest.raises(ConfigError) as exc:
        resolve(raw, "deploy.yaml", ROOT)
    assert "targets[0].config.ports[0].speed_gbps" in str(exc.value)
    assert "25" in str(exc.value)


def test_a_shaped_port_below_its_front_panel_speed_keeps_its_rate() -> None:
    raw = _deployment([{"port": 3, "mode": "spie", "speed_gbps": 0.05}], {"32/3": "25G"})
    _, (target,) = resolve(raw, "deploy.yaml", ROOT)
    assert target.config.ports[0].speed_gbps == 0.05


def test_a_speed_beyond_the_chip_is_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError) as exc:
        _cfg({"port": 3, "speed_gbps": 400})
    assert "ports[0].speed_gbps" in str(exc.value)


def test_the_evaluation_passes_port_speeds_and_no_sizing() -> None:
    """spie-dc's router1 guards its 10 Gb/s bottleneck: sized for 10 Gb/s
    (every packet counted), with no line_rate_gbps from the harness. It
    passed the fastest neighbouring link's rate (25 Gb/s): 1 in 4."""
    from evaluation import scenario as sc
    from evaluation.schemes import spie_switch
    from evaluation.topology import Topology

    s = sc.load_scenario("spie-dc")
    topo = Topology(s)
    p = s.schemes.get("p4spie")
    assert isinstance(p, sc.P4Pie)
    setup = spie_switch(topo, "router1", TOFINO, p, True)
    model = setup.pipeline.program  # type: ignore[attr-defined]
    assert model.table(n.SKETCH_CONFIG).default[1]["sample_mask"] == 0
    assert model.table(n.SKETCH_CONFIG).default[1]["epoch_mask"] == epoch_mask(16)


def test_the_evaluation_reads_the_sketchs_drops_from_the_switch() -> None:
    """metrics.csv's sketch_drops: the switch's large_flow_drops counter,
    every port, as the run ends."""
    from evaluation import scenario as sc
    from evaluation.schemes import spie_switch
    from evaluation.topology import Topology

    s = sc.load_scenario("spie-dc")
    p = s.schemes.get("p4spie")
    assert isinstance(p, sc.P4Pie)
    setup = spie_switch(Topology(s), "router1", TOFINO, p, True)
    assert setup.counters is not None
    assert setup.counters() == {"sketch_drops": 0, "random_drops": 0}
    model = setup.pipeline.program  # type: ignore[attr-defined]
    model.counter(n.LARGE_FLOW_DROPS).count(3, 1500)
    model.counter(n.LARGE_FLOW_DROPS).count(7, 1500)
    model.counter(n.RANDOM_DROPS).count(7, 1500)
    assert setup.counters() == {"sketch_drops": 2, "random_drops": 1}
