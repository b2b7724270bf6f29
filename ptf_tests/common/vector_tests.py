# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Turn a program's vector files into tests: PTF classes under the SDE's PTF
runner, or pytest tests skipped with the reason when the SDE is absent.

A program's tests are its hand-written files (vectors/<program>/*.yaml, for
every chip unless a file names one) and p4testgen's for the chip under test
(vectors/<program>/generated/<chip>/p4testgen.yaml, scripts/testgen.py).
Those run on the chip's device ports as p4testgen chose them; one that
known_differences.yaml lists (the model does not reproduce it) runs as an
expected failure carrying that reason, so it is neither dropped nor allowed
to pass unnoticed. Under pytest, which has no chip under test, both chips'
generated files are collected.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from models.vectors.format import (  # noqa: E402
    DEFAULT_VECTOR_ROOT,
    Vector,
    VectorFile,
    generated_files,
    known_differences,
    load_vector_file,
    vector_files,
)

MISSING = [m for m in ("ptf", "bfrt_grpc") if importlib.util.find_spec(m) is None]
UNDER_PYTEST = "pytest" in sys.modules and "PTF_RUN" not in os.environ
CHIPS = ("tofino", "tofino2")


def skip_reason() -> str:
    if MISSING:
        return f"needs the Intel SDE: {', '.join(MISSING)} not installed"
    return "PTF vectors run through ptf_tests/run_ptf.sh against tofino-model or a switch"


@dataclass(frozen=True)
class Case:
    vfile: VectorFile
    vector: Vector
    # The chip of a p4testgen file (generated/<chip>/), None for a hand-written one.
    generated_for: str | None = None
    # Why the model does not reproduce it (known_differences.yaml), if it is listed.
    known_difference: str | None = None

    @property
    def name(self) -> str:
        if self.generated_for is None:
            return self.vector.name
        return f"generated_{self.generated_for}_{self.vector.name}"

    def describe(self) -> str:
        text = self.vector.description
        if self.known_difference is not None:
            text += f" [known difference on the model: {self.known_difference}]"
        return text


def load_cases(program: str, chip: str | None = None) -> list[Case]:
    """The program's hand-written vectors for `chip` and p4testgen's for it;
    chip None (pytest collection): every hand-written vector and both chips'
    generated ones."""
    cases: list[Case] = []
    for path in vector_files(DEFAULT_VECTOR_ROOT, program):
        vfile = load_vector_file(path)
        if chip is None or vfile.chip in (None, chip):
            cases.extend(Case(vfile, v) for v in vfile.vectors)
    for path in generated_files(DEFAULT_VECTOR_ROOT, program, chip):
        vfile = load_vector_file(path)
        known = known_differences(path)
        for v in vfile.vectors:
            cases.append(Case(vfile, v, path.parent.name, known.get(v.name)))
    return cases


def load_program_vectors(program: str, chip: str | None = None) -> list[tuple[VectorFile, Vector]]:
    return [(c.vfile, c.vector) for c in load_cases(program, chip)]


def chip_under_test() -> str:
    import ptf.testutils as testutils  # type: ignore[import-not-found]

    arch = testutils.test_param_get("arch", default="tofino")
    return "tofino2" if arch in ("tofino2", "tf2") else "tofino"


def ptf_class(base: type, case: Case, namespace: dict[str, Any], prefix: str, **body: Any) -> None:
    """One BfRuntimeTest class for `case` in `namespace`: a known difference
    becomes an expected failure (unittest reports an unexpected success)."""
    if case.known_difference is not None:
        body["runTest"] = unittest.expectedFailure(body["runTest"])
    name = f"{prefix}_{case.name}"
    namespace[name] = type(name, (base,), {"__doc__": case.describe(), **body})


def make_ptf_classes(program: str, namespace: dict[str, Any]) -> int:
    """Define one BfRuntimeTest class per vector in `namespace`; return the count."""
    from bfruntime_client_base_tests import BfRuntimeTest  # type: ignore[import-not-found]

    from hw_profiles import load_profile
    from models.switch.registry import PROGRAMS, make_model
    from models.vectors.runner import run_vector
    from ptf_tests.common.bfrt_target import BfrtTarget
    from ptf_tests.common.ports import PortMappedTarget

    chip = chip_under_test()
    info = PROGRAMS[program]
    cases = load_cases(program, chip)
    for case in cases:

        def set_up(self: Any) -> None:
            BfRuntimeTest.setUp(self, 0, program)
            self.bfrt_info = self.interface.bfrt_info_get(program)

        def run_test(
            self: Any, vfile: VectorFile = case.vfile, vector: Vector = case.vector
        ) -> None:
            profile = load_profile(chip)
            model = make_model(program, profile)
            switch = BfrtTarget(self, self.bfrt_info, model, profile)
            # Vector ports are front-panel ports: 1 is device port 9 on Tofino2.
            # p4testgen's are device ports already.
            target: Any = switch
            if vfile.ports == "vector":
                target = PortMappedTarget(switch, profile, model)
            try:
                run_vector(target, vfile, vector, info.queue_hook)
            finally:
                switch.reset()

        ptf_class(
            BfRuntimeTest, case, namespace, program.capitalize(), setUp=set_up, runTest=run_test
        )
    generated = sum(c.generated_for is not None for c in cases)
    known = sum(c.known_difference is not None for c in cases)
    print(
        f"{program} on {chip}: {len(cases)} vectors, {generated} of them p4testgen's "
        f"({known} known differences, run as expected failures)"
    )
    return len(cases)


def pytest_cases(program: str) -> list[Any]:
    """Every case as a pytest param, id'd by name (generated ones by chip)."""
    import pytest

    return [pytest.param(c, id=c.name) for c in load_cases(program)]


def skip_case(case: Case) -> None:
    import pytest

    reason = skip_reason()
    if case.known_difference is not None:
        reason += f"; known difference on the model: {case.known_difference}"
    pytest.skip(reason)


def install_vector_tests(program: str, namespace: dict[str, Any]) -> None:
    """A program's PTF module in one call: under the SDE's PTF runner one
    BfRuntimeTest class per vector; under pytest one parametrized test per
    vector, collected and skipped with the reason (no SDE here)."""
    if not UNDER_PYTEST:
        make_ptf_classes(program, namespace)
        return
    import pytest

    @pytest.mark.sde
    @pytest.mark.parametrize("case", pytest_cases(program))
    def test_on_switch(case: Case) -> None:
        skip_case(case)

    namespace["test_on_switch"] = test_on_switch
