# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 32 point 3: p4testgen's vectors run on tofino-model through the same
PTF modules as the hand-written ones. Without the SDE: pytest collects every
generated vector of both chips from ptf_tests/ (each skipped, a known
difference saying which); under a stand-in PTF runner the module defines one
BfRuntimeTest per hand-written vector and per generated vector of the chip
under test only, a known difference as an expected failure."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import types
import unittest
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest

from doubles import FakeBfrtGrpc
from hw_profiles import load_profile
from models.vectors.format import (
    DEFAULT_VECTOR_ROOT,
    generated_files,
    known_differences,
    load_vector_file,
    vector_files,
)
from models.vectors.runner import VectorMismatch
from ptf_tests.common import vector_tests
from ptf_tests.common.dataplane import expect_outputs

REPO = Path(__file__).resolve().parents[2]


def _generated_names(program: str) -> dict[str, str | None]:
    """Test name -> known difference, for every generated vector of both chips."""
    out: dict[str, str | None] = {}
    for path in generated_files(DEFAULT_VECTOR_ROOT, program):
        known = known_differences(path)
        for v in load_vector_file(path).vectors:
            out[f"generated_{path.parent.name}_{v.name}"] = known.get(v.name)
    return out


def _hand_written_names(program: str) -> list[str]:
    return [
        v.name
        for p in vector_files(DEFAULT_VECTOR_ROOT, program)
        for v in load_vector_file(p).vectors
    ]


def test_pytest_collects_generated_vectors_from_the_ptf_module() -> None:
    # pmqecn: both chips' files and known differences (register index beyond
    # the register); spie: the files this branch generated.
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "ptf_tests/pmqecn/test_pmqecn.py",
            "ptf_tests/spie/test_spie.py",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for program in ("pmqecn", "spie"):
        collected = {
            line.split("[", 1)[1].rstrip("]")
            for line in out.stdout.splitlines()
            if line.startswith(f"ptf_tests/{program}/") and "[" in line
        }
        generated = _generated_names(program)
        assert {n.split("_")[1] for n in generated} == {"tofino", "tofino2"}
        assert set(generated) <= collected
        assert collected == set(generated) | set(_hand_written_names(program))


def test_a_known_difference_is_skipped_with_its_reason() -> None:
    # No generated test is a known difference today; list one as if it were.
    reason = "p4testgen sets a register cell the program does not have"
    case = next(c for c in vector_tests.load_cases("pmqecn") if c.generated_for is not None)
    case = dataclasses.replace(case, known_difference=reason)
    with pytest.raises(pytest.skip.Exception, match="known difference on the model") as info:
        vector_tests.skip_case(case)
    assert reason in str(info.value)


@pytest.fixture
def ptf_runner(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.SimpleNamespace]:
    """Stand-ins for the SDE's ptf.testutils (the arch test param) and
    bfruntime_client_base_tests.BfRuntimeTest."""
    params = types.SimpleNamespace(arch="tofino")
    ptf_pkg = types.ModuleType("ptf")
    testutils = types.ModuleType("ptf.testutils")
    testutils.test_param_get = lambda name, default=None: getattr(params, name, default)  # type: ignore[attr-defined]
    ptf_pkg.testutils = testutils  # type: ignore[attr-defined]
    base = types.ModuleType("bfruntime_client_base_tests")

    class BfRuntimeTest(unittest.TestCase):
        pass

    base.BfRuntimeTest = BfRuntimeTest  # type: ignore[attr-defined]
    ptf_pkg.ptfutils = types.SimpleNamespace(default_timeout=0.0, default_negative_timeout=0.0)  # type: ignore[attr-defined]
    fake = FakeBfrtGrpc("pmqecn", load_profile("tofino"))
    grpc_pkg = types.ModuleType("bfrt_grpc")
    grpc_pkg.client = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bfrt_grpc", grpc_pkg)
    monkeypatch.setitem(sys.modules, "bfrt_grpc.client", fake)
    # bfrt_target imports the (stand-in) SDE modules: import it afresh.
    monkeypatch.delitem(sys.modules, "ptf_tests.common.bfrt_target", raising=False)
    for name, mod in (
        ("ptf", ptf_pkg),
        ("ptf.testutils", testutils),
        ("bfruntime_client_base_tests", base),
    ):
        monkeypatch.setitem(sys.modules, name, mod)
    yield params
    sys.modules.pop("ptf_tests.common.bfrt_target", None)


@pytest.mark.parametrize(
    ("arch", "chip", "other"), [("tf1", "tofino", "tofino2"), ("tf2", "tofino2", "tofino")]
)
def test_ptf_classes_carry_the_chip_under_tests_generated_vectors(
    ptf_runner: types.SimpleNamespace,
    arch: str,
    chip: str,
    other: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ptf_runner.arch = arch
    # No generated test is a known difference today: list the first of each
    # file as one, so the expected-failure path is exercised.
    reason = "listed here as a known difference"
    files = {
        path: load_vector_file(path) for path in generated_files(DEFAULT_VECTOR_ROOT, "pmqecn")
    }

    def with_one_known(path: Path) -> dict[str, str]:
        listed = dict(known_differences(path))
        listed.setdefault(files[path].vectors[0].name, reason)
        return listed

    monkeypatch.setattr(vector_tests, "known_differences", with_one_known)
    namespace: dict[str, object] = {}
    count = vector_tests.make_ptf_classes("pmqecn", namespace)
    names = {n.removeprefix("Pmqecn_") for n in namespace}
    assert count == len(namespace)
    listed = {path: with_one_known(path) for path in files}
    generated = {
        f"generated_{path.parent.name}_{v.name}": listed[path].get(v.name)
        for path, vfile in files.items()
        for v in vfile.vectors
    }
    mine = {n: r for n, r in generated.items() if n.startswith(f"generated_{chip}_")}
    assert any(r == reason for r in mine.values())
    assert names == set(mine) | set(_hand_written_names("pmqecn"))
    assert not any(n.startswith(f"generated_{other}_") for n in names)
    for name, reason in mine.items():
        cls = namespace[f"Pmqecn_{name}"]
        expecting = getattr(cls.runTest, "__unittest_expecting_failure__", False)  # type: ignore[attr-defined]
        assert expecting == (reason is not None), name
        if reason is not None:
            assert reason in (cls.__doc__ or "")


def test_masked_outputs_compare_only_the_bits_that_count() -> None:
    want = bytes(range(60))
    mask = b"\xff" * 59 + b"\x00"  # p4testgen: the last byte is do-not-care
    got = want[:59] + b"\xee"
    poll = lambda packets: lambda timeout_s, q=deque(packets): q.popleft() if q else None  # noqa: E731
    expect_outputs(poll([(3, got)]), [(3, want)], "ctx", 0.0, 0.0, masks=[mask])
    wrong = b"\xff" + want[1:]
    with pytest.raises(VectorMismatch, match="under the expected packets' masks"):
        expect_outputs(poll([(3, wrong)]), [(3, want)], "ctx", 0.0, 0.0, masks=[mask])
    with pytest.raises(VectorMismatch, match="missing on port 3"):
        expect_outputs(poll([(4, got)]), [(3, want)], "ctx", 0.0, 0.0, masks=[mask])
