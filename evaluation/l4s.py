# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Per traffic class figures of an L4S run (issue 51, RFC 9332's aim): the
scalable flows (ECT(1) senders, `cc: dctcp-l4s`) against the classic ones.

Queue delay is what each RTT sample of a flow's sender socket has above
that flow's smallest sample (its base RTT: the reverse path carries only
ACKs and queues nothing), averaged over the samples taken after the
scenario's start-up; rate is the class's goodput after the start-up. RFC
9332 aims for the scalable class's delay well below the classic class's
(here: at most a fifth) with the two classes' rates within a factor of two.
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import RunResult
from .scenario import Scenario
from .tcp import ECT1_CCS

SCALABLE = "scalable"
CLASSIC = "classic"
# RFC 9332's aim as this evaluation reads it.
MAX_DELAY_RATIO = 0.2
MAX_RATE_RATIO = 2.0


@dataclass(frozen=True)
class ClassFigures:
    flows: int
    queue_delay_ms: float
    rate_mbps: float


def class_of(cc: str) -> str:
    return SCALABLE if cc in ECT1_CCS else CLASSIC


def class_figures(run: RunResult, scenario: Scenario) -> dict[str, ClassFigures]:
    """Each class's mean queue delay and goodput after the start-up."""
    start_ns = round((scenario.startup_s or 0.0) * 1e9)
    seconds = (run.duration_ns - start_ns) / 1e9
    klass = {t.flow_id: class_of(t.cc) for t in run.tcp}
    delays: dict[str, list[int]] = {SCALABLE: [], CLASSIC: []}
    for t in run.tcp:
        if not t.rtt_ns:
            continue
        base = min(t.rtt_ns)
        delays[klass[t.flow_id]] += [
            rtt - base for at, rtt in zip(t.rtt_t_ns, t.rtt_ns, strict=True) if at >= start_ns
        ]
    bits = {SCALABLE: 0, CLASSIC: 0}
    log = run.packets
    for fid, size, recv in zip(log.flow_id, log.size, log.recv_ns, strict=True):
        if recv >= start_ns:
            bits[klass[fid]] += size * 8
    flows = {c: sum(1 for k in klass.values() if k == c) for c in (SCALABLE, CLASSIC)}
    return {
        c: ClassFigures(
            flows[c],
            sum(delays[c]) / len(delays[c]) / 1e6 if delays[c] else 0.0,
            bits[c] / seconds / 1e6,
        )
        for c in (SCALABLE, CLASSIC)
        if flows[c]
    }


def meets_rfc9332_aim(figures: dict[str, ClassFigures]) -> bool:
    """Scalable delay at most a fifth of classic's, per-flow rates within 2x."""
    s, c = figures[SCALABLE], figures[CLASSIC]
    per_flow = (s.rate_mbps / s.flows, c.rate_mbps / c.flows)
    ratio = max(per_flow) / min(per_flow) if min(per_flow) > 0 else float("inf")
    return s.queue_delay_ms <= MAX_DELAY_RATIO * c.queue_delay_ms and ratio <= MAX_RATE_RATIO
