# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
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

from evaluation.records import RunResult
from evaluation.report import write_report
from evaluation.scenario import Pmqecn, Scenario, bundled_scenarios, load_scenario
from evaluation.simulate import RunSpec, run_one
from evaluation.topology import Topology

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)


def facts(r: RunResult) -> dict[str, object]:
    d = dataclasses.asdict(r)
    d.pop("wall_s")
    return d


SMOKE_SCHEMES = ("bfcc", "dcqcn", "none")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    # Import from a directory whose path contains "test": the ns3 loader's trap.
    import os

    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("test_cwd"))
    try:
        s = load_scenario("bfcc-smoke")
        return {name: run_one(s, RunSpec(name, "")) for name in SMOKE_SCHEMES}
    finally:
        os.chdir(here)


def mean_fct_ns(r: RunResult) -> float:
    return sum(f.fct_ns or 0 for f in r.flows) / len(r.flows)


def mean_queue(r: RunResult) -> float:
    d = r.queues[0].depth_packets
    return sum(d) / len(d)


def test_bfcc_against_dcqcn_and_against_none(smoke: dict[str, RunResult]) -> None:
    for name, r in smoke.items():
        assert all(f.completed_ns is not None for f in r.flows), f"{name}: a flow did not finish"
        assert all(f.packets_received == f.packets_sent for f in r.flows)
    fct = {name: mean_fct_ns(r) for name, r in smoke.items()}
    # Seed 001 says backpressure finishes before end-to-end ECN. With the
    # paper's units (issue 11) BFCC ties DCQCN at its own paper's settings on
    # this scenario (both are the link's drain time), so the smoke run holds
    # it to "no slower"; docs/evaluation.md reports the tie.
    assert fct["bfcc"] <= fct["dcqcn"]
    # Against no control at all it does not buy anything with a slower FCT.
    assert fct["bfcc"] <= 1.05 * fct["none"]
    # And each scheme did its own thing to get there.
    assert smoke["bfcc"].feedback_sent.get("backpressure", 0) > 0
    assert smoke["bfcc"].recirculated_packets > 0
    assert smoke["dcqcn"].feedback_sent.get("cnp", 0) > 0
    assert "backpressure" not in smoke["dcqcn"].feedback_sent
    assert smoke["none"].feedback_sent == {} and smoke["none"].recirculated_packets == 0


def test_bfcc_queue_at_the_congestion_point_is_below_none(smoke: dict[str, RunResult]) -> None:
    # Seed 001 Fig. 10's direction: lower by more than the 5 % the report
    # calls no difference. The smoke saturates S1's uplink, where a fake
    # takes a slot from the named group (bfcc-smoke.yaml says why).
    assert mean_queue(smoke["bfcc"]) < 0.95 * mean_queue(smoke["none"])


# Determinism on a short horizon: long enough for every scheme's feedback
# (and PMQECN's controller) to act, short enough to keep CI cheap.
HORIZON_PACKETS = 150


def short_horizon(s: Scenario) -> tuple[Scenario, str]:
    """`s` cut to about HORIZON_PACKETS packet times at its first (slowest
    in every bundled sweep) link rate, and at least one PMQECN controller
    cycle; the variant to run."""
    variant = s.link_rates[0] if s.link_rates else ""
    topo = Topology(s, variant or None)
    slowest = min(link.rate_bps for link in topo.links)
    frame_bits = 8 * (max(f.packet_bytes for f in s.flows) + 40)
    horizon = HORIZON_PACKETS * frame_bits / slowest
    cycles = [
        p.optimizer_interval_s
        for n in s.schemes.enabled()
        if isinstance(p := s.schemes.get(n), Pmqecn) and p.optimizer_interval_s > 0
    ]
    if s.transport == "tcp":
        # A TCP flow's first data arrives a handshake and a half after it
        # starts: three base RTTs after the first flow starts leave room for
        # some to arrive. (Waiting for the last flow's start would run a
        # workload's whole arrival process: 2 s of dadctcp-fattree.)
        rtt_ns = max(topo.base_rtt_ns(f.src, f.dst, f.packet_bytes) for f in s.flows)
        horizon = max(horizon, min(f.start_s for f in s.flows) + 3 * rtt_ns / 1e9)
    horizon = min(s.duration_s, max([horizon, *(1.5 * c for c in cycles)]))
    return s.model_copy(update={"duration_s": horizon}), variant


@pytest.mark.parametrize("name", bundled_scenarios())
def test_same_seed_same_results_for_every_scheme(name: str) -> None:
    s, variant = short_horizon(load_scenario(name))
    for scheme in s.schemes.enabled():
        first = run_one(s, RunSpec(scheme, variant))
        again = run_one(s, RunSpec(scheme, variant))
        assert len(first.packets) > 0, f"{name}/{scheme}: nothing delivered on the horizon"
        assert facts(again) == facts(first), f"{name}/{scheme}: a second run differs"


def test_report_from_a_run(smoke: dict[str, RunResult], tmp_path: Path) -> None:

    s = load_scenario("bfcc-smoke")
    paths = write_report(s, list(smoke.values()), tmp_path)
    md = Path(paths.markdown).read_text()
    assert "bfcc" in md and "dcqcn" in md and "## Against none" in md
    results = json.loads((tmp_path / "results.json").read_text())
    assert {r["scheme"] for r in results["runs"]} == set(SMOKE_SCHEMES)
    assert all(c["none_verdict"] for c in results["claims"])
    assert list(tmp_path.glob("*.png")), "plots were written"


def test_cli_run_writes_the_report(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bfrt_controller.cli import cli

    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "run",
            "bfcc-smoke",
            "--scheme",
            "dcqcn",
            "--scheme",
            "none",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "bfcc-smoke"
    rows = (out / "metrics.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[1].startswith("bfcc-smoke,dcqcn,")
    assert rows[2].startswith("bfcc-smoke,none,")
    md = (out / "report.md").read_text()
    assert "## Against none" in md and "| dcqcn | — |" in md.split("## Against none")[1]
    assert (out / "fct.png").exists()


def test_cli_run_refuses_a_scheme_the_scenario_does_not_name(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bfrt_controller.cli import cli

    result = CliRunner().invoke(
        cli, ["eval", "run", "bfcc-smoke", "--scheme", "dcqcn-5ms", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "dcqcn-5ms" in result.output
    assert not (tmp_path / "bfcc-smoke").exists(), "nothing run, nothing written"


def test_cli_repeats_write_a_report_per_seed_and_a_summary_over_them(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bfrt_controller.cli import cli

    f = tmp_path / "rep.yaml"
    f.write_text("extends: bfcc-smoke\nname: rep\nrepeats: 5\nstart_jitter_us: 500\n")
    out = tmp_path / "out"
    args = ["eval", "run", str(f), "--scheme", "none", "--jobs", "1", "--out", str(out)]
    # --repeats overrides the file's 5.
    result = CliRunner().invoke(cli, [*args, "--repeats", "2"])
    assert result.exit_code == 0, result.output
    runs = {
        seed: json.loads((out / "rep" / f"seed-{seed}" / "results.json").read_text())["runs"]
        for seed in (7, 8)
    }
    assert all(len(r) == 1 and r[0]["seed"] == seed for seed, r in runs.items())
    # Each seed drew its own starts, within the jitter.
    starts = {seed: [fl["start_ns"] for fl in r[0]["flows"]] for seed, r in runs.items()}
    assert starts[7] != starts[8]
    assert all(0 <= t <= 500_000 for ts in starts.values() for t in ts)
    summary = json.loads((out / "rep" / "repeats.json").read_text())
    assert summary["seeds"] == [7, 8]
    rows = [r for r in summary["fct_ms"] if r["scheme"] == "none"]
    assert len(rows) == 3
    for row in rows:
        fcts = sorted(
            fl["fct_ns"] / 1e6
            for r in runs.values()
            for fl in r[0]["flows"]
            if fl["name"] == row["name"]
        )
        assert sorted(row["values"]) == pytest.approx(fcts)
    assert (out / "rep" / "repeats.md").read_text().startswith("# rep: 2 seeds (7-8)")
    assert sorted(p.name for p in (out / "rep").glob("seed-*")) == ["seed-7", "seed-8"]
