# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 12 points 5-7, dry run of ptf_tests/run_ptf.sh against a stand-in SDE
whose run_*.sh scripts record their arguments and leave a daemon behind (as
sudo + bf_switchd do): the conf file and the chip's port file are passed, and
every process is gone when the script returns, also when the tests fail."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUN_PTF = REPO / "ptf_tests" / "run_ptf.sh"

DAEMON = """#!/usr/bin/env bash
echo "$0 $*" >> "$LOG"
# A child that outlives a plain kill of this script, as sudo and the daemon do.
{extra}
sleep 1000 &
echo $! >> "$PIDS"
wait
"""
LISTEN = (
    'python3 -c "import socket,sys,time; s=socket.socket(); '
    "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
    "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(1000)\" $BFRT_GRPC_PORT &\n"
    'echo $! >> "$PIDS"'
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fake_sde(tmp: Path, tests_rc: int) -> Path:
    sde = tmp / "sde"
    sde.mkdir()
    (sde / "run_tofino_model.sh").write_text(DAEMON.format(extra=""))
    (sde / "run_switchd.sh").write_text(DAEMON.format(extra=LISTEN))
    (sde / "run_p4_tests.sh").write_text(
        f'#!/usr/bin/env bash\necho "$0 $*" >> "$LOG"\nexit {tests_rc}\n'
    )
    for f in sde.iterdir():
        f.chmod(0o755)
    return sde


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie not yet reaped by init counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


@pytest.mark.parametrize(
    ("chip", "ports", "arch"),
    [("tofino", "ports.json", "tf1"), ("tofino2", "ports_tof2.json", "tf2")],
)
@pytest.mark.parametrize("tests_rc", [0, 1])
def test_start_passes_conf_and_ports_and_stops_every_process(
    tmp_path: Path, chip: str, ports: str, arch: str, tests_rc: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf_dir = REPO / "build" / chip / "pmqecn"
    conf = conf_dir / "pmqecn.conf"
    # The first directory this test creates, removed again at the end.
    made_dir = next(
        (d for d in (REPO / "build", conf_dir.parent, conf_dir) if not d.exists()), None
    )
    made = not conf.exists()
    if made:
        conf_dir.mkdir(parents=True, exist_ok=True)
        conf.write_text("{}")
    try:
        sde = fake_sde(tmp_path, tests_rc)
        log, pids = tmp_path / "calls.log", tmp_path / "pids"
        env = {
            **os.environ,
            "SDE": str(sde),
            "SDE_INSTALL": str(sde / "install"),
            "LOG": str(log),
            "PIDS": str(pids),
            "BFRT_GRPC_PORT": str(free_port()),
        }
        proc = subprocess.run(
            ["bash", str(RUN_PTF), "--start", "pmqecn", chip],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == tests_rc, proc.stderr
        calls = log.read_text().splitlines()
        model = next(c for c in calls if "run_tofino_model.sh" in c)
        switchd = next(c for c in calls if "run_switchd.sh" in c)
        tests = next(c for c in calls if "run_p4_tests.sh" in c)
        assert f"-c {conf}" in model and f"-c {conf}" in switchd
        assert f"--arch {arch}" in model and f"--arch {arch}" in switchd
        assert (
            f"-f {REPO / 'ptf_tests' / ports}" in model
            and f"-f {REPO / 'ptf_tests' / ports}" in tests
        )
        assert "-- --background" in switchd
        deadline = time.monotonic() + 5
        left = [int(p) for p in pids.read_text().split()]
        while any(alive(p) for p in left) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in left if alive(p)], "a process outlived run_ptf.sh"
    finally:
        if made_dir is not None:
            shutil.rmtree(made_dir)
        elif made:
            conf.unlink()


def test_unknown_program_or_chip_is_refused(tmp_path: Path) -> None:
    sde = fake_sde(tmp_path, 0)
    env = {**os.environ, "SDE": str(sde), "LOG": str(tmp_path / "l"), "PIDS": str(tmp_path / "p")}
    proc = subprocess.run(
        ["bash", str(RUN_PTF), "nosuchprogram", "tofino"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "no PTF module" in proc.stderr
    proc = subprocess.run(
        ["bash", str(RUN_PTF), "pmqecn", "tofino3"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2 and "tofino or tofino2" in proc.stderr
