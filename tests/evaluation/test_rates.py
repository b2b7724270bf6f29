# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Rates in scenario files parse exactly (issue 46): a decimal rate times its
unit is a whole number of bits per second or refused, never a float slip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluation.scenario import parse_rate

UNITS = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9}


def test_ordinary_rates_parse() -> None:
    assert parse_rate("4.1Gbps") == 4_100_000_000
    assert parse_rate("4.1Mbps") == 4_100_000
    assert parse_rate("2.5Gbps") == 2_500_000_000
    assert parse_rate("0.3Mbps") == 300_000
    assert parse_rate(" 100 Gbps ") == 100_000_000_000


@given(
    whole=st.integers(min_value=0, max_value=10**6),
    frac=st.text(alphabet="0123456789", min_size=0, max_size=12),
    unit=st.sampled_from(sorted(UNITS)),
)
def test_a_decimal_rate_is_exact_or_refused(whole: int, frac: str, unit: str) -> None:
    text = f"{whole}.{frac}{unit}bps" if frac else f"{whole}{unit}bps"
    # The oracle: integer arithmetic on the digits themselves.
    numerator = int(f"{whole}{frac}") * UNITS[unit]
    denominator = 10 ** len(frac)
    if numerator % denominator or numerator < denominator:
        with pytest.raises(ValueError, match=r"whole number|at least 1bps"):
            parse_rate(text)
    else:
        assert parse_rate(text) == numerator // denominator


@pytest.mark.parametrize("bad", ["", "10", "10 bits", "1e9bps", "-1Mbps", "1.5.1Mbps", "10Tbps"])
def test_not_a_rate_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_rate(bad)
