# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC vectors on tofino-model or hardware (ptf_tests/vectors/bfcc/*.yaml).

One switch plays both roles on different ports (see each file's
description); the two-switch chain runs on the models only
(tests/test_bfcc_chain.py). Vectors marked model_only (they set the clock)
are left out here. Fakes recirculate through pipe 0's recirculation port
(68 on Tofino, 6 on Tofino2), which must be in recirculation mode, as it is
by default on tofino-model.

Under the SDE's PTF runner every other vector becomes a BfRuntimeTest;
under pytest each is collected and skipped, saying why.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ptf_tests.common.vector_tests import (
    UNDER_PYTEST,
    Case,
    chip_under_test,
    load_cases,
    ptf_class,
    pytest_cases,
    skip_case,
)

PROGRAM = "bfcc"


def make_bfcc_ptf_classes(namespace: dict[str, Any]) -> int:
    """ptf_tests.common.vector_tests.make_ptf_classes, with a target that can
    name the recirculation port and without the model-only vectors."""
    from bfruntime_client_base_tests import BfRuntimeTest  # type: ignore[import-not-found]

    from hw_profiles import load_profile
    from models.switch.registry import PROGRAMS, make_model
    from models.vectors.format import Vector, VectorFile
    from models.vectors.runner import run_vector
    from ptf_tests.common.bfrt_target import BfrtTarget

    class BfccBfrtTarget(BfrtTarget):  # type: ignore[misc]
        def recirculation_port(self) -> int:
            # The vectors' ports are all in pipe `self.pipe`; recirculate there.
            return int(self.model.profile.recirculation_ports[self.pipe])

    chip = chip_under_test()
    info = PROGRAMS[PROGRAM]
    cases = [c for c in load_cases(PROGRAM, chip) if not c.vector.model_only]
    for case in cases:

        def set_up(self: Any) -> None:
            BfRuntimeTest.setUp(self, 0, PROGRAM)
            self.bfrt_info = self.interface.bfrt_info_get(PROGRAM)

        def run_test(
            self: Any, vfile: VectorFile = case.vfile, vector: Vector = case.vector
        ) -> None:
            target = BfccBfrtTarget(self, self.bfrt_info, make_model(PROGRAM, load_profile(chip)))
            try:
                run_vector(target, vfile, vector, info.queue_hook)
            finally:
                target.reset()

        ptf_class(
            BfRuntimeTest, case, namespace, PROGRAM.capitalize(), setUp=set_up, runTest=run_test
        )
    print(f"{PROGRAM} on {chip}: {len(cases)} vectors for the switch (model-only ones left out)")
    return len(cases)


if UNDER_PYTEST:
    import pytest

    @pytest.mark.sde
    @pytest.mark.parametrize("case", pytest_cases(PROGRAM))
    def test_on_switch(case: Case) -> None:
        if case.vector.model_only:
            pytest.skip("model only: sets the switch clock, which tofino-model cannot")
        skip_case(case)
else:
    make_bfcc_ptf_classes(globals())
