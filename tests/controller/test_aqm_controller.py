# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The AQM app (RED, CoDel) on the model backend: names as the model has
them, strict validation naming the field with nothing written, the entries
the data plane then applies, and `tofcc --program aqm`."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller.aqm import names as n
from bfrt_controller.aqm.app import QUEUES, AqmApp
from bfrt_controller.aqm.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.aqm.levels import codel_entries, red_entries
from bfrt_controller.cli import run
from bfrt_controller.errors import ConfigError
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.switch.registry import make_model

RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())


def _raw(index: int = 0, **queue: object) -> dict[str, Any]:
    raw = copy.deepcopy(RAW)
    raw["queues"][index].update(queue)
    return raw


def _app(raw: dict[str, Any] | None = None) -> AqmApp:
    return AqmApp(FlakyModelSwitch("aqm"), parse_config(raw or RAW))


def test_names_exist_in_the_model() -> None:
    model = make_model("aqm", load_profile("tofino"))
    assert set(n.ALL_TABLES) <= set(model.p4.tables)
    assert set(n.ALL_REGISTERS) <= set(model.p4.registers)
    assert set(n.ALL_COUNTERS) <= set(model.p4.counters)
    for action in (n.SET_RED, n.SET_CODEL, n.SET_LEVEL, n.SET_DUE):
        assert any(action in t.actions for t in model.p4.tables.values()), action


def test_default_config_writes_both_curves() -> None:
    app = _app()
    app.push_all()
    rows = [r for r in app.status() if r["section"] == QUEUES]
    red = len(red_entries(95, 285, 0.02, 9, 64)) + 1
    codel = len(codel_entries(100_000, 64)) + 1
    assert [(r["mode"], r["entries"]) for r in rows] == [
        ("red", f"{red}/{red}"),
        ("codel", f"{codel}/{codel}"),
    ]
    model = app.switch.model  # type: ignore[attr-defined]
    entry = model.table(n.AQM_QUEUE).lookup({n.K_EGRESS_PORT: 4, n.K_EGRESS_QID: 0})
    assert entry.action == n.SET_CODEL
    assert entry.data == {
        "slot": 1,
        "curve": 0,
        "ecn": 0,
        "target_ns": 5_000_000,
        "interval_ticks": 1_562_500,
        "tail_step_ticks": 195_313,  # 100 ms / sqrt(64) = 12.5 ms, rounded up to 64 ns
    }
    red_entry = model.table(n.AQM_QUEUE).lookup({n.K_EGRESS_PORT: 3, n.K_EGRESS_QID: 0})
    assert red_entry.data == {"slot": 0, "curve": 0, "ecn": 0, "block_last": 511}


@pytest.mark.parametrize(
    ("index", "change", "field"),
    [
        (0, {"min_th_cells": 300}, "queues[0]"),  # min_th above max_th
        (0, {"max_p": 1.5}, "queues[0].max_p"),
        (0, {"max_p": 0}, "queues[0].max_p"),
        (0, {"w_q_shift": 13}, "queues[0].w_q_shift"),
        (0, {"port": 999}, "queues[0].port"),
        (0, {"queue": 200}, "queues[0].queue"),
        (0, {"mode": "fq_codel"}, "queues[0].mode"),  # pie is a mode since issue 51
        (0, {"min_th_cells": 600_000, "max_th_cells": 700_000}, "queues[0].min_th_cells"),
        (1, {"target_us": -1}, "queues[1].target_us"),
        (1, {"target_us": 3_000_000}, "queues[1].target_us"),
        (1, {"interval_us": 0}, "queues[1].interval_us"),
        (1, {"count_cap": 0}, "queues[1].count_cap"),
        (1, {"count_cap": 257}, "queues[1].count_cap"),
        (1, {"port": 3}, "queues[1]"),  # the same queue as queues[0]
    ],
)
def test_bad_input_is_refused_naming_the_field(
    index: int, change: dict[str, object], field: str
) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(_raw(index, **change), "cfg.yaml")
    assert field in str(exc.value), str(exc.value)


def test_queues_with_equal_settings_share_one_curve() -> None:
    """Thirty-two CoDel queues with one setting cost one curve."""
    raw = copy.deepcopy(RAW)
    raw["queues"] = [{"port": 4, "queue": qid, "mode": "codel"} for qid in range(32)] + [
        {"port": 3, "queue": 0, "mode": "codel", "interval_us": 50_000}
    ]
    app = _app(raw)
    app.push_all()
    model = app.switch.model  # type: ignore[attr-defined]
    per_curve = len(codel_entries(100_000, 64))
    assert len(model.table(n.CODEL_DUE).entries) == per_curve + len(codel_entries(50_000, 64))
    curves = {
        model.table(n.AQM_QUEUE).lookup({n.K_EGRESS_PORT: 4, n.K_EGRESS_QID: qid}).data["curve"]
        for qid in range(32)
    }
    assert curves == {0}
    last = model.table(n.AQM_QUEUE).lookup({n.K_EGRESS_PORT: 3, n.K_EGRESS_QID: 0})
    assert last.data["curve"] == 1 and last.data["slot"] == 32


def test_too_many_codel_entries_refused_before_any_write() -> None:
    raw = copy.deepcopy(RAW)
    raw["queues"] = [
        {"port": 4, "queue": i, "mode": "codel", "count_cap": 256, "interval_us": 100_000 - i}
        for i in range(4)
    ]
    with pytest.raises(ConfigError) as exc:
        parse_config(raw, "cfg.yaml")
    assert "codel_due" in str(exc.value) and "queues" in str(exc.value)


def test_host_port_without_binding_refused() -> None:
    raw = copy.deepcopy(RAW)
    raw["source_bindings"] = [b for b in raw["source_bindings"] if b["port"] != 2]
    with pytest.raises(ConfigError) as exc:
        parse_config(raw, "cfg.yaml")
    assert "routes[1].port" in str(exc.value)


def test_ecn_flag_reaches_the_entry() -> None:
    app = _app(_raw(1, ecn=True))
    app.push_all()
    model = app.switch.model  # type: ignore[attr-defined]
    entry = model.table(n.AQM_QUEUE).lookup({n.K_EGRESS_PORT: 4, n.K_EGRESS_QID: 0})
    assert entry.data["ecn"] == 1


def test_cli_status_and_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = str(tmp_path / "state.json")
    base = ["--program", "aqm", "--state", state]
    assert run([*base, "status"]) == 0
    out = capsys.readouterr().out
    assert "codel" in out and "red" in out
    good = tmp_path / "aqm.yaml"
    good.write_text(yaml.safe_dump(_raw(1, count_cap=16)))
    assert run([*base, "apply", str(good)]) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(_raw(0, max_p=2)))
    assert run([*base, "apply", str(bad)]) == 2
    assert "max_p" in capsys.readouterr().err


def test_set_changes_one_curve_in_one_batch() -> None:
    app = _app()
    app.push_all()
    model = app.switch.model  # type: ignore[attr-defined]
    changes = app.set_queues({(4, 0): {"count_cap": 16, "target_us": 2000.0}})
    assert {(c.queue, c.what, c.new) for c in changes} == {
        ("4/0", "count_cap", 16),
        ("4/0", "target_us", 2000.0),
    }
    entry = model.table(n.AQM_QUEUE).lookup({n.K_EGRESS_PORT: 4, n.K_EGRESS_QID: 0})
    assert entry.data["target_ns"] == 2_000_000
    # The old curve's 1172 entries are gone, the new curve's 317 written.
    assert len(model.table(n.CODEL_DUE).entries) == len(codel_entries(100_000, 16))
    assert app.live_state() == {"4/0": {"count_cap": 16, "target_us": 2000.0}}
    assert app.set_queues({(4, 0): {"count_cap": 16}}) == []


@pytest.mark.parametrize(
    ("update", "field"),
    [
        ({(3, 0): {"max_p": 2.0}}, "set 3/0 max_p"),
        ({(3, 0): {"min_th_cells": 400}}, "set 3/0"),
        ({(4, 0): {"count_cap": 0}}, "set 4/0 count_cap"),
        ({(4, 0): {"gentle": True}}, "4/0 gentle"),
        ({(9, 0): {"max_p": 0.1}}, "queue"),
    ],
)
def test_bad_set_names_the_field_and_writes_nothing(
    update: dict[tuple[int, int], dict[str, object]], field: str
) -> None:
    app = _app()
    app.push_all()
    model = app.switch.model  # type: ignore[attr-defined]
    before = len(model.table(n.RED_LEVEL).entries), len(model.table(n.CODEL_DUE).entries)
    with pytest.raises(ConfigError) as exc:
        app.set_queues(update)
    assert field in str(exc.value), str(exc.value)
    after = len(model.table(n.RED_LEVEL).entries), len(model.table(n.CODEL_DUE).entries)
    assert after == before and app.live_state() == {}


def test_cli_set_persists_in_the_model_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "state.json")
    base = ["--program", "aqm", "--state", state]
    assert run([*base, "set", "max_p=0.1", "--queue", "3/0"]) == 0
    assert run([*base, "set", "max_p=x"]) == 2
    assert run([*base, "set", "ecn=maybe"]) == 2
    assert run([*base, "set", "max_p=5", "--queue", "3/0"]) != 0
    # Each run restored the saved change (restore_live) before its own.
    assert run([*base, "set", "max_th_cells=300", "--queue", "3/0"]) == 0
    saved = yaml.safe_load(Path(state).read_text())
    assert saved["live"] == {"3/0": {"max_p": 0.1, "max_th_cells": 300}}


def test_set_writes_each_field_only_to_queues_whose_mode_uses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "state.json")
    base = ["--program", "aqm", "--state", state]
    assert run([*base, "set", "max_p=0.1", "target_us=2000"]) == 0
    saved = yaml.safe_load(Path(state).read_text())
    # max_p to the RED queue only, target_us to the CoDel queue only.
    assert saved["live"] == {"3/0": {"max_p": 0.1}, "4/0": {"target_us": 2000.0}}
    capsys.readouterr()
    assert run([*base, "set", "target_us=3000", "--queue", "3/0"]) == 2
    err = capsys.readouterr()
    assert "queue 3/0 runs red, which does not use target_us" in err.out + err.err
    assert yaml.safe_load(Path(state).read_text())["live"] == saved["live"]


def test_app_set_refuses_a_field_the_queues_mode_ignores() -> None:
    app = _app()
    app.push_all()
    with pytest.raises(ConfigError, match="set 4/0 max_p: queue 4/0 runs codel"):
        app.set_queues({(4, 0): {"max_p": 0.5}})


@pytest.mark.parametrize(
    ("index", "field", "value"),
    [(1, "min_th_cells", 50), (1, "max_p", 0.5), (0, "target_us", 2000.0)],
)
def test_a_setting_of_the_other_mechanism_is_refused(index: int, field: str, value: object) -> None:
    """A RED threshold on a CoDel queue (or a CoDel target on a RED queue)
    would be kept and never read: refused, naming the queue and the field."""
    with pytest.raises(ConfigError, match=rf"queues\[{index}\]: {field} is a"):
        parse_config(_raw(index, **{field: value}), "cfg.yaml")


def test_apply_refuses_min_th_on_codel_and_keeps_the_state(tmp_path: Path) -> None:
    state = tmp_path / "s.yaml"
    assert run(["--program", "aqm", "--state", str(state), "status"]) == 0
    before = state.read_bytes() if state.exists() else None
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(_raw(1, min_th_cells=50)))
    assert run(["--program", "aqm", "--state", str(state), "apply", str(cfg)]) == 2
    assert (state.read_bytes() if state.exists() else None) == before


def test_the_saved_state_round_trips_with_both_modes() -> None:
    """Defaults of the other mode are no setting: the state file, which
    holds every field, reads back."""
    cfg = parse_config(RAW)
    assert parse_config(cfg.model_dump(mode="json")) == cfg
