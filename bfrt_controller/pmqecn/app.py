# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PMQECN on a switch: push the intended state, measure, optimise, re-apply.

The app owns the *intended* state (config plus what the optimiser or an
operator changed since). Every change is validated whole, then written as
one batch; after a switch restart the whole intended state is pushed again.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import cache
from typing import Any

from models import cycle_speedups
from models.switch.core import Match

from ..common import (
    IntendedStateApp,
    by_table,
    check_chip,
    host_feedback_writes,
    ternary,
)
from ..errors import ConfigError
from ..logs import logfmt_value
from ..switch import EntryWrite, Switch, TmQueueWrite, Write
from ..validation import parse_model
from . import names as n
from . import shares
from .config import (
    ClassSpec,
    PmqecnConfig,
    check_against,
    feedback_interval_ticks,
    max_weight,
    weight_refusal,
)
from .drain import exp_entries, log_entries, rate_log2_q7
from .live import ClassLive, SavedClass
from .measure import ClassMeter, Sample
from .pipes import Arrivals, PipeBalance, share_of
from .sampling import sample_mask
from .status import status_rows

log = logging.getLogger("tofcc.pmqecn")
# A class id as live_state writes it (str(id)).
_CLASS_KEY = re.compile(r"[1-9][0-9]{0,9}")

U32_MAX = 0xFFFFFFFF


@dataclass
class Change:
    class_id: int
    what: str
    old: int
    new: int
    why: str


# DWRR weight of the egress ports' queues that carry no class: the least the
# TM takes, so those queues get the smallest share and the classes' shares
# stay what the optimiser chose. Left at the power-on 1023 (tm_api_sch.c line
# 64), one such queue filling would take 98 % of a port from classes weighted
# 1-16 while the virtual queues drained at the classes' shares.
OTHER_QUEUE_WEIGHT = 1


@cache
def drain_writes(mantissa_bits: int) -> tuple[Write, ...]:
    """The drain tables' entries (thousands, the same for every switch and
    push): made once per process, as drain.py makes their values."""
    writes: list[Write] = [
        EntryWrite(
            n.VQ_LOG_ELAPSED,
            {n.K_ELAPSED_TICKS: Match(e.elapsed_value, mask=e.elapsed_mask)},
            n.LOG_ELAPSED,
            {"log_elapsed_q7": e.log_elapsed_q7},
            priority=1,
        )
        for e in log_entries(mantissa_bits)
    ]
    writes += [
        EntryWrite(n.VQ_EXP_DRAIN, {n.K_LOG_DRAIN: Match(s)}, n.DRAIN, {"drain_bytes": d})
        for s, d in exp_entries()
    ]
    return tuple(writes)


class PmqecnApp(IntendedStateApp):
    def __init__(self, switch: Switch, config: PmqecnConfig) -> None:
        check_chip(config.chip, switch.profile)
        check_against(config, switch.profile)
        self.switch = switch
        self.config = config
        self.live: dict[int, ClassLive] = {
            c.id: ClassLive(c.threshold_cells, c.weight, c.target_rate_pps) for c in config.classes
        }
        self.unchanged_because: str | None = None
        # Counters, sojourn sums and k per class (sampling.py): measure.py.
        self.meter = ClassMeter(switch, config)
        # Each ingress pipe's share of each class's drain: pipes.py.
        self.pipes = PipeBalance([c.id for c in config.classes])

    # ---- intended state --------------------------------------------
    def _class_writes(
        self, c: ClassSpec, port_weights: dict[int | None, int] | None = None
    ) -> list[Write]:
        live = self.live[c.id]
        key: dict[str, Match] = {}
        if c.match.src is not None:
            key[n.K_SRC_ADDR] = ternary(c.match.src)
        if c.match.dst is not None:
            key[n.K_DST_ADDR] = ternary(c.match.dst)
        if c.match.dscp is not None:
            key[n.K_DSCP] = Match(c.match.dscp, mask=0x3F)
        if c.match.protocol is not None:
            key[n.K_PROTOCOL] = Match(c.match.protocol, mask=0xFF)
        writes: list[Write] = [
            EntryWrite(
                n.CLASSIFY,
                key,
                n.SET_CLASS,
                {"class_id": c.id, "vq_id": c.vq, "qid": c.queue},
                priority=c.priority,
            ),
            *self._threshold_writes(c, port_weights),
            EntryWrite(
                n.CLASS_RATES,
                {n.K_CLASS_ID: Match(c.id)},
                n.SET_RATES,
                {"rate": min(live.rate_pps, U32_MAX), "target_rate": live.target_rate_pps},
            ),
        ]
        writes.extend(self._weight_writes(c))
        writes.append(self._sampling_write(c.id))
        return writes

    def _sampling_write(self, class_id: int) -> EntryWrite:
        return EntryWrite(
            n.SOJOURN_SAMPLING,
            {n.K_CLASS_ID: Match(class_id)},
            n.SET_SOJOURN_SAMPLING,
            {"sample_mask": sample_mask(self.meter.sample_log2[class_id])},
        )

    def _threshold_writes(
        self, c: ClassSpec, port_weights: dict[int | None, int] | None = None
    ) -> list[EntryWrite]:
        """The class's ecn_threshold entry in each ingress pipe: the same K_i
        and feedback interval, the drain at the pipe's share (pipes.py)."""
        drain = self.drain_rate_bytes_per_s(c, port_weights)
        return [
            EntryWrite(
                n.ECN_THRESHOLD,
                {n.K_CLASS_ID: Match(c.id), n.K_INGRESS_PIPE: Match(pipe)},
                n.SET_THRESHOLD,
                {
                    # K_i is kept in cells (the optimiser's and operator's
                    # unit); the virtual queue counts bytes.
                    "threshold_bytes": self.live[c.id].threshold_cells * self.profile.cell_bytes,
                    "mark_original": int(c.mark_original),
                    # The virtual queue's drain, in the log domain (drain.py).
                    "rate_log2_q7": rate_log2_q7(share_of(drain, units)),
                    "feedback_interval_ticks": feedback_interval_ticks(c.feedback_interval_us),
                },
            )
            for pipe, units in enumerate(self.pipes.shares[c.id])
        ]

    def _weight_writes(self, c: ClassSpec) -> list[Write]:
        sched = self.config.scheduling
        weight = self.live[c.id].weight
        if sched.mode == "p4_wrr":
            return [
                EntryWrite(
                    n.VQ_WEIGHT,
                    {n.K_VQ_ID: Match(c.vq)},
                    n.WRR,
                    {"weight": weight, "last_level": len(sched.level_queues) - 1},
                )
            ]
        return [TmQueueWrite(port, c.queue, weight) for port in sched.egress_ports]

    def drain_rate_bytes_per_s(
        self, c: ClassSpec, port_weights: dict[int | None, int] | None = None
    ) -> int:
        """mu_i* as the data plane drains it (shares.py)."""
        return shares.drain_rate_bytes_per_s(self.config, self.live, c, port_weights)

    def _port_weights(self) -> dict[int | None, int]:
        return shares.port_weights(self.config, self.live)

    def _other_queues(self) -> list[int]:
        """The TM queues of the egress ports that carry no class (tm_dwrr)."""
        sched = self.config.scheduling
        if sched.mode != "tm_dwrr" or not sched.egress_ports:
            return []
        used = {c.queue for c in self.config.classes}
        return [q for q in range(self.switch.profile.min_queues_per_port) if q not in used]

    def drain_table_writes(self) -> list[Write]:
        """The two drain tables every class shares (drain.py); they hold the
        same entries whatever the rates, so only a push writes them."""
        return list(drain_writes(self.config.virtual_queue.drain_mantissa_bits))

    def dynamic_writes(self) -> list[Write]:
        cfg = self.config
        writes = host_feedback_writes(
            cfg.ports,
            cfg.routes,
            cfg.trusted_ports,
            cfg.source_bindings,
            # an ingress mirror of the arriving packet
            mirror_direction="INGRESS",
            truncate_bytes=n.FEEDBACK_TRUNCATE_BYTES,
            session_table=n.FEEDBACK_SESSION,
            set_session=n.SET_FEEDBACK_SESSION,
        )
        if cfg.scheduling.mode == "p4_wrr":
            levels = cfg.scheduling.level_queues
            for level, qid in enumerate(levels):
                writes.append(
                    EntryWrite(
                        n.WRR_LEVEL_QUEUE,
                        {n.K_WRR_LEVEL: Match(level)},
                        n.SET_PRIORITY_QUEUE,
                        {"qid": qid},
                    )
                )
                # The emulation is WRR only if the TM serves level 0 strictly first.
                for port in cfg.scheduling.egress_ports:
                    writes.append(TmQueueWrite(port, qid, max_priority=len(levels) - 1 - level))
        for port in cfg.scheduling.egress_ports:
            # Power-on weight is 1023 (open-p4studio tm_api_sch.c line 64):
            # left there, an idle-class queue that fills would take most of
            # the port from classes weighted 1-16, which the drain would not see.
            writes.extend(TmQueueWrite(port, q, OTHER_QUEUE_WEIGHT) for q in self._other_queues())
        port_weights = self._port_weights()
        for c in cfg.classes:
            writes.extend(self._class_writes(c, port_weights))
        return by_table(writes)

    def intended_writes(self) -> list[Write]:
        return by_table(self.dynamic_writes() + self.drain_table_writes())

    def static_tables(self) -> frozenset[str]:
        return frozenset((n.VQ_LOG_ELAPSED, n.VQ_EXP_DRAIN))

    def push_all(self) -> None:
        super().push_all()
        # A restarted switch counts arrivals from zero (the next cycle only
        # takes a baseline) and sums W_i into half 0. The epoch is not
        # intended state: one left by an earlier controller is set right by
        # the next flip, whose read is then the start's baseline (measure.py).
        self.pipes.forget_counts()
        self.meter.forget_counts()
        self.meter.epoch = 0

    def live_state(self) -> dict[str, Any]:
        return {str(cid): asdict(live) for cid, live in self.live.items()}

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        """Validate every saved class first (a corrupt state file is an error
        naming the field, never half-restored), then take them all."""
        restored: dict[int, ClassLive] = {}
        for key, values in state.items():
            # As live_state writes it: "007" is not class 7's key.
            cid = int(key) if isinstance(key, str) and _CLASS_KEY.fullmatch(key) else None
            if cid is None or cid not in self.live:
                raise ConfigError(
                    f"{source}.{key}", f"not a class id of the config (known: {sorted(self.live)})"
                )
            saved = parse_model(SavedClass, values, f"{source}.{key}")
            self._check_threshold(f"{source}.{key}.threshold_cells", saved.threshold_cells)
            if saved.weight > max_weight(self.config):
                raise ConfigError(
                    f"{source}.{key}.weight", weight_refusal(self.config, saved.weight)
                )
            restored[cid] = ClassLive(**saved.model_dump())
        self.live.update(restored)

    # ---- operator changes ------------------------------------------
    def _check_threshold(self, field_name: str, cells: int) -> None:
        if isinstance(cells, bool) or not isinstance(cells, int) or cells < 0:
            raise ConfigError(field_name, f"must be a non-negative integer, got {cells!r}")
        if cells > self.profile.max_qdepth_cells:
            raise ConfigError(
                field_name,
                f"{cells} cells can never be reached on {self.profile.chip} "
                f"(max queue depth {self.profile.max_qdepth_cells})",
            )

    def set_thresholds(self, cells_by_class: dict[int, int]) -> list[Change]:
        """Validate every class first, then write all thresholds as one batch."""
        for cid, cells in cells_by_class.items():
            self.config.class_by_id(cid)
            self._check_threshold(f"class {cid} threshold_cells", cells)
        return self._commit(
            {cid: replace(self.live[cid], threshold_cells=k) for cid, k in cells_by_class.items()},
            "operator",
        )

    def set_weights(self, weight_by_class: dict[int, int]) -> list[Change]:
        for cid, w in weight_by_class.items():
            self.config.class_by_id(cid)
            top = max_weight(self.config)
            if isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= top:
                raise ConfigError(f"class {cid} weight", weight_refusal(self.config, w))
        return self._commit(
            {cid: replace(self.live[cid], weight=w) for cid, w in weight_by_class.items()},
            "operator",
        )

    def _commit(self, new_live: dict[int, ClassLive], why: str) -> list[Change]:
        """Write the classes whose live state changes, as one batch; keep the old
        state if the switch refuses it."""
        changes: list[Change] = []
        old = {cid: self.live[cid] for cid in new_live}
        for cid, nl in new_live.items():
            for attr in ("threshold_cells", "weight", "target_rate_pps", "rate_pps"):
                before, after = getattr(old[cid], attr), getattr(nl, attr)
                if before != after:
                    changes.append(Change(cid, attr, before, after, why))
        if not changes:
            return []
        self.live.update(new_live)
        try:
            by_id = {c.id: c for c in self.config.classes}
            # Each port's total weight once, not once per class (a full switch has 512).
            port_weights = self._port_weights()
            writes: list[Write] = []
            for cid in new_live:
                writes.extend(self._class_writes(by_id[cid], port_weights))
            if any(ch.what == "weight" for ch in changes):
                # A weight moves every share of its port, so every class's
                # drain rate is written again (one entry a pipe).
                for c in self.config.classes:
                    if c.id not in new_live:
                        writes += self._threshold_writes(c, port_weights)
            self.switch.write(by_table(writes))
        except Exception:
            self.live.update(old)
            raise
        for ch in changes:
            log.info(
                "event=changed class=%d what=%s old=%d new=%d why=%s",
                ch.class_id,
                ch.what,
                ch.old,
                ch.new,
                logfmt_value(ch.why),
            )
        return changes

    # ---- measurement -----------------------------------------------
    def start(self, now_s: float) -> None:
        """Take the baseline: counters as they stand at ``now_s``, sojourn
        accumulators cleared.  Called when the controller starts, so the first
        optimise cycle, one interval later, already measures lambda_i over a
        whole interval (without it the first cycle only records a baseline and
        the first answer comes after two)."""
        arrivals = self.pipes.read(self.switch)
        self.sample(now_s, arrivals)
        self.balance_pipes(arrivals)
        log.debug("event=measuring since_s=%.6f", now_s)

    def sample(self, now_s: float, arrivals: Arrivals | None = None) -> list[Sample]:
        """lambda_i and W_i of every class over the interval (measure.py),
        from `arrivals` if this cycle has read them already."""
        if arrivals is None:
            arrivals = self.pipes.read(self.switch)
        return self.meter.sample(now_s, self.live, self._sampling_write, arrivals)

    def balance_pipes(self, arrivals: Arrivals | None = None) -> list[int]:
        """Each pipe's share of each class's arrivals since the last call
        (`arrivals` if read already); the ecn_threshold entries of the
        classes whose shares moved are written again, as one batch
        (pipes.py). The classes rewritten."""
        weights = self._port_weights()
        by_id = {c.id: c for c in self.config.classes}
        return self.pipes.rebalance(
            self.switch,
            lambda ids: [w for cid in ids for w in self._threshold_writes(by_id[cid], weights)],
            arrivals,
        )

    # ---- optimisation ----------------------------------------------
    def packets_to_cells(self, packets: float) -> int:
        nbytes = math.ceil(packets) * self.config.optimizer.mean_packet_bytes
        return min(self.profile.bytes_to_cells(nbytes), self.profile.max_qdepth_cells)

    def weights_from_omega(self, omega: dict[int, float]) -> dict[int, int]:
        """Integer WRR/DWRR weights in proportion to omega_i, at least 1 each."""
        quantum = self.config.scheduling.weight_quantum
        top = max_weight(self.config)
        return {cid: max(1, min(top, round(w * quantum))) for cid, w in omega.items()}

    # ---- what the switch holds ------------------------------------
    def status(self) -> list[dict[str, object]]:
        """Per class, then per port, as read back from the switch (status.py)."""
        return status_rows(self.switch, self.config, self.live, self.pipes)

    def service_start(self, now_s: float) -> None:
        self.start(now_s)

    def service_cycle(self, now_s: float) -> int:
        return len(self.optimize_once(now_s))

    def optimize_once(self, now_s: float) -> list[Change]:
        """One cycle of Fig. 3: measure lambda_i and W_i, solve, write K_i,
        weights and lambda_i* as one batch. An idle interval keeps the current
        state; an overloaded port gets proportionally cut lambda_i* only
        (solver.py); a port the model refuses otherwise keeps its state (and
        the log says why)."""
        from .solver import SolverRefused, solve_for

        # Why this cycle changed nothing, for `optimize --once` to say.
        self.unchanged_because = "the solution equals what the switch holds"
        # Measurements, not the optimiser's answers: kept up whether or not
        # it runs, as the virtual queues need them to drain right.
        # One read of every pipe's arrivals serves both (pipes.py, measure.py).
        arrivals = self.pipes.read(self.switch)
        self.balance_pipes(arrivals)
        if not self.config.optimizer.enabled:
            self.unchanged_because = "optimizer.enabled is false in the config"
            log.debug("event=optimizer-skipped reason=disabled")
            return []
        if self.meter.last is None:
            log.warning("no baseline sample (start() not called): this cycle only takes one")
        samples = self.sample(now_s, arrivals)
        if not any(s.rate_pps > 0 for s in samples):
            # Every idle second would say it: chatter, not news.
            self.unchanged_because = "no traffic measured this interval; state kept"
            log.debug("event=optimizer-skipped reason=no-traffic state=kept")
            return []
        try:
            weights = {cid: live.weight for cid, live in self.live.items()}
            result = solve_for(self.config, samples, weights)
        except SolverRefused as exc:
            self.unchanged_because = f"the optimiser refused the measurements: {exc}"
            log.warning("optimiser refused this interval's measurements: %s; state kept", exc)
            return []
        new_weights = self.weights_from_omega(result.omega)
        new_live, spec = {}, class_lookup(self.config)
        # K_i in packets takes few values over a switch's classes.
        cells_of = cache(self.packets_to_cells)
        for s in samples:
            if s.class_id not in result.lambda_star:
                continue  # idle this interval: nothing measured to optimise, state kept
            live = self.live[s.class_id]
            k = result.k_packets.get(s.class_id)
            if spec(s.class_id).pin:
                k = None  # the operator's K_i stays (config pin: true)
            # An overloaded port gets new targets only (solver.py says why).
            new_live[s.class_id] = renew(
                live,
                threshold_cells=live.threshold_cells if k is None else cells_of(k),
                weight=new_weights.get(s.class_id, live.weight),
                target_rate_pps=min(U32_MAX, round(result.lambda_star[s.class_id])),
                rate_pps=min(U32_MAX, round(s.rate_pps)),
            )
        return self._commit(new_live, f"optimiser ({result.method})")


def class_lookup(config: PmqecnConfig) -> Callable[[int], ClassSpec]:
    """A class by id: a dict made once a cycle; the reference path searched
    the list per class (a full switch's 512 classes: 131k comparisons)."""
    if not cycle_speedups.ENABLED:
        return config.class_by_id
    return {c.id: c for c in config.classes}.__getitem__


def renew(
    live: ClassLive, threshold_cells: int, weight: int, target_rate_pps: int, rate_pps: int
) -> ClassLive:
    """`replace(live, ...)` of the four fields a cycle sets: made directly,
    which for a full switch's 512 classes is most of what dataclasses.replace
    cost a cycle (its generic field walk); the reference path calls it."""
    if not cycle_speedups.ENABLED:
        return replace(
            live,
            threshold_cells=threshold_cells,
            weight=weight,
            target_rate_pps=target_rate_pps,
            rate_pps=rate_pps,
        )
    return ClassLive(threshold_cells, weight, target_rate_pps, rate_pps, live.sojourn_ns)
