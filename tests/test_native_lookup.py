# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The compiled cores' table search (models/switch/native/pyobj.hpp,
Lookup) answers as Table.lookup's reference search does, on tables where
the answer turns on the ranking: overlapping LPM prefixes, ternary entries
of several masks and priorities (ties to the earlier entry), exact fields
beside them, no key at all; across adds, deletes, modifications and default
changes between lookups, so its compiled form is rebuilt when the table
changes and only then."""

from __future__ import annotations

import contextlib
import random

import pytest
from native_cases import SKIPS

from models import speedups
from models.switch import native
from models.switch.core import Action, KeyField, Match, P4ModelError, Table

pytestmark = SKIPS

SHAPES = {
    "lpm": [("dst", 16, "lpm")],
    "ternary": [("v", 12, "ternary")],
    "exact_lpm": [("port", 3, "exact"), ("src", 12, "lpm")],
    "exact_ternary": [("port", 3, "exact"), ("q", 5, "ternary")],
    "two_ternary": [("a", 6, "ternary"), ("b", 6, "ternary")],
    "keyless": [],
}


def make_table(shape: str) -> Table:
    keys = [KeyField(name, bits, match) for name, bits, match in SHAPES[shape]]
    return Table(
        f"T.{shape}",
        keys,
        [Action("T.set", (("x", 16),)), Action("T.other", (("y", 8),))],
        ("T.other", {"y": 1}),
        size=4096,
    )


def random_match(rng: random.Random, bits: int, kind: str) -> Match:
    value = rng.getrandbits(bits)
    if kind == "exact":
        return Match(value)
    if kind == "lpm":
        plen = rng.randint(0, bits)
        return Match(value >> (bits - plen) << (bits - plen), prefix_len=plen)
    mask = rng.choice([0, (1 << bits) - 1, rng.getrandbits(bits), ((1 << bits) - 1) ^ 1])
    return Match(value & mask, mask=mask)


def change(table: Table, rng: random.Random, shape: str) -> None:
    spec = SHAPES[shape]
    roll = rng.random()
    if roll < 0.1 and table.entries:
        e = rng.choice(table.entries)
        table.delete(e.key, e.priority)
    elif roll < 0.15:
        table.set_default("T.set", {"x": rng.getrandbits(16)})
    elif roll < 0.25 and table.entries:
        e = rng.choice(table.entries)
        table.modify(e.key, "T.set", {"x": rng.getrandbits(16)}, e.priority)
    else:
        key = {name: random_match(rng, bits, kind) for name, bits, kind in spec}
        priority = rng.randint(0, 5) if table.needs_priority else 0
        # A duplicate key: the table refuses it, as it should.
        with contextlib.suppress(P4ModelError):
            table.add(key, "T.set", {"x": rng.getrandbits(16)}, priority=priority)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", range(5))
def test_compiled_search_matches_the_reference(shape: str, seed: int) -> None:
    search = native.lookup_function()
    assert search is not None
    rng = random.Random(seed)
    table = make_table(shape)
    spec = SHAPES[shape]
    fields = tuple(name for name, _, _ in spec)
    compared = hits = 0
    for _ in range(60):
        for _ in range(rng.randint(0, 8)):
            change(table, rng, shape)
        for _ in range(40):
            key = tuple(rng.getrandbits(bits) for _, bits, _ in spec)
            got = search(table, fields, key)
            with speedups.disabled():
                want = table.lookup(dict(zip(fields, key, strict=True)))
            assert (got.hit, got.action, got.data) == (want.hit, want.action, want.data), key
            compared += 1
            hits += want.hit
    assert compared and (hits or shape == "keyless")


def test_a_binding_refuses_key_fields_out_of_the_cores_order() -> None:
    """A core reads a table's key fields in the order its binding names
    them: a table whose fields are other, or in another order, is refused
    when the core is bound, naming the table, not looked up wrongly."""
    from models.switch.core import Action, KeyField, Table
    from models.switch.native.bindings import table_slots

    t = Table(
        "SwitchIngress.t",
        [KeyField("a", 8, "exact"), KeyField("b", 8, "exact")],
        [Action("NoAction")],
        ("NoAction", {}),
        4,
    )
    assert table_slots(t, "a", "b") == (t, ("a", "b"))
    for wrong in (("b", "a"), ("a",), ("a", "b", "c")):
        with pytest.raises(RuntimeError, match=r"SwitchIngress\.t: keys \('a', 'b'\)"):
            table_slots(t, *wrong)
