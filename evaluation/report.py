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
from matplotlib.figure import Figure

from bfrt_controller import paths

from .metrics import HEADLINE, Metrics, Series, compute_metrics, relative_change_pct
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


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting r2 before r10: runs of digits compare as numbers."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", name) if p)


# One small multiple, in inches; a figure grows by whole panels, so every
# panel keeps a readable size whatever the number of receivers or schemes.
PANEL_WIDTH_IN = 3.4
PANEL_HEIGHT_IN = 2.1
# Room for the figure's title, legend and axis labels around the panels.
FRAME_IN = 1.2


def grid_shape(n: int, max_cols: int = 4) -> tuple[int, int]:
    """(rows, columns) for n panels: up to max_cols across, more past
    max_cols**2 panels so that the figure stays about square."""
    cols = max(min(n, max_cols), math.ceil(math.sqrt(n)))
    return math.ceil(n / cols), cols


def _panels(
    n: int, max_cols: int, title: str, xlabel: str, ylabel: str
) -> tuple[Figure, list[Any]]:
    """A grid of n panels on shared axes (one scale to compare them by),
    laid out by matplotlib's constrained layout so no title overlaps a
    neighbour; the grid's spare cells are removed."""
    rows, cols = grid_shape(n, max_cols)
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(max(PANEL_WIDTH_IN * cols, 6.0), PANEL_HEIGHT_IN * rows + FRAME_IN),
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    flat = list(axes.flat)
    for ax in flat[n:]:
        fig.delaxes(ax)
    fig.suptitle(title)
    fig.supxlabel(xlabel)
    fig.supylabel(ylabel)
    return fig, flat[:n]


def _legend(fig: Figure, handles: dict[str, Any]) -> None:
    """One legend for the whole figure, right of the panels (per-panel
    legends would hide the data of small panels; above them, constrained
    layout puts it over the figure's title)."""
    if handles:
        fig.legend(
            list(handles.values()), list(handles), loc="outside right upper", fontsize="small"
        )


def throughput_figure(series: dict[str, Series], title: str) -> Figure:
    """Delivered rate over time, one panel per receiver in natural order
    (r1, r2, ..., r10), every scheme in each panel in the same colour."""
    receivers = sorted({rx for s in series.values() for rx in s.by_receiver}, key=natural_key)
    fig, axes = _panels(max(len(receivers), 1), 4, title, "time (s)", "throughput (Mb/s)")
    handles: dict[str, Any] = {}
    for ax, rx in zip(axes, receivers, strict=False):
        for j, (scheme, s) in enumerate(series.items()):
            if rx in s.by_receiver:
                (line,) = ax.step(
                    s.bin_starts_s, s.by_receiver[rx], where="post", color=f"C{j}", lw=0.9
                )
                handles.setdefault(scheme, line)
        ax.set_title(f"to {rx}", fontsize="small")
    _legend(fig, handles)
    return fig


def queue_time_figure(monitored: list[RunResult], title: str) -> Figure:
    """The first monitored queue over time, one panel per scheme on a shared
    y axis (three schemes' lines in one plot overdraw into one band)."""
    fig, axes = _panels(len(monitored), 2, title, "time (s)", "queue depth (packets)")
    for j, (ax, r) in enumerate(zip(axes, monitored, strict=True)):
        q = r.queues[0]
        ax.plot(np.asarray(q.t_ns) / 1e9, q.depth_packets, color=f"C{j}", lw=0.7)
        ax.set_title(r.scheme, fontsize="small")
    return fig


def fct_figure(
    fct_ms: dict[tuple[str, str], float | None], schemes: list[str], variants: list[str]
) -> Figure:
    """Mean FCT on a linear axis from zero, each bar labelled with its
    value (a log axis cut near the smallest bar made 317 ms look like twice
    316 ms). One bar per scheme, or grouped by link rate in a sweep."""
    if variants == [""]:
        ys = [fct_ms.get((s, "")) for s in schemes]
        fig, ax = plt.subplots(figsize=(7, 1.0 + 0.45 * len(schemes)), layout="constrained")
        bars = ax.barh(
            range(len(schemes)),
            [np.nan if y is None else y for y in ys],
            color=[f"C{j}" for j in range(len(schemes))],
        )
        ax.set_yticks(range(len(schemes)), schemes)
        ax.invert_yaxis()  # first scheme on top, as in the report's tables
        ax.set_xlabel("mean flow completion time (ms)")
        ax.set_ylabel("scheme")
        _label_bars(ax, bars, ys, horizontal=True)
        # The bars' sticky edge keeps the axis at zero; the margin is room
        # for the longest bar's label.
        ax.margins(x=0.15)
    else:
        fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
        width = 0.8 / len(schemes)
        for j, scheme in enumerate(schemes):
            ys = [fct_ms.get((scheme, v)) for v in variants]
            bars = ax.bar(
                np.arange(len(variants)) + j * width,
                [np.nan if y is None else y for y in ys],
                width,
                label=scheme,
                color=f"C{j}",
            )
            _label_bars(ax, bars, ys, horizontal=False)
        ax.set_xticks(np.arange(len(variants)) + width * (len(schemes) - 1) / 2, variants)
        ax.set_xlabel("link rate")
        ax.set_ylabel("mean flow completion time (ms)")
        ax.margins(y=0.2)  # room above the tallest bar for its label
        fig.legend(loc="outside right upper", fontsize="small")
    ax.set_title("Flow completion time")
    return fig


def _label_bars(ax: Any, bars: Any, ys: list[float | None], horizontal: bool) -> None:
    """Each bar's value at its end; "not measured" at the axis where a
    bar has none (some flow did not complete), which bar_label leaves blank."""
    ax.bar_label(
        bars,
        labels=["" if y is None else f"{y:,.1f}" for y in ys],
        padding=3,
        rotation=0 if horizontal else 90,
        fontsize="small" if horizontal else "x-small",
    )
    for bar, y in zip(bars, ys, strict=True):
        if y is not None:
            continue
        if horizontal:
            at = (0.0, bar.get_y() + bar.get_height() / 2)
            ax.annotate(
                "not measured",
                at,
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize="small",
            )
        else:
            at = (bar.get_x() + bar.get_width() / 2, 0.0)
            ax.annotate(
                "not measured",
                at,
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                rotation=90,
                fontsize="x-small",
            )


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
            title = f"Queue at {monitored[0].queues[0].where}{label}"
            paths.append(
                _save(queue_time_figure(monitored, title), out / f"queue_time{_suffix(v)}.png")
            )

        series = {r.scheme: s for r in these if (s := metrics[(r.scheme, v)].series) is not None}
        fig = throughput_figure(series, f"Delivered per receiver{label}")
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

    fct = {key: m.values.get("fct_mean_ms") for key, m in metrics.items()}
    if any(fct.values()):
        fig = fct_figure(fct, _schemes(runs), _variants(runs))
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


# A note's leading location: the switch (simulate.py's "s1: ") and the
# setting it is about ("congestion_points[0] (port 1, 10 Mb/s): ").
_NOTE_WHERE = re.compile(r"^((?:[\w.\[\]-]+(?: \([^()]*\))?: )+)")
# Places listed in full up to this many; beyond, the first few and a count.
NOTE_PLACES_SHOWN = 4


@dataclass(frozen=True)
class NoteGroup:
    """One thing the controllers said, however many places said it."""

    what: str
    runs: tuple[str, ...]  # "scheme" or "scheme variant", in run order
    places: tuple[str, ...]  # distinct locations, first seen first
    count: int

    def line(self) -> str:
        where = ""
        if self.places:
            shown = self.places if len(self.places) <= NOTE_PLACES_SHOWN else self.places[:3]
            where = "; at " + ", ".join(shown)
            if len(shown) < len(self.places):
                where += f" and {len(self.places) - len(shown)} more places"
        times = f"{self.count} times: " if self.count > 1 else ""
        return f"{self.what} ({times}{', '.join(self.runs)}{where})"


def note_groups(runs: list[RunResult]) -> list[NoteGroup]:
    """Every run's notes grouped by what they say apart from where: a
    threshold clamped on each of 8 ports of 4 schemes is one note said 32
    times, not 32 lines. Groups in the order their first note came."""
    found: dict[str, tuple[dict[str, None], dict[str, None], list[int]]] = {}
    for r in runs:
        label = f"{r.scheme} {r.variant}".rstrip()
        for note in r.notes:
            m = _NOTE_WHERE.match(note)
            place = m.group(1)[:-2] if m else ""
            what = note[m.end() :] if m else note
            run_labels, places, count = found.setdefault(what, ({}, {}, [0]))
            run_labels[label] = None
            if place:
                places[place] = None
            count[0] += 1
    return [
        NoteGroup(what, tuple(labels), tuple(places), count[0])
        for what, (labels, places, count) in found.items()
    ]


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
    grouped = note_groups(runs)
    if grouped:
        lines += [
            "## Notes from the controllers",
            "",
            "What each scheme's controller reported about the settings it wrote "
            "(e.g. thresholds beyond what the chip can measure, written as its limit); "
            "a note the controllers gave for several ports, switches or schemes is "
            "listed once with its count (results.json has every one).",
            "",
        ]
        lines += [f"- {g.line()}" for g in grouped]
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
