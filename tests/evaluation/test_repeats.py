# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Repeated scenarios: start jitter per seed, one scenario per seed, the summary over seeds."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import wilcoxon

from evaluation.repeats import SUMMARY_JSON, SUMMARY_MD, summarise, write_summary
from evaluation.scenario import ScenarioError, parse_scenario

BASE: dict[str, Any] = {
    "name": "t",
    "duration_s": 1,
    "hosts": ["h1", "h2", "h3"],
    "switches": ["s1"],
    "links": [{"a": "h1", "b": "s1"}, {"a": "h2", "b": "s1"}, {"a": "h3", "b": "s1"}],
    "flows": [
        {"name": "f", "src": "h1", "dst": "h3", "start_s": 0.25},
        {"name": "g", "src": "h2", "dst": "h3"},
    ],
    "schemes": {"bfcc": {}},
}


def scenario(**top: Any) -> Any:
    raw = copy.deepcopy(BASE)
    raw.update(top)
    return parse_scenario(raw, "t.yaml")


def test_without_jitter_a_flow_starts_at_its_start_s_whatever_the_seed() -> None:
    for seed in (1, 2, 99):
        s = scenario(seed=seed)
        assert [s.start_ns(i) for i in range(2)] == [250_000_000, 0]


def test_jitter_draws_within_its_bound_per_seed_and_flow_and_repeats_itself() -> None:
    starts = {
        seed: [scenario(seed=seed, start_jitter_us=1000).start_ns(i) for i in range(2)]
        for seed in range(1, 21)
    }
    for f_ns, g_ns in starts.values():
        assert 250_000_000 <= f_ns <= 250_000_000 + 1_000_000
        assert 0 <= g_ns <= 1_000_000
    assert starts[3] == [scenario(seed=3, start_jitter_us=1000).start_ns(i) for i in range(2)]
    # A fresh draw per seed, and per flow within a seed.
    assert len({f for f, _ in starts.values()}) == 20
    assert all(f - 250_000_000 != g for f, g in starts.values())


def test_seeded_gives_one_scenario_per_repeat_with_consecutive_seeds() -> None:
    s = scenario(seed=5, repeats=3, start_jitter_us=10)
    runs = s.seeded()
    assert [r.seed for r in runs] == [5, 6, 7]
    assert all(r.repeats == 1 and r.start_jitter_us == 10 and r.flows == s.flows for r in runs)
    assert scenario().seeded() == [scenario()]


@pytest.mark.parametrize(
    ("top", "field"),
    [
        ({"repeats": 0}, "repeats"),
        ({"start_jitter_us": -1}, "start_jitter_us"),
        # Flow f starts at 0.25 s of a 1 s run: 0.75 s of jitter could start it at the end.
        ({"start_jitter_us": 750_000}, "start_jitter_us"),
    ],
)
def test_bad_repeats_or_jitter_is_refused_by_field(top: dict[str, Any], field: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        scenario(**top)
    assert exc.value.field == field


def test_jitter_may_not_start_a_flow_after_its_stop() -> None:
    raw = copy.deepcopy(BASE)
    raw["flows"][1]["stop_s"] = 0.001
    raw["start_jitter_us"] = 1000
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(raw, "t.yaml")
    assert exc.value.field == "start_jitter_us"
    assert "flows[1]" in str(exc.value)


def run(
    seed: int, scheme: str, victim_ms: float | None, q_mean: float, q_max: float
) -> dict[str, Any]:
    """A "runs" entry of results.json, as much of it as the summary reads."""
    return {
        "scheme": scheme,
        "variant": "100Mbps",
        "seed": seed,
        "flows": [
            {"name": "victim", "fct_ns": None if victim_ms is None else round(victim_ms * 1e6)},
            {"name": "other", "fct_ns": 50_000_000},
        ],
        "metrics": {"drops_overflow": 3.0},
        "detail": {
            "queues": {"s3->s4": {"mean_packets": q_mean, "max_after_startup_packets": q_max}}
        },
    }


def test_summary_spreads_each_flow_and_queue_over_seeds_and_compares_means_with_none() -> None:
    s = summarise(
        [
            run(1, "none", 34.0, 30.0, 60.0),
            run(2, "none", 204.0, 32.0, 62.0),
            run(3, "none", 206.0, 34.0, 64.0),
            run(1, "bfcc", 36.0, 4.0, 20.0),
            run(2, "bfcc", 38.0, 6.0, 30.0),
            run(3, "bfcc", 203.0, 8.0, 40.0),
        ]
    )
    assert s.seeds == (1, 2, 3)
    v = s.fct_ms[("100Mbps", "bfcc")]["victim"]
    assert v.values == (36.0, 38.0, 203.0)
    assert v.median == 38.0 and v.mean == pytest.approx(92.333, abs=1e-3)
    change = s.change_vs_none_pct(("100Mbps", "bfcc"), "victim")
    assert change == pytest.approx(100 * (92.333333 - 148.0) / 148.0, abs=1e-4)
    assert s.change_vs_none_pct(("100Mbps", "bfcc"), "other") == 0.0
    assert s.queue_mean_packets[("100Mbps", "bfcc")]["s3->s4"].mean == 6.0
    # Seed by seed: 36 vs 34 later, 38 vs 204 and 203 vs 206 sooner.
    pair = s.paired_vs_none(("100Mbps", "bfcc"), "victim")
    assert pair is not None and (pair.sooner, pair.later, pair.ties) == (2, 1, 0)
    assert pair.p_value == pytest.approx(wilcoxon([2.0, -166.0, -3.0]).pvalue)
    assert s.paired_vs_none(("100Mbps", "none"), "victim") is None
    assert s.queue_max_after_startup_packets[("100Mbps", "none")]["s3->s4"].values == (60, 62, 64)


def test_a_flow_left_incomplete_is_counted_apart_and_blocks_the_comparison() -> None:
    s = summarise(
        [run(1, "none", 34.0, 1, 1), run(1, "bfcc", None, 1, 1), run(2, "bfcc", 30.0, 1, 1)]
    )
    v = s.fct_ms[("100Mbps", "bfcc")]["victim"]
    assert v.values == (30.0,) and v.missing == 1
    assert s.change_vs_none_pct(("100Mbps", "bfcc"), "victim") is None
    # Paired only where both completed it: seed 1 has no bfcc FCT, seed 2 no none run.
    pair = s.paired_vs_none(("100Mbps", "bfcc"), "victim")
    assert pair is not None and (pair.sooner, pair.later, pair.ties, pair.p_value) == (
        0,
        0,
        0,
        None,
    )


def test_a_seed_that_appears_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="seed 1 of bfcc 100Mbps appears twice"):
        summarise([run(1, "bfcc", 30.0, 1, 1), run(1, "bfcc", 31.0, 1, 1)])


def test_write_summary_reads_every_seeds_results(tmp_path: Path) -> None:
    dirs = []
    for seed, victim in ((7, 34.0), (8, 204.0)):
        d = tmp_path / f"seed-{seed}"
        d.mkdir()
        runs = [run(seed, "none", victim, 30.0, 60.0), run(seed, "bfcc", 36.0, 5.0, 20.0)]
        (d / "results.json").write_text(json.dumps({"runs": runs}))
        dirs.append(d)
    md = write_summary("t", dirs, tmp_path)
    assert md == tmp_path / SUMMARY_MD
    text = md.read_text()
    assert text.startswith("# t: 2 seeds (7-8)")
    assert "| 100Mbps | bfcc | victim | 36.0 | 36.0 | 36.0 | 36.0 | 0 | -69.7 % | 1 / 1 |" in text
    data = json.loads((tmp_path / SUMMARY_JSON).read_text())
    none_victim = [r for r in data["fct_ms"] if r["scheme"] == "none" and r["name"] == "victim"]
    assert none_victim[0]["values"] == [34.0, 204.0] and none_victim[0]["mean_vs_none_pct"] == 0.0
    bfcc_victim = [r for r in data["fct_ms"] if r["scheme"] == "bfcc" and r["name"] == "victim"]
    assert bfcc_victim[0]["vs_none_same_seed"]["sooner"] == 1
