# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A config file is read once on its way to the switch (issue 45): one
parse per file per command, and the kind of file decided in one place."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bfrt_controller.cli import run as tofcc
from bfrt_controller.documents import DeploymentDocument, ProgramDocument, read_document
from hw_profiles import safe_yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many times each file was parsed."""
    counts: Counter[str] = Counter()
    real = safe_yaml.load_file

    def counting(path: Any, *args: Any, **kw: Any) -> Any:
        counts[Path(path).name] += 1
        return real(path, *args, **kw)

    monkeypatch.setattr(safe_yaml, "load_file", counting)
    yield counts


def test_apply_of_a_program_config_parses_it_once(
    tmp_path: Path, parses: Counter[str], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "cfg.yaml"
    shutil.copy(ROOT / "bfrt_controller" / "defaults" / "pmqecn.yaml", cfg)
    state = tmp_path / "state" / "s.yaml"
    assert tofcc(["--state", str(state), "apply", str(cfg)]) == 0, capsys.readouterr().err
    assert parses["cfg.yaml"] == 1


def test_apply_of_a_deployment_parses_it_and_each_config_once(
    tmp_path: Path, parses: Counter[str], capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("fleet.yaml", "bfcc-two-tier-s1.yaml", "bfcc-two-tier-s2.yaml"):
        shutil.copy(ROOT / "deploy" / name, tmp_path / name)
    deploy = tmp_path / "fleet.yaml"
    deploy.write_text(
        deploy.read_text()
        .replace("grpc://10.0.0.1:50052", "model")
        .replace("grpc://10.0.0.2:50052", "model")
    )
    assert tofcc(["apply", str(deploy)]) == 0, capsys.readouterr().err
    assert parses["fleet.yaml"] == 1
    assert parses["bfcc-two-tier-s1.yaml"] == parses["bfcc-two-tier-s2.yaml"] == 1


def test_check_and_diff_parse_once_too(
    tmp_path: Path, parses: Counter[str], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "cfg.yaml"
    shutil.copy(ROOT / "bfrt_controller" / "defaults" / "pmqecn.yaml", cfg)
    assert tofcc(["--config", str(cfg), "check", "--config", str(cfg)]) == 0
    assert parses["cfg.yaml"] == 1
    state = tmp_path / "state" / "s.yaml"
    assert tofcc(["--state", str(state), "diff", "--config", str(cfg)]) == 0
    assert parses["cfg.yaml"] == 2  # one per command
    capsys.readouterr()


def test_the_kind_of_file_is_decided_once() -> None:
    doc = read_document(ROOT / "deploy" / "model.yaml")
    assert isinstance(doc, DeploymentDocument) and doc.kind == "deployment file"
    assert [t.name for t in doc.targets]
    prog = read_document(ROOT / "bfrt_controller" / "defaults" / "bfcc.yaml")
    assert isinstance(prog, ProgramDocument) and prog.program.name == "bfcc"
    assert prog.config.program == "bfcc"


def test_a_deployment_as_global_config_names_its_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 43 made a deployment's target the switch a one-shot command works
    # on (it was refused as "a deployment file" before); a target it lacks is
    # still refused, naming the file and the targets it has.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    deploy = str(ROOT / "deploy" / "model.yaml")
    assert tofcc(["--config", deploy, "status"]) == 0
    assert tofcc(["--config", deploy, "--switch", "nope", "status"]) == 2
    err = capsys.readouterr().err
    assert "has no target 'nope' (it has model-pmqecn)" in err and "Traceback" not in err
