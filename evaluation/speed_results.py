# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""benchmarks/eval_speed.py's runs as a file, and the docs' table of them.

`eval_speed.py --write FILE` appends one run (each scenario's ns-3-alone
ceiling and, per scheme, delivered packets, the best wall seconds of each
path and whether both gave the same results) to FILE, a JSON list of runs;
docs/evaluation.md's `<!-- eval:speed FILE -->` block (evaluation/docs_tables.py)
is the table of the mechanisms' rows over every run in it, each figure a
range when the runs differ, so the figures the docs give are the ones the
benchmark printed, not a copy typed by hand.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# What --write keeps in the repository (the docs' block names it).
BUNDLED = REPO / "benchmarks" / "results" / "eval_speed.json"
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


def append_run(path: Path, run: SpeedRun) -> int:
    """Append `run` to the file (made if absent); how many runs it holds now."""
    runs = [asdict(r) for r in load_runs(path)] if path.exists() else []
    runs.append(asdict(run))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n")
    return len(runs)


def load_runs(path: Path) -> list[SpeedRun]:
    try:
        raw = json.loads(path.read_text())
    except OSError as exc:
        raise SpeedResultsError(f"{path}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise SpeedResultsError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(raw, list) or not raw:
        raise SpeedResultsError(f"{path}: expected a non-empty list of runs")
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


def _dates(runs: Sequence[SpeedRun]) -> str:
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
    commits = sorted({r.commit for r in runs})
    caption = (
        f"{len(runs)} run{'s' if len(runs) > 1 else ''} of `python benchmarks/eval_speed.py` "
        f"(the fastest of {_span([r.repeat for r in runs], 'd')} per path) at "
        f"{', '.join(f'`{c}`' for c in commits)}, {_span([r.cpus for r in runs], 'd')} CPUs, "
        f"{_dates(runs)}:"
    )
    header = (
        "| scenario (simulated s) | scheme | ns-3 alone, pkt/s | reference path, pkt/s "
        "| today, pkt/s | vs reference | behind ns-3 | same results |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    lines = [caption, "", header]
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
    return "\n".join(lines)


def render_file(spec: str) -> str:
    """The block's spec is the file, relative to the repository."""
    name = spec.strip()
    if not name:
        raise SpeedResultsError("name the results file (e.g. benchmarks/results/eval_speed.json)")
    return render(load_runs(REPO / name))
