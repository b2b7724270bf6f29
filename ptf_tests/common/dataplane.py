# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Collect what the switch sends for one packet, then compare as a multiset.

PTF's verify_packet checks one expected packet on one port in order; the
vectors promise a multiset (ptf_tests/README.md: "every packet out, as a
multiset"). So the PTF target polls every port with ptf.testutils.dp_poll
(p4lang/ptf src/ptf/testutils.py: dp_poll over DataPlane.poll, no port =
any port) until it has as many packets as expected, then for the negative
timeout to catch extras, and compares the lot as multisets: a packet that
came twice but was expected once is reported too. SDE-free, so pytest covers it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from models.vectors.runner import VectorMismatch, build_scapy_summary, compare_outputs

Poll = Callable[[float], "tuple[int, bytes] | None"]
# Extras beyond this many are not waited for: the comparison already fails.
MAX_EXTRA_PACKETS = 16


def collect_outputs(
    poll: Poll, expected_count: int, timeout_s: float, quiet_s: float
) -> list[tuple[int, bytes]]:
    """Packets (port, bytes) until `expected_count` came or one poll of
    `timeout_s` found none, then every further packet within `quiet_s` each."""
    got: list[tuple[int, bytes]] = []
    while len(got) < expected_count:
        pkt = poll(timeout_s)
        if pkt is None:
            return got
        got.append(pkt)
    while len(got) < expected_count + MAX_EXTRA_PACKETS:
        pkt = poll(quiet_s)
        if pkt is None:
            break
        got.append(pkt)
    return got


def expect_outputs(
    poll: Poll,
    expected: list[tuple[int, bytes]],
    context: str,
    timeout_s: float,
    quiet_s: float,
    masks: list[bytes | None] | None = None,
) -> None:
    """Raise VectorMismatch unless exactly `expected` (in any order) came out;
    with `masks`, only an expected packet's 1 bits of its mask are compared
    (the model's comparison, models/vectors/runner.py)."""
    if masks is not None and any(m is not None for m in masks):
        outputs = collect_outputs(poll, len(expected), timeout_s, quiet_s)
        compare_outputs(outputs, expected, context, masks)
        return
    got = Counter(collect_outputs(poll, len(expected), timeout_s, quiet_s))
    want = Counter(expected)
    if got == want:
        return
    lines = [f"{context}: output differs"]
    for (port, data), n in (want - got).items():
        lines.append(f"  missing on port {port} (x{n}): {_summary(data)}")
    for (port, data), n in (got - want).items():
        lines.append(f"  unexpected on port {port} (x{n}): {_summary(data)}")
    raise VectorMismatch("\n".join(lines))


def _summary(data: bytes) -> str:
    try:
        return build_scapy_summary(data)
    # A truncated mirror copy may not parse; its bytes still say what it is.
    except Exception:
        return data.hex()
