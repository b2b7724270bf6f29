"""S-PIE: the arithmetic tables the controller writes, the vectors' entries
being exactly those, the whole loop (PI step in egress -> mirrored copy ->
recirculation -> ingress) on the model configured by the controller app,
and bad configuration refused by field."""

from __future__ import annotations

import copy
import math
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from bfrt_controller.errors import ConfigError
from bfrt_controller.spie import names as n
from bfrt_controller.spie.app import SpieApp, delay_units
from bfrt_controller.spie.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.spie.tables import (
    D_LIMIT,
    DELAY_UNIT_S,
    PROB_ONE,
    log16,
    log_entries,
    term_entries,
)
from bfrt_controller.switch import EntryWrite
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.switch.core import Match, Table
from models.switch.registry import make_model
from models.switch.spie import ROW_POLYNOMIALS_REFLECTED, crc16_reflected, row_hashes
from models.vectors.format import load_vector_file

RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())
VECTORS = Path(__file__).resolve().parents[1] / "ptf_tests" / "vectors" / "spie" / "spie.yaml"


def _ternary_value(table: Table, value: int) -> dict[str, int]:
    (key,) = table.keys
    return table.lookup({key: value & 0xFFFFFFFF}).data


def _load_terms(gain: float) -> tuple[Table, Table]:
    model = make_model("spie", load_profile("tofino"))
    hi_t, lo_t = model.table(n.ALPHA_HI), model.table(n.ALPHA_LO)
    hi, lo = term_entries(gain)
    for t, entries in ((hi_t, hi), (lo_t, lo)):
        for e in entries:
            t.add(
                {n.K_D_REF: Match(e.value, mask=e.mask)},
                n.SET_TERM[t.name],
                {"term": e.term, "minus_term": e.minus_term},
                e.priority,
            )
    return hi_t, lo_t


@pytest.mark.parametrize("gain", [0.125, 1.25, 7.5])
def test_term_lookups_add_up_to_gain_times_d(gain: float) -> None:
    hi_t, lo_t = _load_terms(gain)
    rng = random.Random(1)
    for d in [0, 1, -1, 255, 256, -256, D_LIMIT - 1, -D_LIMIT] + [
        rng.randrange(-D_LIMIT, D_LIMIT) for _ in range(300)
    ]:
        got = (_ternary_value(hi_t, d)["term"] + _ternary_value(lo_t, d)["term"]) & 0xFFFFFFFF
        got_signed = got - (1 << 32) if got >> 31 else got
        exact = gain * d * DELAY_UNIT_S * PROB_ONE
        # Two roundings of at most 1/2 each.
        assert abs(got_signed - exact) <= 1.0, d
        minus = _ternary_value(hi_t, d)["minus_term"] + _ternary_value(lo_t, d)["minus_term"]
        assert (got + minus) & 0xFFFFFFFF == 0, d


def test_terms_beyond_the_range_saturate_with_the_right_sign() -> None:
    hi_t, lo_t = _load_terms(1.25)
    top = 1.25 * (D_LIMIT - 256) * DELAY_UNIT_S * PROB_ONE
    for d in (D_LIMIT, 100_000, 2**30):
        got = _ternary_value(hi_t, d)["term"] + _ternary_value(lo_t, d)["term"]
        assert top - 1 <= got <= top * 1.01, d
    for d in (-D_LIMIT - 1, -100_000, -(2**30)):
        got = (_ternary_value(hi_t, d)["term"] + _ternary_value(lo_t, d)["term"]) & 0xFFFFFFFF
        assert got >> 31 == 1, d  # negative: p only falls


def test_table_crc_equals_bitwise_crc() -> None:
    rng = random.Random(3)
    for _ in range(200):
        key = bytes(rng.randrange(256) for _ in range(13))
        assert row_hashes(key) == tuple(crc16_reflected(key, p) for p in ROW_POLYNOMIALS_REFLECTED)
    # CRC-16/ARC's check value: the first row is the standard polynomial.
    assert crc16_reflected(b"123456789", ROW_POLYNOMIALS_REFLECTED[0]) == 0xBB3D


def test_log16_is_floor_of_16_log2() -> None:
    for v in [*list(range(1, 5000)), 2**31 - 1, 2**32 - 1, 3**20]:
        assert log16(v) == math.floor(16 * math.log2(v) + 1e-12), v


def test_log_entries_cover_every_value_once_and_round_down() -> None:
    model = make_model("spie", load_profile("tofino"))
    t = model.table(n.LOG_RES)
    for e in log_entries():
        t.add({n.K_M_BEFORE: Match(e.value, mask=e.mask)}, n.SET_LOG_RES, {"log16": e.log16}, 1)
    rng = random.Random(2)
    for v in list(range(1, 300)) + [rng.randrange(1, 2**32) for _ in range(500)]:
        got = t.lookup({n.K_M_BEFORE: v}).data["log16"]
        exact = 16 * math.log2(v)
        # The range's smallest value: never above, at most 1/16 of a bit short
        # plus the floor.
        assert exact - 16 * math.log2(1 + 1 / 16) - 1 <= got <= exact + 1e-9, v
    assert len(log_entries()) <= 512  # SPIE_LOG_ENTRIES


def _controller_entries() -> set[tuple[str, tuple[tuple[str, int, int | None], ...], str, tuple]]:
    app = SpieApp(FlakyModelSwitch("spie"), parse_config(RAW))
    out = set()
    for w in app.intended_writes():
        if isinstance(w, EntryWrite) and w.table in n.ALL_TABLES and w.op != "default":
            key = tuple(sorted((k, m.value, m.mask) for k, m in w.key.items()))
            out.add((w.table, key, w.action or "", tuple(sorted(w.data.items()))))
    return out


def test_vector_arithmetic_entries_are_the_controllers() -> None:
    """The term and log entries the vectors install are what the app writes
    for RFC 8033's alpha and beta (the vectors' expected p follow from them)."""
    ours = _controller_entries()
    vfile = load_vector_file(VECTORS)
    arithmetic = {n.ALPHA_HI, n.ALPHA_LO, n.BETA_HI, n.BETA_LO, n.LOG_RES, n.LOG_COUNT, n.LOG_SUMSQ}
    checked = 0
    for e in vfile.setup.tables:
        if e.table not in arithmetic:
            continue
        key = tuple(sorted((k, m.value, m.mask) for k, m in e.key.items()))
        assert (e.table, key, e.action, tuple(sorted(e.data.items()))) in ours, e
        checked += 1
    assert checked >= 40


# ---- the whole loop, configured by the app ------------------------------

HOST_MAC = "00:00:00:00:01:01"
SWITCH_MAC = "02:00:00:00:00:01"


def _frame(src: str, sport: int, dst: str = "10.0.3.3") -> bytes:
    return bytes(Ether(dst=SWITCH_MAC, src=HOST_MAC) / IP(src=src, dst=dst) / TCP(sport=sport))


def _app_on_model(**pie: Any) -> tuple[SpieApp, Any]:
    raw = copy.deepcopy(RAW)
    raw["pie"].update(pie)
    app = SpieApp(FlakyModelSwitch("spie"), parse_config(raw))
    app.push_all()
    model = app.switch.model  # type: ignore[attr-defined]
    return app, model


def _send(model: Any, t_ns: int, sojourn_ns: int, frame: bytes, port: int = 1) -> bool:
    """One packet at t_ns that waits sojourn_ns in egress; True if it leaves."""
    model.now_ns = t_ns
    hook = model.table("SwitchEgress.queue_hook.queue_md_override")
    hook.add_or_modify(
        {"eg_intr_md.egress_port": Match(3)},
        "SwitchEgress.queue_hook.inject",
        {"depth_cells": 0, "sojourn_ns": sojourn_ns},
    )
    return any(o.port == 3 for o in model.send(port, frame))


def test_p_rises_while_the_delay_exceeds_del_ref_and_reaches_ingress() -> None:
    """30 ms queueing delay against a 15 ms reference, one step per 15 ms:
    p grows by about alpha x 15 ms + ... per step, and every step's p
    reaches ingress through the recirculation port (halved)."""
    _app, model = _app_on_model()
    slot = 0  # port 3 is the config's first S-PIE port
    last = 0
    frame = _frame("10.0.1.1", 1000)
    for k in range(1, 11):
        _send(model, k * 15_000_000 + 1, 30_000_000, frame)
        p = model.register(n.PI_PROB).read(slot)
        assert p > last, k
        assert model.register(n.PROB).read(slot) == p >> 1
        last = p
    # Ten steps of alpha x 15 ms (the beta term only on the first step).
    per_step = 0.125 * 0.015 * 2**32
    first = 1.25 * 0.030 * 2**32
    assert last == pytest.approx(10 * per_step + first, rel=0.01)
    assert model.counter(n.PI_UPDATES).read(3)[0] == 10


def test_large_flow_dropped_small_flows_admitted_when_congested() -> None:
    """Once a step has said congested (30 ms >= 5 ms), a flow sending many
    packets among flows sending few is dropped; the few are admitted, and
    nothing is dropped at random in that branch."""
    _app, model = _app_on_model()
    _send(model, 16_000_000, 30_000_000, _frame("10.0.1.1", 999))  # the step
    assert model.register("SwitchIngress.congested").read(0) != 0
    t = 17_000_000
    large_sent = large_passed = small_sent = small_passed = 0
    for i in range(200):
        # Sojourns below T_update's reach: no further step inside this window.
        if i % 4 == 0:
            small_sent += 1
            small_passed += _send(model, t, 30_000_000, _frame("10.0.1.2", 2000 + i))
        else:
            large_sent += 1
            large_passed += _send(model, t, 30_000_000, _frame("10.0.1.1", 1000))
        t += 10_000
    assert small_passed == small_sent
    assert large_passed < large_sent // 2
    assert model.counter(n.RANDOM_DROPS).read(3)[0] == 0
    assert model.counter(n.LARGE_FLOW_DROPS).read(3)[0] == large_sent - large_passed


def test_plain_pie_port_drops_at_random_not_by_flow() -> None:
    """Port 4 runs plain PIE: with p raised by a long delay, packets of a
    single flow are dropped at about rate p, not all of them."""
    _app, model = _app_on_model(alpha_per_s=4.0, beta_per_s=8.0)
    frame = _frame("10.0.1.1", 1000, dst="10.0.4.4")

    def send4(t: int) -> bool:
        model.now_ns = t
        hook = model.table("SwitchEgress.queue_hook.queue_md_override")
        hook.add_or_modify(
            {"eg_intr_md.egress_port": Match(4)},
            "SwitchEgress.queue_hook.inject",
            {"depth_cells": 0, "sojourn_ns": 25_000_000},
        )
        return any(o.port == 4 for o in model.send(1, frame))

    send4(16_000_000)
    p = model.register(n.PROB).read(1) / 2**31
    assert 0.2 < p < 0.8
    passed = sum(send4(16_000_000 + i * 1000) for i in range(1, 2001))
    assert passed / 2000 == pytest.approx(1 - p, abs=0.05)
    assert model.counter(n.LARGE_FLOW_DROPS).read(4)[0] == 0


def test_app_writes_the_units_the_data_plane_uses() -> None:
    _app, model = _app_on_model()
    e = model.table(n.PI_PORT).lookup({n.K_EGRESS_PORT: 3})
    assert e.data["del_ref_ns_shr10"] == delay_units(15_000) == 14648
    assert e.data["congested_from_ns_shr10"] == 4883
    assert e.data["minus_t_update_ticks"] == (1 << 32) - 234375
    assert e.data["session"] == 40
    sketch = model.table(n.SKETCH_CONFIG).lookup({}).data
    assert sketch == {"epoch_mask": 0xFF000000, "column_mask": 1023}


def _raw(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(RAW)
    for path, value in changes.items():
        section, _, field = path.partition("__")
        raw[section][field] = value
    return raw


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"pie__alpha_per_s": -0.1}, "pie.alpha_per_s"),
        ({"pie__beta_per_s": -1}, "pie.beta_per_s"),
        ({"pie__beta_per_s": 20.0}, "pie.beta_per_s"),
        ({"sketch__columns": 1000}, "sketch.columns"),
        ({"sketch__columns": 8192}, "sketch.columns"),
        ({"pie__del_ref_us": 40_000}, "pie.del_ref_us"),
        ({"pie__t_update_us": 0}, "pie.t_update_us"),
        ({"sketch__clear_interval_us": 1000}, "sketch.clear_interval_us"),
        ({"sketch__clear_interval_us": 10_000_000}, "sketch.clear_interval_us"),
    ],
)
def test_bad_config_refused_naming_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(_raw(**changes), "cfg.yaml")
    assert field in str(exc.value)


def test_bad_set_writes_nothing() -> None:
    app, model = _app_on_model()
    before = model.snapshot()
    for values in ({"alpha_per_s": -1.0}, {"columns": 1000}, {"del_ref_us": 50_000.0}, {"nope": 1}):
        with pytest.raises(ConfigError):
            app.set_params(values)
    after = model.snapshot()
    assert before.tables.keys() == after.tables.keys()
    for name in before.tables:
        assert before.tables[name][0] == after.tables[name][0], name
    changes = app.set_params({"alpha_per_s": 0.25, "columns": 2048})
    assert {c.what for c in changes} == {"alpha_per_s", "columns"}
    assert model.table(n.SKETCH_CONFIG).lookup({}).data["column_mask"] == 2047


def test_a_restarted_switch_gets_the_retuned_state_back() -> None:
    """After `set alpha_per_s=0.25`, a switch that restarts (state lost) is given
    the retuned entries, not the config's: the app's intended state."""
    app, model = _app_on_model()
    app.set_params({"alpha_per_s": 0.25})
    tuned = model.table(n.ALPHA_LO).lookup({n.K_D_REF: 100}).data
    app.switch.restart()  # type: ignore[attr-defined]
    assert model.table(n.ALPHA_LO).lookup({n.K_D_REF: 100}).data == {"term": 0, "minus_term": 0}
    app.push_all()
    assert model.table(n.ALPHA_LO).lookup({n.K_D_REF: 100}).data == tuned
    assert tuned["term"] == round(0.25 * 100 * DELAY_UNIT_S * PROB_ONE)
    assert model.table(n.SKETCH_CONFIG).lookup({}).data["column_mask"] == 1023
