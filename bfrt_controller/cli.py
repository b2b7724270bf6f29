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

import importlib
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from hw_profiles import ProfileError
from tofcc_common import registry

from . import units
from .buffer_commands import clear, queues
from .config_commands import COMMANDS as CONFIG_COMMANDS
from .config_commands import DifferencesFound
from .console import console, json_option, json_report, print_error, report
from .context import Context
from .deploy_init import deploy
from .errors import ConfigError, ControllerError
from .fleet_commands import COMMANDS as FLEET_COMMANDS
from .logs import LOG_LEVELS, configure_logging
from .programs import PROGRAMS
from .safe_commands import COMMANDS as SAFE_CHANGE_COMMANDS


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
            json_report.end(error)  # --json: the command's one document

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
        target,
        program,
        config_path,
        state_path,
        client_id,
        given,
        switch_name,
        audit_log,
        command,
        # `status --config DEPLOY`: every switch of it unless --switch names one.
        fleet=ctx.invoked_subcommand == "status",
    )
    ctx.call_on_close(ctx.obj.close)


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
@json_option
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
    report(program=obj.program.name, switch=obj.switch_label)
    with units.recording() as conversions:
        handler(obj, pairs, queues, port)
    units.show(conversions)


@cli.command(help="Run PMQECN on the reference model over a short packet trace.")
@json_option
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


for _module_commands in (CONFIG_COMMANDS, FLEET_COMMANDS):
    for _command in _module_commands:
        cli.add_command(_command)
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
