# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Headline figures of one run, computed from its raw records.

Definitions follow the papers where they say how they measured:
- queue: the depth each arriving packet saw at the first monitored port
  (seed 000 reads it from INT on every packet), so statistics are
  packet-weighted, not time-weighted; its maximum over the whole run and
  after the scenario's start-up (`startup_s`), each beside the packets the
  port's full buffer dropped (a full buffer caps the maximum: read them
  together);
- RTT: twice the one-way delay of each delivered data packet, exactly seed
  000's estimate ("doubling this arrival delay"); with `transport: tcp`,
  every RTT sample the sender sockets took (evaluation/tcp.py);
- with `transport: tcp`, throughput is goodput (bytes delivered to the
  receiving application), loss counts data segments (retransmissions
  included) sent and received, and `detail["tcp"]` gives per flow its
  congestion control, retransmissions, ECN-Echo ACKs and mean RTT;
- throughput and its coefficient of variation: delivered bytes binned every
  `bin_s`, leaving out the first and last `trim` of the active period (run
  start to the last delivery) as seed 000 does with its unsteady start and
  end;
- FCT: first packet sent to last byte delivered, for sized flows; mean and
  p99 are not measured (None) when any sized flow did not complete, since
  a mean over the finished ones favours the scheme that left the slow ones
  unfinished; `incomplete_flows` says how many;
- Jain's index over the flows' steady-state throughputs (starved flows count);
- out of order: data packets delivered after one their sender sent later
  (UDP senders: a sequence number below the flow's highest delivered), per
  flow and in all, and as a fraction of the packets delivered;
- recirculation drops: frames a full recirculation port refused (BFCC: each
  a fake's original, i.e. lost data, or a copy of backpressure).
- loss by sender class (seed 002's Scenario 1 has small senders at 1 Mb/s
  and large ones at 50 Mb/s): the flows offering the scenario's lowest
  rate are small, those offering its highest are large (an ON/OFF flow
  offers its rate while ON, a bulk one its access link's rate times its
  load); with one offered rate there are no classes (None). Loss is data
  packets (segments, retransmissions included) sent but never received,
  summed over the class;
- `sketch_drops`: the packets S-PIE dropped as its sketch's large flows
  (`large_flow_drops`, every port of every switch); None for a scheme
  without a sketch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .records import RunResult
from .scenario import Scenario, parse_rate
from .topology import Topology
from .workloads import LARGE_BYTES, SMALL_BYTES

HEADLINE = (
    "queue_mean_packets",
    "queue_p99_packets",
    "queue_max_packets",
    "queue_max_after_startup_packets",
    "queue_drops",
    "rtt_mean_ms",
    "rtt_p99_ms",
    "throughput_mean_mbps",
    "throughput_cv",
    "fct_mean_ms",
    "fct_p99_ms",
    "incomplete_flows",
    "sized_flows",
    "jain_fairness",
    "drops_overflow",
    "drops_active",
    "loss_rate",
    "small_flow_loss_pct",
    "large_flow_loss_pct",
    "sketch_drops",
    "feedback_sent",
    "recirculation_overhead",
    "recirculation_drops",
    "out_of_order",
    "out_of_order_fraction",
    "pfc_pauses_sent",
)


@dataclass(frozen=True)
class Series:
    """Binned delivered rate (Mb/s) over the whole run."""

    bin_starts_s: list[float]
    by_receiver: dict[str, list[float]]
    by_flow: dict[str, list[float]]
    total: list[float]


@dataclass(frozen=True)
class Metrics:
    values: dict[str, float | None]
    detail: dict[str, Any] = field(default_factory=dict)
    series: Series | None = None

    def headline(self) -> dict[str, float | None]:
        return {k: self.values.get(k) for k in HEADLINE}


def _f(x: float | np.floating[Any] | None) -> float | None:
    return None if x is None else float(x)


def jain_index(xs: Sequence[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when every x is
    equal, 1/n when one has everything. None where it is undefined (no
    values, or every one zero). The one implementation: the run's headline
    figure, its fairness over time and scripts/soak.py all call it."""
    square_sum = math.fsum(x * x for x in xs)
    if not xs or square_sum == 0:
        return None
    return math.fsum(xs) ** 2 / (len(xs) * square_sum)


def relative_change_pct(ours: float | None, base: float | None) -> float | None:
    """100 (ours - base) / base; None when it has no meaning."""
    if ours is None or base is None or base == 0:
        return None
    return 100.0 * (ours - base) / base


def steady_window(duration_ns: int, bin_ns: int, trim: float) -> tuple[int, int, list[int]]:
    """(start, end, indices of the bins inside it); all bins if trimming leaves none."""
    n_bins = max(1, -(-duration_ns // bin_ns))
    lo, hi = trim * duration_ns, (1 - trim) * duration_ns
    inside = [i for i in range(n_bins) if i * bin_ns >= lo and (i + 1) * bin_ns <= hi]
    if not inside:
        inside = list(range(n_bins))
    return inside[0] * bin_ns, min(duration_ns, (inside[-1] + 1) * bin_ns), inside


def offered_bps(scenario: Scenario) -> list[float]:
    """Each flow's offered rate: an ON/OFF flow's rate while ON, a bulk
    flow's access link rate times its load."""
    topo: Topology | None = None
    out = []
    for f in scenario.flows:
        if f.rate is not None:
            out.append(float(parse_rate(f.rate)))
            continue
        topo = topo or Topology(scenario)
        out.append(topo.access_rate(f.src) * f.load)
    return out


def flow_classes(scenario: Scenario) -> tuple[list[int], list[int]] | None:
    """(small, large) flow indices: the flows offering the lowest rate and
    those offering the highest; None when every flow offers the same."""
    rates = offered_bps(scenario)
    if not rates or min(rates) == max(rates):
        return None
    low, high = min(rates), max(rates)
    return (
        [i for i, r in enumerate(rates) if r == low],
        [i for i, r in enumerate(rates) if r == high],
    )


def goodput_quarters(
    run: RunResult, flow_tput: list[float], small: set[int]
) -> dict[str, dict[str, float | None]] | None:
    """The flows ranked by steady goodput (ties in flow order) and cut into
    four quarters, lowest first: each quarter's loss (as class_loss_pct) and
    how many of its flows are the scenario's small senders. The other
    reading of "small" than the offered rate: flows below the fair share
    (issue 47); None with fewer than four flows."""
    n = len(run.flows)
    if n < 4:
        return None
    ranked = sorted(range(n), key=lambda i: (flow_tput[i], run.flows[i].flow_id))
    out: dict[str, dict[str, float | None]] = {}
    for q in range(4):
        part = [run.flows[i].flow_id for i in ranked[q * n // 4 : (q + 1) * n // 4]]
        out[str(q + 1)] = {
            "loss_pct": class_loss_pct(run, part),
            "small_flows": float(sum(1 for f in part if f in small)),
        }
    return out


def class_loss_pct(run: RunResult, members: list[int]) -> float | None:
    """100 x packets sent but never received / sent, over `members`."""
    flows = [f for f in run.flows if f.flow_id in set(members)]
    sent = sum(f.packets_sent for f in flows)
    received = sum(f.packets_received for f in flows)
    return 100.0 * (sent - received) / sent if sent else None


def _l4s_classes(run: RunResult, scenario: Scenario) -> dict[str, dict[str, float]] | None:
    """RFC 9332's per-class figures (evaluation/l4s.py) for a run whose TCP
    senders include scalable and classic ones, kept with the results so the
    docs' L4S table is generated from them; None for any other run."""
    from .l4s import CLASSIC, SCALABLE, class_figures, class_of

    if {class_of(t.cc) for t in run.tcp} != {SCALABLE, CLASSIC}:
        return None
    return {
        c: {"flows": float(f.flows), "queue_delay_ms": f.queue_delay_ms, "rate_mbps": f.rate_mbps}
        for c, f in class_figures(run, scenario).items()
    }


def compute_metrics(run: RunResult, scenario: Scenario) -> Metrics:
    v: dict[str, float | None] = {}
    detail: dict[str, Any] = {}

    # Queue.
    startup_s = scenario.startup_s
    startup_ns = startup_s * 1e9 if startup_s is not None else scenario.trim * run.duration_ns
    queues = {}
    for q in run.queues:
        d = np.asarray(q.depth_packets, dtype=float)
        after = d[np.asarray(q.t_ns) >= startup_ns] if len(d) else d
        queues[q.where] = {
            "mean_packets": _f(d.mean()) if len(d) else None,
            "p99_packets": _f(np.percentile(d, 99)) if len(d) else None,
            "max_packets": _f(d.max()) if len(d) else None,
            "max_after_startup_packets": _f(after.max()) if len(after) else None,
            "drops_overflow": float(q.drops_overflow),
            "samples": len(d),
        }
    detail["queues"] = queues
    detail["startup_s"] = startup_ns / 1e9
    first = queues[run.queues[0].where] if run.queues else {}
    v["queue_mean_packets"] = first.get("mean_packets")
    v["queue_p99_packets"] = first.get("p99_packets")
    v["queue_max_packets"] = first.get("max_packets")
    v["queue_max_after_startup_packets"] = first.get("max_after_startup_packets")
    v["queue_drops"] = first.get("drops_overflow")

    # RTT (2 x one-way delay; TCP: the sockets' samples).
    names_by_id = {f.flow_id: f.name for f in run.flows}
    p = run.packets
    recv = np.asarray(p.recv_ns, dtype=np.int64)
    sent = np.asarray(p.sent_ns, dtype=np.int64)
    size = np.asarray(p.size, dtype=np.int64)
    fid = np.asarray(p.flow_id, dtype=np.int64)
    rtt_ms = 2.0 * (recv - sent) / 1e6
    if run.tcp:
        rtt_ms = np.asarray([x for t in run.tcp for x in t.rtt_ns], dtype=float) / 1e6
        detail["tcp"] = {
            names_by_id[t.flow_id]: {
                "cc": t.cc,
                "ecn": t.ecn,
                "segments_sent": t.segments_sent,
                "retransmissions": t.retransmissions,
                "ece_acks": t.ece_acks,
                "rtt_samples": len(t.rtt_ns),
                "rtt_mean_ms": _f(np.mean(t.rtt_ns) / 1e6) if t.rtt_ns else None,
            }
            for t in run.tcp
        }
    v["rtt_mean_ms"] = _f(rtt_ms.mean()) if len(rtt_ms) else None
    v["rtt_p99_ms"] = _f(np.percentile(rtt_ms, 99)) if len(rtt_ms) else None

    # Throughput.
    bin_ns = max(1, round(scenario.bin_s * 1e9))
    n_bins = max(1, -(-run.duration_ns // bin_ns))
    idx = np.minimum(recv // bin_ns, n_bins - 1) if len(recv) else np.zeros(0, dtype=np.int64)

    def binned(mask: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
        w = size if mask is None else size * mask
        return np.bincount(idx, weights=w, minlength=n_bins) * 8 / (bin_ns / 1e9) / 1e6

    total = binned()
    # Sized flows may all finish long before the run ends: the idle tail is
    # not part of the throughput the scheme achieved.
    active_ns = max((f.last_rx_ns for f in run.flows if f.last_rx_ns), default=run.duration_ns)
    lo_ns, hi_ns, steady = steady_window(min(active_ns, run.duration_ns), bin_ns, scenario.trim)
    st = total[steady]
    v["throughput_mean_mbps"] = _f(st.mean())
    v["throughput_cv"] = _f(st.std() / st.mean()) if st.mean() > 0 else None
    names = {f.flow_id: f.name for f in run.flows}
    by_flow = {names[f.flow_id]: binned(fid == f.flow_id).tolist() for f in run.flows}
    receivers: dict[str, list[int]] = {}
    for f in run.flows:
        receivers.setdefault(f.dst, []).append(f.flow_id)
    by_receiver = {r: binned(np.isin(fid, ids)).tolist() for r, ids in receivers.items()}
    series = Series(
        [i * scenario.bin_s for i in range(n_bins)], by_receiver, by_flow, total.tolist()
    )

    # FCT.
    sized = [f for f in run.flows if f.size_bytes is not None]
    fcts = np.asarray([f.fct_ns for f in sized if f.fct_ns is not None], dtype=float) / 1e6
    incomplete = sum(1 for f in sized if f.completed_ns is None)
    all_done = bool(sized) and incomplete == 0
    v["fct_mean_ms"] = _f(fcts.mean()) if all_done else None
    v["fct_p99_ms"] = _f(np.percentile(fcts, 99)) if all_done else None
    v["incomplete_flows"] = float(incomplete) if sized else None
    v["sized_flows"] = float(len(sized)) if sized else None
    # Over the flows that did finish: for reading, never for a comparison.
    detail["fct_completed_mean_ms"] = _f(fcts.mean()) if len(fcts) else None
    by_size: dict[str, dict[str, float | None]] = {}
    for sz in sorted({f.size_bytes for f in sized if f.size_bytes is not None}):
        these = np.asarray(
            [f.fct_ns for f in sized if f.size_bytes == sz and f.fct_ns is not None], dtype=float
        )
        done = len(these) == sum(1 for f in sized if f.size_bytes == sz)
        by_size[str(sz)] = {
            "mean_ms": _f(these.mean() / 1e6) if done else None,
            "p99_ms": _f(np.percentile(these, 99) / 1e6) if done else None,
            "completed": float(len(these)),
        }
    detail["fct_by_size"] = by_size
    # Seed 004's classes: small (< 100 KB), medium, large (> 10 MB).
    classes: dict[str, dict[str, float | None]] = {}
    for label, lo, hi in (
        ("small", 0, SMALL_BYTES),
        ("medium", SMALL_BYTES, LARGE_BYTES + 1),
        ("large", LARGE_BYTES + 1, None),
    ):
        members = [
            f
            for f in sized
            if f.size_bytes is not None and f.size_bytes >= lo and (hi is None or f.size_bytes < hi)
        ]
        these = np.asarray([f.fct_ns for f in members if f.fct_ns is not None], dtype=float)
        classes[label] = {
            "flows": float(len(members)),
            "completed": float(len(these)),
            "mean_ms": _f(these.mean() / 1e6) if len(these) else None,
            "p99_ms": _f(np.percentile(these, 99) / 1e6) if len(these) else None,
        }
    detail["fct_by_class"] = classes

    # Fairness over the steady window.
    window_s = (hi_ns - lo_ns) / 1e9
    in_win = (recv >= lo_ns) & (recv < hi_ns)
    flow_tput = [float(size[in_win & (fid == f.flow_id)].sum()) * 8 / window_s for f in run.flows]
    detail["flow_steady_mbps"] = {
        f.name: t / 1e6 for f, t in zip(run.flows, flow_tput, strict=True)
    }
    # One flow is fair to itself by definition: no figure rather than 1.
    v["jain_fairness"] = jain_index(flow_tput) if len(flow_tput) >= 2 else None

    # Fairness of what each flow got from the start up to each time asked for.
    jain_at: dict[str, float | None] = {}
    for t_s in scenario.fairness_at_s:
        got = [float(size[(recv < t_s * 1e9) & (fid == f.flow_id)].sum()) for f in run.flows]
        jain_at[f"{t_s:g}"] = jain_index(got) if len(got) >= 2 else None
    detail["jain_at"] = jain_at

    # Losses and signalling.
    v["drops_overflow"] = float(run.drops_overflow)
    v["drops_active"] = float(run.drops_active)
    sent_pkts = sum(f.packets_sent for f in run.flows)
    recv_pkts = sum(f.packets_received for f in run.flows)
    v["loss_rate"] = 1.0 - recv_pkts / sent_pkts if sent_pkts else None
    classes_ = flow_classes(scenario)
    v["small_flow_loss_pct"] = class_loss_pct(run, classes_[0]) if classes_ else None
    v["large_flow_loss_pct"] = class_loss_pct(run, classes_[1]) if classes_ else None
    if classes_:
        quarters = goodput_quarters(run, flow_tput, set(classes_[0]))
        if quarters is not None:
            detail["goodput_quarter"] = quarters
    sketch = run.scheme_counters.get("sketch_drops")
    v["sketch_drops"] = None if sketch is None else float(sketch)
    detail["scheme_counters"] = dict(run.scheme_counters)
    l4s = _l4s_classes(run, scenario)
    if l4s is not None:
        detail["l4s"] = l4s
    v["feedback_sent"] = float(sum(run.feedback_sent.values()))
    detail["feedback_by_kind"] = dict(run.feedback_sent)
    # PFC (802.1Qbb): XOFF frames the switches sent (refreshes included),
    # per port, with the resumes and what each port or host received.
    v["pfc_pauses_sent"] = float(sum(run.pfc_pauses_sent.values()))
    detail["pfc"] = {
        "pauses_sent": dict(run.pfc_pauses_sent),
        "resumes_sent": dict(run.pfc_resumes_sent),
        "pauses_received": dict(run.pfc_pauses_received),
    }
    delivered = float(size.sum())
    v["recirculation_overhead"] = run.recirculated_bytes / delivered if delivered else None
    v["recirculation_drops"] = float(run.recirculation_drops)
    detail["recirculation_skips"] = run.recirculation_skips
    # Reordering, per flow (TCP flows are not counted: their segments are
    # reassembled by ns-3's stack; see `tcp` for retransmissions).
    if run.tcp:
        v["out_of_order"] = v["out_of_order_fraction"] = None
    else:
        ooo = sum(f.out_of_order for f in run.flows)
        v["out_of_order"] = float(ooo)
        v["out_of_order_fraction"] = ooo / recv_pkts if recv_pkts else None
        detail["out_of_order_by_flow"] = {f.name: f.out_of_order for f in run.flows}
    return Metrics(v, detail, series)
