# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The buffer in view (issue 52 item 1): the TM's depth, watermark and drops
per queue (tm.counter.queue), pool and PPG, read through the Switch
interface on the model and on BF-Runtime over the fake SDE, shown by
`tofcc queues`, exported as metrics, and cleared by `tofcc clear`."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import generate_latest

from bfrt_controller import context
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.buffer_view import POOL_SECTION, QUEUE_SECTION, view
from bfrt_controller.cli import run
from bfrt_controller.metrics import registry_for
from bfrt_controller.p4qcn.app import P4qcnApp
from bfrt_controller.p4qcn.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.service import Daemon
from bfrt_controller.switch import BufferCounters, Switch
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends
from hw_profiles import load_profile

RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())
PORT, QUEUE = 4, 0  # the default config's congestion point
CELL = load_profile("tofino").cell_bytes


def congest(sw: Switch, fake: FakeBfrtGrpc | None, cells: int, drops: int = 0) -> None:
    """Traffic in port 4's queue 0 on either backend."""
    if fake is not None:
        fake.congest(PORT, QUEUE, cells, drops)
    else:
        assert isinstance(sw, ModelSwitch)
        sw.congest(PORT, QUEUE, cells, drops)


def with_pfc() -> dict[str, Any]:
    raw = copy.deepcopy(RAW)
    raw["pfc"] = {"ports": [4, 5], "xoff_cells": 182, "headroom_cells": 52}
    # PFC covers congestion point 4/0: its Q_max within Q_PFC - Q_flight = 182 - 52
    # (seed 003, 3.2.2), which the default 209 breaks.
    raw["queues"][0].update(q_min_cells=130, q_max_cells=130)
    raw["traffic_classes"] = [{"dscp": 26, "queue": 0, "icos": 3}]
    return raw


def test_queue_counters_read_and_clear_on_both_backends() -> None:
    for sw, fake in both_backends("p4qcn", ports=(4, 5)):
        assert sw.read_tm_queue_counters(PORT, QUEUE) == BufferCounters(0, 0, 0)
        congest(sw, fake, 120, drops=7)
        assert sw.read_tm_queue_counters(PORT, QUEUE) == BufferCounters(120, 120, 7)
        congest(sw, fake, 30)  # draining: the watermark stays
        assert sw.read_tm_queue_counters(PORT, QUEUE) == BufferCounters(30, 120, 7)
        congest(sw, fake, 0)
        sw.clear_tm_counters("queues", [PORT])
        assert sw.read_tm_queue_counters(PORT, QUEUE) == BufferCounters(0, 0, 0)
        # A clear leaves the live depth: a full queue's watermark is its depth again.
        congest(sw, fake, 50, drops=1)
        sw.clear_tm_counters("all", [PORT])
        assert sw.read_tm_queue_counters(PORT, QUEUE) == BufferCounters(50, 50, 0)
        assert sw.read_tm_pool_counters("EG_APP_POOL_0").drop_packets is None


def test_the_fake_clears_as_the_sde_does() -> None:
    """entry_mod of tm.counter.queue with drop_count_packets and
    watermark_cells 0, one pipe; a non-zero watermark is refused
    (clear_only); usage_cells is read_only."""
    (_, _), (sw, fake) = both_backends("p4qcn", ports=(4,))
    assert fake is not None
    fake.congest(PORT, QUEUE, 10, 2)
    before = len(fake.calls)
    sw.clear_tm_counters("queues", [PORT])
    mods = [c for c in fake.calls[before:] if c.rpc == "write" and "counter.queue" in c.table]
    assert mods and all(c.op == "MODIFY" and c.pipe != 0xFFFF for c in mods)
    assert all(c.fields == ("drop_count_packets", "watermark_cells") for c in mods)
    table = sw.session.table("tf1.tm.counter.queue")
    pipe, pg_id, pg_queue = fake.port_queue(PORT, QUEUE)
    key = sw.session.make_key("tf1.tm.counter.queue", pg_id=pg_id, pg_queue=pg_queue)
    for values in ({"watermark_cells": 5}, {"usage_cells": 0}):
        data = sw.session.make_data("tf1.tm.counter.queue", values, None)
        with pytest.raises(Exception, match=r"clear only|read-only"):
            table.entry_mod(sw.session.target(pipe), [key], [data])


def test_queues_view_puts_the_programs_marks_beside_the_buffers_drops() -> None:
    for sw, fake in both_backends("p4qcn", ports=(4, 5)):
        app = P4qcnApp(sw, parse_config(with_pfc()))
        app.push_all()
        congest(sw, fake, 100, drops=3)
        rows = view(app, app.status())
        (q,) = [r for r in rows if r["section"] == QUEUE_SECTION]
        assert (q["port"], q["queue"]) == (PORT, QUEUE)
        assert (q["depth_cells"], q["depth_bytes"]) == (100, 100 * CELL)
        assert (q["watermark_cells"], q["watermark_bytes"], q["drops"]) == (100, 100 * CELL, 3)
        assert q["program_ce_marked"] == 0  # P4QCN's own marks, read apart
        pools = [r for r in rows if r["section"] == POOL_SECTION]
        assert [p["pool"] for p in pools] == ["IG_APP_POOL_0"]
        # --port: only that port; a port the program names no queue of shows all its queues.
        assert {
            r["queue"] for r in view(app, app.status(), 5) if r["section"] == QUEUE_SECTION
        } == set(range(sw.profile.min_queues_per_port))


def test_cli_queues_and_clear_all_on_the_model_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model target starts empty each command; one switch across the
    # commands stands for the traffic that congests it.
    sw = ModelSwitch("p4qcn", load_profile("tofino"))
    monkeypatch.setattr(context, "open_switch", lambda *a, **k: sw)
    base = ["--program", "p4qcn", "--state", str(tmp_path / "s.json")]
    sw.congest(PORT, QUEUE, 120, drops=7)
    sw.congest(PORT, QUEUE, 0)  # drained; watermark and drops remain
    capsys.readouterr()
    assert run([*base, "queues", "--json"]) == 0
    (q,) = [r for r in json.loads(capsys.readouterr().out) if r["section"] == QUEUE_SECTION]
    assert (q["depth_bytes"], q["watermark_bytes"], q["drops"]) == (0, 120 * CELL, 7)
    assert (q["watermark_cells"], q["program_ce_marked"]) == (120, 0)
    assert run([*base, "clear", "all"]) == 0
    capsys.readouterr()
    assert run([*base, "queues", "--json", "--port", "4"]) == 0
    (q,) = [r for r in json.loads(capsys.readouterr().out) if r["section"] == QUEUE_SECTION]
    assert (q["depth_bytes"], q["watermark_bytes"], q["drops"]) == (0, 0, 0)
    assert run([*base, "queues"]) == 0
    out = capsys.readouterr().out
    assert "buffer queues" in out and "program ce_marked" in out
    assert run([*base, "clear", "everything"]) == 2
    assert run([*base, "queues", "--port", "x"]) == 2
    assert run([*base, "queues", "--port", "999"]) == 2
    assert "--port" in capsys.readouterr().err


def test_cli_queues_and_clear_run_on_the_plain_model_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--program", "p4qcn", "--state", str(tmp_path / "s.json")]
    assert run([*base, "clear", "all"]) == 0
    capsys.readouterr()
    assert run([*base, "queues", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["drops"] for r in rows if r["section"] == QUEUE_SECTION] == [0]


def test_queue_counters_are_metrics(tmp_path: Path) -> None:
    made: list[ModelSwitch] = []

    def factory(t: Any) -> Switch:
        made.append(ModelSwitch(t.spec.program, t.profile))
        return made[-1]

    path = tmp_path / "d.yaml"
    target = {"name": "leaf1", "target": "model", "program": "p4qcn", "config": with_pfc()}
    path.write_text(yaml.safe_dump({"targets": [target]}))
    now = [100.0]
    d = Daemon(path, factory, lambda: now[0])
    d.step()
    made[0].congest(PORT, QUEUE, 40, drops=5)
    now[0] += 5
    d.step()
    text = generate_latest(registry_for(d)).decode()
    labels = f'dev_port="{PORT}",port="{PORT}",queue="{QUEUE}",switch="leaf1"'
    assert f"tofcc_queue_depth_bytes{{{labels}}} {40.0 * CELL}" in text
    assert f"tofcc_queue_watermark_bytes{{{labels}}} {40.0 * CELL}" in text
    assert f"tofcc_queue_drops_total{{{labels}}} 5.0" in text
    assert 'tofcc_pool_usage_bytes{pool="IG_APP_POOL_0",switch="leaf1"} 0.0' in text


def test_ppg_counters_of_the_pfc_ppgs_on_both_backends() -> None:
    from bfrt_controller.buffer_view import PPG_SECTION
    from bfrt_controller.p4qcn.app import ppg_id

    for sw, fake in both_backends("p4qcn", ports=(4, 5)):
        app = P4qcnApp(sw, parse_config(with_pfc()))
        app.push_all()
        if fake is not None:
            fake.fill_ppg(5, ppg_id(5), 60, drops=2)
        else:
            assert isinstance(sw, ModelSwitch)
            sw.tm_ppg_counters[(5, ppg_id(5))] = BufferCounters(60, 60, 2)
        rows = {r["port"]: r for r in view(app, app.status()) if r["section"] == PPG_SECTION}
        assert (rows[5]["depth_cells"], rows[5]["watermark_cells"], rows[5]["drops"]) == (60, 60, 2)
        assert (rows[4]["depth_cells"], rows[4]["drops"]) == (0, 0)
        sw.clear_tm_counters("queues", [4, 5], app.buffer_ppgs())
        assert sw.read_tm_ppg_counters(5, ppg_id(5)) == BufferCounters(60, 60, 0)
