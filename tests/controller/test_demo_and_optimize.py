# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The README demo and one optimise-and-apply cycle, end to end on the model."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from rich.console import Console

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.cli import cli
from bfrt_controller.pmqecn import names as n
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG, load_config, parse_config
from bfrt_controller.pmqecn.demo import FLOWS, inject_depth, run_demo
from hw_profiles import load_profile
from models.optimize.problem import DEFAULT_TARGET_UTILISATION
from models.switch.core import Match


def test_demo_shows_marking_feedback_and_new_thresholds() -> None:
    out = io.StringIO()
    run_demo(Console(file=out, width=160))
    text = out.getvalue()
    assert "ECN 11 to 10.0.1.1 (port 1)" in text  # voice feedback went to its source
    assert "ECN 11 CE" in text  # bulk's original CE-marked (mark_original)
    assert "untrusted_feedback_drops[1] = 1" in text
    assert "spoofed_source_drops[1] = 1, video counted 0 more" in text
    assert "Optimiser wrote (one batch)" in text
    assert "threshold_cells" in text
    assert "after one optimise-and-apply cycle" in text


LOAD = (("voice", 30), ("video", 50), ("bulk", 35))
# The default config's target utilisation (what a cut steers a port to).
U = DEFAULT_TARGET_UTILISATION


def loaded_app(
    load: tuple[tuple[str, int], ...] = LOAD, service_rate_pps: float | None = None
) -> PmqecnApp:
    """The default config after one measured interval of `load` packets per class."""
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    if service_rate_pps is not None:
        raw["optimizer"]["service_rate_pps"] = service_rate_pps
    app = PmqecnApp(ModelSwitch("pmqecn", load_profile("tofino")), parse_config(raw))
    app.push_all()
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    app.sample(0.0)
    for name, count in load:
        inject_depth(sw, 0, 4000)
        data = bytes(FLOWS[name].packet())
        for _ in range(count):
            sw.model.send(FLOWS[name].port, data)
    return app


def test_optimize_once_writes_what_it_reports() -> None:
    app = loaded_app()
    changes = app.optimize_once(1e-4)  # 300k / 500k / 350k pps
    assert changes
    for cid in (1, 2, 3):
        key = {n.K_CLASS_ID: Match(cid), n.K_INGRESS_PIPE: Match(0)}
        entry = app.switch.read_entry(n.ECN_THRESHOLD, key)
        assert entry is not None
        cell = app.profile.cell_bytes
        assert entry.data["threshold_bytes"] == app.live[cid].threshold_cells * cell
        rates = app.switch.read_entry(n.CLASS_RATES, {n.K_CLASS_ID: Match(cid)})
        assert rates is not None
        assert rates.data["rate"] == app.live[cid].rate_pps > 0
        assert rates.data["target_rate"] == app.live[cid].target_rate_pps
    omega_weights = [app.live[c].weight for c in (1, 2, 3)]
    assert all(w >= 1 for w in omega_weights)
    assert sum(omega_weights) == pytest.approx(app.config.scheduling.weight_quantum, abs=2)


def test_an_idle_class_keeps_its_state_while_the_busy_ones_are_optimised() -> None:
    # Found by the ns-3 evaluation: a class that starts later made the cycle
    # crash looking up its (absent) solution.
    app = loaded_app((("voice", 30), ("video", 50)))  # bulk (class 3) sends nothing
    before = app.live[3]
    changes = app.optimize_once(1e-4)
    assert {c.class_id for c in changes} <= {1, 2}
    assert any(c.class_id in (1, 2) for c in changes)
    assert app.live[3] == before


def test_idle_interval_changes_nothing() -> None:
    app = PmqecnApp(ModelSwitch("pmqecn", load_profile("tofino")), load_config(DEFAULT_CONFIG))
    app.push_all()
    app.sample(0.0)
    assert app.optimize_once(1.0) == []


def test_overload_cuts_targets_and_keeps_thresholds() -> None:
    app = loaded_app((("video", 20),), service_rate_pps=1000)  # far below the load
    changes = app.optimize_once(1e-3)  # 20 000 pps into a 1000 pps port
    assert {c.what for c in changes} == {"target_rate_pps", "rate_pps"}
    # One class alone on the port: its share is all of u x the port.
    assert app.live[2].rate_pps == 20_000
    assert app.live[2].target_rate_pps == round(U * 1000)
    assert app.live[2].threshold_cells == 40
    rates = app.switch.read_entry(n.CLASS_RATES, {n.K_CLASS_ID: Match(2)})
    assert rates is not None and rates.data["target_rate"] == round(U * 1000)


def test_mild_overload_cuts_to_the_target_utilisation() -> None:
    app = loaded_app((("video", 20),), service_rate_pps=15_000)
    app.optimize_once(1e-3)
    assert app.live[2].target_rate_pps == round(U * 15_000)


def test_overload_at_twice_the_port_splits_its_target_by_the_weights() -> None:
    """voice 30k + video 50k pps into a 40k pps port: lambda* totals u x 40k,
    split by the classes' scheduling weights (6:5) as weighted max-min shares."""
    app = loaded_app((("voice", 30), ("video", 50)), service_rate_pps=40_000)
    app.optimize_once(1e-3)
    targets = {cid: app.live[cid].target_rate_pps for cid in (1, 2)}
    assert sum(targets.values()) == pytest.approx(U * 40_000, abs=1)
    assert targets[1] == pytest.approx(U * 40_000 * 6 / 11, abs=1)
    assert targets[2] == pytest.approx(U * 40_000 * 5 / 11, abs=1)
    # A light class beside a heavy one keeps all it sends.
    app = loaded_app((("voice", 5), ("video", 75)), service_rate_pps=40_000)
    app.optimize_once(1e-3)
    assert app.live[1].target_rate_pps == 5_000
    assert app.live[2].target_rate_pps == round(U * 40_000) - 5_000


def test_an_underloaded_port_never_cuts() -> None:
    loads = {1: 30, 2: 50, 3: 35}
    app = loaded_app(tuple((name, count // 2) for name, count in LOAD))  # 46 % of the port
    app.optimize_once(1e-4)
    for cid, count in loads.items():
        assert app.live[cid].target_rate_pps >= app.live[cid].rate_pps == count // 2 * 10_000


def test_the_first_answer_comes_one_interval_after_start() -> None:
    app = PmqecnApp(ModelSwitch("pmqecn", load_profile("tofino")), load_config(DEFAULT_CONFIG))
    app.push_all()
    app.start(0.0)
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    data = bytes(FLOWS["video"].packet())
    for _ in range(50):
        sw.model.send(FLOWS["video"].port, data)
    changes = app.optimize_once(1e-3)
    assert any(c.what == "target_rate_pps" for c in changes)
    assert app.live[2].rate_pps == 50_000


def test_without_start_the_first_cycle_only_takes_the_baseline() -> None:
    app = PmqecnApp(ModelSwitch("pmqecn", load_profile("tofino")), load_config(DEFAULT_CONFIG))
    app.push_all()
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    data = bytes(FLOWS["video"].packet())
    for _ in range(50):
        sw.model.send(FLOWS["video"].port, data)
    assert app.optimize_once(1e-3) == []


@pytest.mark.parametrize("rule", ["omega_n", "ls"])
def test_threshold_rule_sets_k_in_cells(rule: str) -> None:
    from bfrt_controller.pmqecn.solver import solve_for

    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["optimizer"]["threshold_rule"] = rule
    app = PmqecnApp(ModelSwitch("pmqecn", load_profile("tofino")), parse_config(raw))
    app.push_all()
    app.start(0.0)
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    for name, count in LOAD:
        inject_depth(sw, 0, 4000)
        data = bytes(FLOWS[name].packet())
        for _ in range(count):
            sw.model.send(FLOWS[name].port, data)
    samples = app.sample(1e-4)
    result = solve_for(app.config, samples)
    n_cap = app.config.optimizer.capacity_packets
    for cid, k in result.k_packets.items():
        if rule == "omega_n":  # Algorithm 2 step 3: K_i = omega_i N packets
            assert k == max(1, math.ceil(result.omega[cid] * n_cap - 1e-9))
            assert k > 100  # a third of a 1000-packet buffer, not 1-2 packets
        else:
            assert k <= 20
        # packets -> bytes (mean packet size) -> cells (the chip's cell size)
        cells = app.packets_to_cells(k)
        assert cells == min(
            -(-k * app.config.optimizer.mean_packet_bytes // app.profile.cell_bytes),
            app.profile.max_qdepth_cells,
        )


def test_cli_optimize_once_on_the_model(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--state", str(tmp_path / "s.yaml"), "optimize", "--once"])
    assert result.exit_code == 0, result.output
    # a fresh model carries no traffic: nothing to optimise, nothing written
    assert "nothing changed" in result.output
