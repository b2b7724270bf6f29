# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The benchmarks run from a fresh checkout, as a user runs them.

They assert no speed (figures belong to the scripts' output, not to timed
tests), but a benchmark that no longer starts is a figure nobody can
reproduce: `control_loop.py` imported the test double by a path that broke
when the double started importing its siblings, and nothing noticed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_control_loop_runs_both_backends() -> None:
    out = run("control_loop.py", "--only-switch", "--cycles", "1")
    assert "BF-Runtime (fake SDE)" in out
    assert "model backend" in out
