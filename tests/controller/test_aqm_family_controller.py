# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The AQM app's family (issue 51) on the family's model: a queue switched
live to another mechanism in one batch with its state cleared, DualPI2's
pair (entries, classification, strict priority), and `tofcc --program aqm
set --queue 4/0 mechanism=pie` with `status --json`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller.aqm import names as n
from bfrt_controller.aqm.app import QUEUES, AqmApp
from bfrt_controller.aqm.batch import switch_batch
from bfrt_controller.aqm.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.aqm.pi import PiGains, pi_terms_entries
from bfrt_controller.cli import run
from bfrt_controller.errors import ConfigError
from bfrt_controller.switch import EntryWrite, RegisterWrite
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.switch.aqm import Aqm

RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())


def _family_switch() -> FlakyModelSwitch:
    return FlakyModelSwitch("aqm")


def _app(raw: dict[str, Any] | None = None) -> AqmApp:
    app = AqmApp(_family_switch(), parse_config(raw or RAW))
    app.push_all()
    return app


def _entry(app: AqmApp, port: int, queue: int) -> Any:
    model = app.switch.model  # type: ignore[attr-defined]
    return model.table(n.AQM_QUEUE).lookup({n.K_EGRESS_PORT: port, n.K_EGRESS_QID: queue})


def test_family_names_exist_in_the_family_model() -> None:
    model = Aqm(load_profile("tofino"))
    tables = (n.AQM_QUEUE, n.RED_LEVEL, n.CODEL_DUE, n.PI_TERMS, n.L4S_QUEUE)
    assert set(tables) <= set(model.p4.tables)
    assert set(n.SLOT_REGISTERS) == set(model.p4.registers)
    actions = {a for t in model.p4.tables.values() for a in t.actions}
    for action in (n.SET_PIE, n.SET_DCTCP, n.SET_DADCTCP, n.SET_DUALPI2_C, n.SET_DUALPI2_L,
                   n.NO_AQM, n.SET_PI_TERMS, n.SET_L4S_QUEUE):  # fmt: skip
        assert action in actions, action


def test_switch_to_pie_is_one_batch_that_clears_the_slot() -> None:
    """4/0 runs CoDel in slot 1 with a dropping state; `mechanism=pie`
    rewrites its entry (never deleting it), zeroes slot 1 in every register,
    writes PIE's curve and deletes CoDel's, in one batch; 3/0 keeps RED."""
    app = _app()
    model = app.switch.model  # type: ignore[attr-defined]
    model.register(n.CODEL_COUNT).write(1, 9)
    model.register(n.PI_PROB).write(1, 123456)  # a stale stint of PIE in the slot
    batches = len(app.switch.batches)  # type: ignore[attr-defined]
    changes = app.set_queues({(4, 0): {"mechanism": "pie", "target_delay_us": 5000.0}})
    assert len(app.switch.batches) == batches + 1  # type: ignore[attr-defined]
    assert ("4/0", "mode", "codel", "pie") in {(c.queue, c.what, c.old, c.new) for c in changes}
    entry = _entry(app, 4, 0)
    assert entry.action == n.SET_PIE
    assert entry.data["slot"] == 1 and entry.data["mark_max_level"] == 3277
    assert entry.data["minus_t_update_ticks"] == 2**32 - 234375
    assert all(model.register(r).read(1) == 0 for r in n.SLOT_REGISTERS)
    assert len(model.table(n.CODEL_DUE).entries) == 0
    assert len(model.table(n.PI_TERMS).entries) == len(pi_terms_entries(PiGains(0.125, 1.25, 5000)))
    assert _entry(app, 3, 0).action == n.SET_RED
    assert app.live_state() == {"4/0": {"mode": "pie", "target_delay_us": 5000.0}}


def test_the_batch_never_leaves_a_queue_without_its_entry() -> None:
    """The order a switch's writes go in: the new curve, the slot's clears,
    the queue's entry modified in place, then the stale curve's deletes."""
    app = _app()
    old = app._writes_for(app.effective)
    new_cfg = app._with({"4/0": {"mode": "pie"}}, "set")
    batch = switch_batch(old, app._writes_for(new_cfg), [(1, "codel", "pie")])
    kinds = []
    for w in batch:
        if isinstance(w, RegisterWrite):
            kind = "clear"
        elif isinstance(w, EntryWrite) and w.op == "delete":
            assert w.table != n.AQM_QUEUE
            kind = "delete"
        elif isinstance(w, EntryWrite) and w.table == n.AQM_QUEUE:
            kind = "entry"
        else:
            kind = "curve"
        if not kinds or kinds[-1] != kind:
            kinds.append(kind)
    assert kinds == ["curve", "clear", "entry", "delete"]


def test_settings_of_the_old_mechanism_do_not_carry_over() -> None:
    raw = copy.deepcopy(RAW)
    raw["queues"][0].update(max_p=0.1)
    app = _app(raw)
    app.set_queues({(3, 0): {"mechanism": "dctcp", "k_cells": 200}})
    assert _entry(app, 3, 0).data == {"ecn": 0, "k_cells": 200}
    with pytest.raises(ConfigError) as exc:
        app.set_queues({(3, 0): {"max_p": 0.2}})
    assert "3/0 max_p" in str(exc.value) and "dctcp" in str(exc.value)


def test_dualpi2_pair_entries_classification_and_priority() -> None:
    app = _app()
    app.set_queues({(4, 0): {"mechanism": "dualpi2", "l_queue": 1}})
    model = app.switch.model  # type: ignore[attr-defined]
    assert _entry(app, 4, 0).action == n.SET_DUALPI2_C
    assert _entry(app, 4, 1).data == {"slot": 1, "step_ns": 1_000_000}
    l4s = model.table(n.L4S_QUEUE)
    qids = {
        ecn: l4s.lookup({n.K_UCAST_EGRESS_PORT: 4, n.K_IPV4_ECN: ecn}).data["qid"]
        for ecn in range(4)
    }
    assert qids == {0: 0, 1: 1, 2: 0, 3: 1}
    prio = app.switch.tm_priorities  # type: ignore[attr-defined]
    assert prio[(4, 1)] > prio[(4, 0)]
    # Back to CoDel: the L queue's entry, classification and priority go.
    app.set_queues({(4, 0): {"mechanism": "codel"}})
    assert _entry(app, 4, 1).action == n.NO_AQM  # the table's default
    assert len(l4s.entries) == 0 and prio[(4, 1)] == 0


@pytest.mark.parametrize(
    ("update", "field"),
    [
        ({(4, 0): {"mechanism": "dualpi2"}}, "set 4/0"),  # no l_queue
        ({(4, 0): {"mechanism": "dualpi2", "l_queue": 0}}, "set 4/0"),  # itself
        ({(4, 0): {"mechanism": "dualpi2", "l_queue": 200}}, "l_queue"),
        ({(4, 0): {"mechanism": "dadctcp", "k1_cells": 50, "k2_cells": 40}}, "set 4/0"),
        ({(4, 0): {"mechanism": "pie", "min_th_cells": 10}}, "set 4/0 min_th_cells"),
        ({(4, 0): {"mechanism": "pie", "alpha_per_s": 0}}, "set 4/0 alpha_per_s"),
    ],
)
def test_bad_switch_names_the_field_and_writes_nothing(
    update: dict[tuple[int, int], dict[str, object]], field: str
) -> None:
    app = _app()
    batches = len(app.switch.batches)  # type: ignore[attr-defined]
    with pytest.raises(ConfigError) as exc:
        app.set_queues(update)
    assert field in str(exc.value), str(exc.value)
    assert len(app.switch.batches) == batches  # type: ignore[attr-defined]
    assert _entry(app, 4, 0).action == n.SET_CODEL and app.live_state() == {}


def test_cli_switch_to_pie_then_status_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The acceptance: set --queue 4/0 mechanism=pie, then status --json
    shows pie on 4/0 and RED still on 3/0."""
    base = ["--program", "aqm", "--state", str(tmp_path / "state.json")]
    assert run([*base, "set", "--queue", "4/0", "mechanism=pie", "target_delay_us=5000"]) == 0
    capsys.readouterr()
    assert run([*base, "status", "--json"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if r.get("section") == QUEUES]
    assert {(r["port"], r["queue"]): r["mode"] for r in rows} == {(3, 0): "red", (4, 0): "pie"}
    pie = next(r for r in rows if r["port"] == 4)
    assert pie["target_delay_us"] == 5000.0 and pie["entries"] == "703/703"
    assert run([*base, "set", "mechanism=pie"]) == 2  # a switch names its queues
    assert "--queue" in capsys.readouterr().err


def test_cli_refuses_an_unknown_mechanism(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--program", "aqm", "--state", str(tmp_path / "state.json")]
    assert run([*base, "set", "--queue", "4/0", "mechanism=fq_codel"]) == 2
    assert "mechanism" in capsys.readouterr().err


def test_cli_diff_names_the_queues_mechanism(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config that switches 3/0 from RED to PIE: diff's field row names
    the mechanism, and the entry row shows RED's own parameters as held."""
    state = str(tmp_path / "state.json")
    cfg = tmp_path / "aqm.yaml"
    cfg.write_text(DEFAULT_CONFIG.read_text())
    assert run(["--program", "aqm", "--state", state, "apply", str(cfg)]) == 0
    cfg.write_text(DEFAULT_CONFIG.read_text().replace("mode: red", "mode: pie", 1))
    capsys.readouterr()
    run(["--program", "aqm", "--state", state, "diff", "--config", str(cfg), "--json"])
    got = json.loads(capsys.readouterr().out)["model"]
    assert got["fields"] == [
        {"change": "change", "field": "queues[3/0].mode", "current": "red", "intended": "pie"}
    ]
    entry = next(d for d in got["differences"] if d["table"] == n.AQM_QUEUE)
    assert entry["current"].startswith(n.SET_RED) and "None" not in entry["current"]
    assert "block_last=" in entry["current"]
