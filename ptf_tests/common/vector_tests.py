"""Turn a program's vector files into tests: PTF classes under the SDE's PTF
runner, or pytest tests skipped with the reason when the SDE is absent.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from models.vectors.format import (  # noqa: E402
    DEFAULT_VECTOR_ROOT,
    Vector,
    VectorFile,
    load_vector_file,
    vector_files,
)

MISSING = [m for m in ("ptf", "bfrt_grpc") if importlib.util.find_spec(m) is None]
UNDER_PYTEST = "pytest" in sys.modules and "PTF_RUN" not in os.environ


def skip_reason() -> str:
    if MISSING:
        return f"needs the Intel SDE: {', '.join(MISSING)} not installed"
    return "PTF vectors run through ptf_tests/run_ptf.sh against tofino-model or a switch"


def load_program_vectors(program: str) -> list[tuple[VectorFile, Vector]]:
    cases = []
    for path in vector_files(DEFAULT_VECTOR_ROOT, program):
        vfile = load_vector_file(path)
        cases.extend((vfile, v) for v in vfile.vectors)
    return cases


def make_ptf_classes(program: str, namespace: dict[str, Any]) -> int:
    """Define one BfRuntimeTest class per vector in `namespace`; return the count."""
    import ptf.testutils as testutils  # type: ignore[import-not-found]
    from bfruntime_client_base_tests import BfRuntimeTest  # type: ignore[import-not-found]

    from hw_profiles import load_profile
    from models.switch.registry import PROGRAMS, make_model
    from models.vectors.runner import run_vector
    from ptf_tests.common.bfrt_target import BfrtTarget
    from ptf_tests.common.ports import PortMappedTarget

    arch = testutils.test_param_get("arch", default="tofino")
    chip = "tofino2" if arch in ("tofino2", "tf2") else "tofino"
    info = PROGRAMS[program]
    cases = load_program_vectors(program)
    for vfile, vector in cases:

        def set_up(self: Any) -> None:
            BfRuntimeTest.setUp(self, 0, program)
            self.bfrt_info = self.interface.bfrt_info_get(program)

        def run_test(self: Any, vfile: VectorFile = vfile, vector: Vector = vector) -> None:
            profile = load_profile(chip)
            model = make_model(program, profile)
            switch = BfrtTarget(self, self.bfrt_info, model, profile)
            # Vector ports are front-panel ports: 1 is device port 9 on Tofino2.
            target = PortMappedTarget(switch, profile, model)
            try:
                run_vector(target, vfile, vector, info.queue_hook)
            finally:
                switch.reset()

        name = f"{program.capitalize()}_{vector.name}"
        namespace[name] = type(name, (BfRuntimeTest,), {"setUp": set_up, "runTest": run_test})
    nfiles = len(vector_files(DEFAULT_VECTOR_ROOT, program))
    print(f"{program}: {len(cases)} vectors from {nfiles} files")
    return len(cases)


def install_vector_tests(program: str, namespace: dict[str, Any]) -> None:
    """A program's PTF module in one call: under the SDE's PTF runner one
    BfRuntimeTest class per vector; under pytest one parametrized test per
    vector, collected and skipped with the reason (no SDE here)."""
    if not UNDER_PYTEST:
        make_ptf_classes(program, namespace)
        return
    import pytest

    cases = load_program_vectors(program)

    @pytest.mark.sde
    @pytest.mark.parametrize("vector", [v for _, v in cases], ids=[v.name for _, v in cases])
    def test_on_switch(vector: object) -> None:
        pytest.skip(skip_reason())

    namespace["test_on_switch"] = test_on_switch
