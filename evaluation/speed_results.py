# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The speed benchmarks' runs as files, and the docs' tables of them.

`eval_speed.py --write FILE` appends one run (each scenario's ns-3-alone
ceiling and, per scheme, delivered packets, the best wall seconds of each
path and whether both gave the same results) to FILE, a JSON list of runs;
docs/evaluation.md's `<!-- eval:speed FILE -->` block (evaluation/docs_tables.py)
is the table of the mechanisms' rows over every run in it, each figure a
range when the runs differ, so the figures the docs give are the ones the
benchmark printed, not a copy typed by hand. `control_loop.py --write FILE`
does the same for PMQECN's 64 x 8 control cycle (README.md's
`<!-- eval:cycles FILE -->` block).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from .results_store import checkout_commit

REPO = Path(__file__).resolve().parent.parent
# What --write keeps in the repository (the docs' block names it).
BUNDLED = REPO / "benchmarks" / "results" / "eval_speed.json"
BUNDLED_CYCLES = REPO / "benchmarks" / "results" / "control_loop.json"
T = TypeVar("T")
# Issue 48's bound on a 64 x 8 cycle's median, today's path.
CYCLE_BOUND_MS = 20.0
# Each scenario's mechanism, the scheme(s) issue 48 judges (a prefix: the
# BFCC variants); a scenario without one (tcp-smoke) has no row in the table.
MECHANISM = {
    "pmqecn-s1": "pmqecn",
    "bfcc-single": "bfcc",
    "spie-dc": "p4spie",
    "dadctcp-dc": "dadctcp",
}


class SpeedResultsError(Exception):
    """A results file that cannot be read or holds no run."""


@dataclass(frozen=True)
class SchemeTime:
    scheme: str  # with `@variant` when the scenario has variants
    delivered: int  # data packets (UDP) or data segments (TCP) received
    reference_s: float  # best wall time of the reference path
    today_s: float  # best wall time of today's path
    same: bool  # both paths gave the same results


@dataclass(frozen=True)
class ScenarioTime:
    scenario: str
    simulated_s: float
    ceiling_packets: int  # ns-3 alone (benchmarks/ns3_alone.py)
    ceiling_s: float
    schemes: tuple[SchemeTime, ...]


@dataclass(frozen=True)
class SpeedRun:
    commit: str
    date: str  # UTC, ISO 8601
    cpus: int
    repeat: int  # runs per path, the fastest counting
    scenarios: tuple[ScenarioTime, ...]


@dataclass(frozen=True)
class CycleTime:
    """One backend's 64 x 8 cycles in one run of control_loop.py (ms)."""

    backend: str
    reference_ms: float  # median wall time, the reference path
    reference_max_ms: float
    today_ms: float  # median wall time, today's path
    today_max_ms: float
    today_cpu_ms: float  # median CPU time, today's path


@dataclass(frozen=True)
class PathTime:
    """One setup's optimise-and-apply cycles on the model backend in one run
    of control_loop.py (without --only-switch), each of the optimiser's
    three paths: median and maximum wall ms."""

    setup: str  # "64 ports x 8 classes", ...
    one_by_one_ms: float
    one_by_one_max_ms: float
    together_ms: float
    together_max_ms: float
    two_processes_ms: float
    two_processes_max_ms: float


@dataclass(frozen=True)
class CycleRun:
    commit: str
    date: str  # UTC, ISO 8601
    cpus: int
    cycles: int  # per path; the figures are their median and maximum
    backends: tuple[CycleTime, ...]
    paths: tuple[PathTime, ...] = ()  # none from an --only-switch run


def append_run(path: Path, run: SpeedRun | CycleRun) -> int:
    """Append `run` to the file (made if absent) of runs of its kind; how
    many runs it holds now."""
    load = load_runs if isinstance(run, SpeedRun) else load_cycle_runs
    runs: list[object] = [asdict(r) for r in load(path)] if path.exists() else []
    runs.append(asdict(run))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n")
    return len(runs)


def _raw_runs(path: Path) -> list[Any]:
    try:
        raw = json.loads(path.read_text())
    except OSError as exc:
        raise SpeedResultsError(f"{path}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise SpeedResultsError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(raw, list) or not raw:
        raise SpeedResultsError(f"{path}: expected a non-empty list of runs")
    return raw


def load_cycle_runs(path: Path) -> list[CycleRun]:
    runs = []
    for i, r in enumerate(_raw_runs(path)):
        try:
            backends = tuple(CycleTime(**b) for b in r["backends"])
            paths = tuple(PathTime(**t) for t in r.get("paths", ()))
            rest = {k: v for k, v in r.items() if k not in ("backends", "paths")}
            runs.append(CycleRun(**rest, backends=backends, paths=paths))
        except (KeyError, TypeError, AttributeError) as exc:
            raise SpeedResultsError(f"{path}: run {i} is not a control-loop run ({exc})") from None
    return runs


def load_runs(path: Path) -> list[SpeedRun]:
    raw = _raw_runs(path)
    runs = []
    for i, r in enumerate(raw):
        try:
            scenarios = tuple(
                ScenarioTime(
                    **{k: v for k, v in s.items() if k != "schemes"},
                    schemes=tuple(SchemeTime(**t) for t in s["schemes"]),
                )
                for s in r["scenarios"]
            )
            runs.append(
                SpeedRun(**{k: v for k, v in r.items() if k != "scenarios"}, scenarios=scenarios)
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise SpeedResultsError(f"{path}: run {i} is not a benchmark run ({exc})") from None
    return runs


def _span(values: Sequence[float], fmt: str, suffix: str = "") -> str:
    lo, hi = min(values), max(values)
    low, high = format(lo, fmt), format(hi, fmt)
    return f"{low}{suffix}" if low == high else f"{low}-{high}{suffix}"


def _dates(runs: Sequence[SpeedRun | CycleRun]) -> str:
    first, last = min(r.date for r in runs)[:10], max(r.date for r in runs)[:10]
    return first if first == last else f"{first} to {last}"


def render(runs: Sequence[SpeedRun]) -> str:
    """The mechanisms' rows over `runs`: a caption line and a Markdown table."""
    rows: dict[tuple[str, str], list[tuple[ScenarioTime, SchemeTime]]] = {}
    for run in runs:
        for sc in run.scenarios:
            mechanism = MECHANISM.get(sc.scenario)
            for t in sc.schemes:
                if mechanism is not None and t.scheme.startswith(mechanism):
                    rows.setdefault((sc.scenario, t.scheme), []).append((sc, t))
    if not rows:
        raise SpeedResultsError("no run holds a mechanism's scheme")
    caption = (
        f"{_runs(runs)} of `python benchmarks/eval_speed.py` "
        f"(the fastest of {_span([r.repeat for r in runs], 'd')} per path) {_where(runs)}"
    )
    columns = (
        "scenario (simulated s)", "scheme", "ns-3 alone, pkt/s", "reference path, pkt/s",
        "today, pkt/s", "vs reference", "behind ns-3", "same results",
    )  # fmt: skip
    lines = []
    for (scenario, scheme), seen in rows.items():
        ceiling = [sc.ceiling_packets / sc.ceiling_s for sc, _ in seen]
        ref = [t.delivered / t.reference_s for _, t in seen]
        today = [t.delivered / t.today_s for _, t in seen]
        ratio = [t.reference_s / t.today_s for _, t in seen]
        behind = [c / d for c, d in zip(ceiling, today, strict=True)]
        same = sum(t.same for _, t in seen)
        lines.append(
            f"| `{scenario}` ({seen[0][0].simulated_s:g} s) | {scheme} | {_span(ceiling, ',.0f')} "
            f"| {_span(ref, ',.0f')} | {_span(today, ',.0f')} | **{_span(ratio, '.1f', 'x')}** "
            f"| {_span(behind, '.1f', 'x')} | {'yes' if same == len(seen) else 'NO'} "
            f"({same} of {len(seen)}) |"
        )
    return _table(caption, columns, lines)


def render_file(spec: str) -> str:
    """The block's spec is the file, relative to the repository."""
    return render(load_runs(_named(spec, BUNDLED)))


def render_cycles(runs: Sequence[CycleRun]) -> str:
    """Each backend's 64 x 8 cycle over `runs`: a caption line and a Markdown table."""
    rows = _grouped((b.backend, b) for run in runs for b in run.backends)
    if not rows:
        raise SpeedResultsError("no run holds a backend's cycle")
    caption = (
        f"The 64 x 8 section of {_runs(runs)} of "
        f"`python benchmarks/control_loop.py` (median of {_span([r.cycles for r in runs], 'd')} "
        f"cycles per path, the paths alternating) {_where(runs)}"
    )
    columns = (
        "64 x 8 cycle", "reference path, median ms", "today, median ms", "today, max ms",
        "today, CPU ms", "vs reference", f"runs over {CYCLE_BOUND_MS:g} ms",
    )  # fmt: skip
    lines = []
    for backend, seen in rows.items():
        over = sum(b.today_ms > CYCLE_BOUND_MS for b in seen)
        lines.append(
            f"| {backend} | {_span([b.reference_ms for b in seen], '.1f')} "
            f"| **{_span([b.today_ms for b in seen], '.1f')}** "
            f"| {_span([b.today_max_ms for b in seen], '.1f')} "
            f"| {_span([b.today_cpu_ms for b in seen], '.1f')} "
            f"| {_span([b.reference_ms / b.today_ms for b in seen], '.1f', 'x')} "
            f"| {over} of {len(seen)} |"
        )
    return _table(caption, columns, lines)


def render_cycle_file(spec: str) -> str:
    """The block's spec is the file, relative to the repository."""
    return render_cycles(load_cycle_runs(_named(spec, BUNDLED_CYCLES)))


def render_paths(runs: Sequence[CycleRun]) -> str:
    """The optimiser's three paths over the runs that timed them: a caption
    line and a Markdown table."""
    full = [r for r in runs if r.paths]
    if not full:
        raise SpeedResultsError("no run timed the optimiser's paths (run without --only-switch)")
    rows = _grouped((t.setup, t) for run in full for t in run.paths)
    caption = (
        f"{_runs(full)} of `python benchmarks/control_loop.py` "
        f"(median and maximum of {_span([r.cycles for r in full], 'd')} cycles) {_where(full)}"
    )
    columns = (
        "model backend, ms", "one port at a time", "together", "2 processes",
        "one at a time / together",
    )  # fmt: skip
    lines = []
    for setup, seen in rows.items():

        def cell(median: str, top: str, ts: list[PathTime] = seen) -> str:
            m = _span([getattr(t, median) for t in ts], ".1f")
            return f"{m} (max {_span([getattr(t, top) for t in ts], '.1f')})"

        lines.append(
            f"| {setup} | {cell('one_by_one_ms', 'one_by_one_max_ms')} "
            f"| {cell('together_ms', 'together_max_ms')} "
            f"| {cell('two_processes_ms', 'two_processes_max_ms')} "
            f"| {_span([t.one_by_one_ms / t.together_ms for t in seen], '.1f', 'x')} |"
        )
    return _table(caption, columns, lines)


def render_paths_file(spec: str) -> str:
    """The block's spec is the file, relative to the repository."""
    return render_paths(load_cycle_runs(_named(spec, BUNDLED_CYCLES)))


def _grouped(pairs: Iterable[tuple[str, T]]) -> dict[str, list[T]]:
    """The values by their key, in first-seen order (a table's rows)."""
    out: dict[str, list[T]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out


def _runs(runs: Sequence[object]) -> str:
    return f"{len(runs)} run{'s' if len(runs) > 1 else ''}"


def _table(caption: str, columns: Sequence[str], rows: Sequence[str]) -> str:
    """A caption line and a Markdown table of `rows` under `columns`."""
    header = f"| {' | '.join(columns)} |\n|{'---|' * len(columns)}"
    return "\n".join([caption, "", header, *rows])


def _named(spec: str, example: Path) -> Path:
    name = spec.strip()
    if not name:
        raise SpeedResultsError(f"name the results file (e.g. {example.relative_to(REPO)})")
    return REPO / name


def _where(runs: Sequence[SpeedRun | CycleRun]) -> str:
    """The commits, CPUs and dates a caption names."""
    commits = ", ".join(f"`{c}`" for c in sorted({r.commit for r in runs}))
    return f"at {commits}, {_span([r.cpus for r in runs], 'd')} CPUs, {_dates(runs)}:"


def stamp(kept_in: Path) -> tuple[str, str, int]:
    """(commit, date, CPUs) of a run about to be appended to `kept_in`,
    whose own changes do not make the checkout count as dirty."""
    return (
        checkout_commit(ignore=[kept_in]),
        datetime.now(UTC).isoformat(timespec="seconds"),
        os.cpu_count() or 0,
    )
