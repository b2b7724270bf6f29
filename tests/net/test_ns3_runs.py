"""End to end on ns-3: the CI smoke comparison, determinism, the report.

Needs the `ns3` wheel (pip install -e '.[eval]'); skipped with that reason
without it. The first run in a process pays ns-3's 10-20 s import.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from models.net.records import RunResult
from models.net.scenario import load_scenario
from models.net.simulate import RunSpec, run_one

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)


def facts(r: RunResult) -> dict[str, object]:
    d = dataclasses.asdict(r)
    d.pop("wall_s")
    return d


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    # Import from a directory whose path contains "test": the ns3 loader's trap.
    import os

    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("test_cwd"))
    try:
        s = load_scenario("bfcc-smoke")
        return {name: run_one(s, RunSpec(name, "")) for name in ("bfcc", "dcqcn")}
    finally:
        os.chdir(here)


def test_bfcc_flows_finish_before_dcqcns(smoke: dict[str, RunResult]) -> None:
    fct = {}
    for name, r in smoke.items():
        assert all(f.completed_ns is not None for f in r.flows), f"{name}: a flow did not finish"
        assert all(f.packets_received == f.packets_sent for f in r.flows)
        fct[name] = sum(f.fct_ns or 0 for f in r.flows) / len(r.flows)
    # Seed 001's direction: switch-to-switch backpressure beats end-to-end ECN.
    assert fct["bfcc"] < fct["dcqcn"]
    # And each scheme did its own thing to get there.
    assert smoke["bfcc"].feedback_sent.get("backpressure", 0) > 0
    assert smoke["bfcc"].recirculated_packets > 0
    assert smoke["dcqcn"].feedback_sent.get("cnp", 0) > 0
    assert "backpressure" not in smoke["dcqcn"].feedback_sent


def test_same_seed_same_results_in_one_process(smoke: dict[str, RunResult]) -> None:
    s = load_scenario("bfcc-smoke")
    for name in ("bfcc", "dcqcn"):
        again = run_one(s, RunSpec(name, ""))
        assert facts(again) == facts(smoke[name]), f"{name}: a second run differs"


def test_report_from_a_run(smoke: dict[str, RunResult], tmp_path: Path) -> None:
    from models.net.report import write_report

    s = load_scenario("bfcc-smoke")
    paths = write_report(s, [smoke["bfcc"], smoke["dcqcn"]], tmp_path)
    md = Path(paths.markdown).read_text()
    assert "bfcc" in md and "dcqcn" in md
    results = json.loads((tmp_path / "results.json").read_text())
    assert {r["scheme"] for r in results["runs"]} == {"bfcc", "dcqcn"}
    assert list(tmp_path.glob("*.png")), "plots were written"


def test_cli_run_writes_the_report(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bfrt_controller.cli import cli

    result = CliRunner().invoke(
        cli, ["eval", "run", "bfcc-smoke", "--scheme", "dcqcn", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "bfcc-smoke"
    rows = (out / "metrics.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("bfcc-smoke,dcqcn,")
    assert (out / "report.md").exists() and (out / "fct.png").exists()
