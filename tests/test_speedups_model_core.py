# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 48's speed-ups of the switch model's per-packet core give the
reference path's results: register reads and writes (the same values, the
same refusals with the same messages, the same state), counter counts, the
deparser's emit (the same bytes, a header class with its own is_valid or
pack included) and a lookup answered from memory."""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections.abc import Callable

import pytest

from models import speedups
from models.switch.core import Action, Counter, KeyField, P4ModelError, Register, Table
from models.switch.headers import Ethernet, Feedback, Header, Ipv4, Tcp, Udp, bits, emit


class Flag(int):
    """An int subclass: the reference accepts it, the fast path hands it on."""


# Indices and values of every kind the checks tell apart.
ODD: list[object] = [True, False, -1, 1.0, "1", None, Flag(3), 2**64, -(2**64)]


def outcome(fn: Callable[[], object]) -> object:
    try:
        return ("ok", fn())
    except P4ModelError as exc:
        return ("refused", str(exc))


def run_register(fast: bool, seed: int) -> tuple[list[object], list[list[int]]]:
    rng = random.Random(seed)
    reg = Register("SwitchIngress.r", rng.choice([1, 8, 16, 32]), 16, initial=3)
    log: list[object] = []
    with contextlib.nullcontext() if fast else speedups.disabled():
        for _ in range(400):
            index = rng.choice([*range(-2, 19), *ODD])
            value: object = rng.choice(
                [0, 1, reg.max, reg.max + 1, rng.getrandbits(reg.width + 1), *ODD]
            )
            if rng.random() < 0.5:
                log.append(outcome(lambda: reg.read(index)))  # type: ignore[arg-type]  # noqa: B023
            else:
                log.append(outcome(lambda: reg.write(index, value)))  # type: ignore[arg-type]  # noqa: B023
    return log, reg.copies()


@pytest.mark.parametrize("seed", range(8))
def test_register_reads_and_writes_match_the_reference(seed: int) -> None:
    fast, ref = run_register(True, seed), run_register(False, seed)
    assert fast == ref
    log = fast[0]
    # Both kinds of answer happened, so both paths were compared.
    assert {entry[0] for entry in log} == {"ok", "refused"}  # type: ignore[index]


def test_a_register_refuses_a_bool_index_and_value_on_the_fast_path() -> None:
    reg = Register("r", 8, 4)
    with pytest.raises(P4ModelError, match="index True"):
        reg.read(True)
    with pytest.raises(P4ModelError, match="expected an integer, got True"):
        reg.write(1, True)
    with pytest.raises(P4ModelError, match="does not fit in 8 bits"):
        reg.write(1, 256)
    reg.write(1, Flag(255))
    assert reg.values == [0, 255, 0, 0]


@pytest.mark.parametrize("seed", range(4))
def test_counter_counts_match_the_reference(seed: int) -> None:
    def run(fast: bool) -> tuple[list[object], object]:
        rng = random.Random(seed)
        c = Counter("SwitchEgress.c", 8, "packets_and_bytes")
        c.set_pipes(2)
        log = []
        with contextlib.nullcontext() if fast else speedups.disabled():
            for _ in range(300):
                c.select_pipe(rng.randrange(2))
                index = rng.choice([*range(-1, 10), *ODD])
                log.append(outcome(lambda: c.count(index, rng.randrange(64, 1500))))  # noqa: B023
        return log, c.copies()

    fast, ref = run(True), run(False)
    assert fast == ref
    assert {entry[0] for entry in fast[0]} == {"ok", "refused"}  # type: ignore[index]


def odd_headers() -> tuple[type[Header], type[Header], type[Header]]:
    """Header classes that override what the fast paths skip, made when a
    test runs: defined at import, tests/test_speedups.py's list of every
    header class (made at collection) would take them in."""

    @dataclasses.dataclass
    class Shy(Header):
        """Valid only with a nonzero tag: emit must ask it, not read `valid`."""

        tag: int = bits(8)

        def is_valid(self) -> bool:
            return self.valid and self.tag != 0

    @dataclasses.dataclass
    class Loud(Header):
        """Packs itself differently from its layout."""

        tag: int = bits(8)

        def pack(self) -> bytes:
            return b"!" + super().pack()

    @dataclasses.dataclass
    class Stamped(Header):
        """Its own __post_init__: the fast unpack must still call it."""

        tag: int = bits(8)

        def __post_init__(self) -> None:
            super().__post_init__()
            self.seen = self.tag + 1

    return Shy, Loud, Stamped


def random_valid(cls: type[Header], rng: random.Random) -> Header:
    h = cls(**{f.name: rng.getrandbits(f.metadata["bits"]) for f in dataclasses.fields(cls)})  # type: ignore[arg-type]
    h.valid = rng.random() < 0.7
    return h


@pytest.mark.parametrize("seed", range(6))
def test_emit_gives_the_reference_bytes(seed: int) -> None:
    rng = random.Random(seed)
    shy_cls, loud_cls, _ = odd_headers()
    classes: list[type[Header]] = [Ethernet, Ipv4, Tcp, Udp, Feedback, shy_cls, loud_cls]
    seen_override = set()
    for _ in range(300):
        headers = [random_valid(rng.choice(classes), rng) for _ in range(rng.randrange(7))]
        fast = emit(*headers)
        with speedups.disabled():
            ref = emit(*headers)
        assert fast == ref
        seen_override |= {
            type(h).__name__ for h in headers if isinstance(h, shy_cls | loud_cls) and h.valid
        }
    assert seen_override == {"Shy", "Loud"}


def test_emit_asks_an_overriding_header() -> None:
    shy_cls, loud_cls, _ = odd_headers()
    shy, loud = shy_cls(tag=0), loud_cls(tag=7)  # type: ignore[call-arg]
    shy.valid = loud.valid = True
    assert emit(shy, loud) == b"!\x07"
    with speedups.disabled():
        assert emit(shy, loud) == b"!\x07"


def test_a_remembered_lookup_is_the_reference_answer_after_changes() -> None:
    """The memory answered inline in lookup(): a repeated key, then a change
    of entries and of the default, each answered as the reference does."""
    t = Table(
        "t",
        [KeyField("a", 8, "exact")],
        [Action("set_v", (("v", 8),)), Action("NoAction")],
        ("NoAction", {}),
        size=8,
    )
    from models.switch.core import Match

    def both(a: int) -> tuple[object, object]:
        fast = t.lookup({"a": a})
        with speedups.disabled():
            ref = t.lookup({"a": a})
        return (fast.hit, fast.action, fast.data), (ref.hit, ref.action, ref.data)

    for _ in range(3):
        f, r = both(1)
        assert f == r == (False, "NoAction", {})
    t.add({"a": Match(1)}, "set_v", {"v": 4})
    for _ in range(3):
        f, r = both(1)
        assert f == r == (True, "set_v", {"v": 4})
    t.set_default("set_v", {"v": 9})
    f, r = both(2)
    assert f == r == (False, "set_v", {"v": 9})
    t.modify({"a": Match(1)}, "set_v", {"v": 5})
    f, r = both(1)
    assert f == r == (True, "set_v", {"v": 5})


def test_unpack_without_init_keeps_a_header_own_post_init() -> None:
    _, _, stamped_cls = odd_headers()
    for fast in (True, False):
        with contextlib.nullcontext() if fast else speedups.disabled():
            h = stamped_cls.unpack(b"\x05")
        assert (h.tag, h.seen, h.valid) == (5, 6, True)  # type: ignore[attr-defined]


@pytest.mark.parametrize("cls", [Ethernet, Ipv4, Tcp, Udp, Feedback], ids=lambda c: c.__name__)
def test_unpack_gives_the_reference_attributes_in_order(cls: type[Header]) -> None:
    """The same attributes in the same order as the reference's cls(...)
    (dataclass equality leaves out `valid`, vars() does not)."""
    rng = random.Random(cls.__name__)
    for _ in range(50):
        data = bytes(rng.randrange(256) for _ in range(cls.size_bytes() + 2))
        with speedups.disabled():
            ref = cls.unpack(data)
        assert list(vars(cls.unpack(data)).items()) == list(vars(ref).items())


def tm_trace(fast: bool, seed: int) -> list[object]:
    """Every dequeue of a random run: one or several busy queues, priorities
    and weights, a PFC pause and a shaper part of the time."""
    from evaluation.tm import EgressTm

    rng = random.Random(seed)
    shaping: dict[tuple[int, int | None], tuple[int, int]] = {}
    tm = EgressTm(buffer_bytes=60_000, cell_bytes=80, port=3, shaping=shaping)
    tm.priority = {2: 1}
    tm.weight = {0: 3, 1: 1}
    out: list[object] = []
    now = 0
    with contextlib.nullcontext() if fast else speedups.disabled():
        for _ in range(2000):
            now += rng.randrange(0, 3000)
            kind = rng.random()
            if kind < 0.45:
                qid = rng.choices([0, 1, 2], weights=[8, 2, 1])[0]
                tm.enqueue(bytes(rng.randrange(64, 1500)), qid, now)
            elif kind < 0.9:
                out.append(tm.dequeue(now))
            elif kind < 0.95:
                tm.pause(rng.randrange(3), now + rng.choice([0, 5000]))
            elif shaping:
                shaping.clear()
            else:
                shaping[(3, None)] = (1_000_000, 3000)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_tm_pick_gives_the_reference_dequeues(seed: int) -> None:
    fast, ref = tm_trace(True, seed), tm_trace(False, seed)
    assert fast == ref
    assert sum(d is not None for d in fast) > 500
    assert len({d.qid for d in fast if d is not None}) == 3  # type: ignore[attr-defined]


def test_spie_row_hashes_from_memory_are_the_reference_crcs() -> None:
    """S-PIE's three row hashes remembered per flow key: the same CRCs as
    computing them, the first time and from memory, bytes-like keys too."""
    from models.switch.spie import row_hashes

    rng = random.Random(48)
    keys = [bytes(rng.randrange(256) for _ in range(13)) for _ in range(40)]
    for key in keys * 3:
        with speedups.disabled():
            ref = row_hashes(key)
        assert row_hashes(key) == ref
        assert row_hashes(bytearray(key)) == ref  # type: ignore[arg-type]
    assert len({row_hashes(k) for k in keys}) == len(keys)
