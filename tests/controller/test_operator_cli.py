# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A new operator's and P4 developer's habits (issue 35): options after the
subcommand and from the environment, a config's own program, --version,
params from the schema, a diff one can read and script, JSON on stdout only."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bfrt_controller.cli import hoist_global_options
from bfrt_controller.params import config_model, json_schema, params
from doubles.cli_run import out_of
from tofcc_common.registry import PROGRAMS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


# ---- diff ----------------------------------------------------------------------


def test_a_fresh_model_switchs_diff_has_one_summary_line_per_constant_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = out_of(capsys, "diff", "--config", str(ROOT / "deploy/model.yaml"))
    assert code == 0
    assert re.findall(r"^(vq_\w+): ([\d,]+) adds$", out, re.M) == [
        ("vq_exp_drain", "5,632"),
        ("vq_log_elapsed", "3,327"),
    ]
    assert "SwitchIngress.vq_exp_drain" not in out  # not 5,632 rows
    # Match keys and MACs as an operator writes them.
    assert "[hdr.ipv4.dst_addr=10.0.1.0/24]" in out
    assert "dst_mac=00:00:00:00:01:01" in out


def test_diff_json_is_one_valid_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = out_of(capsys, "diff", "--config", str(ROOT / "deploy/model.yaml"), "--json")
    assert code == 0
    doc = json.loads(out)
    sw = doc["model-pmqecn"]
    assert {t["table"]: t["add"] for t in sw["constant_tables"]} == {
        "SwitchIngress.vq_exp_drain": 5632,
        "SwitchIngress.vq_log_elapsed": 3327,
    }
    assert sw["changes"] == 5632 + 3327 + sum(d["change"] != "unknown" for d in sw["differences"])
    assert {"change", "where", "current", "intended", "table"} <= set(sw["differences"][0])


def test_diff_exit_code_is_1_with_differences_and_0_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = str(EXAMPLES / "pmqecn-tm-dwrr.yaml")
    state = str(tmp_path / "s.yaml")
    assert out_of(capsys, "--state", state, "diff", "--config", cfg, "--exit-code")[0] == 1
    assert out_of(capsys, "--state", state, "diff", "--config", cfg)[0] == 0  # git's default
    assert out_of(capsys, "--state", state, "apply", cfg)[0] == 0
    assert out_of(capsys, "--state", state, "diff", "--config", cfg, "--exit-code")[0] == 0


# ---- options where a user writes them ------------------------------------------


def test_global_options_after_the_subcommand_are_hoisted() -> None:
    assert hoist_global_options(["status", "--program", "aqm", "--json"]) == [
        "--program",
        "aqm",
        "status",
        "--json",
    ]
    assert hoist_global_options(["set", "--target=model", "a=1"]) == [
        "--target=model",
        "set",
        "a=1",
    ]


def test_program_after_the_subcommand_and_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = out_of(capsys, "status", "--json", "--program", "aqm")
    assert code == 0 and {r["section"] for r in json.loads(out)} >= {"queues"}
    monkeypatch.setenv("TOFCC_PROGRAM", "spie")
    monkeypatch.setenv("TOFCC_TARGET", "model")
    code, out, _ = out_of(capsys, "status", "--json")
    assert code == 0 and "ports (S-PIE)" in {r["section"] for r in json.loads(out)}
    monkeypatch.setenv("TOFCC_TARGET", "grpc://nowhere")
    assert out_of(capsys, "--target", "model", "status", "--json")[0] == 0  # the CLI wins


def test_a_configs_own_program_decides_when_the_cli_does_not_say(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = str(EXAMPLES / "bfcc-two-tier-s1.yaml")
    code, out, err = out_of(capsys, "diff", "--config", cfg)
    assert code == 0, err
    assert "change(s) an apply would write" in out
    # Named explicitly, the program wins and the file is checked against it.
    code, _, _ = out_of(capsys, "--program", "pmqecn", "diff", "--config", cfg)
    assert code == 2


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = out_of(capsys, "--version")
    assert code == 0 and re.fullmatch(r"tofcc \S+\n", out)


# ---- params ---------------------------------------------------------------------


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_params_lists_every_field_of_the_schema(program: str) -> None:
    rows = {p.name: p for p in params(program)}
    for field in config_model(program).model_fields:
        assert field in rows or any(n.startswith(f"{field}.") for n in rows)
    schema = json_schema(program)
    assert set(config_model(program).model_fields) == set(schema["properties"])


def test_params_shows_units_ranges_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    rows = {p.name: p for p in params("pmqecn")}
    k = rows["classes[].threshold_cells"]
    assert (k.unit, k.range, k.default) == ("cells", "0..", "required")
    interval = rows["optimizer.interval_s"]
    # At least one 10 ms cycle since issue 44 (item 6), not anything above 0.
    assert (interval.unit, interval.range, interval.default) == ("s", "0.01..86400.0", "1.0")
    assert rows["classes[].pin"].default == "false"
    code, out, _ = out_of(capsys, "--program", "bfcc", "params", "--json")
    assert code == 0 and any(r["name"] == "groups[].id" for r in json.loads(out))
    code, out, _ = out_of(capsys, "params", "--schema", "--program", "aqm")
    assert code == 0 and json.loads(out)["properties"]["program"]


# ---- stdout is the command's output --------------------------------------------


def test_status_json_parses_while_logs_are_printed(tmp_path: Path) -> None:
    """`tofcc --target model status --json 2>/dev/null | python -m json.tool`:
    every log line (a warning included) goes to stderr."""
    env = {"XDG_STATE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    code = "import logging, sys; from bfrt_controller import cli; " + (
        "orig = cli.Context.open_app\n"
        "def noisy(self, *a, **k):\n"
        "    logging.getLogger('tofcc.test').warning('a warning while reading')\n"
        "    return orig(self, *a, **k)\n"
        "cli.Context.open_app = noisy\n"
        "sys.exit(cli.run(['--target', 'model', 'status', '--json']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "level=WARNING" in proc.stderr and "a warning while reading" in proc.stderr
    assert isinstance(json.loads(proc.stdout), list)
    tool = subprocess.run(
        [sys.executable, "-m", "json.tool"], input=proc.stdout, capture_output=True, text=True
    )
    assert tool.returncode == 0


def test_logs_are_logfmt(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = out_of(capsys, "--log-level", "info", "status", "--json")
    assert code == 0
    lines = [line for line in err.splitlines() if line]
    assert lines and all(re.match(r"ts=\S+ level=\w+ logger=tofcc\S* \w+=", ln) for ln in lines)
    assert any("event=pushed" in ln and "switch=" in ln for ln in lines)


def test_aqm_and_spie_status_show_their_own_settings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = out_of(capsys, "--program", "aqm", "status", "--json")
    assert code == 0
    queues = {r["mode"]: r for r in json.loads(out) if r["section"] == "queues"}
    assert (queues["red"]["max_p"], queues["red"]["min_th_cells"]) == (0.02, 95)
    assert "target_us" not in queues["red"] and queues["codel"]["target_us"] == 5000.0
    assert "max_p 0.02" in queues["red"]["settings"]
    code, out, _ = out_of(capsys, "--program", "spie", "status")
    assert code == 0 and "alpha 0.125/s" in out and "sketch 1024 columns" in out
    # P4QCN without PFC: no empty watchdog table.
    code, out, _ = out_of(capsys, "--program", "p4qcn", "status")
    assert code == 0 and "pfc watchdog" not in out
