# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every shared vector, run on the reference model for both chips."""

from __future__ import annotations

from pathlib import Path

import pytest

from hw_profiles import load_profile
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.vectors.format import (
    DEFAULT_VECTOR_ROOT,
    Vector,
    VectorFile,
    load_vector_file,
    vector_files,
)
from models.vectors.runner import run_vector

VECTOR_ROOT = DEFAULT_VECTOR_ROOT


def _cases() -> list[tuple[Path, VectorFile, Vector]]:
    out = []
    for path in vector_files(VECTOR_ROOT):
        vfile = load_vector_file(path)
        out.extend((path, vfile, v) for v in vfile.vectors)
    return out


CASES = _cases()


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
@pytest.mark.parametrize(
    ("path", "vfile", "vector"),
    CASES,
    ids=[f"{p.parent.name}/{p.stem}/{v.name}" for p, _, v in CASES],
)
def test_vector(chip: str, path: Path, vfile: VectorFile, vector: Vector) -> None:
    model = make_model(vfile.program, load_profile(chip), vector.pipes)
    run_vector(ModelTarget(model), vfile, vector, PROGRAMS[vfile.program].queue_hook)


def test_every_program_has_vectors() -> None:
    for program in PROGRAMS:
        assert vector_files(VECTOR_ROOT, program), f"no vectors for {program}"


def test_pmqecn_vector_count() -> None:
    n = sum(len(load_vector_file(p).vectors) for p in vector_files(VECTOR_ROOT, "pmqecn"))
    assert n >= 15


def test_vector_file_program_matches_directory() -> None:
    for path in vector_files(VECTOR_ROOT):
        assert load_vector_file(path).program == path.parent.name
