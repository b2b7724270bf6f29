# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""pytest side of ptf_tests/: report how many vectors the PTF modules carry."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file, vector_files


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`pytest -m quick` (tests/quick_subset.py) has nothing here: the PTF
    modules are not even imported."""
    return True if config.option.markexpr == "quick" else None


def pytest_report_header() -> list[str]:
    lines = []
    for path in vector_files(DEFAULT_VECTOR_ROOT):
        n = len(load_vector_file(path).vectors)
        lines.append(f"ptf vectors: {path.parent.name}/{path.name}: {n}")
    return lines
