# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every example config validates and applies cleanly to the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import load_config
from hw_profiles import load_profile

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("pmqecn*.yaml"))


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_applies(path: Path) -> None:
    cfg = load_config(path)
    app = PmqecnApp(ModelSwitch("pmqecn", load_profile(cfg.chip)), cfg)
    app.push_all()
    rows = [r for r in app.status() if r["section"] == "classes"]
    assert [r["threshold_cells"] for r in rows] == [c.threshold_cells for c in cfg.classes]
