# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The running daemon's control socket: `tofcc --config DEPLOY --program
p4qcn set watchdog=on|off` reaches the `tofcc run` that drives DEPLOY.

Why through the daemon: it is each switch's one writer (BF-Runtime lets one
client bind a program, so a one-shot command cannot write a switch the
daemon holds), and the PFC watchdog's on/off is state of the daemon's own
loop, which no write to the switch would reach. Two ways in, one writer:

* the deployment file: `pfc.watchdog.enabled: false` in the target's config,
  then `systemctl reload tofcc`. It lasts (restarts, reloads): the way to
  keep a watchdog off.
* this socket, for the storm at hand: `set watchdog=off` on a target whose
  deployment a daemon runs is sent to that daemon, which makes the change
  between two cycles, on its own loop, and answers with what changed. It
  lasts until the daemon reloads or restarts (then the file says again);
  `tofcc save --config DEPLOY` writes it into a file.

Where: beside the run lock (runtime.py), `tofcc-run-<digest>.sock` in the
first directory private to the daemon's user (RUNTIME_DIRECTORY, /run/tofcc
under the unit, 0700): only that user, or root, can connect (`sudo -u tofcc
tofcc ...`), and the daemon also refuses a peer of another uid (SO_PEERCRED).
No socket (no daemon, or one of before this): the command writes the switch
itself, as before.

Protocol: one JSON line each way. Request {"op": "set", "switch", "program",
"values", "command", "sudo_user"}; answer {"ok": true, "changes": [...]} or
{"ok": false, "error", "field", "exit_code"}.

Audit: the daemon writes the one line (it made the write), naming the
operator: the user of the peer's uid as the kernel reports it, the
SUDO_USER and command line the client sent.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pwd
import queue
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from . import paths
from .errors import ConfigError, ControllerError, SwitchUnavailable
from .logs import log_event
from .runtime import run_dirs, run_name


class Daemon(Protocol):
    """What of service.Daemon a request uses (no import: the daemon imports this)."""

    targets: dict[str, Any]
    audit: Any
    model_states: Any
    lock: threading.Lock

    def submit(self, request: Request) -> None: ...


log = logging.getLogger("tofcc.service")

SUFFIX = ".sock"
MAX_REQUEST = 64 * 1024
# How long a connection may take to send its request line.
READ_TIMEOUT_S = 5.0
# How long the client waits for the daemon's answer: the request is taken
# between two cycles, so at most a cycle (a slow one) plus the write.
ANSWER_TIMEOUT_S = 60.0
# Keys a request may carry; `values` are those `set` took on the command line.
SET_VALUES = frozenset({"watchdog"})


@dataclass
class Request:
    """One request, as the daemon's loop takes it off the queue."""

    body: dict[str, Any]
    peer_uid: int
    peer_pid: int
    done: threading.Event = field(default_factory=threading.Event)
    answer: dict[str, Any] = field(default_factory=dict)
    # The daemon wrote the request's audit line (it got as far as the write).
    audited: bool = False

    def reply(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.done.set()

    def requester(self) -> dict[str, Any]:
        """Who asked, for the audit line: the kernel's uid, the client's sudo user."""
        try:
            user = pwd.getpwuid(self.peer_uid).pw_name
        except KeyError:
            user = str(self.peer_uid)
        out: dict[str, Any] = {"user": user, "uid": self.peer_uid, "peer_pid": self.peer_pid}
        sudo = self.body.get("sudo_user")
        if isinstance(sudo, str) and sudo:
            out["sudo_user"] = sudo
        return out


def socket_path(deploy: Path) -> Path | None:
    """Where the daemon of `deploy` listens: in the first private run directory."""
    for where in run_dirs():
        try:
            with paths.private_dir(where):
                return where / run_name(deploy, SUFFIX)
        except paths.PathError:
            continue
    return None


def _peer(conn: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end, as the kernel says."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid, uid


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError(f"longer than {MAX_REQUEST} bytes")
    return data.split(b"\n", 1)[0]


class ControlServer:
    """The daemon's end: a thread accepts, reads each request and hands it to
    `submit` (the daemon's queue), then writes the answer back."""

    def __init__(self, path: Path, submit: Callable[[Request], None]) -> None:
        self.path = path
        self._submit = submit
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.suppress(FileNotFoundError):
            # A socket left by a daemon that died: this one holds the run lock.
            if paths.lexists(path) and not path.is_symlink():
                os.unlink(path)
        self._sock.bind(str(path))
        os.chmod(path, 0o600)
        self._sock.listen(8)
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="tofcc-control", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(READ_TIMEOUT_S)
                pid, uid = _peer(conn)
                if uid not in (os.geteuid(), 0):
                    answer = _refusal(ConfigError("control socket", f"uid {uid} may not use it"))
                else:
                    body = json.loads(_read_line(conn))
                    if not isinstance(body, dict):
                        raise ValueError("not a JSON object")
                    request = Request(body, uid, pid)
                    self._submit(request)
                    if request.done.wait(ANSWER_TIMEOUT_S):
                        answer = request.answer
                    else:
                        answer = _refusal(SwitchUnavailable("the daemon did not answer in time"))
                conn.sendall(json.dumps(answer).encode() + b"\n")
            except (OSError, ValueError) as exc:
                log_event(log, "control-request-failed", logging.WARNING, why=exc)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def start(daemon: Daemon, deploy: Path) -> ControlServer | None:
    """The control socket of `tofcc run --config deploy`; None (and a
    warning) where none can be made: the daemon runs without it."""
    path = socket_path(deploy)
    if path is None:
        log_event(log, "control-socket-unavailable", logging.WARNING, why="no private run dir")
        return None
    try:
        server = ControlServer(path, daemon.submit)
    except OSError as exc:
        log_event(log, "control-socket-unavailable", logging.WARNING, path=path, why=exc)
        return None
    log_event(log, "control-socket", path=path)
    return server


def _refusal(exc: ControllerError) -> dict[str, Any]:
    return {
        "ok": False,
        "error": getattr(exc, "reason", str(exc)),
        "field": getattr(exc, "field", None),
        "exit_code": exc.exit_code,
    }


# ---- the client's end ------------------------------------------------------------------


class DaemonError(ControllerError):
    """What the daemon refused, with the exit code it gave; `audited`: the
    daemon wrote the audit line of the write it tried."""

    def __init__(self, message: str, exit_code: int, audited: bool) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.audited = audited


def _connect(deploy: Path) -> socket.socket | None:
    """A connection to the daemon running `deploy`; None when none listens."""
    name = run_name(deploy, SUFFIX)
    for where in run_dirs():
        path = where / name
        try:
            if not paths.lexists(path):
                continue
        except paths.PathError:
            continue
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(ANSWER_TIMEOUT_S + READ_TIMEOUT_S)
        try:
            sock.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            sock.close()
            continue  # a socket a dead daemon left: no daemon here
        except OSError as exc:
            sock.close()
            raise ConfigError(f"control socket {path}", str(exc)) from None
        return sock
    return None


def daemon_listens(deploy: Path) -> bool:
    sock = _connect(deploy)
    if sock is None:
        return False
    sock.close()
    return True


def ask(deploy: Path, body: dict[str, Any]) -> dict[str, Any] | None:
    """Send `body` to the daemon running `deploy` and return its answer
    (a refusal raised as the error it was); None when no daemon listens."""
    sock = _connect(deploy)
    if sock is None:
        return None
    with sock:
        try:
            sock.sendall(json.dumps(body).encode() + b"\n")
            answer = json.loads(_read_line(sock) or b"null")
        except (OSError, ValueError) as exc:
            raise SwitchUnavailable(f"the daemon did not answer: {exc}") from None
    if not isinstance(answer, dict):
        raise SwitchUnavailable("the daemon gave no answer")
    if not answer.get("ok"):
        code = answer.get("exit_code")
        at = answer.get("field")
        text = f"{at}: {answer.get('error')}" if at else str(answer.get("error"))
        raise DaemonError(
            f"the running tofcc run refused: {text}",
            code if isinstance(code, int) else 1,
            answer.get("audited") is True,
        )
    return answer


# ---- the daemon's loop ------------------------------------------------------------------


class Inbox:
    """Requests waiting for the daemon's loop (which alone writes switches)."""

    def __init__(self, wake: threading.Event) -> None:
        self._queue: queue.Queue[Request] = queue.Queue()
        self._wake = wake

    def submit(self, request: Request) -> None:
        self._queue.put(request)
        self._wake.set()

    def waiting(self) -> bool:
        return not self._queue.empty()

    def take(self) -> list[Request]:
        out: list[Request] = []
        with contextlib.suppress(queue.Empty):
            while True:
                out.append(self._queue.get_nowait())
        return out


def serve(daemon: Daemon, request: Request) -> None:
    """Do what `request` asks, on the loop's thread, and answer it."""
    try:
        changes = _set(daemon, request)
    except ControllerError as exc:
        request.reply(_refusal(exc) | {"audited": request.audited})
        return
    except Exception as exc:  # a bug must not take the loop down, nor leave the client waiting
        error = ControllerError(f"{type(exc).__name__}: {exc}")
        request.reply(_refusal(error) | {"audited": request.audited})
        return
    request.reply({"ok": True, "changes": changes})


def _set(daemon: Daemon, request: Request) -> list[dict[str, str]]:
    body = request.body
    if body.get("op") != "set":
        raise ConfigError("op", f"the daemon takes `set`, not {body.get('op')!r}")
    name = body.get("switch")
    t = daemon.targets.get(name) if isinstance(name, str) else None
    if t is None:
        raise ConfigError("--switch", f"the daemon runs no target {name!r}")
    values = body.get("values")
    if not isinstance(values, dict) or not values or set(values) - SET_VALUES:
        raise ConfigError("set", f"the daemon takes {', '.join(sorted(SET_VALUES))} only")
    if body.get("program") != t.resolved.spec.program:
        raise ConfigError("--program", f"target {t.name} runs {t.resolved.spec.program}")
    if values.get("watchdog") not in ("on", "off"):
        raise ConfigError("watchdog", "must be on or off")
    set_watchdog = getattr(t.app.inner, "set_watchdog", None)
    if set_watchdog is None:
        raise ConfigError("watchdog", f"{t.resolved.spec.program} has no watchdog")
    if not t.connected:
        raise SwitchUnavailable(f"{t.name} is not connected; the daemon retries it")
    on = values["watchdog"] == "on"
    r = t.resolved
    request.audited = True  # from here the line below is written, however it ends
    command = body.get("command") if isinstance(body.get("command"), str) else "tofcc set"
    with (
        daemon.audit.write(
            "set",
            r.name,
            r.spec.program,
            r.config,
            target=r.spec.target,
            as_user=request.requester(),
            command=command,
            via=daemon.audit.command,
        ),
        daemon.model_states.locked(t) as path,
    ):
        made = t.supervisor.run(lambda: set_watchdog(on))
        if path is not None:
            daemon.model_states.save(t, path)
    rows = t.app.status()
    with daemon.lock:
        t.rows = rows
    log_event(log, "control-set", switch=t.name, watchdog=values["watchdog"], by=command)
    return [
        {"where": c.queue, "what": c.what, "old": str(c.old), "new": str(c.new), "why": c.why}
        for c in made
    ]
