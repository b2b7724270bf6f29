# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A scenario's runs written out: CSV, JSON, PNG plots and a markdown report
that sets each of the paper's headline figures beside ours.

`results.json` holds only what the simulation determines, so two runs with
the same seed write the same bytes; wall-clock times go to `timing.json`.
"""

from __future__ import annotations

import csv
import dataclasses
import io
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

from bfrt_controller import paths

from .metrics import HEADLINE, Metrics, compute_metrics, relative_change_pct
from .records import RunResult
from .scenario import NO_CONTROL, Claim, Scenario


@dataclass(frozen=True)
class ClaimRow:
    metric: str
    ours: str
    baseline: str
    variant: str  # a link rate, "" without a sweep, "all" for the mean over a sweep
    paper: float | tuple[float, float]
    measured: float | None
    # The verdict to read: the paper comparison, unless ours is no better
    # than (or worse than) `none` on this metric, which then comes first.
    verdict: str
    source: str
    paper_verdict: str = ""
    # Percent change of ours, and of the baseline, against `none`.
    ours_vs_none: float | None = None
    baseline_vs_none: float | None = None
    none_verdict: str = ""


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


# Within this many percent of `none` on a claim's metric, a mechanism has
# not shown that it does anything there.
NONE_TOLERANCE_PCT = 5.0
NO_NONE_RUN = "no none run to compare"


def claim_direction(paper: float | tuple[float, float]) -> float:
    """-1 when the paper claims ours is lower, +1 higher, 0 when it does not say."""
    mid = (paper[0] + paper[1]) / 2 if isinstance(paper, tuple) else paper
    return 0.0 if mid == 0 else math.copysign(1.0, mid)


def none_verdict(change_pct: float | None, direction: float, have_none: bool = True) -> str:
    """Ours against `none` on the claim's metric, in the claim's direction."""
    if not have_none:
        return NO_NONE_RUN
    if change_pct is None or math.isnan(change_pct):
        return "not measured against none"
    if abs(change_pct) <= NONE_TOLERANCE_PCT:
        return "no better than none"
    if direction == 0:
        return "differs from none"
    return "better than none" if change_pct * direction > 0 else "worse than none"


def combined_verdict(paper_verdict: str, against_none: str) -> str:
    if against_none in ("no better than none", "worse than none"):
        return f"{against_none} (vs paper: {paper_verdict})"
    if against_none == "better than none":
        return paper_verdict
    return f"{paper_verdict}; {against_none}"


def _in_order(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _variants(runs: list[RunResult]) -> list[str]:
    return _in_order([r.variant for r in runs])


def _schemes(runs: list[RunResult]) -> list[str]:
    return _in_order([r.scheme for r in runs])


def _mean(xs: list[float | None]) -> float | None:
    known = [x for x in xs if x is not None]
    return sum(known) / len(known) if xs and len(known) == len(xs) else None


def claim_rows(
    claims: list[Claim], metrics: dict[tuple[str, str], Metrics], variants: list[str]
) -> list[ClaimRow]:
    rows = []
    have_none = any(scheme == NO_CONTROL for scheme, _ in metrics)

    def change(a: str, b: str, metric: str, v: str) -> float | None:
        x, y = metrics.get((a, v)), metrics.get((b, v))
        if x is None or y is None:
            return None
        return relative_change_pct(x.values.get(metric), y.values.get(metric))

    def row(c: Claim, base: str, paper_v: Any, v: str, m: Any, on: Any, bn: Any) -> ClaimRow:
        pv = verdict(m, paper_v)
        nv = none_verdict(on, claim_direction(paper_v), have_none)
        return ClaimRow(
            c.metric,
            c.ours,
            base,
            v,
            paper_v,
            m,
            combined_verdict(pv, nv),
            c.source,
            pv,
            on,
            bn,
            nv,
        )

    for c in claims:
        for base, paper in c.paper.items():
            paper_v: float | tuple[float, float] = (
                (float(paper[0]), float(paper[1])) if isinstance(paper, tuple) else float(paper)
            )
            changes, ours_none, base_none = [], [], []
            for v in variants:
                m = change(c.ours, base, c.metric, v)
                on = change(c.ours, NO_CONTROL, c.metric, v)
                bn = change(base, NO_CONTROL, c.metric, v)
                changes.append(m)
                ours_none.append(on)
                base_none.append(bn)
                rows.append(row(c, base, paper_v, v, m, on, bn))
            if len(variants) > 1:
                rows.append(
                    row(c, base, paper_v, "all", _mean(changes), _mean(ours_none), _mean(base_none))
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
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    paths.replace_file(path, png.getvalue())
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

    measured_fct = [
        m.values.get("fct_mean_ms") for m in metrics.values() if m.values.get("fct_mean_ms")
    ]
    if measured_fct:
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


# The metrics every scheme is set against `none` on, besides the claims'.
AGAINST_NONE = (
    ("queue mean", "queue_mean_packets"),
    ("queue max after start-up", "queue_max_after_startup_packets"),
    ("RTT mean", "rtt_mean_ms"),
    ("tput", "throughput_mean_mbps"),
    ("FCT mean", "fct_mean_ms"),
)


def _fct_cell(m: dict[str, float | None], key: str) -> str:
    x = m.get(key)
    incomplete, sized = m.get("incomplete_flows"), m.get("sized_flows")
    if x is None and incomplete:
        return f"not measured ({incomplete:.0f} of {sized or 0:.0f} incomplete)"
    return _fmt(x, 1)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1f} %"


def _tcp_table(runs: list[RunResult], metrics: dict[tuple[str, str], Metrics]) -> list[str]:
    lines = [
        "## TCP flows",
        "",
        "| scheme | variant | flow | cc | ECN | segments sent | retransmissions | "
        "ECN-Echo ACKs | RTT mean (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        for name, t in metrics[(r.scheme, r.variant)].detail.get("tcp", {}).items():
            lines.append(
                f"| {r.scheme} | {r.variant or '—'} | {name} | {t['cc']} | "
                f"{'on' if t['ecn'] else 'off'} | {t['segments_sent']} | "
                f"{t['retransmissions']} | {t['ece_acks']} | {_fmt(t['rtt_mean_ms'], 2)} |"
            )
    lines += [
        "",
        "Drops of data segments: passive (a full buffer) and active (the scheme's own: "
        "an AQM's early drops, CoDel's after dequeue):",
        "",
        "| scheme | variant | passive | active |",
        "|---|---|---|---|",
    ]
    for r in runs:
        lines.append(f"| {r.scheme} | {r.variant or '—'} | {r.drops_overflow} | {r.drops_active} |")
    lines.append("")
    return lines


def _markdown(
    s: Scenario,
    runs: list[RunResult],
    metrics: dict[tuple[str, str], Metrics],
    rows: list[ClaimRow],
) -> str:
    startup_s = s.startup_s if s.startup_s is not None else s.trim * s.duration_s
    lines = [
        f"# {s.name}",
        "",
        s.description,
        "",
        f"Seed {s.seed}, {s.duration_s:g} s simulated, buffer {s.buffer_packets} packets "
        f"per port, start-up {startup_s:g} s.",
        "",
    ]
    cols = [
        ("queue mean", "queue_mean_packets", 1),
        ("queue max", "queue_max_packets", 0),
        (f"queue max after {startup_s:g} s", "queue_max_after_startup_packets", 0),
        ("drops at port", "queue_drops", 0),
        ("drops, all", "drops_overflow", 0),
        ("RTT mean (ms)", "rtt_mean_ms", 2),
        ("tput (Mb/s)", "throughput_mean_mbps", 2),
        ("tput CV", "throughput_cv", 3),
        ("FCT mean (ms)", "fct_mean_ms", 1),
        ("FCT p99 (ms)", "fct_p99_ms", 1),
        ("Jain", "jain_fairness", 3),
        ("loss", "loss_rate", 3),
        ("small-flow loss %", "small_flow_loss_pct", 2),
        ("large-flow loss %", "large_flow_loss_pct", 2),
        ("sketch drops", "sketch_drops", 0),
        ("feedback", "feedback_sent", 0),
        ("recirc. overhead", "recirculation_overhead", 3),
        ("recirc. drops", "recirculation_drops", 0),
        ("out of order", "out_of_order", 0),
        ("PFC pauses", "pfc_pauses_sent", 0),
    ]
    lines.append("| scheme | variant | " + " | ".join(c[0] for c in cols) + " |")
    lines.append("|---|---|" + "---|" * len(cols))
    for r in runs:
        m = metrics[(r.scheme, r.variant)].values
        cells = [
            _fct_cell(m, key) if key.startswith("fct_") else _fmt(m.get(key), d)
            for _, key, d in cols
        ]
        lines.append(f"| {r.scheme} | {r.variant or '—'} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Queue: depth (packets) each arriving packet saw at the first monitored port, "
        f"over the whole run and after the first {startup_s:g} s; 'drops at port': data "
        "packets that port's full buffer refused, 'drops, all': at every port. "
        "RTT: 2 x one-way delay (the paper's estimate). Throughput: steady-state bins, "
        f"{s.trim:.0%} trimmed at each end. FCT: not measured when any flow did not "
        "complete. Loss: data packets sent but never delivered; small-/large-flow loss: "
        "the same in percent over the flows offering the scenario's lowest and highest "
        "rate. Sketch drops: packets S-PIE dropped as large flows. Recirc. drops: frames "
        "a full recirculation port refused (BFCC: fakes' originals, lost data). Out of "
        "order: data packets delivered after one their sender sent later. PFC pauses: "
        "XOFF frames the switches sent (refreshes included; per port below).",
        "",
    ]
    if s.transport == "tcp":
        lines[-2:-1] = [
            "Queue: depth (packets) each arriving packet saw at the first monitored port, "
            f"over the whole run and after the first {startup_s:g} s; 'drops at port': data "
            "segments that port's full buffer refused, 'drops, all': at every port. "
            "Hosts run ns-3's TCP (evaluation/tcp.py). RTT: every sample the sender "
            "sockets took. Throughput: goodput (bytes delivered to the receiving "
            f"application), steady-state bins, {s.trim:.0%} trimmed at each end. FCT: "
            "application start to the last byte delivered; not measured when any flow "
            "did not complete. Loss: data segments (retransmissions included) sent but "
            "never received; small-/large-flow loss: the same in percent over the flows "
            "offering the scenario's lowest and highest rate. Sketch drops: packets S-PIE "
            "dropped as large flows."
        ]
        lines += _tcp_table(runs, metrics)
    if any(len(r.queues) > 1 for r in runs):
        lines += [
            "Every monitored port (packets; drops: data packets its full buffer refused):",
            "",
            "| scheme | variant | port | queue mean | queue max | "
            f"queue max after {startup_s:g} s | drops |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in runs:
            for where, q in metrics[(r.scheme, r.variant)].detail["queues"].items():
                lines.append(
                    f"| {r.scheme} | {r.variant or '—'} | {where} | {_fmt(q['mean_packets'], 1)} | "
                    f"{_fmt(q['max_packets'], 0)} | {_fmt(q['max_after_startup_packets'], 0)} | "
                    f"{_fmt(q['drops_overflow'], 0)} |"
                )
        lines.append("")
    if s.workloads:
        lines += [
            "FCT by flow size (seed 004's classes: small < 100 KB, medium, large > 10 MB; "
            "over the flows that completed):",
            "",
            "| scheme | variant | class | flows | completed | FCT mean (ms) | FCT p99 (ms) |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in runs:
            for label, c in metrics[(r.scheme, r.variant)].detail["fct_by_class"].items():
                lines.append(
                    f"| {r.scheme} | {r.variant or '—'} | {label} | {_fmt(c['flows'], 0)} | "
                    f"{_fmt(c['completed'], 0)} | {_fmt(c['mean_ms'], 2)} | "
                    f"{_fmt(c['p99_ms'], 2)} |"
                )
        lines.append("")
    if s.fairness_at_s:
        times = [f"{t:g}" for t in s.fairness_at_s]
        lines += [
            "Jain's index over each flow's bytes delivered from the start to t:",
            "",
            "| scheme | variant | " + " | ".join(f"Jain at {t} s" for t in times) + " |",
            "|---|---|" + "---|" * len(times),
        ]
        for r in runs:
            at = metrics[(r.scheme, r.variant)].detail["jain_at"]
            cells = [_fmt(at.get(t), 3) for t in times]
            lines.append(f"| {r.scheme} | {r.variant or '—'} | " + " | ".join(cells) + " |")
        lines.append("")
    paused = [r for r in runs if r.pfc_pauses_sent or r.pfc_pauses_received]
    if paused:
        lines += [
            "PFC frames per port (sent: by the switch port toward the neighbour; "
            "received: by the port or host the pause stopped):",
            "",
            "| scheme | variant | port | pauses sent | resumes sent | pauses received |",
            "|---|---|---|---|---|---|",
        ]
        for r in paused:
            where = sorted({*r.pfc_pauses_sent, *r.pfc_resumes_sent, *r.pfc_pauses_received})
            for w in where:
                lines.append(
                    f"| {r.scheme} | {r.variant or '—'} | {w} | "
                    f"{r.pfc_pauses_sent.get(w, 0)} | {r.pfc_resumes_sent.get(w, 0)} | "
                    f"{r.pfc_pauses_received.get(w, 0)} |"
                )
        lines.append("")
    others = [r for r in runs if r.scheme != NO_CONTROL]
    if any(r.scheme == NO_CONTROL for r in runs) and others:
        lines += [
            "## Against none",
            "",
            "Change of each scheme relative to `none` (plain forwarding, same buffer, "
            "hosts at their offered rate) in the same run set; within "
            f"{NONE_TOLERANCE_PCT:g} % is no difference.",
            "",
            "| scheme | variant | " + " | ".join(c[0] for c in AGAINST_NONE) + " |",
            "|---|---|" + "---|" * len(AGAINST_NONE),
        ]
        for r in others:
            m = metrics[(r.scheme, r.variant)].values
            n = metrics.get((NO_CONTROL, r.variant))
            cells = [
                _pct(relative_change_pct(m.get(k), n.values.get(k) if n else None))
                for _, k in AGAINST_NONE
            ]
            lines.append(f"| {r.scheme} | {r.variant or '—'} | " + " | ".join(cells) + " |")
        lines.append("")
    elif others:
        lines += ["No `none` run: no scheme here is shown to do better than no control.", ""]
    noted = [r for r in runs if r.notes]
    if noted:
        lines += [
            "## Notes from the controllers",
            "",
            "What each scheme's controller reported about the settings it wrote "
            "(e.g. thresholds beyond what the chip can measure, written as its limit).",
            "",
        ]
        for r in noted:
            lines.append(f"- {r.scheme} {r.variant or ''}".rstrip() + ":")
            lines += [f"  - {n}" for n in r.notes]
        lines.append("")
    if rows:
        lines += [
            "## Against the paper",
            "",
            "Change of ours relative to each baseline, in percent (negative: ours lower), "
            "and of ours and of the baseline relative to `none`. The verdict puts "
            "'no better than none' (within "
            f"{NONE_TOLERANCE_PCT:g} %) or 'worse than none' before the paper comparison.",
            "",
            "| metric | ours vs | variant | paper | measured | ours vs none | "
            "baseline vs none | verdict |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in rows:
            lines.append(
                f"| {row.metric} | {row.ours} vs {row.baseline} | {row.variant or '—'} | "
                f"{_paper(row.paper)} | {_pct(row.measured)} | {_pct(row.ours_vs_none)} | "
                f"{_pct(row.baseline_vs_none)} | {row.verdict} |"
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
    paths.make_dir(out_dir)
    metrics = {(r.scheme, r.variant): compute_metrics(r, scenario) for r in runs}
    rows = claim_rows(scenario.claims, metrics, _variants(runs))

    # Every file through paths.replace_file: a symlink planted in the output
    # directory is replaced, never written through.
    csv_path = out_dir / "metrics.csv"
    with io.StringIO(newline="") as fh:
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
        paths.replace_file(csv_path, fh.getvalue().encode())

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
                "notes": r.notes,
            }
            for r in runs
        ],
        "claims": [dataclasses.asdict(row) for row in rows],
    }
    json_path = out_dir / "results.json"
    paths.replace_file(
        json_path, (json.dumps(_jsonable(results), sort_keys=True, indent=2) + "\n").encode()
    )
    timing_path = out_dir / "timing.json"
    timing = {f"{r.scheme}/{r.variant}" if r.variant else r.scheme: r.wall_s for r in runs}
    paths.replace_file(timing_path, (json.dumps(timing, sort_keys=True, indent=2) + "\n").encode())

    plots = _plots(runs, metrics, out_dir)
    md_path = out_dir / "report.md"
    paths.replace_file(md_path, _markdown(scenario, runs, metrics, rows).encode())
    return ReportPaths(out_dir, csv_path, json_path, timing_path, md_path, plots, rows)
