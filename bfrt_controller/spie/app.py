# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""S-PIE on a switch: push the intended state; retune PIE and the sketch
as one batch.

The app owns the intended state (the config plus what an operator changed
since). Per S-PIE port: its spie_port entry (slot, mode, staleness) in
ingress and its pi_port entry (slot, mirror session, del_ref, del_ref/3,
T_update) in egress. Shared: the four PI term tables (alpha and beta as
lookups, bfrt_controller/spie/tables.py), the three log tables, the
sketch's width and epoch, one mirror session per pipe to the pipe's
recirculation port, and the recirculation ports as the only source of
state updates. A change is validated whole before one batch deletes stale
entries and writes new ones.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from hw_profiles import HwProfile
from models.switch.core import Match
from models.switch.spie import SPIE_MODE_PIE, SPIE_MODE_SPIE, SPIE_MODE_SPIE_PIE

from ..common import (
    IntendedStateApp,
    by_table,
    check_chip,
    diff_writes,
    pipe_of,
    port_guard_rows,
    route_writes,
    source_binding_writes,
    trusted_port_writes,
)
from ..errors import ConfigError
from ..switch import EntryWrite, MirrorSessionWrite, Switch, Write
from . import names as n
from .config import (
    CLOCK_TICK_NS,
    PieParams,
    SketchParams,
    SpieConfig,
    check_against,
    line_rate_gbps,
    port_speed_gbps,
    sketch_scaling,
    ticks,
)
from .tables import (
    DELAY_UNIT_S,
    LARGE_MARGIN_LOG16,
    LogEntry,
    TermEntry,
    epoch_mask,
    large_min_count,
    log_count_entries,
    log_entries,
    log_res_entries,
    sample_mask,
    term_entries,
)

log = logging.getLogger("tofcc.spie")

PORTS = "ports"
U32 = 0xFFFFFFFF
# A PI step's copy keeps the Ethernet header only.
UPDATE_COPY_BYTES = 14
MODES = {"pie": SPIE_MODE_PIE, "spie": SPIE_MODE_SPIE, "spie_pie": SPIE_MODE_SPIE_PIE}
# What `set` may change: PIE's and the sketch's parameters.
PIE_SETTABLE = ("alpha_per_s", "beta_per_s", "del_ref_us", "t_update_us", "stale_after_us")
SKETCH_SETTABLE = ("columns", "clear_interval_us", "large_drop_probability")
SETTABLE: dict[str, type] = {
    "alpha_per_s": float,
    "beta_per_s": float,
    "del_ref_us": float,
    "t_update_us": float,
    "stale_after_us": float,
    "columns": int,
    "clear_interval_us": float,
    "large_drop_probability": float,
}


@dataclass
class Change:
    what: str
    old: object
    new: object
    why: str


def delay_units(us: float) -> int:
    """Microseconds as the data plane's 1024 ns units (ns >> 10)."""
    return round(us * 1e-6 / DELAY_UNIT_S)


def large_drop_units(probability: float) -> int:
    """q in 2^-31 units, as a 31-bit random value compares with it: 1 is
    2^31, above every draw (always dropped)."""
    return round(probability * (1 << 31))


def _term_writes(table: str, key: str, entries: list[TermEntry]) -> list[EntryWrite]:
    return [
        EntryWrite(
            table,
            {key: Match(e.value, mask=e.mask)},
            n.SET_TERM[table],
            {"term": e.term, "minus_term": e.minus_term},
            priority=e.priority,
        )
        for e in entries
    ]


def _log_writes(table: str, key: str, action: str, entries: list[LogEntry]) -> list[EntryWrite]:
    return [
        EntryWrite(
            table, {key: Match(e.value, mask=e.mask)}, action, {"log16": e.log16}, priority=1
        )
        for e in entries
    ]


def update_ring(profile: HwProfile, pipes: int) -> list[tuple[int, int]]:
    """(recirculation port, the next one) of the ring a PI step's update
    goes round so that every ingress pipe holds PIE's state: the switch's
    pipes in order, the last back to the first. A recirculation port of a
    pipe the board lacks (or, on a one-pipe model, any other) passes
    nothing on."""
    ports = list(profile.recirculation_ports)
    ring = ports[:pipes]
    return [(rp, ring[(k + 1) % len(ring)] if k < len(ring) else rp) for k, rp in enumerate(ports)]


class SpieApp(IntendedStateApp):
    def __init__(self, switch: Switch, config: SpieConfig) -> None:
        check_chip(config.chip, switch.profile)
        check_against(config, switch.profile)
        self.switch = switch
        self.config = config
        self.live: dict[str, Any] = {}
        self.effective = config

    # ---- run-time changes ------------------------------------------
    def _with(self, live: dict[str, Any], source: str) -> SpieConfig:
        pie = {k: v for k, v in live.items() if k in PIE_SETTABLE}
        sketch = {k: v for k, v in live.items() if k in SKETCH_SETTABLE}
        try:
            new_pie = PieParams.model_validate({**self.config.pie.model_dump(), **pie})
            new_sketch = SketchParams.model_validate({**self.config.sketch.model_dump(), **sketch})
        except ValidationError as exc:
            err = exc.errors()[0]
            # A check across fields has no loc: its message names them.
            loc = ".".join(str(x) for x in err["loc"]) or "pie"
            msg = str(err["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"{source} {loc}", msg) from None
        cfg = self.config.model_copy(update={"pie": new_pie, "sketch": new_sketch})
        try:
            check_against(cfg, self.profile)
        except ConfigError as exc:
            raise exc.within(source) from None
        return cfg

    def set_params(self, values: dict[str, object], why: str = "operator") -> list[Change]:
        """Change PIE's or the sketch's parameters, all or none."""
        for name in values:
            if name not in SETTABLE:
                raise ConfigError(name, f"not settable (settable: {', '.join(SETTABLE)})")
        live = {**self.live, **values}
        new = self._with(live, "set")
        old = self.effective
        changes = [
            Change(name, getattr(a, name), getattr(b, name), why)
            for a, b, names in (
                (old.pie, new.pie, PIE_SETTABLE),
                (old.sketch, new.sketch, SKETCH_SETTABLE),
            )
            for name in names
            if getattr(a, name) != getattr(b, name)
        ]
        if not changes:
            return []
        # Stale entries go in the same batch as the new ones.
        self.switch.write(diff_writes(self._writes_for(old), self._writes_for(new)))
        self.live, self.effective = live, new
        for ch in changes:
            log.info("%s %s -> %s (%s)", ch.what, ch.old, ch.new, ch.why)
        return changes

    # ---- the intended state -----------------------------------------
    def session_of(self, port: int, cfg: SpieConfig | None = None) -> int:
        cfg = cfg or self.effective
        return cfg.mirror_session_base + pipe_of(port, self.profile)

    def port_writes(self, slot: int, port: int, mode: str, cfg: SpieConfig) -> list[EntryWrite]:
        pie = cfg.pie
        return [
            EntryWrite(
                n.SPIE_PORT,
                {n.K_UCAST_EGRESS_PORT: Match(port)},
                n.SET_SPIE,
                {
                    "slot": slot,
                    "mode": MODES[mode],
                    "minus_stale_ticks": (-ticks(pie.stale_after_us)) & U32,
                },
            ),
            EntryWrite(
                n.PI_PORT,
                {n.K_EGRESS_PORT: Match(port)},
                n.SET_PI,
                {
                    "slot": slot,
                    "session": self.session_of(port, cfg),
                    "del_ref_ns_shr10": delay_units(pie.del_ref_us),
                    # Algorithm 2's congestion test, del_cur >= del_ref / 3.
                    "congested_from_ns_shr10": delay_units(pie.del_ref_us / 3),
                    "minus_t_update_ticks": (-ticks(pie.t_update_us)) & U32,
                },
            ),
        ]

    def shared_writes(self, cfg: SpieConfig) -> list[Write]:
        writes: list[Write] = []
        for gain, hi_table, lo_table, key in (
            (cfg.pie.alpha_per_s, n.ALPHA_HI, n.ALPHA_LO, n.K_D_REF),
            (cfg.pie.beta_per_s, n.BETA_HI, n.BETA_LO, n.K_D_OLD),
        ):
            hi, lo = term_entries(gain)
            writes += _term_writes(hi_table, key, hi) + _term_writes(lo_table, key, lo)
        k, u = sketch_scaling(cfg, self.profile)
        writes.append(
            EntryWrite(
                n.SKETCH_CONFIG,
                {},
                n.SET_SKETCH,
                {
                    "epoch_mask": epoch_mask(k),
                    "column_mask": cfg.sketch.columns - 1,
                    "sample_mask": sample_mask(u),
                    "large_drop": large_drop_units(cfg.sketch.large_drop_probability),
                },
                op="default",
            )
        )
        # A sampled sketch judges a flow only from more counts (tables.py).
        writes += _log_writes(
            n.LOG_RES, n.K_M_BEFORE, n.SET_LOG_RES, log_res_entries(large_min_count(u))
        )
        return writes

    def static_writes(self) -> list[Write]:
        """What depends on nothing tunable: the log tables, the update ports,
        the mirror sessions."""
        writes: list[Write] = []
        # log_count gives log (m_count_before - 1), log_sumsq log 2 S_b
        # plus the margin beyond the logs' rounding: large <=> m_before
        # (m_count_b - 1) > 2 S_b by that margin <=> the looked-up margin
        # is not negative.
        writes += _log_writes(n.LOG_COUNT, n.K_M_COUNT_BEFORE, n.SET_LOG_COUNT, log_count_entries())
        writes += _log_writes(
            n.LOG_SUMSQ, n.K_SUMSQ, n.SET_LOG_SUMSQ, log_entries(0, 2, LARGE_MARGIN_LOG16)
        )
        for rp, next_rp in update_ring(self.profile, self.switch.pipe_count()):
            writes.append(
                EntryWrite(
                    n.UPDATE_PORTS,
                    {n.K_INGRESS_PORT: Match(rp)},
                    n.ACCEPT_UPDATE,
                    {"next_port": next_rp},
                )
            )
        return writes

    def static_tables(self) -> frozenset[str]:
        return frozenset({n.LOG_COUNT, n.LOG_SUMSQ})

    def intended_writes(self) -> list[Write]:
        return self._writes_for(self.effective)

    def _writes_for(self, cfg: SpieConfig) -> list[Write]:
        # The recirculation ports carry the updates, which are feedback
        # headers: trusted, so the shared trust check lets them in.
        trusted = list(cfg.trusted_ports) + list(self.profile.recirculation_ports)
        writes: list[Write] = [
            *route_writes(cfg.routes),
            *trusted_port_writes(trusted),
            *source_binding_writes(cfg.source_bindings),
            *self.static_writes(),
            *self.shared_writes(cfg),
        ]
        for slot, p in enumerate(cfg.ports):
            writes += self.port_writes(slot, p.port, p.mode, cfg)
        for pipe in sorted({pipe_of(p.port, self.profile) for p in cfg.ports}):
            writes.append(
                MirrorSessionWrite(
                    cfg.mirror_session_base + pipe,
                    self.profile.recirculation_ports[pipe],
                    max_pkt_len=UPDATE_COPY_BYTES,
                )
            )
        return by_table(writes)

    def live_state(self) -> dict[str, Any]:
        return dict(self.live)

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        for name in state:
            if name not in SETTABLE:
                raise ConfigError(f"{source}.{name}", "not settable")
        self.effective = self._with(dict(state), source)
        self.live = dict(state)

    def status(self) -> list[dict[str, object]]:
        cfg = self.effective
        rows: list[dict[str, object]] = []
        pie, sketch = cfg.pie, cfg.sketch
        k, u = sketch_scaling(cfg, self.profile)
        # The PIE and sketch settings the ports run now (`set` changes them),
        # the sketch as sized for the fastest S-PIE port.
        settings = (
            f"alpha {pie.alpha_per_s:g}/s beta {pie.beta_per_s:g}/s, ref {pie.del_ref_us:g} us, "
            f"T_update {pie.t_update_us:g} us; sketch {sketch.columns} columns, "
            f"cleared every {(1 << k) * CLOCK_TICK_NS / 1000:,.0f} us, 1 packet in {1 << u} "
            f"counted (sized for {line_rate_gbps(cfg, self.profile):g} Gb/s), a large flow's "
            f"packet dropped with probability {sketch.large_drop_probability:g}"
        )
        for slot, p in enumerate(cfg.ports):
            intended = self.port_writes(slot, p.port, p.mode, cfg)
            present = [w for w in intended if self.switch.read_entry(w.table, w.key) is not None]
            rows.append(
                {
                    "section": PORTS + " (S-PIE)",
                    "port": p.port,
                    "mode": p.mode,
                    # None: not given, nor by a front panel: the chip's fastest.
                    "speed_gbps": port_speed_gbps(p, self.profile)
                    if p.speed_gbps is not None
                    else f"{port_speed_gbps(p, self.profile):g} (assumed)",
                    "settings": settings,
                    "entries": f"{len(present)}/{len(intended)}",
                    "p": round(self.switch.read_register(n.PI_PROB, slot) / (1 << 32), 6),
                    "pi_updates": self.switch.read_counter(n.PI_UPDATES, p.port)[0],
                    "large_drops": self.switch.read_counter(n.LARGE_FLOW_DROPS, p.port)[0],
                    "random_drops": self.switch.read_counter(n.RANDOM_DROPS, p.port)[0],
                }
            )
        rows += port_guard_rows(self.switch, cfg)
        return rows

    def clear_interval_ticks(self) -> int:
        return 1 << sketch_scaling(self.effective, self.profile)[0]

    def clear_interval_us(self) -> float:
        return self.clear_interval_ticks() * CLOCK_TICK_NS / 1000
