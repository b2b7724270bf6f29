# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""scripts/eval_docs.py: the docs' results tables are generated from
evaluation/results, and `--check` fails when one is edited by hand (issue 49).

The edit cases work on copies of the docs in tmp_path, never the real ones.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from evaluation import cli, docs_tables, results_store

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "eval_docs.py"
EVAL_MD = REPO / "docs" / "evaluation.md"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_docs", SCRIPT)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["eval_docs"] = mod
    spec.loader.exec_module(mod)
    return mod


eval_docs = _load()


def _run(*args: str | Path) -> int:
    return int(eval_docs.main([str(a) for a in args]))


# ---------------------------------------------------------------- fakes


METRIC_COLUMNS = ["scenario", "scheme", "variant", "seed", "queue_mean_packets", "fct_mean_ms"]


def _fake_seed(d: Path, scenario: str, seed: int, queues: dict[str, float]) -> None:
    """One seed's `eval run` output: the files the docs need and the ones they do not."""
    d.mkdir(parents=True)
    with (d / "metrics.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(METRIC_COLUMNS)
        for scheme, q in queues.items():
            w.writerow([scenario, scheme, "10Mbps", seed, q, 2 * q if scheme != "none" else ""])
    (d / "timing.json").write_text(json.dumps({f"{s}/10Mbps": 1.5 for s in queues}))
    runs = [
        {
            "scheme": s,
            "variant": "10Mbps",
            "seed": seed,
            "detail": {"queues": {"s1->s2": {"mean_packets": q, "samples": 9}}},
            "flows": [{"name": "f1", "fct_ns": 2_000_000, "packets_sent": 10}],
        }
        for s, q in queues.items()
    ]
    claim = {
        "variant": "10Mbps",
        "metric": "queue_mean_packets",
        "ours": "bfcc",
        "baseline": "none",
        "paper": [-50.0, -10.0],
        "measured": -50.0,
        "ours_vs_none": -50.0,
        "baseline_vs_none": 0.0,
        "paper_verdict": "within paper's range",
        "none_verdict": "better than none",
        "verdict": "within paper's range",
        "source": "seed 001",
    }
    (d / "results.json").write_text(
        json.dumps({"scenario": scenario, "seed": seed, "runs": runs, "claims": [claim]})
    )
    (d / "report.md").write_text("# report\n")
    (d / "queue_cdf.png").write_bytes(b"\x89PNG")


def _fake_run(root: Path) -> Path:
    """An `eval run --out` directory: one plain scenario, one repeated, one
    still running."""
    _fake_seed(root / "alpha", "alpha", 1, {"bfcc": 10.0, "none": 40.0})
    for seed in (1, 2):
        _fake_seed(root / "beta" / f"seed-{seed}", "beta", seed, {"bfcc": seed, "none": 4.0})
    (root / "beta" / "repeats.json").write_text(
        json.dumps(
            {
                "fct_ms": [
                    {
                        "scheme": "bfcc",
                        "variant": "10Mbps",
                        "name": "f1",
                        "mean": 2.0,
                        "median": 2.0,
                        "min": 2.0,
                        "max": 2.0,
                        "missing": 0,
                        "mean_vs_none_pct": -12.5,
                        "vs_none_same_seed": {"sooner": 2, "later": 0, "ties": 0, "p_value": 0.5},
                    }
                ]
            }
        )
    )
    (root / "beta" / "repeats.md").write_text("# beta\n")
    (root / "gamma").mkdir()
    (root / "gamma" / "queue_cdf.png").write_bytes(b"\x89PNG")
    return root


@pytest.fixture
def results(tmp_path: Path) -> Path:
    out = tmp_path / "results"
    assert _run("--import", _fake_run(tmp_path / "run"), "--results", out, "--commit", "abc") == 0
    return out


def _doc(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "doc.md"
    p.write_text(text)
    return p


TABLE = """Intro.

<!-- eval:table alpha
col: scheme | @scheme
col: queue | queue_mean_packets | .1f
col: vs none | vs(none, queue_mean_packets) | +.0f %
col: FCT | fct_mean_ms | .1f | else not measured
-->
<!-- /eval -->

The queue is <!-- eval:value alpha bfcc | -vs(none, queue_mean_packets) | .0f -->?<!-- /eval -->
% lower.
"""


# ---------------------------------------------------------------- the committed tree


def test_check_passes_on_the_committed_tree() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_docs_hold_generated_tables_and_values() -> None:
    text = EVAL_MD.read_text()
    kinds = [m.group("kind") for m in docs_tables.BLOCK.finditer(text)]
    assert kinds.count("table") >= 5
    assert kinds.count("value") >= 10
    assert "runtimes" in kinds


def _first_block(text: str, kind: str) -> re.Match[str]:
    m = next((m for m in docs_tables.BLOCK.finditer(text) if m.group("kind") == kind), None)
    assert m is not None, f"no eval:{kind} block in docs/evaluation.md"
    return m


def test_editing_one_number_in_a_generated_table_fails_naming_the_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = EVAL_MD.read_text()
    m = _first_block(text, "table")
    body = m.group("body")
    row = next(ln for ln in body.splitlines() if re.search(r"\| [^|]*\d", ln) and "---" not in ln)
    edited_row = re.sub(r"(\d)(?!.*\d)", lambda d: str((int(d.group(1)) + 1) % 10), row)
    assert edited_row != row
    doc = _doc(
        tmp_path, text[: m.start("body")] + body.replace(row, edited_row, 1) + text[m.end("body") :]
    )
    assert _run("--check", "--docs", doc) == 1
    out = capsys.readouterr().out
    scenario = m.group("spec").split()[0]
    assert f"eval:table {scenario}" in out
    assert edited_row in out and row in out
    assert doc.read_text().count(edited_row) == 1  # --check writes nothing


def test_editing_an_inline_value_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = EVAL_MD.read_text()
    m = _first_block(text, "value")
    doc = _doc(tmp_path, text[: m.start("body")] + m.group("body") + "1" + text[m.end("body") :])
    assert _run("--check", "--docs", doc) == 1
    assert "eval:value " + m.group("spec").split()[0] in capsys.readouterr().out


def test_the_run_times_table_is_every_committed_scenario() -> None:
    names = results_store.scenarios()
    table = docs_tables.render_runtimes("", docs_tables.Results())
    assert [ln.split("|")[1].strip(" `") for ln in table.splitlines()[2:]] == names


def test_eval_list_still_reads_committed_timing() -> None:
    """`tofcc eval list` sums the committed timing.json, seed by seed for a repeated one."""
    for name in results_store.scenarios():
        timed = cli.last_timing(name, (Path("/nonexistent"), results_store.RESULTS_DIR))
        assert timed, name
        assert len(timed) == len(
            json.loads((results_store.RESULTS_DIR / name / "timing.json").read_text())
        )


# ---------------------------------------------------------------- generating and checking


def test_regenerate_then_check(tmp_path: Path, results: Path) -> None:
    doc = _doc(tmp_path, TABLE)
    assert _run("--check", "--docs", doc, "--results", results) == 1
    assert _run("--docs", doc, "--results", results) == 0
    text = doc.read_text()
    assert "| bfcc | 10.0 | -75 % | 20.0 |" in text
    assert "| none | 40.0 | +0 % | not measured |" in text
    assert "is <!-- eval:value alpha bfcc | -vs(none, queue_mean_packets) | .0f -->75<!--" in text
    assert _run("--check", "--docs", doc, "--results", results) == 0


def test_a_block_naming_a_missing_scenario_exits_2_with_one_line(
    tmp_path: Path, results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _doc(tmp_path, "x\n<!-- eval:table nosuch\ncol: s | @scheme\n-->\n<!-- /eval -->\n")
    before = doc.read_text()
    assert _run("--docs", doc, "--results", results) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "nosuch" in err and "doc.md:2" in err
    assert doc.read_text() == before


@pytest.mark.parametrize(
    ("block", "named"),
    [
        ("<!-- eval:table alpha\nschemes: dcqcn\ncol: s | @scheme\n-->\n<!-- /eval -->", "dcqcn"),
        ("<!-- eval:table alpha\ncol: q | queue_p99\n-->\n<!-- /eval -->", "queue_p99"),
        ("in <!-- eval:value alpha bfcc | at(tcn, fct_mean_ms) -->1<!-- /eval -->", "tcn"),
        ("in <!-- eval:value alpha bfcc/1Gbps | fct_mean_ms -->1<!-- /eval -->", "1Gbps"),
        ("<!-- eval:value alpha bfcc | fct_mean_ms -->1<!-- /eval -->", "start a line"),
    ],
)
def test_a_block_naming_what_the_results_lack_exits_2(
    tmp_path: Path, results: Path, capsys: pytest.CaptureFixture[str], block: str, named: str
) -> None:
    good = "ok <!-- eval:value alpha bfcc | queue_mean_packets -->0<!-- /eval -->\n"
    doc = _doc(tmp_path, good + block + "\n")
    assert _run("--docs", doc, "--results", results) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err
    assert doc.read_text() == good + block + "\n"  # nothing half-applied


def test_repeated_scenarios_average_the_seeds(tmp_path: Path, results: Path) -> None:
    doc = _doc(
        tmp_path,
        "m <!-- eval:value beta bfcc/10Mbps | queue_mean_packets | .2f --><!-- /eval -->"
        " s2 <!-- eval:value beta bfcc/10Mbps@2 | queue_mean_packets | .2f --><!-- /eval -->"
        " r <!-- eval:value beta bfcc/10Mbps | repeats.f1.mean_vs_none_pct | +.1f --><!-- /eval -->"
        " q <!-- eval:value beta bfcc,none/10Mbps | queues.s1->s2.mean_packets | range .1f -->"
        "<!-- /eval -->\n",
    )
    assert _run("--docs", doc, "--results", results) == 0
    values = re.findall(r"-->([^<]*)<!-- /eval", doc.read_text())
    assert values == ["1.50", "2.00", "-12.5", "1.5-4.0"]


# ---------------------------------------------------------------- importing


def test_import_copies_only_the_listed_files(results: Path) -> None:
    assert sorted(p.name for p in results.iterdir()) == ["alpha", "beta"]  # gamma unfinished
    for name in ("alpha", "beta"):
        files = {p.name for p in (results / name).iterdir()}
        assert files <= set(results_store.FILES)
        assert {
            "metrics.csv",
            "timing.json",
            "detail.csv",
            "claims.csv",
            "provenance.json",
        } <= files
    assert "repeats.csv" in {p.name for p in (results / "beta").iterdir()}
    prov = json.loads((results / "beta" / "provenance.json").read_text())
    assert prov["commit"] == "abc" and prov["command"] == "tofcc eval run beta"
    assert prov["seeds"] == [1, 2]
    with (results / "beta" / "metrics.csv").open() as f:
        assert [r["seed"] for r in csv.DictReader(f)] == ["1", "1", "2", "2"]
    timing = json.loads((results / "beta" / "timing.json").read_text())
    assert sorted(timing) == [f"seed-{n}/{s}/10Mbps" for n in (1, 2) for s in ("bfcc", "none")]
    assert "samples" not in (results / "alpha" / "detail.csv").read_text()


def test_import_is_idempotent_and_drops_stale_files(tmp_path: Path, results: Path) -> None:
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file()}
    (results / "alpha" / "repeats.csv").write_text("stale\n")
    assert _run("--import", tmp_path / "run", "--results", results, "--commit", "abc") == 0
    assert {p: p.read_bytes() for p in results.rglob("*") if p.is_file()} == before


def test_import_of_a_scenario_not_in_the_run_exits_2(
    tmp_path: Path, results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--import", tmp_path / "run", "delta", "--results", results) == 2
    assert "delta" in capsys.readouterr().err


def test_a_value_may_read_another_scenarios_run(tmp_path: Path, results: Path) -> None:
    doc = _doc(
        tmp_path,
        "x <!-- eval:value alpha bfcc/10Mbps | at(beta:none, queue_mean_packets) | .1f -->"
        "<!-- /eval --> y <!-- eval:value alpha bfcc | vs(beta:/10Mbps, queue_mean_packets)"
        " | +.0f --><!-- /eval -->\n",
    )
    assert _run("--docs", doc, "--results", results) == 0
    assert re.findall(r"-->([^<]*)<!-- /eval", doc.read_text()) == ["4.0", "+567"]
