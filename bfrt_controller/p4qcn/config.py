# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN configuration: what an operator writes, validated before anything is sent.

Structure and types are checked by pydantic; limits that depend on the chip
(ports, queue ids, mirror sessions, queue depth, table size) by
`check_against`, so every error names its field (queues[1].q_max_cells) and
nothing is written when any field is wrong.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from hw_profiles import HwProfile
from models.p4qcn_thresholds import pfc_bound_violation
from models.switch.common import CLOCK_TICK_SHIFT
from models.switch.p4qcn import P4QCN_PROBABILITY_ENTRIES

from ..common import (
    FeedbackPort,
    PortNumber,
    Route,
    SourceBinding,
    Strict,
    check_host_feedback,
    check_port,
    check_queue_id,
    no_repeats,
)
from ..errors import ConfigError
from ..switch import DEFAULT_IGNORE_COS, MIN_PPG_HYSTERESIS_CELLS
from ..ternary_levels import Levels
from ..validation import load_yaml, parse_on_chip
from .levels import ternary_entries

TICK_NS = 1 << CLOCK_TICK_SHIFT
# N at most 1 s: far above any feedback interval, far below the 275 s the
# 32-bit tick clock covers (tna/p4qcn/README.md).
MAX_FEEDBACK_INTERVAL_US = 1_000_000.0
# The paper gives N no value; DCQCN's CNP interval (models/baselines/p4qcn_cp.py).
DEFAULT_FEEDBACK_INTERVAL_US = 50.0
# One tick of the clock N is counted in: shorter would be written as one tick.
MIN_FEEDBACK_INTERVAL_US = TICK_NS / 1000
Mode = Literal["two_point", "three_point"]


def interval_ticks(feedback_interval_us: float) -> int:
    """N in the clock's 64 ns ticks, rounded up so the limit is never shorter."""
    return math.ceil(feedback_interval_us * 1000 / TICK_NS)


# A port whose senders get feedback, and its mirror session.
PortSpec = FeedbackPort


class QueueSpec(Strict):
    """One congestion point: an egress queue and its Eq. 1."""

    port: PortNumber
    queue: Annotated[int, Field(ge=0)]
    q_min_cells: Annotated[int, Field(ge=0)]
    q_max_cells: Annotated[int, Field(ge=0)]
    # P per cell above Q_min; None: 1 / (Q_max - Q_min), so P reaches 1 at Q_max.
    alpha_per_cell: Annotated[float, Field(gt=0, le=1)] | None = None
    mode: Mode = "two_point"
    feedback_interval_us: Annotated[
        float, Field(ge=MIN_FEEDBACK_INTERVAL_US, le=MAX_FEEDBACK_INTERVAL_US)
    ] = DEFAULT_FEEDBACK_INTERVAL_US

    @model_validator(mode="after")
    def _order(self) -> QueueSpec:
        if self.q_min_cells > self.q_max_cells:
            raise ValueError(
                f"q_min_cells {self.q_min_cells} exceeds q_max_cells {self.q_max_cells}"
            )
        return self


class PfcWatchdogSpec(Strict):
    """The PFC watchdog (bfrt_controller/pfc_watchdog.py), polled on a timer
    of its own in the daemon (every detection_ms / 2): a port paused
    `detection_ms` in a row is in a storm; `forward` then stops honouring
    its pauses until none has come for `restoration_ms`, `alert` only
    reports. The knobs of SONiC's pfcwd (whose `drop` action, dropping the
    queue's packets, has no TM table here)."""

    detection_ms: Annotated[int, Field(ge=1, le=60_000)] = 200
    restoration_ms: Annotated[int, Field(ge=1, le=60_000)] = 200
    action: Literal["alert", "forward"] = "forward"
    # Off: configured but not polled (`set watchdog=off` at run time; a
    # daemon takes this with a reload, or the set through its control socket).
    enabled: bool = True


class TrafficClass(Strict):
    """A DSCP's egress queue and ingress CoS (p4qcn.p4's traffic_class).
    Unlisted DSCPs: queue 0, iCoS 0. The iCoS picks the PPG that counts the
    packet, so a lossless class is one whose iCoS is in `pfc.icos`."""

    dscp: Annotated[int, Field(ge=0, le=63)]
    queue: Annotated[int, Field(ge=0)] = 0
    icos: Annotated[int, Field(ge=0, le=7)] = 0


class FeedbackClass(Strict):
    """Where the feedback copies wait: the mirror sessions' queue
    ($egress_port_queue) and iCoS ($ingress_cos). Out of the lossless
    queues, a congestion notification does not wait behind the PFC pause it
    would have made unnecessary (as RoCE deployments give CNPs their own
    queue)."""

    queue: Annotated[int, Field(ge=0)] = 0
    icos: Annotated[int, Field(ge=0, le=7)] = 0


PfcPoolName = Literal["IG_APP_POOL_0", "IG_APP_POOL_1", "IG_APP_POOL_2", "IG_APP_POOL_3"]


class PfcSpec(Strict):
    """Priority flow control in the traffic manager, P4QCN's last resort
    (seed 003): on each of `ports`, send PFC for the lossless class
    (`generate`) and stop its `queues` when the neighbour pauses CoS `cos`
    (`honour`). Off unless given: PFC is a fabric-wide decision (every hop
    honouring, headroom for what is in flight), not one switch's.

    The CoS a pause goes out on is the one tm.port.flowcontrol cos_to_icos
    maps the PPG's iCoS to; the controller writes that map as the identity
    (switch.IDENTITY_COS_TO_ICOS), so `icos` must be `[cos]`: with iCoS 0
    and CoS 3 a switch would pause its neighbours on priority 0 while its
    own queues obey priority 3. Not honouring (`honour: false`, the
    watchdog's `forward`) moves the queues to `ignore_cos`: a CoS no
    neighbour pauses (every ordinary queue is on 0)."""

    cos: Annotated[int, Field(ge=1, le=7)] = 3
    ports: Annotated[list[PortNumber], Field(min_length=1)]
    queues: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)] = [0]
    generate: bool = True
    honour: bool = True
    # The ingress side (a PPG per port, tm.ppg.cfg): the iCoS the program
    # gives the lossless packets (p4qcn.p4 sets none: 0), the pause
    # threshold (Q_PFC: `thresholds` prints it), the resume threshold and
    # the skid headroom for what is in flight (Q_flight), in cells.
    # None: [cos].
    icos: Annotated[list[Annotated[int, Field(ge=0, le=7)]], Field(min_length=1)] | None = None
    ignore_cos: Annotated[int, Field(ge=0, le=7)] = DEFAULT_IGNORE_COS
    xoff_cells: Annotated[int, Field(ge=1, le=0xFFFFFFFF)]
    xon_cells: Annotated[int, Field(ge=0, le=0xFFFFFFFF)] | None = None
    headroom_cells: Annotated[int, Field(ge=0, le=0xFFFFFFFF)]
    watchdog: PfcWatchdogSpec | None = PfcWatchdogSpec()
    # The buffer the lossless PPGs use: the ingress application pool
    # (tm.ppg.cfg pool_id) and its size (tm.pool.cfg; None: as the SDE set
    # it up), its per-iCoS PFC limit (tm.pool.app_pfc, = xoff_cells), and
    # the skid pool the headrooms draw on (IG_SKID_POOL, which the SDE
    # starts at zero; None: the sum of headroom_cells over `ports`).
    pool: PfcPoolName = "IG_APP_POOL_0"
    pool_size_cells: Annotated[int, Field(ge=1, le=0xFFFFFFFF)] | None = None
    skid_pool_cells: Annotated[int, Field(ge=0, le=0xFFFFFFFF)] | None = None

    @model_validator(mode="after")
    def _order(self) -> PfcSpec:
        if self.xon_cells is not None and self.xon_cells > self.xoff_cells:
            raise ValueError("xon_cells must not exceed xoff_cells")
        return self

    @property
    def lossless_icos(self) -> list[int]:
        return [self.cos] if self.icos is None else list(self.icos)

    @property
    def xon(self) -> int:
        """Resume this far down: given, else the TM's least hysteresis below
        xoff (32 cells, more than one 1500 B frame of 80 B cells, so a pause
        does not flap per packet; switch.MIN_PPG_HYSTERESIS_CELLS)."""
        if self.xon_cells is not None:
            return self.xon_cells
        return max(0, self.xoff_cells - MIN_PPG_HYSTERESIS_CELLS)

    @property
    def skid_pool(self) -> int:
        """IG_SKID_POOL's size: given, else room for every port's headroom."""
        if self.skid_pool_cells is not None:
            return self.skid_pool_cells
        return self.headroom_cells * len(self.ports)


class P4qcnConfig(Strict):
    program: Literal["p4qcn"] = "p4qcn"
    chip: Literal["tofino", "tofino2"] = "tofino"
    routes: list[Route] = []
    trusted_ports: list[PortNumber] = []
    # The sources each host port's hosts may use (tna/include/source_guard.p4);
    # every untrusted port a route or a feedback session names must be bound.
    source_bindings: list[SourceBinding] = []
    ports: list[PortSpec] = []
    queues: Annotated[list[QueueSpec], Field(min_length=1)]
    levels: Levels = Levels()
    traffic_classes: list[TrafficClass] = []
    feedback: FeedbackClass = FeedbackClass()
    # None: PFC off (the TM's power-on state, no pause sent or honoured).
    pfc: PfcSpec | None = None

    def queue_index(self, port: int, queue: int) -> int:
        for i, q in enumerate(self.queues):
            if (q.port, q.queue) == (port, queue):
                return i
        known = ", ".join(f"{q.port}/{q.queue}" for q in self.queues)
        raise ConfigError("queue", f"no congestion point {port}/{queue} (known: {known})")


def check_queue(field: str, q: QueueSpec, profile: HwProfile) -> None:
    check_port(f"{field}.port", q.port, profile, front_panel=True)
    check_queue_id(f"{field}.queue", q.queue, profile)
    if q.q_max_cells > profile.max_qdepth_cells:
        raise ConfigError(
            f"{field}.q_max_cells",
            f"{q.q_max_cells} cells can never be reached: {profile.chip} reports queue depth "
            f"in {profile.enq_qdepth_bits} bits (max {profile.max_qdepth_cells})",
        )


def entry_count(cfg: P4qcnConfig, queues: list[QueueSpec] | None = None) -> int:
    return sum(
        len(ternary_entries(q.q_min_cells, q.q_max_cells, q.alpha_per_cell, cfg.levels.max_steps))
        for q in (cfg.queues if queues is None else queues)
    )


def check_entry_budget(field: str, cfg: P4qcnConfig, queues: list[QueueSpec]) -> None:
    total = entry_count(cfg, queues)
    if total > P4QCN_PROBABILITY_ENTRIES:
        raise ConfigError(
            field,
            f"{len(queues)} queues need {total} feedback_probability entries, more than the "
            f"table's {P4QCN_PROBABILITY_ENTRIES}; use fewer levels.max_steps or queues",
        )


def check_against(cfg: P4qcnConfig, profile: HwProfile) -> None:
    """Chip limits; raises ConfigError naming the first field out of range."""
    check_host_feedback(cfg.ports, cfg.routes, cfg.trusted_ports, cfg.source_bindings, profile)
    for i, q in enumerate(cfg.queues):
        check_queue(f"queues[{i}]", q, profile)
    no_repeats("queues", ((q.port, q.queue) for q in cfg.queues), " (port, queue)")
    check_entry_budget("queues", cfg, cfg.queues)
    check_classes(cfg, profile)
    if cfg.pfc is not None:
        for i, port in enumerate(cfg.pfc.ports):
            check_port(f"pfc.ports[{i}]", port, profile, front_panel=True)
        no_repeats("pfc.ports", cfg.pfc.ports)
        for i, qid in enumerate(cfg.pfc.queues):
            if qid >= profile.min_queues_per_port:
                raise ConfigError(
                    f"pfc.queues[{i}]",
                    f"queue {qid}: a port has queues 0..{profile.min_queues_per_port - 1} "
                    f"on {profile.chip} as powered on (tm.port.cfg)",
                )
        no_repeats("pfc.queues", cfg.pfc.queues)
        check_pfc_cos(cfg.pfc)
        check_pfc_buffers(cfg.pfc, cfg.traffic_classes, profile)
    for i, q in enumerate(cfg.queues):
        check_pfc_bound(f"queues[{i}].q_max_cells", q, cfg.pfc)


def pfc_covers(pfc: PfcSpec | None, q: QueueSpec) -> bool:
    """This switch pauses the queue's own traffic: PFC is generated on its
    port (a PPG pausing at xoff_cells) and the queue is one the pauses stop.
    Without `generate` no PPG is written, so xoff_cells is never a threshold."""
    return pfc is not None and pfc.generate and q.port in pfc.ports and q.queue in pfc.queues


def check_pfc_bound(
    field: str,
    q: QueueSpec,
    pfc: PfcSpec | None,
    q_flight_cells: int | None = None,
    flight_from: str = "pfc.headroom_cells",
) -> None:
    """Seed 003, 3.2.2: a congestion point's Q_max (its Q_P4QCN) at most
    Q_PFC - Q_flight, so P4QCN's feedback acts before PFC pauses the link.
    Q_PFC is pfc.xoff_cells; Q_flight the config's skid headroom unless the
    caller has computed one (`thresholds`)."""
    if pfc is None or not pfc_covers(pfc, q):
        return
    flight = pfc.headroom_cells if q_flight_cells is None else q_flight_cells
    why = pfc_bound_violation(q.q_max_cells, pfc.xoff_cells, flight)
    if why is not None:
        raise ConfigError(
            field,
            f"queue {q.port}/{q.queue}'s {why}; Q_PFC is pfc.xoff_cells, Q_flight {flight_from}",
        )


def check_pfc_cos(pfc: PfcSpec) -> None:
    """The lossless iCoS is the CoS: the TM pauses the neighbour on the CoS
    tm.port.flowcontrol cos_to_icos maps a PPG's iCoS to, "Array index is
    CoS and array value is iCoS" (open-p4studio traffic_mgr_port_intf.h
    line 264; tm_tofino_hw_intf.c line 5252 builds each PPG's pause mask
    from it), and the controller writes the identity map."""
    if pfc.icos is not None and pfc.icos != [pfc.cos]:
        raise ConfigError(
            "pfc.icos",
            f"the lossless class's iCoS {pfc.icos} and pfc.cos {pfc.cos} disagree: the "
            f"switch would send pauses on CoS {', '.join(map(str, pfc.icos))} "
            f"(tm.port.flowcontrol cos_to_icos, written as CoS c = iCoS c) while its "
            f"queues obey CoS {pfc.cos}; give icos: [{pfc.cos}] (and that iCoS in "
            "traffic_classes), or leave icos out",
        )
    if pfc.ignore_cos == pfc.cos:
        raise ConfigError(
            "pfc.ignore_cos",
            f"{pfc.ignore_cos} is the lossless CoS: queues moved there would still obey its pauses",
        )


def check_classes(cfg: P4qcnConfig, profile: HwProfile) -> None:
    """Queues a port has as powered on (tm.port.cfg), one entry per DSCP."""
    last = profile.min_queues_per_port - 1
    for i, tc in enumerate(cfg.traffic_classes):
        if tc.queue > last:
            raise ConfigError(
                f"traffic_classes[{i}].queue",
                f"queue {tc.queue}: a port has queues 0..{last} on {profile.chip} as powered on",
            )
    no_repeats("traffic_classes", (tc.dscp for tc in cfg.traffic_classes), ".dscp")
    if cfg.feedback.queue > last:
        raise ConfigError(
            "feedback.queue",
            f"queue {cfg.feedback.queue}: a port has queues 0..{last} on {profile.chip} "
            "as powered on",
        )


def check_pfc_buffers(pfc: PfcSpec, classes: list[TrafficClass], profile: HwProfile) -> None:
    """A lossless iCoS some packet has; thresholds and pools the buffer holds."""
    given = {0} | {tc.icos for tc in classes}
    for i, c in enumerate(pfc.lossless_icos):
        if c not in given:
            raise ConfigError(
                f"pfc.icos[{i}]",
                f"no packet has iCoS {c}: traffic_classes gives {sorted(given - {0}) or 'none'} "
                "and every unlisted DSCP is iCoS 0",
            )
    buffer = profile.buffer_cells
    for name in ("xoff_cells", "headroom_cells", "pool_size_cells"):
        v = getattr(pfc, name)
        if v is not None and v > buffer:
            raise ConfigError(f"pfc.{name}", f"{v} cells exceed {profile.chip}'s {buffer}")
    if pfc.skid_pool > buffer:
        raise ConfigError(
            "pfc.skid_pool_cells",
            f"{pfc.skid_pool} cells (headroom_cells x {len(pfc.ports)} ports unless given) "
            f"exceed {profile.chip}'s {buffer}",
        )
    if pfc.pool_size_cells is not None and pfc.xoff_cells > pfc.pool_size_cells:
        raise ConfigError(
            "pfc.xoff_cells",
            f"{pfc.xoff_cells} cells can never be reached in a pool of {pfc.pool_size_cells}",
        )


def parse_config(raw: object, source: str = "") -> P4qcnConfig:
    return parse_on_chip(P4qcnConfig, raw, source, check_against)


def load_config(path: str | Path) -> P4qcnConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "p4qcn.yaml"
