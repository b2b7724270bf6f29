# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc: run and retune tofino-cc programs on a switch or on the reference model.

Exit codes: 0 ok; 1 unexpected error; 2 invalid input (the message names the
field; nothing was written); 3 the switch refused a write (the batch was rolled
back); 4 switch unreachable; 5 the BF-Runtime client (Intel SDE) is missing;
6 another client owns the program on the switch (the message says what to do),
or another tofcc command held the model target's state file longer than tofcc
waits for it; 7 `tofcc eval` found no ns-3 (pip install 'tofino-cc[eval]').
Errors go to stderr.

--program and --target may follow the subcommand (`tofcc status --program
aqm`) or come from TOFCC_PROGRAM / TOFCC_TARGET. Without either, a config
file's own `program:` decides, else pmqecn.

One writer per program on a BF-Runtime switch: the server lets one client bind
a program. `status` reads through an unbound client and works while a writer
(`optimize --interval`, a PTF run) holds the switch; commands that write need
the switch to themselves, or a different --client-id if only the id clashes.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from hw_profiles import ProfileError
from tofcc_common import registry

from .audit import AuditLog
from .buffer_commands import clear, queues
from .console import console, print_error, print_rows
from .context import Context
from .deploy_init import deploy
from .diff_view import show_diff
from .documents import DeploymentDocument, require_deployment
from .errors import ConfigError, ControllerError
from .logs import LOG_LEVELS, configure_logging
from .programs import PROGRAMS
from .safe_commands import COMMANDS as SAFE_CHANGE_COMMANDS
from .targets import open_switch


def _commands(program: str) -> Any:
    """The module of `program`'s own commands, as the registry names it."""
    return importlib.import_module(registry.PROGRAMS[program].commands)


# The programs whose commands module is there: a registry entry added before
# its code has none yet, and must not stop tofcc (or the test suite) importing.
_WITH_COMMANDS = tuple(n for n in PROGRAMS if registry.importable(registry.PROGRAMS[n].commands))


# Options of the group that a user may also write after the subcommand, as
# most CLIs with subcommands take them; run() moves them before it.
GLOBAL_VALUE_OPTIONS = ("--program", "--target", "--log-level", "--switch", "--audit-log")
# Where make_context keeps the command line, for the audit lines (audit.py).
_ARGV = "tofcc.argv"


def hoist_global_options(argv: list[str]) -> list[str]:
    """`tofcc status --program aqm` as `tofcc --program aqm status`: the
    group's --program, --target and --log-level wherever they appear."""
    hoisted: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest += argv[i:]
            break
        name = a.split("=", 1)[0]
        if name in GLOBAL_VALUE_OPTIONS:
            if "=" in a:
                hoisted.append(a)
            else:
                hoisted += argv[i : i + 2]
                i += 1
        else:
            rest.append(a)
        i += 1
    return hoisted + rest


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tofino-cc")
    except PackageNotFoundError:  # a source tree run without an install
        return "unknown"


# Command groups other packages add to tofcc (the evaluation's `eval`), found
# as installed entry points the way click plugins are: the controller imports
# nothing above it, and a package installed beside it can add a group. Each
# is imported only when its name is used (the evaluation alone cost every
# command 0.3 s of imports).
PLUGIN_GROUP = "tofcc.commands"


class PluginGroup(click.Group):
    def _plugins(self) -> dict[str, Any]:
        from importlib.metadata import entry_points

        return {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP)}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._plugins()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        ep = self._plugins().get(cmd_name)
        if ep is None:
            return None
        try:
            loaded = ep.load()
        except Exception as exc:  # a broken plugin must not take tofcc down with it
            why = f"command group ({ep.value}) failed to load: {exc}"
            raise ConfigError(cmd_name, why) from exc
        return loaded if isinstance(loaded, click.Command) else None


class _PipeClosed(Exception):
    """stdout's reader went away (`tofcc status | head -1`)."""


class _TofccGroup(PluginGroup):
    # click turns EPIPE into exit 1; `head` users expect 0 and no message, so
    # the closed pipe leaves click as an exception it does not catch.
    def invoke(self, ctx: click.Context) -> Any:
        error: BaseException | None = None
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _PipeClosed() from None  # the write, if any, was done
        except click.exceptions.Exit as exc:
            error = exc if exc.exit_code else None
            raise
        except BaseException as exc:
            error = exc
            raise
        finally:
            # Every write leaves one audit line, however the command ended.
            if isinstance(ctx.obj, Context):
                ctx.obj.settle_audit(ctx.invoked_subcommand or "", error)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        argv = list(args)
        try:  # `tofcc --help | head -1`: the help is printed while parsing
            ctx = super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:
            raise _PipeClosed() from None
        ctx.meta[_ARGV] = argv
        return ctx


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush of what is
    still buffered does not fail again (Python's docs on SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


@click.group(cls=_TofccGroup, help=__doc__)
@click.version_option(_version(), "--version", prog_name="tofcc", message="%(prog)s %(version)s")
@click.option(
    "--target",
    default="model",
    show_default=True,
    envvar="TOFCC_TARGET",
    help="'model' (reference model, no SDE), grpc://HOST:PORT (BF-Runtime on a switch) "
    "or tofino-model://HOST:PORT (BF-Runtime on tofino-model: TM reads exact, not "
    "rounded); env TOFCC_TARGET",
)
@click.option(
    "--program",
    default=None,
    envvar="TOFCC_PROGRAM",
    type=click.Choice(sorted(PROGRAMS)),
    help="default: the config file's `program:`, else pmqecn; env TOFCC_PROGRAM",
)
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="config YAML")
@click.option(
    "--state", "state_path", type=click.Path(path_type=Path), help="model-target state file"
)
@click.option(
    "--switch",
    "switch_name",
    default=None,
    help="with a deployment file as --config: the target (its `name:`) a one-shot "
    "command works on (default: the file's only target)",
)
@click.option(
    "--client-id",
    # BF-Runtime's client_id is a uint32.
    type=click.IntRange(min=0, max=0xFFFFFFFF),
    default=0,
    show_default=True,
    help="BF-Runtime client id (grpc:// only); the server refuses a second client with the same id",
)
@click.option(
    "--audit-log",
    type=click.Path(path_type=Path),
    default=None,
    envvar="TOFCC_AUDIT_LOG",
    help="the file each write's audit line is appended to (also sent to syslog); default: "
    "the deployment's audit_log, else $LOGS_DIRECTORY/audit.log under systemd, else "
    "$XDG_STATE_HOME/tofcc/audit.log; env TOFCC_AUDIT_LOG",
)
@click.option("-v", "--verbose", is_flag=True, help="--log-level info")
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default=None,
    help="logfmt lines on stderr at this level and above (default: warning; run: info)",
)
@click.pass_context
def cli(
    ctx: click.Context,
    target: str,
    program: str | None,
    config_path: Path | None,
    state_path: Path | None,
    switch_name: str | None,
    client_id: int,
    audit_log: Path | None,
    verbose: bool,
    log_level: str | None,
) -> None:
    level = log_level or ("info" if verbose else None)
    # `tofcc run` is a daemon: its events are its output, so INFO by default.
    daemon = ctx.invoked_subcommand == "run"
    configure_logging(level or ("info" if daemon else "warning"))
    # Options the user gave (on the line or from the environment), not
    # click's defaults: a command that cannot honour one refuses it.
    given = frozenset(
        name
        for name in ("target", "client_id", "state_path")
        if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)
    )
    command = shlex.join(["tofcc", *ctx.meta.get(_ARGV, [])])
    ctx.obj = Context(
        target, program, config_path, state_path, client_id, given, switch_name, audit_log, command
    )
    ctx.call_on_close(ctx.obj.close)


@cli.command(help="Show the program's state as read back from the switch.")
@click.option("--json", "as_json", is_flag=True, help="the state as one JSON document")
@click.pass_obj
def status(obj: Context, as_json: bool) -> None:
    # Reads only: an unbound client, so a running controller keeps the switch.
    app = obj.open_app(read_only=True)
    rows = app.status()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    console.print(f"{obj.program.name} on {app.switch.description}")
    for section, columns in obj.program.status_sections:
        section_rows = [r for r in rows if r.get("section") == section]
        if section_rows:  # P4QCN without PFC has no watchdog rows: no empty table
            print_rows(section, columns, section_rows)


@cli.command(
    "set",
    help="Set a program's parameters, all or none. "
    + " ".join(f"{h}." for h in (_commands(n).SET_HELP for n in _WITH_COMMANDS) if h),
)
@click.argument("pairs", nargs=-1, required=True)
@click.option(
    "--queue", "queues", multiple=True, help="p4qcn, aqm: PORT/QUEUE to change (default all)"
)
@click.option("--port", "port", default=None, help="dadctcp: the port to change (default all)")
@click.pass_obj
def set_params(
    obj: Context, pairs: tuple[str, ...], queues: tuple[str, ...], port: str | None
) -> None:
    handler = _commands(obj.program.name).set_command
    if handler is None:
        settable = [n for n in _WITH_COMMANDS if _commands(n).set_command is not None]
        raise ConfigError(
            "--program",
            f"`set` is for {', '.join(settable)}, not {obj.program.name}",
        )
    obj.intend_write()
    handler(obj, pairs, queues, port)


@cli.command(help="Validate CONFIG and write its whole state as one batch.")
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option(
    "--dry-run", is_flag=True, help="write nothing: show what the apply would change (tofcc diff)"
)
@click.option(
    "--confirm-within",
    "confirm_within",
    type=click.FloatRange(1, 86_400),
    default=None,
    metavar="SECONDS",
    help="revert to what ran before unless `tofcc confirm` comes within SECONDS "
    "(as EOS's commit timer; README: Safe changes)",
)
@click.pass_obj
def apply(obj: Context, config_file: Path, dry_run: bool, confirm_within: float | None) -> None:
    if dry_run:
        show_diff(obj, config_file)
        return
    if confirm_within is not None:
        from .safe_changes import apply_with_confirm

        apply_with_confirm(obj, config_file, confirm_within, lambda: _apply(obj, config_file))
        return
    _apply(obj, config_file)


def _apply(obj: Context, config_file: Path) -> None:
    from .running import keep_measurements, measurements_held

    obj.intend_write(file=str(config_file))
    doc = obj.document(config_file)
    if isinstance(doc, DeploymentDocument):
        _refuse_deployment_overrides(obj, config_file)
        audit = obj.audit(doc)
        audit.check()
        obj.settled_write()  # from here each switch leaves a line of its own
        _apply_deployment(doc, audit)
        return
    obj.adopt(doc)
    obj.config_path = config_file
    # An apply writes the file's values, not the ones the switch holds...
    app = obj.open_app(adopt_live=False)
    # ...but keeps what it measured (running.py): no config field holds that.
    if obj.is_model:  # the state file open_app read (of this program: it checked)
        held = (obj._saved or {}).get("live")
    else:
        held = measurements_held(obj.program.name, app.switch, app.config)
    keep_measurements(obj.program.name, app, held)
    if not obj.is_model:
        app.push_all()
    obj.save(app)
    console.print(
        f"applied {config_file}: {len(app.intended_writes())} writes ({doc.program.name})"
    )


# What a deployment file gives each target itself, so a global option would
# either be ignored (as it was) or contradict the file: refused, never ignored.
_DEPLOYMENT_OWNS = {
    "target": "--target / TOFCC_TARGET: each target's `target:` in the file names its switch",
    "client_id": "--client-id: each target's `client_id:` in the file gives its client id",
    "state_path": "--state: a deployment keeps one state per `target: model` switch, "
    "$XDG_STATE_HOME/tofcc/target-NAME.yaml (set XDG_STATE_HOME to move them)",
}


def _refuse_deployment_overrides(obj: Context, config_file: Path) -> None:
    for option in sorted(obj.given & _DEPLOYMENT_OWNS.keys()):
        flag, why = _DEPLOYMENT_OWNS[option].split(": ", 1)
        raise ConfigError(flag, f"not taken with the deployment file {config_file}: {why}")


def _apply_deployment(doc: DeploymentDocument, audit: AuditLog) -> None:
    """Apply a deployment file: every switch gets its ports and its program's
    state, one batch each. A switch that refuses keeps its state (rolled
    back) and the others are still written; the first error is the exit
    code. The whole file was validated when it was read, before any write.
    A model target's switch is saved to its state file (fleet.save_target).
    Each switch leaves its own audit line."""
    from .fleet import make_target_app, save_target
    from .running import keep_measurements
    from .state import state_lock, target_state_path

    failed: ControllerError | None = None
    for t in doc.targets:
        try:
            with (
                audit.write("apply", t.name, t.spec.program, t.config, target=t.spec.target),
                contextlib.ExitStack() as held,
            ):
                switch = open_switch(
                    t.spec.target, t.spec.program, t.profile, client_id=t.spec.client_id, tls=t.tls
                )
                held.callback(switch.close)
                if t.spec.target == "model":
                    held.enter_context(state_lock(target_state_path(t.name)))
                switch.connect()
                app = make_target_app(t, switch)
                app.resolve_front_panel()
                keep_measurements(t.spec.program, app.inner, _held_measurements(t, switch))
                app.push_all()
                if t.spec.target == "model":
                    save_target(target_state_path(t.name), app)
            console.print(f"{t.name}: applied {len(app.intended_writes())} writes")
        except ControllerError as exc:
            print_error(exc, prefix=f"{t.name}: ")
            failed = failed or exc
    if failed is not None:
        raise failed


def _held_measurements(t: Any, switch: Any) -> dict[str, Any] | None:
    """What a deployment target's switch measured (running.py), which an apply keeps."""
    from .running import measurements_held
    from .state import load_state, target_state_path

    if t.spec.target != "model":
        return measurements_held(t.spec.program, switch, t.config)
    saved = load_state(target_state_path(t.name))
    return saved.get("live") if saved is not None and saved["program"] == t.spec.program else None


@cli.command(help="Show the front-panel ports of a deployment file's switches as they hold them.")
@click.option(
    "--config",
    "deploy_file",
    type=click.Path(path_type=Path),
    required=True,
    help="deployment file (targets with front_panel)",
)
@click.option("--json", "as_json", is_flag=True, help="one JSON document: per switch, its ports")
@click.pass_obj
def ports(obj: Context, deploy_file: Path, as_json: bool) -> None:
    from .deployment import warn_unguarded
    from .fleet import replay_target
    from .ports import PORT_STATUS_COLUMNS, port_rows, resolve_front_panel
    from .state import target_state_path

    doc = require_deployment(obj.document(deploy_file), "--config")
    warn_unguarded(doc.targets, str(deploy_file))
    out: dict[str, list[dict[str, object]]] = {}
    for t in doc.targets:
        if t.spec.front_panel is None or t.board is None:
            out[t.name] = []
            continue
        # Read-only: works beside the daemon that holds the switch.
        read_only = t.spec.target != "model"
        sw = open_switch(t.spec.target, t.spec.program, t.profile, read_only=read_only, tls=t.tls)
        sw.connect()
        obj._held.callback(sw.close)
        if not read_only:  # the model switch as apply or `run` left it
            replay_target(sw, target_state_path(t.name), t.spec.program)
        dev_ports = resolve_front_panel(t.spec.front_panel, t.board, sw)
        out[t.name] = port_rows(sw, t.spec.front_panel, t.board, dev_ports)
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    for name, rows in out.items():
        print_rows(f"{name}: front panel", PORT_STATUS_COLUMNS, rows)


@cli.command(help="Show what an apply of CONFIG would change on the live switch; writes nothing.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    required=True,
    help="a deployment file (targets:) or a program config (against --target)",
)
@click.option("--json", "as_json", is_flag=True, help="one JSON document: per switch, its changes")
@click.option(
    "--exit-code",
    is_flag=True,
    help="exit 1 when an apply would change something, 0 when not (as `git diff --exit-code`)",
)
@click.option(
    "--raw",
    is_flag=True,
    help="list the table entries, TM and port writes that differ, not the config fields",
)
@click.pass_obj
def diff(obj: Context, config_file: Path, as_json: bool, exit_code: bool, raw: bool) -> None:
    changed = show_diff(obj, config_file, as_json, raw)
    if exit_code and changed:
        raise DifferencesFound()


class DifferencesFound(ControllerError):
    """`diff --exit-code` found something an apply would change."""

    exit_code = 1

    def __init__(self) -> None:
        super().__init__("")


@cli.command(
    "run",
    help="Run the switches of a deployment file as a service: push, then cycle "
    "(PMQECN optimises) under the supervisor; SIGHUP reloads the file, SIGTERM stops.",
)
@click.option(
    "--config",
    "deploy_file",
    type=click.Path(path_type=Path),
    required=True,
    help="deployment file: targets (switch, program, config, front_panel) and metrics",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="serve /metrics on this port (overrides the file's metrics.port; 0: any free port)",
)
@click.option(
    "--cycles",
    type=click.IntRange(min=1),
    default=None,
    help="stop after this many passes over the switches (a smoke test; default: until SIGTERM)",
)
@click.option(
    "--web-config",
    type=click.Path(path_type=Path),
    default=None,
    help="TLS and basic auth for /metrics: a Prometheus exporter web config "
    "(tls_server_config, basic_auth_users)",
)
@click.pass_obj
def run_service(
    obj: Context,
    deploy_file: Path,
    metrics_port: int | None,
    cycles: int | None,
    web_config: Path | None,
) -> None:
    from .runtime import claim_deployment, early_signals, signal_handlers
    from .service import Daemon
    from .web_config import load_web_config

    # Read before any switch is contacted: a bad file is exit 2 with nothing pushed.
    web = load_web_config(web_config) if web_config is not None else None
    # Handlers first: a SIGHUP while a slow file loads must not kill the daemon.
    with early_signals() as pending, claim_deployment(deploy_file):
        daemon = Daemon(deploy_file, keep_model_state=True, audit_log=obj.audit_log)
        server = None
        if daemon.config.metrics is not None or metrics_port is not None or web is not None:
            from .metrics import start

            server = start(daemon, deploy_file, metrics_port, web)
        try:
            with signal_handlers(daemon, pending):
                daemon.run(max_steps=cycles or 0)
        finally:
            if server is not None:
                server.shutdown()
                server.server_close()


@cli.command(
    help="Validate a deployment file (every target's program config included) or a "
    "program config; contacts no switch. Run it before `systemctl reload tofcc`."
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    required=True,
    help="deployment file or program config to validate",
)
@click.pass_obj
def check(obj: Context, config_file: Path) -> None:
    doc = obj.document(config_file)
    if isinstance(doc, DeploymentDocument):
        for t in doc.targets:
            click.echo(f"{t.name}: {t.spec.program} on {t.spec.target} ({t.profile.chip}): ok")
        return
    cfg = doc.config
    click.echo(f"{config_file}: {cfg.program} ({cfg.chip}): ok")


@cli.command(
    help="List every setting of --program's config: name, unit, range, default "
    "(from the config schema itself); --schema prints its JSON Schema for editors."
)
@click.option("--json", "as_json", is_flag=True, help="the settings as a JSON list")
@click.option("--schema", is_flag=True, help="the config's JSON Schema (draft 2020-12)")
@click.pass_obj
def params(obj: Context, as_json: bool, schema: bool) -> None:
    from dataclasses import asdict

    from .params import json_schema
    from .params import params as list_params

    name = obj.program.name
    if schema:
        click.echo(json.dumps(json_schema(name), indent=2))
        return
    rows = list_params(name)
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], indent=2))
        return
    t = Table(title=f"{name} settings (tofcc --program {name} params --schema: JSON Schema)")
    for col in ("setting", "type", "unit", "range", "default", "description"):
        t.add_column(col)
    for r in rows:
        t.add_row(r.name, r.type, r.unit or "-", r.range, r.default, r.description)
    console.print(t, markup=False)


@cli.command(help="Run PMQECN on the reference model over a short packet trace.")
@click.pass_obj
def demo(obj: Context) -> None:
    from .pmqecn.demo import run_demo

    if not obj.is_model:
        raise ConfigError(
            "--target",
            f"demo runs on the reference model only, not {obj.target}: "
            "drop --target / TOFCC_TARGET",
        )

    run_demo(console)


cli.add_command(queues)
cli.add_command(clear)
cli.add_command(deploy)
for _command in SAFE_CHANGE_COMMANDS:
    cli.add_command(_command)

for _name in _WITH_COMMANDS:
    for _command in _commands(_name).COMMANDS:
        cli.add_command(_command)


def run(argv: list[str] | None = None) -> int:
    """Run tofcc on `argv` (default: the process's) and return its exit code;
    every error a user can cause ends here as a message and a documented code."""
    try:
        args = hoist_global_options(list(sys.argv[1:] if argv is None else argv))
        cli.main(args=args, prog_name="tofcc", standalone_mode=False)
    except click.exceptions.Abort:
        return 130
    except click.ClickException as exc:
        exc.show()
        return 2
    except DifferencesFound:
        return 1  # not an error: the diff said what differs
    except ControllerError as exc:
        print_error(exc)
        return exc.exit_code
    except ProfileError as exc:  # an installed hw profile is broken: not the user's input
        print_error(f"hardware profile: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    except (_PipeClosed, BrokenPipeError):
        _discard_stdout()
        return 0
    except SystemExit as exc:  # `eval` reports its own errors and exits
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return 0


def main() -> None:
    code = run()
    try:
        sys.stdout.flush()  # what is still buffered meets the closed pipe here
    except BrokenPipeError:
        _discard_stdout()
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    main()
