# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The P4 virtual queue (as the reference model runs it) against the exact one.

The exact virtual queue of seed 000 drains at the class's rate r over the
real time between packets and then adds the frame (Lindley). The switch's
differs in three ways (tna/pmqecn/README.md, "Virtual queue"): it adds the frame
and takes the drain in one step, max(q + L - D, 0), so after the queue
empties it may sit up to one frame below; it counts time in 64 ns ticks, so
up to one tick of drain is still owed; and the drain tables round down the
elapsed ticks to `b` leading bits, the two logarithms to 1/128 of a doubling
and the bytes to an integer, so they drain at least (1 - eps) of the exact
amount less one byte, eps = 1 - (1 - 2^-(b-1)) 2^(-2/128). Hence, with A
the exact queue at rate r and U the exact queue at rate r(1 - eps) fed
frames one byte longer,

    A - L_max - r*tick  <=  q  <=  U + r*tick.

These tests drive the model with random traffic and check both sides.
"""

from __future__ import annotations

import random
import struct

import pytest

from bfrt_controller.pmqecn.drain import (
    EXP_FIRST_Q7,
    TICK_NS,
    drain_bytes,
    exp_drain_bytes,
    exp_entries,
    log_elapsed_q7,
    log_entries,
    rate_log2_q7,
)
from hw_profiles import load_profile
from models.switch.core import Match
from models.switch.pmqecn import Pmqecn
from models.switch.registry import make_model

CLASS = 1
PORT_IN, PORT_OUT = 1, 2


def _switch(rate_bytes_per_s: int, bits: int) -> Pmqecn:
    model = make_model("pmqecn", load_profile("tofino"))
    assert isinstance(model, Pmqecn)
    model.table("SwitchIngress.forward.ipv4_lpm").add(
        {"hdr.ipv4.dst_addr": Match(0x0A000202, prefix_len=32)},
        "SwitchIngress.forward.route",
        {"port": PORT_OUT, "src_mac": 2, "dst_mac": 3},
    )
    model.table("SwitchIngress.classify").add(
        {"hdr.ipv4.src_addr": Match(0x0A000101, mask=0xFFFFFFFF)},
        "SwitchIngress.set_class",
        {"class_id": CLASS, "vq_id": CLASS, "qid": 0},
        priority=1,
    )
    # No K_i to speak of: these tests watch the queue, not the marking.
    model.table("SwitchIngress.ecn_threshold").add(
        {"hdr.bridged.class_id": Match(CLASS), "ingress_pipe": Match(0)},
        "SwitchIngress.set_threshold",
        {
            "threshold_bytes": 0x7FFFFFFF,
            "mark_original": 0,
            "rate_log2_q7": rate_log2_q7(rate_bytes_per_s),
            "feedback_interval_ticks": 0,
        },
    )
    log_table = model.table("SwitchIngress.vq_log_elapsed")
    for e in log_entries(bits):
        log_table.add(
            {"ig_md.vq_elapsed_ticks": Match(e.elapsed_value, mask=e.elapsed_mask)},
            "SwitchIngress.log_elapsed",
            {"log_elapsed_q7": e.log_elapsed_q7},
            priority=1,
        )
    exp_table = model.table("SwitchIngress.vq_exp_drain")
    for sum_q7, drain in exp_entries():
        exp_table.add(
            {"ig_md.vq_log_drain_q7": Match(sum_q7)}, "SwitchIngress.drain", {"drain_bytes": drain}
        )
    return model


def _eps(bits: int) -> float:
    return 1 - (1 - 2.0 ** -(bits - 1)) * 2.0 ** (-2 / 128)


def _frame(frame_bytes: int) -> bytes:
    ip_len = frame_bytes - 14
    eth = b"\x02\x00\x00\x00\x00\x01" + b"\x00\x00\x00\x00\x01\x01" + b"\x08\x00"
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 1, 0, 64, 17, 0,
                     bytes([10, 0, 1, 1]), bytes([10, 0, 2, 2]))  # fmt: skip
    udp = struct.pack("!HHHH", 5000, 6000, ip_len - 20, 0)
    return eth + ip + udp + bytes(ip_len - 28)


def _traffic(rate_bytes_per_s: float, load: float, n: int, seed: int) -> list[tuple[int, int]]:
    """(time_ns, frame_bytes): on/off Poisson arrivals averaging `load` x rate
    while on, with idle gaps long enough to empty the queue."""
    rng = random.Random(seed)
    t = 1_000_000.0
    out = []
    for i in range(n):
        size = rng.choice([64, 128, 512, 1000, 1514, rng.randint(64, 1514)])
        out.append((int(t), size))
        mean_gap_ns = 1e9 * 700 / (load * rate_bytes_per_s)
        t += rng.expovariate(1 / mean_gap_ns)
        if i % 400 == 399:
            t += 1e9 * 200_000 / rate_bytes_per_s  # long enough to drain 200 kB
    return out


def _lindley(traffic: list[tuple[int, int]], r_per_ns: float, extra_bytes: int) -> list[float]:
    q, last, out = 0.0, traffic[0][0], []
    for t, size in traffic:
        q = max(q - r_per_ns * (t - last), 0.0) + size + extra_bytes
        last = t
        out.append(q)
    return out


CASES = [
    (rate, load, bits)
    for rate in (1_250_000, 125_000_000, 12_500_000_000)  # 10 Mb/s, 1 Gb/s, 100 Gb/s
    for load in (0.5, 0.95, 1.3)
    for bits in (8,)
] + [(125_000_000, 1.3, 4), (125_000_000, 0.95, 6), (1_000, 1.3, 8)]


@pytest.mark.parametrize(("rate", "load", "bits"), CASES)
def test_virtual_queue_within_its_error_bound(rate: int, load: float, bits: int) -> None:
    model = _switch(rate, bits)
    traffic = _traffic(rate, load, 1500, seed=rate % 97 + int(load * 10) + bits)
    r = rate / 1e9
    eps = _eps(bits)
    exact = _lindley(traffic, r, 0)
    upper = _lindley(traffic, r * (1 - eps), 1)
    l_max = max(size for _, size in traffic)
    owed = r * TICK_NS
    frames = {size: _frame(size) for _, size in traffic}
    vq = model.register("SwitchIngress.vq_bytes")
    worst_below = worst_above = 0.0
    for k, (t, size) in enumerate(traffic):
        model.now_ns = t
        out = model.send(PORT_IN, frames[size])
        assert [o.port for o in out] == [PORT_OUT]
        q = vq.read(CLASS)
        assert exact[k] - l_max - owed <= q <= upper[k] + owed, (k, q, exact[k], upper[k])
        worst_below = max(worst_below, exact[k] - q)
        worst_above = max(worst_above, q - exact[k])
    # The bound is not vacuous: the queue did build up well beyond one frame.
    assert max(exact) > 4 * l_max or load < 1
    print(
        f"rate {rate * 8 / 1e9:g} Gb/s load {load} b={bits}: exact max {max(exact):.0f} B, "
        f"switch at most {worst_below:.0f} B below, {worst_above:.0f} B above"
    )


@pytest.mark.parametrize("bits", [3, 6, 8])
def test_log_table_covers_every_elapsed_time_once(bits: int) -> None:
    """Every nonzero elapsed time hits exactly one vq_log_elapsed entry, the
    one log_elapsed_q7() names; 0 hits none (no drain)."""
    entries = log_entries(bits)
    rng = random.Random(bits)
    for elapsed in [0, 1, 2, 31, 32, 33, 63, 64, 1000, 2**31, 2**32 - 1] + [
        rng.randrange(1, 2**32) for _ in range(300)
    ]:
        hits = [e for e in entries if elapsed & e.elapsed_mask == e.elapsed_value]
        if elapsed == 0:
            assert hits == []
            continue
        assert len(hits) == 1, elapsed
        assert hits[0].log_elapsed_q7 == log_elapsed_q7(bits, elapsed)


@pytest.mark.parametrize("bits", [4, 6, 8])
def test_drain_never_exceeds_the_exact_drain_and_stays_within_its_bound(bits: int) -> None:
    """Over rates from 1 kB/s to 100 Gb/s and elapsed times from one tick to
    2^32: never more than rate x time, never short by more than eps of it
    plus one byte (below the cap); the worst case found comes close to eps."""
    rng = random.Random(7 + bits)
    eps = _eps(bits)
    worst = 0.0
    for _ in range(4000):
        rate = int(10 ** rng.uniform(3, 10.1))
        elapsed = int(2 ** rng.uniform(0, 32)) or 1
        exact = rate * TICK_NS * elapsed / 1e9
        got = drain_bytes(rate, bits, elapsed)
        if exact >= 2**30:
            assert got <= 2**30
            continue
        assert got <= exact, (rate, elapsed)
        assert got >= exact * (1 - eps) - 1, (rate, elapsed, got, exact)
        if exact > 1000:
            worst = max(worst, 1 - got / exact)
    assert worst > eps / 2  # the bound is not loose by an order of magnitude


def test_exp_table_answers_its_closed_form() -> None:
    """2^(s/128 - 32) bytes, rounded down, from one byte up to the cap."""
    entries = dict(exp_entries())
    assert min(entries) == EXP_FIRST_Q7 and entries[EXP_FIRST_Q7] == 1
    assert entries[EXP_FIRST_Q7 + 128] == 2 and entries[EXP_FIRST_Q7 + 10 * 128] == 1024
    assert entries[EXP_FIRST_Q7 + 64] == 1  # 2^0.5 = 1.41
    assert entries[EXP_FIRST_Q7 + 30 * 128] == 2**30 == max(entries.values())
    assert exp_drain_bytes(EXP_FIRST_Q7 - 1) == 0
    values = [entries[s] for s in sorted(entries)]
    assert values == sorted(values)  # monotone: a longer time never drains less
    assert all(entries[s] == exp_drain_bytes(s) for s in entries)


def test_the_rate_log_rounds_down_and_refuses_nonsense() -> None:
    assert rate_log2_q7(0) == 0
    # 1 byte per 64 ns tick: log2 = 0, offset 32.
    assert rate_log2_q7(15_625_000) == 32 * 128
    assert rate_log2_q7(15_625_000 - 1) == 32 * 128 - 1
    for bad in (-1, 1.5, True):
        with pytest.raises((ValueError, TypeError)):
            rate_log2_q7(bad)  # type: ignore[arg-type]
