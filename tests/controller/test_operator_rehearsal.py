# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The operator's loop rehearsed on the model target (issue 43): a deployment's
`target: model` is a switch that stays up (apply, diff, run, status and the
one-shot commands all see one switch), and the global options mean what
they say or are refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bfrt_controller.cli import run as tofcc

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PMQECN = ROOT / "bfrt_controller" / "defaults" / "pmqecn.yaml"


@pytest.fixture(autouse=True)
def _own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TOFCC_PROGRAM", raising=False)
    monkeypatch.delenv("TOFCC_TARGET", raising=False)


@pytest.fixture
def deploy(tmp_path: Path) -> Path:
    """deploy/model.yaml with its program config, copied to be edited."""
    d = tmp_path / "deploy"
    d.mkdir()
    shutil.copy(ROOT / "deploy" / "model.yaml", d / "model.yaml")
    shutil.copy(ROOT / "examples" / "pmqecn-tm-dwrr.yaml", d / "pmqecn-tm-dwrr.yaml")
    return d / "model.yaml"


def out_of(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = tofcc(list(args))
    got = capsys.readouterr()
    return code, got.out, got.err


def set_voice_threshold(deploy: Path, cells: int) -> None:
    cfg = deploy.parent / "pmqecn-tm-dwrr.yaml"
    text = cfg.read_text()
    # voice is the file's first class; its threshold is the first one.
    assert "threshold_cells: 20\n" in text
    cfg.write_text(text.replace("threshold_cells: 20\n", f"threshold_cells: {cells}\n", 1))


def classes(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict[str, object]]:
    code, out, err = out_of(capsys, *args, "status", "--json")
    assert code == 0, err
    return {r["name"]: r for r in json.loads(out) if r.get("section") == "classes"}


# ---- Deliver 1: the model target keeps its switch ---------------------------------


def test_apply_then_diff_exit_code_is_clean(
    capsys: pytest.CaptureFixture[str], deploy: Path
) -> None:
    assert out_of(capsys, "apply", str(deploy))[0] == 0
    code, out, err = out_of(capsys, "diff", "--config", str(deploy), "--exit-code")
    assert code == 0, out + err


def test_a_one_field_edit_diffs_as_that_field_only(
    capsys: pytest.CaptureFixture[str], deploy: Path
) -> None:
    assert out_of(capsys, "apply", str(deploy))[0] == 0
    set_voice_threshold(deploy, 33)
    code, out, _ = out_of(capsys, "diff", "--config", str(deploy), "--json")
    assert code == 0
    sw = json.loads(out)["model-pmqecn"]
    # K_i is in the class's entry of each of the four ingress pipes.
    assert sw["changes"] == 4
    assert sw["constant_tables"] == []  # no thousands of drain-table adds
    changes = [d for d in sw["differences"] if d["change"] != "unknown"]
    assert len(changes) == 4
    for change in changes:
        assert change["table"] == "SwitchIngress.ecn_threshold"
        assert "class_id=1" in change["where"]
        # 20 -> 33 cells of 80 bytes
        assert "threshold_bytes=1600" in change["current"]
        assert "threshold_bytes=2640" in change["intended"]


def test_run_then_status_and_diff_see_the_daemons_switch(
    capsys: pytest.CaptureFixture[str], deploy: Path
) -> None:
    assert (
        out_of(capsys, "run", "--config", str(deploy), "--cycles", "2", "--metrics-port", "0")[0]
        == 0
    )
    # The daemon's switch: the deployment's config (voice 20), and nothing to apply.
    assert classes(capsys, "--config", str(deploy))["voice"]["threshold_cells"] == 20
    assert out_of(capsys, "diff", "--config", str(deploy), "--exit-code")[0] == 0
    # A one-shot write to the target is on the switch the next command sees.
    code, _, err = out_of(capsys, "--config", str(deploy), "set-threshold", "voice=25")
    assert code == 0, err
    assert (
        classes(capsys, "--config", str(deploy), "--switch", "model-pmqecn")["voice"][
            "threshold_cells"
        ]
        == 25
    )
    code, out, _ = out_of(capsys, "diff", "--config", str(deploy), "--json")
    assert json.loads(out)["model-pmqecn"]["changes"] == 4  # the class's entry in each pipe


def test_the_daemon_starts_from_the_switch_a_one_shot_left(
    capsys: pytest.CaptureFixture[str], deploy: Path
) -> None:
    assert out_of(capsys, "apply", str(deploy))[0] == 0
    assert out_of(capsys, "--config", str(deploy), "set-weight", "bulk=3")[0] == 0
    assert (
        out_of(capsys, "run", "--config", str(deploy), "--cycles", "1", "--metrics-port", "0")[0]
        == 0
    )
    assert classes(capsys, "--config", str(deploy))["bulk"]["weight"] == 3


def test_a_deployments_targets_keep_apart_from_the_clis_own_state(
    capsys: pytest.CaptureFixture[str], deploy: Path, tmp_path: Path
) -> None:
    assert out_of(capsys, "apply", str(deploy))[0] == 0
    state = tmp_path / "state" / "tofcc"
    assert (state / "target-model-pmqecn.yaml").exists()
    assert not (state / "model-pmqecn.yaml").exists()


# ---- Deliver 2: options mean what they say ------------------------------------------


@pytest.mark.parametrize(
    ("option", "named"),
    [
        (["--state", "OTHER"], "--state"),
        (["--client-id", "7"], "--client-id"),
        (["--target", "grpc://127.0.0.1:50052"], "--target"),
    ],
)
def test_apply_of_a_deployment_refuses_what_the_file_decides(
    capsys: pytest.CaptureFixture[str],
    deploy: Path,
    tmp_path: Path,
    option: list[str],
    named: str,
) -> None:
    option = [str(tmp_path / "other.yaml") if a == "OTHER" else a for a in option]
    code, out, err = out_of(capsys, *option, "apply", str(deploy))
    assert code == 2
    assert err.startswith(f"error: {named}") and str(deploy) in err
    assert len(err.strip().splitlines()) == 1
    assert "applied" not in out  # nothing written
    assert not (tmp_path / "other.yaml").exists()
    assert not (tmp_path / "state" / "tofcc" / "target-model-pmqecn.yaml").exists()


def test_apply_refuses_a_target_from_the_environment(
    capsys: pytest.CaptureFixture[str], deploy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOFCC_TARGET", "grpc://127.0.0.1:50052")
    code, _, err = out_of(capsys, "apply", str(deploy))
    assert code == 2 and "TOFCC_TARGET" in err


def test_demo_refuses_a_switch_target(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = out_of(capsys, "--target", "grpc://127.0.0.1:50052", "demo")
    assert code == 2 and "demo runs on the reference model only" in err
    assert out == ""
    monkeypatch.setenv("TOFCC_TARGET", "grpc://127.0.0.1:50052")
    code, _, err = out_of(capsys, "demo")
    assert code == 2 and "reference model only" in err


def test_a_retune_with_config_keeps_the_switchs_earlier_retunes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert out_of(capsys, "set-weight", "bulk=3")[0] == 0
    assert out_of(capsys, "set-threshold", "video=77")[0] == 0
    code, _, err = out_of(capsys, "--config", str(DEFAULT_PMQECN), "set-threshold", "voice=30")
    assert code == 0, err
    now = classes(capsys)
    assert now["voice"]["threshold_cells"] == 30
    assert now["video"]["threshold_cells"] == 77
    assert now["bulk"]["weight"] == 3
    # status given the file sees the same switch, not the file's values
    assert classes(capsys, "--config", str(DEFAULT_PMQECN))["video"]["threshold_cells"] == 77


def test_apply_of_a_program_config_still_writes_the_files_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert out_of(capsys, "set-threshold", "video=77")[0] == 0
    assert out_of(capsys, "apply", str(DEFAULT_PMQECN))[0] == 0
    assert classes(capsys)["video"]["threshold_cells"] == 40


def test_ports_shows_the_front_panel_an_apply_brought_up(
    capsys: pytest.CaptureFixture[str], deploy: Path
) -> None:
    assert out_of(capsys, "apply", str(deploy))[0] == 0
    code, out, _ = out_of(capsys, "ports", "--config", str(deploy), "--json")
    assert code == 0
    rows = json.loads(out)["model-pmqecn"]
    assert rows and all(r["speed"] is not None for r in rows)


def test_an_edit_that_moves_the_derived_tables_counts_them_as_derived(
    capsys: pytest.CaptureFixture[str], deploy: Path
) -> None:
    assert out_of(capsys, "apply", str(deploy))[0] == 0
    cfg = deploy.parent / "pmqecn-tm-dwrr.yaml"
    cfg.write_text(cfg.read_text() + "virtual_queue:\n  drain_mantissa_bits: 7\n")
    code, out, _ = out_of(capsys, "diff", "--config", str(deploy))
    assert code == 0
    assert "derived tables (computed from the config; counted, not listed):" in out
    assert "SwitchIngress.vq_exp_drain" not in out  # counted, not thousands of rows
    code, out, _ = out_of(capsys, "diff", "--config", str(deploy), "--json")
    sw = json.loads(out)["model-pmqecn"]
    assert {t["table"] for t in sw["constant_tables"]} <= {
        "SwitchIngress.vq_exp_drain",
        "SwitchIngress.vq_log_elapsed",
    }
    assert sw["constant_tables"]
    assert not [d for d in sw["differences"] if "vq_" in d["table"]]
