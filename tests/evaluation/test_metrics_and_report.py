# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Metrics from hand-built runs, and the report written from them."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.metrics import compute_metrics, relative_change_pct, steady_window
from evaluation.records import FlowRecord, PacketLog, QueueLog, RunResult
from evaluation.report import verdict, write_report
from evaluation.scenario import Scenario, parse_scenario

MS = 1_000_000


def scenario(**extra: Any) -> Scenario:
    raw: dict[str, Any] = {
        "name": "t",
        "duration_s": 1.0,
        "bin_s": 0.1,
        "trim": 0.1,
        "hosts": ["a", "b", "c"],
        "switches": ["s"],
        "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}, {"a": "c", "b": "s"}],
        "flows": [
            {"name": "f0", "src": "a", "dst": "c", "size_bytes": 1000},
            {"name": "f1", "src": "b", "dst": "c", "size_bytes": 1000},
        ],
        "schemes": {"pmqecn": {}, "dcqcn": {}},
    }
    raw.update(extra)
    return parse_scenario(raw)


def run(scheme: str = "pmqecn", rate_f1: int = 1, wall_s: float = 0.0) -> RunResult:
    """f0 delivers one 125-byte packet every 10 ms for the whole second (100 kb/s);
    f1 one every 10*rate_f1 ms and completes at 500 ms."""
    log = PacketLog()
    for i in range(100):
        log.add(0, 125, i * 10 * MS, i * 10 * MS + 2 * MS, False)
    for i in range(0, 100, 10 * rate_f1 if rate_f1 else 1):
        if rate_f1:
            log.add(1, 125, i * 10 * MS, i * 10 * MS + 4 * MS, True)
    flows = [
        FlowRecord(
            0,
            "f0",
            "a",
            "c",
            "C",
            1000,
            0,
            packets_sent=100,
            packets_received=100,
            last_rx_ns=992 * MS,
        ),
        FlowRecord(
            1,
            "f1",
            "b",
            "c",
            "C",
            1000,
            0,
            packets_sent=20,
            packets_received=10,
            completed_ns=500 * MS,
            last_rx_ns=904 * MS,
        ),
    ]
    q = QueueLog("s->c")
    for d in (0, 2, 4, 6, 8):
        q.add(d * MS, d, d * 100)
    return RunResult(
        "t",
        scheme,
        "",
        1,
        1_000 * MS,
        flows,
        log,
        [q],
        drops_overflow=3,
        feedback_sent={"feedback": 4, "cnp": 1},
        recirculated_bytes=1250,
        wall_s=wall_s,
    )


def test_queue_rtt_loss_and_overheads() -> None:
    m = compute_metrics(run(), scenario()).headline()
    assert m["queue_mean_packets"] == 4.0
    assert m["queue_max_packets"] == 8.0
    assert m["queue_p99_packets"] == pytest.approx(7.92)
    # 100 packets at 2 ms one way and 10 at 4 ms: RTT = 2 x one-way delay.
    assert m["rtt_mean_ms"] == pytest.approx(2 * (100 * 2 + 10 * 4) / 110)
    assert m["loss_rate"] == pytest.approx(1 - 110 / 120)
    assert m["feedback_sent"] == 5
    assert m["drops_overflow"] == 3
    assert m["recirculation_overhead"] == pytest.approx(1250 / (110 * 125))


def test_fct_is_not_measured_while_a_flow_is_incomplete() -> None:
    m = compute_metrics(run(), scenario())
    assert m.values["fct_mean_ms"] is None
    assert m.values["incomplete_flows"] == 1.0
    assert m.detail["fct_completed_mean_ms"] == 500.0


def test_throughput_bins_cv_and_trim() -> None:
    m = compute_metrics(run(), scenario())
    assert m.series is not None
    # f0 alone: 10 packets x 125 B per 100 ms bin = 0.1 Mb/s, f1 adds one packet per bin.
    assert m.series.by_flow["f0"] == pytest.approx([0.1] * 10)
    assert m.series.total == pytest.approx([0.11] * 10)
    assert m.values["throughput_mean_mbps"] == pytest.approx(0.11)
    assert m.values["throughput_cv"] == pytest.approx(0.0, abs=1e-12)
    assert steady_window(1000, 100, 0.1)[2] == list(range(1, 9))
    assert steady_window(50, 100, 0.1)[2] == [0], "nothing left after trimming: all bins"


def test_jain_is_one_for_equal_flows_and_half_for_a_starved_one() -> None:
    equal = run()
    equal.packets = PacketLog()
    for i in range(100):
        for fid in (0, 1):
            equal.packets.add(fid, 125, i * 10 * MS, i * 10 * MS + MS, False)
    assert compute_metrics(equal, scenario()).values["jain_fairness"] == pytest.approx(1.0)
    starved = run(rate_f1=0)
    assert compute_metrics(starved, scenario()).values["jain_fairness"] == pytest.approx(0.5)


def test_relative_change() -> None:
    assert relative_change_pct(44.0, 100.0) == pytest.approx(-56.0)
    assert relative_change_pct(1.0, 0.0) is None
    assert relative_change_pct(None, 1.0) is None


@pytest.mark.parametrize(
    ("measured", "paper", "expected"),
    [
        (-60.0, -56.0, "matches or beats paper"),
        (-30.0, -56.0, "same direction, weaker"),
        (-10.0, -56.0, "same direction, much weaker"),
        (20.0, -56.0, "opposite direction"),
        (0.0, -56.0, "opposite direction"),
        (None, -56.0, "not measured"),
        (-30.0, (-50.0, -16.7), "within paper's range"),
        (-60.0, (-50.0, -16.7), "beyond paper's range"),
        (-10.0, (-50.0, -16.7), "same direction, weaker"),
        (5.0, (-50.0, -16.7), "opposite direction"),
    ],
)
def test_verdicts(measured: float | None, paper: Any, expected: str) -> None:
    assert verdict(measured, paper) == expected


def test_report_files_claims_and_determinism(tmp_path: Path) -> None:
    s = scenario(
        claims=[{"metric": "queue_max_packets", "ours": "pmqecn", "paper": {"dcqcn": -56}}]
    )
    ours = run("pmqecn", wall_s=1.0)
    base = run("dcqcn", wall_s=2.0)
    base.queues[0].depth_packets = [0, 5, 10, 20, 10]
    paths = write_report(s, [ours, base], tmp_path / "a")
    for p in (paths.csv, paths.json, paths.timing, paths.markdown, *paths.plots):
        assert p.exists(), p
    # A flow of each run is incomplete: no FCT was measured, so no FCT plot.
    assert {p.name for p in paths.plots} >= {"queue_cdf.png", "throughput.png"}
    assert "fct.png" not in {p.name for p in paths.plots}
    rows = list(csv.DictReader(paths.csv.open()))
    assert [r["scheme"] for r in rows] == ["pmqecn", "dcqcn"]
    assert float(rows[1]["queue_max_packets"]) == 20.0
    md = paths.markdown.read_text()
    # max 8 vs 20: -60 %, beyond the paper's -56 %.
    assert (
        "| queue_max_packets | pmqecn vs dcqcn | — | -56 % | -60.0 % | — | — | "
        "matches or beats paper; no none run to compare |" in md
    )
    assert "No `none` run" in md
    claims = json.loads(paths.json.read_text())["claims"]
    assert claims[0]["measured"] == pytest.approx(-60.0)
    assert "wall_s" not in paths.json.read_text()
    # Same runs, different wall-clock times: identical results.json.
    again = write_report(s, [run("pmqecn", wall_s=9.0), base], tmp_path / "b")
    assert again.json.read_bytes() == paths.json.read_bytes()
    assert again.timing.read_bytes() != paths.timing.read_bytes()


def test_queue_max_after_start_up_and_the_drops_beside_it() -> None:
    r = run()
    r.queues[0] = QueueLog("s->c")
    for t_ms, depth in ((50, 100), (300, 7), (600, 9), (950, 50)):
        r.queues[0].add(t_ms * MS, depth, 0)
    r.queues[0].drops_overflow = 4
    m = compute_metrics(r, scenario(startup_s=0.2))
    assert m.values["queue_max_packets"] == 100
    # From 200 ms to the end of the run: the 50 at 950 ms counts.
    assert m.values["queue_max_after_startup_packets"] == 50
    assert m.values["queue_drops"] == 4
    assert m.detail["queues"]["s->c"]["drops_overflow"] == 4
    # Without startup_s: the first `trim` (10 %) of the run.
    m = compute_metrics(r, scenario()).values
    assert m["queue_max_after_startup_packets"] == 50
    r.queues[0].t_ns[-1] = 90 * MS
    assert compute_metrics(r, scenario()).values["queue_max_after_startup_packets"] == 9
