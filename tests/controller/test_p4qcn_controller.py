# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The P4QCN app on the model backend: Eq. 1 as the data plane applies it,
strict validation, one batch per change, nothing half-applied, and the
`thresholds` and `set` commands."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bfrt_controller.cli import run
from bfrt_controller.errors import ConfigError, WriteError
from bfrt_controller.p4qcn import names as n
from bfrt_controller.p4qcn.app import QUEUES, P4qcnApp
from bfrt_controller.p4qcn.config import DEFAULT_CONFIG, interval_ticks, parse_config
from bfrt_controller.p4qcn.levels import (
    LEVEL_ALWAYS,
    eq1_probability,
    level_of,
    range_prefixes,
    ternary_entries,
)
from bfrt_controller.switch import EntryWrite, Write
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.baselines.p4qcn_cp import P4qcnCpParams, feedback_probability
from models.p4qcn_thresholds import p4qcn_thresholds
from models.switch.core import Match
from models.switch.headers import ECN_CE, UDP_PORT_TOFCC_FEEDBACK

RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())


def _cfg(**queue: object) -> dict[str, object]:
    raw = copy.deepcopy(RAW)
    raw["queues"][0].update(queue)
    return raw


def _app(raw: dict[str, object] | None = None) -> P4qcnApp:
    a = P4qcnApp(FlakyModelSwitch("p4qcn"), parse_config(raw or RAW))
    a.push_all()
    return a


def _level(app: P4qcnApp, port: int, queue: int, depth: int) -> int:
    model = app.switch.model  # type: ignore[attr-defined]
    r = model.table(n.FEEDBACK_PROBABILITY).lookup(
        {n.K_EGRESS_PORT: port, n.K_EGRESS_QID: queue, n.K_DEPTH_CELLS: depth}
    )
    return int(r.data["level"]) if r.hit else 0


def test_names_exist_in_the_model() -> None:
    model = FlakyModelSwitch("p4qcn").model
    for t in n.ALL_TABLES:
        assert t in model.p4.tables
    for r in n.ALL_REGISTERS:
        assert r in model.p4.registers
    for c in n.ALL_COUNTERS:
        assert c in model.p4.counters


@pytest.mark.parametrize(("q_min", "q_max"), [(100, 140), (8, 16), (11, 11), (0, 3)])
def test_levels_follow_eq1_cell_by_cell(q_min: int, q_max: int) -> None:
    """With a step per cell, the level the data plane reads at every depth is
    Eq. 1's probability x 32768, and the baseline model's Eq. 1 agrees."""
    app = _app(_cfg(q_min_cells=q_min, q_max_cells=q_max))
    params = P4qcnCpParams(q_min=q_min, q_max=q_max, q_pfc=q_max)
    for depth in [*range(0, q_max + 5), 1000, 2**19 - 1, 2**32 - 1]:
        expected = level_of(feedback_probability(depth, params))
        assert _level(app, 4, 0, depth) == expected, depth


def test_buckets_never_exceed_eq1() -> None:
    """1000 cells between Q_min and Q_max in 64 steps: each bucket reads its
    lowest cell's level, so never more than Eq. 1 and within one bucket's
    slope of it; Q_max and above always."""
    app = _app(_cfg(q_min_cells=1000, q_max_cells=2000))
    width = -(-999 // 64)
    for depth in range(990, 2010):
        exact = level_of(eq1_probability(depth, 1000, 2000, 1 / 1000))
        got = _level(app, 4, 0, depth)
        assert got <= exact
        assert exact - got <= round(width / 1000 * LEVEL_ALWAYS) + 1
    assert _level(app, 4, 0, 2000) == LEVEL_ALWAYS


def test_alpha_reaching_one_before_q_max() -> None:
    # alpha 0.25 per cell: P = 1 from Q_min + 4 on, though Q_max is further.
    app = _app(_cfg(q_min_cells=10, q_max_cells=40, alpha_per_cell=0.25))
    assert [_level(app, 4, 0, d) for d in (10, 11, 13, 14, 30)] == [
        0,
        8192,
        24576,
        LEVEL_ALWAYS,
        LEVEL_ALWAYS,
    ]


def test_range_prefixes_cover_exactly() -> None:
    for lo, hi in [(0, 0), (5, 17), (16, 31), (210, 2**32 - 1), (1, 2**32 - 2)]:
        covered = 0
        for value, mask in range_prefixes(lo, hi):
            size = (~mask & 0xFFFFFFFF) + 1
            assert value & ~mask & 0xFFFFFFFF == 0
            assert lo <= value and value + size - 1 <= hi
            covered += size
        assert covered == hi - lo + 1


def test_pushed_state_sends_feedback_and_marks() -> None:
    """The controller's writes make the program do Eq. 1: a packet to the
    receiver through a queue above Q_max sends feedback to its sender; in
    three-point mode it is CE-marked instead."""
    app = _app()
    model = app.switch.model  # type: ignore[attr-defined]
    model.table("SwitchEgress.queue_hook.queue_md_override").add(
        {"eg_intr_md.egress_port": Match(4)},
        "SwitchEgress.queue_hook.inject",
        {"depth_cells": 210, "sojourn_ns": 0},
    )
    pkt = bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.1.1", dst="10.0.4.4", tos=2)
        / UDP(sport=5000, dport=6000)
    )
    out = {o.port: o.data for o in model.send(1, pkt)}
    assert set(out) == {1, 4}
    fb = Ether(out[1])
    assert fb[IP].dst == "10.0.1.1" and fb[IP].tos & 3 == ECN_CE
    assert fb[UDP].dport == UDP_PORT_TOFCC_FEEDBACK
    # A sender beyond the uplink: the feedback goes back out of the uplink,
    # to the MAC the packet came from.
    remote = bytes(
        Ether(dst="02:00:00:00:00:05", src="00:00:00:00:05:05")
        / IP(src="10.9.0.1", dst="10.0.4.4")
        / UDP(sport=5000, dport=6000)
    )
    out = {o.port: o.data for o in model.send(5, remote)}
    assert set(out) == {4, 5}
    assert Ether(out[5]).dst == "00:00:00:00:05:05" and Ether(out[5])[IP].dst == "10.9.0.1"
    app.set_queues({(4, 0): {"mode": "three_point"}})
    out = {o.port: o.data for o in model.send(1, pkt)}
    assert set(out) == {4} and Ether(out[4])[IP].tos & 3 == ECN_CE


def test_set_is_one_batch_and_drops_stale_ranges() -> None:
    app = _app(_cfg(q_min_cells=100, q_max_cells=140))
    switch = app.switch
    assert isinstance(switch, FlakyModelSwitch)
    before = len(switch.batches)
    changes = app.set_queues({(4, 0): {"q_min_cells": 50, "feedback_interval_us": 5.0}})
    assert len(switch.batches) == before + 1
    assert {c.what for c in changes} == {"q_min_cells", "feedback_interval_us"}
    model = switch.model
    entries = model.table(n.FEEDBACK_PROBABILITY).entries
    assert len(entries) == len(ternary_entries(50, 140, None, 64))
    assert {e.data["feedback_interval_ticks"] for e in entries} == {interval_ticks(5.0)}
    assert _level(app, 4, 0, 51) == level_of(1 / 90)


def test_set_all_or_none() -> None:
    app = _app(_cfg(q_min_cells=100, q_max_cells=140))
    switch = app.switch
    assert isinstance(switch, FlakyModelSwitch)
    before_batches = list(switch.batches)
    before_entries = list(switch.model.table(n.FEEDBACK_PROBABILITY).entries)
    for bad, field in [
        ({"q_min_cells": 200}, "q_min_cells 200 exceeds"),
        ({"q_max_cells": 2**19}, "can never be reached"),
        ({"mode": "four_point"}, "mode"),
        ({"feedback_interval_us": 0.0}, "feedback_interval_us"),
        ({"alpha_per_cell": 0.5}, "not settable"),
    ]:
        with pytest.raises(ConfigError, match=field):
            app.set_queues({(4, 0): bad})
    with pytest.raises(ConfigError, match="no congestion point 9/0"):
        app.set_queues({(9, 0): {"q_min_cells": 1}})
    assert switch.batches == before_batches
    assert switch.model.table(n.FEEDBACK_PROBABILITY).entries == before_entries
    assert app.live["4/0"].q_min_cells == 100


def test_refused_write_keeps_the_old_state() -> None:
    class Refusing(FlakyModelSwitch):
        def write(self, writes: list[Write]) -> None:  # type: ignore[override]
            if any(isinstance(w, EntryWrite) and w.op == "delete" for w in writes):
                raise WriteError(0, "delete", "refused")
            super().write(writes)

    app = P4qcnApp(Refusing("p4qcn"), parse_config(_cfg(q_min_cells=100, q_max_cells=140)))
    app.push_all()
    with pytest.raises(WriteError):
        app.set_queues({(4, 0): {"q_min_cells": 120}})
    assert app.live["4/0"].q_min_cells == 100


def test_table_budget_is_checked_before_writing() -> None:
    raw = copy.deepcopy(RAW)
    raw["levels"] = {"max_steps": 256}
    raw["queues"] = [
        {"port": 4, "queue": q, "q_min_cells": 1, "q_max_cells": 2**19 - 1} for q in range(8)
    ]
    with pytest.raises(ConfigError, match="feedback_probability entries"):
        parse_config(raw, "cfg.yaml")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"queues": [{"port": 4, "queue": 0, "q_min_cells": 9, "q_max_cells": 8}]}, "queues.0"),
        ({"queues": [{"port": 4, "queue": 32, "q_min_cells": 1, "q_max_cells": 8}]}, "queue"),
        ({"queues": [{"port": 68, "queue": 0, "q_min_cells": 1, "q_max_cells": 8}]}, "port"),
        (
            {
                "queues": [
                    {"port": 4, "queue": 0, "q_min_cells": 1, "q_max_cells": 8},
                    {"port": 4, "queue": 0, "q_min_cells": 1, "q_max_cells": 9},
                ]
            },
            "queues\\[1\\]",
        ),
        ({"ports": [{"port": 1, "feedback_session": 1016}]}, "feedback_session"),
        ({"source_bindings": []}, "source_bindings|bound"),
        ({"levels": {"max_steps": 0}}, "max_steps"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_strict_validation_names_the_field(change: dict[str, object], field: str) -> None:
    raw = copy.deepcopy(RAW)
    raw.update(change)
    with pytest.raises(ConfigError, match=field):
        parse_config(raw, "cfg.yaml")


def test_apply_thresholds_sets_q_max_and_lowers_q_min() -> None:
    # 100G, 10 m: Q_P4QCN clamped from 344 to Q_PFC - Q_flight = 388 - 172 = 216.
    app = _app(_cfg(q_min_cells=300, q_max_cells=400))
    t = p4qcn_thresholds(load_profile("tofino"), 100, 10.0)
    app.apply_thresholds(t)
    assert (app.live["4/0"].q_min_cells, app.live["4/0"].q_max_cells) == (216, 216)
    assert _level(app, 4, 0, 216) == 0 and _level(app, 4, 0, 217) == LEVEL_ALWAYS


def test_apply_thresholds_refused_below_the_configured_pfc_threshold() -> None:
    """The config's own Q_PFC counts too: with xoff at 300 cells a Q_max of
    216 leaves 84 < Q_flight 172 for what is in flight, so PFC would pause
    the link before P4QCN's feedback takes effect; nothing is written."""
    raw = copy.deepcopy(RAW)
    # A lossless class (DSCP 26 -> queue 0, iCoS 3) so PFC has packets to pause.
    raw["traffic_classes"] = [{"dscp": 26, "queue": 0, "icos": 3}]
    raw["pfc"] = {"ports": [4], "xoff_cells": 300, "headroom_cells": 172}
    # Within the config's own bound, 300 - 172 = 128, so the config loads.
    raw["queues"][0].update(q_min_cells=100, q_max_cells=100)
    app = _app(raw)
    before = app.live["4/0"]
    t = p4qcn_thresholds(load_profile("tofino"), 100, 10.0)
    with pytest.raises(ConfigError, match=r"Q_P4QCN 216 .* 300 - 172 = 128"):
        app.apply_thresholds(t)
    assert app.live["4/0"] == before
    raw["pfc"]["xoff_cells"] = 388
    app = _app(raw)
    app.apply_thresholds(t)
    assert app.live["4/0"].q_max_cells == 216


def _pfc_on_the_cp(q_max: int, **pfc: object) -> dict[str, object]:
    """The default congestion point 4/0, lossless: PFC on its port and queue
    with Q_PFC (xoff) 182 and Q_flight (headroom) 52 cells, so
    Q_PFC - Q_flight = 130."""
    raw = _cfg(q_min_cells=min(q_max, 100), q_max_cells=q_max)
    raw["traffic_classes"] = [{"dscp": 26, "queue": 0, "icos": 3}]
    raw["pfc"] = {
        "cos": 3,
        "icos": [3],
        "ports": [4, 5],
        "queues": [0],
        "xoff_cells": 182,
        "headroom_cells": 52,
        **pfc,
    }
    return raw


def _write(tmp_path: Path, raw: dict[str, object], name: str = "p4qcn.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def test_check_refuses_q_max_above_q_pfc_minus_q_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 47: Q_max 209 with PFC at xoff 182 and headroom 52 on the
    congestion point's own queue breaks Q_P4QCN <= Q_PFC - Q_flight (seed
    003, 3.2.2): exit 2, one line naming the file, field, queue and bound."""
    path = _write(tmp_path, _pfc_on_the_cp(209))
    assert run(["--program", "p4qcn", "check", "--config", str(path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    err = lines[0]
    assert f"{path}: queues[0].q_max_cells" in err
    assert "queue 4/0" in err
    assert "Q_P4QCN 209 cells exceeds Q_PFC - Q_flight = 182 - 52 = 130" in err
    assert "Q_PFC is pfc.xoff_cells, Q_flight pfc.headroom_cells" in err


@pytest.mark.parametrize(
    ("q_max", "pfc", "code"),
    [
        (130, {}, 0),  # exactly Q_PFC - Q_flight
        (131, {}, 2),  # one cell over
        (209, {"queues": [1]}, 0),  # PFC stops queue 1 only: 4/0 is not lossless
        (209, {"ports": [5]}, 0),  # nor PFC on another port
        (209, {"generate": False}, 0),  # no pause is ever sent: xoff is no threshold
        (209, {"xoff_cells": 261}, 0),  # a Q_PFC with room: 261 - 52 = 209
    ],
)
def test_the_pfc_bound_holds_for_the_queues_pfc_covers(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    q_max: int,
    pfc: dict[str, object],
    code: int,
) -> None:
    path = _write(tmp_path, _pfc_on_the_cp(q_max, **pfc))
    assert run(["--program", "p4qcn", "check", "--config", str(path)]) == code
    assert ("Q_PFC - Q_flight" in capsys.readouterr().err) == (code == 2)


def test_set_refuses_q_max_above_the_pfc_bound_and_applies_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live change is held to the bound as the config is: nothing written,
    the intended state unchanged, and a change within it still taken."""
    app = _app(_pfc_on_the_cp(120))
    before = app.live["4/0"]
    held = _level(app, 4, 0, 125)
    writes = len(app.switch.batches)  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"set 4/0 q_max_cells: queue 4/0's Q_P4QCN 131 .*= 130"):
        app.set_queues({(4, 0): {"q_max_cells": 131}})
    assert app.live["4/0"] == before
    assert len(app.switch.batches) == writes  # type: ignore[attr-defined]
    assert _level(app, 4, 0, 125) == held
    app.set_queues({(4, 0): {"q_max_cells": 130}})
    assert app.live["4/0"].q_max_cells == 130

    # The same through `tofcc set`, the state file untouched by the refusal.
    path = _write(tmp_path, _pfc_on_the_cp(120))
    state = tmp_path / "state.json"
    base = ["--program", "p4qcn", "--config", str(path), "--state", str(state)]
    assert run([*base, "set", "q_max_cells=130"]) == 0
    saved = state.read_text()
    capsys.readouterr()
    assert run([*base, "set", "q_min_cells=0", "q_max_cells=131"]) == 2
    err = capsys.readouterr().err
    assert "Q_PFC - Q_flight = 182 - 52 = 130" in err and "4/0" in err
    assert state.read_text() == saved
    # What the switch holds, as the state file replays it.
    assert run(["--program", "p4qcn", "--state", str(state), "status", "--json"]) == 0
    rows = [r for r in yaml.safe_load(capsys.readouterr().out) if r.get("section") == QUEUES]
    assert (rows[0]["q_min_cells"], rows[0]["q_max_cells"]) == (100, 130)


def test_restore_live_refuses_a_corrupt_state() -> None:
    app = _app()
    with pytest.raises(ConfigError, match=r"live\.4/0"):
        app.restore_live(
            {
                "4/0": {
                    "q_min_cells": -1,
                    "q_max_cells": 5,
                    "feedback_interval_us": 50,
                    "mode": "two_point",
                }
            }
        )
    with pytest.raises(ConfigError, match="not a queue"):
        app.restore_live({"7/7": {}})
    assert app.live["4/0"].q_min_cells == 209


def test_status_rows_read_back() -> None:
    app = _app()
    rows = [r for r in app.status() if r["section"] == QUEUES]
    assert rows[0]["mode"] == "two_point" and rows[0]["interval_ticks"] == 782
    total = len(ternary_entries(209, 209, None, 64))
    assert rows[0]["entries"] == f"{total}/{total}"


def test_cli_thresholds_set_and_refusals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "state.json")
    base = ["--program", "p4qcn", "--state", state]
    assert run([*base, "thresholds", "--port-speed", "100", "--cable-m", "10"]) == 0
    out = capsys.readouterr().out
    assert "Q_PFC   = 388 cells" in out and "Q_P4QCN = 216 cells" in out
    assert "clamped from 344 to Q_PFC - Q_flight 216" in out
    # 100 m: the shared-buffer 219 against Q_PFC - Q_flight = -66, refused.
    assert run([*base, "thresholds", "--port-speed", "100", "--cable-m", "100", "--apply"]) == 2
    err = capsys.readouterr().err
    assert "Q_P4QCN 219" in err and "-66" in err
    assert run([*base, "thresholds", "--port-speed", "100", "--cable-m", "10000"]) == 2
    assert "cable_m 10000" in capsys.readouterr().err
    assert run([*base, "thresholds", "--port-speed", "fast", "--cable-m", "1"]) == 2
    assert "--port-speed" in capsys.readouterr().err
    assert run([*base, "thresholds", "--port-speed", "100", "--cable-m", "10", "--apply"]) == 0
    assert run([*base, "set", "q_min_cells=100", "--queue", "4/0"]) == 0
    assert run([*base, "set", "q_min_cells=100000"]) == 2
    assert run([*base, "set", "bogus=1"]) == 2
    assert run([*base, "set", "mode=three_point", "--queue", "4-0"]) == 2
    capsys.readouterr()
    assert run([*base, "status", "--json"]) == 0
    rows = [r for r in yaml.safe_load(capsys.readouterr().out) if r.get("section") == QUEUES]
    assert (rows[0]["q_min_cells"], rows[0]["q_max_cells"]) == (100, 216)
    assert (
        run(
            [
                "--program",
                "bfcc",
                "--state",
                state,
                "thresholds",
                "--port-speed",
                "100",
                "--cable-m",
                "1",
            ]
        )
        == 2
    )
    assert run(["--program", "bfcc", "--state", state, "set", "x=1", "--queue", "4/0"]) == 2


def test_tofino2_example_runs_both_architectures() -> None:
    path = Path(__file__).resolve().parents[2] / "examples" / "p4qcn-tofino2.yaml"
    raw = yaml.safe_load(path.read_text())
    app = P4qcnApp(FlakyModelSwitch("p4qcn", chip="tofino2"), parse_config(raw, str(path)))
    app.push_all()
    t = p4qcn_thresholds(load_profile("tofino2"), 400, 3.0, processing_ns=500.0)
    assert all(q.q_max_cells == t.q_p4qcn_cells for q in app.config.queues)
    for port in (12, 14):
        assert _level(app, port, 0, 615) == 0
        assert _level(app, port, 0, 616) == level_of(1 / 616)
        assert _level(app, port, 0, t.q_p4qcn_cells) == LEVEL_ALWAYS
    modes = {r["port"]: r["mode"] for r in app.status() if r["section"] == QUEUES}
    assert modes == {12: "two_point", 14: "three_point"}


def test_vectors_entries_are_what_the_controller_writes() -> None:
    """congestion_point.yaml's port-2 entries (Q_min 8, Q_max 16, N 50 us) are
    among the controller's entries for that queue, level for level."""
    from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file

    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "p4qcn" / "congestion_point.yaml")
    vector_entries = {
        (e.key[n.K_DEPTH_CELLS].value, e.key[n.K_DEPTH_CELLS].mask): dict(e.data)
        for e in vfile.setup.tables
        if e.table == n.FEEDBACK_PROBABILITY and e.key[n.K_EGRESS_PORT].value == 2
    }
    raw = copy.deepcopy(RAW)
    raw["routes"].append(
        {"prefix": "10.0.9.0/24", "port": 2, "src_mac": "02:00:00:00:00:02",
         "dst_mac": "00:00:00:00:02:02"}
    )  # fmt: skip
    raw["queues"] = [{"port": 2, "queue": 0, "q_min_cells": 8, "q_max_cells": 16}]
    app = _app(raw)
    written = {
        (w.key[n.K_DEPTH_CELLS].value, w.key[n.K_DEPTH_CELLS].mask): dict(w.data)
        for w in app.queue_writes(app.config.queues[0])
    }
    assert len(vector_entries) == 5
    for key, data in vector_entries.items():
        assert written[key] == data, key


def test_bfrt_backend_takes_the_same_batches() -> None:
    from bfrt_controller.backends.bfrt import BfrtSwitch
    from doubles import FakeBfrtGrpc

    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("p4qcn", profile)
    sw = BfrtSwitch("p4qcn", profile, client_module=fake)
    sw.connect()
    app = P4qcnApp(sw, parse_config(_cfg(q_min_cells=100, q_max_cells=140)))
    app.push_all()
    sessions = fake.mirror_sessions()
    assert sessions[11][1]["$max_pkt_len"] == n.FEEDBACK_TRUNCATE_BYTES
    before = len(fake.writes())
    app.set_queues({(4, 0): {"q_min_cells": 120}})
    calls = fake.writes()[before:]
    # One batch: the stale ranges deleted, then the new ones written, each one
    # call to the one table (the backend undoes the first if the second fails).
    stale = len(ternary_entries(100, 140, None, 64)) - len(
        {(e.value, e.mask) for e in ternary_entries(100, 140, None, 64)}
        & {(e.value, e.mask) for e in ternary_entries(120, 140, None, 64)}
    )
    table = f"pipe.{n.FEEDBACK_PROBABILITY}"
    assert [(c.table, c.op, c.count) for c in calls] == [
        (table, "DELETE", stale),
        (table, "INSERT_OR_MODIFY", len(ternary_entries(120, 140, None, 64))),
    ]
    total = len(ternary_entries(120, 140, None, 64))
    row = next(r for r in app.status() if r["section"] == QUEUES)
    assert row["entries"] == f"{total}/{total}" and row["q_min_cells"] == 120
