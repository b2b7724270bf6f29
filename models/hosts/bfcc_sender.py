# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC sender reaction: what a host does with the backpressure its first-hop
switch relays (seed 001, section 4.2.2; `params.sender_reaction`).

"When the sender receives a congestion feedback packet from the switch, the
reduced sending rate is the same as that of the switch." The switch cuts the
port toward the congested switch to RT/(RT+1) of its slots for the degree
reported (RT 9, 3, 1: 90 %, 75 %, 50 %); the sender cuts its own rate by the
same fraction of its unthrottled rate. Elsewhere the paper says the senders
do not react at all, which is `sender_reaction: none` (no relay, no model).

Two states, NORMAL and REDUCED(degree):

* backpressure (msg_type 2) naming the sender's group with degree 1-3:
  REDUCED(degree), rate = base x RT(degree) / (RT(degree) + 1). The rate is
  set, not multiplied: a repeat (the switch's refresh) or a new degree
  replaces the cut, as a new message replaces the switch's record, so
  messages never compound;
* clear (msg_type 3) naming the group: NORMAL, rate = base;
* no message for `expiry_ns` since the last backpressure (0 = never): NORMAL,
  as the switch's record expires (`params.expiry_ns`), so a lost clear does
  not hold the sender down for ever;
* anything else (another group, degree 0 or above 3, another type): ignored.
  The switch relays only its group's messages and only from trusted ports;
  the group test is a second line for a host that knows its group.

Choice: no recovery ramp. The switch's cut ends at once on a clear, and the
sender's matches it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

FEEDBACK_TYPE_BACKPRESSURE = 2
FEEDBACK_TYPE_BACKPRESSURE_CLEAR = 3
# RT per degree the BFCC controller installs by default (paper 4.2.2).
PAPER_RATE_THRESHOLDS = {1: 9, 2: 3, 3: 1}


class State(Enum):
    NORMAL = "normal"
    REDUCED = "reduced"


@dataclass(frozen=True)
class SenderReactionConfig:
    base_rate_bps: float
    # Real packets per fake for degree 1, 2, 3: the switch's params.rtN_packets.
    rate_thresholds: Mapping[int, int] = field(default_factory=lambda: dict(PAPER_RATE_THRESHOLDS))
    expiry_ns: int = 0
    # None: accept any group (the switch relays only this host's group).
    group: int | None = None

    def __post_init__(self) -> None:
        if not self.base_rate_bps > 0:
            raise ValueError(f"base_rate_bps must be positive, got {self.base_rate_bps!r}")
        if sorted(self.rate_thresholds) != [1, 2, 3]:
            raise ValueError(
                f"rate_thresholds needs degrees 1, 2, 3, got {sorted(self.rate_thresholds)}"
            )
        for degree, rt in self.rate_thresholds.items():
            if isinstance(rt, bool) or not isinstance(rt, int) or rt < 1:
                raise ValueError(f"rate_thresholds[{degree}] must be an integer >= 1, got {rt!r}")
        if self.expiry_ns < 0:
            raise ValueError(f"expiry_ns must be >= 0, got {self.expiry_ns}")


class BfccSender:
    """One sender's rate under `sender_reaction: match_switch`."""

    def __init__(self, cfg: SenderReactionConfig) -> None:
        self.cfg = cfg
        self.state = State.NORMAL
        self.degree = 0
        self.since_ns = 0
        self.cuts = 0  # backpressure messages acted on
        self.clears = 0  # clears and expiries that restored the rate

    def share(self, degree: int) -> float:
        """The switch's real share of the slots at `degree`: RT/(RT+1)."""
        rt = self.cfg.rate_thresholds[degree]
        return rt / (rt + 1)

    def rate_bps(self, now_ns: int) -> float:
        self._expire(now_ns)
        if self.state is State.REDUCED:
            return self.cfg.base_rate_bps * self.share(self.degree)
        return self.cfg.base_rate_bps

    def on_message(self, msg_type: int, group: int, degree: int, now_ns: int) -> None:
        self._expire(now_ns)
        if self.cfg.group is not None and group != self.cfg.group:
            return
        if msg_type == FEEDBACK_TYPE_BACKPRESSURE and degree in self.cfg.rate_thresholds:
            self.state, self.degree, self.since_ns = State.REDUCED, degree, now_ns
            self.cuts += 1
        elif msg_type == FEEDBACK_TYPE_BACKPRESSURE_CLEAR and self.state is State.REDUCED:
            self._restore()

    def _expire(self, now_ns: int) -> None:
        e = self.cfg.expiry_ns
        if self.state is State.REDUCED and e and now_ns - self.since_ns >= e:
            self._restore()

    def _restore(self) -> None:
        self.state, self.degree = State.NORMAL, 0
        self.clears += 1
