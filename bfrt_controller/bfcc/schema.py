# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC's configuration models (pydantic) and the constants they use;
config.py validates them against the chip and re-exports them."""

from __future__ import annotations

from typing import Annotated, Literal, get_args, get_origin

from pydantic import AfterValidator, Field

from models.switch.bfcc import (
    BFCC_CONGESTION_POINTS,
    BFCC_DEGREE_MILD,
    BFCC_DEGREE_MODERATE,
    BFCC_DEGREE_SEVERE,
    BFCC_EPOCH_BITS,
    BFCC_EPOCH_LOW_BIT,
    DEFAULT_RATE_THRESHOLDS,
)

from ..common import Mac, PortNumber, Route, SourceBinding, Strict, ipv4_prefix

U8_MAX = 0xFF
U32_MAX = 0xFFFFFFFF
# The P4 tests `threshold - measure` by its bit 31: both must stay below 2^31.
SIGN_LIMIT = (1 << 31) - 1
# The refresh epoch is bits 24..19 of the ns clock (tna/bfcc/congestion_point.p4,
# monitor and tag).
REFRESH_MIN_LOG2 = BFCC_EPOCH_LOW_BIT
REFRESH_MAX_LOG2 = BFCC_EPOCH_LOW_BIT + BFCC_EPOCH_BITS - 1
# Seed 001 sections 3.1 and 5: 10 Mb/s links (7-10 Mb/s measured).
PAPER_RATE_MBPS = 10
# Seed 001 section 5.1: "a packet size of 128 B". Its threshold of 15
# packets is about 2 kB of queue; of 1500-byte packets it would be 22.5 kB.
PAPER_PACKET_BYTES = 128
MIN_FRAME_BYTES = 64
MAX_FRAME_BYTES = 16384
# Names in another unit than the one BFCC is configured in, and why.
WRONG_UNIT = {
    "threshold_cells": "threshold_packets",
    "threshold": "threshold_packets",
    "t_min_ns": "t_min_us",
    "t_max_ns": "t_max_us",
    "t_min_ms": "t_min_us",
    "t_max_ms": "t_max_us",
    "t_min": "t_min_us",
    "t_max": "t_max_us",
    "window_pkts": "window_packets",
    "rt1": "rt1_packets",
    "rt2": "rt2_packets",
    "rt3": "rt3_packets",
}
MAX_GROUP = 0xFF  # group_t (the low byte of class_id) is 8 bits; 0 means "no group"


class Group(Strict):
    """A virtual queue: the senders it holds (the same division on every
    switch) and the upstream port behind which they sit, if any."""

    id: Annotated[int, Field(ge=1, le=MAX_GROUP)]
    # One validator per element, so an error names groups[i].senders[j].
    senders: Annotated[list[Annotated[str, AfterValidator(ipv4_prefix)]], Field(min_length=1)]
    # None: the senders are attached here, no upstream switch to slow them.
    upstream_port: PortNumber | None = None


class UpstreamPort(Strict):
    """A port facing an upstream BFCC switch: backpressure for the groups
    behind it leaves through `mirror_session`, addressed with these MACs."""

    port: PortNumber
    mirror_session: Annotated[int, Field(ge=1)]
    src_mac: Mac
    dst_mac: Mac


class CongestionPoint(Strict):
    """A monitored egress port; its cp_id is its position in the list.
    `rate_mbps` is the port's speed: the paper's T_min/T_max (set for
    `params.reference_rate_mbps` links) are scaled to it (None: the
    reference rate, i.e. the paper's values as they are)."""

    port: PortNumber
    rate_mbps: Annotated[int, Field(ge=1)] | None = None


class ReactionPoint(Strict):
    """A port facing a downstream BFCC switch: the named group goes to
    `low_qid`, everything else to `high_qid` (strict priority between them).
    `rate_mbps` is the port's speed, which `params.reduction: shaping` cuts
    to RT/(RT+1) (required then)."""

    port: PortNumber
    high_qid: Annotated[int, Field(ge=0)]
    low_qid: Annotated[int, Field(ge=0)]
    rate_mbps: Annotated[int, Field(ge=1)] | None = None


class Params(Strict):
    """Run-time tunables (`tofcc --program bfcc set NAME=VALUE`), in the
    paper's units; the controller converts them to the chip's."""

    # CONGESTION_THRESHOLD (paper 3.2.1/5.1.1: 15 packets): a queue holding
    # more than this many packets is congested. The chip counts cells, so
    # the P4 threshold is threshold_packets x cells of one packet_bytes frame.
    threshold_packets: Annotated[int, Field(ge=1, le=U32_MAX)]
    # The paper's packets unless given: a data-centre deployment names its own.
    packet_bytes: Annotated[int, Field(ge=MIN_FRAME_BYTES, le=MAX_FRAME_BYTES)] = PAPER_PACKET_BYTES
    # The paper's T_min/T_max (deq_timedelta in BMv2's microseconds: 80,000
    # and 150,000) on reference_rate_mbps links. A port of another speed
    # gets the time the same queued bytes take to drain at its rate.
    t_min_us: Annotated[int, Field(ge=0, le=U32_MAX)]
    t_max_us: Annotated[int, Field(ge=0, le=U32_MAX)]
    reference_rate_mbps: Annotated[int, Field(ge=1)] = PAPER_RATE_MBPS
    window_packets: Annotated[int, Field(ge=1, le=U8_MAX)] = 100
    # 0: an unchanged message is never repeated; else repeated every
    # refresh period: the largest power of two <= refresh_ns, 2^19..2^24 ns.
    refresh_ns: Annotated[int, Field(ge=0, le=U32_MAX)] = 0
    # Real packets per fake for degree 1, 2, 3 (paper: 9, 3, 1).
    rt1_packets: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[BFCC_DEGREE_MILD]
    rt2_packets: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[
        BFCC_DEGREE_MODERATE
    ]
    rt3_packets: Annotated[int, Field(ge=1, le=U8_MAX)] = DEFAULT_RATE_THRESHOLDS[
        BFCC_DEGREE_SEVERE
    ]
    # 0: backpressure holds until cleared.
    expiry_ns: Annotated[int, Field(ge=0, le=U32_MAX)] = 0
    # 0 (the paper): while backpressure is active every packet to the port
    # is flagged and cut by fakes; 1: only the named group's packets.
    named_group_only: Annotated[int, Field(ge=0, le=1)] = 0
    # What a sender does about backpressure naming its group (seed 001
    # 4.2.2 says both): "none", the switches alone slow it; "match_switch",
    # its first-hop switch relays the message (sender_notify) and the sender
    # cuts its rate to RT/(RT+1), as the switch cuts the port.
    sender_reaction: Literal["none", "match_switch"] = "none"
    # How a reaction point cuts the port toward a congested switch (4.2.2's
    # RT/(RT+1)): "fakes", the paper's fake packets (a fake takes a slot only
    # when the port is saturated); "shaping", the controller shapes the port
    # (or, with named_group_only, the low queue) in the TM to RT/(RT+1) of
    # its rate_mbps while the switch holds backpressure: no fakes, no
    # recirculation, at the controller's polling delay.
    reduction: Literal["fakes", "shaping"] = "fakes"
    # What shaping takes RT/(RT+1) of: "line", the reaction point's
    # rate_mbps; "carried", the rate the port carried over the controller
    # cycle before the backpressure began (its $PORT_STAT byte counter), so
    # the cut bites at any load, like a fake on a saturated port.
    shaping_base: Literal["line", "carried"] = "line"
    # The level of a pipe's recirculation queue (bytes) above which a fake's
    # original leaves itself instead of recirculating, so the recirculation
    # port never drops an original (tna/bfcc/README.md, "Recirculation
    # bandwidth"): keep it below what the port's queue may hold. 64 KiB is
    # 5.2 us at 100 Gb/s.
    recirculation_level_bytes: Annotated[int, Field(ge=0, le=U32_MAX)] = 65536

    def rate_thresholds(self) -> dict[int, int]:
        return {
            BFCC_DEGREE_MILD: self.rt1_packets,
            BFCC_DEGREE_MODERATE: self.rt2_packets,
            BFCC_DEGREE_SEVERE: self.rt3_packets,
        }


PARAM_NAMES = tuple(Params.model_fields)
# Params whose value is a word, not a number (`set sender_reaction=match_switch`).
CHOICE_PARAMS: dict[str, tuple[str, ...]] = {
    name: get_args(f.annotation)
    for name, f in Params.model_fields.items()
    if get_origin(f.annotation) is Literal
}


class BfccConfig(Strict):
    program: Literal["bfcc"] = "bfcc"
    chip: Literal["tofino", "tofino2"] = "tofino"
    routes: list[Route] = []
    # Switch-facing ports: feedback from any other port is a forgery.
    trusted_ports: list[PortNumber] = []
    # The sources each host port's hosts may use (tna/include/source_guard.p4):
    # a host sending with a sender of another group would be counted, and
    # backpressured, as that group. Every untrusted routed port must be bound.
    source_bindings: list[SourceBinding] = []
    groups: list[Group] = []
    upstream_ports: list[UpstreamPort] = []
    congestion_points: Annotated[
        list[CongestionPoint], Field(max_length=BFCC_CONGESTION_POINTS)
    ] = []
    reaction_points: list[ReactionPoint] = []
    # The mirror session to the recirculation port (hw profile, never
    # configured) of the first pipe the config uses; each further pipe takes
    # the next id. Fakes' originals recirculate through their reaction
    # port's own pipe; backpressure goes round every pipe through them.
    recirculation_session: Annotated[int, Field(ge=1)] | None = None
    params: Params
