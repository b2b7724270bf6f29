# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Each interval's measurement of every class: lambda_i from the class
counters, W_i from the sampled sojourn accumulators, and the standing backlog.

The accumulators have two halves (cell = epoch ++ class); egress sums into
the half `sojourn_epoch` names. Each interval the meter clears the idle
half, flips the epoch to it, and only then reads the half the last interval
summed into, which no departure writes any more: no departure is summed
after the read and lost to the clear, as one read and one clear of the same
cells lost those between the two calls."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from models.switch.pmqecn import sojourn_slot

from ..common import by_table
from ..switch import EntryWrite, RegisterWrite, Switch, Write
from . import names as n
from .config import PmqecnConfig
from .live import ClassLive
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
    packets: dict[int, int] = field(default_factory=dict)


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
        clears: list[Write] = []
        for cid in ids:
            slot = sojourn_slot(new, cid)
            clears += [
                RegisterWrite(n.SOJOURN_SUM_NS, slot, 0),
                RegisterWrite(n.SOJOURN_PKTS, slot, 0),
            ]
        # Two batches: the half is clear before the first departure reaches it.
        self.switch.write(by_table(clears))
        self.switch.write([self.epoch_write(new)])
        old, self.epoch = self.epoch, new
        return old

    def sample(
        self,
        now_s: float,
        live: dict[int, ClassLive],
        sampling_write: Callable[[int], EntryWrite],
    ) -> list[Sample]:
        """lambda_i from the class counters (delta over the interval) and W_i
        from the half of the sojourn accumulators the interval summed into."""
        ids = [c.id for c in self.config.classes]
        counted = self.switch.read_counters(n.CLASS_COUNTERS, ids)
        packets = {cid: pkts for cid, (pkts, _) in zip(ids, counted, strict=True)}
        summed = self._flip(ids)
        slots = [sojourn_slot(summed, cid) for cid in ids]
        totals = self.switch.read_registers(n.SOJOURN_SUM_NS, slots)
        counts = self.switch.read_registers(n.SOJOURN_PKTS, slots)
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
        last, self.last = self.last, _Counters(now_s, packets)
        samples = []
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
                float(self.profile.max_timedelta_ns) if saturated else w,
                rate,
                self.profile.max_timedelta_ns,
                self.config.optimizer.capacity_packets,
            )
            self.backlog[c.id] = backlog
            samples.append(Sample(c.id, delta, rate, w, backlog))
            live[c.id].sojourn_ns = w
        return samples
