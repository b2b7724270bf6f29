# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 34 items 1, 2, 6, 7, 8 and 10 against the fake SDE and the model:
the front panel's MAC maps checked against the TM's PFC, the watchdog on
counters read from the MAC, ports resolved through the box's own
`$PORT_STR_INFO`, DWRR weights the driver takes, and a `$PORT` read that
asks only for the fields it uses."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.errors import ConfigError, WriteError
from bfrt_controller.p4qcn.config import DEFAULT_CONFIG as P4QCN_DEFAULT
from bfrt_controller.pfc_watchdog import PfcWatchdog
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG as PMQECN_DEFAULT
from bfrt_controller.pmqecn.config import parse_config as parse_pmqecn
from bfrt_controller.service import make_target_app, resolve
from bfrt_controller.switch import PortWrite, TmPfcWrite, TmQueueWrite
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends
from hw_profiles import load_profile
from hw_profiles.boards import load_board

BOARD = load_board("tofino-32q")
# Device ports 4 and 5 (P4QCN's PFC ports below) are connector 13's lanes 0 and 1.
PFC_PORT_NAMES = ("13/0", "13/1")


def p4qcn_raw(**pfc: object) -> dict[str, Any]:
    raw = yaml.safe_load(P4QCN_DEFAULT.read_text())
    raw["pfc"] = {"cos": 3, "ports": [4, 5], "xoff_cells": 182, "headroom_cells": 52, **pfc}
    # PFC covers congestion point 4/0: its Q_max within Q_PFC - Q_flight = 182 - 52
    # (seed 003, 3.2.2), which the default 209 breaks.
    raw["queues"][0].update(q_min_cells=130, q_max_cells=130)
    raw["traffic_classes"] = [{"dscp": 26, "queue": 0, "icos": 3}]
    return raw


def deployment(config: dict[str, Any], chip_board: str = "tofino-32q", **port: Any) -> Any:
    ports = [
        {"port": name, "speed": "25G", "pfc_priorities": [3], **port} for name in PFC_PORT_NAMES
    ]
    return {
        "targets": [
            {
                "name": "leaf1",
                "target": "grpc://localhost:50052",
                "program": "p4qcn",
                "config": config,
                "front_panel": {"board": chip_board, "ports": ports},
            }
        ]
    }


# ---- items 1 and 2: the MAC's maps against the TM's PFC --------------------------


def test_a_pfc_port_whose_mac_lacks_the_lossless_cos_is_refused() -> None:
    with pytest.raises(ConfigError) as exc:
        resolve(deployment(p4qcn_raw(), pfc_priorities=[4]), "deploy.yaml", P4QCN_DEFAULT.parent)
    assert exc.value.field.endswith("front_panel.ports[0].pfc_priorities")
    assert "CoS 3" in exc.value.reason


def test_on_tofino_the_mac_must_drop_pauses_on_the_ignore_cos() -> None:
    """Not honouring moves the queues to pfc.ignore_cos (0 here): a MAC that
    honours pauses on 0 ($RX_PFC_EN_MAP bit 0) would stop them there too."""
    raw = deployment(p4qcn_raw(), pfc_priorities=[0, 3])
    with pytest.raises(ConfigError) as exc:
        resolve(raw, "deploy.yaml", P4QCN_DEFAULT.parent)
    assert "pfc.ignore_cos" in exc.value.reason
    # Moved to CoS 5, which the MAC ignores: accepted.
    resolve(deployment(p4qcn_raw(ignore_cos=5), pfc_priorities=[0, 3]), "d.yaml", Path())


# ---- item 6: the watchdog on counters from the MAC ---------------------------------


def test_watchdog_sees_a_storm_between_the_port_managers_stat_polls() -> None:
    """Polls every 100 ms, the shadow refreshed every 1000 ms: a watchdog on
    the shadow saw no pause at all (fake.poll_port_stats() never runs here)."""
    _, (sw, fake) = both_backends("p4qcn", ports=(4,))  # $PORT_STAT needs the port added
    assert fake is not None
    sw.write([TmPfcWrite(4, 3, (0,))])
    wd = PfcWatchdog(sw, [4], 3, (0,), 0.2, 0.2, "forward")
    t = 0.0
    wd.poll(t)
    events = []
    for _ in range(2):
        t += 0.1
        fake.rx_paused(4, 3, 100_000)
        events += wd.poll(t)
    assert [(e.port, e.what) for e in events] == [(4, "storm")]
    assert sw.read_tm_pfc(4, 0)[2] == 0  # moved to the ignore CoS


# ---- item 7: ports through the box's own map ----------------------------------------


def target(raw: Any, fake: FakeBfrtGrpc) -> Any:
    _, targets = resolve(raw, "deploy.yaml", P4QCN_DEFAULT.parent)
    sw = BfrtSwitch("p4qcn", load_profile("tofino"), client_module=fake)
    sw.connect()
    return make_target_app(targets[0], sw)


def test_ports_resolve_through_port_str_info() -> None:
    fake = FakeBfrtGrpc("p4qcn", load_profile("tofino"))
    app = target(deployment(p4qcn_raw()), fake)
    app.resolve_front_panel()
    assert app.dev_ports == {"13/0": 4, "13/1": 5}
    reads = [c for c in fake.calls if c.rpc == "read" and c.table == "$PORT_STR_INFO"]
    assert len(reads) == 2
    app.push_all()
    assert set(fake.ports()) == {4, 5}


def test_a_box_whose_map_disagrees_with_the_board_is_refused_naming_both() -> None:
    """open-p4studio's accton_wedge_32x_port_map.json (a bspless map) puts
    connector 13 elsewhere than the model platform's map the board copies."""
    fake = FakeBfrtGrpc("p4qcn", load_profile("tofino"))
    box = {f"13/{lane}": 136 + lane for lane in range(4)}
    fake.set_front_panel(box)
    app = target(deployment(p4qcn_raw()), fake)
    with pytest.raises(ConfigError) as exc:
        app.resolve_front_panel()
    assert exc.value.field == "ports[0].port"
    assert "136 on the switch" in exc.value.reason and "4 in board tofino-32q" in exc.value.reason
    assert fake.writes() == []


def test_port_str_info_is_not_read_from_hardware() -> None:
    """BfRtPortStrInfoTable::tableEntryGet (line 2597): from_hw is BF_NOT_SUPPORTED."""
    _, (sw, fake) = both_backends("p4qcn")
    assert isinstance(sw, BfrtSwitch) and fake is not None
    assert sw.front_panel_port("13/1") == 5
    t = sw._bfrt().table_get("$PORT_STR_INFO")
    key = t.make_key([sw.gc.KeyTuple("$PORT_NAME", "13/1")])
    with pytest.raises(Exception, match="not supported"):
        list(t.entry_get(sw._target(), [key], {"from_hw": True}))


# ---- item 8: DWRR weights ---------------------------------------------------------


def test_dwrr_weight_above_1023_is_refused_everywhere() -> None:
    """tm_api_sch.c line 71: "Supported range [ 0.. 1023 ]"."""
    raw = yaml.safe_load(PMQECN_DEFAULT.read_text())
    raw = copy.deepcopy(raw)
    raw["scheduling"] = {**raw.get("scheduling", {}), "mode": "tm_dwrr", "egress_ports": [4]}
    raw["classes"][0]["weight"] = 1024
    with pytest.raises(ConfigError) as exc:
        parse_pmqecn(raw)
    assert exc.value.field.endswith("classes[0].weight")
    for sw, fake in both_backends("pmqecn"):
        with pytest.raises(WriteError, match="dwrr_weight 1024 invalid"):
            sw.write([TmQueueWrite(4, 0, dwrr_weight=1024)])
        sw.write([TmQueueWrite(4, 0, dwrr_weight=1023)])
        assert sw.read_tm_weight(4, 0) == 1023
        if fake is not None:
            assert isinstance(sw, BfrtSwitch)
            t = sw._bfrt().table_get("tf1.tm.queue.sched_cfg")
            key = t.make_key([sw.gc.KeyTuple("pg_id", 1), sw.gc.KeyTuple("pg_queue", 0)])
            data = t.make_data([sw.gc.DataTuple("dwrr_weight", 2000)])
            with pytest.raises(Exception, match=r"outside 0\.\.1023"):
                t.entry_mod(sw._target(0), [key], [data])


# ---- item 10: a $PORT read asks for its fields ---------------------------------------


def test_a_failing_sub_read_does_not_fail_the_port_read() -> None:
    """bf_rt_port_table_impl.cpp tableEntryGet_internal: with no field asked
    for, every field is read and one failing sub-read fails the read."""
    _, (sw, fake) = both_backends("p4qcn")
    assert isinstance(sw, BfrtSwitch) and fake is not None
    sw.write([PortWrite(4, "BF_SPEED_25G", "BF_FEC_TYP_NONE", lanes=1)])
    fake.fail_port_field("$TIMESTAMP_1588_VALUE")
    held = sw.read_port(4)
    assert held is not None and (held.speed, held.lanes) == ("BF_SPEED_25G", 1)
    t = sw._bfrt().table_get("$PORT")
    with pytest.raises(Exception, match="TIMESTAMP_1588_VALUE"):
        list(t.entry_get(sw._target(), [sw._port_key(4)], {"from_hw": False}))
