# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 44's file-system items: no file outside our own is touched, every
path error is exit 2 naming the path, and read-only commands neither lock
nor write.

The lock and state paths are pointed into tmp_path through the environment
(RUNTIME_DIRECTORY, XDG_RUNTIME_DIR, XDG_STATE_HOME), so none of this needs
root. Where a test needs another user (EACCES), it simulates the kernel's
answer for a directory we may not search by making os.stat/os.lstat/os.open
refuse every path inside it: CI runs as root, for whom chmod 000 stops nothing.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_service import pmqecn_target, write_deploy

from bfrt_controller import paths
from bfrt_controller import state as state_module
from bfrt_controller.cli import run
from bfrt_controller.service import claim_deployment

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "pmqecn-tm-dwrr.yaml"
LONG = "a" * 300  # over NAME_MAX (255) on every Linux file system
VICTIM = b"root:x:0:0:a file tofcc must never write\n"


def tofcc(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit code and stderr of one in-process `tofcc` run."""
    capsys.readouterr()
    code = run(list(args))
    return code, capsys.readouterr().err


def assert_one_line_naming(err: str, *names: str) -> None:
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for name in names:
        assert name in err, (name, err)


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The service's lock directory, private, named by both variables (the
    code before issue 44 read XDG_RUNTIME_DIR only)."""
    d = tmp_path / "run"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("RUNTIME_DIRECTORY", str(d))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(d))
    return d


def run_lock(run_dir: Path, deploy: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The lock path `tofcc run` uses for `deploy`: the file a first run leaves."""
    code, err = tofcc(capsys, "run", "--config", str(deploy), "--cycles", "1")
    assert code == 0, err
    (lock,) = run_dir.glob("tofcc-run-*.lock")
    return lock


# ---- reproduction 1: the run lock ------------------------------------------------


def test_a_symlink_at_the_run_lock_path_leaves_its_target_untouched(
    tmp_path: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target())
    lock = run_lock(run_dir, deploy, capsys)
    victim = tmp_path / "victim"
    victim.write_bytes(VICTIM)
    lock.unlink()
    lock.symlink_to(victim)

    code, err = tofcc(capsys, "run", "--config", str(deploy), "--cycles", "1")

    assert victim.read_bytes() == VICTIM
    assert code == 2
    assert_one_line_naming(err, str(lock), "symbolic link")


def test_a_run_lock_symlink_to_a_missing_file_creates_nothing(
    tmp_path: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target())
    lock = run_lock(run_dir, deploy, capsys)
    lock.unlink()
    lock.symlink_to(tmp_path / "planted")
    assert tofcc(capsys, "run", "--config", str(deploy), "--cycles", "1")[0] == 2
    assert not (tmp_path / "planted").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_run_lock_file_another_user_owns_is_not_rewritten(
    tmp_path: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target())
    lock = run_lock(run_dir, deploy, capsys)
    lock.write_bytes(VICTIM)
    os.chown(lock, 65534, 65534)
    code, err = tofcc(capsys, "run", "--config", str(deploy), "--cycles", "1")
    assert code == 0, err
    assert lock.read_bytes() == VICTIM


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o775])
def test_a_run_lock_directory_other_users_can_write_is_refused(
    tmp_path: Path, run_dir: Path, mode: int, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir.chmod(mode)
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target())
    code, err = tofcc(capsys, "run", "--config", str(deploy), "--cycles", "1")
    if mode == 0o775 and paths._own_private_group(run_dir.stat().st_gid):
        # Group-writable by a group only this user is in: no other user can
        # write it, so it is taken (the case the refusal must not catch).
        assert code == 0, err
        return
    assert code == 2
    assert_one_line_naming(err, str(run_dir), "RUNTIME_DIRECTORY", "writable")
    assert list(run_dir.iterdir()) == []


def test_without_a_runtime_directory_the_run_lock_goes_to_a_private_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))  # where the lock went before
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target())

    with claim_deployment(deploy) as alone:
        assert alone
        (lock,) = (tmp_path / "state" / "tofcc").glob("tofcc-run-*.lock")
        assert lock.read_text() == str(os.getpid())

    assert list(shared_tmp.iterdir()) == []
    for d in (tmp_path / "state", tmp_path / "state" / "tofcc"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_a_second_claim_neither_truncates_nor_rewrites_the_holders_pid(
    tmp_path: Path, run_dir: Path
) -> None:
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target())
    with claim_deployment(deploy) as first:
        assert first
        (lock,) = run_dir.glob("tofcc-run-*.lock")
        lock.write_text("4242")  # the holder's PID, as another process wrote it
        with claim_deployment(deploy) as second:
            assert not second
        assert lock.read_text() == "4242"


# ---- the state file, its lock and its directory -----------------------------------


def test_a_symlink_at_the_state_lock_path_leaves_its_target_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "st" / "s.yaml"
    assert tofcc(capsys, "--state", str(state), "set-threshold", "voice=30")[0] == 0
    before = state.read_bytes()
    lock = state.with_name("s.yaml.lock")
    lock.unlink()
    lock.symlink_to(tmp_path / "planted")  # before issue 44 open(..., "a") created it

    code, err = tofcc(capsys, "--state", str(state), "set-threshold", "voice=31")

    assert code == 2
    assert_one_line_naming(err, str(lock), "symbolic link")
    assert not (tmp_path / "planted").exists()
    assert state.read_bytes() == before


def test_a_symlink_at_the_state_path_is_replaced_not_written_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "st" / "s.yaml"
    assert tofcc(capsys, "--state", str(state), "set-threshold", "voice=30")[0] == 0
    victim = tmp_path / "victim.yaml"
    victim.write_bytes(state.read_bytes())  # a valid state, so the command goes on to save
    original = victim.read_bytes()
    state.unlink()
    state.symlink_to(victim)

    assert tofcc(capsys, "--state", str(state), "set-threshold", "voice=31")[0] == 0

    assert victim.read_bytes() == original
    assert not state.is_symlink() and b"31" in state.read_bytes()


@pytest.mark.parametrize("mode", [0o1777, 0o777])
def test_a_state_directory_other_users_can_write_is_refused(
    tmp_path: Path, mode: int, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    code, err = tofcc(capsys, "--state", str(shared / "s.yaml"), "set-threshold", "voice=30")
    assert code == 2
    assert_one_line_naming(err, str(shared), "writable by every user")
    assert list(shared.iterdir()) == []


def test_the_default_state_directory_and_files_are_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TOFCC_PROGRAM", raising=False)
    assert tofcc(capsys, "set-threshold", "voice=30")[0] == 0
    tofcc_dir = tmp_path / "xdg" / "tofcc"
    assert stat.S_IMODE(tofcc_dir.stat().st_mode) == 0o700
    for f in tofcc_dir.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def test_a_failed_save_leaves_no_temporary_and_the_old_state(tmp_path: Path) -> None:
    state = tmp_path / "s.yaml"
    state_module.save_state(state, "pmqecn", {"a": 1}, {})
    before = state.read_bytes()
    (tmp_path / "blocker").mkdir()
    with pytest.raises(paths.PathError, match="blocker"):
        paths.replace_file(tmp_path / "blocker", b"x")  # a directory at the name
    assert state.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "s.yaml"]


# ---- reproduction 9: path errors are exit 2 naming the path ------------------------


def _eval_extends_long(tmp: Path) -> list[str]:
    (tmp / "s.yaml").write_text(f"extends: {LONG}\n")
    return ["eval", "check", str(tmp / "s.yaml")]


LONG_NAME_CASES: dict[str, Callable[[Path], list[str]]] = {
    "diff": lambda t: ["--state", str(t / f"{LONG}.yaml"), "diff", "--config", str(CONFIG)],
    "status": lambda t: ["--state", str(t / f"{LONG}.yaml"), "status"],
    "apply-dry-run": lambda t: [
        "--state",
        str(t / f"{LONG}.yaml"),
        "apply",
        "--dry-run",
        str(CONFIG),
    ],
    "set-threshold": lambda t: ["--state", str(t / f"{LONG}.yaml"), "set-threshold", "voice=3"],
    "eval-check": lambda t: ["eval", "check", LONG],
    "eval-check-path": lambda t: ["eval", "check", str(t / LONG / "s.yaml")],
    "eval-extends": _eval_extends_long,
    "check": lambda t: ["check", "--config", str(t / f"{LONG}.yaml")],
}


@pytest.mark.parametrize("case", sorted(LONG_NAME_CASES))
def test_a_name_too_long_is_exit_2_naming_it(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = LONG_NAME_CASES[case](tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, err = tofcc(capsys, *args)
    assert code == 2, err
    assert_one_line_naming(err, LONG, "too long")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.fixture
def unsearchable(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Make a directory one this process may not search, as the kernel would
    for another user's mode-700 directory: every stat or open of a path in
    it is EACCES (the directory itself can still be stat'ed)."""
    blocked: list[str] = []
    real_stat, real_lstat, real_open = os.stat, os.lstat, os.open

    def inside(path: Any, kw: dict[str, Any]) -> bool:
        if kw.get("dir_fd") is not None or isinstance(path, int):
            return False
        text = os.path.abspath(os.fsdecode(path))
        return any(text.startswith(b + os.sep) for b in blocked)

    def deny(real: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(path: Any, *args: Any, **kw: Any) -> Any:
            if inside(path, kw):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))
            return real(path, *args, **kw)

        return guarded

    monkeypatch.setattr(os, "stat", deny(real_stat))
    monkeypatch.setattr(os, "lstat", deny(real_lstat))
    monkeypatch.setattr(os, "open", deny(real_open))
    return lambda d: blocked.append(str(d.resolve()))


def _state_in(locked: Path) -> Path:
    state = locked / "s.yaml"
    state_module.save_state(state, "pmqecn", {}, {})
    return state


EACCES_CASES: dict[str, Callable[[Path], list[str]]] = {
    "status": lambda d: ["--state", str(_state_in(d)), "status"],
    "diff": lambda d: ["--state", str(_state_in(d)), "diff", "--config", str(CONFIG)],
    "apply-dry-run": lambda d: ["--state", str(_state_in(d)), "apply", "--dry-run", str(CONFIG)],
    "set-threshold": lambda d: ["--state", str(_state_in(d)), "set-threshold", "voice=3"],
    "eval-check": lambda d: ["eval", "check", str(d / "s.yaml")],
    "check": lambda d: ["check", "--config", str(d / "c.yaml")],
}


@pytest.mark.parametrize("case", sorted(EACCES_CASES))
def test_a_directory_we_may_not_search_is_exit_2_naming_the_path(
    tmp_path: Path,
    case: str,
    unsearchable: Callable[[Path], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o700)
    shutil.copy(CONFIG, locked / "c.yaml")
    (locked / "s.yaml").write_text("name: x\n")
    args = EACCES_CASES[case](locked)
    unsearchable(locked)
    code, err = tofcc(capsys, *args)
    assert code == 2, err
    assert_one_line_naming(err, str(locked), "Permission denied")


def _python_as_nobody() -> list[str] | None:
    """A command prefix running this Python as `nobody`, when it can."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return None
    prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
    probe = subprocess.run([*prefix, "-c", "import yaml"], capture_output=True, cwd="/")
    return prefix if probe.returncode == 0 else None


@pytest.fixture
def unprivileged() -> Iterator[tuple[Callable[[list[str]], tuple[int, str]], Path]]:
    """Run tofcc as a user who is not the owner of a mode-700 directory, for
    real: ourselves when not root, else `nobody` through setpriv."""
    base = Path(tempfile.mkdtemp(prefix="tofcc-eacces-"))
    try:
        base.chmod(0o755)
        nobody = _python_as_nobody()
        if os.geteuid() == 0 and nobody is None:
            pytest.skip(
                "running as root, and this Python cannot run as nobody "
                "(setpriv missing or the interpreter is not readable by others)"
            )
        env = dict(os.environ, PYTHONPATH=f"{ROOT}:{ROOT / 'tests'}", HOME=str(base))
        prefix = nobody or [sys.executable]

        def call(args: list[str]) -> tuple[int, str]:
            p = subprocess.run(
                [*prefix, "-m", "bfrt_controller.cli", *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=base,
                timeout=120,
            )
            return p.returncode, p.stderr

        yield call, base
    finally:
        for d in base.rglob("*"):
            if d.is_dir():
                d.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_status_and_eval_check_in_a_directory_of_another_user_for_real(
    unprivileged: tuple[Callable[[list[str]], tuple[int, str]], Path],
) -> None:
    call, base = unprivileged
    locked = base / "locked"
    locked.mkdir()
    state_module.save_state(locked / "s.yaml", "pmqecn", {}, {})
    (locked / "s.yaml").chmod(0o644)
    (locked / "sc.yaml").write_text("name: x\n")
    locked.chmod(0o700 if os.geteuid() == 0 else 0o000)  # root's 700 shuts nobody out
    for args in (
        ["--state", str(locked / "s.yaml"), "status"],
        ["--state", str(locked / "s.yaml"), "diff", "--config", str(CONFIG)],
        ["eval", "check", str(locked / "sc.yaml")],
    ):
        code, err = call(args)
        assert code == 2, (args, err)
        assert_one_line_naming(err, str(locked))


def test_read_only_commands_work_in_a_directory_we_may_only_read_for_real(
    unprivileged: tuple[Callable[[list[str]], tuple[int, str]], Path],
) -> None:
    call, base = unprivileged
    shared = base / "shared"
    shared.mkdir()
    state = shared / "s.yaml"
    assert run(["--state", str(state), "set-threshold", "voice=33"]) == 0
    state.with_name("s.yaml.lock").unlink()
    state.chmod(0o644)
    shared.chmod(0o755 if os.geteuid() == 0 else 0o555)
    for args in (
        ["--state", str(state), "status", "--json"],
        ["--state", str(state), "diff", "--config", str(CONFIG)],
    ):
        code, err = call(args)
        assert code == 0, (args, err)
    assert sorted(p.name for p in shared.iterdir()) == ["s.yaml"]


# ---- reproduction 10: read-only commands take no lock ------------------------------

READ_ONLY = {
    "status": ["status", "--json"],
    "diff": ["diff", "--config", str(CONFIG)],
    "apply-dry-run": ["apply", "--dry-run", str(CONFIG)],
}


@pytest.mark.parametrize("case", sorted(READ_ONLY))
def test_a_read_only_command_does_not_wait_for_a_writer_holding_the_lock(
    tmp_path: Path,
    case: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`optimize --interval` holds the state lock for its whole loop; status
    beside it waited for all of it (here: would give up after 1 s, exit 6)."""
    state = tmp_path / "s.yaml"
    assert tofcc(capsys, "--state", str(state), "set-threshold", "voice=33")[0] == 0
    monkeypatch.setattr(state_module, "LOCK_WAIT_S", 1.0)
    with open(state.with_name("s.yaml.lock"), "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        code, err = tofcc(capsys, "--state", str(state), *READ_ONLY[case])
    assert code == 0, err


def test_status_reads_the_saved_state_while_a_writer_holds_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s.yaml"
    assert tofcc(capsys, "--state", str(state), "set-threshold", "voice=33")[0] == 0
    with state_module.state_lock(state):
        capsys.readouterr()
        assert run(["--state", str(state), "status", "--json"]) == 0
        out = capsys.readouterr().out
    rows = [r for r in yaml.safe_load(out) if r.get("name") == "voice"]
    assert rows and rows[0]["threshold_cells"] == 33


@pytest.mark.parametrize("case", sorted(READ_ONLY))
def test_a_read_only_command_creates_nothing_beside_the_state(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """As another user in a root-owned 755 directory, the lock file status
    created (and so status itself) failed with "Permission denied"."""
    d = tmp_path / "st"
    state = d / "s.yaml"
    assert tofcc(capsys, "--state", str(state), "set-threshold", "voice=33")[0] == 0
    state.with_name("s.yaml.lock").unlink()
    d.chmod(0o555)
    try:
        code, err = tofcc(capsys, "--state", str(state), *READ_ONLY[case])
    finally:
        d.chmod(0o700)
    assert code == 0, err
    assert sorted(p.name for p in d.iterdir()) == ["s.yaml"]


# ---- reports ----------------------------------------------------------------------


def test_a_symlink_in_the_report_directory_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    from evaluation.records import FlowRecord, PacketLog, RunResult
    from evaluation.report import write_report
    from evaluation.scenario import parse_scenario

    s = parse_scenario(
        {
            "name": "tiny",
            "seed": 7,
            "duration_s": 1.0,
            "hosts": ["a", "b"],
            "switches": ["s"],
            "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}],
            "flows": [{"name": "f0", "src": "a", "dst": "b", "size_bytes": 10_000}],
            "schemes": {"pmqecn": {}},
        }
    )
    ms = 1_000_000
    log = PacketLog()
    for i in range(10):
        log.add(0, 1000, i * 10 * ms, i * 10 * ms + ms, False)
    flow = FlowRecord(
        0,
        "f0",
        "a",
        "b",
        "C",
        10_000,
        0,
        packets_sent=10,
        packets_received=10,
        last_rx_ns=91 * ms,
        completed_ns=30 * ms,
    )
    runs = [RunResult("tiny", "pmqecn", "", 7, 1_000 * ms, [flow], log, [])]
    out = tmp_path / "out"
    out.mkdir()
    victims = {}
    for name in ("metrics.csv", "results.json", "timing.json", "report.md"):
        victim = tmp_path / f"victim-{name}"
        victim.write_bytes(VICTIM)
        (out / name).symlink_to(victim)
        victims[name] = victim

    write_report(s, runs, out)

    for name, victim in victims.items():
        assert victim.read_bytes() == VICTIM, name
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 0
