"""Each interval's measurement of every class: lambda_i from the class
counters, W_i from the sampled sojourn accumulators (read and cleared in
one batch with the next interval's sampling rate), and the standing backlog."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

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

    def sample(
        self,
        now_s: float,
        live: dict[int, ClassLive],
        sampling_write: Callable[[int], EntryWrite],
    ) -> list[Sample]:
        """lambda_i from the class counters (delta over the interval) and W_i
        from the sojourn accumulators, which are read and cleared."""
        ids = [c.id for c in self.config.classes]
        counted = self.switch.read_counters(n.CLASS_COUNTERS, ids)
        packets = {cid: pkts for cid, (pkts, _) in zip(ids, counted, strict=True)}
        totals = self.switch.read_registers(n.SOJOURN_SUM_NS, ids)
        counts = self.switch.read_registers(n.SOJOURN_PKTS, ids)
        sojourn = dict(zip(ids, zip(totals, counts, strict=True), strict=True))
        taken_at = dict(self.sample_log2)
        # The next interval's k goes in with the clears, one batch, so each
        # interval's sum is taken at one k.
        clears: list[Write] = []
        for cid in ids:
            self.sample_log2[cid] = next_sample_log2(taken_at[cid], sojourn[cid][0])
            clears += [
                RegisterWrite(n.SOJOURN_SUM_NS, cid, 0),
                RegisterWrite(n.SOJOURN_PKTS, cid, 0),
            ]
            if self.sample_log2[cid] != taken_at[cid]:
                clears.append(sampling_write(cid))
        try:
            self.switch.write(by_table(clears))
        except Exception:
            self.sample_log2 = taken_at
            raise
        last, self.last = self.last, _Counters(now_s, packets)
        samples = []
        for c in self.config.classes:
            total, count = sojourn[c.id]
            summed = samples_taken(count, taken_at[c.id])
            w = total / summed if summed else 0.0
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
