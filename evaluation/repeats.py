# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A repeated scenario's summary: every seed's report, read back and put side by side.

One run of a scenario is one draw wherever chance decides the outcome. On
a shallow buffer a TCP flow that loses most of a window in slow start waits
out ns-3's 200 ms minimum retransmission timeout, and which flow that is
can hang on when the flows started, to the microsecond. A scenario with
`repeats` runs once per seed (`start_jitter_us` moves the starts), each
seed gets its own report, and this module reads those reports'
results.json back into one table per flow and per monitored queue: the
spread over seeds, each flow's mean against `none`'s, and the same flow
against `none` draw by draw (Wilcoxon's signed-rank test), because with
FCTs of 34 or 203 ms one timeout more or less moves a mean on its own.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy.stats import wilcoxon

from bfrt_controller import paths

from .scenario import NO_CONTROL

SUMMARY_MD = "repeats.md"
SUMMARY_JSON = "repeats.json"


@dataclass(frozen=True)
class Spread:
    """Values over seeds, by seed; `missing`: seeds that gave none (a flow left incomplete)."""

    by_seed: dict[int, float]
    missing: int = 0

    @property
    def values(self) -> tuple[float, ...]:
        return tuple(self.by_seed[k] for k in sorted(self.by_seed))

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.values) if self.values else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "median": self.median,
            "min": min(self.values, default=None),
            "max": max(self.values, default=None),
            "missing": self.missing,
            "values": list(self.values),
        }


@dataclass(frozen=True)
class Paired:
    """One flow under a scheme against `none`, seed by seed (the same start
    draws): how often it finished sooner or later, and Wilcoxon's signed-rank
    p-value for "no difference" (None below 2 differing seeds)."""

    sooner: int
    later: int
    ties: int
    p_value: float | None


Key = tuple[str, str]  # (variant, scheme)


@dataclass(frozen=True)
class Summary:
    seeds: tuple[int, ...]
    # (variant, scheme) -> flow name -> FCT in ms over seeds
    fct_ms: dict[Key, dict[str, Spread]]
    # (variant, scheme) -> monitored port -> mean and max-after-start-up depth in packets
    queue_mean_packets: dict[Key, dict[str, Spread]]
    queue_max_after_startup_packets: dict[Key, dict[str, Spread]]
    drops_overflow: dict[Key, Spread]

    def _with_none(self, key: Key, flow: str) -> tuple[Spread, Spread] | None:
        """(ours, `none`'s) FCT spread of a flow at the same rate, if both ran."""
        base = self.fct_ms.get((key[0], NO_CONTROL), {}).get(flow)
        ours = self.fct_ms[key].get(flow)
        return None if base is None or ours is None else (ours, base)

    def change_vs_none_pct(self, key: Key, flow: str) -> float | None:
        """A flow's mean FCT against `none`'s at the same rate, in percent;
        None when either left it incomplete in some seed (the means would
        not be of the same runs)."""
        pair = self._with_none(key, flow)
        if pair is None or pair[0].missing or pair[1].missing:
            return None
        ours, base = pair
        if ours.mean is None or not base.mean:
            return None
        return 100.0 * (ours.mean - base.mean) / base.mean

    def paired_vs_none(self, key: Key, flow: str) -> Paired | None:
        """Seed by seed against `none` over the seeds where both completed it."""
        pair = self._with_none(key, flow)
        if pair is None or key[1] == NO_CONTROL:
            return None
        ours, base = pair
        both = sorted(set(base.by_seed) & set(ours.by_seed))
        diffs = [ours.by_seed[k] - base.by_seed[k] for k in both]
        nonzero = [d for d in diffs if d]
        p = float(wilcoxon(nonzero).pvalue) if len(nonzero) >= 2 else None
        return Paired(
            sooner=sum(d < 0 for d in diffs),
            later=sum(d > 0 for d in diffs),
            ties=sum(d == 0 for d in diffs),
            p_value=p,
        )


def summarise(runs: Iterable[dict[str, Any]]) -> Summary:
    """`runs`: the "runs" entries of every seed's results.json."""
    fct: dict[Key, dict[str, dict[int, float]]] = {}
    missing: dict[Key, dict[str, int]] = {}
    qmean: dict[Key, dict[str, dict[int, float]]] = {}
    qmax: dict[Key, dict[str, dict[int, float]]] = {}
    drops: dict[Key, dict[int, float]] = {}
    seeds: set[int] = set()
    for r in runs:
        key = (str(r["variant"]), str(r["scheme"]))
        seed = int(r["seed"])
        if seed in drops.get(key, {}):
            raise ValueError(f"seed {seed} of {key[1]} {key[0]} appears twice")
        seeds.add(seed)
        for f in r["flows"]:
            name = str(f["name"])
            fct.setdefault(key, {}).setdefault(name, {})
            missing.setdefault(key, {}).setdefault(name, 0)
            if f["fct_ns"] is None:
                missing[key][name] += 1
            else:
                fct[key][name][seed] = f["fct_ns"] / 1e6
        for port, q in r["detail"].get("queues", {}).items():
            qmean.setdefault(key, {}).setdefault(port, {})[seed] = float(q["mean_packets"])
            qmax.setdefault(key, {}).setdefault(port, {})[seed] = float(
                q["max_after_startup_packets"]
            )
        drops.setdefault(key, {})[seed] = float(r["metrics"]["drops_overflow"])

    def spreads(d: dict[Key, dict[str, dict[int, float]]]) -> dict[Key, dict[str, Spread]]:
        return {k: {n: Spread(v) for n, v in by.items()} for k, by in d.items()}

    return Summary(
        seeds=tuple(sorted(seeds)),
        fct_ms={k: {n: Spread(v, missing[k][n]) for n, v in by.items()} for k, by in fct.items()},
        queue_mean_packets=spreads(qmean),
        queue_max_after_startup_packets=spreads(qmax),
        drops_overflow={k: Spread(v) for k, v in drops.items()},
    )


def _f(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1f} %"


def markdown(name: str, s: Summary) -> str:
    n = len(s.seeds)
    lines = [
        f"# {name}: {n} seeds ({s.seeds[0]}-{s.seeds[-1]})" if n else f"# {name}: no runs",
        "",
        "Each seed's own report is in seed-<n>/. Spread over the seeds; a flow left",
        "incomplete in a seed counts under `incomplete`, not in its FCT figures.",
        "",
        "## Flow completion time (ms)",
        "",
        "| variant | scheme | flow | mean | median | min | max | incomplete | mean vs none "
        "| sooner / later than none, same seed | p (Wilcoxon) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, by_flow in s.fct_ms.items():
        for flow, sp in by_flow.items():
            d = sp.as_dict()
            pair = s.paired_vs_none(key, flow)
            lines.append(
                f"| {key[0] or '—'} | {key[1]} | {flow} | {_f(d['mean'])} | {_f(d['median'])} | "
                f"{_f(d['min'])} | {_f(d['max'])} | {sp.missing} | "
                f"{_pct(s.change_vs_none_pct(key, flow))} | "
                + (
                    "— | — |"
                    if pair is None
                    else f"{pair.sooner} / {pair.later} | {_f(pair.p_value, 3)} |"
                )
            )
    lines += [
        "",
        "## Monitored queues (packets)",
        "",
        "| variant | scheme | port | mean (mean over seeds) | max after start-up: mean | "
        "highest | drops, all (mean) |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, by_port in s.queue_mean_packets.items():
        for port, sp in by_port.items():
            mx = s.queue_max_after_startup_packets[key][port]
            lines.append(
                f"| {key[0] or '—'} | {key[1]} | {port} | {_f(sp.mean)} | {_f(mx.mean)} | "
                f"{_f(max(mx.values, default=None), 0)} | {_f(s.drops_overflow[key].mean)} |"
            )
    return "\n".join(lines) + "\n"


def as_json(name: str, s: Summary) -> dict[str, Any]:
    def table(d: dict[Key, dict[str, Spread]]) -> list[dict[str, Any]]:
        return [
            {"variant": k[0], "scheme": k[1], "name": n, **sp.as_dict()}
            for k, by in d.items()
            for n, sp in by.items()
        ]

    fct_rows = table(s.fct_ms)
    for row in fct_rows:
        key = (row["variant"], row["scheme"])
        row["mean_vs_none_pct"] = s.change_vs_none_pct(key, row["name"])
        pair = s.paired_vs_none(key, row["name"])
        row["vs_none_same_seed"] = None if pair is None else dataclasses.asdict(pair)
    return {
        "scenario": name,
        "seeds": list(s.seeds),
        "fct_ms": fct_rows,
        "queue_mean_packets": table(s.queue_mean_packets),
        "queue_max_after_startup_packets": table(s.queue_max_after_startup_packets),
        "drops_overflow": [
            {"variant": k[0], "scheme": k[1], **sp.as_dict()} for k, sp in s.drops_overflow.items()
        ],
    }


def write_summary(name: str, seed_dirs: list[Path], out_dir: Path) -> Path:
    """Reads each seed's results.json and writes repeats.md and repeats.json
    to `out_dir`; returns the markdown's path."""
    runs: list[dict[str, Any]] = []
    for d in seed_dirs:
        runs += json.loads((d / "results.json").read_text())["runs"]
    s = summarise(runs)
    paths.replace_file(
        out_dir / SUMMARY_JSON, (json.dumps(as_json(name, s), indent=2) + "\n").encode()
    )
    md = out_dir / SUMMARY_MD
    paths.replace_file(md, markdown(name, s).encode())
    return md
