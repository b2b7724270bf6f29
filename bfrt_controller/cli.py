"""tofcc: run and retune tofino-cc programs on a switch or on the reference model.

Exit codes: 0 ok; 1 unexpected error; 2 invalid input (the message names the
field; nothing was written); 3 the switch refused a write (the batch was rolled
back); 4 switch unreachable; 5 the BF-Runtime client (Intel SDE) is missing;
6 another client owns the program on the switch.

One writer per program on a BF-Runtime switch: the server lets one client bind
a program. `status` reads through an unbound client and works while a writer
(`optimize --interval`, a PTF run) holds the switch; commands that write need
the switch to themselves, or a different --client-id if only the id clashes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from hw_profiles import ProfileError, load_profile

from .bfcc import app as bfcc_app
from .bfcc.config import CHOICE_PARAMS, PARAM_NAMES, check_param_name
from .errors import ConfigError, ControllerError
from .pmqecn import app as pmqecn_app
from .pmqecn.config import MAX_INTERVAL_S
from .programs import PROGRAMS, App, get_program
from .state import default_state_path, load_state, save_state, state_lock
from .supervisor import Supervisor
from .switch import TmShapingWrite
from .sync import holds_state, sync_with_switch
from .targets import open_switch

# Wide enough for the demo's tables when output is piped (CI logs, files).
console = Console(width=None if sys.stdout.isatty() else 140)


class Context:
    def __init__(
        self,
        target: str,
        program: str,
        config: Path | None,
        state: Path | None,
        client_id: int = 0,
    ) -> None:
        self.target = target
        self.program = get_program(program)
        self.config_path = config
        self.state_path = state or default_state_path(program)
        self.client_id = client_id
        # The state-file lock and every switch session the command opened,
        # released when it ends: a BF-Runtime client id and bind are free for
        # the next writer at once, not when the process is reaped.
        self._held = contextlib.ExitStack()

    def close(self) -> None:
        self._held.close()

    @property
    def is_model(self) -> bool:
        return self.target == "model"

    def open_app(self, read_only: bool = False, sync: bool = False) -> App:
        """`sync`: a one-shot command on a switch starts from the live values it
        holds and re-pushes everything if it lost the program's state (sync.py)."""
        if self.is_model:
            # Held until the command ends, so its read and its save are one step.
            self._held.enter_context(state_lock(self.state_path))
        saved = load_state(self.state_path) if self.is_model and self.config_path is None else None
        if saved is not None and saved.get("program", self.program.name) == self.program.name:
            cfg: Any = self.program.parse_config(
                saved["config"], f"state file {self.state_path}: config"
            )
        else:
            saved = None
            cfg = self.program.load_config(self.config_path or self.program.default_config)
        switch = open_switch(
            self.target,
            self.program.name,
            load_profile(cfg.chip),
            client_id=self.client_id,
            read_only=read_only,
        )
        switch.connect()
        self._held.callback(switch.close)
        app = self.program.make_app(switch, cfg)
        if saved is not None:
            app.restore_live(saved.get("live") or {}, f"state file {self.state_path}: live")
        if self.is_model:
            # The model starts empty every command: replay the intended state.
            app.push_all()
        elif sync:
            report = sync_with_switch(app)
            if report.missing:
                console.print(
                    f"the switch lacked {report.missing} of the program's table entries "
                    f"(restarted?): pushed the whole intended state ({report.pushed} writes)"
                )
        return app

    def pmqecn(self, sync: bool = True) -> pmqecn_app.PmqecnApp:
        app = self.open_app(sync=sync)
        if not isinstance(app, pmqecn_app.PmqecnApp):
            raise ConfigError("--program", f"this command is for pmqecn, not {self.program.name}")
        return app

    def require(self, program: str) -> None:
        """Refuse a command meant for another program, before touching the switch."""
        if self.program.name != program:
            raise ConfigError(
                "--program", f"this command is for {program}, not {self.program.name}"
            )

    def bfcc(self) -> bfcc_app.BfccApp:
        self.require("bfcc")
        app = self.open_app(sync=True)
        assert isinstance(app, bfcc_app.BfccApp)
        return app

    def save(self, app: App) -> None:
        if self.is_model:
            save_state(
                self.state_path,
                self.program.name,
                app.config.model_dump(mode="json"),
                app.live_state(),
            )


# Plain ASCII decimal: int() would also take "1_000", " 5", "٣" and "²" (via isdigit).
_DECIMAL = re.compile(r"-?[0-9]+")
# Longer than any field tofcc writes (32 bits); int() of a huge string is slow.
_MAX_DIGITS = 20


def _parse_int(field: str, value: str) -> int:
    if len(value) > _MAX_DIGITS or not _DECIMAL.fullmatch(value):
        raise ConfigError(field, f"expected an integer, got {value!r}")
    return int(value)


def _parse_pairs(app: pmqecn_app.PmqecnApp, pairs: tuple[str, ...], what: str) -> dict[int, int]:
    out: dict[int, int] = {}
    given: dict[int, str] = {}
    by_name = {c.name: c.id for c in app.config.classes}
    for pair in pairs:
        cls, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError(what, f"expected CLASS=VALUE, got {pair!r}")
        cid = int(cls) if _DECIMAL.fullmatch(cls) and len(cls) <= _MAX_DIGITS else by_name.get(cls)
        if cid is None or cid not in app.live:
            raise ConfigError(what, f"unknown class {cls!r} (known: {', '.join(by_name)})")
        name = app.config.class_by_id(cid).name
        if cid in given:
            # Two values for one class in one command: which one was meant?
            raise ConfigError(f"{what} {cls}", f"class {name} given twice ({given[cid]}, {pair})")
        given[cid] = pair
        out[cid] = _parse_int(f"{what} {cls}", value)
    return out


def _print_changes(changes: list[pmqecn_app.Change], app: pmqecn_app.PmqecnApp) -> None:
    if not changes:
        console.print("nothing changed")
        return
    t = Table(title="changes written")
    for col in ("class", "what", "old", "new", "why"):
        t.add_column(col)
    for ch in changes:
        name = app.config.class_by_id(ch.class_id).name
        t.add_row(name, ch.what, str(ch.old), str(ch.new), ch.why)
    console.print(t)


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
    where = f"{obj.program.name} on {app.switch.description}"
    if not obj.program.status_sections:
        _print_rows(where, obj.program.status_columns, rows)
        return
    console.print(where)
    for section, columns in obj.program.status_sections:
        _print_rows(section, columns, [r for r in rows if r.get("section") == section])


def _print_rows(
    title: str, columns: tuple[tuple[str, str], ...], rows: list[dict[str, object]]
) -> None:
    t = Table(title=title)
    for heading, _ in columns:
        t.add_column(heading)
    for r in rows:
        t.add_row(*(_cell(r.get(key)) for _, key in columns))
    console.print(t)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


@cli.command("set-threshold", help="Set K_i in cells: tofcc set-threshold voice=20 bulk=80")
@click.argument("pairs", nargs=-1, required=True)
@click.pass_obj
def set_threshold(obj: Context, pairs: tuple[str, ...]) -> None:
    app = obj.pmqecn()
    changes = app.set_thresholds(_parse_pairs(app, pairs, "set-threshold"))
    obj.save(app)
    _print_changes(changes, app)


@cli.command("set-weight", help="Set WRR/DWRR weights: tofcc set-weight voice=8")
@click.argument("pairs", nargs=-1, required=True)
@click.pass_obj
def set_weight(obj: Context, pairs: tuple[str, ...]) -> None:
    app = obj.pmqecn()
    changes = app.set_weights(_parse_pairs(app, pairs, "set-weight"))
    obj.save(app)
    _print_changes(changes, app)


def _parse_params(pairs: tuple[str, ...]) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError("set", f"expected NAME=VALUE, got {pair!r}")
        check_param_name(name)
        if name in out:
            raise ConfigError(name, f"given twice ({name}={out[name]}, {pair})")
        # A choice is a word (sender_reaction=match_switch); the app's model
        # refuses a word it does not know, naming the field and the choices.
        out[name] = value if name in CHOICE_PARAMS else _parse_int(name, value)
    return out


@cli.command(
    "set",
    help="Set BFCC parameters, all or none: tofcc --program bfcc set t_min_us=80000 rt1_packets=9 "
    f"(names: {', '.join(PARAM_NAMES)}). P4QCN: tofcc --program p4qcn set q_min_cells=100 "
    "q_max_cells=300 [--queue 4/0] (q_min_cells, q_max_cells, feedback_interval_us, mode). "
    "DA-DCTCP: tofcc --program dadctcp set mode=dctcp k_port_packets=120 drop_not_ect=true "
    "[--port 4]. AQM: tofcc --program aqm set max_p=0.1 target_us=2000 [--queue 4/0] "
    "(min_th_cells, max_th_cells, max_p, w_q_shift, target_us, interval_us, count_cap, ecn). "
    "S-PIE: tofcc --program spie set alpha_per_s=0.2 columns=2048 (alpha_per_s, beta_per_s, "
    "del_ref_us, t_update_us, stale_after_us, columns, clear_interval_us).",
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
    if obj.program.name == "p4qcn":
        from .p4qcn.commands import set_queues

        set_queues(obj, pairs, queues, console)
        return
    if obj.program.name == "dadctcp":
        from .dadctcp.commands import set_values

        set_values(obj, pairs, port, console)
        return
    if obj.program.name == "aqm":
        from .aqm.commands import set_queues as set_aqm_queues

        set_aqm_queues(obj, pairs, queues, console)
        return
    if obj.program.name == "spie":
        if queues or port is not None:
            raise ConfigError("--queue", "S-PIE's parameters apply to every S-PIE port")
        from .spie.commands import set_params as set_spie_params

        set_spie_params(obj, pairs, console)
        return
    if queues:
        raise ConfigError("--queue", "only for --program p4qcn or aqm")
    if port is not None:
        raise ConfigError("--port", "only for --program dadctcp")
    obj.require("bfcc")
    # Parsed before the switch is opened: a typo never reaches it.
    changes = _parse_params(pairs)
    app = obj.bfcc()
    written = app.set_params(changes)
    obj.save(app)
    if not written:
        console.print("nothing changed")
        return
    t = Table(title="changes written")
    for col in ("what", "old", "new", "why"):
        t.add_column(col)
    for ch in written:
        t.add_row(ch.what, _cell(ch.old), _cell(ch.new), ch.why)
    console.print(t)


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


@cli.command(help="Measure, solve the M/M/1/N model, write K_i, weights and lambda_i*.")
@click.option("--once", is_flag=True, help="one cycle (default when --interval is absent)")
@click.option("--interval", type=float, help="run a cycle every SECONDS until interrupted")
@click.option(
    "--count",
    type=click.IntRange(min=0),
    default=None,
    help="with --interval: stop after this many cycles (0 or absent: forever)",
)
@click.pass_obj
def optimize(obj: Context, once: bool, interval: float | None, count: int | None) -> None:
    if interval is not None and not (math.isfinite(interval) and 0 < interval <= MAX_INTERVAL_S):
        raise ConfigError(
            "--interval", f"must be a number of seconds in (0, {MAX_INTERVAL_S:g}], got {interval}"
        )
    if count is not None and (interval is None or once):
        raise ConfigError("--count", "counts --interval cycles; give --interval SECONDS too")
    count = count or 0
    app = obj.pmqecn()
    if interval is None or once:
        app.start(time.monotonic())
        time.sleep(min(app.config.optimizer.interval_s, 0.2) if obj.is_model else 0)
        _print_changes(app.optimize_once(time.monotonic()), app)
        obj.save(app)
        return
    # A health read each cycle: a restarted switch is re-pushed even when the
    # cycle itself would write nothing.
    sup = Supervisor(app, probe=lambda: holds_state(app))
    done = 0
    app.start(time.monotonic())
    while count == 0 or done < count:
        time.sleep(interval)
        _print_changes(sup.run(lambda: app.optimize_once(time.monotonic())), app)
        obj.save(app)
        done += 1


@cli.command(
    help="BFCC reduction shaping: shape each reaction point's port (or low queue) in the TM "
    "to RT/(RT+1) while the switch holds backpressure, unshape it after."
)
@click.option("--interval", type=float, help="run a cycle every SECONDS until interrupted")
@click.option(
    "--count",
    type=click.IntRange(min=0),
    default=None,
    help="with --interval: stop after this many cycles (0 or absent: forever)",
)
@click.pass_obj
def shape(obj: Context, interval: float | None, count: int | None) -> None:
    obj.require("bfcc")
    if interval is not None and not (math.isfinite(interval) and 0 < interval <= MAX_INTERVAL_S):
        raise ConfigError(
            "--interval", f"must be a number of seconds in (0, {MAX_INTERVAL_S:g}], got {interval}"
        )
    if count is not None and interval is None:
        raise ConfigError("--count", "counts --interval cycles; give --interval SECONDS too")
    app = obj.bfcc()
    if app.params.reduction != "shaping":
        raise ConfigError("reduction", "is fakes: set reduction=shaping first")

    def report(writes: list[TmShapingWrite]) -> None:
        for w in writes:
            console.print(w.describe())
        if not writes:
            console.print("nothing changed")

    if interval is None:
        report(app.shape_once())
        return
    sup = Supervisor(app, probe=lambda: holds_state(app))
    done, count = 0, count or 0
    while count == 0 or done < count:
        time.sleep(interval)
        report(sup.run(lambda: app.shape_once(time.monotonic())))
        done += 1


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
            app.resolve_front_panel()
            app.push_all()
            console.print(f"{t.name}: applied {len(app.intended_writes())} writes")
        except ControllerError as exc:
            console.print(f"[red]{t.name}: {exc}[/red]", highlight=False, soft_wrap=True)
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
    if saved is not None and saved.get("program") == obj.program.name:
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
            target_app = make_target_app(t, sw)
            target_app.resolve_front_panel()
            plans.append((t.name, sw, target_app))
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
    from .ports import PORT_STATUS_COLUMNS, port_rows, resolve_front_panel
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
        dev_ports = resolve_front_panel(t.spec.front_panel, t.board, sw)
        out[t.name] = port_rows(sw, t.spec.front_panel, t.board, dev_ports)
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
    from .service import Daemon, signal_handlers

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
    daemon = Daemon(deploy_file)
    spec = daemon.config.metrics
    server = None
    if spec is not None or metrics_port is not None:
        from .metrics import serve

        address = spec.address if spec is not None else "127.0.0.1"
        port = metrics_port if metrics_port is not None else spec.port if spec else 0
        server = serve(daemon, address, port)
        tofcc_log.info("event=metrics url=http://%s:%d/metrics", address, server.server_port)
    try:
        with signal_handlers(daemon):
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
    from models.net.cli import eval_group

    cli.add_command(eval_group)


_add_eval()


def _add_p4qcn() -> None:
    from .p4qcn.commands import thresholds

    cli.add_command(thresholds)


_add_p4qcn()


def _add_dadctcp() -> None:
    from .dadctcp.commands import reallocate

    cli.add_command(reallocate)


_add_dadctcp()


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
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        return exc.exit_code
    except ProfileError as exc:  # an installed hw profile is broken: not the user's input
        console.print(f"[red]error:[/red] hardware profile: {exc}", highlight=False, soft_wrap=True)
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
