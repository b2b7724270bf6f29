# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PMQECN vectors on tofino-model or hardware (ptf_tests/vectors/pmqecn/*.yaml).

Every vector runs on the switch, the virtual-queue ones too: their step
times reach the pipeline through the ingress-clock test hook
(SwitchIngress.clock.ingress_tstamp_override), and feedback is an ingress
mirror through sessions the vectors create with direction INGRESS.
Under the SDE's PTF runner every vector becomes a BfRuntimeTest; under
pytest each is collected and skipped, saying why.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ptf_tests.common.vector_tests import install_vector_tests

install_vector_tests("pmqecn", globals())
