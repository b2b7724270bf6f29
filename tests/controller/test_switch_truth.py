# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What a real switch does after each call (issue 42), on the fake SDE and
the controller: every side effect cited in tests/doubles/fake_bfrt_grpc.py
from open-p4studio 1f97778f, and the controller surviving it.

1. a port add resets the port's TM settings; a refused batch restores only
   the ports it changed, with those settings;
2. `$PORT_STAT` of a port that is not added is refused;
3. power-on DWRR weight 1023;
4. TM reads rounded on an ASIC, exact on tofino-model;
5. 32 hysteresis profiles per pipe;
6. `$PORT` sub-call failures reported as success.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.diff import diff_one
from bfrt_controller.errors import ControllerError, WriteError
from bfrt_controller.pmqecn.app import OTHER_QUEUE_WEIGHT
from bfrt_controller.switch import (
    EntryWrite,
    PortWrite,
    RegisterWrite,
    Switch,
    TmPfcWrite,
    TmPoolWrite,
    TmPpgWrite,
    TmShapingWrite,
    Write,
)
from bfrt_controller.targets import open_switch
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends
from hw_profiles import load_profile
from models.switch.core import Match

PROGRAM = "p4qcn"
IDENTITY = tuple(range(8))
COS = 3


def p25(port: int, **kw: object) -> PortWrite:
    return PortWrite(port, "BF_SPEED_25G", "BF_FEC_TYP_NONE", "PM_AN_DEFAULT", 1, **kw)  # type: ignore[arg-type]


def p10(port: int) -> PortWrite:
    return PortWrite(port, "BF_SPEED_10G", "BF_FEC_TYP_NONE", "PM_AN_DEFAULT", 1)


def fake_switch(
    chip: str = "tofino", asic: bool = True, program: str = PROGRAM
) -> tuple[BfrtSwitch, FakeBfrtGrpc]:
    profile = load_profile(chip)
    fake = FakeBfrtGrpc(program, profile, asic=asic)
    sw = BfrtSwitch(program, profile, client_module=fake, asic=asic)
    sw.connect()
    return sw, fake


def ports_of(sw: Switch) -> tuple[int, int]:
    """Two front-panel lanes that take 25G on one lane: 4 and 5 on Tofino
    (connector 2), 8 and 9 on Tofino2 (its first MAC)."""
    return (8, 9) if sw.profile.chip == "tofino2" else (4, 5)


def tuned(sw: Switch) -> tuple[int, int]:
    """Ports A and B added, PFC generated on A, a queue shaper on A and the
    port shaper on B: what an operator's P4QCN and BFCC leave on a switch."""
    a, b = ports_of(sw)
    sw.write([p25(a, pfc_map=0xFF), p25(b)])
    sw.write(
        [
            TmPfcWrite(a, COS, (0,)),
            TmShapingWrite(a, 1, 2_000_000, 9000),
            TmShapingWrite(b, None, 5_000_000, 9000),
        ]
    )
    return a, b


def refused_entry(sw: Switch) -> EntryWrite:
    """A write the program's table refuses (a key wider than its field)."""
    table = next(iter(sw.model.p4.tables.values())) if hasattr(sw, "model") else None
    assert table is not None
    key = {k.name: Match(1 << k.bits) for k in table.keys.values()}
    action = next(iter(table.actions.values()))
    return EntryWrite(table.name, key, action.name, {p: 0 for p, _ in action.params})


# -- 1. port add resets TM; restore only what changed, with its TM -------------
def test_switch_truth_the_fakes_port_add_turns_pfc_off_and_resets_rates() -> None:
    sw, fake = fake_switch()
    tuned(sw)
    assert sw.read_tm_pfc(4, 0)[0] == "PFC"
    # Straight to the fake SDE, as any client: delete and add the port.
    t = sw._bfrt().table_get("$PORT")
    key = sw._port_key(4)
    t.entry_del(sw._target(), [key])
    data = t.make_data(
        [
            fake.DataTuple("$SPEED", str_val="BF_SPEED_25G"),
            fake.DataTuple("$FEC", str_val="BF_FEC_TYP_NONE"),
        ]
    )
    t.entry_add(sw._target(), [key], [data])
    assert sw.read_tm_pfc(4, 0)[0] == "NONE"  # tm_port.c line 953
    pipe, pg_id, pg_queue = fake.port_queue(4, 1)
    assert fake.tm_row("tm.queue.sched_shaping", pipe, pg_id, pg_queue)["max_rate"] == 25_000_000
    assert fake.tm_row("tm.port.sched_shaping", 0, 4)["max_burst_size"] == 9216


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_switch_truth_a_refused_batch_leaves_every_tm_row_and_link_as_before(chip: str) -> None:
    """Port 5 changes speed (a delete and an add), port 4 is already as
    asked; a later table write is refused. Afterwards every table the fake
    holds (TM ports and queues, `$PORT`, PPGs, pools) equals the state
    before the batch."""
    sw, fake = fake_switch(chip)
    a, b = tuned(sw)
    before = fake.snapshot()
    with pytest.raises(WriteError):
        sw.write([p25(a, pfc_map=0xFF), p10(b), refused_entry(sw)])
    assert fake.snapshot() == before
    assert sw.read_tm_pfc(a, 0) == ("PFC", IDENTITY, COS)
    assert sw.read_tm_shaping(b) == 5_000_000 and sw.read_tm_shaping(a, 1) == 2_000_000


def test_switch_truth_a_refused_batch_does_not_touch_ports_it_left_alone() -> None:
    """Today's restore deleted and re-added every listed port: a link flap
    and PFC off on ports the batch never changed."""
    sw, fake = fake_switch()
    tuned(sw)
    mark = len(fake.writes())
    with pytest.raises(WriteError):
        sw.write([p25(4, pfc_map=0xFF), p25(5), refused_entry(sw)])
    assert [c for c in fake.writes()[mark:] if c.table == "$PORT"] == []


def test_switch_truth_a_speed_change_keeps_pfc_and_the_shapers_that_are_on() -> None:
    sw, fake = fake_switch()
    tuned(sw)
    sw.write([p25(4, pfc_map=0xFF), p10(5)])
    assert sw.read_port(5).speed == "BF_SPEED_10G"  # type: ignore[union-attr]
    assert sw.read_tm_shaping(5) == 5_000_000  # on before, still on
    sw.write([p10(4)])  # 4's speed changes too: its PFC generation stays on
    assert sw.read_tm_pfc(4, 0)[0] == "PFC"
    # A shaper left off runs at the new port rate, as the SDE set it.
    pipe, pg_id, pg_queue = fake.port_queue(4, 2)
    assert fake.tm_row("tm.queue.sched_shaping", pipe, pg_id, pg_queue)["max_rate"] == 10_000_000


# -- 2. $PORT_STAT on a port that is not added -----------------------------------
def test_switch_truth_port_stat_of_a_port_not_added_is_refused() -> None:
    sw, fake = fake_switch()
    with pytest.raises(ControllerError, match="not added"):
        sw.read_port_rx_pause_us(4, COS)
    sw.write([p25(4)])
    fake.rx_paused(4, COS, 700)
    assert sw.read_port_rx_pause_us(4, COS) == 700
    sw.write([PortWrite(4, delete=True)])
    with pytest.raises(ControllerError, match="not added"):
        sw.read_port_tx_bytes(4)


# -- 3. power-on DWRR weight ------------------------------------------------------
@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_switch_truth_power_on_dwrr_weight_is_1023_on_both_backends(chip: str) -> None:
    for sw, _ in both_backends("pmqecn", chip):
        assert sw.read_tm_weight(4, 0) == 1023
        assert sw.read_tm_weight(4, 7) == 1023


def test_switch_truth_pmqecn_weighs_the_queues_no_class_uses() -> None:
    """PMQECN's tm_dwrr classes (weights 6, 5, 5 on queues 0-2) share port 4
    with five queues no class uses, at 1023 from power-on: PMQECN sets those
    to 1, so one of them filling takes at most 1/17 of the port, not 98 %,
    and the classes' drains (their shares of 16) stay within that of true."""
    from bfrt_controller.pmqecn.app import PmqecnApp
    from bfrt_controller.pmqecn.config import DEFAULT_CONFIG, load_config

    for sw, _ in both_backends("pmqecn"):
        assert sw.read_tm_weight(4, 5) == 1023
        app = PmqecnApp(sw, load_config(DEFAULT_CONFIG))
        app.push_all()
        others = [sw.read_tm_weight(4, q) for q in range(3, 8)]
        assert others == [OTHER_QUEUE_WEIGHT] * 5
        classes = sum(sw.read_tm_weight(4, q) for q in range(3))
        gamma = 1_250_000 * 1000
        drain = app.drain_rate_bytes_per_s(app.config.classes[0])
        assert drain == gamma * 6 // classes
        # One other queue backlogged: the class's real share is 6/17 of the port.
        assert drain / (gamma * 6 / (classes + OTHER_QUEUE_WEIGHT)) < 1 + 1 / classes + 1e-9


# -- 4. rounding on an ASIC only ----------------------------------------------------
PPG = TmPpgWrite(5, 4, icos=(0,), xoff_cells=182, xon_cells=140, headroom_cells=52)


@pytest.mark.parametrize("asic", [True, False])
def test_switch_truth_a_repushed_ppg_writes_nothing_on_either_target(asic: bool) -> None:
    """tofino-model reads back the 42-cell hysteresis as written; an ASIC as
    40 (8-cell units). Compared against the rounded value on tofino-model,
    every push rewrote the PPG and diff never came clean."""
    sw, fake = fake_switch(asic=asic)
    sw.write([p25(4)])
    sw.write([PPG])
    held = sw.read_tm_ppg(4, 5)
    assert held is not None and held.xoff_cells - held.xon_cells == (40 if asic else 42)
    mark = len(fake.writes())
    sw.write([PPG])
    assert fake.writes()[mark:] == []
    assert diff_one(sw, PPG) is None


def test_switch_truth_pool_limits_read_exact_on_tofino_model() -> None:
    pool = TmPoolWrite("IG_APP_POOL_0", None, ((COS, 183),))
    for asic, held in ((True, 176), (False, 183)):
        sw, _ = fake_switch(asic=asic)
        sw.write([pool])
        assert dict(sw.read_tm_pool("IG_APP_POOL_0").pfc_limit_cells)[COS] == held
        assert diff_one(sw, pool) is None


def test_switch_truth_the_target_names_tofino_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from bfrt_controller.backends import bfrt

    profile = load_profile("tofino")
    fake = FakeBfrtGrpc(PROGRAM, profile)
    monkeypatch.setattr(bfrt.client, "load_bfrt_client", lambda: fake)
    for target, rounds in (("grpc://sw1:50052", True), ("tofino-model://localhost:50052", False)):
        sw = open_switch(target, PROGRAM, profile)
        assert isinstance(sw, BfrtSwitch) and sw.rounds_tm_reads is rounds
    assert ModelSwitch(PROGRAM, profile).rounds_tm_reads


# -- 5. hysteresis profiles -----------------------------------------------------------
def test_switch_truth_a_pipe_holds_32_hysteresis_values() -> None:
    """Each PPG's hysteresis takes an offset profile of its pipe; 32 a pipe
    (tm_tofino.h line 66), one of them the power-on 32 cells."""
    sw, fake = fake_switch()
    ports = list(range(0, 64, 2))
    sw.write([p25(p) for p in ports])

    def ppg(i: int, port: int) -> TmPpgWrite:
        # Hysteresis 40, 48, ... cells: each a distinct profile.
        return TmPpgWrite(i + 1, port, (0,), 2000, 2000 - 8 * (5 + i), 52)

    writes: list[Write] = [ppg(i, p) for i, p in enumerate(ports[:31])]
    sw.write(writes)  # 31 new values and the power-on one: full
    before = fake.snapshot()
    with pytest.raises(WriteError, match="hysteresis profile"):
        sw.write([ppg(31, ports[31])])
    assert fake.snapshot() == before
    # Sharing a value already in use takes no new profile.
    sw.write([TmPpgWrite(32, ports[31], (0,), 2000, 2000 - 40, 52)])


def test_switch_truth_the_model_refuses_the_33rd_hysteresis_value_too() -> None:
    sw = ModelSwitch(PROGRAM, load_profile("tofino"))
    writes: list[Write] = [
        TmPpgWrite(i + 1, 2 * i, (0,), 2000, 2000 - 8 * (5 + i), 52) for i in range(31)
    ]
    sw.write(writes)
    with pytest.raises(WriteError, match="hysteresis profile"):
        sw.write([TmPpgWrite(32, 62, (0,), 2000, 2000 - 8 * 36, 52)])


# -- 6. $PORT sub-call failures ---------------------------------------------------------
def test_switch_truth_a_port_whose_enable_failed_is_a_refused_write() -> None:
    """The server logs a failed enable and answers success
    (bf_rt_port_table_impl.cpp line 413): the controller reads the port
    back, refuses the batch and removes the port it added."""
    sw, fake = fake_switch()
    fake.ignore_port_field("$PORT_ENABLE")
    with pytest.raises(WriteError, match="reads back"):
        sw.write([p25(4)])
    assert sw.read_port(4) is None


def test_switch_truth_a_failed_pfc_map_on_modify_restores_the_port() -> None:
    sw, fake = fake_switch()
    sw.write([p25(4)])
    before = fake.snapshot()
    fake.ignore_port_field("$TX_PFC_EN_MAP")
    with pytest.raises(WriteError, match="reads back"):
        sw.write([p25(4, pfc_map=0xFF)])
    assert fake.snapshot() == before


# -- 2 (controller): ports a loop polls must be added ------------------------------
def _deployment(program: str, config: dict[str, object], lanes: list[str]) -> dict[str, object]:
    return {
        "targets": [
            {
                "name": "s1",
                "target": "grpc://10.0.0.1:50052",
                "program": program,
                "config": config,
                "front_panel": {
                    "board": "tofino-32q",
                    "ports": [{"port": p, "speed": "25G", "pfc_priorities": [COS]} for p in lanes],
                },
            }
        ]
    }


def test_switch_truth_bfcc_reaction_port_outside_the_front_panel_is_refused() -> None:
    """BFCC's shaper reads `$PORT_STAT` of each reaction point (device port
    3 = 32/3 here): a port the front panel does not add is refused at check."""
    import yaml

    from bfrt_controller.deployment import resolve
    from bfrt_controller.errors import ConfigError

    root = Path(__file__).resolve().parents[2]
    raw = yaml.safe_load((root / "examples" / "bfcc-two-tier-s1.yaml").read_text())
    resolve(_deployment("bfcc", raw, ["32/1", "32/3"]), "d.yaml", root)
    with pytest.raises(ConfigError, match="not in front_panel") as err:
        resolve(_deployment("bfcc", raw, ["32/1"]), "d.yaml", root)
    assert err.value.field.endswith("config.reaction_points[0].port")


def test_switch_truth_pfc_port_outside_the_front_panel_is_refused() -> None:
    """The PFC watchdog reads each PFC port's pause time: same rule."""
    import yaml

    from bfrt_controller.deployment import resolve
    from bfrt_controller.errors import ConfigError

    root = Path(__file__).resolve().parents[2]
    raw = yaml.safe_load((root / "bfrt_controller" / "defaults" / "p4qcn.yaml").read_text())
    raw["pfc"] = {"ports": [1, 2], "xoff_cells": 182, "headroom_cells": 52}
    raw["traffic_classes"] = [{"dscp": 26, "queue": 0, "icos": COS}]
    resolve(_deployment("p4qcn", raw, ["32/1", "32/2"]), "d.yaml", root)
    with pytest.raises(ConfigError, match="not in front_panel") as err:
        resolve(_deployment("p4qcn", raw, ["32/1"]), "d.yaml", root)
    assert err.value.field.endswith("config.pfc.ports[1]")


def test_switch_truth_a_deployment_may_name_a_tofino_model_target() -> None:
    from bfrt_controller.deployment import resolve

    root = Path(__file__).resolve().parents[2]
    raw = {
        "targets": [{"name": "m", "target": "tofino-model://127.0.0.1:50052", "program": "pmqecn"}]
    }
    _, (t,) = resolve(raw, "d.yaml", root)
    assert t.spec.target.startswith("tofino-model://")


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_switch_truth_a_pair_register_has_one_field_per_member(chip: str) -> None:
    """bf-rt.json declares BFCC's struct registers with a field per member
    (`<name>.id`, `<name>.packets`), not `<name>.f1`: write, read and the
    undo of a refused batch go through the compiler's fields."""
    sw, fake = fake_switch(chip, program="bfcc")
    reg = "SwitchEgress.occupancy_window"
    packed = (7 << 32) | 1234  # id 7, packets 1234: the model's packing
    sw.write([RegisterWrite(reg, 3, packed)])
    assert fake.register(reg, 3) == [packed] * sw.profile.pipes
    assert sw.read_register(reg, 3, pipe=0) == packed
    fake.fail_write(reg, after=1)
    with pytest.raises(ControllerError):
        sw.write([RegisterWrite(reg, 3, 1), RegisterWrite(reg, 4, 2)])
    assert sw.read_register(reg, 3, pipe=0) == packed
