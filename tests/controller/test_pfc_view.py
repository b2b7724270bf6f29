# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PFC in full, and a watchdog on time (issue 52 item 2): rx and tx pause
time of all eight priorities per port in `status`, `queues` and metrics;
`clear pfc`; the PFC watchdog polled on a timer of its own in the daemon
(acted on within detection_ms + 100 ms with a 1 s interval); storm counts
per port and priority; `set watchdog=on|off`."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import generate_latest

from bfrt_controller import context
from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.buffer_view import PAUSE_SECTION, view
from bfrt_controller.cli import run
from bfrt_controller.metrics import registry_for
from bfrt_controller.p4qcn.app import P4qcnApp
from bfrt_controller.p4qcn.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.pfc_watchdog import WATCHDOG_SECTION
from bfrt_controller.service import Daemon
from bfrt_controller.switch import PortWrite, Switch
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends
from hw_profiles import load_profile

RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())
COS = 3
IGNORE_COS = 0  # where the watchdog moves the queues while it breaks a storm


def with_pfc(**watchdog: object) -> dict[str, Any]:
    raw = copy.deepcopy(RAW)
    raw["pfc"] = {
        "ports": [4, 5],
        "xoff_cells": 182,
        "headroom_cells": 52,
        "watchdog": {"detection_ms": 200, "restoration_ms": 200, **watchdog},
    }
    # PFC covers congestion point 4/0: its Q_max within Q_PFC - Q_flight = 182 - 52
    # (seed 003, 3.2.2), which the default 209 breaks.
    raw["queues"][0].update(q_min_cells=130, q_max_cells=130)
    raw["traffic_classes"] = [{"dscp": 26, "queue": 0, "icos": COS}]
    return raw


def pause(sw: Switch, fake: FakeBfrtGrpc | None, port: int, cos: int, rx: int, tx: int) -> None:
    if fake is not None:
        fake.rx_paused(port, cos, rx)
        fake.tx_paused(port, cos, tx)
    else:
        assert isinstance(sw, ModelSwitch)
        sw.port_rx_pause_us[(port, cos)] = sw.port_rx_pause_us.get((port, cos), 0) + rx
        sw.port_tx_pause_us[(port, cos)] = sw.port_tx_pause_us.get((port, cos), 0) + tx


def test_rx_and_tx_pause_of_all_eight_priorities_in_status_and_queues() -> None:
    for sw, fake in both_backends("p4qcn", ports=(4, 5)):
        app = P4qcnApp(sw, parse_config(with_pfc()))
        app.push_all()
        for cos in range(8):
            pause(sw, fake, 4, cos, rx=100 + cos, tx=200 + cos)
        for rows in (app.status(), view(app, app.status(), 4)):
            got = {
                (r["port"], r["cos"]): (r["rx_pause_us"], r["tx_pause_us"])
                for r in rows
                if r["section"] == PAUSE_SECTION
            }
            assert {got[(4, c)] for c in range(8)} == {(100 + c, 200 + c) for c in range(8)}
        assert {(p, c) for p, c in got} == {(4, c) for c in range(8)}  # --port 4 only
        status = {(r["port"], r["cos"]) for r in app.status() if r["section"] == PAUSE_SECTION}
        assert status == {(p, c) for p in (4, 5) for c in range(8)}
        # clear pfc: every priority, both directions, back to 0.
        sw.clear_tm_counters("pfc", [4, 5])
        assert all(sw.read_port_pause_us(4, c, d) == 0 for c in range(8) for d in ("rx", "tx"))


def test_the_watchdog_sees_a_cleared_counter_as_no_storm() -> None:
    for sw, fake in both_backends("p4qcn", ports=(4, 5)):
        app = P4qcnApp(sw, parse_config(with_pfc()))
        app.push_all()
        app.watchdog_once(0.0)
        pause(sw, fake, 4, COS, 100_000, 0)
        app.watchdog_once(0.1)
        sw.clear_tm_counters("pfc", [4])
        assert app.watchdog_once(0.2) == []


class Storm:
    """A clock for the daemon, and a neighbour that holds CoS 3 of port 4
    paused without a break from `start_s` on: the fake's
    $ReceivePri3Pause1USCount rises with the clock from then."""

    def __init__(self, fake: FakeBfrtGrpc, start_s: float) -> None:
        self.fake, self.start_s = fake, start_s
        self.now_s = 1000.0
        self.counted_us = 0

    def __call__(self) -> float:
        return self.now_s

    def wait(self, event: threading.Event, timeout_s: float) -> None:
        self.now_s += timeout_s
        paused_us = int(max(0.0, self.now_s - self.start_s) * 1e6)
        self.fake.rx_paused(4, COS, paused_us - self.counted_us)
        self.counted_us = paused_us


def storm_daemon(tmp_path: Path, **watchdog: object) -> tuple[Daemon, Storm, BfrtSwitch]:
    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("p4qcn", profile)
    made: list[BfrtSwitch] = []

    def factory(t: Any) -> Switch:
        sw = BfrtSwitch("p4qcn", profile, client_module=fake)
        sw.connect()
        # The PFC ports, added as a front panel adds them.
        sw.write(
            [PortWrite(p, "BF_SPEED_25G", "BF_FEC_TYP_NONE", "PM_AN_DEFAULT", 1) for p in (4, 5)]
        )
        made.append(sw)
        return sw

    target = {
        "name": "leaf1",
        "target": "grpc://sw:50052",
        "program": "p4qcn",
        "config": with_pfc(**watchdog),
        "interval_s": 1.0,
    }
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump({"targets": [target]}))
    # The storm starts between two polls, as it would: 0.437 s after the first step.
    storm = Storm(fake, start_s=1000.437)
    d = Daemon(path, factory, storm, wait=storm.wait)
    return d, storm, made[0] if made else None  # type: ignore[return-value]


def run_until(d: Daemon, storm: Storm, end_s: float) -> float | None:
    """Step the daemon as run() does; the clock time the watchdog stopped
    port 4 honouring CoS 3 (its queues moved to IGNORE_COS), or None."""
    sw: BfrtSwitch | None = None
    while storm.now_s < end_s:
        timeout_s = d.step()
        sw = sw or d.targets["leaf1"].switch  # type: ignore[assignment]
        assert sw is not None
        if sw.read_tm_pfc(4, 0)[2] == IGNORE_COS:
            return storm.now_s
        storm.wait(threading.Event(), timeout_s)
    return None


def test_a_storm_is_acted_on_within_detection_plus_100ms_with_a_1s_interval(
    tmp_path: Path,
) -> None:
    d, storm, _ = storm_daemon(tmp_path)
    acted = run_until(d, storm, 1005.0)
    assert acted is not None
    assert acted - storm.start_s <= 0.2 + 0.1 + 1e-6
    t = d.targets["leaf1"]
    # Acted on between the program's cycles (one a second): by the watchdog's own timer.
    assert t.stats.cycles == 1 and t.next_due_s == 1001.0
    # The storm is counted per port and priority in status and metrics at
    # once, before the next cycle.
    rows = [r for r in t.rows if r["section"] == WATCHDOG_SECTION]
    assert {(r["port"], r["cos"], r["storms"]) for r in rows} == {(4, COS, 1), (5, COS, 0)}
    text = generate_latest(registry_for(d)).decode()
    # No board in this deployment: `port` is the device port, `dev_port` beside it.
    assert 'tofcc_pfc_storms_total{cos="3",dev_port="4",port="4",switch="leaf1"} 1.0' in text
    assert (
        'tofcc_port_pfc_rx_pause_seconds_total{cos="3",dev_port="4",port="4",switch="leaf1"}'
        in text
    )
    assert (
        'tofcc_port_pfc_tx_pause_seconds_total{cos="7",dev_port="5",port="5",switch="leaf1"} 0.0'
        in text
    )


def test_watchdog_off_stops_it_acting() -> None:
    for sw, fake in both_backends("p4qcn", ports=(4, 5)):
        app = P4qcnApp(sw, parse_config(with_pfc()))
        app.push_all()
        app.watchdog_once(0.0)
        # Off in mid-storm: the port honours pauses again and no storm is acted on.
        pause(sw, fake, 4, COS, 200_000, 0)
        assert [e.what for e in app.watchdog_once(0.2)] == ["storm"]
        assert sw.read_tm_pfc(4, 0)[2] == IGNORE_COS
        changes = app.set_watchdog(False)
        assert [(c.what, c.old, c.new) for c in changes] == [("watchdog", "on", "off")]
        assert sw.read_tm_pfc(4, 0)[2] == COS
        assert app.watchdog_period_s() is None
        for i in range(1, 5):
            pause(sw, fake, 4, COS, 100_000, 0)
            assert app.watchdog_once(0.2 + i * 0.1) == []
        assert sw.read_tm_pfc(4, 0)[2] == COS
        assert app.live_state()["watchdog"] == "off"
        assert app.set_watchdog(True)[0].new == "on"
        assert app.watchdog_period_s() == pytest.approx(0.1)


def test_the_daemon_polls_no_watchdog_that_is_off(tmp_path: Path) -> None:
    d, storm, _ = storm_daemon(tmp_path)
    d.step()
    app = d.targets["leaf1"].app.inner
    assert isinstance(app, P4qcnApp)
    app.set_watchdog(False)
    assert run_until(d, storm, 1005.0) is None


def test_cli_set_watchdog_on_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "p4qcn.yaml"
    cfg.write_text(yaml.safe_dump({"program": "p4qcn", **with_pfc()}))
    sw = ModelSwitch("p4qcn", load_profile("tofino"))
    monkeypatch.setattr(context, "open_switch", lambda *a, **k: sw)
    base = ["--program", "p4qcn", "--state", str(tmp_path / "s.json"), "--config", str(cfg)]
    assert run([*base, "apply", str(cfg)]) == 0
    assert run([*base, "set", "watchdog=off"]) == 0
    assert "watchdog" in capsys.readouterr().out
    # Kept across commands (the model target's state file).
    base = base[:-2]
    assert run([*base, "status", "--json"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if r["section"] == WATCHDOG_SECTION]
    assert rows and all(r["enabled"] == 0 for r in rows)
    assert run([*base, "set", "watchdog=maybe"]) == 2
    assert "watchdog" in capsys.readouterr().err
    assert run([*base, "set", "watchdog=on"]) == 0
    capsys.readouterr()
    assert run([*base, "status", "--json"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if r["section"] == WATCHDOG_SECTION]
    assert all(r["enabled"] == 1 for r in rows)


def test_each_storm_the_watchdog_acts_on_leaves_an_audit_line(tmp_path: Path) -> None:
    import os

    d, storm, _ = storm_daemon(tmp_path)
    assert run_until(d, storm, 1005.0) is not None
    log = Path(os.environ["XDG_STATE_HOME"]) / "tofcc" / "audit.log"
    got = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["action"] for x in got] == ["connect-push", "watchdog"]
    assert (got[1]["switch"], got[1]["changes"], got[1]["result"]) == ("leaf1", 1, "ok")
