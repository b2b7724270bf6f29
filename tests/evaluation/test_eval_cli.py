# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc eval` output read through a pipe: the claims table at full width
and `eval list`'s cost columns (no ns-3 run: the simulation is stubbed)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bfrt_controller.cli import cli
from evaluation import cli as eval_cli
from evaluation import ns3_env, report
from evaluation.report import ClaimRow, ReportPaths

LONG_VERDICT = "no better than none (vs paper: within paper's range)"


def stub_runs(monkeypatch: pytest.MonkeyPatch, rows: list[ClaimRow]) -> None:
    """`eval run` without ns-3: no simulation, and a report holding `rows`."""
    monkeypatch.setattr(ns3_env, "ns3", lambda: (None, None))
    monkeypatch.setattr(eval_cli, "_run_serial", lambda name, jobs: [])

    def write_report(s: Any, runs: Any, out: Path) -> ReportPaths:
        md = Path(out) / "report.md"
        md.write_text("# stub\n")
        return ReportPaths(Path(out), md, md, md, md, [], rows)

    monkeypatch.setattr(report, "write_report", write_report)


def test_the_claims_table_keeps_its_width_in_a_pipe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    row = ClaimRow(
        "fct_mean_ms", "bfcc", "dcqcn", "", (-50.0, -16.7), -20.0, LONG_VERDICT, "seed 001"
    )
    stub_runs(monkeypatch, [row])
    # CliRunner's stdout is not a terminal, as a pipe or a file is not.
    result = CliRunner().invoke(
        cli, ["eval", "run", "bfcc-smoke", "--jobs", "1", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    # The whole row on one line: metric name and verdict uncut, unwrapped.
    line = next(x for x in result.stdout.splitlines() if "fct_mean_ms" in x)
    assert "bfcc vs dcqcn" in line and LONG_VERDICT in line, result.stdout
    # The table is the result (stdout); where the report went is stderr's.
    assert "report in" not in result.stdout


def write_timing(root: Path, timing: dict[str, float]) -> None:
    root.mkdir(parents=True)
    (root / "timing.json").write_text(json.dumps(timing))


def list_rows(output: str) -> dict[str, list[str]]:
    lines = output.splitlines()
    header = next(i for i, x in enumerate(lines) if x.startswith("scenario "))
    cols = lines[header].split()
    assert cols[:5] == ["scenario", "simulated", "runs", "CPU", "time"], lines[header]
    # Columns start where the header's names do (names hold spaces).
    starts = [lines[header].index(c) for c in ("scenario", "simulated", "runs", "CPU time")]
    starts.append(lines[header].index("description"))
    return {
        x[: starts[1]].strip(): [x[a:b].strip() for a, b in itertools.pairwise(starts)]
        + [x[starts[-1] :]]
        for x in lines[header + 1 :]
    }


def test_eval_list_gives_each_scenarios_cost(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    results = tmp_path / "eval-results"
    monkeypatch.setattr(eval_cli, "COMMITTED_RESULTS", tmp_path / "committed")
    # bfcc-smoke: 7 schemes, all timed.
    write_timing(results / "bfcc-smoke", {f"s{i}": 10.0 for i in range(7)})
    # A repeated scenario's timings are per seed; one seed of 6 only here.
    write_timing(results / "bfcc-two-receivers-shallow-tcp" / "seed-7", {"none/10Mbps": 12.4})
    # The committed results stand in where --results has none.
    write_timing(tmp_path / "committed" / "tcp-smoke", {"tcn": 30.0, "none": 20.0})
    result = CliRunner().invoke(cli, ["eval", "list", "--results", str(results)])
    assert result.exit_code == 0, result.output
    assert f"{results}/<scenario>/timing.json" in result.output
    rows = list_rows(result.output)
    assert rows["bfcc-smoke"][1:4] == ["2 s", "7", "70 s"]
    assert rows["bfcc-smoke"][4].startswith("Smoke: bfcc-single with 100 KB flows")
    assert rows["bfcc-two-receivers-shallow-tcp"][2:4] == [
        "48 (4 schemes x 2 rates x 6 seeds)",
        "12 s (1 of 48 runs)",
    ]
    assert rows["tcp-smoke"][1:4] == ["3 s", "2", "50 s"]
    assert rows["spie-s1"][3] == "-"


def test_eval_list_takes_a_broken_timing_file_for_none(tmp_path: Path) -> None:
    (tmp_path / "bfcc-smoke").mkdir()
    (tmp_path / "bfcc-smoke" / "timing.json").write_text("{not json")
    assert eval_cli.last_timing("bfcc-smoke", (tmp_path,)) is None
