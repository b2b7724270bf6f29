# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc's commands over a deployment's switches: `status`, `ports` and
`run` (the CLI's group, cli.py, adds them)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .console import console, print_error, print_rows
from .context import Context
from .documents import require_deployment
from .errors import ConfigError, ControllerError
from .port_names import name_ports, with_dev_port
from .targets import open_switch


@click.command(
    help="Show the program's state as read back from the switch; given a deployment file "
    "(--config DEPLOY.yaml), every switch of it (--switch NAME: one)."
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="a deployment file: each of its switches in turn; or the program config the switch runs",
)
@click.option("--json", "as_json", is_flag=True, help="the state as one JSON list of rows")
@click.pass_obj
def status(obj: Context, config_file: Path | None, as_json: bool) -> None:
    if config_file is not None:
        if obj.config_path is not None and obj.config_path != config_file:
            raise ConfigError("--config", "given twice: before and after `status`")
        obj = obj.with_config(config_file, obj.switch_name, fleet=True)
    elif obj.switch_name is not None and obj.config_path is None:
        raise ConfigError("--switch", "names a target of a deployment file given as --config")
    fleet = obj.fleet
    if fleet is None:
        bound = obj.deployment_target
        rows = _switch_status(obj, bound.name if bound is not None else None, as_json)
        if as_json:
            click.echo(json.dumps(rows, indent=2))
        return
    # Every switch of the deployment, one after another; one that cannot be
    # read is reported and the others still are (the first error is the exit code).
    out: list[dict[str, object]] = []
    failed: ControllerError | None = None
    for t in fleet.targets:
        try:
            out += _switch_status(obj.for_target(t.name), t.name, as_json)
        except ControllerError as exc:
            print_error(exc, prefix=f"{t.name}: ")
            out.append({"section": "error", "switch": t.name, "error": str(exc)})
            failed = failed or exc
    if as_json:
        click.echo(json.dumps(out, indent=2))
    if failed is not None:
        raise failed


def _switch_status(obj: Context, name: str | None, quiet: bool) -> list[dict[str, object]]:
    """One switch's rows, ports named (port_names.py); printed as tables unless `quiet`."""
    # Reads only: an unbound client, so a running controller keeps the switch.
    app = obj.open_app(read_only=True)
    rows = name_ports(app.status(), obj.port_namer())
    if name is not None:
        rows = [{"switch": name, **r} for r in rows]
    if quiet:
        return rows
    where = f"{name}: " if name is not None else ""
    console.print(f"{where}{obj.program.name} on {app.switch.description}")
    for section, columns in obj.program.status_sections:
        section_rows = [r for r in rows if r.get("section") == section]
        if section_rows:  # P4QCN without PFC has no watchdog rows: no empty table
            print_rows(section, with_dev_port(columns, section_rows), section_rows)
    return rows


@click.command(help="Show the front-panel ports of a deployment file's switches as they hold them.")
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


@click.command(
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
    from .control import start as start_control
    from .runtime import claim_deployment, early_signals, signal_handlers
    from .service import Daemon
    from .web_config import load_web_config

    # Read before any switch is contacted: a bad file is exit 2 with nothing pushed.
    web = load_web_config(web_config) if web_config is not None else None
    # Handlers first: a SIGHUP while a slow file loads must not kill the daemon.
    with early_signals() as pending, claim_deployment(deploy_file) as claimed:
        daemon = Daemon(deploy_file, keep_model_state=True, audit_log=obj.audit_log)
        server = None
        if daemon.config.metrics is not None or metrics_port is not None or web is not None:
            from .metrics import start

            server = start(daemon, deploy_file, metrics_port, web)
        # Only the daemon holding the run lock answers for the deployment.
        control = start_control(daemon, deploy_file) if claimed else None
        try:
            with signal_handlers(daemon, pending):
                daemon.run(max_steps=cycles or 0)
        finally:
            if control is not None:
                control.close()
            if server is not None:
                server.shutdown()
                server.server_close()


COMMANDS: tuple[click.Command, ...] = (status, ports, run_service)
