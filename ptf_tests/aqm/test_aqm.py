# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""AQM (RED, CoDel) vectors on tofino-model or hardware (ptf_tests/vectors/aqm/*.yaml).

Every vector runs on the switch: queue depth and sojourn, the random value
and the ingress clock reach the pipeline through the test hooks
(SwitchEgress.queue_hook.queue_md_override,
SwitchEgress.random_hook.random_override,
SwitchIngress.clock.ingress_tstamp_override); RED's and CoDel's state is
preset and read back through the registers. Under the SDE's PTF runner every
vector becomes a BfRuntimeTest; under pytest each is collected and skipped,
saying why.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ptf_tests.common.vector_tests import install_vector_tests

install_vector_tests("aqm", globals())
