"""A scenario's runs written out: CSV, JSON, PNG plots and a markdown report
that sets each of the paper's headline figures beside ours.

`results.json` holds only what the simulation determines, so two runs with
the same seed write the same bytes; wall-clock times go to `timing.json`.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and CI
import matplotlib.pyplot as plt
import numpy as np

from .metrics import HEADLINE, Metrics, compute_metrics, relative_change_pct
from .records import RunResult
from .scenario import Claim, Scenario


@dataclass(frozen=True)
class ClaimRow:
    metric: str
    ours: str
    baseline: str
    variant: str  # a link rate, "" without a sweep, "all" for the mean over a sweep
    paper: float | tuple[float, float]
    measured: float | None
    verdict: str
    source: str


@dataclass(frozen=True)
class ReportPaths:
    directory: Path
    csv: Path
    json: Path
    timing: Path
    markdown: Path
    plots: list[Path]
    claims: list[ClaimRow]


def verdict(measured: float | None, paper: float | tuple[float, float]) -> str:
    """Mechanical comparison of our percent change with the paper's."""
    if measured is None or (isinstance(measured, float) and math.isnan(measured)):
        return "not measured"
    if isinstance(paper, tuple):
        lo, hi = sorted(paper)
        if lo <= measured <= hi:
            return "within paper's range"
        direction = -1.0 if hi <= 0 else 1.0 if lo >= 0 else 0.0
        if direction == 0.0:
            return "outside paper's range"
        if measured * direction > max(abs(lo), abs(hi)):
            return "beyond paper's range"
        if measured * direction > 0:
            return "same direction, weaker"
        return "opposite direction"
    if measured == 0 or math.copysign(1, measured) != math.copysign(1, paper):
        return "opposite direction"
    if abs(measured) >= abs(paper):
        return "matches or beats paper"
    if abs(measured) >= 0.5 * abs(paper):
        return "same direction, weaker"
    return "same direction, much weaker"


def _in_order(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _variants(runs: list[RunResult]) -> list[str]:
    return _in_order([r.variant for r in runs])


def _schemes(runs: list[RunResult]) -> list[str]:
    return _in_order([r.scheme for r in runs])


def claim_rows(
    claims: list[Claim], metrics: dict[tuple[str, str], Metrics], variants: list[str]
) -> list[ClaimRow]:
    rows = []
    for c in claims:
        for base, paper in c.paper.items():
            paper_v: float | tuple[float, float] = (
                (float(paper[0]), float(paper[1])) if isinstance(paper, tuple) else float(paper)
            )
            changes = []
            for v in variants:
                ours = metrics.get((c.ours, v))
                theirs = metrics.get((base, v))
                m = (
                    relative_change_pct(ours.values.get(c.metric), theirs.values.get(c.metric))
                    if ours is not None and theirs is not None
                    else None
                )
                changes.append(m)
                rows.append(
                    ClaimRow(c.metric, c.ours, base, v, paper_v, m, verdict(m, paper_v), c.source)
                )
            if len(variants) > 1:
                known = [m for m in changes if m is not None]
                mean = sum(known) / len(known) if len(known) == len(changes) else None
                rows.append(
                    ClaimRow(
                        c.metric,
                        c.ours,
                        base,
                        "all",
                        paper_v,
                        mean,
                        verdict(mean, paper_v),
                        c.source,
                    )
                )
    return rows


def _fmt(x: float | None, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def _paper(p: float | tuple[float, float]) -> str:
    if isinstance(p, tuple):
        return f"{p[0]:+g} … {p[1]:+g} %"
    return f"{p:+g} %"


def _suffix(variant: str) -> str:
    return "" if not variant else "_" + re.sub(r"[^A-Za-z0-9_.-]", "_", variant)


def _save(fig: Any, path: Path) -> Path:
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def _plots(runs: list[RunResult], metrics: dict[tuple[str, str], Metrics], out: Path) -> list[Path]:
    paths = []
    for v in _variants(runs):
        these = [r for r in runs if r.variant == v]
        label = f" ({v})" if v else ""
        monitored = [r for r in these if r.queues and r.queues[0].depth_packets]
        if monitored:
            fig, ax = plt.subplots(figsize=(7, 4))
            for r in monitored:
                d = np.sort(np.asarray(r.queues[0].depth_packets))
                ax.plot(d, np.arange(1, len(d) + 1) / len(d), label=r.scheme)
            ax.set_xlabel(f"queue depth at {monitored[0].queues[0].where} (packets)")
            ax.set_ylabel("CDF")
            ax.set_title(f"Queue depth seen by arriving packets{label}")
            ax.legend()
            paths.append(_save(fig, out / f"queue_cdf{_suffix(v)}.png"))

            fig, ax = plt.subplots(figsize=(7, 4))
            for r in monitored:
                q = r.queues[0]
                ax.plot(np.asarray(q.t_ns) / 1e9, q.depth_packets, label=r.scheme, lw=0.7)
            ax.set_xlabel("time (s)")
            ax.set_ylabel("queue depth (packets)")
            ax.set_title(f"Queue at {monitored[0].queues[0].where}{label}")
            ax.legend()
            paths.append(_save(fig, out / f"queue_time{_suffix(v)}.png"))

        receivers = sorted({f.dst for r in these for f in r.flows})
        fig, axes = plt.subplots(len(receivers), 1, figsize=(7, 3 * len(receivers)), squeeze=False)
        for ax, rx in zip(axes[:, 0], receivers, strict=True):
            for r in these:
                s = metrics[(r.scheme, v)].series
                if s is not None and rx in s.by_receiver:
                    ax.step(s.bin_starts_s, s.by_receiver[rx], where="post", label=r.scheme)
            ax.set_ylabel("throughput (Mb/s)")
            ax.set_title(f"Delivered to {rx}{label}")
            ax.legend()
        axes[-1, 0].set_xlabel("time (s)")
        paths.append(_save(fig, out / f"throughput{_suffix(v)}.png"))

        with_packets = [r for r in these if len(r.packets)]
        if with_packets:
            fig, ax = plt.subplots(figsize=(7, 4))
            for r in with_packets:
                rtt = np.sort(
                    2 * (np.asarray(r.packets.recv_ns) - np.asarray(r.packets.sent_ns)) / 1e6
                )
                ax.plot(rtt, np.arange(1, len(rtt) + 1) / len(rtt), label=r.scheme)
            ax.set_xlabel("RTT = 2 x one-way delay (ms)")
            ax.set_ylabel("CDF")
            ax.set_title(f"Packet RTT{label}")
            ax.legend()
            paths.append(_save(fig, out / f"rtt_cdf{_suffix(v)}.png"))

    if any(f.size_bytes is not None for r in runs for f in r.flows):
        variants, schemes = _variants(runs), _schemes(runs)
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(schemes)
        for j, scheme in enumerate(schemes):
            ys = []
            for v in variants:
                m = metrics.get((scheme, v))
                y = m.values.get("fct_mean_ms") if m is not None else None
                ys.append(np.nan if y is None else y)
            ax.bar(np.arange(len(variants)) + j * width, ys, width, label=scheme)
        ax.set_xticks(np.arange(len(variants)) + width * (len(schemes) - 1) / 2)
        ax.set_xticklabels([v or "run" for v in variants])
        ax.set_ylabel("mean FCT (ms)")
        ax.set_yscale("log")
        ax.set_title("Flow completion time")
        ax.legend()
        paths.append(_save(fig, out / "fct.png"))
    return paths


def _markdown(
    s: Scenario,
    runs: list[RunResult],
    metrics: dict[tuple[str, str], Metrics],
    rows: list[ClaimRow],
) -> str:
    lines = [
        f"# {s.name}",
        "",
        s.description,
        "",
        f"Seed {s.seed}, {s.duration_s:g} s simulated.",
        "",
    ]
    cols = [
        ("queue mean", "queue_mean_packets", 1),
        ("queue max", "queue_max_packets", 0),
        ("queue max, steady", "queue_max_steady_packets", 0),
        ("RTT mean (ms)", "rtt_mean_ms", 2),
        ("tput (Mb/s)", "throughput_mean_mbps", 2),
        ("tput CV", "throughput_cv", 3),
        ("FCT mean (ms)", "fct_mean_ms", 1),
        ("FCT p99 (ms)", "fct_p99_ms", 1),
        ("Jain", "jain_fairness", 3),
        ("loss", "loss_rate", 3),
        ("feedback", "feedback_sent", 0),
        ("recirc. overhead", "recirculation_overhead", 3),
    ]
    lines.append("| scheme | variant | " + " | ".join(c[0] for c in cols) + " |")
    lines.append("|---|---|" + "---|" * len(cols))
    for r in runs:
        m = metrics[(r.scheme, r.variant)].values
        cells = [_fmt(m.get(key), d) for _, key, d in cols]
        lines.append(f"| {r.scheme} | {r.variant or '—'} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Queue: depth (packets) each arriving packet saw at the first monitored port; "
        "'steady' leaves out the same start and end as throughput. "
        "RTT: 2 x one-way delay (the paper's estimate). Throughput: steady-state bins, "
        f"{s.trim:.0%} trimmed at each end. Loss: data packets sent but never delivered.",
        "",
    ]
    if rows:
        lines += [
            "## Against the paper",
            "",
            "Change of ours relative to each baseline, in percent (negative: ours lower).",
            "",
            "| metric | ours vs | variant | paper | measured | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for row in rows:
            lines.append(
                f"| {row.metric} | {row.ours} vs {row.baseline} | {row.variant or '—'} | "
                f"{_paper(row.paper)} | {_fmt(row.measured, 1)}"
                f"{'' if row.measured is None else ' %'} | {row.verdict} |"
            )
        lines.append("")
        for src in dict.fromkeys(row.source for row in rows if row.source):
            lines.append(f"- Paper: {src}")
        lines.append("")
    return "\n".join(lines)


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    return x


def write_report(scenario: Scenario, runs: list[RunResult], out_dir: Path) -> ReportPaths:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    metrics = {(r.scheme, r.variant): compute_metrics(r, scenario) for r in runs}
    rows = claim_rows(scenario.claims, metrics, _variants(runs))

    csv_path = out_dir / "metrics.csv"
    with csv_path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["scenario", "scheme", "variant", "seed", *HEADLINE])
        for r in runs:
            h = metrics[(r.scheme, r.variant)].headline()
            w.writerow(
                [
                    r.scenario,
                    r.scheme,
                    r.variant,
                    r.seed,
                    *("" if h[k] is None else h[k] for k in HEADLINE),
                ]
            )

    results = {
        "scenario": scenario.name,
        "seed": scenario.seed,
        "runs": [
            {
                "scheme": r.scheme,
                "variant": r.variant,
                "seed": r.seed,
                "duration_ns": r.duration_ns,
                "metrics": metrics[(r.scheme, r.variant)].headline(),
                "detail": metrics[(r.scheme, r.variant)].detail,
                "flows": [dict(dataclasses.asdict(f), fct_ns=f.fct_ns) for f in r.flows],
            }
            for r in runs
        ],
        "claims": [dataclasses.asdict(row) for row in rows],
    }
    json_path = out_dir / "results.json"
    json_path.write_text(json.dumps(_jsonable(results), sort_keys=True, indent=2) + "\n")
    timing_path = out_dir / "timing.json"
    timing = {f"{r.scheme}/{r.variant}" if r.variant else r.scheme: r.wall_s for r in runs}
    timing_path.write_text(json.dumps(timing, sort_keys=True, indent=2) + "\n")

    plots = _plots(runs, metrics, out_dir)
    md_path = out_dir / "report.md"
    md_path.write_text(_markdown(scenario, runs, metrics, rows))
    return ReportPaths(out_dir, csv_path, json_path, timing_path, md_path, plots, rows)
