# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A behaviour in the P4 but not in the model (or the reverse) is a bug.

These tests read each tna/ program's source and compare every table, key,
action, register and counter it declares with its reference model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hw_profiles import load_profile
from models.switch.p4_source import read_program
from models.switch.registry import PROGRAMS, make_model

REPO = Path(__file__).resolve().parents[1]
CASES = [(p, chip) for p in PROGRAMS for chip in ("tofino", "tofino2")]


@pytest.mark.parametrize(("program", "chip"), CASES)
def test_tables_match(program: str, chip: str) -> None:
    profile = load_profile(chip)
    p4 = read_program(REPO / "tna" / program / f"{program}.p4", profile)
    model = make_model(program, profile)
    assert set(p4.tables) == set(model.p4.tables)
    for name, t in p4.tables.items():
        m = model.p4.tables[name]
        assert [(k, kind) for k, kind in t.keys] == [(k.name, k.match) for k in m.keys.values()], (
            name
        )
        assert set(t.actions) == set(m.actions), name
        assert t.default_action == m.default[0], name
        for action in t.actions:
            if action != "NoAction":
                assert p4.actions[action] == list(m.actions[action].params), action


@pytest.mark.parametrize(("program", "chip"), CASES)
def test_registers_and_counters_match(program: str, chip: str) -> None:
    profile = load_profile(chip)
    p4 = read_program(REPO / "tna" / program / f"{program}.p4", profile)
    model = make_model(program, profile)
    assert p4.registers == {n: (r.width, r.size) for n, r in model.p4.registers.items()}
    assert p4.counters == {n: (c.size, c.kind) for n, c in model.p4.counters.items()}


def test_production_build_has_no_test_hook() -> None:
    profile = load_profile("tofino")
    with_hooks = read_program(REPO / "tna/pmqecn/pmqecn.p4", profile)
    without = read_program(REPO / "tna/pmqecn/pmqecn.p4", profile, test_hooks=False)
    for hook in (
        "SwitchEgress.queue_hook.queue_md_override",
        "SwitchIngress.clock.ingress_tstamp_override",
    ):
        assert hook in with_hooks.tables and hook not in without.tables
    # Nothing else differs, and every hook table is one build_p4.py leaves out.
    assert {t for t in with_hooks.tables if t.endswith("_override")} == set(
        with_hooks.tables
    ) - set(without.tables)
