# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC on a switch: push the intended state, read it back, retune it.

The app owns the *intended* state: the config plus the run-time `params`
an operator set since. Every change is validated whole, then written as one
batch; after a switch restart the whole intended state is pushed again.
The data plane decides everything else (who is congested, whom to slow).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from models.switch.core import Match
from models.switch.headers import FEEDBACK_TYPE_BACKPRESSURE, FEEDBACK_TYPE_BACKPRESSURE_CLEAR

from ..common import (
    IntendedStateApp,
    by_table,
    check_chip,
    lpm,
    mac_to_int,
    pipe_of,
    route_writes,
    source_binding_writes,
    trusted_port_writes,
)
from ..errors import ConfigError
from ..switch import (
    EntryWrite,
    MirrorSessionWrite,
    Switch,
    TmQueueWrite,
    TmShapingWrite,
    Write,
)
from ..validation import parse_model
from . import names as n
from .config import (
    PARAM_NAMES,
    BfccConfig,
    Params,
    check_against,
    check_param_name,
    check_params,
    check_recirculation_budget,
    check_shaping_rates,
    param_warnings,
    recirculation_level_cells,
    recirculation_ports,
    recirculation_sessions,
    refresh_mask,
    saturation_reports,
    sender_notify_targets,
    shaped_rate_kbps,
    sojourn_thresholds,
    threshold_cells,
)
from .rows import (
    bp_key,
    port_register,
    status_rows,
)

# tm.queue.sched_cfg max_priority of a reaction point's two queues.
HIGH_PRIORITY = 1
LOW_PRIORITY = 0

log = logging.getLogger("tofcc.bfcc")


@dataclass
class Change:
    what: str
    old: int | str
    new: int | str
    why: str


class BfccApp(IntendedStateApp):
    def __init__(self, switch: Switch, config: BfccConfig) -> None:
        check_chip(config.chip, switch.profile)
        check_against(config, switch.profile)
        self.switch = switch
        self.config = config
        self.params: Params = config.params
        # pipe -> its recirculation session and port (every pipe the config
        # uses, when there are reaction points).
        self.recirculation_sessions = recirculation_sessions(config, switch.profile)
        self.recirculation_ports = recirculation_ports(config, switch.profile)
        # Groups attached here. Under none a group split over two host ports
        # just has no entry; check_against (config) and set_params (a run-time
        # switch to match_switch) refuse it.
        self.notify_targets = sender_notify_targets(config, strict=False)
        # shaping_base carried: each reaction point's last byte-counter sample
        # (bytes, seconds), its rate over the last cycle, and the rate held
        # as the base while its backpressure lasts.
        self._tx_sample: dict[int, tuple[int, float]] = {}
        self._carried_kbps: dict[int, float] = {}
        self._base_kbps: dict[int, float] = {}
        for w in [
            *param_warnings(self.params),
            *saturation_reports(config, self.params, switch.profile),
        ]:
            log.warning("params: %s", w)

    # ---- intended state --------------------------------------------
    def _param_writes(self, p: Params) -> list[Write]:
        """Every write that carries a tunable, i.e. what `set` rewrites."""
        cfg = self.config
        writes: list[Write] = []
        for rp in cfg.reaction_points:
            writes.append(
                EntryWrite(
                    n.REACTION_POINT,
                    {n.K_UCAST_EGRESS_PORT: Match(rp.port)},
                    n.REACT,
                    {
                        "high_qid": rp.high_qid,
                        "low_qid": rp.low_qid,
                        "bp_expiry_ns": p.expiry_ns,
                        "named_group_only": p.named_group_only,
                    },
                )
            )
        # Without reaction points no packet is ever flagged: RT would be dead state.
        if cfg.reaction_points:
            for degree, rt in p.rate_thresholds().items():
                key = {n.K_BP_DEGREE: Match(degree)}
                if p.reduction == "shaping":
                    # The TM does the cut (shape_once): no fakes. An entry
                    # either way, so `set reduction=` only modifies.
                    writes.append(EntryWrite(n.RATE_THRESHOLD, key, n.NO_RATE_THRESHOLD, {}))
                    continue
                writes.append(
                    EntryWrite(n.RATE_THRESHOLD, key, n.SET_RATE_THRESHOLD, {"rt_packets": rt})
                )
        # Each reaction port recirculates through its own pipe's port, up to
        # the level (a tunable, so `set` rewrites these).
        level = recirculation_level_cells(p, self.switch.profile)
        for rp in cfg.reaction_points:
            writes.append(
                EntryWrite(
                    n.RECIRCULATION,
                    {n.K_EGRESS_PORT: Match(rp.port)},
                    n.RECIRCULATE,
                    {
                        "session": self.recirculation_sessions[pipe_of(rp.port, self.profile)],
                        "level_cells": level,
                    },
                )
            )
        # Every attached group has its two entries whatever the reaction, so
        # `set sender_reaction=...` modifies entries instead of adding or
        # deleting them; `consume` is what a miss does.
        for target in self.notify_targets:
            for msg_type in (FEEDBACK_TYPE_BACKPRESSURE, FEEDBACK_TYPE_BACKPRESSURE_CLEAR):
                key = {n.K_FB_MSG_TYPE: Match(msg_type), n.K_FB_CLASS_ID: Match(target.group)}
                if p.sender_reaction == "match_switch":
                    data = {
                        "port": target.port,
                        "src_mac": mac_to_int(target.src_mac),
                        "dst_mac": mac_to_int(target.dst_mac),
                    }
                    writes.append(EntryWrite(n.SENDER_NOTIFY, key, n.NOTIFY_SENDERS, data))
                else:
                    writes.append(EntryWrite(n.SENDER_NOTIFY, key, n.CONSUME, {}))
        profile = self.switch.profile
        for cp_id, cp in enumerate(cfg.congestion_points):
            t = sojourn_thresholds(p, cp.rate_mbps, profile)
            writes.append(
                EntryWrite(
                    n.CONGESTION_POINT,
                    {n.K_EGRESS_PORT: Match(cp.port)},
                    n.MONITOR,
                    {
                        "cp_id": cp_id,
                        "congestion_threshold_cells": threshold_cells(p, profile),
                        "t_min_ns": t.written_t_min_ns,
                        "t_max_ns": t.written_t_max_ns,
                        "window_packets": p.window_packets,
                        "refresh_mask": refresh_mask(p),
                    },
                )
            )
        return writes

    def intended_writes(self) -> list[Write]:
        cfg = self.config
        # Sessions first: an entry naming a session is live as soon as written.
        writes: list[Write] = [
            MirrorSessionWrite(u.mirror_session, u.port, n.BP_TRUNCATE_BYTES)
            for u in cfg.upstream_ports
        ]
        # Both directions: fakes' originals are egress copies, backpressure
        # going round the pipes ingress copies.
        for pipe, sid in self.recirculation_sessions.items():
            writes.append(MirrorSessionWrite(sid, self.recirculation_ports[pipe], direction="BOTH"))
        writes += route_writes(cfg.routes)
        # A copy of backpressure from another pipe arrives on a recirculation
        # port: trusted, as the switch-facing port it came in on.
        writes += trusted_port_writes(cfg.trusted_ports + self._replica_ports())
        writes += self._replication_writes()
        writes += source_binding_writes(cfg.source_bindings)
        upstream = {u.port: u for u in cfg.upstream_ports}
        for g in cfg.groups:
            for s in g.senders:
                writes.append(
                    EntryWrite(n.SENDER_GROUP, {n.K_SRC_ADDR: lpm(s)}, n.SET_GROUP, {"group": g.id})
                )
            if g.upstream_port is not None:
                u = upstream[g.upstream_port]
                writes.append(
                    EntryWrite(
                        n.BP_UPSTREAM,
                        {n.K_BP_GROUP: Match(g.id)},
                        n.TO_UPSTREAM,
                        {
                            "session_id": u.mirror_session,
                            "src_mac": mac_to_int(u.src_mac),
                            "dst_mac": mac_to_int(u.dst_mac),
                        },
                    )
                )
        # Admission control only slows the named group if the TM serves the high
        # queue strictly before the low one.
        for rp in cfg.reaction_points:
            writes.append(TmQueueWrite(rp.port, rp.high_qid, max_priority=HIGH_PRIORITY))
            writes.append(TmQueueWrite(rp.port, rp.low_qid, max_priority=LOW_PRIORITY))
        writes.extend(self._param_writes(self.params))
        return by_table(writes)

    def _replica_ports(self) -> list[int]:
        """The recirculation ports backpressure copies arrive on (none on one pipe)."""
        if len(self.recirculation_sessions) < 2:
            return []
        return [self.recirculation_ports[pipe] for pipe in self.recirculation_sessions]

    def _replication_writes(self) -> list[Write]:
        """bp_replicate: backpressure arriving on a reaction port goes round
        the other pipes the config uses (in pipe order, from the next one),
        recorded in each for the reaction port, so senders on every pipe see
        it (issue 50, finding 4)."""
        pipes = list(self.recirculation_sessions)
        if len(pipes) < 2:
            return []

        def next_session(pipe: int) -> int:
            return self.recirculation_sessions[pipes[(pipes.index(pipe) + 1) % len(pipes)]]

        writes: list[Write] = []
        for rp in self.config.reaction_points:
            # The first copy's pipe is one; pipes_left are the ones after it.
            data = {
                "session": next_session(pipe_of(rp.port, self.profile)),
                "pipes_left": len(pipes) - 2,
            }
            writes.append(
                EntryWrite(n.BP_REPLICATE, {n.K_INGRESS_PORT: Match(rp.port)}, n.REPLICATE, data)
            )
        for pipe in pipes:
            writes.append(
                EntryWrite(
                    n.BP_REPLICATE,
                    {n.K_INGRESS_PORT: Match(self.recirculation_ports[pipe])},
                    n.RELAY_REPLICA,
                    {"session": next_session(pipe)},
                )
            )
        return writes

    def live_state(self) -> dict[str, Any]:
        return {"params": self.params.model_dump()}

    def restore_live(self, state: dict[str, Any], source: str = "saved") -> None:
        unknown = sorted(str(k) for k in state if k != "params")
        if unknown:
            raise ConfigError(f"{source}.{unknown[0]}", "unknown key (known: params)")
        if "params" not in state:
            return
        p = parse_model(Params, state["params"], f"{source}.params")
        check_params(p, self.profile, f"{source}.params.")
        check_recirculation_budget(self.config, p, self.profile, f"{source}.params")
        self.params = p

    # ---- operator changes ------------------------------------------
    def set_params(self, changes: Mapping[str, int | str], why: str = "operator") -> list[Change]:
        """Validate every value first, then write every entry that carries a
        tunable as one batch; keep the old values if the switch refuses it."""
        for name in changes:
            check_param_name(name)
        new = parse_model(Params, {**self.params.model_dump(), **changes})
        check_params(new, self.profile, changed=changes)
        check_shaping_rates(self.config, new, "")
        # A lower RT or fakes instead of shaping can take the pipe past its
        # recirculation capacity: named by the parameter set.
        budget_field = next(
            (f for f in ("rt1_packets", "rt2_packets", "rt3_packets", "reduction") if f in changes),
            None,
        )
        check_recirculation_budget(self.config, new, self.profile, budget_field)
        if new.sender_reaction == "match_switch":
            try:
                sender_notify_targets(self.config)
            except ConfigError as exc:
                raise ConfigError("sender_reaction", f"match_switch: {exc}") from None
        old = self.params
        diff = [
            Change(name, getattr(old, name), getattr(new, name), why)
            for name in PARAM_NAMES
            if getattr(old, name) != getattr(new, name)
        ]
        if not diff:
            return []
        for w in [*param_warnings(new), *saturation_reports(self.config, new, self.profile)]:
            log.warning("params: %s", w)
        # Same config, so both lists hold the same entries in the same order:
        # write only those whose data changes.
        pairs = zip(self._param_writes(new), self._param_writes(old), strict=True)
        writes = [w for w, was in pairs if w != was]
        # e.g. RT on a switch without reaction points: nothing on the switch carries it.
        if writes:
            self.switch.write(by_table(writes))
        self.params = new
        for ch in diff:
            log.info("%s %s -> %s (%s)", ch.what, ch.old, ch.new, ch.why)
        # A shaper set under the old reduction (or on the other target) goes now,
        # not at the next cycle.
        if any(ch.what in ("reduction", "named_group_only") for ch in diff):
            self.shape_once()
        return diff

    # ---- the shaping loop -------------------------------------------
    def _measure(self, port: int, now_s: float) -> None:
        """The port's carried rate over the last cycle, from its byte counter."""
        sent = self.switch.read_port_tx_bytes(port)
        last = self._tx_sample.get(port)
        self._tx_sample[port] = (sent, now_s)
        if last is not None and now_s > last[1] and sent >= last[0]:
            self._carried_kbps[port] = (sent - last[0]) * 8 / 1000 / (now_s - last[1])

    def shaping_targets(self, now_s: float = 0.0) -> list[tuple[int, int | None, int | None]]:
        """(port, queue or None for the whole port, max rate in kb/s or None)
        each reaction point should have now: while the switch holds
        backpressure (bp_state names a group and a degree) and reduction is
        shaping, the port (or, with named_group_only, its low queue) at
        RT(degree)/(RT(degree)+1) of its base; otherwise unshaped. The base is
        the line rate, or (shaping_base carried) the rate the port carried in
        the cycle before the backpressure began, held until it ends: a
        shaped port's own rate is never the base of the next cut."""
        p = self.params
        rts = p.rate_thresholds()
        out: list[tuple[int, int | None, int | None]] = []
        for rp in self.config.reaction_points:
            queue = None if p.named_group_only == 0 else rp.low_qid
            rate: int | None = None
            if p.reduction == "shaping":
                assert rp.rate_mbps is not None  # check_shaping_rates
                line_kbps = rp.rate_mbps * 1000
                if p.shaping_base == "carried":
                    self._measure(rp.port, now_s)
                group, degree = bp_key(port_register(self.switch, n.BP_STATE, rp.port))
                if group and degree in rts:
                    if p.shaping_base == "line":
                        rate = shaped_rate_kbps(rp.rate_mbps, rts[degree])
                    else:
                        # Choice: a base of at least 1 % of the line, so a port
                        # that happened to be idle for one cycle is not shut.
                        # Before the first full cycle has been measured the
                        # line stands in, and is not held as the base.
                        carried = self._carried_kbps.get(rp.port)
                        if carried is None:
                            base = float(line_kbps)
                        else:
                            base = self._base_kbps.setdefault(
                                rp.port, min(max(carried, line_kbps / 100), line_kbps)
                            )
                        rt = rts[degree]
                        rate = max(1, int(base * rt // (rt + 1)))
                else:
                    self._base_kbps.pop(rp.port, None)
            out.append((rp.port, queue, rate))
        return out

    def shape_once(self, now_s: float | None = None) -> list[TmShapingWrite]:
        """One cycle of the shaping loop: read each reaction point's
        backpressure record, compare the shapers the switch holds with
        shaping_targets() and write the difference as one batch (nothing when
        nothing changed). The record is the data plane's own: it expires
        there (bp_expiry_ns) when a packet to the port finds it stale.
        `now_s`: the loop's clock (time.monotonic() unless given), for the
        carried rate."""
        now = time.monotonic() if now_s is None else now_s
        writes: list[TmShapingWrite] = []
        for rp, (port, queue, rate) in zip(
            self.config.reaction_points, self.shaping_targets(now), strict=True
        ):
            want: dict[int | None, int | None] = {None: None, rp.low_qid: None}
            want[queue] = rate
            for q, kbps in want.items():
                if self.switch.read_tm_shaping(port, q) != kbps:
                    writes.append(TmShapingWrite(port, q, kbps))
        if writes:
            self.switch.write(writes)
        return writes

    # ---- what the switch holds ------------------------------------
    def status(self) -> list[dict[str, object]]:
        """Rows by section, as read back from the switch (rows.py)."""
        return status_rows(self.switch, self.config, self.params)
