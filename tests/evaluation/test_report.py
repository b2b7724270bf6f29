# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The report of a link-rate sweep and of a run without monitors or sized
flows, and the range verdicts test_metrics_and_report.py leaves open."""

from __future__ import annotations

import csv
import dataclasses
import json
import struct
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from evaluation.metrics import HEADLINE, Series
from evaluation.records import FlowRecord, PacketLog, QueueLog, RunResult
from evaluation.report import (
    claim_direction,
    fct_figure,
    grid_shape,
    natural_key,
    none_verdict,
    note_groups,
    queue_time_figure,
    throughput_figure,
    verdict,
    write_report,
)
from evaluation.scenario import Scenario, parse_scenario

MS = 1_000_000

# The names the report's readers (CLI, docs) look up.
BRIEF_HEADLINE = {
    "queue_mean_packets",
    "queue_p99_packets",
    "queue_max_packets",
    "rtt_mean_ms",
    "rtt_p99_ms",
    "throughput_mean_mbps",
    "throughput_cv",
    "fct_mean_ms",
    "fct_p99_ms",
    "incomplete_flows",
    "jain_fairness",
    "drops_overflow",
    "drops_active",
    "loss_rate",
    "feedback_sent",
    "recirculation_overhead",
}


def scenario(sized: bool = True, **extra: Any) -> Scenario:
    size = {"size_bytes": 10_000} if sized else {}
    raw: dict[str, Any] = {
        "name": "sweep",
        "description": "two schemes at two link rates",
        "seed": 7,
        "duration_s": 1.0,
        "bin_s": 0.1,
        "hosts": ["a", "b"],
        "switches": ["s"],
        "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}],
        "flows": [{"name": "f0", "src": "a", "dst": "b", **size}],
        "schemes": {"pmqecn": {}, "dcqcn": {}},
    }
    raw.update(extra)
    return parse_scenario(raw)


def run(
    scheme: str,
    variant: str,
    fct_ms: int | None,
    monitored: bool = True,
    wall_s: float = 0.0,
) -> RunResult:
    log = PacketLog()
    for i in range(10):
        log.add(0, 1000, i * 10 * MS, i * 10 * MS + MS, False)
    f = FlowRecord(
        0,
        "f0",
        "a",
        "b",
        "C",
        None if fct_ms is None else 10_000,
        0,
        packets_sent=10,
        packets_received=10,
        last_rx_ns=91 * MS,
        completed_ns=None if fct_ms is None else fct_ms * MS,
    )
    queues = []
    if monitored:
        q = QueueLog("s->b")
        for i, d in enumerate((0, 3, 6)):
            q.add(i * MS, d, d * 1000)
        queues.append(q)
    return RunResult("sweep", scheme, variant, 7, 1_000 * MS, [f], log, queues, wall_s=wall_s)


def sweep_runs() -> list[RunResult]:
    # Variants in the order the runs first show them, not sorted.
    return [
        run("pmqecn", "10 Mbps", 30, wall_s=1.0),
        run("dcqcn", "10 Mbps", 40, wall_s=2.0),
        run("pmqecn", "5Mbps", 10, wall_s=3.0),
        run("dcqcn", "5Mbps", 40, wall_s=4.0),
    ]


RANGE_CLAIM = {
    "metric": "fct_mean_ms",
    "ours": "pmqecn",
    "paper": {"dcqcn": [-50, -16.7]},
    "source": "seed 001 Fig. 9",
}


def test_sweep_files_are_suffixed_per_variant(tmp_path: Path) -> None:
    paths = write_report(scenario(claims=[RANGE_CLAIM]), sweep_runs(), tmp_path / "out")
    names = {p.name for p in paths.plots}
    for stem in ("queue_cdf", "queue_time", "throughput", "rtt_cdf"):
        # "10 Mbps" has a space, which no file name should.
        assert {f"{stem}_10_Mbps.png", f"{stem}_5Mbps.png"} <= names, stem
    assert "fct.png" in names
    assert all(p.exists() and p.stat().st_size > 0 for p in paths.plots)
    assert (tmp_path / "out" / "report.md").exists()


def test_sweep_claim_rows_per_variant_and_their_mean(tmp_path: Path) -> None:
    paths = write_report(scenario(claims=[RANGE_CLAIM]), sweep_runs(), tmp_path)
    claims = json.loads(paths.json.read_text())["claims"]
    # 30 vs 40 ms: -25 %; 10 vs 40 ms: -75 %; their mean -50 % sits on the range's edge.
    assert [(c["variant"], c["measured"], c["paper_verdict"]) for c in claims] == [
        ("10 Mbps", pytest.approx(-25.0), "within paper's range"),
        ("5Mbps", pytest.approx(-75.0), "beyond paper's range"),
        ("all", pytest.approx(-50.0), "within paper's range"),
    ]
    # No `none` among the runs: no verdict may stand without saying so.
    assert all(c["verdict"].endswith("; no none run to compare") for c in claims)
    md = paths.markdown.read_text()
    assert "# sweep" in md and "two schemes at two link rates" in md and "Seed 7" in md
    assert (
        "| fct_mean_ms | pmqecn vs dcqcn | 5Mbps | -50 … -16.7 % | -75.0 % | — | — "
        "| beyond paper's range; no none run to compare |" in md
    )
    assert "| fct_mean_ms | pmqecn vs dcqcn | all | -50 … -16.7 % | -50.0 % " in md
    assert "seed 001 Fig. 9" in md.split("## Against the paper")[1]


def test_sweep_csv_rows_and_timing(tmp_path: Path) -> None:
    paths = write_report(scenario(), sweep_runs(), tmp_path)
    with paths.csv.open() as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["scenario", "scheme", "variant", "seed", *HEADLINE]
    assert set(rows[0]) >= BRIEF_HEADLINE
    assert [r[1:4] for r in rows[1:]] == [
        ["pmqecn", "10 Mbps", "7"],
        ["dcqcn", "10 Mbps", "7"],
        ["pmqecn", "5Mbps", "7"],
        ["dcqcn", "5Mbps", "7"],
    ]
    fct = rows[0].index("fct_mean_ms")
    assert [float(r[fct]) for r in rows[1:]] == [30.0, 40.0, 10.0, 40.0]
    timing = json.loads(paths.timing.read_text())
    assert timing == {
        "pmqecn/10 Mbps": 1.0,
        "dcqcn/10 Mbps": 2.0,
        "pmqecn/5Mbps": 3.0,
        "dcqcn/5Mbps": 4.0,
    }


def test_no_monitor_and_no_sized_flow_skip_their_plots(tmp_path: Path) -> None:
    runs = [run("pmqecn", "", None, monitored=False), run("dcqcn", "", None, monitored=False)]
    paths = write_report(scenario(sized=False), runs, tmp_path)
    assert {p.name for p in paths.plots} == {"throughput.png", "rtt_cdf.png"}
    with paths.csv.open() as fh:
        row = next(csv.DictReader(fh))
    assert row["queue_mean_packets"] == "" and row["fct_mean_ms"] == ""
    assert row["variant"] == ""
    results = json.loads(paths.json.read_text())
    assert results["scenario"] == "sweep" and results["seed"] == 7
    assert results["claims"] == []
    assert "## Against the paper" not in paths.markdown.read_text()
    assert "—" in paths.markdown.read_text(), "a figure with no value reads as a dash"


def test_results_json_carries_flows_and_detail(tmp_path: Path) -> None:
    paths = write_report(scenario(), sweep_runs()[:2], tmp_path)
    first = json.loads(paths.json.read_text())["runs"][0]
    assert first["flows"][0]["fct_ns"] == 30 * MS
    assert first["flows"][0]["size_bytes"] == 10_000
    assert first["metrics"]["queue_max_packets"] == 6.0
    assert first["detail"]["queues"]["s->b"]["samples"] == 3
    assert first["duration_ns"] == 1_000 * MS


def test_mean_over_a_sweep_is_not_measured_when_a_variant_is_missing(tmp_path: Path) -> None:
    claim = {"metric": "fct_mean_ms", "ours": "pmqecn", "paper": {"dcqcn": -50}}
    runs = sweep_runs()
    runs[3] = run("dcqcn", "5Mbps", None)  # no FCT for the baseline at 5 Mb/s
    paths = write_report(scenario(claims=[claim]), runs, tmp_path)
    claims = json.loads(paths.json.read_text())["claims"]
    assert [(c["variant"], c["paper_verdict"]) for c in claims] == [
        ("10 Mbps", "same direction, weaker"),
        ("5Mbps", "not measured"),
        ("all", "not measured"),
    ]


def test_a_mechanism_equal_to_none_is_no_better_than_none(tmp_path: Path) -> None:
    # pmqecn beats dcqcn by 25 % at 10 Mb/s, within the paper's range, but
    # none (plain forwarding) does as well: within 5 % of none is no better.
    runs = sweep_runs()
    runs += [run("none", "10 Mbps", 31, wall_s=0.0), run("none", "5Mbps", 20, wall_s=0.0)]
    s = scenario(claims=[RANGE_CLAIM], schemes={"pmqecn": {}, "dcqcn": {}, "none": {}})
    paths = write_report(s, runs, tmp_path)
    claims = json.loads(paths.json.read_text())["claims"]
    got = [(c["variant"], c["paper_verdict"], c["none_verdict"], c["verdict"]) for c in claims]
    assert got[0] == (
        "10 Mbps",
        "within paper's range",
        "no better than none",
        "no better than none (vs paper: within paper's range)",
    )
    assert claims[0]["ours_vs_none"] == pytest.approx(100 * (30 - 31) / 31)
    assert claims[0]["baseline_vs_none"] == pytest.approx(100 * (40 - 31) / 31)
    # At 5 Mb/s ours (10 ms) beats none (20 ms) by 50 %: the paper verdict stands.
    assert got[1][2:] == ("better than none", "beyond paper's range")
    md = paths.markdown.read_text()
    assert "## Against none" in md
    assert "| dcqcn | 10 Mbps |" in md.split("## Against none")[1]
    assert "no better than none (vs paper" in md


@pytest.mark.parametrize(
    ("change", "paper", "expected"),
    [
        (-4.9, -56.0, "no better than none"),
        (5.0, -56.0, "no better than none"),
        (-5.1, -56.0, "better than none"),
        (20.0, -56.0, "worse than none"),
        (20.0, (5.0, 20.0), "better than none"),
        (None, -56.0, "not measured against none"),
    ],
)
def test_none_verdicts(change: float | None, paper: Any, expected: str) -> None:
    assert none_verdict(change, claim_direction(paper)) == expected


@pytest.mark.parametrize(
    ("measured", "paper", "expected"),
    [
        # A range of gains.
        (10.0, (5.0, 20.0), "within paper's range"),
        (30.0, (5.0, 20.0), "beyond paper's range"),
        (2.0, (5.0, 20.0), "same direction, weaker"),
        (-3.0, (5.0, 20.0), "opposite direction"),
        (0.0, (5.0, 20.0), "opposite direction"),
        (None, (5.0, 20.0), "not measured"),
        # Edges belong to the range.
        (-50.0, (-50.0, -16.7), "within paper's range"),
        (-16.7, (-50.0, -16.7), "within paper's range"),
        # A range across zero has no direction to be beyond or short of.
        (20.0, (-10.0, 5.0), "outside paper's range"),
        (0.0, (-10.0, 5.0), "within paper's range"),
        # A single positive figure.
        (25.0, 20.0, "matches or beats paper"),
        (10.0, 20.0, "same direction, weaker"),
        (9.9, 20.0, "same direction, much weaker"),
        (-1.0, 20.0, "opposite direction"),
    ],
)
def test_more_verdicts(measured: float | None, paper: Any, expected: str) -> None:
    assert verdict(measured, paper) == expected


# ---- figures and notes that read at a glance (issue 49) --------------------


def test_receivers_sort_in_natural_order() -> None:
    names = ["r10", "r2", "r1", "r11", "h2-r10", "h2-r9"]
    assert sorted(names, key=natural_key) == ["h2-r9", "h2-r10", "r1", "r2", "r10", "r11"]


def many_receivers(n: int, schemes: tuple[str, ...] = ("pmqecn", "dcqcn", "none")) -> Any:
    bins = [i * 0.1 for i in range(10)]
    # Receivers in string order, as a set of names would give them.
    receivers = sorted(f"r{i}" for i in range(1, n + 1))
    return {
        s: Series(bins, {rx: [float(j)] * len(bins) for rx in receivers}, {}, [0.0] * len(bins))
        for j, s in enumerate(schemes)
    }


def overlaps(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of texts or plot areas that overlap: panel titles, panels, the
    figure's title, axis labels and legend."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [(f"title {ax.get_title()}", ax.title.get_window_extent(renderer)) for ax in fig.axes]
    boxes += [(f"panel {ax.get_title()}", ax.get_window_extent(renderer)) for ax in fig.axes]
    for name, artist in (
        ("suptitle", fig._suptitle),  # type: ignore[attr-defined]
        ("supxlabel", fig._supxlabel),  # type: ignore[attr-defined]
        ("supylabel", fig._supylabel),  # type: ignore[attr-defined]
        *(("legend", leg) for leg in fig.legends),
    ):
        if artist is not None:
            boxes.append((name, artist.get_window_extent(renderer)))
    return [
        (a, b)
        for i, (a, box) in enumerate(boxes)
        for b, other in boxes[i + 1 :]
        # A panel's own title sits on its top edge.
        if box.overlaps(other) and a.split(" ", 1)[-1] != b.split(" ", 1)[-1]
    ]


def test_throughput_is_a_grid_of_panels_in_natural_order() -> None:
    fig = throughput_figure(many_receivers(16), "Delivered per receiver")
    try:
        assert [ax.get_title() for ax in fig.axes] == [f"to r{i}" for i in range(1, 17)]
        # 4 x 4 panels, not a column of 16 (3,780 pixels tall at 100 dpi).
        assert {round(ax.get_position().x0, 2) for ax in fig.axes}.__len__() == 4
        assert fig.get_size_inches()[1] <= 12
        assert fig.get_supxlabel() == "time (s)"
        assert fig.get_supylabel() == "throughput (Mb/s)"
        # One legend for the figure with every scheme, none per panel.
        assert [t.get_text() for t in fig.legends[0].get_texts()] == ["pmqecn", "dcqcn", "none"]
        assert all(ax.get_legend() is None for ax in fig.axes)
        # Shared axes: one scale to compare receivers by.
        first = fig.axes[0]
        assert all(first.get_shared_y_axes().joined(first, ax) for ax in fig.axes)
        assert overlaps(fig) == []
    finally:
        plt.close(fig)


@pytest.mark.parametrize("n", [1, 2, 5, 40])
def test_throughput_grid_has_one_panel_per_receiver_and_no_overlap(n: int) -> None:
    fig = throughput_figure(many_receivers(n, ("pmqecn",)), "t")
    try:
        assert len(fig.axes) == n
        rows, cols = grid_shape(n)
        assert rows * cols >= n and cols <= max(4, rows + 1)
        assert overlaps(fig) == []
    finally:
        plt.close(fig)


def test_throughput_png_stays_a_screen_high_with_16_receivers(tmp_path: Path) -> None:
    runs = []
    for scheme in ("pmqecn", "dcqcn"):
        r = run(scheme, "", 30)
        r.flows = [
            dataclasses.replace(r.flows[0], flow_id=i, name=f"f{i}", dst=f"r{i + 1}")
            for i in range(16)
        ]
        runs.append(r)
    hosts = ["a", *(f"r{i}" for i in range(1, 17))]
    s = scenario(
        hosts=hosts,
        links=[{"a": h, "b": "s"} for h in hosts],
        flows=[
            {"name": f"f{i}", "src": "a", "dst": f"r{i + 1}", "size_bytes": 10_000}
            for i in range(16)
        ],
    )
    paths = write_report(s, runs, tmp_path)
    png = next(p for p in paths.plots if p.name == "throughput.png")
    width, height = struct.unpack(">II", png.read_bytes()[16:24])  # the PNG's IHDR
    assert height <= 1200, f"throughput.png is {height} pixels tall"
    assert width <= 1600


def queue_run(scheme: str, depth: int) -> RunResult:
    r = run(scheme, "", 30)
    q = QueueLog("s->b")
    for i in range(5):
        q.add(i * MS, depth + i, 0)
    r.queues = [q]
    return r


def test_queue_over_time_is_a_panel_per_scheme_on_one_y_axis() -> None:
    runs = [queue_run("pmqecn", 5), queue_run("dcqcn", 50), queue_run("none", 500)]
    fig = queue_time_figure(runs, "Queue at s->b")
    try:
        assert [ax.get_title() for ax in fig.axes] == ["pmqecn", "dcqcn", "none"]
        assert all(len(ax.get_lines()) == 1 for ax in fig.axes)
        first = fig.axes[0]
        assert all(first.get_shared_y_axes().joined(first, ax) for ax in fig.axes)
        assert fig.get_supylabel() == "queue depth (packets)"
        assert fig.get_supxlabel() == "time (s)"
        assert overlaps(fig) == []
    finally:
        plt.close(fig)


def test_fct_chart_is_linear_from_zero_with_labelled_bars() -> None:
    schemes = ["bfcc", "bfcc-shapecarried", "dcqcn", "none"]
    fct: dict[tuple[str, str], float | None] = {
        ("bfcc", ""): 316.9,
        ("bfcc-shapecarried", ""): 398.7,
        ("dcqcn", ""): 331.0,
        ("none", ""): None,
    }
    fig = fct_figure(fct, schemes, [""])
    try:
        (ax,) = fig.axes
        fig.canvas.draw()
        assert ax.get_xscale() == "linear" and ax.get_xlim()[0] == 0
        assert ax.get_xlabel() == "mean flow completion time (ms)"
        assert ax.get_ylabel() == "scheme"
        assert [t.get_text() for t in ax.get_yticklabels()] == schemes
        labels = {t.get_text() for t in ax.texts}
        assert {"316.9", "398.7", "331.0", "not measured"} <= labels
    finally:
        plt.close(fig)


def test_fct_chart_of_a_sweep_groups_by_link_rate() -> None:
    fct = {(s, v): 10.0 * (i + 1) for i, s in enumerate(["a", "b"]) for v in ("5Mbps", "10Mbps")}
    fig = fct_figure(fct, ["a", "b"], ["5Mbps", "10Mbps"])
    try:
        (ax,) = fig.axes
        fig.canvas.draw()
        assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
        assert ax.get_xlabel() == "link rate"
        assert [t.get_text() for t in ax.get_xticklabels()] == ["5Mbps", "10Mbps"]
    finally:
        plt.close(fig)


CLAMP = (
    "T_min 80000000 ns, T_max 150000000 ns exceed what tofino measures (262143 ns, "
    "deq_timedelta 18 bits): written as 262143 ns, so degrees 2 and 3 are never reported"
)


def test_a_note_said_at_every_port_is_listed_once_with_its_count(tmp_path: Path) -> None:
    runs = [run("pmqecn", "", 30), run("dcqcn", "", 40)]
    for r in runs:
        r.notes = [
            f"{sw}: congestion_points[{i}] (port {i + 1}, 10 Mb/s): {CLAMP}"
            for sw in ("s1", "s2", "s3")
            for i in range(3)
        ] + [f"{r.scheme}: rt1_packets >= rt2_packets >= rt3_packets expected"]
    md = write_report(scenario(), runs, tmp_path).markdown.read_text()
    notes = md.split("## Notes from the controllers")[1]
    assert notes.count(CLAMP) == 1, notes
    line = next(x for x in notes.splitlines() if CLAMP in x)
    assert "18 times: pmqecn, dcqcn; at s1: congestion_points[0] (port 1, 10 Mb/s)" in line
    assert "and 6 more places" in line
    # Notes that say different things stay apart.
    assert notes.count("rt1_packets >= rt2_packets") == 1
    # results.json keeps every note as the controller gave it.
    results = json.loads((tmp_path / "results.json").read_text())
    assert len(results["runs"][0]["notes"]) == 10


def test_note_groups_keep_first_seen_order_and_single_notes_uncounted() -> None:
    r = run("pmqecn", "", 30)
    r.notes = ["s1: b happened", "s1: a happened", "s2: b happened"]
    assert [g.line() for g in note_groups([r])] == [
        "b happened (2 times: pmqecn; at s1, s2)",
        "a happened (pmqecn; at s1)",
    ]
