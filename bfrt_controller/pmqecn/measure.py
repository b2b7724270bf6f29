# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Each interval's measurement of every class: lambda_i from the class's
arrivals, W_i from the sampled sojourn accumulators, and the standing backlog.

lambda_i is the change of `class_arrivals` (every pipe's wrapping count,
summed), which the pipe balance reads each cycle anyway (pipes.py): it
counts the packets `class_counters` counts, in the same branch of ingress,
so the cycle reads 512 cells fewer on a full switch than with a read of the
counters beside it (issue 48). A restarted switch counts from zero again:
push_all() forgets the counts, and the next reading is a baseline.

The accumulators have two halves, each its own (sum, departures) pair of
registers indexed by class; egress sums into the half `sojourn_epoch` names.
Each interval the meter clears the idle half, flips the epoch to it, and
only then reads the half the last interval summed into, which no departure
writes any more: no departure is summed after the read and lost to the
clear, as one read and one clear of the same cells lost those between the
two calls. A half is cleared by one request per register (RegisterClear),
not a write per cell: on a full switch the per-cell clears were 1,024
writes a cycle and most of the cycle's BF-Runtime time (issue 48)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from models import cycle_speedups

from ..common import by_table
from ..switch import EntryWrite, RegisterClear, RegisterWrite, Switch, Write
from . import names as n
from .config import PmqecnConfig
from .live import ClassLive
from .pipes import U32, Arrivals
from .sampling import next_sample_log2, samples_taken

log = logging.getLogger("tofcc.pmqecn")

U32_MAX = 0xFFFFFFFF


@dataclass(frozen=True)
class Sample:
    """One interval's measurement of one class."""

    class_id: int
    packets: int
    rate_pps: float
    mean_sojourn_ns: float
    backlog_packets: float = 0.0  # the class's queue at the end of the interval (estimate)


# A mean sojourn below this share of deq_timedelta's range is taken at its word.
_RESOLVED_SOJOURN_SHARE = 0.5


def backlog_packets(
    previous: float,
    arrived: int,
    departed: int,
    mean_sojourn_ns: float,
    rate_pps: float,
    saturation_ns: int,
    capacity_packets: int,
) -> float:
    """A class's standing queue (packets) at the end of an interval.

    Little's law gives lambda_i W_i, but W_i is the mean of deq_timedelta,
    which saturates (2^18 ns on Tofino: less than one packet time on a 10 Mb/s
    link), so it only counts where the mean sojourn sits well inside the
    field's range.  Otherwise the queue is the last estimate plus what arrived
    (ingress counter) less what left (egress sojourn count), at least
    lambda_i W_i: tail drops make that an over-estimate, so it is capped at the
    buffer (capacity_packets) and re-anchored once sojourns are resolvable.
    """
    little = rate_pps * mean_sojourn_ns * 1e-9
    if mean_sojourn_ns < _RESOLVED_SOJOURN_SHARE * saturation_ns:
        return little
    counted = max(0.0, previous + arrived - departed)
    return min(max(little, counted), float(capacity_packets))


@dataclass
class _Counters:
    time_s: float
    # By class: the counter's packets (the reference path) or the arrivals in
    # every pipe (today's).
    packets: dict[int, int] = field(default_factory=dict)
    arrivals: dict[int, tuple[int, ...]] = field(default_factory=dict)


def arrived(
    now: Mapping[int, Sequence[int]], before: Mapping[int, Sequence[int]]
) -> dict[int, int]:
    """Packets counted per class between two readings of its per-pipe
    wrapping counts (exact while each pipe counts fewer than 2^32 of them
    between the two). A class missing from `before`, or whose pipes changed
    in between, is left out."""
    ids = [cid for cid, pipes in now.items() if len(before.get(cid, ())) == len(pipes) > 0]
    if not ids:
        return {}
    # One array operation for a full switch's 512 classes x 4 pipes.
    a = np.array([now[cid] for cid in ids], dtype=np.int64)
    b = np.array([before[cid] for cid in ids], dtype=np.int64)
    return dict(zip(ids, ((a - b) % U32).sum(axis=1).tolist(), strict=True))


class ClassMeter:
    """The measurement state between intervals: the last counters, each
    class's backlog estimate and its sojourn sampling rate k."""

    def __init__(self, switch: Switch, config: PmqecnConfig) -> None:
        self.switch = switch
        self.config = config
        self.profile = switch.profile
        self.last: _Counters | None = None
        self.backlog: dict[int, float] = {}
        # k per class (sampling.py): derived from the last reading, so not
        # saved; after a restart every class starts summed whole again.
        self.sample_log2: dict[int, int] = {c.id: 0 for c in config.classes}
        # The half egress sums into (the switch's sojourn_epoch default).
        self.epoch = 0

    def epoch_write(self, epoch: int) -> EntryWrite:
        return EntryWrite(n.SOJOURN_EPOCH, {}, n.SET_SOJOURN_EPOCH, {"epoch": epoch}, op="default")

    def _flip(self, ids: list[int]) -> int:
        """Clear the idle half, then sum into it; the half just left, which
        nothing writes now."""
        new = 1 - self.epoch
        registers = (n.SOJOURN_SUM_NS[new], n.SOJOURN_PKTS[new])
        if cycle_speedups.ENABLED:
            # A batch of its own per register: a batch's last call is undone
            # by the switch if refused, an earlier one only from a read of
            # its every cell. A refused second clear leaves the first done,
            # which costs nothing: the epoch is not flipped, the half held
            # only what was read already, and the next cycle clears again.
            for register in registers:
                self.switch.write([RegisterClear(register)])
        else:
            self.switch.write(
                by_table([RegisterWrite(r, cid, 0) for cid in ids for r in registers])
            )
        # Then the flip: the half is clear before the first departure reaches it.
        self.switch.write([self.epoch_write(new)])
        old, self.epoch = self.epoch, new
        return old

    def forget_counts(self) -> None:
        """The next sample only takes a baseline (after a push: a restarted
        switch counts from zero again)."""
        self.last = None

    def sample(
        self,
        now_s: float,
        live: dict[int, ClassLive],
        sampling_write: Callable[[int], EntryWrite],
        arrivals: Arrivals,
    ) -> list[Sample]:
        """lambda_i from the classes' arrivals in every pipe (`arrivals`, read
        this cycle; delta over the interval) and W_i from the half of the
        sojourn accumulators the interval summed into."""
        ids = [c.id for c in self.config.classes]
        packets: dict[int, int] = {}
        in_pipes: dict[int, tuple[int, ...]] = {}
        if cycle_speedups.ENABLED:
            in_pipes = {cid: tuple(arrivals[cid]) for cid in ids}
        else:  # the reference path read the counters as well
            counted = self.switch.read_counters(n.CLASS_COUNTERS, ids)
            packets = {cid: pkts for cid, (pkts, _) in zip(ids, counted, strict=True)}
        summed = self._flip(ids)
        totals = self.switch.read_registers(n.SOJOURN_SUM_NS[summed], ids)
        counts = self.switch.read_registers(n.SOJOURN_PKTS[summed], ids)
        sojourn = dict(zip(ids, zip(totals, counts, strict=True), strict=True))
        taken_at = dict(self.sample_log2)
        # A new k goes in after the read: the departures of the read's few
        # milliseconds are sampled at the old k (tna/pmqecn/README.md).
        changes: list[Write] = []
        for cid in ids:
            self.sample_log2[cid] = next_sample_log2(taken_at[cid], sojourn[cid][0])
            if self.sample_log2[cid] != taken_at[cid]:
                changes.append(sampling_write(cid))
        try:
            if changes:
                self.switch.write(by_table(changes))
        except Exception:
            self.sample_log2 = taken_at
            raise
        last, self.last = self.last, _Counters(now_s, packets, in_pipes)
        moved = arrived(in_pipes, last.arrivals) if last is not None and in_pipes else {}
        samples = []
        saturation_ns = self.profile.max_timedelta_ns
        capacity = self.config.optimizer.capacity_packets
        for c in self.config.classes:
            total, count = sojourn[c.id]
            taken = samples_taken(count, taken_at[c.id])
            w = total / taken if taken else 0.0
            # >=: BF-Runtime sums the per-pipe cells, which may exceed one cell's max.
            saturated = total >= U32_MAX
            if saturated:
                log.warning(
                    "event=sojourn_saturated class=%d sample_log2=%d next_sample_log2=%d",
                    c.id,
                    taken_at[c.id],
                    self.sample_log2[c.id],
                )
            if last is None or now_s <= last.time_s:
                rate = 0.0
                delta = 0
            elif in_pipes:
                got = moved.get(c.id)
                delta = got or 0
                rate = delta / (now_s - last.time_s)
                if got is None:
                    self.backlog[c.id] = 0.0
            else:
                prev = last.packets.get(c.id, 0)
                # A counter that went backwards was reset by a switch restart.
                restarted = packets[c.id] < prev
                delta = packets[c.id] if restarted else packets[c.id] - prev
                rate = delta / (now_s - last.time_s)
                if restarted:
                    self.backlog[c.id] = 0.0
            backlog = backlog_packets(
                self.backlog.get(c.id, 0.0),
                delta,
                count,
                # A pinned sum gives only a lower bound of W_i: the backlog
                # is then counted, as for a saturated deq_timedelta.
                float(saturation_ns) if saturated else w,
                rate,
                saturation_ns,
                capacity,
            )
            self.backlog[c.id] = backlog
            samples.append(Sample(c.id, delta, rate, w, backlog))
            live[c.id].sojourn_ns = w
        return samples
