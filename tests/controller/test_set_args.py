# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc set`'s NAME=VALUE and --queue parsing, shared by every program:
each kind checked, every refusal naming the field."""

from __future__ import annotations

import pytest

from bfrt_controller.errors import ConfigError
from bfrt_controller.set_args import parse_queues, parse_values

KINDS = {"k_cells": int, "p": float, "ecn": bool, "mode": ("a", "b")}


def test_each_kind_is_parsed() -> None:
    got = parse_values(("k_cells=12", "p=0.5", "ecn=true", "mode=b"), KINDS)
    assert got == {"k_cells": 12, "p": 0.5, "ecn": True, "mode": "b"}


@pytest.mark.parametrize(
    ("pair", "field"),
    [
        ("k_cells=-1", "k_cells"),
        ("k_cells=1.5", "k_cells"),
        ("p=fast", "p"),
        ("ecn=yes", "ecn"),
        ("mode=c", "mode"),
        ("nope=1", "nope"),
        ("k_cells", "set"),
    ],
)
def test_bad_pairs_name_the_field(pair: str, field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_values((pair,), KINDS)
    assert str(exc.value).startswith(field)


def test_a_name_given_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="given twice"):
        parse_values(("p=1", "p=2"), KINDS)


def test_queues() -> None:
    assert parse_queues(("4/0", "5/1")) == [(4, 0), (5, 1)]
    for bad in (("4",), ("4/0", "4/0"), ("x/1",)):
        with pytest.raises(ConfigError, match="--queue"):
            parse_queues(bad)
