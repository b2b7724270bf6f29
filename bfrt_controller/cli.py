"""tofcc: run and retune tofino-cc programs on a switch or on the reference model.

Exit codes: 0 ok; 1 unexpected error; 2 invalid input (the message names the
field; nothing was written); 3 the switch refused a write (the batch was rolled
back); 4 switch unreachable; 5 the BF-Runtime client (Intel SDE) is missing;
6 another client owns the program on the switch, or another tofcc command
held the model target's state file longer than tofcc waits for it.
Errors go to stderr.

One writer per program on a BF-Runtime switch: the server lets one client bind
a program. `status` reads through an unbound client and works while a writer
(`optimize --interval`, a PTF run) holds the switch; commands that write need
the switch to themselves, or a different --client-id if only the id clashes.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from hw_profiles import ProfileError, load_profile
from tofcc_common import registry

from .console import cell, console, print_error
from .context import Context
from .errors import ConfigError, ControllerError
from .programs import PROGRAMS
from .state import load_state
from .targets import open_switch


def _commands(program: str) -> Any:
    """The module of `program`'s own commands, as the registry names it."""
    return importlib.import_module(registry.PROGRAMS[program].commands)


@click.group(help=__doc__)
@click.option(
    "--target",
    default="model",
    show_default=True,
    help="'model' (reference model, no SDE) or grpc://HOST:PORT (BF-Runtime)",
)
@click.option("--program", default="pmqecn", show_default=True, type=click.Choice(sorted(PROGRAMS)))
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="config YAML")
@click.option(
    "--state", "state_path", type=click.Path(path_type=Path), help="model-target state file"
)
@click.option(
    "--client-id",
    # BF-Runtime's client_id is a uint32.
    type=click.IntRange(min=0, max=0xFFFFFFFF),
    default=0,
    show_default=True,
    help="BF-Runtime client id (grpc:// only); the server refuses a second client with the same id",
)
@click.option("-v", "--verbose", is_flag=True)
@click.pass_context
def cli(
    ctx: click.Context,
    target: str,
    program: str,
    config_path: Path | None,
    state_path: Path | None,
    client_id: int,
    verbose: bool,
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )
    ctx.obj = Context(target, program, config_path, state_path, client_id)
    ctx.call_on_close(ctx.obj.close)


@cli.command(help="Show the program's state as read back from the switch.")
@click.option("--json", "as_json", is_flag=True)
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
        _print_rows(section, columns, [r for r in rows if r.get("section") == section])


def _print_rows(
    title: str, columns: tuple[tuple[str, str], ...], rows: list[dict[str, object]]
) -> None:
    t = Table(title=title)
    for heading, _ in columns:
        t.add_column(heading)
    for r in rows:
        t.add_row(*(cell(r.get(key)) for _, key in columns))
    console.print(t)


@cli.command(
    "set",
    help="Set a program's parameters, all or none. "
    + " ".join(f"{h}." for h in (_commands(n).SET_HELP for n in PROGRAMS) if h),
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
        settable = [n for n in PROGRAMS if _commands(n).set_command is not None]
        raise ConfigError(
            "--program",
            f"`set` is for {', '.join(settable)}, not {obj.program.name}",
        )
    handler(obj, pairs, queues, port)


@cli.command(help="Validate CONFIG and write its whole state as one batch.")
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option(
    "--dry-run", is_flag=True, help="write nothing: show what the apply would change (tofcc diff)"
)
@click.pass_obj
def apply(obj: Context, config_file: Path, dry_run: bool) -> None:
    if dry_run:
        _show_diff(obj, config_file)
        return
    if _apply_deployment(obj, config_file):
        return
    cfg = obj.program.load_config(config_file)
    obj.config_path = config_file
    app = obj.open_app()
    if not obj.is_model:
        app.push_all()
    obj.save(app)
    console.print(f"applied {config_file}: {len(app.intended_writes())} writes ({cfg.program})")


def _apply_deployment(obj: Context, path: Path) -> bool:
    """Apply a deployment file: every switch gets its ports and its program's
    state, one batch each. A switch that refuses keeps its state (rolled
    back) and the others are still written; the first error is the exit
    code. False when `path` is a program config, not a deployment file."""
    from .service import is_service_config, make_target_app, resolve
    from .validation import load_yaml

    raw = load_yaml(path)
    if not is_service_config(raw):
        return False
    _, targets = resolve(raw, str(path), path.parent)  # the whole file, before any write
    failed: ControllerError | None = None
    for t in targets:
        switch = open_switch(t.spec.target, t.spec.program, t.profile, client_id=t.spec.client_id)
        try:
            switch.connect()
            app = make_target_app(t, switch)
            app.push_all()
            console.print(f"{t.name}: applied {len(app.intended_writes())} writes")
        except ControllerError as exc:
            print_error(exc, prefix=f"{t.name}: ")
            failed = failed or exc
        finally:
            switch.close()
    if failed is not None:
        raise failed
    return True


def _live_model(obj: Context, profile: Any) -> Any:
    """The model target's switch as its state file left it (the model keeps
    no state between commands; the state file is what it holds)."""
    switch = open_switch("model", obj.program.name, profile)
    saved = load_state(obj.state_path)
    obj.check_state_program(saved)
    if saved is not None:
        cfg: Any = obj.program.parse_config(saved["config"], f"state file {obj.state_path}: config")
        if cfg.chip == profile.chip:
            app = obj.program.make_app(switch, cfg)
            app.restore_live(saved.get("live") or {}, f"state file {obj.state_path}: live")
            app.push_all()
    return switch


def _show_diff(obj: Context, config_file: Path) -> None:
    """Print, per switch, what an apply of `config_file` would change. A
    deployment file (with `targets:`) is diffed against each of its switches;
    a program config against --target."""
    from .diff import diff_writes
    from .service import TargetApp, is_service_config, make_target_app, resolve
    from .validation import load_yaml

    raw = load_yaml(config_file)
    plans: list[tuple[str, Any, Any]] = []  # (switch name, switch, app)
    if is_service_config(raw):
        _, targets = resolve(raw, str(config_file), config_file.parent)
        for t in targets:
            if t.spec.target == "model":
                sw = open_switch("model", t.spec.program, t.profile)
            else:
                sw = open_switch(t.spec.target, t.spec.program, t.profile, read_only=True)
                sw.connect()
                obj._held.callback(sw.close)
            plans.append((t.name, sw, make_target_app(t, sw)))
    else:
        cfg = obj.program.load_config(config_file)
        profile = load_profile(cfg.chip)
        if obj.is_model:
            sw = _live_model(obj, profile)
        else:
            sw = open_switch(obj.target, obj.program.name, profile, read_only=True)
            sw.connect()
            obj._held.callback(sw.close)
        plans.append((obj.target, sw, TargetApp(obj.program.make_app(sw, cfg), None, None)))
    for name, sw, app in plans:
        diffs = diff_writes(sw, app.intended_writes())
        changes = [d for d in diffs if d.change != "unknown"]
        if not diffs:
            console.print(f"{name}: no changes ({len(app.intended_writes())} writes checked)")
            continue
        table = Table(title=f"{name}: {len(changes)} change(s) an apply would write")
        for col in ("change", "where", "switch holds", "config wants"):
            table.add_column(col)
        for d in diffs:
            table.add_row(d.change, d.where, d.current, d.intended)
        console.print(table)


@cli.command(help="Show the front-panel ports of a deployment file's switches as they hold them.")
@click.option(
    "--config",
    "deploy_file",
    type=click.Path(path_type=Path),
    required=True,
    help="deployment file (targets with front_panel)",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def ports(obj: Context, deploy_file: Path, as_json: bool) -> None:
    from .ports import PORT_STATUS_COLUMNS, port_rows
    from .service import load_service_config

    _, targets = load_service_config(deploy_file)
    out: dict[str, list[dict[str, object]]] = {}
    for t in targets:
        if t.spec.front_panel is None or t.board is None:
            out[t.name] = []
            continue
        # Read-only: works beside the daemon that holds the switch.
        read_only = t.spec.target != "model"
        sw = open_switch(t.spec.target, t.spec.program, t.profile, read_only=read_only)
        sw.connect()
        obj._held.callback(sw.close)
        out[t.name] = port_rows(sw, t.spec.front_panel, t.board)
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    for name, rows in out.items():
        _print_rows(f"{name}: front panel", PORT_STATUS_COLUMNS, rows)


@cli.command(help="Show what an apply of CONFIG would change on the live switch; writes nothing.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    required=True,
    help="a deployment file (targets:) or a program config (against --target)",
)
@click.pass_obj
def diff(obj: Context, config_file: Path) -> None:
    _show_diff(obj, config_file)


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
@click.pass_obj
def run_service(obj: Context, deploy_file: Path, metrics_port: int | None) -> None:
    from .service import Daemon, claim_deployment, early_signals, signal_handlers

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter(
            "ts=%(asctime)s level=%(levelname)s logger=%(name)s %(message)s",
            "%Y-%m-%dT%H:%M:%S%z",
        )
    )
    tofcc_log = logging.getLogger("tofcc")
    tofcc_log.addHandler(handler)
    tofcc_log.setLevel(logging.INFO)
    tofcc_log.propagate = False
    # Handlers first: a SIGHUP while a slow file loads must not kill the daemon.
    with early_signals() as pending, claim_deployment(deploy_file):
        daemon = Daemon(deploy_file)
        spec = daemon.config.metrics
        server = None
        if spec is not None or metrics_port is not None:
            from .metrics import serve

            address = spec.address if spec is not None else "127.0.0.1"
            port = metrics_port if metrics_port is not None else spec.port if spec else 0
            field = "--metrics-port" if metrics_port is not None else f"{deploy_file}: metrics"
            server = serve(daemon, address, port, field)
            tofcc_log.info("event=metrics url=http://%s:%d/metrics", address, server.server_port)
        try:
            with signal_handlers(daemon, pending):
                daemon.run()
        finally:
            if server is not None:
                server.shutdown()
                server.server_close()


@cli.command(help="Run PMQECN on the reference model over a short packet trace.")
def demo() -> None:
    from .pmqecn.demo import run_demo

    run_demo(console)


def _add_eval() -> None:
    # The evaluation harness lives with the models; its command joins tofcc.
    from evaluation.cli import eval_group

    cli.add_command(eval_group)


_add_eval()


for _name in PROGRAMS:
    for _command in _commands(_name).COMMANDS:
        cli.add_command(_command)


def run(argv: list[str] | None = None) -> int:
    """Run tofcc on `argv` (default: the process's) and return its exit code;
    every error a user can cause ends here as a message and a documented code."""
    try:
        cli.main(args=argv, prog_name="tofcc", standalone_mode=False)
    except click.exceptions.Abort:
        return 130
    except click.ClickException as exc:
        exc.show()
        return 2
    except ControllerError as exc:
        print_error(exc)
        return exc.exit_code
    except ProfileError as exc:  # an installed hw profile is broken: not the user's input
        print_error(f"hardware profile: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    except SystemExit as exc:  # `eval` reports its own errors and exits
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return 0


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
