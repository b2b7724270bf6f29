# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""eval_speed.py's runs kept as a file and the docs' table made from them
(evaluation/speed_results.py): the figures are the benchmark's own, each a
range over the runs, and a file that is not the benchmark's is refused by
name."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from evaluation import speed_results as sr


def a_run(today_s: float, same: bool = True, commit: str = "abc") -> sr.SpeedRun:
    return sr.SpeedRun(
        commit,
        "2026-11-30T01:00:00+00:00",
        2,
        2,
        (
            sr.ScenarioTime(
                "pmqecn-s1",
                2.0,
                2500,
                0.1,
                (
                    sr.SchemeTime("pmqecn", 2000, 1.5, today_s, same),
                    sr.SchemeTime("none", 2400, 0.2, 0.1, True),
                ),
            ),
            sr.ScenarioTime(
                "tcp-smoke", 3.0, 3600, 0.2, (sr.SchemeTime("tcn", 3400, 0.4, 0.3, True),)
            ),
        ),
    )


def test_appended_runs_read_back_and_render_as_ranges(tmp_path: Path) -> None:
    path = tmp_path / "speed.json"
    assert sr.append_run(path, a_run(0.3)) == 1
    assert sr.append_run(path, a_run(0.25, commit="def")) == 2
    runs = sr.load_runs(path)
    assert [r.scenarios[0].schemes[0].today_s for r in runs] == [0.3, 0.25]
    table = sr.render(runs)
    # Only the mechanism's row: `none` and scenarios without one are not judged.
    rows = [ln for ln in table.splitlines() if ln.startswith("| `")]
    assert len(rows) == 1 and "| pmqecn |" in rows[0]
    # 2000 packets in 0.3 and 0.25 s; 1.5 s on the reference path: 5.0x and 6.0x;
    # the ceiling 25,000 pkt/s is 3.8x and 3.1x ahead.
    assert "| 6,667-8,000 |" in rows[0]
    assert "**5.0-6.0x**" in rows[0]
    assert "| 3.1-3.8x |" in rows[0]
    assert "yes (2 of 2)" in rows[0]
    assert table.startswith("2 runs of `python benchmarks/eval_speed.py`")
    assert "`abc`, `def`" in table


def test_a_run_with_different_results_says_so(tmp_path: Path) -> None:
    path = tmp_path / "speed.json"
    sr.append_run(path, a_run(0.3))
    sr.append_run(path, a_run(0.3, same=False))
    assert "NO (1 of 2)" in sr.render(sr.load_runs(path))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "not JSON"),
        ("[]", "non-empty list"),
        ('[{"commit": "x"}]', "run 0 is not a benchmark run"),
    ],
)
def test_a_file_that_is_not_the_benchmarks_is_refused(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "speed.json"
    path.write_text(text)
    with pytest.raises(sr.SpeedResultsError, match=says):
        sr.load_runs(path)


def test_the_bundled_runs_hold_every_mechanism() -> None:
    """The file docs/evaluation.md renders: every mechanism's scheme timed,
    both paths giving the same results in every run."""
    runs = sr.load_runs(sr.BUNDLED)
    seen = {
        (sc.scenario, t.scheme.split("@")[0])
        for r in runs
        for sc in r.scenarios
        for t in sc.schemes
        if t.scheme.startswith(sr.MECHANISM.get(sc.scenario, "\0"))
    }
    assert {s for s, _ in seen} == set(sr.MECHANISM)
    assert all(t.same for r in runs for sc in r.scenarios for t in sc.schemes)
    json.loads(sr.BUNDLED.read_text())  # the file itself, not only its dataclasses


def a_cycle_run(today_ms: float, commit: str = "abc") -> sr.CycleRun:
    return sr.CycleRun(
        commit,
        "2026-11-30T01:00:00+00:00",
        2,
        11,
        (
            sr.CycleTime("BF-Runtime (fake SDE)", 70.0, 74.0, today_ms, today_ms + 2, today_ms),
            sr.CycleTime("model backend", 23.0, 24.0, 11.5, 12.0, 11.4),
        ),
    )


def test_control_loop_runs_render_as_ranges_and_count_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "cycles.json"
    assert sr.append_run(path, a_cycle_run(15.5)) == 1
    assert sr.append_run(path, a_cycle_run(21.0, commit="def")) == 2
    runs = sr.load_cycle_runs(path)
    table = sr.render_cycles(runs)
    rows = {ln.split("|")[1].strip(): ln for ln in table.splitlines() if ln.startswith("| ")}
    bfrt = rows["BF-Runtime (fake SDE)"]
    assert "| **15.5-21.0** |" in bfrt
    # 70 ms against 15.5 and 21.0: 4.5x and 3.3x; one run of two over 20 ms.
    assert "| 3.3-4.5x |" in bfrt and "| 1 of 2 |" in bfrt
    assert "| 0 of 2 |" in rows["model backend"]
    assert table.startswith("The 64 x 8 section of 2 runs of `python benchmarks/control_loop.py`")


def test_a_speed_file_is_not_a_control_loop_file(tmp_path: Path) -> None:
    path = tmp_path / "speed.json"
    sr.append_run(path, a_run(0.3))
    with pytest.raises(sr.SpeedResultsError, match="run 0 is not a control-loop run"):
        sr.load_cycle_runs(path)
    with pytest.raises(sr.SpeedResultsError, match="run 0 is not a control-loop run"):
        sr.append_run(path, a_cycle_run(15.0))


def test_the_bundled_control_loop_runs_meet_the_bound() -> None:
    """The file README.md renders: both backends in every run, and the
    BF-Runtime median at most issue 48's 20 ms in every run."""
    runs = sr.load_cycle_runs(sr.BUNDLED_CYCLES)
    for run in runs:
        by = {b.backend: b for b in run.backends}
        assert set(by) == {"BF-Runtime (fake SDE)", "model backend"}
        assert all(b.today_ms <= sr.CYCLE_BOUND_MS for b in run.backends), run


def test_a_benchmarks_own_results_file_does_not_make_its_next_run_dirty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second of two `--write` runs into a bundled file records the
    commit, not `-dirty`: the file it appends to does not count as a change
    to the code; any other tracked change does."""
    import subprocess

    from evaluation import results_store

    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    (tmp_path / "evaluation" / "results").mkdir(parents=True)
    runs, code = tmp_path / "runs.json", tmp_path / "code.py"
    runs.write_text("[]\n")
    code.write_text("x = 1\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    monkeypatch.setattr(results_store, "RESULTS_DIR", tmp_path / "evaluation" / "results")
    clean = results_store.checkout_commit()
    assert clean != "unknown" and not clean.endswith("-dirty")
    runs.write_text("[1]\n")
    assert results_store.checkout_commit() == f"{clean}-dirty"
    assert results_store.checkout_commit(ignore=[runs, Path("/elsewhere.json")]) == clean
    code.write_text("x = 2\n")
    assert results_store.checkout_commit(ignore=[runs]) == f"{clean}-dirty"


def test_the_optimisers_paths_render_over_the_runs_that_timed_them(tmp_path: Path) -> None:
    path = tmp_path / "cycles.json"
    full = dataclasses.replace(
        a_cycle_run(15.5),
        paths=(sr.PathTime("64 ports x 8 classes", 60.0, 62.0, 12.0, 13.0, 14.0, 15.0),),
    )
    sr.append_run(path, a_cycle_run(15.0))
    sr.append_run(path, full)
    sr.append_run(path, dataclasses.replace(full, commit="def"))
    runs = sr.load_cycle_runs(path)
    assert runs[0].paths == () and runs[1].paths == full.paths
    table = sr.render_paths(runs)
    assert table.startswith("2 runs of `python benchmarks/control_loop.py`")
    assert "| 64 ports x 8 classes | 60.0 (max 62.0) | 12.0 (max 13.0) |" in table
    assert table.rstrip().endswith("| 5.0x |")
    with pytest.raises(sr.SpeedResultsError, match="without --only-switch"):
        sr.render_paths(runs[:1])
