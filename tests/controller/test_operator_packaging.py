# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 43 (3, 4): what an operator gets from the wheel (`tofcc deploy init`)
and the error and help texts they meet first. The wheel itself, built and
installed in a fresh venv, is checked by .ci/run."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from bfrt_controller.cli import cli
from bfrt_controller.metrics import registry_for
from bfrt_controller.params import params
from bfrt_controller.ports import FrontPanelPort
from bfrt_controller.service import Daemon
from doubles.cli_run import out_of

ROOT = Path(__file__).resolve().parents[2]
DEFAULTS = ROOT / "bfrt_controller" / "defaults"


# ---- deploy init ------------------------------------------------------------------


def test_deploy_init_writes_the_operator_files_with_the_unit_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "etc" / "tofcc"
    code, out, err = out_of(capsys, "deploy", "init", str(out_dir))
    assert code == 0, err
    for name in (
        "tofcc.service",
        "README.md",
        "model.yaml",
        "fleet.yaml",
        "pmqecn-tm-dwrr.yaml",
        "bfcc-two-tier-s1.yaml",
        "grafana/tofcc-dashboard.json",
        "grafana/tofcc-alerts.yaml",
        "examples/p4qcn-tofino2.yaml",
    ):
        path = out_dir / name
        # Files, not links into a source tree the operator does not have.
        assert path.is_file() and not path.is_symlink(), name
        assert f"wrote {path}" in out
    unit = (out_dir / "tofcc.service").read_text()
    assert f"Documentation=file://{out_dir / 'README.md'}\n" in unit
    exec_start = next(ln for ln in unit.splitlines() if ln.startswith("ExecStart="))
    assert exec_start.endswith(f" run --config {out_dir / 'fleet.yaml'}")
    assert "/opt/tofino-cc/deploy" not in unit
    # The shipped README is the one written (the unit's documentation).
    assert (out_dir / "README.md").read_bytes() == (ROOT / "deploy" / "README.md").read_bytes()
    # The written deployments validate where they were written, and the model
    # one applies.
    assert out_of(capsys, "check", "--config", str(out_dir / "model.yaml"))[0] == 0
    assert out_of(capsys, "check", "--config", str(out_dir / "fleet.yaml"))[0] == 0
    # A deployment's model target keeps its own state (XDG_STATE_HOME, a tmp
    # directory here): --state is refused with a deployment.
    code, _, err = out_of(capsys, "apply", str(out_dir / "model.yaml"))
    assert code == 0, err


def test_the_unit_names_a_directory_with_a_space_as_systemd_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "tofcc files"
    assert out_of(capsys, "deploy", "init", str(out_dir))[0] == 0
    unit = (out_dir / "tofcc.service").read_text()
    assert f"Documentation={(out_dir / 'README.md').as_uri()}\n" in unit
    assert "%20" in unit
    exec_start = next(ln for ln in unit.splitlines() if ln.startswith("ExecStart="))
    assert exec_start.endswith(f" run --config '{out_dir / 'fleet.yaml'}'")


def test_the_written_alert_rules_and_dashboard_are_well_formed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """promtool's rule-file structure (promtool itself is not installed here)."""
    assert out_of(capsys, "deploy", "init", str(tmp_path))[0] == 0
    rules = yaml.safe_load((tmp_path / "grafana" / "tofcc-alerts.yaml").read_text())
    assert set(rules) == {"groups"} and rules["groups"]
    names = set()
    for group in rules["groups"]:
        assert isinstance(group["name"], str) and group["rules"]
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}
            assert isinstance(rule["alert"], str) and isinstance(rule["expr"], str)
            assert rule["alert"] not in names
            names.add(rule["alert"])
    dashboard = json.loads((tmp_path / "grafana" / "tofcc-dashboard.json").read_text())
    assert dashboard["panels"]


def test_deploy_init_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "model.yaml").write_text("mine\n")
    code, _, err = out_of(capsys, "deploy", "init", str(tmp_path))
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {tmp_path / 'model.yaml'}: already exists (tofcc deploy init --force replaces it)"
    ]
    # Refused before anything was written.
    assert (tmp_path / "model.yaml").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.yaml"]
    code, _, err = out_of(capsys, "deploy", "init", "--force", str(tmp_path))
    assert code == 0, err
    assert (tmp_path / "model.yaml").read_bytes() == (ROOT / "deploy" / "model.yaml").read_bytes()


def test_deploy_init_replaces_a_link_rather_than_writing_through_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("untouched\n")
    out_dir = tmp_path / "d"
    out_dir.mkdir()
    (out_dir / "fleet.yaml").symlink_to(victim)
    assert out_of(capsys, "deploy", "init", "--force", str(out_dir))[0] == 0
    assert victim.read_text() == "untouched\n"
    assert not (out_dir / "fleet.yaml").is_symlink()


def test_the_eval_hint_names_the_extra_not_a_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from evaluation import ns3_env

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ns3_env.Ns3Unavailable) as exc:
        ns3_env._wheel_dir()
    assert "pip install 'tofino-cc[eval]'" in str(exc.value)
    assert "-e" not in str(exc.value).split("(")[0]


# ---- error texts -------------------------------------------------------------------


def test_a_misspelled_required_key_names_the_closest_field_and_the_missing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = yaml.safe_load((DEFAULTS / "pmqecn.yaml").read_text())
    raw["classes"][0]["thresold_cells"] = raw["classes"][0].pop("threshold_cells")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    code, _, err = out_of(capsys, "check", "--config", str(cfg))
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {cfg}: classes[0].thresold_cells: unknown field thresold_cells "
        "(did you mean threshold_cells?); threshold_cells is required and missing"
    ]


def test_a_misspelled_deployment_key_names_the_closest_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = yaml.safe_load((ROOT / "deploy" / "model.yaml").read_text())
    raw["metrics"]["prot"] = raw["metrics"].pop("port")
    raw["targets"][0]["config"] = str(ROOT / "examples" / "pmqecn-tm-dwrr.yaml")
    dep = tmp_path / "deploy.yaml"
    dep.write_text(yaml.safe_dump(raw))
    code, _, err = out_of(capsys, "check", "--config", str(dep))
    assert code == 2
    assert "metrics.prot: unknown field prot (did you mean port?)" in err


def test_status_takes_a_deployment_file_as_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A deployment given to `status --config` is read as a deployment (its
    one target's switch), never as a program config missing its fields."""
    code, out, err = out_of(capsys, "--config", str(ROOT / "deploy" / "model.yaml"), "status")
    assert code == 0, err
    assert "Field required" not in err and "voice" in out


def test_speeds_are_taken_as_100G_and_100_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = set()
    for speed in ("100G", "100", "100g"):
        code, out, err = out_of(
            capsys, "--program", "p4qcn", "thresholds", "--port-speed", speed, "--cable-m", "10"
        )
        assert code == 0, err
        outputs.add(out)
    assert len(outputs) == 1
    code, _, err = out_of(
        capsys, "--program", "p4qcn", "thresholds", "--port-speed", "fast", "--cable-m", "10"
    )
    assert code == 2 and "--port-speed" in err
    assert FrontPanelPort.model_validate({"port": "1/0", "speed": 25}).speed == "25G"
    assert FrontPanelPort.model_validate({"port": "1/0", "speed": "25"}).speed == "25G"
    raw = yaml.safe_load((ROOT / "deploy" / "model.yaml").read_text())
    raw["targets"][0]["config"] = str(ROOT / "examples" / "pmqecn-tm-dwrr.yaml")
    for p in raw["targets"][0]["front_panel"]["ports"]:
        p["speed"] = 25
    dep = tmp_path / "deploy.yaml"
    dep.write_text(yaml.safe_dump(raw))
    code, _, err = out_of(capsys, "check", "--config", str(dep))
    assert code == 0, err


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["status", "--json"],
        ["--program", "bfcc", "params"],
        ["--help"],
        ["status", "--help"],
    ],
)
def test_a_closed_pipe_ends_quietly_with_status_0(tmp_path: Path, args: list[str]) -> None:
    """`tofcc status | head -1`: the reader is gone before tofcc writes."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe now fails with EPIPE
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(tmp_path / "state")}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "bfrt_controller.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (0, "")


def _every_command(cmd: click.Command, path: str) -> list[tuple[str, click.Command]]:
    out = [(path, cmd)]
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        # list_commands/get_command: the plugin groups (eval) load on demand.
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            assert sub is not None, f"{path} {name}"
            out += _every_command(sub, f"{path} {name}")
    return out


def test_every_command_and_option_has_help() -> None:
    missing = []
    commands = _every_command(cli, "tofcc")
    assert {"tofcc deploy init", "tofcc eval run", "tofcc status"} <= {p for p, _ in commands}
    for path, cmd in commands:
        if not (cmd.help or cmd.short_help):
            missing.append(path)
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden and not p.help:
                missing.append(f"{path} {'/'.join(p.opts)}")
    assert missing == []


def test_params_has_description_and_unit_columns(capsys: pytest.CaptureFixture[str]) -> None:
    bfcc = {p.name: p for p in params("bfcc")}
    assert bfcc["congestion_points[].rate_mbps"].unit == "Mb/s"
    assert bfcc["params.reference_rate_mbps"].unit == "Mb/s"
    assert {p.name: p for p in params("spie")}["sketch.line_rate_gbps"].unit == "Gb/s"
    pmqecn = {p.name: p for p in params("pmqecn")}
    # A field's comment in the schema describes it; shared fields are described once.
    assert "optimiser" in pmqecn["classes[].pin"].description
    assert pmqecn["routes[].port"].description == "egress device port"
    code, out, _ = out_of(capsys, "--program", "bfcc", "params")
    assert code == 0
    header = next(ln for ln in out.splitlines() if "setting" in ln and "default" in ln)
    assert "unit" in header and "description" in header
    code, out, _ = out_of(capsys, "--program", "bfcc", "params", "--json")
    rows = json.loads(out)
    assert all("description" in r for r in rows)


# ---- reload ------------------------------------------------------------------------


def _deployment(path: Path, port: int) -> Path:
    raw: dict[str, Any] = yaml.safe_load((ROOT / "deploy" / "model.yaml").read_text())
    raw["metrics"]["port"] = port
    raw["targets"][0]["config"] = str(ROOT / "examples" / "pmqecn-tm-dwrr.yaml")
    path.write_text(yaml.safe_dump(raw))
    return path


def _reload_counts(d: Daemon) -> dict[str, float]:
    out = {}
    for fam in registry_for(d).collect():
        for s in fam.samples:
            if s.name == "tofcc_config_reloads_total":
                out[s.labels["result"]] = s.value
    return out


def test_a_reload_that_cannot_apply_a_metrics_change_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tofcc")
    path = _deployment(tmp_path / "d.yaml", 9464)
    d = Daemon(path)
    try:
        d.step()
        assert d.reload()  # the same file: an ordinary reload
        _deployment(path, 9465)
        caplog.clear()
        assert d.reload()  # the switches take the file; the endpoint stays
    finally:
        d.close()
    [line] = [r for r in caplog.records if "event=reloaded" in r.getMessage()]
    assert line.levelno == logging.WARNING
    assert 'metrics_not_applied="127.0.0.1:9464 -> 127.0.0.1:9465"' in line.getMessage()
    assert _reload_counts(d) == {"ok": 1, "refused": 0, "metrics_not_applied": 1}
