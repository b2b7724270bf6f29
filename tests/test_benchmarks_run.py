# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The benchmarks run from a fresh checkout, as a user runs them.

They assert no speed (figures belong to the scripts' output, not to timed
tests), but a benchmark that no longer starts is a figure nobody can
reproduce: `control_loop.py` imported the test double by a path that broke
when the double started importing its siblings, and nothing noticed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]


def run(script: str, *args: str, code: int = 0) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == code, done.stderr[-3000:]
    return done.stdout


def test_control_loop_runs_both_backends() -> None:
    out = run("control_loop.py", "--only-switch", "--cycles", "1")
    assert "BF-Runtime (fake SDE)" in out
    assert "model backend" in out


def test_control_loop_writes_what_it_prints(tmp_path: Path) -> None:
    """`--write` appends the figures printed, the 64 x 8 cycles and the
    optimiser's paths, which README.md's eval:cycles and eval:cycle-paths
    blocks render; an --only-switch run has no paths."""
    from evaluation import speed_results

    path = tmp_path / "cycles.json"
    out = run("control_loop.py", "--cycles", "1", "--write", str(path))
    assert f"appended to {path} (1 runs)" in out
    run("control_loop.py", "--only-switch", "--cycles", "1", "--write", str(path))
    got, switch_only = speed_results.load_cycle_runs(path)
    assert got.cycles == 1 and switch_only.paths == ()
    for b in got.backends:
        (line,) = [ln for ln in out.splitlines() if ln.startswith(b.backend)]
        assert f"{b.reference_ms:.1f} ({b.reference_max_ms:.1f})" in line
        assert f"{b.today_ms:.1f} ({b.today_max_ms:.1f}) | {b.today_cpu_ms:.1f}" in line
    assert [t.setup for t in got.paths] == [
        "1 port x 3 classes", "64 ports x 3 classes", "64 ports x 8 classes",
        "64 ports x 8, optimiser alone",
    ]  # fmt: skip
    for t in got.paths:
        (line,) = [ln for ln in out.splitlines() if ln.startswith(t.setup + " ")]
        for median, top in ((t.one_by_one_ms, t.one_by_one_max_ms),
                            (t.together_ms, t.together_max_ms),
                            (t.two_processes_ms, t.two_processes_max_ms)):  # fmt: skip
            assert f"{median:.1f} ({top:.1f})" in line
    assert "| BF-Runtime (fake SDE) |" in speed_results.render_cycles([got, switch_only])
    # The paths' table counts only the run that timed them.
    assert speed_results.render_paths([got, switch_only]).startswith("1 run of")


def test_control_loop_fails_a_cycle_over_its_bound() -> None:
    """`--max-ms` turns issue 48's 20 ms into an exit code; no cycle takes
    a microsecond, so both backends are named and the run fails."""
    out = run("control_loop.py", "--only-switch", "--cycles", "1", "--max-ms", "0.001", code=1)
    assert "BF-Runtime (fake SDE): median" in out
    assert "model backend: median" in out


@pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)
def test_ns3_alone_fills_the_bottleneck_and_no_more() -> None:
    """eval_speed.py's ceiling carries the scenario's traffic: tcp-smoke's
    two bulk flows share its 10 Mb/s link, so in 3 s they deliver nearly
    what the link carries (1,000-byte packets plus PPP's 2 bytes: 3,742 at
    most), not a tenth of it (the wrong link rate, a missing route) and
    not more (a route round the bottleneck)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import ns3_alone

    got = ns3_alone.run(load_scenario("tcp-smoke"), 3.0)
    most = 3 * 10_000_000 // (8 * 1002)
    assert 0.85 * most <= got.packets <= most


@pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)
def test_eval_speed_writes_what_it_prints(tmp_path: Path) -> None:
    """`--write` appends the run the benchmark printed, which the docs'
    eval:speed block renders: the same scenarios, schemes and packets."""
    from evaluation import speed_results

    path = tmp_path / "speed.json"
    out = run(
        "eval_speed.py",
        *("--pmqecn-seconds", "0", "--bfcc-seconds", "0", "--spie-seconds", "0"),
        *("--tcp-seconds", "0.05", "--dadctcp-seconds", "0.0005", "--repeat", "1"),
        *("--write", str(path)),
    )
    assert f"appended to {path} (1 runs)" in out
    (got,) = speed_results.load_runs(path)
    assert [s.scenario for s in got.scenarios] == ["tcp-smoke", "dadctcp-dc"]
    for sc in got.scenarios:
        for t in sc.schemes:
            printed = [ln.split() for ln in out.splitlines() if ln.startswith(sc.scenario)]
            assert [sc.scenario, t.scheme, str(t.delivered)] in [row[:3] for row in printed]
            assert t.same and t.reference_s > 0 and t.today_s > 0
    assert "| `dadctcp-dc` (0.0005 s) | dadctcp |" in speed_results.render([got])
