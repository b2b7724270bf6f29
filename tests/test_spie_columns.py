# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""S-PIE's sketch columns against the flows it must tell apart (issue 50).

The rule (COLUMNS_PER_FLOW columns a flow) comes from the reference model
itself: scripts/sketch_columns.py drives it with one 4x flow among N equal
ones at a congested S-PIE port. These tests hold the rule to the model: at
the columns the rule gives, the 4x flow is admitted only at Algorithm 2's
own share (as with the widest sketch); with a quarter of them, collisions
let it through whole.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from bfrt_controller.spie.config import COLUMNS_PER_FLOW, DEFAULT_CONFIG, SketchParams
from doubles.cli_run import out_of

REPO = Path(__file__).resolve().parents[1]


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "sketch_columns", REPO / "scripts" / "sketch_columns.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


sc = _script()


@pytest.mark.parametrize("flows", [16, 64])
def test_columns_the_rule_gives_hold_a_4x_flow_to_algorithm_2s_share(flows: int) -> None:
    """At the rule's columns the 4x flow is admitted as with the widest
    sketch the P4 compiles (no collisions among so few flows): Algorithm 2's
    own share, not more."""
    columns = SketchParams(expected_flows=flows).columns
    assert columns == COLUMNS_PER_FLOW * flows
    collision_free = sc.large_admitted_share(4096, flows, ratio=4, rounds=40)
    assert collision_free < 0.5
    share = sc.large_admitted_share(columns, flows, ratio=4, rounds=40)
    assert share == pytest.approx(collision_free, abs=0.03)


def test_a_quarter_of_the_columns_lets_the_4x_flow_through() -> None:
    flows = 64
    columns = COLUMNS_PER_FLOW * flows // 4
    assert sc.large_admitted_share(columns, flows, ratio=4, rounds=40) > 0.9


def test_expected_flows_beyond_the_sketch_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 4096"):
        SketchParams(expected_flows=513)


def test_check_refuses_columns_too_few_for_the_expected_flows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["sketch"].update(expected_flows=200, columns=1024)
    path = tmp_path / "spie.yaml"
    path.write_text(yaml.safe_dump(raw))
    code, _out, err = out_of(
        capsys,
        "--state",
        str(tmp_path / "s.yaml"),
        "--program",
        "spie",
        "check",
        "--config",
        str(path),
    )
    assert code == 2
    assert "sketch" in err and "expected_flows 200" in err
