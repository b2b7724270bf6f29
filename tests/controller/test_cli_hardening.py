# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 37's CLI items that are not a refusal in the malformed-input table:
user text printed as text, errors on stderr, read-only commands that create
nothing, a busy state file's exit code, and the front panel's source guard."""

from __future__ import annotations

import copy
import logging
from pathlib import Path

import pytest
import yaml

from bfrt_controller import state as state_module
from bfrt_controller.cli import run
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG as PMQECN_DEFAULT
from tests.controller.test_service import bfcc_target, write_deploy


def test_a_config_path_with_markup_is_applied_and_printed_as_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It wrote the state, then raised MarkupError (exit 1)."""
    cfg = tmp_path / "cfg" / "[/x]ok.yaml"
    cfg.parent.mkdir(parents=True)  # "cfg/[" holds "x]ok.yaml"
    cfg.write_bytes(PMQECN_DEFAULT.read_bytes())
    assert run(["--state", str(tmp_path / "s.yaml"), "apply", str(cfg)]) == 0
    assert "[/x]ok.yaml" in capsys.readouterr().out


def test_a_class_named_like_markup_is_refused_and_printed_as_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A class name is an ASCII identifier since issue 44 (item 7), so "[/x]"
    no longer reaches `status`; the refusal must still print it as written."""
    raw = yaml.safe_load(PMQECN_DEFAULT.read_text())
    raw["classes"][0]["name"] = "[/x]"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    state = tmp_path / "s.yaml"
    assert run(["--state", str(state), "apply", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "classes[0].name" in err and "'[/x]'" in err, err
    assert not state.exists()


def test_errors_go_to_stderr_and_data_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--state", str(tmp_path / "s.yaml"), "set-threshold", "nope=5"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "error: set-threshold: unknown class 'nope'" in captured.err


def test_status_on_a_path_in_a_missing_directory_creates_nothing(tmp_path: Path) -> None:
    state = tmp_path / "a" / "b" / "s.yaml"
    assert run(["--state", str(state), "status"]) == 0
    assert not (tmp_path / "a").exists()


def test_a_state_lock_held_too_long_is_busy_not_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 4 sent the user to look for a dead switch."""
    state = tmp_path / "s.yaml"
    assert run(["--state", str(state), "set-threshold", "voice=33"]) == 0
    before = state.read_bytes()
    monkeypatch.setattr(state_module, "LOCK_WAIT_S", 0.1)
    import fcntl

    with open(state.with_name("s.yaml.lock"), "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        code = run(["--state", str(state), "set-threshold", "voice=34"])
    assert code == 6
    assert "held by another tofcc command" in capsys.readouterr().err
    assert state.read_bytes() == before


# ---- the source guard of a deployment's front panel --------------------------------


def _deploy_with_unbound_port(tmp_path: Path, strict: bool | None) -> Path:
    """bfcc-two-tier-s1 neither trusts nor binds device port 2 (32/2)."""
    t = bfcc_target("s1", "bfcc-two-tier-s1.yaml")
    extra = {} if strict is None else {"strict_source_guard": strict}
    return write_deploy(tmp_path / "d.yaml", copy.deepcopy(t), **extra)


def test_a_front_panel_port_that_forwards_any_source_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _deploy_with_unbound_port(tmp_path, None)
    with caplog.at_level(logging.WARNING, logger="tofcc"):
        assert run(["ports", "--config", str(path)]) == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "source-guard-unbound" in w and "targets[0].front_panel" in w and "dev_ports=2" in w
        for w in warnings
    ), warnings


def test_strict_source_guard_refuses_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _deploy_with_unbound_port(tmp_path, True)
    for args in (["ports", "--config", str(path)], ["apply", str(path)]):
        assert run(args) == 2
        err = capsys.readouterr().err
        assert "d.yaml: targets[0].front_panel" in err and "2" in err, err


def test_the_shipped_deployments_bring_up_no_unguarded_port() -> None:
    from bfrt_controller.service import load_service_config

    root = Path(__file__).resolve().parents[2] / "deploy"
    for name in ("fleet.yaml", "model.yaml"):
        _, targets = load_service_config(root / name)
        assert all(not t.unguarded_ports for t in targets), name
