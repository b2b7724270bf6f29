# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""deploy/README.md's systemd steps, run as written under a temporary root
(scripts/check_deploy_guide.py; .ci/run does the same from the wheel)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_systemd_steps_work_under_a_temporary_root(tmp_path: Path) -> None:
    tofcc = Path(sys.executable).parent / "tofcc"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "check_deploy_guide.py"),
            "--root",
            str(tmp_path / "root"),
            "--tofcc",
            str(tofcc),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    etc = tmp_path / "root" / "etc"
    assert (etc / "systemd" / "system" / "tofcc.service").is_file()
    # The copied deployment file found its configs beside it.
    assert "s1: bfcc on grpc://10.0.0.1:50052 (tofino): ok" in proc.stdout
    assert not (etc / "tofcc" / "bfcc-two-tier-s1.yaml").is_symlink()


def test_tofcc_run_stops_after_the_cycles_asked_for(tmp_path: Path) -> None:
    from bfrt_controller.cli import run as tofcc

    assert (
        tofcc(
            [
                "run",
                "--config",
                str(REPO / "deploy" / "model.yaml"),
                "--cycles",
                "2",
                "--metrics-port",
                "0",
            ]
        )
        == 0
    )
