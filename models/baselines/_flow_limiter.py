# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""At most one notification per flow per interval, shared by the DCQCN NP and P4QCN CP.

A notification is allowed when the flow has never been notified or when at
least ``interval_ns`` has passed since its last one, so a mark arriving exactly
``interval_ns`` after the previous notification is answered.  The window is
anchored on the last notification actually sent (suppressed marks do not extend
it), which is how both papers phrase it: "at most one ... every N us".
"""

from __future__ import annotations

from collections.abc import Hashable

from models.checks import Clock, integer


class PerFlowLimiter:
    def __init__(self, interval_ns: int, name: str) -> None:
        self.interval_ns = integer(interval_ns, name, 1)
        self._last_ns: dict[Hashable, int] = {}
        self._clock = Clock()

    def last_ns(self, flow: Hashable) -> int | None:
        return self._last_ns.get(flow)

    def allowed(self, flow: Hashable, now_ns: int) -> bool:
        """Whether ``flow`` may be notified at ``now_ns``; does not consume the slot."""
        now = self._clock.advance(now_ns)
        last = self._last_ns.get(flow)
        return last is None or now - last >= self.interval_ns

    def record(self, flow: Hashable, now_ns: int) -> None:
        self._last_ns[flow] = self._clock.advance(now_ns)
