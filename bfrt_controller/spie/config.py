# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""S-PIE configuration: what an operator writes, validated before anything
is sent.

Structure and types are checked by pydantic; limits that depend on the chip
(ports) and on the data plane's fields (the PI tables' delay range, the
sketch's columns, the epoch's power-of-two interval) by `check_against`,
so every error names its field and nothing is written when any is wrong.

Defaults: seed 002 gives no PIE parameters, so RFC 8033's (and ns-3's
PieQueueDisc's): alpha 0.125, beta 1.25, del_ref 15 ms, T_update 15 ms.
Nor does it give the sketch's size or clearing interval: 3 rows (compiled)
of 1024 columns, and 2^24 ticks of 64 ns (1.07 s) between clearings.

At a chip's line rate a 1.07 s epoch holds 1.6e8 minimum-size packets
(100 Gb/s), far beyond what the 16-bit capped counters and the 32-bit sum
of squares hold. So the epoch is shortened (`sketch_scaling`) until a whole
epoch of minimum-size packets at the fastest S-PIE port's speed is within
the count budget, and below 2^16 ticks (4.2 ms) the sketch counts 1 packet
in 2^u instead (tna/spie/README.md, "Sized for the ports it guards").

Each port's speed is `ports[i].speed_gbps`, which a deployment's
front_panel fills for the ports it brings up (bfrt_controller/deployment.py);
a port with neither is taken at the chip's fastest speed, the one sizing
that holds whatever the port runs at. The sketch is one structure shared by
every port (its epoch and sample are one keyless default action: per port
they would cost the ingress a stage), so it is sized for the fastest S-PIE
port: there every count stays exact; a slower port's flows are judged
large from a larger share (tna/spie/README.md, "Sized for the ports it guards").
`sketch.line_rate_gbps` overrides the sizing rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from hw_profiles import HwProfile
from models.switch.common import CLOCK_TICK_SHIFT
from models.switch.spie import SPIE_COUNT_CAP, SPIE_SKETCH_COLUMNS, SPIE_SLOTS

from ..common import (
    PortNumber,
    Route,
    SourceBinding,
    Strict,
    check_port,
    check_port_guards,
    no_repeats,
)
from ..errors import ConfigError
from ..validation import load_yaml, parse_on_chip
from .tables import D_LIMIT, DELAY_UNIT_S, large_min_count, nearest_shift

# spie: seed 002's Algorithm 2 (while congested, drop only flows judged
# large and admit the rest; PIE's p otherwise); spie_pie: the same plus
# PIE's p for every packet while congested; pie: plain PIE
# (tna/spie/README.md, departure 12).
Mode = Literal["pie", "spie", "spie_pie"]
# The modes that judge flows by the sketch.
SKETCH_MODES = ("spie", "spie_pie")
# The epoch is the clock with its low k bits cleared, 16 <= k <= 24.
EPOCH_SHIFT_MIN = 16
EPOCH_SHIFT_MAX = 24
# Times compared by the sign of a 32-bit difference of 64 ns ticks.
MAX_TIMER_US = 60_000_000.0
# del_ref in the PI tables' range: d = del_cur - del_ref within +-2^15 units.
MAX_DEL_REF_US = (D_LIMIT - 1) * DELAY_UNIT_S * 1e6
MIRROR_SESSION_MAX = 1015
CLOCK_TICK_NS = 1 << CLOCK_TICK_SHIFT
# The least the data plane tells apart: timers count 64 ns ticks (below half
# a tick `ticks` would write one), delays the PI tables' 1024 ns units (below
# half a unit del_ref would be 0).
MIN_TIMER_US = CLOCK_TICK_NS / 1000
MIN_DEL_REF_US = DELAY_UNIT_S * 1e6
# A minimum-size Ethernet frame on the wire: 64 bytes, 8 of preamble, 12 of
# inter-frame gap.
MIN_WIRE_BYTES = 84
# Counts one epoch at line rate may reach when the sketch samples: below the
# counters' cap by more than 5 standard deviations of a sampled count, and
# S <= budget^2 / 2 < 2^31.
COUNT_BUDGET = 60_000
# Counting every packet there is no chance in the count: up to one below
# the cap (a line-rate epoch never reaches it), S < 2^31 still.
COUNT_BUDGET_EXACT = SPIE_COUNT_CAP - 1
# A 1500-byte IP packet on the wire (Ethernet header and FCS, preamble,
# inter-frame gap): the packets a flow of full-size segments sends.
FULL_WIRE_BYTES = 1538
# 1 packet in 2^16 at most: beyond any chip's line rate at the shortest epoch.
SAMPLE_SHIFT_MAX = 16


class PortSpec(Strict):
    port: PortNumber
    mode: Mode = "spie"
    # The rate the port drains at: its speed, or its shaper's rate when the
    # traffic manager shapes it below. A deployment's front_panel gives it
    # for the ports it brings up; none: the chip's fastest port.
    speed_gbps: Annotated[float, Field(gt=0)] | None = None


class PieParams(Strict):
    # Gains in 1/s (RFC 8033: p += alpha (qdelay - ref) + beta (qdelay - old), delays in s).
    alpha_per_s: Annotated[float, Field(ge=0, le=1000)] = 0.125
    beta_per_s: Annotated[float, Field(ge=0, le=1000)] = 1.25
    del_ref_us: Annotated[float, Field(ge=MIN_DEL_REF_US)] = 15_000.0
    t_update_us: Annotated[float, Field(ge=MIN_TIMER_US, le=MAX_TIMER_US)] = 15_000.0
    # An update older than this reads as "queue empty": p and the
    # congestion flag are ignored (no departures, no updates).
    stale_after_us: Annotated[float, Field(ge=MIN_TIMER_US, le=MAX_TIMER_US)] = 60_000.0

    @model_validator(mode="after")
    def _stale_after_update(self) -> PieParams:
        # Shorter than one update period, every p reads as stale between two
        # updates: PIE would never mark or drop.
        if self.stale_after_us < self.t_update_us:
            raise ValueError(
                f"stale_after_us {self.stale_after_us:g} must be at least "
                f"t_update_us {self.t_update_us:g}"
            )
        return self


# Columns per concurrent flow the sketch keeps apart: with fewer, collisions
# lift the weighted average and a large flow escapes (tna/spie/README.md,
# "How many columns"; scripts/sketch_columns.py: a 4x flow is admitted at
# Algorithm 2's own share up to columns/4 flows, all of it from columns/2;
# 8 a flow is twice that).
COLUMNS_PER_FLOW = 8
DEFAULT_COLUMNS = 1024


class SketchParams(Strict):
    columns: Annotated[int, Field(ge=1, le=SPIE_SKETCH_COLUMNS)] = DEFAULT_COLUMNS
    # The flows the sketch must tell apart at once (every S-PIE and PIE
    # port's, and every other routed flow's: the sketch counts them all).
    # Given, it sets `columns` (COLUMNS_PER_FLOW each, a power of two) or
    # checks the columns given.
    expected_flows: Annotated[int, Field(ge=1)] | None = None
    # ClearMemory's interval: rounded to the nearest 2^k ticks of 64 ns,
    # k in 16..24 (4.2 ms .. 1.07 s).
    clear_interval_us: Annotated[float, Field(gt=0)] = 1_073_741.824
    # Override: size the sketch for this rate instead of the fastest S-PIE
    # port's speed (ports[].speed_gbps).
    line_rate_gbps: Annotated[float, Field(gt=0)] | None = None
    # A packet of a flow judged large while congested is dropped with this
    # probability (seed 002's Algorithm 2: 1). 1/2 keeps enough of a large
    # flow's window arriving for TCP to recover without a timeout
    # (tna/spie/README.md, departure 13).
    large_drop_probability: Annotated[float, Field(gt=0, le=1)] = 0.5

    @model_validator(mode="before")
    @classmethod
    def _columns_for_the_flows(cls, raw: Any) -> Any:
        if not isinstance(raw, dict) or not isinstance(raw.get("expected_flows"), int):
            return raw
        flows = raw["expected_flows"]
        needed = COLUMNS_PER_FLOW * flows
        columns = raw.get("columns")
        if columns is None:
            if needed > SPIE_SKETCH_COLUMNS:
                raise ValueError(
                    f"expected_flows {flows} needs {needed} columns ({COLUMNS_PER_FLOW} a "
                    f"flow); the sketch has at most {SPIE_SKETCH_COLUMNS}"
                )
            return {**raw, "columns": 1 << (needed - 1).bit_length()}
        if isinstance(columns, int) and columns < needed:
            raise ValueError(
                f"columns {columns} keep {columns // COLUMNS_PER_FLOW} flows apart "
                f"({COLUMNS_PER_FLOW} a flow), fewer than expected_flows {flows}: a large "
                "flow would be admitted whole"
            )
        return raw


class SpieConfig(Strict):
    program: Literal["spie"] = "spie"
    chip: Literal["tofino", "tofino2"] = "tofino"
    routes: list[Route] = []
    trusted_ports: list[PortNumber] = []
    source_bindings: list[SourceBinding] = []
    ports: Annotated[list[PortSpec], Field(min_length=1, max_length=SPIE_SLOTS)]
    pie: PieParams = PieParams()
    sketch: SketchParams = SketchParams()
    # Mirror sessions of the PI steps' copies: this one for pipe 0's ports,
    # the next for pipe 1's, ...
    mirror_session_base: Annotated[int, Field(ge=1, le=MIRROR_SESSION_MAX)] = 40

    def with_port_speeds(self, speeds: dict[int, float]) -> SpieConfig:
        """The config with each port's speed taken from `speeds` (device port
        -> Gb/s: a deployment's front_panel) where it gives none; a speed
        above the port's own is refused (a port drains no faster)."""
        ports = []
        for i, spec in enumerate(self.ports):
            front = speeds.get(spec.port)
            if front is not None and spec.speed_gbps is not None and spec.speed_gbps > front:
                raise ConfigError(
                    f"ports[{i}].speed_gbps",
                    f"{spec.speed_gbps:g} Gb/s is above device port {spec.port}'s front-panel "
                    f"speed ({front:g} Gb/s)",
                )
            if front is not None and spec.speed_gbps is None:
                spec = spec.model_copy(update={"speed_gbps": front})
            ports.append(spec)
        return self.model_copy(update={"ports": ports})


def ticks(us: float) -> int:
    return max(1, round(us * 1000 / CLOCK_TICK_NS))


def epoch_shift(cfg: SpieConfig) -> int:
    return nearest_shift(cfg.sketch.clear_interval_us * 1000 / CLOCK_TICK_NS, 0, 64)


def port_speed_gbps(spec: PortSpec, profile: HwProfile) -> float:
    """The port's speed as configured; none: the chip's fastest port."""
    return float(profile.max_port_gbps) if spec.speed_gbps is None else spec.speed_gbps


def line_rate_gbps(cfg: SpieConfig, profile: HwProfile) -> float:
    """The rate the shared sketch is sized for: the override, else the
    fastest port whose mode uses the sketch (else the fastest port)."""
    if cfg.sketch.line_rate_gbps is not None:
        return cfg.sketch.line_rate_gbps
    sketch_ports = [p for p in cfg.ports if p.mode in SKETCH_MODES] or cfg.ports
    return max(port_speed_gbps(p, profile) for p in sketch_ports)


def line_rate_pps(gbps: float) -> float:
    """Minimum-size packets per second at `gbps`."""
    return gbps * 1e9 / (MIN_WIRE_BYTES * 8)


def sample_shift_for(packets: float) -> int:
    """u: the least sampling that keeps `packets` within the budget (every
    packet counted up to COUNT_BUDGET_EXACT, sampled ones to COUNT_BUDGET)."""
    if packets <= COUNT_BUDGET_EXACT:
        return 0
    return max(1, math.ceil(math.log2(packets / COUNT_BUDGET)))


def scaling_for(gbps: float, k_configured: int = EPOCH_SHIFT_MAX) -> tuple[int, int]:
    """(k, u) for a sketch sized for `gbps`: the configured epoch shortened
    first (every packet counted keeps equal flows' counts equal); only at
    2^16 ticks does u grow (sampled counts of equal flows differ by chance)."""
    pps = line_rate_pps(gbps)

    def shift_for(k: int) -> int:
        return sample_shift_for(pps * (1 << k) * CLOCK_TICK_NS * 1e-9)

    k = k_configured
    while shift_for(k) > 0 and k > EPOCH_SHIFT_MIN:
        k -= 1
    return k, shift_for(k)


def sketch_scaling(cfg: SpieConfig, profile: HwProfile) -> tuple[int, int]:
    """(k, u): the epoch is 2^k ticks and 1 packet in 2^u is counted, so
    that one epoch of minimum-size packets at the sizing rate
    (line_rate_gbps) stays within the count budget."""
    return scaling_for(line_rate_gbps(cfg, profile), epoch_shift(cfg))


@dataclass(frozen=True)
class Sizing:
    """What a sketch sized for one port speed does (tna/spie/README.md's table)."""

    gbps: float
    epoch_shift: int
    sample_shift: int
    min_count: int
    # The least share of the port a flow of 1500-byte packets must hold over
    # a whole epoch to be judged (it reaches min_count counts), and how long
    # a flow at the whole port's rate takes to get there.
    smallest_share: float
    judged_after_s: float
    # An epoch of minimum-size packets at the port's speed: m_count (or one
    # flow's row count) and S, at most count (count - 1) / 2.
    max_count: float
    max_sum: float

    @property
    def epoch_s(self) -> float:
        return (1 << self.epoch_shift) * CLOCK_TICK_NS * 1e-9


def sizing(port_gbps: float, sized_for_gbps: float | None = None) -> Sizing:
    """The sketch as a port of `port_gbps` sees it when the sketch is sized
    for `sized_for_gbps` (default: the port's own speed)."""
    k, u = scaling_for(sized_for_gbps or port_gbps)
    epoch_s = (1 << k) * CLOCK_TICK_NS * 1e-9
    need = large_min_count(u) << u  # packets
    full_pps = port_gbps * 1e9 / (FULL_WIRE_BYTES * 8)
    count = line_rate_pps(port_gbps) * epoch_s / (1 << u)
    return Sizing(
        gbps=port_gbps,
        epoch_shift=k,
        sample_shift=u,
        min_count=large_min_count(u),
        smallest_share=need / (full_pps * epoch_s),
        judged_after_s=need / full_pps,
        max_count=count,
        max_sum=count * (count - 1) / 2,
    )


def check_against(cfg: SpieConfig, profile: HwProfile) -> None:
    """Chip and data-plane limits; ConfigError naming the first bad field."""
    check_port_guards(cfg.routes, cfg.trusted_ports, cfg.source_bindings, profile)
    for i, spec in enumerate(cfg.ports):
        check_port(f"ports[{i}].port", spec.port, profile, front_panel=True)
        if spec.speed_gbps is not None and spec.speed_gbps > profile.max_port_gbps:
            raise ConfigError(
                f"ports[{i}].speed_gbps",
                f"{spec.speed_gbps:g} Gb/s is beyond the chip's fastest port "
                f"({profile.max_port_gbps} Gb/s)",
            )
    no_repeats("ports", (spec.port for spec in cfg.ports))
    if cfg.pie.del_ref_us > MAX_DEL_REF_US:
        raise ConfigError(
            "pie.del_ref_us",
            f"{cfg.pie.del_ref_us} us is beyond the delay field's range: the PI tables take "
            f"del_cur - del_ref within +-2^15 units of 1024 ns (at most {MAX_DEL_REF_US:.0f} us)",
        )
    # One step's delta is a signed 32-bit number of 2^-32 units: at most
    # half of p's range, reached when both differences are at the tables'
    # range end.
    step = (cfg.pie.alpha_per_s + cfg.pie.beta_per_s) * D_LIMIT * DELAY_UNIT_S
    if step >= 0.5:
        raise ConfigError(
            "pie.beta_per_s",
            f"alpha + beta = {cfg.pie.alpha_per_s + cfg.pie.beta_per_s:g}/s could move p by "
            f"{step:.2f} in one step; the data plane's step holds less than 0.5 (alpha + beta < "
            f"{0.5 / (D_LIMIT * DELAY_UNIT_S):.1f}/s)",
        )
    w = cfg.sketch.columns
    if w & (w - 1):
        raise ConfigError(
            "sketch.columns", f"{w} is not a power of two (the hash is masked to the width)"
        )
    k = epoch_shift(cfg)
    if not EPOCH_SHIFT_MIN <= k <= EPOCH_SHIFT_MAX:
        lo = (1 << EPOCH_SHIFT_MIN) * CLOCK_TICK_NS / 1000
        hi = (1 << EPOCH_SHIFT_MAX) * CLOCK_TICK_NS / 1000
        raise ConfigError(
            "sketch.clear_interval_us",
            f"{cfg.sketch.clear_interval_us} us is outside {lo:.0f}..{hi:.0f} us "
            "(2^16..2^24 ticks of 64 ns)",
        )
    rate = line_rate_gbps(cfg, profile)
    if rate > profile.max_port_gbps:
        raise ConfigError(
            "sketch.line_rate_gbps",
            f"{rate:g} Gb/s is beyond the chip's fastest port ({profile.max_port_gbps} Gb/s)",
        )
    k, u = sketch_scaling(cfg, profile)
    if u > SAMPLE_SHIFT_MAX:
        raise ConfigError(
            "sketch.line_rate_gbps",
            f"{rate:g} Gb/s needs 1 packet in 2^{u} counted even with the shortest epoch "
            f"(2^{EPOCH_SHIFT_MIN} ticks); at most 2^{SAMPLE_SHIFT_MAX}",
        )
    assert COUNT_BUDGET < COUNT_BUDGET_EXACT < SPIE_COUNT_CAP
    last = cfg.mirror_session_base + profile.pipes - 1
    if not profile.valid_mirror_session(cfg.mirror_session_base) or not (
        profile.valid_mirror_session(last)
    ):
        raise ConfigError(
            "mirror_session_base",
            f"sessions {cfg.mirror_session_base}..{last} (one per pipe) outside "
            f"{profile.mirror_session_min}..{profile.mirror_session_max}",
        )


def parse_config(raw: object, source: str = "") -> SpieConfig:
    return parse_on_chip(SpieConfig, raw, source, check_against)


def load_config(path: str | Path) -> SpieConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "spie.yaml"


# The port speeds tna/spie/README.md's sizing table lists (Tofino2 only
# from 200 Gb/s).
TABLE_SPEEDS_GBPS = (1, 10, 25, 40, 100, 200, 400)


def sizing_table() -> list[str]:
    """tna/spie/README.md's table of what the sketch does at each port speed
    when every S-PIE port runs at it (tests/test_spie_sizing.py holds the
    README to it)."""
    lines = [
        "| port speed | epoch (T_threshold) | counted | judged from | smallest share "
        "judged | at the whole port's rate, judged after | largest count in an epoch "
        "(minimum-size line rate) | largest S |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for gbps in TABLE_SPEEDS_GBPS:
        z = sizing(gbps)
        counted = "every packet" if z.sample_shift == 0 else f"1 in {1 << z.sample_shift}"
        chip = " (Tofino2)" if gbps > 100 else ""
        lines.append(
            f"| {gbps} Gb/s{chip} | {z.epoch_s * 1e3:.2f} ms (2^{z.epoch_shift} ticks) | "
            f"{counted} | {z.min_count} counts | {z.smallest_share * 100:.2f} % | "
            f"{z.judged_after_s * 1e3:.3f} ms | {z.max_count:,.0f} | {z.max_sum:.3g} |"
        )
    return lines
