# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN vectors on tofino-model or hardware (ptf_tests/vectors/p4qcn/*.yaml).

Every vector runs on the switch: queue depth, the random value and the
ingress clock reach the pipeline through the test hooks
(SwitchEgress.queue_hook.queue_md_override,
SwitchEgress.random_hook.random_override,
SwitchIngress.clock.ingress_tstamp_override), and feedback is an egress
mirror through sessions the vectors create. The flow-slot indices the
rate-limit vectors read assume the chip's CRC-16 is bf-utils' crc_16 as
models/switch/p4qcn.py computes it; a wrong assumption shows up here as a
register mismatch. Under the SDE's PTF runner every vector becomes a
BfRuntimeTest; under pytest each is collected and skipped, saying why.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ptf_tests.common.vector_tests import install_vector_tests

install_vector_tests("p4qcn", globals())
