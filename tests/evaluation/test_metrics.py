# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Metrics on hand-built runs, for the cases test_metrics_and_report.py leaves
open: an uneven arrival pattern, trimmed edge bins, several receivers and
monitors, FCT by size, and the figures that have no meaning for a run."""

from __future__ import annotations

from typing import Any

import pytest

from evaluation.metrics import HEADLINE, compute_metrics, goodput_quarters
from evaluation.records import FlowRecord, PacketLog, QueueLog, RunResult
from evaluation.scenario import Scenario, parse_scenario

MS = 1_000_000
# 1250 B in a 100 ms bin is 0.1 Mb/s, so packet counts read as tenths of a Mb/s.
PKT = 1250


def scenario(**extra: Any) -> Scenario:
    raw: dict[str, Any] = {
        "name": "t",
        "duration_s": 1.0,
        "bin_s": 0.1,
        "trim": 0.1,
        "hosts": ["a", "b", "c", "d"],
        "switches": ["s"],
        "links": [{"a": h, "b": "s"} for h in ("a", "b", "c", "d")],
        "flows": [{"name": "f0", "src": "a", "dst": "c"}],
        "schemes": {"pmqecn": {}, "dcqcn": {}},
    }
    raw.update(extra)
    return parse_scenario(raw)


def flow(fid: int, dst: str = "c", size: int | None = None, **kw: Any) -> FlowRecord:
    return FlowRecord(fid, f"f{fid}", "a", dst, "C", size, kw.pop("start_ns", 0), **kw)


def result(
    flows: list[FlowRecord], log: PacketLog, queues: list[QueueLog] | None = None, **kw: Any
) -> RunResult:
    return RunResult("t", "pmqecn", "", 1, 1_000 * MS, flows, log, queues or [], **kw)


def test_cv_of_an_uneven_pattern_leaves_out_the_edge_bins() -> None:
    # Bursts of 20 packets in the first and last bin; in between, 1 and 3
    # packets in turn. trim 0.05 keeps bins 1-8 whether the window is taken
    # over the run or up to the last delivery (990 ms).
    log = PacketLog()
    counts = [20, 1, 3, 1, 3, 1, 3, 1, 3, 20]
    for b, n in enumerate(counts):
        for k in range(n):
            t = b * 100 * MS + (90 * MS if b == 9 else k * MS)
            log.add(0, PKT, t - MS if t else 0, t, False)
    r = result([flow(0, last_rx_ns=max(log.recv_ns))], log)
    m = compute_metrics(r, scenario(trim=0.05))
    assert m.series is not None
    assert m.series.total == pytest.approx([n / 10 for n in counts])
    assert m.series.bin_starts_s == pytest.approx([b / 10 for b in range(10)])
    # Steady bins 0.1, 0.3, ... : mean 0.2, population std 0.1. With the
    # edges the mean would be 0.56.
    assert m.values["throughput_mean_mbps"] == pytest.approx(0.2)
    assert m.values["throughput_cv"] == pytest.approx(0.5)


def test_steady_window_ends_at_the_last_delivery() -> None:
    # Sized flows done by 400 ms of a 1 s run: the idle tail is not part of
    # the throughput the scheme achieved (1 Mb/s), which over the whole run
    # would read 0.3 Mb/s.
    log = PacketLog()
    for i in range(40):
        log.add(0, PKT, i * 10 * MS, i * 10 * MS + 5 * MS, False)
    f = flow(0, size=40 * PKT, completed_ns=395 * MS, last_rx_ns=395 * MS)
    m = compute_metrics(result([f], log), scenario())
    assert m.values["throughput_mean_mbps"] == pytest.approx(1.0)
    assert m.values["throughput_cv"] == pytest.approx(0.0, abs=1e-12)


def test_zero_throughput_has_no_cv() -> None:
    m = compute_metrics(result([flow(0)], PacketLog()), scenario())
    assert m.values["throughput_mean_mbps"] == 0.0
    assert m.values["throughput_cv"] is None


def test_series_per_receiver_and_per_flow() -> None:
    log = PacketLog()
    for i in range(10):
        t = i * 100 * MS + 50 * MS
        log.add(0, PKT, t - MS, t, False)  # f0 -> c: 0.1 Mb/s
        log.add(1, 2 * PKT, t - MS, t, False)  # f1 -> c: 0.2 Mb/s
        log.add(2, 4 * PKT, t - MS, t, False)  # f2 -> d: 0.4 Mb/s
    flows = [flow(0), flow(1), flow(2, dst="d")]
    m = compute_metrics(result(flows, log), scenario())
    assert m.series is not None
    assert m.series.by_receiver["c"] == pytest.approx([0.3] * 10)
    assert m.series.by_receiver["d"] == pytest.approx([0.4] * 10)
    assert m.series.by_flow["f1"] == pytest.approx([0.2] * 10)
    assert m.values["throughput_mean_mbps"] == pytest.approx(0.7)
    # Throughputs 1:2:4 -> (1+2+4)^2 / (3 (1+4+16)) = 49/63.
    assert m.values["jain_fairness"] == pytest.approx(49 / 63)
    assert m.detail["flow_steady_mbps"]["f2"] == pytest.approx(0.4)


def test_first_monitor_is_the_headline_and_every_monitor_is_kept() -> None:
    q1, q2 = QueueLog("s->c"), QueueLog("s->d")
    for i, d in enumerate((1, 1, 1, 5)):
        q1.add(i * MS, d, 0)
    for i, d in enumerate((10, 30)):
        q2.add(i * MS, d, 0)
    m = compute_metrics(result([flow(0)], PacketLog(), [q1, q2]), scenario())
    assert m.values["queue_mean_packets"] == 2.0
    assert m.values["queue_max_packets"] == 5.0
    # Linear interpolation at rank 0.99 x 3 = 2.97 between 1 and 5.
    assert m.values["queue_p99_packets"] == pytest.approx(1 + 0.97 * 4)
    assert m.detail["queues"]["s->d"]["mean_packets"] == 20.0
    assert m.detail["queues"]["s->d"]["max_packets"] == 30.0
    assert m.detail["queues"]["s->c"]["samples"] == 4


def test_rtt_p99_doubles_the_one_way_delay() -> None:
    log = PacketLog()
    for i, delay_ms in enumerate((1, 1, 1, 3)):
        log.add(0, PKT, i * 10 * MS, i * 10 * MS + delay_ms * MS, False)
    m = compute_metrics(result([flow(0)], log), scenario()).values
    assert m["rtt_mean_ms"] == pytest.approx(2 * 1.5)
    assert m["rtt_p99_ms"] == pytest.approx(2 * (1 + 0.97 * 2))


def test_fct_over_sized_flows_and_by_size() -> None:
    flows = [
        flow(0, size=1000, start_ns=100 * MS, completed_ns=110 * MS),
        flow(1, size=1000, start_ns=0, completed_ns=20 * MS),
        flow(2, size=5000, start_ns=0, completed_ns=100 * MS),
        flow(4),  # long-lived: neither an FCT nor incomplete
    ]
    m = compute_metrics(result(flows, PacketLog()), scenario())
    assert m.values["fct_mean_ms"] == pytest.approx(130 / 3)
    # FCTs 10, 20, 100 ms: rank 1.98 lies between 20 and 100.
    assert m.values["fct_p99_ms"] == pytest.approx(20 + 0.98 * 80)
    assert m.values["incomplete_flows"] == 0.0
    assert m.values["sized_flows"] == 3.0
    by_size = m.detail["fct_by_size"]
    assert by_size["1000"] == pytest.approx({"mean_ms": 15.0, "p99_ms": 19.9, "completed": 2.0})
    assert by_size["5000"] == pytest.approx({"mean_ms": 100.0, "p99_ms": 100.0, "completed": 1.0})


def test_fct_is_not_measured_when_a_flow_is_incomplete() -> None:
    # A mean over the finished flows would favour the scheme that left its
    # slowest flow unfinished: no mean, no p99, and the count says why.
    flows = [
        flow(0, size=1000, start_ns=0, completed_ns=10 * MS),
        flow(1, size=5000, start_ns=0, completed_ns=100 * MS),
        flow(2, size=5000),  # never completed
    ]
    m = compute_metrics(result(flows, PacketLog()), scenario())
    assert m.values["fct_mean_ms"] is None
    assert m.values["fct_p99_ms"] is None
    assert m.values["incomplete_flows"] == 1.0
    assert m.values["sized_flows"] == 3.0
    assert m.detail["fct_completed_mean_ms"] == pytest.approx(55.0)
    by_size = m.detail["fct_by_size"]
    assert by_size["1000"]["mean_ms"] == pytest.approx(10.0)
    assert by_size["5000"]["mean_ms"] is None and by_size["5000"]["completed"] == 1.0


def test_figures_without_meaning_are_none() -> None:
    m = compute_metrics(result([flow(0)], PacketLog()), scenario()).headline()
    assert list(m) == list(HEADLINE)
    for key in (
        "queue_mean_packets",
        "queue_p99_packets",
        "queue_max_packets",
        "rtt_mean_ms",
        "fct_mean_ms",
        "incomplete_flows",
        "jain_fairness",  # one flow
        "loss_rate",  # nothing sent
        "recirculation_overhead",  # nothing delivered
    ):
        assert m[key] is None, key


def test_every_flow_starved_has_no_fairness_and_loss_counts_every_flow() -> None:
    flows = [
        flow(0, packets_sent=30, packets_received=0),
        flow(1, packets_sent=10, packets_received=10),
    ]
    m = compute_metrics(result(flows, PacketLog(), feedback_sent={"cnp": 2, "fake": 3}), scenario())
    assert m.values["jain_fairness"] is None
    assert m.values["loss_rate"] == pytest.approx(0.75)
    assert m.values["feedback_sent"] == 5.0
    assert m.detail["feedback_by_kind"] == {"cnp": 2, "fake": 3}


def test_out_of_order_arrivals_per_flow_and_in_all() -> None:
    """Reordering is read from each flow's count (packets delivered after
    one sent later), in all and as a fraction of the packets delivered."""
    flows = [
        flow(0, packets_sent=10, packets_received=10, out_of_order=3),
        flow(1, packets_sent=10, packets_received=10),
    ]
    m = compute_metrics(result(flows, PacketLog(), recirculation_drops=2), scenario())
    assert m.values["out_of_order"] == 3.0
    assert m.values["out_of_order_fraction"] == pytest.approx(3 / 20)
    assert m.detail["out_of_order_by_flow"] == {"f0": 3, "f1": 0}
    assert m.values["recirculation_drops"] == 2.0


def _classes_scenario(rates: tuple[str, str, str]) -> Scenario:
    """Three ON/OFF senders, a to c, b to c, d to c, at the given rates."""
    return scenario(
        transport="tcp",
        flows=[
            {"name": f"f{i}", "src": src, "dst": "c", "app": "onoff", "rate": rate}
            for i, (src, rate) in enumerate(zip(("a", "b", "d"), rates, strict=True))
        ],
        schemes={"p4spie": {}},
    )


def test_loss_by_sender_class_and_sketch_drops() -> None:
    """Seed 002's classes: the flows offering the lowest rate are small, the
    highest large (a middle one is in neither). Loss per class is packets
    sent but never received over the class, in percent; sketch_drops is
    S-PIE's large-flow drop counter summed over the switches."""
    s = _classes_scenario(("1Mbps", "50Mbps", "10Mbps"))
    flows = [
        flow(0, packets_sent=200, packets_received=198),
        flow(1, packets_sent=1000, packets_received=900),
        flow(2, packets_sent=500, packets_received=250),
    ]
    r = result(flows, PacketLog(), scheme_counters={"sketch_drops": 70, "random_drops": 3})
    v = compute_metrics(r, s).values
    assert v["small_flow_loss_pct"] == pytest.approx(1.0)
    assert v["large_flow_loss_pct"] == pytest.approx(10.0)
    assert v["sketch_drops"] == 70
    assert {"small_flow_loss_pct", "large_flow_loss_pct", "sketch_drops"} <= set(HEADLINE)


def test_no_classes_when_every_flow_offers_the_same_and_no_sketch_without_one() -> None:
    s = _classes_scenario(("10Mbps", "10Mbps", "10Mbps"))
    flows = [flow(i, packets_sent=10, packets_received=9) for i in range(3)]
    v = compute_metrics(result(flows, PacketLog()), s).values
    assert v["small_flow_loss_pct"] is None and v["large_flow_loss_pct"] is None
    assert v["sketch_drops"] is None


def test_flows_are_cut_into_quarters_by_goodput() -> None:
    """Issue 47's other reading of small: each quarter of the flows ranked by
    what they got (ties in flow order), lowest first, with its loss and its
    count of the scenario's small senders."""
    flows = [
        flow(i, packets_sent=100, packets_received=100 - lost)
        for i, lost in enumerate((0, 10, 20, 30, 40, 50, 60, 70))
    ]
    run = result(flows, PacketLog())
    # f7 got least, then f6, ...; f0 and f1 tie with f2 at the top.
    got = [5.0, 5.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.5]
    q = goodput_quarters(run, got, small={6, 7, 0})
    assert q is not None and list(q) == ["1", "2", "3", "4"]
    assert q["1"] == {"loss_pct": pytest.approx(65.0), "small_flows": 2.0}  # f7, f6
    assert q["2"] == {"loss_pct": pytest.approx(45.0), "small_flows": 0.0}  # f5, f4
    assert q["3"] == {"loss_pct": pytest.approx(15.0), "small_flows": 1.0}  # f3, f0
    assert q["4"] == {"loss_pct": pytest.approx(15.0), "small_flows": 0.0}  # f1, f2
    assert goodput_quarters(result(flows[:3], PacketLog()), got[:3], small=set()) is None
