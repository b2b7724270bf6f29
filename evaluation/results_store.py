# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The committed results docs/evaluation.md's tables are generated from.

`import_run` copies, for each scenario in an `eval run --out` directory, what
the docs need into evaluation/results/<scenario>/ and nothing else (no plots,
no results.json, which is large):

- metrics.csv: `eval run`'s own file; a scenario with `repeats` gets one file
  with every seed's rows (the file already has a seed column).
- timing.json: CPU seconds per run; with repeats one file whose keys carry
  the seed's directory (`seed-2/bfcc/10Mbps`), as `tofcc eval list` sums them.
- detail.csv: results.json's per-run detail flattened, one row a run and
  one column a key (`queues.s1->s3.mean_packets`, `flow_steady_mbps.q1`,
  `fct_by_class.small.mean_ms`, ...), and each flow's completion time and
  packet counts (`flows.<name>.fct_ms`); the per-flow keys (PER_FLOW) only
  up to MAX_FLOWS flows a run, so that a fat-tree's hundreds of flows do
  not bloat the tree (their classes are in fct_by_class).
- claims.csv: results.json's claim rows (paper, measured, verdicts).
- repeats.csv: repeats.json's per-flow spread over the seeds, when repeated.
- provenance.json: the commit the run was made at, the command, the date.

`load` reads a scenario's directory back for evaluation/docs_tables.py.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
import statistics
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def checkout_commit(ignore: Sequence[Path] = ()) -> str:
    """This checkout's commit (`-dirty` with uncommitted changes to tracked
    files), as a stored run records the code it was made with; "unknown"
    outside git. Changes under `ignore` do not count: a benchmark that
    appends its runs to a bundled file would otherwise record its second
    run as made from uncommitted code."""
    root = RESULTS_DIR.parent.parent
    git = ["git", "-C", str(root)]
    inside = [p.resolve() for p in ignore if p.resolve().is_relative_to(root)]
    excluded = [f":(exclude){p.relative_to(root)}" for p in inside]
    try:
        name = subprocess.run(
            [*git, "describe", "--always", "--abbrev=12"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no", "--", ".", *excluded],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{name}-dirty" if changed else name


METRICS = "metrics.csv"
TIMING = "timing.json"
DETAIL = "detail.csv"
CLAIMS = "claims.csv"
REPEATS = "repeats.csv"
PROVENANCE = "provenance.json"
# Every file a scenario's results directory may hold; anything else there
# is not ours to keep.
FILES = (METRICS, TIMING, DETAIL, CLAIMS, REPEATS, PROVENANCE)
# Per-flow figures in detail.csv only for runs with at most this many
# flows; past it (a fat-tree's hundreds) only what sums the flows up.
MAX_FLOWS = 64
PER_FLOW = ("flows.", "tcp.", "flow_steady_mbps.", "out_of_order_by_flow.", "fct_by_size.")
FLOW_FIELDS = ("packets_sent", "packets_received", "bytes_received")
CLAIM_FIELDS = (
    "seed",
    "variant",
    "metric",
    "ours",
    "baseline",
    "paper",
    "measured",
    "ours_vs_none",
    "baseline_vs_none",
    "paper_verdict",
    "none_verdict",
    "verdict",
)
REPEAT_STATS = ("mean", "median", "min", "max", "missing", "mean_vs_none_pct")
REPEAT_PAIRED = ("sooner", "later", "ties", "p_value")

Value = float | None
RunKey = tuple[str, str, int | None]  # scheme, variant, seed (None: mean over seeds)


class ResultsError(Exception):
    """A results directory that cannot be read or imported; one line."""


# ---------------------------------------------------------------- import


@dataclass
class _Scenario:
    name: str
    files: dict[str, str] = field(default_factory=dict)


def _seed_dirs(d: Path) -> list[Path] | None:
    """The directories holding one seed's output each, or None when `d` is
    not (or not yet wholly) a scenario's output."""
    seeds = sorted(d.glob("seed-*/"), key=lambda p: int(re.sub(r"\D", "", p.name) or 0))
    if seeds and not (d / "repeats.json").is_file():
        return None  # written once every seed has run
    dirs = seeds or [d]
    needed = (METRICS, TIMING, "results.json")
    if all((s / f).is_file() for s in dirs for f in needed):
        return dirs
    return None


def _csv_text(header: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(list(header))
    w.writerows(rows)
    return buf.getvalue()


def _num(x: object) -> str:
    if x is None:
        return ""
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int | float):
        return format(float(x), ".10g")
    return str(x)


def _flatten(prefix: str, x: object) -> Iterator[tuple[str, object]]:
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _flatten(f"{prefix}.{k}" if prefix else str(k), v)
    elif x is None or isinstance(x, int | float):
        yield prefix, x


def _detail(run: dict[str, Any]) -> dict[str, str]:
    """One run's detail as key -> value."""
    flows = run.get("flows", [])
    few = len(flows) <= MAX_FLOWS
    out = {
        k: _num(v)
        for k, v in _flatten("", run.get("detail", {}))
        if not k.endswith(".samples") and (few or not k.startswith(PER_FLOW))
    }
    if few:
        for f in flows:
            fct = f.get("fct_ns")
            out[f"flows.{f['name']}.fct_ms"] = _num(None if fct is None else fct / 1e6)
            out.update({f"flows.{f['name']}.{n}": _num(f[n]) for n in FLOW_FIELDS if n in f})
    return out


def _detail_text(runs: list[dict[str, Any]]) -> str:
    """One row a run, one column a key (the union over the runs, sorted): a
    key's name is written once, where a row a value would repeat it."""
    details = [_detail(r) for r in runs]
    keys = sorted({k for d in details for k in d})
    rows = [
        [str(r["scheme"]), str(r["variant"]), str(r["seed"]), *(d.get(k, "") for k in keys)]
        for r, d in zip(runs, details, strict=True)
    ]
    return _csv_text(("scheme", "variant", "seed", *keys), rows)


def _paper(p: object) -> str:
    if isinstance(p, list | tuple):
        return " ".join(_num(x) for x in p)
    return _num(p)


def _claim_rows(seed: int, claims: list[dict[str, Any]]) -> Iterator[list[str]]:
    for c in claims:
        yield [
            str(seed),
            str(c["variant"]),
            str(c["metric"]),
            str(c["ours"]),
            str(c["baseline"]),
            _paper(c["paper"]),
            _num(c["measured"]),
            _num(c["ours_vs_none"]),
            _num(c["baseline_vs_none"]),
            str(c["paper_verdict"]),
            str(c["none_verdict"]),
            str(c["verdict"]),
        ]


def _repeat_rows(data: dict[str, Any]) -> Iterator[list[str]]:
    for r in data.get("fct_ms", []):
        paired = r.get("vs_none_same_seed") or {}
        yield [
            str(r["scheme"]),
            str(r["variant"]),
            str(r["name"]),
            *(_num(r.get(s)) for s in REPEAT_STATS),
            *(_num(paired.get(s)) for s in REPEAT_PAIRED),
        ]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: not readable JSON ({exc})") from exc


def _metrics_text(dirs: list[Path]) -> str:
    header: list[str] | None = None
    rows: list[list[str]] = []
    for d in dirs:
        with (d / METRICS).open(newline="") as f:
            r = list(csv.reader(f))
        if not r:
            raise ResultsError(f"{d / METRICS}: empty")
        if header is not None and r[0] != header:
            raise ResultsError(f"{d / METRICS}: columns differ from {dirs[0] / METRICS}'s")
        header = r[0]
        rows += r[1:]
    return _csv_text(header or [], rows)


def _timing_text(dirs: list[Path], root: Path) -> str:
    timed: dict[str, float] = {}
    for d in dirs:
        prefix = "" if d == root else f"{d.name}/"
        data = _read_json(d / TIMING)
        if not isinstance(data, dict):
            raise ResultsError(f"{d / TIMING}: not an object of run: seconds")
        timed.update({prefix + str(k): float(v) for k, v in data.items()})
    return json.dumps(timed, indent=2, sort_keys=True) + "\n"


def _collect(d: Path, dirs: list[Path], provenance: dict[str, str]) -> _Scenario:
    s = _Scenario(d.name)
    s.files[METRICS] = _metrics_text(dirs)
    s.files[TIMING] = _timing_text(dirs, d)
    runs: list[dict[str, Any]] = []
    claims: list[list[str]] = []
    seeds: list[int] = []
    for sd in dirs:
        res = _read_json(sd / "results.json")
        seed = int(res.get("seed", 0))
        seeds.append(seed)
        runs += res.get("runs", [])
        claims += _claim_rows(seed, res.get("claims", []))
    s.files[DETAIL] = _detail_text(runs)
    if claims:
        s.files[CLAIMS] = _csv_text(CLAIM_FIELDS, claims)
    if (d / "repeats.json").is_file():
        rows = list(_repeat_rows(_read_json(d / "repeats.json")))
        s.files[REPEATS] = _csv_text(
            ("scheme", "variant", "flow", *REPEAT_STATS, *REPEAT_PAIRED), rows
        )
    mtime = max((sd / METRICS).stat().st_mtime for sd in dirs)
    made = datetime.datetime.fromtimestamp(mtime, datetime.UTC).strftime("%Y-%m-%d")
    prov = {
        "commit": provenance["commit"],
        "command": provenance["command"].format(scenario=d.name),
        "date": made,
        "seeds": seeds,
    }
    s.files[PROVENANCE] = json.dumps(prov, indent=2) + "\n"
    return s


def import_run(
    src: Path, dest_root: Path, *, commit: str, command: str, only: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """Copy what the docs need of every finished scenario under `src` into
    `dest_root/<scenario>/`; returns (imported, skipped as incomplete).
    Everything is read before anything is written."""
    if not src.is_dir():
        raise ResultsError(f"{src}: not a directory")
    wanted = set(only)
    found: list[_Scenario] = []
    skipped: list[str] = []
    for d in sorted(p for p in src.iterdir() if p.is_dir()):
        if wanted and d.name not in wanted:
            continue
        dirs = _seed_dirs(d)
        if dirs is None:
            if any(d.glob("*.csv")) or any(d.glob("seed-*")) or any(d.glob("*.png")):
                skipped.append(d.name)
            continue
        found.append(_collect(d, dirs, {"commit": commit, "command": command}))
    missing = wanted - {s.name for s in found} - set(skipped)
    if missing:
        raise ResultsError(f"{src}: no results for {', '.join(sorted(missing))}")
    for s in found:
        out = dest_root / s.name
        out.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            path = out / name
            if name in s.files:
                if not path.is_file() or path.read_text() != s.files[name]:
                    path.write_text(s.files[name])
            elif path.exists():
                path.unlink()
    return [s.name for s in found], skipped


# ---------------------------------------------------------------- load


def _float(text: str) -> Value:
    if text == "" or text.lower() in ("none", "nan"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _mean(xs: list[Value]) -> Value:
    """Over seeds: a figure missing in any seed (a flow left incomplete) is
    missing from the mean, as repeats.md counts it apart."""
    if not xs or any(x is None for x in xs):
        return None
    return statistics.fmean(x for x in xs if x is not None)


@dataclass
class ScenarioResults:
    name: str
    path: Path
    # In metrics.csv's order; seed None is the mean over the seeds.
    runs: dict[RunKey, dict[str, Value]]
    fields: set[str]
    schemes: list[str]
    variants: list[str]
    seeds: list[int]
    claims: list[dict[str, str]]
    timing: dict[str, float]

    def run(self, scheme: str, variant: str, seed: int | None = None) -> dict[str, Value] | None:
        return self.runs.get((scheme, variant, seed))


def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _runs(path: Path) -> dict[RunKey, dict[str, Value]]:
    runs: dict[RunKey, dict[str, Value]] = {}
    for row in _read_csv(path / METRICS):
        key = (row["scheme"], row["variant"], int(row["seed"] or 0))
        runs[key] = {
            k: _float(v) for k, v in row.items() if k not in ("scenario", "scheme", "variant")
        }
    for row in _read_csv(path / DETAIL):
        key = (row["scheme"], row["variant"], int(row["seed"] or 0))
        if key in runs:
            runs[key].update(
                {k: _float(v) for k, v in row.items() if k not in ("scheme", "variant", "seed")}
            )
    return runs


def _add_means(runs: dict[RunKey, dict[str, Value]], path: Path) -> None:
    by: dict[tuple[str, str], list[dict[str, Value]]] = {}
    for (scheme, variant, _), vals in list(runs.items()):
        by.setdefault((scheme, variant), []).append(vals)
    for (scheme, variant), seeds in by.items():
        keys = dict.fromkeys(k for s in seeds for k in s)
        runs[(scheme, variant, None)] = {k: _mean([s.get(k) for s in seeds]) for k in keys}
    for row in _read_csv(path / REPEATS):
        mean = runs.get((row["scheme"], row["variant"], None))
        if mean is not None:
            for stat in (*REPEAT_STATS, *REPEAT_PAIRED):
                mean[f"repeats.{row['flow']}.{stat}"] = _float(row[stat])


def load(name: str, root: Path = RESULTS_DIR) -> ScenarioResults:
    path = root / name
    if not (path / METRICS).is_file():
        raise ResultsError(f"no results for scenario {name!r} ({path / METRICS} missing)")
    runs = _runs(path)
    _add_means(runs, path)
    timing = _read_json(path / TIMING) if (path / TIMING).is_file() else {}
    keys = [k for k in runs if k[2] is not None]
    return ScenarioResults(
        name=name,
        path=path,
        runs=runs,
        fields={f for vals in runs.values() for f in vals},
        schemes=list(dict.fromkeys(k[0] for k in keys)),
        variants=list(dict.fromkeys(k[1] for k in keys)),
        seeds=sorted({k[2] for k in keys if k[2] is not None}),
        claims=_read_csv(path / CLAIMS),
        timing={str(k): float(v) for k, v in timing.items()},
    )


def scenarios(root: Path = RESULTS_DIR) -> list[str]:
    return sorted(p.parent.name for p in root.glob(f"*/{METRICS}"))
