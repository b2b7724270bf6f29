# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Retuning under the daemon: an operator's K_i survives the optimiser when
the class is pinned, and a switch without the optimiser keeps every value."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from test_service import Clock, Recording, example, pmqecn_target, recording_factory, write_deploy

from bfrt_controller.service import Daemon
from doubles.pmqecn_counts import set_class_totals
from models.switch.core import Match

ECN = "SwitchIngress.ecn_threshold"
OPERATOR_K_CELLS = 37


def held_k_cells(sw: Recording, class_id: int) -> int:
    # K_i is the same in every ingress pipe's entry.
    st = sw.read_entry(ECN, {"hdr.bridged.class_id": Match(class_id), "ingress_pipe": Match(0)})
    assert st is not None
    k_bytes = st.data["threshold_bytes"]
    assert isinstance(k_bytes, int)
    return k_bytes // sw.profile.cell_bytes


def run_three_optimiser_cycles(tmp_path: Path, config: dict[str, Any]) -> list[dict[int, int]]:
    """`tofcc run`'s loop on the model with traffic on every class each
    interval; each cycle's K_i of every class as the switch holds it."""
    made: dict[str, Recording] = {}
    path = write_deploy(tmp_path / "d.yaml", pmqecn_target("leaf1", config=config))
    clock = Clock()
    d = Daemon(path, recording_factory(made), clock)
    d.step()  # push + the optimiser's baseline sample
    sw = made["leaf1"]
    ids = [c["id"] for c in config["classes"]]
    held = []
    packets = dict.fromkeys(ids, 0)
    for cycle in range(3):
        for i, cid in enumerate(ids):
            # Unequal, growing load so the solver has something to move.
            packets[cid] += (cycle + 1) * 400 * (i + 1)
            set_class_totals(sw.model, cid, packets[cid], packets[cid] * 1000)
        clock.now_s += 1.0
        d.step()
        held.append({cid: held_k_cells(sw, cid) for cid in ids})
    assert d.targets["leaf1"].stats.cycles == 4
    return held


def test_a_pinned_class_keeps_its_threshold_through_three_optimiser_cycles(
    tmp_path: Path,
) -> None:
    config = copy.deepcopy(example("pmqecn-tm-dwrr.yaml"))
    pinned, free = config["classes"][0], config["classes"][1]
    pinned["threshold_cells"] = OPERATOR_K_CELLS
    pinned["pin"] = True
    free["threshold_cells"] = OPERATOR_K_CELLS
    held = run_three_optimiser_cycles(tmp_path, config)
    assert [h[pinned["id"]] for h in held] == [OPERATOR_K_CELLS] * 3
    # The same load moves an unpinned class's K_i: the optimiser did run.
    assert any(h[free["id"]] != OPERATOR_K_CELLS for h in held)


def test_without_pin_the_optimiser_moves_the_operators_threshold(tmp_path: Path) -> None:
    config = copy.deepcopy(example("pmqecn-tm-dwrr.yaml"))
    config["classes"][0]["threshold_cells"] = OPERATOR_K_CELLS
    held = run_three_optimiser_cycles(tmp_path, config)
    assert any(h[config["classes"][0]["id"]] != OPERATOR_K_CELLS for h in held)


def test_optimizer_disabled_keeps_every_configured_threshold(tmp_path: Path) -> None:
    config = copy.deepcopy(example("pmqecn-tm-dwrr.yaml"))
    config["optimizer"]["enabled"] = False
    for c in config["classes"]:
        c["threshold_cells"] = OPERATOR_K_CELLS
    held = run_three_optimiser_cycles(tmp_path, config)
    assert all(set(h.values()) == {OPERATOR_K_CELLS} for h in held)


def test_pin_and_enabled_are_in_the_schema() -> None:
    from bfrt_controller.pmqecn.config import parse_config

    cfg = copy.deepcopy(example("pmqecn-tm-dwrr.yaml"))
    cfg["classes"][0]["pin"] = True
    cfg["optimizer"]["enabled"] = False
    parsed = parse_config(yaml.safe_load(yaml.safe_dump(cfg)))
    assert parsed.classes[0].pin and not parsed.optimizer.enabled


def test_a_write_against_a_switch_the_daemon_owns_says_what_to_do() -> None:
    import pytest

    from bfrt_controller.backends.bfrt import BfrtSwitch
    from bfrt_controller.errors import SwitchBusy
    from doubles import FakeBfrtGrpc
    from hw_profiles import load_profile

    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("pmqecn", profile)
    daemon = BfrtSwitch("pmqecn", profile, client_module=fake)
    daemon.connect()
    with pytest.raises(SwitchBusy) as err:
        BfrtSwitch("pmqecn", profile, client_module=fake, client_id=1).connect()
    message = str(err.value)
    for advice in (
        "tofcc run",
        "pin: true",
        "tofcc diff",
        "systemctl reload tofcc",
        "tofcc status",
    ):
        assert advice in message
    daemon.close()
