# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Each ingress pipe's share of a class's drain rate.

Registers are per pipe and the virtual queue lives in the ingress pipe: a
class whose senders enter through ports of k pipes has a virtual queue in
each, each seeing only its pipe's arrivals. Drained at the whole class's
rate, a class split evenly over k pipes was marked only above k times its
rate (issue 50, finding 4). So each pipe drains at its share of the rate:
the share of the class's arrivals that came in through it over the last
interval, counted per pipe in `SwitchIngress.class_arrivals` (wrapping
packet counts, read every pipe's copy) and written as that pipe's
`ecn_threshold` entry (the ingress pipe is in its key). With the shares
right, pipe p's queue grows at s_p (lambda - mu) when the class's arrivals
lambda exceed its rate mu and drains otherwise, as the class's one queue
would. K_i stays whole in every pipe (splitting it would need a multiply in
the data plane or a share-scaled K the control plane cannot read back), so a
class spread evenly over k pipes starts marking once its summed virtual
queue reaches about k x K_i (tna/pmqecn/README.md).

Shares are in 1/SHARE_UNITS. A pipe the class had no arrivals from gets the
whole rate (WHOLE): a sender that appears there is marked late for at most
an interval, never early. A pipe with arrivals gets at least
MIN_SHARE_UNITS, so a pipe whose share was tiny does not mark a sender that
speeds up before the next interval measures it. A class's entries are
rewritten only when a pipe's share moves by STEP_UNITS or a pipe starts or
stops sending, and an interval with fewer than MIN_PACKETS arrivals keeps
the shares: a cycle writes nothing while the traffic mix holds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from models.switch.pmqecn import PIPE_KEY_VALUES

from ..common import by_table
from ..logs import logfmt_value
from ..switch import Switch, Write
from . import names as n

log = logging.getLogger("tofcc.pmqecn")

SHARE_UNITS = 64
WHOLE = SHARE_UNITS
MIN_SHARE_UNITS = 4
STEP_UNITS = 4
MIN_PACKETS = 64
U32 = 1 << 32

Shares = tuple[int, ...]
# Each class's arrival count in every pipe, by class id (PipeBalance.read).
Arrivals = Mapping[int, Sequence[int]]
ALL_WHOLE: Shares = (WHOLE,) * PIPE_KEY_VALUES


def shares_from(arrived: Sequence[int]) -> Shares | None:
    """Each pipe's share of one interval's arrivals (per pipe, in pipe
    order; pipes the switch lacks count as none); None: too few to tell."""
    total = sum(arrived)
    if total < MIN_PACKETS:
        return None
    out = [
        WHOLE if a == 0 else max(MIN_SHARE_UNITS, round(SHARE_UNITS * a / total))
        for a in arrived[:PIPE_KEY_VALUES]
    ]
    return tuple(out + [WHOLE] * (PIPE_KEY_VALUES - len(out)))


def moved(old: Shares, new: Shares) -> bool:
    """Whether new shares differ enough from the written ones to rewrite."""
    return any(
        (a == WHOLE) != (b == WHOLE) or abs(a - b) >= STEP_UNITS
        for a, b in zip(old, new, strict=True)
    )


def share_of(rate_bytes_per_s: int, units: int) -> int:
    return rate_bytes_per_s * units // SHARE_UNITS


class PipeBalance:
    """The shares written for each class, and the arrival counts they were
    last measured from."""

    def __init__(self, class_ids: Sequence[int]) -> None:
        self.class_ids = list(class_ids)
        self.shares: dict[int, Shares] = {cid: ALL_WHOLE for cid in self.class_ids}
        self._last: list[Sequence[int]] | None = None
        self.measured = False  # shares taken from two readings at least once

    def forget_counts(self) -> None:
        """The next measure() only takes a baseline (after a push: a
        restarted switch's counts start again from zero)."""
        self._last = None

    def read(self, switch: Switch) -> Arrivals:
        """Every pipe's arrival count of each class (wrapping), by class id:
        one request, which the class meter shares (measure.py)."""
        counts = switch.read_registers_pipes(n.CLASS_ARRIVALS, self.class_ids)
        return dict(zip(self.class_ids, counts, strict=True))

    def measure(self, switch: Switch, arrivals: Arrivals | None = None) -> list[int]:
        """Every pipe's arrivals (`arrivals`, or read now); set and return the
        classes whose shares moved."""
        got = self.read(switch) if arrivals is None else arrivals
        counts = [got[cid] for cid in self.class_ids]
        last, self._last = self._last, counts
        if last is None:
            return []
        self.measured = True
        changed = []
        for cid, now, before in zip(self.class_ids, counts, last, strict=True):
            if len(now) != len(before):
                continue
            # Wrapping 32-bit counts: the difference mod 2^32 is exact while
            # a pipe counts fewer than 2^32 of the class's packets an interval.
            new = shares_from([(a - b) % U32 for a, b in zip(now, before, strict=True)])
            if new is not None and moved(self.shares[cid], new):
                self.shares[cid] = new
                changed.append(cid)
        return changed

    def rebalance(
        self,
        switch: Switch,
        writes_for: Callable[[list[int]], Sequence[Write]],
        arrivals: Arrivals | None = None,
    ) -> list[int]:
        """measure(), then write the moved classes' entries (`writes_for`) as
        one batch; shares and switch stay as they were if it is refused."""
        old = dict(self.shares)
        changed = self.measure(switch, arrivals)
        if not changed:
            return []
        writes: list[Write] = list(writes_for(changed))
        try:
            switch.write(by_table(writes))
        except Exception:
            self.shares = old
            raise
        for cid in changed:
            log.info("event=pipe-shares class=%d shares=%s", cid, logfmt_value(self.describe(cid)))
        return changed

    def describe(self, cid: int) -> str:
        """`0:50% 1:50%`: the pipes not at the whole rate, or `whole`."""
        if not self.measured:
            return "not measured"
        parts = [
            f"{pipe}:{units * 100 // SHARE_UNITS}%"
            for pipe, units in enumerate(self.shares[cid])
            if units != WHOLE
        ]
        return " ".join(parts) or "whole"
