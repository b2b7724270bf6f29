# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Scenario files: topology, traffic, schemes and the paper's figures to
compare against, validated before anything is simulated.

Every error names the field (``flows[2].dst``, ``schemes.dcqcn.kmin_packets``)
and the file, like the controller's configs.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    model_validator,
)

from bfrt_controller import paths
from hw_profiles import as_tuple, safe_yaml
from models.optimize.problem import DEFAULT_TARGET_UTILISATION

from .workloads import CDFS, check_cdf
from .workloads import expand as expand_workload

SCENARIO_DIR = Path(__file__).parent / "scenarios"

_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kMG]?)bps\s*$")
_RATE_SCALE = {"": 1, "k": 1_000, "M": 1_000_000, "G": 1_000_000_000}

NO_CONTROL = "none"
# Error messages of cross-field checks start with the field they are about.
_FIELD_PREFIX = re.compile(r"^([a-z][a-z0-9_-]*(?:\[\d+\])?(?:\.[a-z][a-z0-9_-]*(?:\[\d+\])?)*): ")


class ScenarioError(ValueError):
    def __init__(self, source: str, field: str, message: str) -> None:
        self.source, self.field = source, field
        super().__init__(f"{source}: {field}: {message}" if source else f"{field}: {message}")


def parse_rate(text: str) -> int:
    """'10Mbps' -> 10_000_000 (bits per second): a whole number of bits per
    second, at least 1 (a link or sender at 0 or 0.5 b/s never sends a packet)."""
    m = _RATE.match(text)
    if not m:
        raise ValueError(f"not a rate like '10Mbps': {text!r}")
    # Exact decimal arithmetic: as floats 4.1 * 1e9 is 4099999999.9999995,
    # and "4.1Gbps" was refused as a fraction of a bit per second.
    bps = Fraction(m.group(1)) * _RATE_SCALE[m.group(2)]
    if bps < 1:
        raise ValueError(f"rate must be at least 1bps: {text!r}")
    if bps.denominator != 1:
        raise ValueError(f"rate must be a whole number of bits per second: {text!r}")
    return int(bps)


def _check_rate(text: str) -> str:
    parse_rate(text)
    return text


class Strict(BaseModel):
    # No inf or nan anywhere: an infinite delay or time would only fail
    # once ns-3 is running. Strict types: `seed: true` is not seed 1.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


# The longest run is 600 s; no delay or timer of a scenario is longer
# (ns-3's 64-bit time in ns overflows near 9.2e18 ns, so 1e308 us fails late).
MAX_US = 600e6
Micros = Annotated[float, Field(gt=0, le=MAX_US)]


Rate = Annotated[str, Field(pattern=_RATE.pattern), AfterValidator(_check_rate)]
Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*$")]


TcpCc = Literal["newreno", "cubic", "dctcp", "dctcp-l4s", "bbr", "newreno-py", "dadctcp-py"]


class Link(Strict):
    a: Name
    b: Name
    rate: Rate | None = None  # default: the scenario's link.rate
    delay_us: Annotated[float, Field(ge=0, le=MAX_US)] | None = None


class LinkDefaults(Strict):
    rate: Rate = "10Mbps"
    delay_us: Annotated[float, Field(ge=0, le=MAX_US)] = 10.0


class Flow(Strict):
    name: Name
    src: Name
    dst: Name
    start_s: Annotated[float, Field(ge=0)] = 0.0
    # None: until the end of the run.
    stop_s: Annotated[float, Field(gt=0)] | None = None
    # None: no fixed size (a long-lived flow); else FCT is measured.
    size_bytes: Annotated[int, Field(ge=1)] | None = None
    # IPv4 total length of each data packet.
    packet_bytes: Annotated[int, Field(ge=64, le=1500)] = 1000
    dscp: Annotated[int, Field(ge=0, le=63)] = 0
    # PMQECN traffic class (seed 000 Table 2): A loss, B delay, C both.
    qos: Literal["A", "B", "C"] = "C"
    # The application's offered rate as a fraction of its access link's rate
    # (so it follows a link-rate sweep): the most its sender ever sends.
    load: Annotated[float, Field(gt=0, le=1)] = 1.0
    # TCP congestion control (`transport: tcp` only; None: newreno), as ns-3
    # ships it (evaluation/tcp.py); newreno-py and dadctcp-py: models/hosts'
    # NewReno and DA-DCTCP's Algorithm 1 in ns-3's TCP (evaluation/tcp_cc.py).
    cc: TcpCc | None = None
    # The application (`transport: tcp`): `bulk` keeps the socket's buffer
    # full; `onoff` is ns-3's OnOffApplication: while ON it writes one
    # segment per segment time at `rate`, while OFF nothing, ON and OFF
    # lasting `on_s` and `off_s` (constant, ns-3's default of 1 s each, or
    # exponential with those means). Seed 002's senders are ON/OFF.
    app: Literal["bulk", "onoff"] = "bulk"
    rate: Rate | None = None
    on_s: Annotated[float, Field(gt=0, le=600)] = 1.0
    off_s: Annotated[float, Field(gt=0, le=600)] = 1.0
    on_off_dist: Literal["constant", "exponential"] = "constant"

    @model_validator(mode="after")
    def _app_fields(self) -> Flow:
        if self.app == "onoff" and self.rate is None:
            raise ValueError("rate: an onoff application needs its data rate while ON")
        if self.app == "bulk" and self.rate is not None:
            raise ValueError("rate: only for app: onoff (a bulk sender has no rate)")
        if self.app == "bulk" and (self.on_s, self.off_s, self.on_off_dist) != (
            1.0,
            1.0,
            "constant",
        ):
            raise ValueError("app: on_s, off_s and on_off_dist need app: onoff")
        return self


CdfPoint = Annotated[tuple[int, float], BeforeValidator(as_tuple)]


class Workload(Strict):
    """Flows of sizes from a CDF arriving as a Poisson process at each
    source (evaluation/workloads.py), expanded into `flows` at load time as
    `<name>-<n>`, each sized (so FCT is measured)."""

    name: Name
    src: Annotated[list[Name], Field(min_length=1)]
    dst: Annotated[list[Name], Field(min_length=1)]
    sizes: Literal["websearch"] | list[CdfPoint] = "websearch"
    # Offered load of each source: this fraction of `load_rate`.
    load: Annotated[float, Field(gt=0, le=1)]
    load_rate: Rate
    start_s: Annotated[float, Field(ge=0)] = 0.0
    # None: the end of the run.
    stop_s: Annotated[float, Field(gt=0)] | None = None
    packet_bytes: Annotated[int, Field(ge=64, le=1500)] = 1000
    dscp: Annotated[int, Field(ge=0, le=63)] = 0
    cc: TcpCc | None = None
    max_flows: Annotated[int, Field(ge=1, le=100_000)] = 5000

    @model_validator(mode="after")
    def _cdf(self) -> Workload:
        if isinstance(self.sizes, list):
            try:
                check_cdf(list(self.sizes))
            except ValueError as exc:
                raise ValueError(f"sizes: {exc}") from None
        return self


class Monitor(Strict):
    """An egress port whose queue is recorded: on `switch`, facing `toward`."""

    switch: Name
    toward: Name


# DCQCN's own paper (Zhu et al., "Congestion Control for Large-Scale RDMA
# Deployments", SIGCOMM 2015) gives its parameters for 40 Gb/s NICs.
DCQCN_PAPER_LINE_RATE_BPS = 40_000_000_000


class DcqcnHost(Strict):
    """DCQCN's notification and reaction points (TCN's hosts use them too).

    Defaults are the DCQCN paper's (models/baselines/dcqcn_rp.py says where
    each comes from): N = 50 us, g = 1/256, K = 55 us, T = 55 us,
    B = 10 MB, F = 5. Rate steps and the rate floor are bit rates of a
    40 Gb/s NIC; left unset, each is that value scaled to the sender's line
    rate (R_AI = 40 Mb/s, R_HAI = 200 Mb/s, min rate 100 Mb/s at 40 Gb/s:
    the last two from the authors' ns-3 config, the paper gives none).
    """

    cnp_interval_us: Micros = 50.0
    g: Annotated[float, Field(gt=0, lt=1)] = 1 / 256
    alpha_timer_us: Micros = 55.0
    rate_timer_us: Micros = 55.0
    byte_counter_bytes: Annotated[int, Field(ge=1)] = 10_000_000
    fast_recovery_steps: Annotated[int, Field(ge=1)] = 5
    rai: Rate | None = None
    rhai: Rate | None = None
    min_rate: Rate | None = None


class Dcqcn(DcqcnHost):
    # RED/ECN at the switch, DCQCN paper: K_min = 5 KB, K_max = 200 KB,
    # P_max = 1 %, on the queue in bytes as the chip counts it (cells x
    # cell size). Seeds 000 and 001 ran K_min = K_max = 11 packets instead:
    # give kmin_packets/kmax_packets for that.
    kmin_bytes: Annotated[int, Field(ge=0)] = 5_000
    kmax_bytes: Annotated[int, Field(ge=1)] = 200_000
    kmin_packets: Annotated[int, Field(ge=0)] | None = None
    kmax_packets: Annotated[int, Field(ge=1)] | None = None
    pmax: Annotated[float, Field(gt=0, le=1)] = 0.01

    @model_validator(mode="after")
    def _order(self) -> Dcqcn:
        packets = (self.kmin_packets, self.kmax_packets)
        if (packets[0] is None) != (packets[1] is None):
            raise ValueError("give both kmin_packets and kmax_packets, or neither")
        if packets[0] is not None and {"kmin_bytes", "kmax_bytes"} & self.model_fields_set:
            raise ValueError("thresholds in packets or in bytes, not both")
        if self.kmin_packets is not None and self.kmax_packets is not None:
            if self.kmin_packets > self.kmax_packets:
                raise ValueError("kmin_packets must not exceed kmax_packets")
        elif self.kmin_bytes > self.kmax_bytes:
            raise ValueError("kmin_bytes must not exceed kmax_bytes")
        return self


class Tcn(DcqcnHost):
    # Threshold = lam x base RTT (seed 000 Table 3: lambda = 0.17, the
    # DCTCP guideline TCN's paper, Bai et al. CoNEXT 2016, builds on).
    # TCN's paper runs DCTCP hosts; ours have no TCP, so TCN's marks drive
    # DCQCN's NP and RP at DCQCN's paper settings (DcqcnHost).
    lam: Annotated[float, Field(gt=0, le=1)] = 0.17
    # None: measured from the topology (propagation plus one MTU per hop, both ways).
    base_rtt_us: Micros | None = None


class Pfc(Strict):
    """Priority flow control (802.1Qbb) at every switch port: the hosts' data
    is one lossless priority; a switch pauses the neighbour on an ingress
    port whose packets in its buffer exceed `xoff_packets` and resumes it at
    `xon_packets` (evaluation/network.py). Seed 003 gives Q_PFC = 14 and no
    resume threshold; xon defaults to two packets below xoff, a hysteresis
    that keeps a pause from flapping per packet."""

    xoff_packets: Annotated[int, Field(ge=1)] = 14
    xon_packets: Annotated[int, Field(ge=0)] | None = None
    # 802.1p priority of the data (RoCE's customary 3).
    priority: Annotated[int, Field(ge=0, le=7)] = 3
    # Pause time of an XOFF, in 512-bit-time quanta (the switch resends it
    # at half its lifetime while the port stays above xon).
    pause_quanta: Annotated[int, Field(ge=1, le=0xFFFF)] = 0xFFFF

    @model_validator(mode="after")
    def _order(self) -> Pfc:
        if self.xon_packets is not None and self.xon_packets > self.xoff_packets:
            raise ValueError("xon_packets must not exceed xoff_packets")
        return self

    @property
    def xon(self) -> int:
        return self.xon_packets if self.xon_packets is not None else max(0, self.xoff_packets - 2)


class P4qcn(Strict):
    # P4QCN's paper (seed 003, section 4): Q_min = Q_max = 11 (BMv2 queue
    # occupancy, packets here), N = 5, beta = 1, R_AI = 5 Mb/s (on its 7 Mb/s
    # links; seeds 000 and 001 keep 5 Mb/s at 10 Mb/s). Seed 003's "at most
    # one feedback every N us" gives N no value of its own; seed 001 reads
    # N = 5, so 5 us. Byte counter: QCN's 150 KB (seed 003 gives none).
    qmin_packets: Annotated[int, Field(ge=0)] = 11
    qmax_packets: Annotated[int, Field(ge=1)] = 11
    feedback_interval_us: Micros = 5.0
    fast_recovery_cycles: Annotated[int, Field(ge=1)] = 5
    beta: Annotated[float, Field(gt=0, le=1)] = 1.0
    # None: no byte counter, the timer alone ends a cycle.
    byte_counter_bytes: Annotated[int, Field(ge=1)] | None = 150_000
    # QCN's RP timer; None: byte counter only, as P4QCN's paper describes.
    rate_timer_us: Micros | None = None
    rai: Rate = "5Mbps"
    # No paper value: the project's floor.
    min_rate: Rate = "100kbps"
    # How seed 000 ran P4QCN (its authors' RP, models/baselines/qcn_rp.py):
    # cut on every k-th feedback packet only, beta drawn from U(0, beta),
    # start at initial_rate in active increase. Off by default.
    feedback_packets_per_cut: Annotated[int, Field(ge=1)] = 1
    random_beta: bool = False
    initial_rate: Rate | None = None
    # Seed 003's CP-RP (two_point: the switch sends the feedback to the
    # source) or the CP-NP-RP it compares against (three_point: the switch
    # marks CE with Eq. 1's probability, the receiver sends a notification
    # to the source, at most one per flow per feedback_interval_us).
    architecture: Literal["two_point", "three_point"] = "two_point"
    # PFC as the last resort (seed 003 4.2.2-4.2.3); None: off.
    pfc: Pfc | None = None

    @model_validator(mode="after")
    def _order(self) -> P4qcn:
        if self.qmin_packets > self.qmax_packets:
            raise ValueError("qmin_packets must not exceed qmax_packets")
        return self


class Dadctcp(Strict):
    """DA-DCTCP's switch side (tna/dadctcp) at every switch port, `queues`
    per port: K1 = k_packets, K2 = 2 K1 and the queue's growth slope
    (`mode: dadctcp`), or DCTCP's marking above K (`mode: dctcp`). Seed 004
    and DCTCP's paper: K = 20 packets. The hosts' TCP is the flows' `cc`
    (ECN on)."""

    k_packets: Annotated[int, Field(ge=1)] = 20
    mode: Literal["dadctcp", "dctcp"] = "dadctcp"
    # Algorithm 2's interval (with one queue per port it has nothing to move).
    interval_s: Annotated[float, Field(gt=0, le=60)] = 0.1
    # Queues per port: DSCP d < queues goes to queue d (the rest to 0), each
    # starts at K = k_packets and the port's K_port = queues x k_packets,
    # which Algorithm 2 shares out (seed 004 Fig. 5a varies this number).
    queues: Annotated[int, Field(ge=1, le=8)] = 1
    # Every flow's congestion control in this scheme's runs, over the flows'
    # own `cc` (a baseline that is a host algorithm, e.g. `none-bbr`).
    cc: TcpCc | None = None


class NoControl(Strict):
    """`none`: plain destination forwarding through the same traffic manager
    and buffer, hosts sending at their offered rate: what a mechanism must beat.
    With `pfc`, PFC alone (a `none-<tag>` variant, e.g. `none-pfc`)."""

    pfc: Pfc | None = None
    # Every flow's congestion control in this scheme's runs, over the flows'
    # own `cc`: plain forwarding with BBR hosts is `none-bbr: {cc: bbr}`.
    cc: TcpCc | None = None


class Pmqecn(Strict):
    # Initial K_i in packets before the first optimiser cycle (seed 000 Table 3: 11).
    threshold_packets: Annotated[int, Field(ge=1)] = 11
    weight: Annotated[int, Field(ge=1, le=255)] = 4
    # Controller cycle; 0 keeps the initial thresholds and weights.
    optimizer_interval_s: Annotated[float, Field(ge=0)] = 1.0
    # Host RP (seed 000 Algorithm 3): start rate, R_A and the fast-recovery
    # rounds. The baselines' sources start at line rate, as their NICs do:
    # DCQCN's and QCN's increase machinery is idle until the first notification.
    initial_rate: Rate = "1Mbps"
    ra: Rate = "5Mbps"
    rounds: Annotated[int, Field(ge=1)] = 5
    rp_timer_us: Micros = 10_000.0
    # The controller's K_i rule (optimizer.threshold_rule): ls (the mean queue
    # at the optimum, the controller's default) or omega_n (Alg. 2 step 3,
    # K_i = omega_i N).
    threshold_rule: Literal["omega_n", "ls"] = "ls"
    # The load each port's lambda_i* steer it to (optimizer.target_utilisation).
    target_utilisation: Annotated[float, Field(gt=0, le=1)] = DEFAULT_TARGET_UTILISATION
    # Also CE-mark the ECT original of a packet above K_i (config
    # classes[].mark_original, tna/pmqecn/README.md): for ECN senders (TCP, DCTCP)
    # that see only CE. Off: the paper's feedback packet only.
    mark_original: bool = False


class Bfcc(Strict):
    # Seed 001 §5.1.1: threshold 15 packets, T_min = 80,000 and T_max =
    # 150,000 us of deq_timedelta on its 10 Mb/s links; the controller scales
    # T to each port's rate (same queued bytes) and reports what the chip
    # cannot measure.
    threshold_packets: Annotated[int, Field(ge=1)] = 15
    t_min_us: Annotated[int, Field(ge=0)] = 80_000
    t_max_us: Annotated[int, Field(ge=1)] = 150_000
    reference_rate_mbps: Annotated[int, Field(ge=1)] = 10
    window_packets: Annotated[int, Field(ge=1, le=255)] = 100
    refresh_ns: Annotated[int, Field(ge=0)] = 1_000_000
    expiry_ns: Annotated[int, Field(ge=0)] = 5_000_000
    # Algorithms 1-2 flag every packet to a backpressured port (False); True
    # flags only the named group, so the rest of the port is not cut.
    named_group_only: bool = False
    # Seed 001 4.2.2 both ways: "none", the senders keep their rate;
    # "match_switch", the first-hop switch relays the backpressure and the
    # sender cuts its rate to RT/(RT+1) as the switch does (models/hosts/bfcc_sender.py).
    sender_reaction: Literal["none", "match_switch"] = "none"
    # How the reaction point cuts the port (issue 11 item 4): "fakes", the
    # paper's fake packets; "shaping", the controller shapes the port in the
    # TM to RT/(RT+1) of its rate, polling the switch every
    # `shaping_interval_us` (a BF-Runtime register read and TM write take
    # hundreds of us to a few ms on a real switch).
    reduction: Literal["fakes", "shaping"] = "fakes"
    # RT/(RT+1) of the line rate, or of the rate the port carried in the
    # cycle before the backpressure (bfcc/config.py Params.shaping_base).
    shaping_base: Literal["line", "carried"] = "line"
    shaping_interval_us: Annotated[float, Field(gt=0, le=1_000_000)] = 1000.0
    # The recirculation queue's level past which a fake's original leaves
    # itself (bfcc/config.py Params.recirculation_level_bytes). None: half
    # the port buffer, at most the controller's 64 KiB default.
    recirculation_level_bytes: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _order(self) -> Bfcc:
        # The controller refuses the same (bfcc/config.py check_params).
        if self.t_min_us >= self.t_max_us:
            raise ValueError("t_min_us must be below t_max_us, else degree 2 is unreachable")
        return self


class Ns3Aqm(Strict):
    """ns-3's queue disc of the scheme's kind (RED, PIE, CoDel, FqCoDel) at
    every switch port, with ns-3's parameters, the port's buffer as its
    limit, and destination routing (evaluation/qdisc.py)."""

    # Mark ECN-capable packets instead of dropping them (ns-3's UseEcn).
    ecn: bool = True


class P4Red(Strict):
    """RED as tna/aqm/aqm.p4 runs it, configured by its controller app:
    Floyd & Jacobson 1993's settings in packets of the scenario's largest
    frame (converted to cells), w_q = 2^-w_q_shift."""

    min_th_packets: Annotated[int, Field(ge=0)] = 5
    max_th_packets: Annotated[int, Field(ge=1)] = 15
    max_p: Annotated[float, Field(gt=0, le=1)] = 0.02
    w_q_shift: Annotated[int, Field(ge=0, le=12)] = 9
    # Drop, as the 1993 paper (and seed 002's RED); true: CE-mark ECT packets.
    ecn: bool = False


class P4Codel(Strict):
    """CoDel as tna/aqm/aqm.p4 runs it (RFC 8289's settings)."""

    target_us: Micros = 5000.0
    interval_us: Micros = 100_000.0
    count_cap: Annotated[int, Field(ge=1, le=256)] = 64
    ecn: bool = False


class P4Pie(Strict):
    """PIE (or S-PIE, `p4spie`) as tna/spie/spie.p4 runs it, configured by
    its controller app (bfrt_controller/spie): RFC 8033's alpha, beta,
    del_ref and T_update (seed 002 gives none); the sketch's width and
    clearing interval are the app's defaults. Drops, as seed 002 does."""

    alpha_per_s: Annotated[float, Field(ge=0)] = 0.125
    beta_per_s: Annotated[float, Field(ge=0)] = 1.25
    del_ref_us: Micros = 15_000.0
    t_update_us: Micros = 15_000.0
    stale_after_us: Micros = 60_000.0
    columns: Annotated[int, Field(ge=1, le=4096)] = 1024
    clear_interval_us: Micros = 1_073_741.824
    # p4spie's mode: seed 002's Algorithm 2, or with PIE's p for every
    # packet while congested too (tna/spie/README.md, departure 12).
    mode: Literal["spie", "spie_pie"] = "spie"
    # p4spie: a packet of a flow judged large is dropped with this
    # probability (the controller's default; 1 is Algorithm 2 line 13).
    large_drop_probability: Annotated[float, Field(gt=0, le=1)] = 0.5
    # Never mark (the program drops only); kept so every AQM scheme has it.
    ecn: Literal[False] = False


class P4AqmFamily(Strict):
    """One mechanism of tna/aqm's family (issue 51: none, red, codel, pie,
    dctcp, dadctcp, dualpi2) on queue 0 of every port data leaves through,
    configured by its controller app from `settings` (the app's queue fields,
    e.g. target_delay_us, k_cells; each mechanism's defaults otherwise). A
    dualpi2 pair's L4S queue is queue `l_queue` of the same port, served
    first (strict priority, tna/aqm/README.md)."""

    mechanism: Literal["none", "red", "codel", "pie", "dctcp", "dadctcp", "dualpi2"]
    settings: dict[str, float | int | bool] = {}
    l_queue: Annotated[int, Field(ge=1, le=31)] = 1
    # CE-mark ECN-capable packets instead of dropping them (the senders
    # negotiate ECN).
    ecn: bool = True


P4Aqm = P4Red | P4Codel | P4Pie | P4AqmFamily
SchemeParams = Strict
# The kinds of scheme, each with its parameters' model: the one list of them
# (SCHEMES, the `schemes:` section's keys and `eval run --scheme` come from
# it). A scenario may also run a named variant of one, `<kind>-<tag>` (e.g.
# `dcqcn-10ms`), with its own parameters. Besides our programs' schemes
# (tofcc_common.registry's `schemes`, each of which must be here:
# tests/test_layout.py::test_every_program_is_whole): the papers' baselines,
# `none`, ns-3's own AQMs at every switch port (evaluation/qdisc.py: red, pie,
# codel, fqcodel); p4red/p4codel are tna/aqm and p4pie/p4spie tna/spie.
_KIND_MODEL: dict[str, type[Strict]] = {
    "pmqecn": Pmqecn,
    "bfcc": Bfcc,
    "dcqcn": Dcqcn,
    "p4qcn": P4qcn,
    "tcn": Tcn,
    "dadctcp": Dadctcp,
    "none": NoControl,
    "red": Ns3Aqm,
    "pie": Ns3Aqm,
    "codel": Ns3Aqm,
    "fqcodel": Ns3Aqm,
    "p4red": P4Red,
    "p4codel": P4Codel,
    "p4pie": P4Pie,
    "p4spie": P4Pie,
    "p4aqm": P4AqmFamily,
}


SCHEMES: tuple[str, ...] = tuple(_KIND_MODEL)
_VARIANT = re.compile(rf"^({'|'.join(SCHEMES)})-[a-z0-9][a-z0-9_-]*$")


class _SchemesBase(Strict):
    """One entry per scheme to run. Besides the kinds, `<kind>-<tag>` runs a
    named variant of a kind with its own parameters (`dcqcn-10ms`)."""

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _empty_is_defaults(cls, raw: object) -> object:
        # `dcqcn:` with only comments under it is YAML null: the defaults,
        # not "off" (leave a scheme out to not run it).
        if isinstance(raw, dict):
            return {k: ({} if v is None else v) for k, v in raw.items()}
        return raw

    @model_validator(mode="after")
    def _variants(self) -> _SchemesBase:
        extra = self.model_extra if self.model_extra is not None else {}
        for name in list(extra):
            m = _VARIANT.match(name)
            if m is None:
                raise ValueError(
                    f"{name}: not a scheme (one of {', '.join(SCHEMES)}, "
                    "or <scheme>-<tag> for a variant)"
                )
            try:
                extra[name] = _KIND_MODEL[m.group(1)].model_validate(extra[name] or {})
            except ValidationError as exc:
                err = exc.errors()[0]
                path = _field_path(tuple(err["loc"]))
                msg = str(err["msg"]).removeprefix("Value error, ")
                raise ValueError(f"{name}{'.' + path if path else ''}: {msg}") from None
        return self

    def variants(self) -> dict[str, SchemeParams]:
        extra = self.model_extra if self.model_extra is not None else {}
        return dict(extra)

    def enabled(self) -> list[str]:
        """Run order: each kind, then its variants in file order."""
        out = []
        variants = self.variants()
        for kind in SCHEMES:
            if getattr(self, kind) is not None:
                out.append(kind)
            out += [n for n in variants if kind_of(n) == kind]
        return out

    def get(self, name: str) -> SchemeParams:
        """The parameters of scheme `name` (a kind or a variant)."""
        p = getattr(self, name, None) if name in SCHEMES else self.variants().get(name)
        if p is None:
            raise KeyError(f"scheme '{name}' is not in schemes")
        return p  # type: ignore[no-any-return]


# A field per kind, optional, of its parameters' model.
if TYPE_CHECKING:
    Schemes = _SchemesBase
else:
    Schemes = create_model(
        "Schemes",
        __base__=_SchemesBase,
        __module__=__name__,
        __doc__=_SchemesBase.__doc__,
        **{kind: (model | None, None) for kind, model in _KIND_MODEL.items()},
    )


def kind_of(scheme: str) -> str:
    """'dcqcn-10ms' -> 'dcqcn'; a kind is its own kind."""
    return scheme.split("-", 1)[0]


Number = float
ClaimValue = Annotated[Number | tuple[Number, Number], BeforeValidator(as_tuple)]


class Claim(Strict):
    """A headline figure of the paper: `ours` changed `metric` by this many
    percent relative to each baseline (negative = lower), or a [low, high] range."""

    metric: str
    ours: Name
    paper: dict[Name, ClaimValue]
    source: str = ""


class Scenario(Strict):
    name: Name
    description: str = ""
    seed: Annotated[int, Field(ge=0)] = 1

    def flow_seed(self, flow_index: int) -> int:
        """The seed of whatever flow ``flow_index``'s host draws at random
        (ON/OFF times, a reaction point's beta): distinct per flow, fixed per run."""
        return self.seed * 1_000_003 + flow_index

    def start_ns(self, flow_index: int) -> int:
        """When flow ``flow_index`` starts: its start_s plus its draw of
        U(0, start_jitter_us), which depends on the seed and the flow only."""
        base = round(self.flows[flow_index].start_s * 1e9)
        if not self.start_jitter_us:
            return base
        # A string seed is hashed the same way in every process.
        draw = random.Random(f"start/{self.seed}/{flow_index}").uniform(0, self.start_jitter_us)
        return base + round(draw * 1e3)

    def seeded(self) -> list[Scenario]:
        """One scenario per repeat, seeds seed, seed + 1, ..., each run once."""
        return [
            self.model_copy(update={"seed": self.seed + k, "repeats": 1})
            for k in range(self.repeats)
        ]

    duration_s: Annotated[float, Field(gt=0, le=600)]
    # udp: the harness's rate-paced senders; tcp: ns-3's TCP stack on every
    # host, a bulk transfer per flow (evaluation/tcp.py).
    transport: Literal["udp", "tcp"] = "udp"
    # Each flow starts a draw of U(0, start_jitter_us) after its start_s, one
    # draw per seed and flow. A TCP run is otherwise the same whatever its
    # seed, and on a shallow buffer which flow loses a whole window in slow
    # start (and waits out a 200 ms retransmission timeout) can hang on when
    # the flows start to the microsecond: with `repeats` this samples that.
    start_jitter_us: Annotated[float, Field(ge=0, le=MAX_US)] = 0.0
    # TCP's minimum retransmission timeout (`transport: tcp`): Linux's 200 ms
    # by default. A data-centre run of a few tens of milliseconds gives the
    # value its operators set per route (`ip route ... rto_min`), or a flow
    # that loses its tail waits out the whole run.
    min_rto_ms: Annotated[float, Field(gt=0, le=1000)] = 200.0
    # The receivers' delayed-ACK timeout (`transport: tcp`): Linux's minimum,
    # 40 ms, by default. Below min_rto_ms, or a window of one segment (after
    # a timeout) is ACKed only when the timeout fires: every segment then
    # times out spuriously and the flow never leaves one segment a
    # minimum RTO (evaluation/tcp.py). A data-centre route with a 1 ms
    # rto_min is run with delayed ACKs well inside it (Linux's quickack).
    delack_timeout_ms: Annotated[float, Field(gt=0, le=1000)] = 40.0
    # Every scheme and rate runs this many times, with seeds seed, seed + 1,
    # ...: a report per seed and a summary over them (evaluation/repeats.py).
    # What changes with the seed is every draw made during a run (start
    # jitter, ON/OFF times, reaction points' draws); the flows `workloads`
    # expand to are drawn once, from the file's seed, when it loads.
    repeats: Annotated[int, Field(ge=1, le=1000)] = 1
    chip: Literal["tofino", "tofino2"] = "tofino"
    # The pipes each switch runs. 1: a switch's links take front-panel ports
    # in order (pipe 0's first) and its model runs one pipe, as before. 2 or
    # 4: link n goes to pipe (n - 1) mod pipes, and the models run that many
    # pipes, each with its own registers and recirculation port (issue 50).
    pipes: Literal[1, 2, 4] = 1
    # Shared buffer per egress port, in packets of the largest flow's size.
    buffer_packets: Annotated[int, Field(ge=1)] = 200
    # The run's first `startup_s` is left out of "queue max after start-up"
    # (a mechanism whose controller has not yet run a cycle is not judged on
    # it; the whole-run maximum is reported beside it). None: `trim` of the run.
    startup_s: Annotated[float, Field(ge=0)] | None = None
    link: LinkDefaults = LinkDefaults()
    hosts: Annotated[list[Name], Field(min_length=2)]
    switches: Annotated[list[Name], Field(min_length=1)]
    links: Annotated[list[Link], Field(min_length=1)]
    flows: Annotated[list[Flow], Field(min_length=1)]
    schemes: Schemes
    # Runs every scheme once per rate, every link set to it (seed 001's FCT sweep).
    link_rates: list[Rate] = []
    monitor: list[Monitor] = []
    # Throughput is binned at this interval; the first and last `trim` of the
    # run are left out of steady-state figures (seed 000 does the same).
    bin_s: Annotated[float, Field(gt=0)] = 1.0
    trim: Annotated[float, Field(ge=0, lt=0.5)] = 0.1
    # Jain's index over each flow's bytes delivered from the start to each of
    # these times (seed 002 Fig. 9 reads it at 5 s and 20 s).
    fairness_at_s: list[Annotated[float, Field(gt=0)]] = []
    # Poisson flows of CDF sizes, expanded into `flows` (TCP only).
    workloads: list[Workload] = []
    claims: list[Claim] = []

    @model_validator(mode="before")
    @classmethod
    def _expand_workloads(cls, raw: object) -> object:
        """Workloads become ordinary sized flows before anything is checked,
        so a generated flow is held to every rule a written one is."""
        if not isinstance(raw, dict) or not raw.get("workloads"):
            return raw
        out = dict(raw)
        flows = list(out.get("flows") or [])
        for i, w_raw in enumerate(out["workloads"]):
            try:
                w = Workload.model_validate(w_raw)
            except ValidationError as exc:
                err = exc.errors()[0]
                path = _field_path(tuple(err["loc"]))
                msg = str(err["msg"]).removeprefix("Value error, ")
                m = _FIELD_PREFIX.match(msg)
                if not path and m is not None:
                    path, msg = m.group(1), msg[m.end() :]
                raise ValueError(f"workloads[{i}]{'.' + path if path else ''}: {msg}") from None
            duration = out.get("duration_s")
            stop = w.stop_s if w.stop_s is not None else duration
            if not isinstance(stop, int | float) or stop <= w.start_s:
                raise ValueError(f"workloads[{i}].stop_s: must be after start_s")
            cdf = CDFS[w.sizes] if isinstance(w.sizes, str) else list(w.sizes)
            try:
                made = expand_workload(
                    int(out.get("seed", 1)),
                    i,
                    list(w.src),
                    list(w.dst),
                    cdf,
                    w.load,
                    parse_rate(w.load_rate),
                    w.start_s,
                    float(stop),
                    w.max_flows,
                )
            except ValueError as exc:
                raise ValueError(f"workloads[{i}].max_flows: {exc}") from None
            for n, (src, dst, start, size) in enumerate(made):
                f: dict[str, object] = {
                    "name": f"{w.name}-{n}",
                    "src": src,
                    "dst": dst,
                    "start_s": start,
                    "size_bytes": size,
                    "packet_bytes": w.packet_bytes,
                    "dscp": w.dscp,
                }
                if w.cc is not None:
                    f["cc"] = w.cc
                flows.append(f)
        out["flows"] = flows
        return out

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        _check_references(self)
        return self


def _check_references(s: Scenario) -> None:
    nodes: dict[str, str] = {}
    for kind, names in (("hosts", s.hosts), ("switches", s.switches)):
        for i, n in enumerate(names):
            if n in nodes:
                raise ValueError(f"{kind}[{i}]: '{n}' is already a node name")
            nodes[n] = kind
    pairs: set[frozenset[str]] = set()
    host_links: dict[str, int] = {}
    for i, link in enumerate(s.links):
        for end in ("a", "b"):
            n = getattr(link, end)
            if n not in nodes:
                raise ValueError(f"links[{i}].{end}: no host or switch '{n}'")
            if nodes[n] == "hosts":
                host_links[n] = host_links.get(n, 0) + 1
                if host_links[n] > 1:
                    raise ValueError(f"links[{i}].{end}: host '{n}' has a second link")
        if link.a == link.b:
            raise ValueError(f"links[{i}].b: a link joins two different nodes")
        if nodes[link.a] == nodes[link.b] == "hosts":
            raise ValueError(f"links[{i}].b: hosts connect to switches, not to each other")
        pair = frozenset((link.a, link.b))
        if pair in pairs:
            raise ValueError(f"links[{i}]: '{link.a}' and '{link.b}' are already linked")
        pairs.add(pair)
    for h in s.hosts:
        if h not in host_links:
            raise ValueError(f"hosts: '{h}' has no link")
    flow_names: set[str] = set()
    for i, f in enumerate(s.flows):
        for end in ("src", "dst"):
            n = getattr(f, end)
            if nodes.get(n) != "hosts":
                raise ValueError(f"flows[{i}].{end}: no host '{n}'")
        if f.src == f.dst:
            raise ValueError(f"flows[{i}].dst: a flow needs two different hosts")
        if f.name in flow_names:
            raise ValueError(f"flows[{i}].name: '{f.name}' repeats")
        flow_names.add(f.name)
        if f.stop_s is not None and f.stop_s <= f.start_s:
            raise ValueError(f"flows[{i}].stop_s: must be after start_s")
        if f.start_s >= s.duration_s:
            raise ValueError(f"flows[{i}].start_s: at or after the end of the run")
        if f.start_s + s.start_jitter_us / 1e6 >= s.duration_s:
            raise ValueError(
                f"start_jitter_us: flows[{i}] could start at or after the end of the run"
            )
        if f.stop_s is not None and f.start_s + s.start_jitter_us / 1e6 >= f.stop_s:
            raise ValueError(f"start_jitter_us: flows[{i}] could start at or after its stop_s")
        if s.transport == "udp" and f.cc is not None:
            raise ValueError(f"flows[{i}].cc: congestion control needs transport: tcp")
        if s.transport == "udp" and f.app != "bulk":
            raise ValueError(
                f"flows[{i}].app: an onoff application needs transport: tcp "
                "(a UDP sender's rate is its load)"
            )
        if s.transport == "tcp" and f.load != 1.0:
            raise ValueError(
                f"flows[{i}].load: a TCP flow sends as fast as its window allows "
                "(leave load out with transport: tcp)"
            )
    if s.transport == "udp":
        for name in s.schemes.enabled():
            if getattr(s.schemes.get(name), "cc", None) is not None:
                raise ValueError(f"schemes.{name}.cc: congestion control needs transport: tcp")
    if s.transport == "tcp":
        for name in s.schemes.enabled():
            params = s.schemes.get(name)
            if getattr(params, "pfc", None) is not None:
                raise ValueError(
                    f"schemes.{name}.pfc: PFC needs transport: udp "
                    "(ns-3's TCP hosts do not honour pause frames)"
                )
            # Reactions that live only in the harness's rate-paced senders: a
            # TCP host would ignore their feedback and the run would measure
            # the switch side alone under the scheme's name. (ECN marking,
            # PMQECN's and DCQCN's included, does reach ECN-capable TCP.)
            if isinstance(params, P4qcn):
                raise ValueError(
                    f"schemes.{name}: P4QCN's reaction point is a rate-paced sender "
                    "(transport: udp); ns-3's TCP hosts ignore its feedback"
                )
            if isinstance(params, Bfcc) and params.sender_reaction == "match_switch":
                raise ValueError(
                    f"schemes.{name}.sender_reaction: match_switch cuts a rate-paced sender "
                    "(transport: udp); ns-3's TCP hosts ignore BFCC's feedback"
                )
    if s.workloads and s.transport != "tcp":
        raise ValueError("workloads: Poisson flows need transport: tcp")
    for i, t in enumerate(s.fairness_at_s):
        if t > s.duration_s:
            raise ValueError(f"fairness_at_s[{i}]: {t} s is after the end of the run")
    if s.startup_s is not None and s.startup_s >= s.duration_s:
        raise ValueError("startup_s: at or after the end of the run")
    for i, m in enumerate(s.monitor):
        if nodes.get(m.switch) != "switches":
            raise ValueError(f"monitor[{i}].switch: no switch '{m.switch}'")
        if frozenset((m.switch, m.toward)) not in pairs:
            raise ValueError(f"monitor[{i}].toward: '{m.switch}' has no link to '{m.toward}'")
    enabled = s.schemes.enabled()
    if not enabled:
        raise ValueError("schemes: name at least one scheme")
    for i, c in enumerate(s.claims):
        for scheme in (c.ours, *c.paper):
            if scheme not in enabled:
                raise ValueError(f"claims[{i}]: scheme '{scheme}' is not in schemes")


def _field_path(loc: tuple[object, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def parse_scenario(raw: object, source: str = "") -> Scenario:
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        path = _field_path(tuple(err["loc"]))
        # Cross-reference errors carry their own field path: "flows[2].dst: ..."
        m = _FIELD_PREFIX.match(msg)
        if m is not None:
            path = f"{path}.{m.group(1)}" if path else m.group(1)
            msg = msg[m.end() :]
        raise ScenarioError(source, path or "scenario", msg) from None


def _resolve(ref: str | Path) -> Path:
    path = Path(ref)
    try:
        if not paths.exists(path) and not str(ref).endswith((".yaml", ".yml")):
            path = SCENARIO_DIR / f"{ref}.yaml"
        found = paths.exists(path)
    except paths.PathError as exc:  # a name too long, a directory we may not search
        raise ScenarioError(exc.path, "scenario", exc.reason) from None
    if not found:
        known = ", ".join(sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml")))
        raise ScenarioError(str(ref), "scenario", f"no such file or bundled scenario ({known})")
    return path


# Scenarios ship extending at most 3 deep: a chain is a variant of a variant,
# and without a bound a chain of 1,500 files ran out of Python's stack.
MAX_EXTENDS_DEPTH = 16


def _read(path: Path, chain: tuple[Path, ...] = ()) -> object:
    """The file's YAML, with `extends: <scenario>` resolved: the named
    scenario's top-level fields, each replaced by this file's where it gives one.
    `chain`: the files that extend this one, the one named on the command first."""
    try:
        raw = safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ScenarioError(str(path), "scenario", exc.reason) from None
    if not isinstance(raw, dict) or "extends" not in raw:
        return raw
    base_ref = raw.pop("extends")
    if not isinstance(base_ref, str):
        raise ScenarioError(str(path), "extends", "name a scenario (a bundled name or a file)")
    try:
        # A file next to this one, else a bundled scenario's name.
        near = path.parent / base_ref
        base_path = near if paths.is_file(near) else _resolve(base_ref)
    except paths.PathError as exc:
        raise ScenarioError(str(path), "extends", str(exc)) from None
    except ScenarioError as exc:
        raise ScenarioError(str(path), "extends", str(exc).split(": ", 1)[-1]) from None
    if base_path.resolve() in {p.resolve() for p in (*chain, path)}:
        raise ScenarioError(str(path), "extends", f"'{base_ref}' extends itself")
    if len(chain) + 1 >= MAX_EXTENDS_DEPTH:
        start = chain[0] if chain else path
        raise ScenarioError(
            str(start),
            "extends",
            f"a chain of more than {MAX_EXTENDS_DEPTH} files, cut at {path} (extends '{base_ref}')",
        )
    base = _read(base_path, (*chain, path))
    if not isinstance(base, dict):
        raise ScenarioError(str(path), "extends", f"'{base_ref}' is not a scenario mapping")
    return {**base, **raw}


def load_scenario(ref: str | Path) -> Scenario:
    """A path to a YAML file, or the name of a bundled scenario."""
    path = _resolve(ref)
    return parse_scenario(_read(path), str(path))


def bundled_scenarios() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml"))
