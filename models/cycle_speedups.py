# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""One switch for the control loop's speed-ups (issue 48, deliverable 4).

As models/speedups.py does for the evaluation: each speed-up of a control
cycle keeps the code it replaced runnable beside it and picks its path from
`ENABLED`, read per call. benchmarks/control_loop.py times both paths in one
run, and tests/controller/test_cycle_speedups.py checks that they leave the
switch in the same state through the same writes. Nothing else turns the
speed-ups off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

ENABLED = True


@contextmanager
def disabled() -> Iterator[None]:
    """Run the reference (pre-speed-up) control-cycle paths inside the block."""
    global ENABLED
    saved = ENABLED
    ENABLED = False
    try:
        yield
    finally:
        ENABLED = saved
