# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`pytest -m quick`: tests/quick_subset.py's files, marked by tests/conftest.py."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from quick_subset import QUICK

from tofcc_common import registry

REPO = Path(__file__).resolve().parents[1]


def test_every_quick_file_exists() -> None:
    """A renamed test file would drop out of the subset without a word."""
    assert sorted(p for p in QUICK if not (REPO / p).is_file()) == []


def test_quick_files_are_marked(request: pytest.FixtureRequest) -> None:
    assert "tests/test_quick_subset.py" in QUICK
    assert request.node.get_closest_marker("quick") is not None


def test_quick_runs_every_programs_vectors_and_cli() -> None:
    # Both parametrised over every vector file of every program (the
    # registry's programs: test_every_program_has_vectors).
    assert {"tests/test_vectors_on_model.py", "tests/test_generated_vectors.py"} <= QUICK
    # Bad input to every program's CLI (its EVERY is the registry's).
    assert "tests/controller/test_malformed_cli.py" in QUICK


def test_quick_runs_each_programs_controller_tests() -> None:
    """A program with controller tests of its own has some in the subset (a
    program new_program.py just made has none yet: nothing to ask)."""
    texts = {p.relative_to(REPO).as_posix(): p.read_text() for p in REPO.glob("tests/**/*.py")}
    missing = []
    for program in registry.PROGRAMS:
        mine = {p for p, t in texts.items() if re.search(rf"bfrt_controller\.{program}\b", t)}
        if mine and not mine & QUICK:
            missing.append(program)
    assert missing == []


def test_only_the_quick_files_are_marked(request: pytest.FixtureRequest) -> None:
    for item in request.session.items:
        quick = item.get_closest_marker("quick") is not None
        assert quick == (item.path.relative_to(REPO).as_posix() in QUICK), item.nodeid


def test_the_suite_runs_on_every_core_and_says_how_long() -> None:
    """README's test command and .ci/run's use every core; pyproject keeps a
    file on one worker and every skip in the summary; README gives the
    measured time of the whole suite and of `-m quick` beside them."""
    addopts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"][
        "addopts"
    ].split()
    assert "-ra" in addopts and "--dist" in addopts
    assert addopts[addopts.index("--dist") + 1] == "loadfile"
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^\.venv/bin/python -m pytest -q -n auto$", ci, re.M)
    assert "$rc -eq 5" in ci
    readme = (REPO / "README.md").read_text()
    assert "constraints/eval.txt && .venv/bin/python -m pytest -q -n auto\n" in readme
    for subset in ("", " -m quick"):
        timed = rf"^\.venv/bin/python -m pytest -q -n auto{subset} +# [^\n]*: \d+ (?:min|s)\b"
        assert re.search(timed, readme, re.M), f"no time beside pytest -n auto{subset}"
