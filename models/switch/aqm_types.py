# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The AQM family's sizes, modes, bridged header and ingress metadata
(tna/include/size.p4's aqm section and tna/aqm/types.p4), shared by the
family's model (models/switch/aqm.py), its mechanisms
(models/switch/aqm_mechanisms.py) and the controller."""

from __future__ import annotations

from dataclasses import dataclass, field

from .common import U32_MASK
from .headers import Header, Headers, ParsedMd, bits

AQM_PORTS = 512
AQM_SLOTS = 256
AQM_QUEUE_ENTRIES = 512
AQM_RED_LEVEL_ENTRIES = 4096
AQM_CODEL_DUE_ENTRIES = 4096
# pi_terms: per curve one ternary prefix per step of the sojourn (at most
# 1024, bfrt_controller/aqm/pi.py) and the saturating prefixes above.
AQM_PI_TERMS_ENTRIES = 4096
# l4s_queue: an IPv4 packet's ECN field picks the queue of a DualPI2 pair.
AQM_L4S_QUEUE_ENTRIES = 2048
# A level of 32768 drops every packet: the 15-bit random value is below it.
AQM_LEVEL_ALWAYS = 0x8000
U16_MASK = 0xFFFF
SIGN_32 = 0x80000000

# eg_md.mode: 3 bits, every value used.
MODE_NONE = 0
MODE_RED = 1
MODE_CODEL = 2
MODE_PIE = 3
MODE_DCTCP = 4
MODE_DADCTCP = 5
MODE_DUALPI2_C = 6
MODE_DUALPI2_L = 7


def not_before(t_ticks: int, deadline_ticks: int) -> bool:
    """`t - deadline < 0x80000000`: t at or after the deadline, on a clock
    that wraps (the sign of the 32-bit difference)."""
    return (t_ticks - deadline_ticks) & U32_MASK < SIGN_32


@dataclass
class AqmBridged(Header):
    now_ticks: int = bits(32)
    arrival_ns: int = bits(32)


@dataclass
class AqmHeaders(Headers):
    """`struct headers_t` with the instance only the AQM program makes valid."""

    aqm_bridged: AqmBridged = field(default_factory=AqmBridged)


@dataclass
class IgMd:
    parsed: ParsedMd = field(default_factory=ParsedMd)
    forged: bool = False
    spoofed: bool = False
    now_ticks: int = 0
