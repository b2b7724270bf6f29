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
epoch of the fastest S-PIE port's line rate is within COUNT_BUDGET counts,
and below 2^16 ticks (4.2 ms) the sketch counts 1 packet in 2^u instead
(tna/spie/README.md, "Widths").
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from hw_profiles import HwProfile, load_profile
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
from ..validation import load_yaml, parse_model
from .tables import D_LIMIT, DELAY_UNIT_S, nearest_shift

Mode = Literal["pie", "spie"]
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
# Counts one epoch at line rate may reach: below the counters' cap by more
# than 5 standard deviations of a sampled count, and S <= budget^2 / 2 <
# 2^31.
COUNT_BUDGET = 60_000
# 1 packet in 2^16 at most: beyond any chip's line rate at the shortest epoch.
SAMPLE_SHIFT_MAX = 16


class PortSpec(Strict):
    port: PortNumber
    mode: Mode = "spie"


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
# Algorithm 2's own share, 0.30, up to columns/8 flows, 0.60 at columns/4,
# all of it from columns/2).
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
    # The fastest S-PIE port's line rate; none: the chip's fastest port
    # (hw_profiles' max_port_gbps), the worst case the counts must hold.
    line_rate_gbps: Annotated[float, Field(gt=0)] | None = None

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


def ticks(us: float) -> int:
    return max(1, round(us * 1000 / CLOCK_TICK_NS))


def epoch_shift(cfg: SpieConfig) -> int:
    return nearest_shift(cfg.sketch.clear_interval_us * 1000 / CLOCK_TICK_NS, 0, 64)


def line_rate_gbps(cfg: SpieConfig, profile: HwProfile) -> float:
    rate = cfg.sketch.line_rate_gbps
    return float(profile.max_port_gbps) if rate is None else rate


def line_rate_pps(gbps: float) -> float:
    """Minimum-size packets per second at `gbps`."""
    return gbps * 1e9 / (MIN_WIRE_BYTES * 8)


def sketch_scaling(cfg: SpieConfig, profile: HwProfile) -> tuple[int, int]:
    """(k, u): the epoch is 2^k ticks and 1 packet in 2^u is counted, so
    that one epoch of minimum-size packets at the line rate is at most
    COUNT_BUDGET counts. The configured epoch is shortened first (every
    packet counted keeps equal flows' counts equal); only at 2^16 ticks
    does u grow (sampled counts of equal flows differ by chance)."""
    k = epoch_shift(cfg)
    pps = line_rate_pps(line_rate_gbps(cfg, profile))

    def shift_for(k: int) -> int:
        packets = pps * (1 << k) * CLOCK_TICK_NS * 1e-9
        return max(0, math.ceil(math.log2(max(packets, 1.0) / COUNT_BUDGET)))

    while shift_for(k) > 0 and k > EPOCH_SHIFT_MIN:
        k -= 1
    return k, shift_for(k)


def check_against(cfg: SpieConfig, profile: HwProfile) -> None:
    """Chip and data-plane limits; ConfigError naming the first bad field."""
    check_port_guards(cfg.routes, cfg.trusted_ports, cfg.source_bindings, profile)
    for i, spec in enumerate(cfg.ports):
        check_port(f"ports[{i}].port", spec.port, profile, front_panel=True)
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
    assert COUNT_BUDGET < SPIE_COUNT_CAP
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
    cfg = parse_model(SpieConfig, raw, source)
    try:
        check_against(cfg, load_profile(cfg.chip))
    except ConfigError as exc:
        raise exc.within(source) from None
    return cfg


def load_config(path: str | Path) -> SpieConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "spie.yaml"
