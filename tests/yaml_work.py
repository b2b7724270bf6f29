# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""How much work the YAML loader did, counted rather than timed.

A bound in seconds holds on one machine and fails on a slower or busier one;
what the loader's hardening promises is a bound on *work*: it stops pulling
parser events soon after a limit is passed and builds nothing from a refused
file. These counters measure exactly that, the same on every build.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from hw_profiles import safe_yaml

# The most events a refused file may cost: every node is one start event and
# at most one end event, plus stream and document start, and the closes of the
# levels still open when the limit is hit.
MAX_EVENTS = 2 * safe_yaml.MAX_NODES + safe_yaml.MAX_DEPTH + 4


@dataclass
class Work:
    events: int = 0  # parser events pulled
    built: int = 0  # Python values built from the composed graph


class _Counted:
    def __init__(self, events: Any, work: Work) -> None:
        self._events, self._work = events, work

    def get_event(self) -> Any:
        self._work.events += 1
        return self._events.get_event()

    def dispose(self) -> None:
        self._events.dispose()


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    work = Work()
    make = safe_yaml._events
    value = safe_yaml._Builder.value

    def build(self: Any, node: Any) -> Any:
        work.built += 1
        return value(self, node)

    with monkeypatch.context() as patch:
        patch.setattr(safe_yaml, "_events", lambda text: _Counted(make(text), work))
        patch.setattr(safe_yaml._Builder, "value", build)
        yield work
