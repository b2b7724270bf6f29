# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc --program p4qcn set watchdog=on|off` reaches a running daemon
(issue 52, Deliver 2): through its control socket while it runs
(control.py), through the deployment file's `pfc.watchdog.enabled` and a
reload for good; the daemon, the switch's one writer, makes the write and
its audit line names the operator who asked."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from test_pfc_view import storm_daemon, with_pfc

from bfrt_controller.cli import run
from bfrt_controller.control import ControlServer, Request, socket_path
from bfrt_controller.p4qcn.app import P4qcnApp
from bfrt_controller.p4qcn.config import parse_config
from bfrt_controller.running import running_config
from bfrt_controller.service import Daemon
from doubles.backends import both_backends

ME = pwd.getpwuid(os.geteuid()).pw_name
Capsys = pytest.CaptureFixture[str]


@pytest.fixture(autouse=True)
def _short_run_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A run directory short enough for a socket's path (108 bytes)."""
    where = Path(tempfile.mkdtemp(prefix="tofcc-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(where))
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)
    yield where
    shutil.rmtree(where, ignore_errors=True)


class Running:
    """A daemon's loop on a thread of its own, as `tofcc run` runs it, with
    its control socket; the test is the operator's shell."""

    def __init__(self, d: Daemon, deploy: Path) -> None:
        self.d = d
        path = socket_path(deploy)
        assert path is not None
        self.server = ControlServer(path, d.submit)
        self._stop = threading.Event()
        self.served = 0
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.d._wake.wait(0.05)
            self.d._wake.clear()
            waiting = self.d.inbox.waiting()
            self.d.step(reload_wait_s=0.0)
            self.served += waiting

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


def audit() -> list[dict[str, object]]:
    path = Path(os.environ["XDG_STATE_HOME"]) / "tofcc" / "audit.log"
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_set_watchdog_off_reaches_the_running_daemon(tmp_path: Path, capsys: Capsys) -> None:
    d, _, _ = storm_daemon(tmp_path)
    d.step()  # connected, watchdog polling
    app = d.targets["leaf1"].app.inner
    assert isinstance(app, P4qcnApp) and app.watchdog_period_s() is not None
    deploy = tmp_path / "d.yaml"
    daemon = Running(d, deploy)
    try:
        base = ["--config", str(deploy), "--program", "p4qcn"]
        assert run([*base, "set", "watchdog=off"]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert "sent to the running tofcc run" in out and "watchdog" in out
        # The daemon's own app changed: it polls no watchdog now.
        assert not app.watchdog_on and app.watchdog_period_s() is None
        rows = [r for r in d.targets["leaf1"].rows if r.get("section") == "pfc watchdog"]
        assert rows and all(r["enabled"] == 0 for r in rows)
        # One audit line, written by the daemon, naming who asked.
        (line,) = [x for x in audit() if x["action"] == "set"]
        assert (line["user"], line["result"], line["switch"]) == (ME, "ok", "leaf1")
        assert line["command"] == f"tofcc --program p4qcn --config {deploy} set watchdog=off"
        assert line["via"] == f"tofcc run --config {deploy}"
        # A value the daemon does not take through the socket: exit 2, nothing sent.
        assert run([*base, "set", "watchdog=on", "q_min_cells=5"]) == 2
        assert "reload" in capsys.readouterr().err
        assert run([*base, "set", "watchdog=on"]) == 0
        assert app.watchdog_on and app.watchdog_period_s() is not None
        # The refused one left its own line (as any write refused before it was sent).
        assert [x["result"] for x in audit() if x["action"] == "set"] == ["ok", "refused", "ok"]
    finally:
        daemon.close()
        d.close()


def test_a_request_the_daemon_refuses_is_the_commands_error(tmp_path: Path, capsys: Capsys) -> None:
    d, _, _ = storm_daemon(tmp_path)
    d.step()
    deploy = tmp_path / "d.yaml"
    daemon = Running(d, deploy)
    try:
        request = Request({"op": "set", "switch": "nope", "values": {"watchdog": "off"}}, 0, 0)
        d.submit(request)
        assert request.done.wait(30)
        assert request.answer["ok"] is False and request.answer["exit_code"] == 2
        assert "no target 'nope'" in request.answer["error"]
        assert d.targets["leaf1"].app.inner.watchdog_on  # type: ignore[attr-defined]
    finally:
        daemon.close()
        d.close()


def test_without_a_socket_a_model_targets_daemon_adopts_it_from_the_state_file(
    tmp_path: Path, capsys: Capsys
) -> None:
    """No control socket (a daemon of before it, or none): the command writes
    the model target's state file itself, and a daemon running the target
    takes it at its next cycle (model_states.adopt_one_shot_writes)."""
    deploy = tmp_path / "d.yaml"
    target = {"name": "m1", "target": "model", "program": "p4qcn", "config": with_pfc()}
    deploy.write_text(yaml.safe_dump({"targets": [target]}))
    now = [1000.0]
    d = Daemon(deploy, clock=lambda: now[0], keep_model_state=True)
    d.step()
    app = d.targets["m1"].app.inner
    assert isinstance(app, P4qcnApp) and app.watchdog_on
    assert run(["--config", str(deploy), "set", "watchdog=off"]) == 0
    assert "running tofcc run" not in capsys.readouterr().out
    now[0] += 60
    d.step()
    assert not app.watchdog_on and app.watchdog_period_s() is None
    d.close()


def test_the_deployment_file_turns_it_off_for_good_with_a_reload(tmp_path: Path) -> None:
    d, _, _ = storm_daemon(tmp_path)
    d.step()
    deploy = tmp_path / "d.yaml"
    raw = yaml.safe_load(deploy.read_text())
    raw["targets"][0]["config"]["pfc"]["watchdog"]["enabled"] = False
    deploy.write_text(yaml.safe_dump(raw))
    assert d.reload()
    app = d.targets["leaf1"].app.inner
    assert isinstance(app, P4qcnApp)
    assert not app.watchdog_on and app.watchdog_period_s() is None
    d.close()


def test_save_writes_a_watchdog_switched_off_as_the_configs_field() -> None:
    for sw, _ in both_backends("p4qcn", ports=(4, 5)):
        app = P4qcnApp(sw, parse_config(with_pfc()))
        app.push_all()
        app.set_watchdog(False)
        cfg = running_config("p4qcn", app)
        assert cfg.pfc.watchdog.enabled is False
        again = P4qcnApp(sw, cfg)
        assert not again.watchdog_on and "watchdog" not in again.live_state()
