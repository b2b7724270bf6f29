# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The helpers kept in one place (issue 46, Deliver 3) against their
reference formulas: the IPv4 header checksum against scapy's, Jain's index
against the textbook sum, logfmt quoting against a logfmt reader. Every
caller goes through these, so a slip here would show in the models, the
hosts' frames, the evaluation or every log line at once.

Bounded by the hypothesis profile in tests/conftest.py ("ci"; "long" fuzzes).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.utils import checksum as scapy_checksum

from bfrt_controller import runtime, service
from bfrt_controller.logs import logfmt_value
from evaluation import frames
from evaluation.metrics import jain_index
from models.switch.headers import Ipv4, ipv4_checksum

# An IPv4 header of any length the IHL allows (5 to 15 words), any content.
ipv4_headers = st.integers(5, 15).flatmap(lambda ihl: st.binary(min_size=4 * ihl, max_size=4 * ihl))


def _zeroed(header: bytes) -> bytes:
    return header[:10] + b"\0\0" + header[12:]


@given(header=ipv4_headers)
def test_ipv4_checksum_is_scapys_over_any_header(header: bytes) -> None:
    assert ipv4_checksum(_zeroed(header)) == scapy_checksum(_zeroed(header))


@given(
    tos=st.integers(0, 255),
    ident=st.integers(0, 0xFFFF),
    ttl=st.integers(0, 255),
    proto=st.integers(0, 255),
    src=st.integers(0, 0xFFFFFFFF),
    dst=st.integers(0, 0xFFFFFFFF),
    payload=st.binary(max_size=64),
)
def test_every_path_gives_the_checksum_scapy_builds(
    tos: int, ident: int, ttl: int, proto: int, src: int, dst: int, payload: bytes
) -> None:
    """scapy rebuilding the header is the reference; the model's Ipv4 (with a
    wrong checksum in it: the field is zeroed, not trusted) and the shared
    function on the wire bytes agree with it."""
    wire = bytes(IP(tos=tos, id=ident, ttl=ttl, proto=proto, src=src, dst=dst) / payload)
    want = IP(wire).chksum
    assert ipv4_checksum(_zeroed(wire[:20])) == want
    hdr = Ipv4.unpack(wire)
    hdr.hdr_checksum ^= 0xFFFF
    assert hdr.checksum() == want


@given(
    src=st.binary(min_size=4, max_size=4),
    dst=st.binary(min_size=4, max_size=4),
    tos=st.integers(0, 255),
    ttl=st.integers(0, 255),
    payload=st.binary(max_size=64),
)
def test_hosts_frames_carry_the_checksum_scapy_builds(
    src: bytes, dst: bytes, tos: int, ttl: int, payload: bytes
) -> None:
    frame = frames.ip_udp(b"\2" * 6, b"\4" * 6, src, dst, 1, 2, payload, tos=tos, ttl=ttl)
    ip = IP(frame[frames.ETH.size :])
    rebuilt = IP(bytes(ip))
    del rebuilt.chksum
    assert ip.chksum == IP(bytes(rebuilt)).chksum
    assert ip[UDP].dport == 2


def test_an_odd_length_is_refused() -> None:
    with pytest.raises(ValueError, match="21 bytes"):
        ipv4_checksum(bytes(21))


def _textbook_jain(xs: list[int]) -> Fraction:
    return Fraction(sum(xs) ** 2, len(xs) * sum(x * x for x in xs))


@given(xs=st.lists(st.integers(0, 10**12), min_size=1, max_size=64))
def test_jain_index_is_the_textbook_formula(xs: list[int]) -> None:
    got = jain_index([float(x) for x in xs])
    if not any(xs):
        assert got is None, "undefined when nothing was delivered"
        return
    assert got is not None and got == pytest.approx(float(_textbook_jain(xs)), rel=1e-12)
    assert 1 / len(xs) - 1e-12 <= got <= 1 + 1e-12


@pytest.mark.parametrize(
    ("xs", "want"),
    [([5.0, 5.0, 5.0], 1.0), ([1.0, 0.0], 0.5), ([3.0, 1.0], 0.8), ([7.0], 1.0)],
)
def test_jain_index_known_values(xs: list[float], want: float) -> None:
    assert jain_index(xs) == pytest.approx(want)


def test_jain_index_of_nothing_is_undefined() -> None:
    assert jain_index([]) is None


def _read_logfmt_value(field: str) -> str:
    """A logfmt reader's view of one value: bare up to the next space, or
    double-quoted with backslash escapes."""
    if not field.startswith('"'):
        assert re.fullmatch(r'[^\s"=]+', field), field
        return field
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', field)
    assert m is not None, field
    return re.sub(r"\\(.)", r"\1", m.group(1))


@given(value=st.text())
def test_logfmt_value_reads_back_as_one_value(value: str) -> None:
    """Any text is one value a logfmt reader gives back (a newline, which
    would split the line, as a space)."""
    assert _read_logfmt_value(logfmt_value(value)) == value.replace("\n", " ")


@pytest.mark.parametrize("emit", [service._event, runtime._event], ids=["service", "runtime"])
def test_the_daemons_events_quote_through_logfmt_value(
    emit: Callable[..., None], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="tofcc.service"):
        emit("reloaded", path="/etc/tofcc/a b.yaml", why='said "no"', n=3)
    assert caplog.messages == ['event=reloaded path="/etc/tofcc/a b.yaml" why="said \\"no\\"" n=3']
