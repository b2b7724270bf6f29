# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The speed-ups of models/speedups.py change nothing but speed: header
pack/unpack give the reference code's bytes and errors, and the model
backend's undo log leaves a switch exactly as the whole-switch copy did,
after a refused batch and after an accepted one. (The ns-3 glue's half is
tests/evaluation/test_speedups_ns3.py.)"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import random
from collections.abc import Iterator, Sequence

import pytest

import models.switch.registry  # noqa: F401  (every program's header classes)
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.errors import WriteError
from bfrt_controller.switch import (
    EntryWrite,
    MirrorSessionWrite,
    RegisterWrite,
    TmQueueWrite,
    Write,
)
from hw_profiles import load_profile
from models import speedups
from models.baselines._rp_base import RpStage
from models.switch.core import Match, P4ModelError, Table
from models.switch.headers import Header
from tofcc_common import registry


def header_classes() -> list[type[Header]]:
    # Every program's model declares its own headers (bfcc.py's BpMirror):
    # import them all, or the list depends on which tests ran first. (An
    # entry without its model yet is test_every_program_is_whole's to name.)
    for spec in registry.PROGRAMS.values():
        if registry.importable(spec.model):
            registry.resolve(spec.model)
    out: list[type[Header]] = []
    todo = list(Header.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if dataclasses.is_dataclass(cls):
            out.append(cls)
    return sorted(out, key=lambda c: c.__qualname__)


HEADERS = header_classes()


def test_every_program_header_is_covered() -> None:
    names = {c.__name__ for c in HEADERS}
    assert {"Ethernet", "Ipv4", "Udp", "Feedback", "FbMirror", "BpMirror"} <= names


def random_header(cls: type[Header], rng: random.Random) -> Header:
    # Values wider than their field too: pack must mask them the same way.
    values = {f.name: rng.getrandbits(f.metadata["bits"] + 3) for f in dataclasses.fields(cls)}
    return cls(**values)


@pytest.mark.parametrize("cls", HEADERS, ids=lambda c: c.__name__)
def test_pack_and_unpack_match_the_reference(cls: type[Header]) -> None:
    rng = random.Random(cls.__name__)
    with speedups.disabled():
        layout, size = cls.layout(), cls.size_bytes()
    assert cls.layout() == layout and cls.size_bytes() == size
    for _ in range(50):
        hdr = random_header(cls, rng)
        with speedups.disabled():
            wire = hdr.pack()
        assert hdr.pack() == wire
        trailing = wire + bytes(rng.getrandbits(8) for _ in range(3))
        with speedups.disabled():
            ref = cls.unpack(trailing)
        fast = cls.unpack(trailing)
        assert fast == ref and fast.valid and ref.valid
        # Round trip: the fields come back masked to their widths.
        assert fast.pack() == wire
        for name, width in layout:
            assert getattr(fast, name) == getattr(hdr, name) & ((1 << width) - 1)


@pytest.mark.parametrize("cls", HEADERS, ids=lambda c: c.__name__)
def test_a_short_packet_is_refused_with_the_reference_message(cls: type[Header]) -> None:
    short = bytes(cls.size_bytes() - 1)
    with speedups.disabled(), pytest.raises(ValueError) as ref:
        cls.unpack(short)
    with pytest.raises(ValueError) as fast:
        cls.unpack(short)
    assert str(fast.value) == str(ref.value)
    assert cls.__name__ in str(fast.value)


def test_a_subclass_with_more_fields_has_its_own_layout() -> None:
    from models.switch.headers import Udp, bits

    assert Udp.size_bytes() == 8  # cached before the subclass exists

    @dataclasses.dataclass
    class UdpPlus(Udp):
        extra: int = bits(8)

    assert UdpPlus.size_bytes() == 9
    hdr = UdpPlus(src_port=1, dst_port=2, length=3, checksum=4, extra=5)
    assert hdr.pack() == bytes.fromhex("000100020003000405")
    assert UdpPlus.unpack(hdr.pack()) == hdr
    assert Udp.size_bytes() == 8


# ---- the model backend's rollback ------------------------------------------

LPM = "SwitchIngress.forward.ipv4_lpm"
ROUTE = "SwitchIngress.forward.route"
TRUSTED = "SwitchIngress.trust.trusted_ports"
TRUST = "SwitchIngress.trust.trusted"
RR = "SwitchEgress.rr_count"
BP = "SwitchIngress.bp_recorded_ns"


def route(prefix: int, port: int, op: str = "insert") -> EntryWrite:
    return EntryWrite(
        LPM,
        {"hdr.ipv4.dst_addr": Match(prefix, prefix_len=24)},
        ROUTE,
        {"port": port, "src_mac": 1, "dst_mac": 2},
        op=op,  # type: ignore[arg-type]
    )


def configured() -> ModelSwitch:
    sw = ModelSwitch("bfcc", load_profile("tofino"))
    sw.write(
        [
            route(0x0A000100, 1),
            route(0x0A000200, 2),
            EntryWrite(TRUSTED, {"ig_intr_md.ingress_port": Match(5)}, TRUST),
            RegisterWrite(RR, 3, 7),
            MirrorSessionWrite(10, 4),
            MirrorSessionWrite(11, 6),
            TmQueueWrite(1, 2, dwrr_weight=3, max_priority=1),
        ]
    )
    return sw


def state(sw: ModelSwitch) -> object:
    """Everything a write can change, copied."""
    return copy.deepcopy((sw.model.snapshot(), sw.tm_weights, sw.tm_priorities))


# Each changes state a different way before the refused write at the end.
CHANGES: list[Write] = [
    route(0x0A000300, 3),
    route(0x0A000100, 9, op="modify"),
    route(0x0A000200, 8, op="upsert"),
    EntryWrite(LPM, {"hdr.ipv4.dst_addr": Match(0x0A000200, prefix_len=24)}, op="delete"),
    EntryWrite(LPM, action="SwitchIngress.forward.drop", op="default"),
    EntryWrite(TRUSTED, {"ig_intr_md.ingress_port": Match(5)}, op="delete"),
    RegisterWrite(RR, 3, 200),
    RegisterWrite(RR, 3, 201),  # the same cell twice
    RegisterWrite(BP, 511, 0xFFFFFFFF),
    MirrorSessionWrite(12, 7),
    MirrorSessionWrite(10, 9, max_pkt_len=64),  # replaces a session
    MirrorSessionWrite(11, 6, delete=True),
    TmQueueWrite(1, 2, dwrr_weight=9),
    TmQueueWrite(3, 0, max_priority=7),
]

REFUSED: dict[str, Write] = {
    "value too wide": RegisterWrite(RR, 0, 256),
    "index outside": RegisterWrite(RR, 512, 1),
    "unknown register": RegisterWrite("SwitchEgress.nope", 0, 1),
    "unknown table": EntryWrite("SwitchIngress.nope", op="default", action="NoAction"),
    "duplicate entry": route(0x0A000100, 1),
    "missing entry": route(0x0A00FF00, 1, op="modify"),
    "missing session": MirrorSessionWrite(999, 1, delete=True),
    "bad tm weight": TmQueueWrite(1, 1, dwrr_weight=0),
}


@pytest.fixture(params=[True, False], ids=["undo-log", "reference"])
def fast(request: pytest.FixtureRequest) -> Iterator[bool]:
    if request.param:
        yield True
    else:
        with speedups.disabled():
            yield False


def refused(sw: ModelSwitch, batch: Sequence[Write]) -> str:
    with pytest.raises(WriteError) as err:
        sw.write(batch)
    return str(err.value)


@pytest.mark.parametrize("bad", list(REFUSED), ids=list(REFUSED))
def test_a_refused_batch_leaves_the_switch_exactly_as_it_was(fast: bool, bad: str) -> None:
    sw = configured()
    before = state(sw)
    weights, priorities = sw.tm_weights, sw.tm_priorities
    message = refused(sw, [*CHANGES, REFUSED[bad]])
    assert f"#{len(CHANGES)}" in message
    assert state(sw) == before
    if fast:
        # Restored in place: a simulated pipeline holds these very dicts.
        assert sw.tm_weights is weights and sw.tm_priorities is priorities
    # And the switch still works after the rollback.
    sw.write(CHANGES)
    assert sw.read_register(RR, 3) == 201


@pytest.mark.parametrize("bad", list(REFUSED), ids=list(REFUSED))
def test_both_paths_refuse_with_the_same_message(bad: str) -> None:
    fast_msg = refused(configured(), [*CHANGES, REFUSED[bad]])
    with speedups.disabled():
        ref_msg = refused(configured(), [*CHANGES, REFUSED[bad]])
    assert fast_msg == ref_msg


def test_both_paths_apply_a_batch_the_same() -> None:
    sw = configured()
    sw.write(CHANGES)
    with speedups.disabled():
        ref = configured()
        ref.write(CHANGES)
    assert state(sw) == state(ref)
    assert sw.read_register(RR, 3) == 201
    assert sw.read_entry(LPM, {"hdr.ipv4.dst_addr": Match(0x0A000200, prefix_len=24)}) is None


def test_a_refusal_after_an_accepted_batch_goes_back_to_that_batch() -> None:
    sw = configured()
    sw.write(CHANGES[:5])
    after_first = state(sw)
    refused(sw, [*CHANGES[5:], REFUSED["value too wide"]])
    assert state(sw) == after_first


def _dcqcn_trace(events: list[tuple[str, int, int]], fast: bool) -> list[tuple[object, ...]]:
    from models.baselines.dcqcn_rp import DcqcnReactionPoint, DcqcnRpParams

    # A 1 KB byte counter, so the byte count reaches F and every phase runs.
    params = DcqcnRpParams(
        line_rate_bps=10e6, min_rate_bps=10e3, rai_bps=10e3, rhai_bps=50e3, byte_counter_bytes=1000
    )
    rp = DcqcnReactionPoint(params)
    trace: list[tuple[object, ...]] = []
    with contextlib.nullcontext() if fast else speedups.disabled():
        for kind, now, n in events:
            if kind == "cnp":
                rp.on_feedback(now)
            elif kind == "bytes":
                rp.on_bytes_sent(n, now)
            else:
                rp.on_timer(now)
            trace.append(
                (
                    rp.rate_bps,
                    rp.target_rate_bps,
                    rp.alpha,
                    rp.timer_count,
                    rp.byte_count,
                    rp.stage,
                    rp.next_timer_ns,
                )
            )
    return trace


@pytest.mark.parametrize("seed", range(8))
def test_dcqcn_timer_loop_gives_the_reference_trace_bit_for_bit(seed: int) -> None:
    """The inlined expiry loop of DcqcnReactionPoint._advance: the same rates,
    alpha, counts and next deadline as the generic loop, after every event of
    a random mix of CNPs, sends and timer calls (gaps from a few ns to many
    timer periods, so phases change inside one advance)."""
    rng = random.Random(seed)
    now, events = 0, []
    for _ in range(400):
        now += rng.choice(
            [1, 50, 5_000, 20_000, 54_999, 55_000, 110_000, 800_000, rng.randrange(1, 3_000_000)]
        )
        kind = rng.choices(["cnp", "bytes", "timer"], weights=[1, 40, 5])[0]
        events.append((kind, now, rng.randrange(64, 1500)))
    assert _dcqcn_trace(events, fast=True) == _dcqcn_trace(events, fast=False)


def test_dcqcn_timer_loop_crosses_every_phase_in_one_advance() -> None:
    """Byte count at F before the timer runs: one advance then goes from
    additive to hyper increase at the F-th expiry, and on up the hyper steps."""
    # Two CNPs: the second sets the target below line rate, so increases show.
    events = [("cnp", 0, 0), ("cnp", 1, 0)] + [("bytes", t, 1000) for t in range(2, 7)]
    events += [("timer", 12 * 55_000, 0), ("bytes", 12 * 55_000 + 1, 1000)]
    events += [("timer", 40 * 55_000, 0)]
    fast = _dcqcn_trace(events, fast=True)
    assert fast == _dcqcn_trace(events, fast=False)
    assert fast[7][5] is RpStage.HYPER_INCREASE and fast[7][3] == 11
    assert fast[7][1] < 10e6  # the target was not capped: the phases mattered


@pytest.mark.parametrize("seed", range(6))
def test_pmqecn_rp_clock_only_timer_calls_give_the_reference_trace(seed: int) -> None:
    """PMQECN's host reaction point moves only its clock on a timer call that
    ends no cycle (the fast path); every state, and the sending-rate mean
    feedback reads, after every event of a random mix of feedback, sends
    and timer calls (some at the same instant) equals the reference's."""
    from models.hosts.pmqecn_rp import ReactionPoint, RpConfig

    def trace(fast: bool) -> list[object]:
        rng = random.Random(seed)
        rp = ReactionPoint(RpConfig(byte_counter=20_000, feedback_interval=0.05))
        out: list[object] = []
        now = 0.0
        with contextlib.nullcontext() if fast else speedups.disabled():
            for _ in range(600):
                now += rng.choice(
                    [0.0, 1e-6, 1e-4, 0.003, 0.01, 0.0099999, 0.025, rng.random() / 20]
                )
                kind = rng.choices(["fb", "bytes", "timer"], weights=[1, 10, 20])[0]
                if kind == "fb":
                    rp.on_feedback(rng.uniform(1e6, 9e6), rng.uniform(0.5e6, 9e6), now)
                elif kind == "bytes":
                    rp.on_bytes_sent(rng.randrange(64, 1500), now)
                else:
                    rp.on_timer(now)
                # The mean the next feedback reads: a timer call that skips
                # its bookkeeping must leave it as the reference's does.
                out.append((rp.state, list(rp._sent._points)))
        return out

    fast, ref = trace(True), trace(False)
    assert fast == ref
    assert len({s.phase for s, _ in fast}) == 2  # both phases were crossed


def test_remembered_key_forms_refuse_what_the_checks_refuse() -> None:
    """add_or_modify remembers a key's normal form; a key equal to a
    remembered one but of another type (True, 1.0 for 1) is still refused
    with the reference's message, and a remembered key still adds the same
    entry."""
    from models.switch.core import Action, KeyField, Table

    def table() -> Table:
        return Table(
            "t",
            [KeyField("a", 8, "exact"), KeyField("b", 8, "ternary")],
            [Action("set_v", (("v", 8),))],
            ("set_v", {"v": 0}),
            size=8,
        )

    fast, ref = table(), table()
    good = [{"a": Match(1)}, {"a": Match(2), "b": Match(1, mask=1)}]
    for _ in range(2):  # the second round answers from memory
        for key in good:
            fast.add_or_modify(dict(key), "set_v", {"v": 1})
            with speedups.disabled():
                ref.add_or_modify(dict(key), "set_v", {"v": 1})
    assert [(e.key, e.data) for e in fast.entries] == [(e.key, e.data) for e in ref.entries]
    # Each equal (==, same hash) to a remembered key.
    for bad in (
        {"a": Match(True)},
        {"a": Match(1.0)},
        {"a": Match(2), "b": Match(1, mask=True)},
        {"a": Match(2), "b": Match(True, mask=1)},
    ):
        with pytest.raises(P4ModelError) as fast_err:
            fast.add_or_modify(bad, "set_v", {"v": 2})
        with speedups.disabled(), pytest.raises(P4ModelError) as ref_err:
            ref.add_or_modify(bad, "set_v", {"v": 2})
        assert str(fast_err.value) == str(ref_err.value)


@pytest.mark.parametrize("seed", range(6))
def test_ranked_table_lookup_is_the_reference_lookup(seed: int) -> None:
    """Table.lookup's fast path (mask groups best-first, stop once nothing
    left can win) answers as trying every group: ternary entries of many
    masks with priorities, LPM beside exact, overlapping entries, misses,
    and after deletes change the best entry."""
    from models.switch.core import Action, KeyField, Table

    rng = random.Random(seed)
    set_v = Action("set_v", (("v", 16),))
    t = Table(
        "t",
        [KeyField("a", 8, "exact"), KeyField("b", 12, "ternary"), KeyField("c", 16, "lpm")],
        [set_v, Action("NoAction")],
        ("NoAction", {}),
        size=4096,
    )
    keys = []
    for i in range(300):
        key = {
            "a": Match(rng.randrange(4)),
            "b": Match(rng.randrange(1 << 12), mask=rng.choice([0, 0xF00, 0xFF0, 0xFFF, 0x0F0])),
            "c": Match(rng.randrange(1 << 16), prefix_len=(plen := rng.randrange(17))),
        }
        key["b"] = Match(key["b"].value & (key["b"].mask or 0), mask=key["b"].mask)
        key["c"] = Match(key["c"].value >> (16 - plen) << (16 - plen), prefix_len=plen)
        prio = rng.randrange(50)
        try:
            t.add(key, "set_v", {"v": i}, priority=prio)
        except Exception:  # the same key and priority twice: the table refuses it
            continue
        keys.append((key, prio))

    def answers() -> list[object]:
        out = []
        for _ in range(400):
            values = {
                "a": rng.randrange(4),
                "b": rng.randrange(1 << 12),
                "c": rng.randrange(1 << 16),
            }
            fast = t.lookup(values)
            with speedups.disabled():
                ref = t.lookup(values)
            out.append((fast.hit, fast.action, fast.data, ref.hit, ref.action, ref.data))
        return out

    for _ in range(3):
        got = answers()
        assert all(r[:3] == r[3:] for r in got)
        assert sum(r[0] for r in got) > 100  # mostly hits, so the ranking is exercised
        for key, prio in rng.sample(keys, 60):
            t.delete(key, prio)
            keys.remove((key, prio))


def test_remembered_lookups_follow_every_change_of_the_table() -> None:
    """The fast lookup remembers answers per key; every way a table changes
    (add, modify, delete, a new default, the undo log putting entries and
    default back, clear) must make it answer as the reference again."""
    from models.switch.core import Action, KeyField, Table

    rng = random.Random(7)
    t = Table(
        "t",
        [KeyField("a", 8, "exact"), KeyField("b", 8, "ternary")],
        [Action("set_v", (("v", 16),)), Action("NoAction")],
        ("NoAction", {}),
        size=64,
    )
    pool = [{"a": rng.randrange(4), "b": rng.randrange(256)} for _ in range(12)]

    def agree() -> None:
        for values in pool * 3:  # each key more than once: answers come from memory
            fast = t.lookup(values)
            with speedups.disabled():
                ref = t.lookup(values)
            assert (fast.hit, fast.action, fast.data) == (ref.hit, ref.action, ref.data)

    def key(a: int, b: int, mask: int) -> dict[str, Match]:
        return {"a": Match(a), "b": Match(b & mask, mask=mask)}

    agree()
    t.add(key(1, 0, 0), "set_v", {"v": 1}, priority=5)
    agree()
    t.add_or_modify(key(1, 0, 0), "set_v", {"v": 2}, priority=5)
    agree()
    saved = (list(t.entries), t.default)
    t.set_default("set_v", {"v": 9})
    agree()
    t.add(key(1, pool[0]["b"], 0xFF), "set_v", {"v": 3}, priority=1)
    agree()
    t.entries, t.default = saved  # what the model backend's undo log does
    agree()
    t.delete(key(1, 0, 0), priority=5)
    agree()
    t.set_default("set_v", {"v": 4})
    t.clear()
    agree()
    assert t.lookup(pool[0]).action == "NoAction"


@pytest.mark.parametrize("seed", range(4))
def test_ipv4_checksum_and_extract_match_the_reference(seed: int) -> None:
    """Cursor.extract (one layout lookup) and Ipv4.checksum over the fast
    pack against the reference code: the same headers, offsets, checksums
    and the same error for a packet cut short. (The checksum itself has one
    implementation, headers.ipv4_checksum: tests/test_properties_shared_helpers.py.)"""
    from models.switch.common import Cursor, ParserError
    from models.switch.headers import Ethernet, Ipv4

    rng = random.Random(seed)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 60)))
        results = []
        for fast in (True, False):
            with contextlib.nullcontext() if fast else speedups.disabled():
                cur = Cursor(data)
                try:
                    eth = cur.extract(Ethernet)
                    ip = cur.extract(Ipv4)
                    results.append((eth, ip, cur.offset, ip.checksum()))
                except ParserError as exc:
                    results.append((str(exc), cur.offset))
        assert results[0] == results[1]


def add_or_modify_on(
    t: Table, ops: Sequence[tuple[dict[str, Match], str, dict[str, int], int]], fast: bool
) -> tuple[list[str], list[tuple[object, ...]]]:
    """Each op's add_or_modify on `t`, on one path: what each gave ("ok" or
    the refusal's message) and the entries left."""
    log = []
    with contextlib.nullcontext() if fast else speedups.disabled():
        for key, action, data, prio in ops:
            try:
                t.add_or_modify(key, action, data, prio)
                log.append("ok")
            except P4ModelError as exc:
                log.append(str(exc))
    return log, [(e.key, e.action, e.data, e.priority) for e in t.entries]


def test_add_or_modify_fast_path_is_the_reference() -> None:
    """Table.add_or_modify normalising the key once: the same entries, the
    same order and the same refusals (unknown action, full table) as add()
    or modify() each normalising it."""
    from models.switch.core import Action, KeyField, Table

    def table() -> Table:
        return Table(
            "t",
            [KeyField("a", 8, "exact"), KeyField("b", 8, "ternary")],
            [Action("set_v", (("v", 8),)), Action("NoAction")],
            ("NoAction", {}),
            size=40,
        )

    rng = random.Random(3)
    ops = []
    for _ in range(300):
        key = {"a": Match(rng.randrange(8)), "b": Match(rng.randrange(256), mask=0xF0)}
        action = rng.choice(["set_v", "set_v", "set_v", "bogus"])
        ops.append((key, action, {"v": rng.randrange(256)}, rng.randrange(3)))
    outcomes = [add_or_modify_on(table(), ops, fast) for fast in (True, False)]
    assert outcomes[0] == outcomes[1]
    assert any("table full" in r for r in outcomes[0][0]) and any(
        "unknown" in r for r in outcomes[0][0]
    )


@pytest.mark.parametrize("seed", range(4))
def test_upsert_takes_and_refuses_what_the_reference_does(seed: int) -> None:
    """A controller push (thousands of upserts) takes a key already in
    normal form as given and checks action data without building messages:
    on keys and data of every shape (normal, to be normalised, too wide,
    negative, bool, float, a field missing or unknown) the same entries and
    the same refusals, word for word, as the reference checks."""
    from models.switch.core import Action, KeyField, Table

    def table() -> Table:
        return Table(
            "t",
            [KeyField("a", 8, "exact"), KeyField("p", 16, "lpm"), KeyField("b", 8, "ternary")],
            [Action("set_v", (("v", 8), ("w", 4))), Action("NoAction")],
            ("NoAction", {}),
            size=60,
        )

    rng = random.Random(seed)
    odd: list[object] = [-1, 256, True, 1.0, 300]

    def value(bits: int) -> object:
        return rng.choice([rng.randrange(1 << bits)] * 6 + odd)

    def key() -> dict[str, Match]:
        plen = rng.choice([0, 8, 12, 16, None, 17, -1, True])
        k = {
            "a": rng.choice([Match(value(8))] * 5 + [Match(1, prefix_len=3), Match(2, mask=1)]),
            "p": Match(rng.randrange(1 << 16) & rng.choice([0xFF00, 0xFFFF, 0xFFF0]), plen),
            "b": Match(value(8), mask=rng.choice([0xF0, 0xFF, None, 0x1FF, 0x0F])),
        }
        roll = rng.random()
        if roll < 0.05:
            del k["b"]
        elif roll < 0.1:
            del k["a"]
        elif roll < 0.15:
            k["c"] = Match(1)
        return k

    def data() -> dict[str, object]:
        d: dict[str, object] = {"v": value(8), "w": rng.choice([0, 15, 16, True])}
        roll = rng.random()
        if roll < 0.05:
            del d["w"]
        elif roll < 0.1:
            d["x"] = 1
        return d

    ops = [
        (key(), rng.choice(["set_v"] * 8 + ["NoAction", "bogus"]), data(), rng.randrange(3))
        for _ in range(400)
    ]
    ops = [(k, action, d if action == "set_v" else {}, prio) for k, action, d, prio in ops]
    outcomes = [add_or_modify_on(table(), ops, fast) for fast in (True, False)]  # type: ignore[arg-type]
    assert outcomes[0] == outcomes[1]
    log = outcomes[0][0]
    assert log.count("ok") > 15 and len(set(log)) > 10


def trusted(port: int, action: str = TRUST) -> EntryWrite:
    return EntryWrite(TRUSTED, {"ig_intr_md.ingress_port": Match(port)}, action)


@pytest.mark.parametrize(
    "bad",
    [trusted(600), trusted(7, "SwitchIngress.nope"), route(0x0A000100, 1 << 9, op="upsert")],
    ids=["key too wide", "unknown action", "data too wide"],
)
def test_a_run_of_upserts_is_refused_at_its_own_write(bad: EntryWrite) -> None:
    """Upserts into one table in a row go to the table as one call: a
    refused one among them is named by its own index, with the reference
    path's message, and the whole batch (the run's earlier entries, other
    tables' writes) is undone."""
    batch: list[Write] = [
        *(trusted(p) for p in range(10, 40)),
        route(0x0A000500, 5, op="upsert"),
        *(trusted(p) for p in (40, 41)),
        bad,
        *(trusted(p) for p in range(42, 50)),
    ]
    index = batch.index(bad)
    sw = configured()
    before = state(sw)
    message = refused(sw, batch)
    assert f"#{index}" in message
    assert state(sw) == before
    with speedups.disabled():
        assert refused(configured(), batch) == message
    # Without the bad write both paths hold the same entries.
    good = [w for w in batch if w is not bad]
    sw.write(good)
    with speedups.disabled():
        ref = configured()
        ref.write(good)
    assert state(sw) == state(ref)


@pytest.mark.parametrize("when", [1, True, float("nan"), float("inf"), -1.0, 0.5, "1.0"], ids=repr)
def test_pmqecn_rp_refuses_a_bad_clock_as_the_reference_does(when: object) -> None:
    """The reaction point's fast clock check (a float at or after the last
    event) takes what the full check takes and leaves it the rest: an int
    is taken as the float it equals, a bool, NaN, infinity, a string or a
    time before the last event refused with the same message."""
    from models.hosts.pmqecn_rp import ReactionPoint, RpConfig

    def outcome(fast: bool) -> tuple[str, object]:
        rp = ReactionPoint(RpConfig())
        with contextlib.nullcontext() if fast else speedups.disabled():
            rp.on_timer(0.75)
            try:
                rp.on_bytes_sent(1000, when)  # type: ignore[arg-type]
                rp.on_timer(when)  # type: ignore[arg-type]
            except ValueError as exc:
                return "refused", str(exc)
        return "ok", rp.state

    assert outcome(True) == outcome(False)


@pytest.mark.parametrize("nbytes", [1500, 0, True, -1, 1.5, 2**70], ids=repr)
def test_pmqecn_rp_takes_and_refuses_a_byte_count_as_the_reference_does(nbytes: object) -> None:
    from models.hosts.pmqecn_rp import ReactionPoint, RpConfig

    def outcome(fast: bool) -> tuple[str, object]:
        rp = ReactionPoint(RpConfig(byte_counter=20_000))
        with contextlib.nullcontext() if fast else speedups.disabled():
            try:
                rp.on_bytes_sent(nbytes, 0.5)  # type: ignore[arg-type]
            except ValueError as exc:
                return "refused", str(exc)
        return "ok", rp.state

    assert outcome(True) == outcome(False)


@pytest.mark.parametrize("kind", ["exact", "lpm", "ternary"])
@pytest.mark.parametrize("seed", range(3))
def test_upsert_many_is_add_or_modify_one_by_one(kind: str, seed: int) -> None:
    """Table.upsert_many (a push's runs of upserts) on a one-field table:
    for items of every shape, good or refused (too wide, negative, bool,
    float, a prefix or mask where none belongs, unknown field or action,
    bad data, the table full), the same entries as the reference's
    add_or_modify of each item in turn, and a refusal naming the same item
    with the same message."""
    from bfrt_controller.switch import EntryWrite
    from models.switch.core import Action, EntryRefused, KeyField, Table

    rng = random.Random(f"{kind}{seed}")

    def table() -> Table:
        return Table(
            "t",
            [KeyField("k", 10, kind)],  # type: ignore[arg-type]
            [Action("set_v", (("v", 8),)), Action("NoAction")],
            ("NoAction", {}),
            size=120,
        )

    def match() -> Match:
        value = rng.choice([rng.randrange(1 << 10)] * 8 + [-1, 1 << 10, True, 2.0])
        if kind == "exact":
            extra = rng.choice([{}] * 8 + [{"prefix_len": 3}, {"mask": 1}])
        elif kind == "lpm":
            extra = {"prefix_len": rng.choice([10, 10, 8, 0, None, 11, True])}
        else:
            extra = {"mask": rng.choice([0x3FF, 0x3F0, 0x3FF, None, 1 << 10, -1])}
        return Match(value, **extra)  # type: ignore[arg-type]

    def item() -> EntryWrite:
        key: dict[str, Match] = {"k": match()}
        if rng.random() < 0.03:
            key["j"] = Match(1)
        action = rng.choice(["set_v"] * 10 + ["NoAction", "nope"])
        value = rng.choice([rng.randrange(256)] * 10 + [256, True])
        data = {"v": value} if action == "set_v" else {}
        return EntryWrite("t", key, action, data, priority=rng.randrange(3))

    for _ in range(20):
        items = [item() for _ in range(rng.choice([1, 5, 40, 150]))]
        fast, ref = table(), table()
        fast_out: object = "ok"
        ref_out: object = "ok"
        try:
            fast.upsert_many(items)
        except EntryRefused as exc:
            fast_out = (exc.index, str(exc))
        with speedups.disabled():
            for i, it in enumerate(items):
                try:
                    ref.add_or_modify(it.key, it.action or "", it.data, it.priority)
                except P4ModelError as exc:
                    ref_out = (i, str(exc))
                    break
        assert fast_out == ref_out
        assert [(e.key, e.action, e.data, e.priority) for e in fast.entries] == [
            (e.key, e.action, e.data, e.priority) for e in ref.entries
        ]


def test_a_fresh_table_takes_the_build_of_the_same_items_and_nothing_else() -> None:
    """An empty table given the very item objects an empty table of its
    shape was given before (PMQECN's drain writes, the same on every
    switch) takes that table's state: the entries, lookups and later
    writes of the reference's add_or_modify one by one, and a change to
    one table leaves the other as it was. Equal but different items, a
    table of another size, a table with entries, or a refused batch build
    their own."""
    from bfrt_controller.switch import EntryWrite
    from models.switch import core
    from models.switch.core import FRESH_BUILD_MIN, Action, EntryRefused, KeyField, Table

    rng = random.Random(7)

    def table(size: int = 600) -> Table:
        return Table(
            "fresh_build_t",
            [KeyField("k", 12, "ternary")],
            [Action("set_v", (("v", 8),))],
            ("set_v", {"v": 0}),
            size,
        )

    def item() -> EntryWrite:
        mask = rng.choice([0xFFF, 0xF00, 0x0F0])
        key = {"k": Match(rng.randrange(1 << 12) & mask, mask=mask)}
        return EntryWrite("fresh_build_t", key, "set_v", {"v": rng.randrange(256)}, 1)

    items = [item() for _ in range(FRESH_BUILD_MIN + 100)]
    items += items[:40]  # upserts of keys already written: modifies
    ref = table()
    with speedups.disabled():
        for it in items:
            ref.add_or_modify(it.key, it.action or "", it.data, it.priority)

    def seen(t: Table) -> list[object]:
        probe = random.Random(1)
        looks = [t.lookup({"k": probe.randrange(1 << 12)}) for _ in range(300)]
        return [[(e.key, e.action, e.data) for e in t.entries], looks]

    first, second = table(), table()
    first.upsert_many(items)
    second.upsert_many(items)
    assert second._groups is first._groups  # taken, not rebuilt
    assert seen(first) == seen(second) == seen(ref)

    change = [EntryWrite("fresh_build_t", items[0].key, "set_v", {"v": 1}, 1)]
    second.upsert_many(change)
    ref.upsert_many(change)
    second.delete(items[5].key, 1)
    ref.delete(items[5].key, 1)
    assert seen(second) == seen(ref)
    assert seen(first) != seen(second)
    again = table()
    again.upsert_many(items)
    assert seen(again) == seen(first)

    for other, batch in [
        (table(), [dataclasses.replace(it) for it in items]),  # equal, not the same objects
        (table(size=700), items),  # another shape
    ]:
        other.upsert_many(batch)
        assert other._groups is not first._groups
        assert seen(other) == seen(first)
    written = table()
    written.upsert_many(items[:1])
    written.upsert_many(items)
    assert written._groups is not first._groups

    bad = [*items[:-1], EntryWrite("fresh_build_t", {"k": Match(1, mask=1)}, "set_v", {"v": 256})]
    refusing = table(size=650)
    with pytest.raises(EntryRefused):
        refusing.upsert_many(bad)
    assert refusing._shape() not in core._FRESH_BUILDS
