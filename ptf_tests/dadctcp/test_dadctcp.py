# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP vectors on tofino-model or hardware (ptf_tests/vectors/dadctcp/*.yaml).

Every vector runs on the switch: the queue depth reaches the pipeline
through the test hook (SwitchEgress.queue_hook.queue_md_override), one
value per step, so the slope registers see the sequence the vector
names; the registers start at 0 as on a freshly loaded program. Under
the SDE's PTF runner every vector becomes a BfRuntimeTest; under pytest
each is collected and skipped, saying why.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ptf_tests.common.vector_tests import install_vector_tests

install_vector_tests("dadctcp", globals())
