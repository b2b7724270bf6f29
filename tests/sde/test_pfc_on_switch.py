# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 34 acceptance, through `tofcc` against a BF-Runtime switch (the fake
SDE): a lossless class whose CoS and iCoS disagree is refused naming both;
when they agree the backend writes tm.port.flowcontrol's cos_to_icos map
and never the read-only mode_rx; and `tofcc diff` after an apply shows no
difference although the PFC limit and the PPG hysteresis are not
multiples of the TM's 8-cell unit."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from bfrt_controller.backends import bfrt
from bfrt_controller.cli import run
from bfrt_controller.p4qcn.config import DEFAULT_CONFIG
from bfrt_controller.switch import IDENTITY_COS_TO_ICOS
from doubles import FakeBfrtGrpc
from hw_profiles import load_profile

TARGET = "grpc://localhost:50052"
RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeBfrtGrpc:
    f = FakeBfrtGrpc("p4qcn", load_profile("tofino"))
    monkeypatch.setattr(bfrt.client, "load_bfrt_client", lambda: f)
    return f


def tofcc(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """`tofcc` as a shell runs it: run() maps each error to its exit code."""
    argv = ["--state", str(tmp_path / "s.yaml"), "--target", TARGET, "--program", "p4qcn"]
    code = run([*argv, *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def config(tmp_path: Path, **pfc: object) -> Path:
    raw = copy.deepcopy(RAW)
    # xoff 182 and xon 163 (hysteresis 19): neither a multiple of 8 cells.
    raw["pfc"] = {
        "cos": 3,
        "ports": [4, 5],
        "xoff_cells": 182,
        "xon_cells": 163,
        "headroom_cells": 52,
        **pfc,
    }
    # PFC covers congestion point 4/0: its Q_max within Q_PFC - Q_flight = 182 - 52
    # (seed 003, 3.2.2), which the default 209 breaks.
    raw["queues"][0].update(q_min_cells=130, q_max_cells=130)
    raw["traffic_classes"] = [{"dscp": 26, "queue": 1, "icos": 3}]
    path = tmp_path / "p4qcn.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_cos_and_icos_that_disagree_are_refused_naming_both(
    fake: FakeBfrtGrpc, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = tofcc(tmp_path, capsys, "apply", str(config(tmp_path, icos=[0])))
    assert code == 2, out
    flat = " ".join(out.split())
    assert "pfc.icos" in flat and "iCoS [0]" in flat and "pfc.cos 3" in flat
    assert fake.writes() == []


def test_agreeing_cos_and_icos_write_the_map_and_no_mode_rx(
    fake: FakeBfrtGrpc, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = tofcc(tmp_path, capsys, "apply", str(config(tmp_path, icos=[3])))
    assert code == 0, out
    flowcontrol = [c for c in fake.writes() if c.table == "tf1.tm.port.flowcontrol"]
    assert len(flowcontrol) == 2  # ports 4 and 5
    for call in flowcontrol:
        assert "cos_to_icos" in call.fields and "mode_rx" not in call.fields
    for port in (4, 5):
        row = fake.tm_row("tm.port.flowcontrol", 0, port)
        assert (row["mode_tx"], row["cos_to_icos"]) == ("PFC", list(IDENTITY_COS_TO_ICOS))


def test_diff_after_apply_shows_nothing_with_limits_off_the_8_cell_grid(
    fake: FakeBfrtGrpc, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config(tmp_path)
    assert tofcc(tmp_path, capsys, "apply", str(path))[0] == 0
    # The switch holds what its registers can: 176 and 32, not 182 and 19.
    pool = fake.switch.state["tf1.tm.pool.app_pfc"][("IG_APP_POOL_0", 3)]
    ppg = fake.switch.state["tf1.tm.ppg.cfg"][(0, 5)]
    assert (pool, ppg["hysteresis_cells"]) == (176, 32)
    code, out = tofcc(tmp_path, capsys, "diff", "--config", str(path))
    assert code == 0, out
    assert "no changes" in out, out  # mirror sessions read back: nothing unknown either
