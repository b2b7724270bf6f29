# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""One switch for the evaluation harness's speed-ups (issue 9, deliverable 7).

Each speed-up keeps the code it replaced runnable beside it and picks its
path from `ENABLED`: benchmarks/eval_speed.py times both paths in one
process, and tests/test_speedups.py checks they give the same bytes.
Nothing else turns the speed-ups off. The switch is read where a path is
chosen: per call for header packing and controller writes, when a `Sim` is
made for the ns-3 glue (so flip it between runs, never during one).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

ENABLED = True
# The compiled per-packet cores (models/switch/native), one of the speed-ups:
# off with ENABLED, or alone (native_disabled) to compare them with the
# Python fast path.
NATIVE = True


@contextmanager
def _off(flag: str) -> Iterator[None]:
    """This module's `flag` False inside the block, as it was after."""
    module = sys.modules[__name__]
    saved = getattr(module, flag)
    setattr(module, flag, False)
    try:
        yield
    finally:
        setattr(module, flag, saved)


def native_disabled() -> AbstractContextManager[None]:
    """Run the models' Python per packet, the other speed-ups on."""
    return _off("NATIVE")


def disabled() -> AbstractContextManager[None]:
    """Run the reference (pre-speed-up) code paths inside the block."""
    return _off("ENABLED")
