# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc eval`: run the ns-3 evaluation scenarios and write their reports."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from bfrt_controller.console import json_option, json_wanted, print_error, report_item
from bfrt_controller.paths import make_dir

from .scenario import SCHEMES, Scenario, ScenarioError, bundled_scenarios, load_scenario

if TYPE_CHECKING:  # report.py pulls in matplotlib; only `eval run` needs it
    from .records import RunResult
    from .report import ClaimRow
    from .simulate import RunSpec

# Progress and where the reports went: stderr, so stdout carries only the results.
console = Console(stderr=True)
# rich lays a table out in 80 columns when its stream is not a terminal,
# which cut "fct_mean_ms" to "fct_mea…" and wrapped each verdict over 8
# lines in a pipe or a file; there a table gets its natural width instead.
UNWRAPPED_WIDTH = 10_000

EXIT_BAD_SCENARIO = 2
# Its own code: 5 is tofcc's "the SDE's bfrt_grpc is missing" (bfrt_controller/cli.py).
EXIT_NO_NS3 = 7
# --cluster without Dask's distributed (the `cluster` extra), or with a
# scheduler that cannot be reached: nothing has run.
EXIT_NO_CLUSTER = 8
CLUSTER_EXTRA = "pip install 'tofino-cc[cluster]'"
# How long --cluster waits for its scheduler to answer.
CONNECT_TIMEOUT_S = 20


def _fail(message: object, code: int) -> NoReturn:
    """One line on stderr, however long the path in it (rich wraps at 80
    columns on a pipe), then exit `code`."""
    print_error(message)
    sys.exit(code)


def _load(ref: str):  # type: ignore[no-untyped-def]
    from .schemes import check_buildable

    try:
        s = load_scenario(ref)
        check_buildable(s, ref)
        return s
    except ScenarioError as exc:
        _fail(exc, EXIT_BAD_SCENARIO)


@click.group("eval", help="ns-3 evaluation: each mechanism against its paper's baselines.")
def eval_group() -> None:
    pass


# Where `eval list` finds a scenario's last timings: `eval run`'s default
# --out, then the results committed beside the scenarios.
COMMITTED_RESULTS = Path(__file__).resolve().parent / "results"


@eval_group.command(
    "list",
    help="The bundled scenarios: simulated time, runs (schemes x link rates x "
    "repeats) and the CPU time the last run of each took, summed over its runs from "
    "timing.json in RESULTS/<scenario>/ (seed-*/ with repeats), else in the "
    "repository's evaluation/results/<scenario>/; '-' when neither has one.",
)
@click.option(
    "--results",
    type=click.Path(path_type=Path),
    default=Path("eval-results"),
    show_default=True,
    help="where `eval run --out` wrote the reports",
)
@json_option
def list_scenarios(results: Path) -> None:
    rows = [("scenario", "simulated", "runs", "CPU time", "description")]
    for name in bundled_scenarios():
        s = load_scenario(name)
        timed = last_timing(name, (results, COMMITTED_RESULTS))
        report_item(
            "scenarios",
            {
                "name": name,
                "description": s.description,
                "simulated_s": s.duration_s,
                "runs": run_count(s),
                "cpu_s": sum(timed.values()) if timed else None,
            },
        )
        rows.append(
            (
                name,
                f"{s.duration_s:g} s",
                _run_count(s),
                _cpu_time(timed, run_count(s)),
                s.description,
            )
        )
    if json_wanted():
        return
    click.echo(
        f"CPU time: the last run's, summed from {results}/<scenario>/timing.json "
        f"(seed-*/timing.json with repeats), else {COMMITTED_RESULTS}/<scenario>/"
    )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1])


def run_count(s: Scenario) -> int:
    """The runs `eval run` makes of a scenario: every scheme at every link rate, per seed."""
    return len(s.schemes.enabled()) * max(len(s.link_rates), 1) * s.repeats


def _run_count(s: Scenario) -> str:
    parts = [f"{len(s.schemes.enabled())} schemes"]
    if len(s.link_rates) > 1:
        parts.append(f"{len(s.link_rates)} rates")
    if s.repeats > 1:
        parts.append(f"{s.repeats} seeds")
    return f"{run_count(s)} ({' x '.join(parts)})" if len(parts) > 1 else str(run_count(s))


def last_timing(name: str, roots: tuple[Path, ...]) -> dict[str, float] | None:
    """The per-run times (seconds) of a scenario's last run under the first
    root that has them: <root>/<name>/timing.json, or with repeats each
    <root>/<name>/seed-*/timing.json (keys prefixed with the seed's directory)."""
    for root in roots:
        d = root / name
        files = [d / "timing.json"] if (d / "timing.json").is_file() else []
        files += sorted(d.glob("seed-*/timing.json"))
        timed: dict[str, float] = {}
        for f in files:
            try:
                data = json.loads(f.read_text())
            except (OSError, ValueError):
                continue  # a half-written or foreign file: no timing, not a crash
            if isinstance(data, dict):
                prefix = "" if f.parent == d else f"{f.parent.name}/"
                timed.update(
                    {
                        prefix + str(k): float(v)
                        for k, v in data.items()
                        if isinstance(v, int | float)
                    }
                )
        if timed:
            return timed
    return None


def _cpu_time(timed: dict[str, float] | None, runs: int) -> str:
    if not timed:
        return "-"
    total = sum(timed.values())
    text = f"{total:,.0f} s" if total >= 10 else f"{total:.1f} s"
    return text if len(timed) == runs else f"{text} ({len(timed)} of {runs} runs)"


@eval_group.command(help="Validate scenario files without running them.")
@click.argument("scenarios", nargs=-1, required=True)
@json_option
def check(scenarios: tuple[str, ...]) -> None:
    for ref in scenarios:
        s = _load(ref)
        schemes, flows = len(s.schemes.enabled()), len(s.flows)
        report_item("scenarios", {"scenario": ref, "ok": True, "schemes": schemes, "flows": flows})
        if not json_wanted():
            click.echo(f"{ref}: ok ({schemes} schemes, {flows} flows)")


@eval_group.command(help="Run SCENARIO (a bundled name or a YAML file) and write its report.")
@click.argument("scenarios", nargs=-1, required=True)
@click.option(
    "--out",
    "out_root",
    type=click.Path(path_type=Path),
    default=Path("eval-results"),
    show_default=True,
    help="reports go to OUT/<scenario>/",
)
@click.option(
    "--scheme",
    "only",
    multiple=True,
    help=f"run only these schemes (repeatable): {', '.join(SCHEMES)} or a variant "
    "the scenario names (dcqcn-10ms)",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="runs at once, each in its own process with its own ns-3 (default: the "
    "machine's cores); every run is seeded by itself, so the results do not depend on it",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1, max=1000),
    default=None,
    help="run every scheme and rate this many times, seeds seed, seed + 1, ... "
    "(default: the scenario's repeats, 1 unless it says)",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    default=None,
    help="run on the Dask distributed cluster whose scheduler is ADDRESS "
    "(tcp://host:8786) instead of local processes; needs the 'cluster' extra "
    f"({CLUSTER_EXTRA}) here and the project on every worker (docs/evaluation.md)",
)
@json_option
def run(
    scenarios: tuple[str, ...],
    out_root: Path,
    only: tuple[str, ...],
    jobs: int | None,
    repeats: int | None,
    cluster: str | None,
) -> None:
    if cluster is not None and jobs is not None:
        _fail(
            "--jobs and --cluster: the cluster's workers say how many runs go at once",
            EXIT_BAD_SCENARIO,
        )
    loaded = [_load(ref) for ref in scenarios]  # every file checked before any run
    if repeats is not None:
        loaded = [s.model_copy(update={"repeats": repeats}) for s in loaded]
    known = {n for s in loaded for n in s.schemes.enabled()}
    unknown = [n for n in only if n not in known]
    if unknown:
        _fail(
            f"--scheme {', '.join(unknown)}: no such scheme in "
            f"{', '.join(s.name for s in loaded)} ({', '.join(sorted(known))})",
            EXIT_BAD_SCENARIO,
        )
    # A missing extra or a scheduler that does not answer is said before
    # anything is written or run.
    client = _cluster_client(cluster) if cluster is not None else None
    try:
        _run_loaded(loaded, out_root, only, jobs, client)
    finally:
        if client is not None:
            client.close()


def _run_loaded(
    loaded: list[Scenario],
    out_root: Path,
    only: tuple[str, ...],
    jobs: int | None,
    client: Any,
) -> None:
    for s in loaded:
        # Before minutes of simulation, not after: the reports must have a home.
        try:
            (out_root / s.name).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _fail(
                f"--out {out_root}: cannot create {out_root / s.name}: {exc.strerror or exc}",
                EXIT_BAD_SCENARIO,
            )
    if logging.getLogger().getEffectiveLevel() > logging.INFO:
        # The simulated controllers log every refused optimiser cycle; that is
        # for `tofcc -v eval run`, not for the progress bars.
        logging.getLogger("tofcc").setLevel(logging.ERROR)
    from . import ns3_env
    from .simulate import run_specs

    if client is None:
        # On a cluster the workers load ns-3; here only the reports are written.
        try:
            with console.status("loading ns-3 (cppyy compiles its headers: 10-20 s)"):
                ns3_env.ns3()
        except ns3_env.Ns3Unavailable as exc:
            _fail(exc, EXIT_NO_NS3)
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    for s in loaded:
        seeded = s.seeded()
        jobs_of = [(sk, spec) for sk in seeded for spec in run_specs(sk, list(only) or None)]
        if client is not None:
            results = _run_on_cluster(client, s.name, jobs_of)
        elif workers > 1 and len(jobs_of) > 1:
            results = _run_parallel(s.name, jobs_of, workers)
        else:
            results = _run_serial(s.name, jobs_of)
        _write_reports(s, seeded, results, out_root)


def _write_reports(
    s: Scenario, seeded: list[Scenario], results: list[RunResult], out_root: Path
) -> None:
    """The scenario's report, or with several seeds one per seed and the summary."""
    from .repeats import write_summary
    from .report import write_report

    if len(seeded) == 1:
        paths = write_report(s, results, out_root / s.name)
        _print_claims(paths.claims)
        report_item("reports", {"scenario": s.name, "report": str(paths.markdown)})
        console.print(f"{s.name}: report in {paths.markdown}", highlight=False, soft_wrap=True)
        return
    seed_dirs = []
    for sk in seeded:
        d = out_root / s.name / f"seed-{sk.seed}"
        make_dir(d)
        write_report(sk, [r for r in results if r.seed == sk.seed], d)
        seed_dirs.append(d)
    md = write_summary(s.name, seed_dirs, out_root / s.name)
    report_item(
        "reports",
        {"scenario": s.name, "seeds": len(seeded), "summary": str(md)}
        | {"seed_reports": [str(d) for d in seed_dirs]},
    )
    console.print(
        f"{s.name}: {len(seeded)} seeds, a report per seed in {out_root / s.name}/seed-*/, "
        f"the summary in {md}",
        highlight=False,
        soft_wrap=True,
    )


def _run_serial(name: str, jobs_of: list[tuple[Scenario, RunSpec]]) -> list[RunResult]:
    from .simulate import RunSpec, run_one

    results: list[RunResult] = []
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        several = len({sk.seed for sk, _ in jobs_of}) > 1
        for sk, spec in jobs_of:
            label = name + (f" seed {sk.seed}" if several else "") + f" {spec.scheme}"
            label += f" @ {spec.variant}" if spec.variant else ""
            task = bar.add_task(label, total=1.0)

            def advance(frac: float, task: TaskID = task) -> None:
                bar.update(task, completed=min(1.0, frac))

            results.append(run_one(sk, RunSpec(spec.scheme, spec.variant), advance))
            bar.update(task, completed=1.0)
    return results


def _run_in_worker(s: Scenario, scheme: str, variant: str) -> RunResult:
    from . import ns3_env
    from .simulate import RunSpec, run_one

    logging.getLogger("tofcc").setLevel(logging.ERROR)
    ns3_env.ns3()
    return run_one(s, RunSpec(scheme, variant))


def _run_parallel(
    name: str, jobs_of: list[tuple[Scenario, RunSpec]], workers: int
) -> list[RunResult]:
    """Each run in a fresh (spawned) process: ns-3's simulator is one per
    process, and a fork would share the parent's. Results in `jobs_of` order."""
    ctx = multiprocessing.get_context("spawn")
    done: dict[int, RunResult] = {}
    with (
        ProcessPoolExecutor(max_workers=min(workers, len(jobs_of)), mp_context=ctx) as pool,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=console,
        ) as bar,
    ):
        task = bar.add_task(f"{name}: {len(jobs_of)} runs, {workers} at once", total=len(jobs_of))
        futures = {
            pool.submit(_run_in_worker, sk, spec.scheme, spec.variant): i
            for i, (sk, spec) in enumerate(jobs_of)
        }
        for fut in as_completed(futures):
            done[futures[fut]] = fut.result()
            bar.advance(task)
    return [done[i] for i in range(len(jobs_of))]


def _cluster_client(address: str) -> Any:
    """A client of the Dask scheduler at `address`; exit EXIT_NO_CLUSTER
    (one line) without the extra or when the scheduler does not answer."""
    try:
        from distributed import Client
    except ImportError:
        _fail(
            f"--cluster {address}: running on a cluster needs Dask's distributed "
            f"scheduler, which is not installed: {CLUSTER_EXTRA}",
            EXIT_NO_CLUSTER,
        )
    try:
        with console.status(f"connecting to the Dask scheduler at {address}"):
            return Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        _fail(
            f"--cluster {address}: no Dask scheduler answered there within "
            f"{CONNECT_TIMEOUT_S} s ({type(exc).__name__}: {exc})",
            EXIT_NO_CLUSTER,
        )


# One run at a time in each worker process, whatever its threads: ns-3's
# simulator is one per process (docs/evaluation.md: workers with --nthreads 1).
_ONE_RUN = threading.Lock()


def _run_on_worker(s: Scenario, scheme: str, variant: str) -> RunResult:
    with _ONE_RUN:
        return _run_in_worker(s, scheme, variant)


def _run_on_cluster(
    client: Any, name: str, jobs_of: list[tuple[Scenario, RunSpec]]
) -> list[RunResult]:
    """Each run a task of the cluster, as each is a process of the local pool:
    seeded by itself, so the worker that runs it does not change its bytes.
    Results in `jobs_of` order."""
    from distributed import as_completed as completed

    from . import ns3_env

    futures = [
        # pure=False: two runs with equal arguments (none here) are still two runs.
        client.submit(_run_on_worker, sk, spec.scheme, spec.variant, pure=False)
        for sk, spec in jobs_of
    ]
    index = {f.key: i for i, f in enumerate(futures)}
    done: dict[int, RunResult] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task(f"{name}: {len(jobs_of)} runs on the cluster", total=len(jobs_of))
        try:
            for fut in completed(futures):
                done[index[fut.key]] = fut.result()
                bar.advance(task)
        except ns3_env.Ns3Unavailable as exc:
            client.cancel(futures)
            _fail(f"a worker of the cluster: {exc}", EXIT_NO_NS3)
    return [done[i] for i in range(len(jobs_of))]


def _print_claims(rows: list[ClaimRow]) -> None:
    """The paper-vs-ours rows over all link rates (or the only run), on
    stdout: the result, where the progress bars and paths are stderr's."""
    shown = [r for r in rows if r.variant in ("", "all")]
    if not shown:
        return
    table = Table(
        "metric",
        "ours vs",
        "paper",
        "measured",
        "ours vs none",
        "base vs none",
        "verdict",
        title="Against the paper and against none",
    )

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x:+.1f} %"

    for r in shown:
        paper = (
            f"{r.paper[0]:+g} … {r.paper[1]:+g} %"
            if isinstance(r.paper, tuple)
            else f"{r.paper:+g} %"
        )
        table.add_row(
            r.metric,
            f"{r.ours} vs {r.baseline}",
            paper,
            pct(r.measured),
            pct(r.ours_vs_none),
            pct(r.baseline_vs_none),
            r.verdict,
        )
    out = Console(
        width=None if sys.stdout.isatty() else UNWRAPPED_WIDTH, markup=False, highlight=False
    )
    out.print(table)
