# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""S-PIE vectors on tofino-model or hardware (ptf_tests/vectors/spie/*.yaml).

The vectors that need no clock (forged and rejected state updates, spoofed
sources, forwarding before any update) run on the switch. Those that pin
the clock or follow a PI step's copy through the recirculation port are
marked model_only: the update's time is the step's packet's clock, but
tofino-model's clock on the recirculation port cannot be pinned, so they
run on the reference model only. Under the SDE's PTF runner every vector
becomes a BfRuntimeTest; under pytest each is collected and skipped,
saying why.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ptf_tests.common.vector_tests import install_vector_tests

install_vector_tests("spie", globals())
