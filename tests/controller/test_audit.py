# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 52, Deliver 4: one audit line for every write, always on, naming
the user, to a file and to syslog (audit.py)."""

from __future__ import annotations

import copy
import json
import os
import pwd
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller.audit import SYSLOG_SOCKET_ENV, AuditLog
from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.bfrt import client as bfrt_client
from bfrt_controller.cli import run as tofcc
from bfrt_controller.service import Daemon, ResolvedTarget
from bfrt_controller.switch import Switch
from doubles import FakeBfrtGrpc
from hw_profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
PMQECN = ROOT / "examples" / "pmqecn-tm-dwrr.yaml"
ECN = "SwitchIngress.ecn_threshold"
FRONT_PANEL = {"board": "tofino-32q", "ports": [{"port": "32/1", "speed": "25G"}]}
ME = pwd.getpwuid(os.geteuid()).pw_name


def audit_file() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "tofcc" / "audit.log"


def lines(path: Path | None = None) -> list[dict[str, Any]]:
    path = path or audit_file()
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines()]


def deployment(path: Path, target: str = "model", **extra: Any) -> Path:
    spec = {
        "name": "leaf1",
        "target": target,
        "program": "pmqecn",
        "config": yaml.safe_load(PMQECN.read_text()),
        "front_panel": copy.deepcopy(FRONT_PANEL),
    }
    path.write_text(yaml.safe_dump({"targets": [spec], **extra}, sort_keys=False))
    return path


@pytest.fixture
def fake_sde(monkeypatch: pytest.MonkeyPatch) -> FakeBfrtGrpc:
    """The SDE's client, as `grpc://leaf1:50052` targets load it: the fake."""
    fake = FakeBfrtGrpc("pmqecn", load_profile("tofino"), address="leaf1:50052")
    monkeypatch.setattr(bfrt_client, "load_bfrt_client", lambda: fake)
    return fake


def test_apply_leaves_one_line_naming_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUDO_USER", "alice")
    state = str(tmp_path / "state.yaml")
    assert tofcc(["--state", state, "apply", str(PMQECN)]) == 0
    (line,) = lines()
    assert line["user"] == ME and line["uid"] == os.geteuid()
    assert line["sudo_user"] == "alice"
    assert line["host"] == socket.gethostname()
    assert line["command"] == f"tofcc --state {state} apply {PMQECN}"
    assert line["action"] == "apply" and line["switch"] == "model"
    assert line["program"] == "pmqecn" and len(line["config_sha"]) == 12
    assert line["result"] == "ok" and "error" not in line
    assert line["time"].endswith("Z")


def test_set_leaves_one_line(tmp_path: Path) -> None:
    base = ["--program", "aqm", "--state", str(tmp_path / "state.yaml")]
    assert tofcc([*base, "set", "max_p=0.1", "--queue", "3/0"]) == 0
    (line,) = lines()
    assert (line["action"], line["program"], line["result"]) == ("set", "aqm", "ok")
    assert line["user"] == ME
    # A set the program refuses (max_p is a probability) is a refused line.
    assert tofcc([*base, "set", "max_p=5", "--queue", "3/0"]) != 0
    refused = lines()[1]
    assert refused["result"] == "refused" and "max_p" in refused["error"]


def test_reads_leave_no_line(tmp_path: Path) -> None:
    state = ["--state", str(tmp_path / "state.yaml")]
    assert tofcc([*state, "apply", str(PMQECN)]) == 0
    assert tofcc([*state, "status", "--json"]) == 0
    assert tofcc([*state, "diff", "--config", str(PMQECN)]) == 0
    assert tofcc([*state, "apply", "--dry-run", str(PMQECN)]) == 0
    assert [x["action"] for x in lines()] == ["apply"]


def test_an_apply_the_switch_refuses_leaves_a_refused_line(
    tmp_path: Path, fake_sde: FakeBfrtGrpc
) -> None:
    deploy = deployment(tmp_path / "d.yaml", "grpc://leaf1:50052")
    fake_sde.fail_write(ECN)
    assert tofcc(["apply", str(deploy)]) == 3
    (line,) = lines()
    assert line["result"] == "refused" and line["switch"] == "leaf1"
    assert line["target"] == "grpc://leaf1:50052" and line["user"] == ME
    assert "refused" in line["error"] and ECN in line["error"]
    # The same file, accepted: one more line, ok.
    assert tofcc(["apply", str(deploy)]) == 0
    assert [x["result"] for x in lines()] == ["refused", "ok"]


def test_an_apply_refused_before_any_write_leaves_a_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(PMQECN.read_text().replace("threshold_cells: 20", "threshold_cells: -1"))
    assert tofcc(["--state", str(tmp_path / "s.yaml"), "apply", str(bad)]) == 2
    (line,) = lines()
    assert line["result"] == "refused" and line["file"] == str(bad)
    assert "threshold_cells" in line["error"]


def test_a_deployment_apply_leaves_one_line_per_switch_in_its_audit_log(tmp_path: Path) -> None:
    deploy = deployment(tmp_path / "d.yaml", audit_log="logs/audit.jsonl")
    assert tofcc(["apply", str(deploy)]) == 0
    (line,) = lines(tmp_path / "logs" / "audit.jsonl")
    assert (line["switch"], line["target"], line["result"]) == ("leaf1", "model", "ok")
    assert not audit_file().exists()
    # --audit-log wins over the file's.
    elsewhere = tmp_path / "other" / "a.log"
    assert tofcc(["apply", str(deploy), "--audit-log", str(elsewhere)]) == 0
    assert len(lines(elsewhere)) == 1


def test_a_one_shot_command_on_a_deployment_target_names_it(tmp_path: Path) -> None:
    deploy = deployment(tmp_path / "d.yaml", audit_log="audit.log")
    assert tofcc(["--config", str(deploy), "set-threshold", "voice=30"]) == 0
    (line,) = lines(tmp_path / "audit.log")
    assert (line["action"], line["switch"], line["result"]) == ("set-threshold", "leaf1", "ok")


def test_an_audit_log_that_cannot_be_written_stops_the_write_first(
    tmp_path: Path, fake_sde: FakeBfrtGrpc, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    deploy = deployment(tmp_path / "d.yaml", "grpc://leaf1:50052", audit_log="file/audit.log")
    assert tofcc(["apply", str(deploy)]) == 2
    assert "audit log" in capsys.readouterr().err
    assert fake_sde.writes() == []  # nothing sent
    # Nor through a symlink someone planted where the log goes.
    (tmp_path / "logs").mkdir(mode=0o700)
    (tmp_path / "logs" / "audit.log").symlink_to(tmp_path / "elsewhere")
    deploy = deployment(tmp_path / "d.yaml", "grpc://leaf1:50052", audit_log="logs/audit.log")
    assert tofcc(["apply", str(deploy)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert fake_sde.writes() == [] and not (tmp_path / "elsewhere").exists()


def test_each_line_also_goes_to_syslog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    address = str(tmp_path / "log.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as syslog:
        syslog.bind(address)
        syslog.settimeout(10)
        monkeypatch.setenv(SYSLOG_SOCKET_ENV, address)
        assert tofcc(["--state", str(tmp_path / "s.yaml"), "apply", str(PMQECN)]) == 0
        message = syslog.recv(65536).decode()
    head, _, body = message.partition(": ")
    assert head == f"<85>tofcc-audit[{os.getpid()}]"  # authpriv.notice
    assert json.loads(body) == lines()[0]


def test_a_write_stopped_by_ctrl_c_is_interrupted_not_refused(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.log", "tofcc optimize --interval 1")
    with pytest.raises(KeyboardInterrupt), log.write("optimize", "model", "pmqecn", {"k": 1}):
        raise KeyboardInterrupt
    (line,) = lines(tmp_path / "a.log")
    assert line["result"] == "interrupted" and line["command"] == "tofcc optimize --interval 1"


# ---- the daemon -------------------------------------------------------------------------


def fake_factory(fake: FakeBfrtGrpc) -> Any:
    def make(t: ResolvedTarget) -> Switch:
        return BfrtSwitch("pmqecn", t.profile, address="leaf1:50052", client_module=fake)

    return make


def test_a_daemon_push_leaves_a_line_and_so_does_each_reload(tmp_path: Path) -> None:
    fake = FakeBfrtGrpc("pmqecn", load_profile("tofino"), address="leaf1:50052")
    deploy = deployment(tmp_path / "d.yaml", "grpc://leaf1:50052")
    d = Daemon(deploy, fake_factory(fake))
    d.step()
    (push,) = lines()
    assert (push["action"], push["switch"], push["result"]) == ("connect-push", "leaf1", "ok")
    assert push["user"] == ME and push["command"] == f"tofcc run --config {deploy}"
    first_sha = push["config_sha"]
    # An edited threshold, reloaded: one line, with the new config's sha.
    deploy.write_text(deploy.read_text().replace("threshold_cells: 20", "threshold_cells: 33"))
    assert d.reload()
    reload = lines()[1]
    assert (reload["action"], reload["result"]) == ("reload", "ok")
    assert reload["config_sha"] != first_sha
    # One the switch refuses: a refused line, and the old config kept.
    deploy.write_text(deploy.read_text().replace("threshold_cells: 33", "threshold_cells: 44"))
    fake.fail_write(ECN)
    assert not d.reload()
    refused = lines()[2]
    assert (refused["action"], refused["result"]) == ("reload", "refused")
    assert ECN in refused["error"]
    # A restart the daemon repairs (the session lost, so a reconnect): a re-push line.
    fake.restart()
    d.clock = lambda: 10**9  # the next cycle is due
    d.step()
    assert [x["action"] for x in lines()][3:] == ["reconnect-repush"]
    d.close()


def test_the_daemon_checks_its_audit_log_before_any_push(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    deploy = deployment(tmp_path / "d.yaml", audit_log="file/audit.log")
    assert tofcc(["run", "--config", str(deploy), "--cycles", "1"]) == 2
    err = capsys.readouterr().err
    assert f"audit log {tmp_path}/file/audit.log" in err and "event=connected" not in err


def test_the_daemons_own_cycle_writes_leave_one_line_per_batch(tmp_path: Path) -> None:
    """A cycle of the program's own tuning that writes is a write like any
    other: one line per batch, naming the daemon's user and command; a cycle
    that writes nothing leaves none."""
    fake = FakeBfrtGrpc("pmqecn", load_profile("tofino"), address="leaf1:50052")
    deploy = deployment(tmp_path / "d.yaml", "grpc://leaf1:50052")
    now = [1000.0]
    d = Daemon(deploy, fake_factory(fake), clock=lambda: now[0])
    d.step()
    app = d.targets["leaf1"].app.inner
    voice = next(c.id for c in app.config.classes if c.name == "voice")
    tuned = iter((21, 22))

    def cycle(_now_s: float) -> int:
        # The optimiser's batch, as it writes one: K_i moved.
        return len(app.set_thresholds({voice: next(tuned, 22)}))

    app.service_cycle = cycle
    for _ in range(3):
        now[0] += 60
        d.step()
    got = [x for x in lines() if x["action"] == "cycle"]
    assert [(x["changes"], x["result"]) for x in got] == [(1, "ok"), (1, "ok")]
    assert all(x["user"] == ME and x["command"] == f"tofcc run --config {deploy}" for x in got)
    d.close()


def test_an_interval_loop_leaves_one_line_per_cycle_that_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`optimize --interval` writes each cycle the optimiser moves something:
    each such batch is a line (`optimize-cycle`, with its changes), a cycle
    that writes nothing leaves none, and the command's own line closes it."""
    from bfrt_controller.pmqecn import app as pmqecn_app

    state = str(tmp_path / "state.yaml")
    assert tofcc(["--state", state, "apply", str(PMQECN)]) == 0
    moves = iter([{1: 21}, {}, {1: 23}])

    def cycle(self: pmqecn_app.PmqecnApp, _now_s: float) -> list[pmqecn_app.Change]:
        return self.set_thresholds(next(moves))

    monkeypatch.setattr(pmqecn_app.PmqecnApp, "optimize_once", cycle)
    args = ["--state", state, "optimize", "--interval", "0.01", "--count", "3"]
    assert tofcc(args) == 0
    got = [(x["action"], x.get("changes"), x["result"]) for x in lines()[1:]]
    assert got == [
        ("optimize-cycle", 1, "ok"),
        ("optimize-cycle", 1, "ok"),
        ("optimize", None, "ok"),
    ]
    assert all(x["user"] == ME for x in lines())
