# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""AQM family configuration (none, RED, CoDel, PIE, DCTCP, DA-DCTCP,
DualPI2 per queue): what an operator writes, validated before anything is
sent.

Structure and types are checked by pydantic; limits that depend on the chip
(ports, queue ids, queue depth, table sizes) by `check_against`, so every
error names its field (queues[1].max_th_cells) and nothing is written when
any field is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from hw_profiles import HwProfile
from models.switch.aqm_types import (
    AQM_CODEL_DUE_ENTRIES,
    AQM_PI_TERMS_ENTRIES,
    AQM_RED_LEVEL_ENTRIES,
    AQM_SLOTS,
)

from ..common import (
    PortNumber,
    Route,
    SourceBinding,
    Strict,
    check_port,
    check_port_guards,
    check_queue_id,
    no_repeats,
)
from ..errors import ConfigError
from ..ternary_levels import Levels
from ..validation import load_yaml, parse_on_chip
from .levels import LEVEL_ALWAYS, TICK_NS, codel_entries, red_entries
from .mechanisms import CURVE_FAMILY, DEFAULTS, USED_BY, Mode
from .pi import PiGains, pi_terms_entries

# The block sum (N x depth) must fit the 32-bit register: 2^19 cells x 2^12.
MAX_BLOCK_SHIFT = 12
# CoDel's sojourn is compared with the target by the sign of a 32-bit
# difference in ns: the target must stay below 2^31 ns.
MAX_TARGET_US = 2_000_000.0
# Times are compared by the sign of a 32-bit difference of 64 ns ticks
# (275 s around): an interval up to 60 s leaves room for the episode.
MAX_INTERVAL_US = 60_000_000.0
# The least the data plane tells apart: the target is written in whole ns
# (below 1 ns it would be 0: every packet late), the interval in 64 ns
# ticks (rounded up: below one tick it would be written as one).
MIN_TARGET_US = 0.001
MIN_INTERVAL_US = TICK_NS / 1000
MAX_COUNT_CAP = 256
# PI gains: probability per second of delay error, per update (RFC 8033's
# and RFC 9332's are below 4); the cap keeps an update's step below 1/4 for
# a millisecond of error.
MAX_GAIN_HZ = 250.0
MIN_GAIN_HZ = 1e-6


class QueueSpec(Strict):
    """One egress queue and the AQM that runs on it. Defaults: Floyd &
    Jacobson's min_th 5, max_th 15 packets (1500 B in 80 B cells: 95 and 285
    cells), max_p 1/50, w_q 0.002 ~ 2^-9; RFC 8289's 5 ms and 100 ms; the
    others' in bfrt_controller/aqm/mechanisms.py (None: the mechanism's own)."""

    port: PortNumber
    queue: Annotated[int, Field(ge=0)]
    mode: Mode
    # Mark ECN-capable packets CE instead of dropping them.
    ecn: bool = False
    # RED
    min_th_cells: Annotated[int, Field(ge=0)] = 95
    max_th_cells: Annotated[int, Field(ge=1)] = 285
    # A drop level has 1/LEVEL_ALWAYS steps: a smaller max_p rounds to "never".
    max_p: Annotated[float, Field(ge=1 / LEVEL_ALWAYS, le=1)] = 0.02
    # w_q = 2^-w_q_shift: the average is the mean of blocks of 2^w_q_shift packets.
    w_q_shift: Annotated[int, Field(ge=0, le=MAX_BLOCK_SHIFT)] = 9
    # CoDel
    target_us: Annotated[float, Field(ge=MIN_TARGET_US, lt=MAX_TARGET_US)] = 5000.0
    interval_us: Annotated[float, Field(ge=MIN_INTERVAL_US, le=MAX_INTERVAL_US)] = 100_000.0
    # Drops whose spacing follows interval/sqrt(count); later ones keep
    # interval/sqrt(count_cap).
    count_cap: Annotated[int, Field(ge=1, le=MAX_COUNT_CAP)] = 64
    # PIE and DualPI2 (one PI)
    target_delay_us: Annotated[float, Field(ge=MIN_TARGET_US, lt=MAX_TARGET_US)] | None = None
    t_update_us: Annotated[float, Field(ge=MIN_INTERVAL_US, le=MAX_INTERVAL_US)] | None = None
    alpha_per_s: Annotated[float, Field(ge=MIN_GAIN_HZ, le=MAX_GAIN_HZ)] | None = None
    beta_per_s: Annotated[float, Field(ge=MIN_GAIN_HZ, le=MAX_GAIN_HZ)] | None = None
    # PIE: ECN-capable packets are marked while p is below it, dropped above.
    mark_max: Annotated[float, Field(gt=0, le=1)] | None = None
    # DualPI2: the pair's L4S queue (same port) and its native step.
    l_queue: Annotated[int, Field(ge=0)] | None = None
    l_step_us: Annotated[float, Field(ge=MIN_TARGET_US, lt=MAX_TARGET_US)] | None = None
    # DCTCP's K, DA-DCTCP's K1 and K2 (cells of the queue as the packet leaves)
    k_cells: Annotated[int, Field(ge=1)] | None = None
    k1_cells: Annotated[int, Field(ge=1)] | None = None
    k2_cells: Annotated[int, Field(ge=1)] | None = None

    def setting(self, name: str) -> float:
        """A setting as the queue runs it: given, or its mechanism's default."""
        value = getattr(self, name)
        if value is None:
            return DEFAULTS[self.mode][name]
        return float(value) if isinstance(value, float) else int(value)

    @model_validator(mode="after")
    def _order(self) -> QueueSpec:
        # A setting of another mechanism would be kept and never used: an
        # operator who wrote min_th_cells on a CoDel queue meant something
        # else. Its default (what a saved state file holds) is no setting.
        for name in sorted(set(type(self).model_fields) - USED_BY[self.mode]):
            if name in ("port", "queue", "mode", "ecn"):
                continue
            if getattr(self, name) != type(self).model_fields[name].default:
                users = [m for m, used in USED_BY.items() if name in used]
                raise ValueError(
                    f"{name} is a {'/'.join(users)} setting: a {self.mode} queue does not use "
                    "it (remove it, or change the queue's mode)"
                )
        if self.mode == "red" and self.min_th_cells >= self.max_th_cells:
            raise ValueError(
                f"min_th_cells {self.min_th_cells} must be below max_th_cells {self.max_th_cells}"
            )
        if self.mode == "dualpi2":
            if self.l_queue is None:
                raise ValueError("a dualpi2 queue needs l_queue, its pair's L4S queue")
            if self.l_queue == self.queue:
                raise ValueError(f"l_queue {self.l_queue} is the classic queue itself")
        if self.mode == "dadctcp" and self.setting("k1_cells") >= self.setting("k2_cells"):
            raise ValueError(
                f"k1_cells {self.setting('k1_cells')} must be below k2_cells "
                f"{self.setting('k2_cells')}"
            )
        return self

    def pi_gains(self) -> PiGains:
        return PiGains(
            self.setting("alpha_per_s"), self.setting("beta_per_s"), self.setting("target_delay_us")
        )


class AqmConfig(Strict):
    program: Literal["aqm"] = "aqm"
    chip: Literal["tofino", "tofino2"] = "tofino"
    routes: list[Route] = []
    trusted_ports: list[PortNumber] = []
    # The sources each host port's hosts may use (tna/include/source_guard.p4).
    source_bindings: list[SourceBinding] = []
    queues: Annotated[list[QueueSpec], Field(min_length=1, max_length=AQM_SLOTS)]
    levels: Levels = Levels()


# Curves: queues with the same settings read the same red_level or
# codel_due entries (the table's curve key, 8 bits).
MAX_CURVES = 256


def curve_settings(q: QueueSpec) -> tuple[object, ...]:
    """What a queue's curve depends on: equal settings, one curve."""
    if q.mode == "red":
        return (q.min_th_cells, q.max_th_cells, q.max_p, q.w_q_shift)
    if q.mode == "codel":
        return (q.interval_us, q.count_cap)
    gains = q.pi_gains()
    return (gains.alpha, gains.beta, gains.target_us)


def curves(cfg: AqmConfig, family: str) -> list[QueueSpec]:
    """One queue per distinct curve of the curve family ("red", "codel",
    "pi"), in the order the queues first use them: a curve's index is its id."""
    out: dict[tuple[object, ...], QueueSpec] = {}
    for q in cfg.queues:
        if CURVE_FAMILY[q.mode] == family:
            out.setdefault(curve_settings(q), q)
    return list(out.values())


def curve_of(cfg: AqmConfig, q: QueueSpec) -> int:
    family = CURVE_FAMILY[q.mode]
    if family is None:
        return 0
    return [curve_settings(c) for c in curves(cfg, family)].index(curve_settings(q))


def red_curve_entries(q: QueueSpec, cfg: AqmConfig) -> int:
    return len(
        red_entries(q.min_th_cells, q.max_th_cells, q.max_p, q.w_q_shift, cfg.levels.max_steps)
    )


def codel_curve_entries(q: QueueSpec) -> int:
    return len(codel_entries(q.interval_us, q.count_cap))


def check_family_queue(field: str, q: QueueSpec, profile: HwProfile) -> None:
    """The new mechanisms' chip limits: queue ids and depths in cells."""
    if q.l_queue is not None and q.l_queue > profile.max_queue_id:
        raise ConfigError(
            f"{field}.l_queue",
            f"queue {q.l_queue} exceeds {profile.chip}'s max queue id {profile.max_queue_id}",
        )
    for name in ("k_cells", "k1_cells", "k2_cells"):
        if name in USED_BY[q.mode] and q.setting(name) > profile.max_qdepth_cells:
            raise ConfigError(
                f"{field}.{name}",
                f"{q.setting(name)} cells is deeper than a {profile.chip} queue can hold "
                f"(max {profile.max_qdepth_cells})",
            )


def check_queue(field: str, q: QueueSpec, profile: HwProfile) -> None:
    check_port(f"{field}.port", q.port, profile, front_panel=True)
    check_queue_id(f"{field}.queue", q.queue, profile)
    if q.mode == "red" and q.min_th_cells >= profile.max_qdepth_cells:
        raise ConfigError(
            f"{field}.min_th_cells",
            f"{q.min_th_cells} cells can never be reached: {profile.chip} reports queue depth "
            f"in {profile.enq_qdepth_bits} bits (max {profile.max_qdepth_cells})",
        )
    if q.mode == "red" and q.max_th_cells > profile.max_qdepth_cells:
        # Refused here, not by the switch: a queue never holds more cells
        # than its depth field counts (and 2^32 is no table value).
        raise ConfigError(
            f"{field}.max_th_cells",
            f"{q.max_th_cells} cells is deeper than a {profile.chip} queue can hold "
            f"(max {profile.max_qdepth_cells})",
        )


def check_against(cfg: AqmConfig, profile: HwProfile) -> None:
    """Chip limits; raises ConfigError naming the first field out of range."""
    check_port_guards(cfg.routes, cfg.trusted_ports, cfg.source_bindings, profile)
    for i, q in enumerate(cfg.queues):
        check_queue(f"queues[{i}]", q, profile)
        check_family_queue(f"queues[{i}]", q, profile)
    # A DualPI2 pair's L4S queue is a queue of its own: no other entry may name it.
    queues = [(q.port, q.queue) for q in cfg.queues]
    queues += [(q.port, q.l_queue) for q in cfg.queues if q.l_queue is not None]
    no_repeats("queues", iter(queues), " (port, queue) (an l_queue counts)")
    for family in ("red", "codel", "pi"):
        if len(curves(cfg, family)) > MAX_CURVES:
            raise ConfigError(
                "queues",
                f"{len(curves(cfg, family))} distinct {family} settings, more than the "
                f"{MAX_CURVES} curves the table's key holds",
            )
    pi_curves = curves(cfg, "pi")
    pi = sum(len(pi_terms_entries(c.pi_gains())) for c in pi_curves)
    if pi > AQM_PI_TERMS_ENTRIES:
        raise ConfigError(
            "queues",
            f"the PIE and DualPI2 queues' {len(pi_curves)} distinct gains need {pi} pi_terms "
            f"entries, more than the table's {AQM_PI_TERMS_ENTRIES}; use fewer distinct settings",
        )
    red = sum(red_curve_entries(c, cfg) for c in curves(cfg, "red"))
    if red > AQM_RED_LEVEL_ENTRIES:
        raise ConfigError(
            "queues",
            f"the RED queues' curves need {red} red_level entries, more than the table's "
            f"{AQM_RED_LEVEL_ENTRIES}; use fewer levels.max_steps or fewer distinct settings",
        )
    codel = sum(codel_curve_entries(c) for c in curves(cfg, "codel"))
    if codel > AQM_CODEL_DUE_ENTRIES:
        raise ConfigError(
            "queues",
            f"the CoDel queues' curves need {codel} codel_due entries, more than the table's "
            f"{AQM_CODEL_DUE_ENTRIES}; use a smaller count_cap or fewer distinct settings",
        )


def parse_config(raw: object, source: str = "") -> AqmConfig:
    return parse_on_chip(AqmConfig, raw, source, check_against)


def load_config(path: str | Path) -> AqmConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "aqm.yaml"
