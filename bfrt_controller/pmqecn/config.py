# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PMQECN configuration: what an operator writes, validated before anything is sent.

Structure and types are checked by pydantic; limits that depend on the chip
(ports, queue ids, mirror session ids, queue depth) by `check_against`,
so every error names its field (classes[1].queue) and nothing is written
when any field is wrong.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from hw_profiles import HwProfile, as_tuple
from models.optimize.problem import DEFAULT_TARGET_UTILISATION
from models.optimize.solution import ThresholdRule

from ..common import (
    FeedbackPort,
    Name,
    PortNumber,
    Prefix,
    Route,
    SourceBinding,
    Strict,
    check_host_feedback,
    check_port,
    check_queue_id,
    cycle_interval,
    no_repeats,
    repeated_name,
)
from ..errors import ConfigError
from ..switch import MAX_DWRR_WEIGHT, MAX_TM_PRIORITY
from ..validation import load_yaml, parse_on_chip
from .drain import LOG_TABLE_SIZE, TICK_NS, log_entries_count

# Class and virtual-queue ids index PMQECN's 1024-entry registers and
# tables (tna/pmqecn/pmqecn.p4); 0 is "unclassified".
MAX_CLASSES = 1023
MAX_VQS = 1023
MAX_WRR_LEVELS = 32  # wrr_level_queue size
# Beyond any chip (12.8 Tb/s of 64-byte frames is 1.9e10 packets/s): a bound
# that keeps the optimiser's arithmetic finite, not a statement about hardware.
MAX_RATE_PPS = 1e11
# One controller cycle a day at most; `time.sleep` overflows far below 1e308.
MAX_INTERVAL_S = 86_400.0
Rate = Annotated[float, Field(gt=0, le=MAX_RATE_PPS)]
# A class's feedback copies, at most one per this many microseconds in each
# ingress pipe (the feedback_gate register, tna/pmqecn/README.md). Without a
# limit a congested 100G port mirrors one copy per arriving packet (8.1 Mpps
# at 1500 B); 50 us is P4QCN's N and DCQCN's CNP interval: 20,000 copies a
# second per class and pipe. 0 turns the limit off (a copy per marked packet).
DEFAULT_FEEDBACK_INTERVAL_US = 50.0
# The gate counts quiet time in 32 bits of 64 ns ticks (275 s); a second is
# far above any useful interval.
MAX_FEEDBACK_INTERVAL_US = 1_000_000.0


def feedback_interval_ticks(feedback_interval_us: float) -> int:
    """The interval in the ingress clock's 64 ns ticks, rounded up so the
    limit is never shorter than configured."""
    return math.ceil(feedback_interval_us * 1000 / TICK_NS)


class PortSpec(FeedbackPort):
    # Gamma and C for the classes leaving through this port, when its speed
    # differs from optimizer.service_rate_pps (a 10G port beside 100G ones).
    service_rate_pps: Rate | None = None


class ClassMatch(Strict):
    src: Prefix | None = None  # IPv4 source prefix; absent: any
    dst: Prefix | None = None  # IPv4 destination prefix; absent: any
    dscp: Annotated[int, Field(ge=0, le=63)] | None = None  # absent: any
    protocol: Annotated[int, Field(ge=0, le=255)] | None = None  # IP protocol; absent: any


class ClassSpec(Strict):
    id: Annotated[int, Field(ge=1, le=MAX_CLASSES)]  # the class's index in the P4's registers
    # What `set-threshold NAME=...`, `status` and the metrics' labels call the
    # class: an operator's name (common.NAME_DOC), never a number.
    name: Name
    match: ClassMatch
    # The classify entry's $MATCH_PRIORITY, a uint32 in BF-Runtime: beyond,
    # the switch refused the write after every other check had passed.
    priority: Annotated[int, Field(ge=0, le=0xFFFFFFFF)]
    vq: Annotated[int, Field(ge=1, le=MAX_VQS)]  # its virtual queue (classes may share one)
    queue: Annotated[int, Field(ge=0)]  # the TM queue of its egress port
    qos: Literal["A", "B", "C"]  # its objective's QoS type (Eqs. 11-13)
    # (delay, qos-specific) weights of the class's two objectives (Eqs. 11-13).
    objective_weights: Annotated[
        tuple[Annotated[float, Field(ge=0, le=1e6)], Annotated[float, Field(ge=0, le=1e6)]],
        BeforeValidator(as_tuple),
    ] = (1.0, 1.0)
    # The egress port whose service rate the class shares: classes are
    # optimised per port. None: all such classes share one port.
    port: PortNumber | None = None
    threshold_cells: Annotated[int, Field(ge=0)]  # K_i: the virtual-queue depth that marks ECN
    # The operator's K_i stays: the optimiser still tunes the class's weight
    # and lambda_i* but never moves its threshold (retuning under the daemon:
    # edit threshold_cells, pin it, reload; deploy/README.md).
    pin: bool = False
    mark_original: bool = False  # over K_i, CE-mark an ECT packet too, not only mirror feedback
    # At most one feedback copy of the class per this interval in each ingress
    # pipe (0: one per marked packet).
    feedback_interval_us: Annotated[float, Field(ge=0, le=MAX_FEEDBACK_INTERVAL_US)] = (
        DEFAULT_FEEDBACK_INTERVAL_US
    )
    weight: Annotated[int, Field(ge=1, le=0xFFFF)] = 1  # W_i: its share of the port
    target_rate_pps: Annotated[int, Field(ge=0, le=0xFFFFFFFF)] = 0  # lambda_i*: 0 until tuned


class Scheduling(Strict):
    """tm_dwrr (default): the traffic manager's own DWRR, weights to the TM
    queues of `egress_ports`, so backlogged classes share in proportion to
    their weights. p4_wrr: the paper's Fig. 4 virtual-queue WRR over strict
    priority (weights to the P4; the level queues of `egress_ports` are set to
    strict priority in the TM); it weights only while a class's backlog stays
    within one round of levels (tna/pmqecn/README.md)."""

    mode: Literal["p4_wrr", "tm_dwrr"] = "tm_dwrr"
    level_queues: Annotated[
        list[Annotated[int, Field(ge=0)]], Field(min_length=1, max_length=MAX_WRR_LEVELS)
    ] = [0]
    egress_ports: list[PortNumber] = []
    weight_quantum: Annotated[int, Field(ge=1, le=0xFFFF)] = 16


class VirtualQueue(Strict):
    """Each class's virtual queue drains at its weight's share of its port's
    service rate; the shared log table resolves the elapsed time to this many
    leading bits (drain short by less than 1 - (1 - 2^-(bits - 1)) 2^(-2/128)
    plus a byte: 1.9 % at 8 bits; drain.py, tna/pmqecn/README.md)."""

    drain_mantissa_bits: Annotated[int, Field(ge=2, le=10)] = 8


class Optimizer(Strict):
    # false: the daemon still pushes, watches and reads back the switch, but
    # no cycle rewrites K_i, weights or lambda_i*: the config's values stay.
    enabled: bool = True
    interval_s: Annotated[float, cycle_interval(MAX_INTERVAL_S)] = 1.0
    # At most the chip's buffer (checked against the profile): a packet takes a cell or more.
    capacity_packets: Annotated[int, Field(ge=2)] = 1000
    service_rate_pps: Rate  # Gamma: a port's service rate
    arrival_cap_pps: Rate  # Lambda: the optimiser's bound on a class's arrival rate
    link_capacity_pps: Rate  # C: each link's capacity
    links: Annotated[int, Field(ge=1, le=1024)] = 1  # n: the optimiser's link count
    mean_packet_bytes: Annotated[int, Field(ge=64, le=9216)] = 1000  # packets to cells
    # The load each port's lambda_i* steer it to: no class is told to go below
    # its weighted share of target_utilisation x its port's service rate.
    target_utilisation: Annotated[float, Field(gt=0, le=1)] = DEFAULT_TARGET_UTILISATION
    # K_i in packets (then cells, through the chip's cell size): omega_n is
    # Algorithm 2 step 3, K_i = omega_i N; ls is the mean queue L_s at the
    # optimum.  ls is the default by measurement (docs/evaluation.md): the
    # omega_i N sum to N, so a port marks only once its buffer is ~full.
    threshold_rule: ThresholdRule = "ls"
    # Processes that share a cycle's per-port problems (this one included):
    # 2 on a two-core controller takes about a third off the optimiser's time
    # on a full switch (benchmarks/control_loop.py); 1 solves everything here.
    solver_processes: Annotated[int, Field(ge=1, le=64)] = 1


class PmqecnConfig(Strict):
    program: Literal["pmqecn"] = "pmqecn"
    chip: Literal["tofino", "tofino2"] = "tofino"
    routes: list[Route] = []
    trusted_ports: list[PortNumber] = []
    # The sources each host port's hosts may use (tna/include/source_guard.p4);
    # every untrusted port a route or a feedback session names must be bound.
    source_bindings: list[SourceBinding] = []
    ports: list[PortSpec] = []
    scheduling: Scheduling = Scheduling()
    virtual_queue: VirtualQueue = VirtualQueue()
    classes: Annotated[list[ClassSpec], Field(min_length=1)]
    optimizer: Optimizer

    @model_validator(mode="after")
    def _unique(self) -> PmqecnConfig:
        for attr in ("id", "vq", "priority", "name"):
            seen: dict[object, int] = {}
            for i, c in enumerate(self.classes):
                v = getattr(c, attr)
                if v in seen:
                    raise ValueError(f"classes[{i}].{attr} {v!r} repeats classes[{seen[v]}].{attr}")
                seen[v] = i
        # `Voice` beside `voice`: two classes an operator cannot tell apart
        # on a command line or in a dashboard.
        same = repeated_name([c.name for c in self.classes])
        if same is not None:
            i, j = same
            raise ValueError(
                f"classes[{j}].name {self.classes[j].name!r} repeats classes[{i}].name "
                f"{self.classes[i].name!r} up to case: names must differ in more than case"
            )
        return self

    def class_by_id(self, class_id: int) -> ClassSpec:
        for c in self.classes:
            if c.id == class_id:
                return c
        raise ConfigError("class", f"no class with id {class_id}")


def max_weight(cfg: PmqecnConfig) -> int:
    """The largest class weight the scheduling takes: the TM's DWRR takes
    0..1023 (open-p4studio tm_api_sch.c line 71, bf_tm_sched_q_dwrr_weight_set:
    "Supported range [ 0.. 1023 ]"; tm.queue.sched_cfg's uint16 is wider than
    the register), the P4 WRR its 16-bit weight."""
    return MAX_DWRR_WEIGHT if cfg.scheduling.mode == "tm_dwrr" else 0xFFFF


def weight_refusal(cfg: PmqecnConfig, weight: object) -> str:
    top = max_weight(cfg)
    why = " (the TM's DWRR, tm_api_sch.c)" if top == MAX_DWRR_WEIGHT else ""
    return f"must be 1..{top}{why}, got {weight!r}"


def check_against(cfg: PmqecnConfig, profile: HwProfile) -> None:
    """Chip limits; raises ConfigError naming the first field out of range."""

    def port(field: str, value: int, front_panel: bool = True) -> None:
        check_port(field, value, profile, front_panel)

    def queue(field: str, value: int) -> None:
        check_queue_id(field, value, profile)

    check_host_feedback(cfg.ports, cfg.routes, cfg.trusted_ports, cfg.source_bindings, profile)
    for i, q in enumerate(cfg.scheduling.level_queues):
        queue(f"scheduling.level_queues[{i}]", q)
    for i, p in enumerate(cfg.scheduling.egress_ports):
        port(f"scheduling.egress_ports[{i}]", p)
    no_repeats("scheduling.egress_ports", cfg.scheduling.egress_ports)
    if cfg.optimizer.capacity_packets > profile.buffer_cells:
        raise ConfigError(
            "optimizer.capacity_packets",
            f"{cfg.optimizer.capacity_packets} packets cannot fit in {profile.chip}'s buffer "
            f"of {profile.buffer_cells} cells",
        )
    if cfg.scheduling.mode == "tm_dwrr" and not cfg.scheduling.egress_ports:
        raise ConfigError(
            "scheduling.egress_ports", "tm_dwrr needs the ports whose queues to weight"
        )
    levels = cfg.scheduling.level_queues
    if cfg.scheduling.mode == "p4_wrr":
        if len(set(levels)) != len(levels):
            raise ConfigError("scheduling.level_queues", "each level needs its own queue")
        if cfg.scheduling.egress_ports and len(levels) > MAX_TM_PRIORITY + 1:
            raise ConfigError(
                "scheduling.level_queues",
                f"{len(levels)} levels but the TM has {MAX_TM_PRIORITY + 1} strict priorities",
            )
    log_entries = log_entries_count(cfg.virtual_queue.drain_mantissa_bits)
    if log_entries > LOG_TABLE_SIZE:
        raise ConfigError(
            "virtual_queue.drain_mantissa_bits",
            f"{cfg.virtual_queue.drain_mantissa_bits} bits need {log_entries} entries; the "
            f"vq_log_elapsed table holds {LOG_TABLE_SIZE} (at most 8 bits)",
        )
    for i, c in enumerate(cfg.classes):
        queue(f"classes[{i}].queue", c.queue)
        if c.weight > max_weight(cfg):
            raise ConfigError(f"classes[{i}].weight", weight_refusal(cfg, c.weight))
        if c.port is not None:
            port(f"classes[{i}].port", c.port)
        if c.objective_weights == (0.0, 0.0):
            raise ConfigError(f"classes[{i}].objective_weights", "both weights are zero")
        if c.threshold_cells > profile.max_qdepth_cells:
            raise ConfigError(
                f"classes[{i}].threshold_cells",
                f"{c.threshold_cells} cells can never be reached: {profile.chip} reports queue "
                f"depth in {profile.enq_qdepth_bits} bits (max {profile.max_qdepth_cells})",
            )


def parse_config(raw: object, source: str = "") -> PmqecnConfig:
    return parse_on_chip(PmqecnConfig, raw, source, check_against)


def load_config(path: str | Path) -> PmqecnConfig:
    return parse_config(load_yaml(path), str(path))


DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "defaults" / "pmqecn.yaml"
