# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The AQM program's reference model (RED, CoDel): the vectors carry the
controller's entries, CoDel's summed control law drops when RFC 8289's
pseudo-code does, RED's curve with the real random source, and Tofino's
sojourn from timestamps (deq_timedelta saturates near 262 us)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from bfrt_controller.aqm.levels import (
    codel_breakpoints_ticks,
    codel_entries,
    codel_tail_step_ticks,
    red_entries,
    ticks_ceil,
)
from hw_profiles import load_profile
from models.switch import aqm_mechanisms
from models.switch.aqm import Aqm, AqmBridged, EgMd, not_before
from models.switch.common import CLOCK_TICK_SHIFT
from models.switch.core import Match
from models.switch.headers import BridgedMd, Ethernet, Header, Ipv4, Udp, emit
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.switch.tna import EgressIntrinsic
from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file
from models.vectors.runner import VectorMismatch, run_vector

EG = "SwitchEgress"
H = TypeVar("H", bound=Header)
INTERVAL_US = 100_000.0
TARGET_NS = 5_000_000


def _vector_entries(file: str, table: str, curve: int) -> set[tuple[int, int, int, int]]:
    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "aqm" / file)
    out = set()
    for e in vfile.setup.tables:
        if e.table != table or e.key["eg_md.curve"].value != curve:
            continue
        ternary = next(k for name, k in e.key.items() if name != "eg_md.curve")
        assert ternary.mask is not None
        first, second = tuple(e.data.values())
        out.add((ternary.value, ternary.mask, first, second))
    return out


def test_red_vectors_carry_the_controllers_entries() -> None:
    want = {(e.value, e.mask, e.level, e.hard) for e in red_entries(8, 16, 0.5, 2, 64)}
    assert _vector_entries("red.yaml", f"{EG}.red_level", 0) == want


def test_codel_vectors_carry_the_controllers_entries() -> None:
    want = {(e.value, e.mask, e.due_count, e.tail) for e in codel_entries(INTERVAL_US, 4)}
    assert _vector_entries("codel.yaml", f"{EG}.codel_due", 0) == want


def test_codel_entries_cover_every_elapsed_time_once() -> None:
    entries = codel_entries(INTERVAL_US, 8)
    e = codel_breakpoints_ticks(INTERVAL_US, 8)
    for elapsed in [0, 1, *e[1:], *(t - 1 for t in e[1:]), 0xFFFFFFFF]:
        hits = [x for x in entries if elapsed & x.mask == x.value]
        assert len(hits) == 1, elapsed
        due = 1 + max(m for m in range(9) if e[m] <= elapsed)
        assert (hits[0].due_count, hits[0].tail) == ((8, 1) if due > 8 else (due, 0))


def test_breakpoints_are_the_exact_sum_rounded_up_to_a_tick() -> None:
    e = codel_breakpoints_ticks(INTERVAL_US, 256)
    tick_ns = 1 << CLOCK_TICK_SHIFT
    for m in range(1, 257):
        exact_ns = INTERVAL_US * 1000 * sum(1 / math.sqrt(i) for i in range(1, m + 1))
        assert 0 <= e[m] * tick_ns - exact_ns < tick_ns


def test_not_before_holds_across_the_wrap() -> None:
    assert not_before(256, 0xFFFFFF00)
    assert not_before(5, 5)
    assert not not_before(4, 5)
    assert not not_before(0xFFFFFF00, 256)


def _codel_model(count_cap: int) -> Aqm:
    model = make_model("aqm", load_profile("tofino"))
    assert isinstance(model, Aqm)
    model.table(f"{EG}.aqm_queue").add(
        {"eg_intr_md.egress_port": Match(4), "eg_intr_md.egress_qid": Match(0)},
        f"{EG}.set_codel",
        {
            "slot": 1,
            "curve": 0,
            "ecn": 0,
            "target_ns": TARGET_NS,
            "interval_ticks": ticks_ceil(INTERVAL_US * 1000),
            "tail_step_ticks": codel_tail_step_ticks(INTERVAL_US, count_cap),
        },
    )
    due = model.table(f"{EG}.codel_due")
    for e in codel_entries(INTERVAL_US, count_cap):
        due.add(
            {"eg_md.curve": Match(0), "eg_md.elapsed_ticks": Match(e.value, mask=e.mask)},
            f"{EG}.set_due",
            {"due_count": e.due_count, "tail": e.tail},
            priority=1,
        )
    return model


def _valid(h: H) -> H:
    h.set_valid()
    return h


def _bridged(now_ticks: int, arrival_ns: int, dst_addr: int) -> bytes:
    """A packet as ingress hands it to egress: bridged headers, then UDP/IPv4."""
    ip = Ipv4(version=4, ihl=5, ttl=64, protocol=17, total_len=28, src_addr=0x0A000101)
    ip.dst_addr = dst_addr
    return emit(
        _valid(BridgedMd(pkt_type=1)),
        _valid(AqmBridged(now_ticks, arrival_ns)),
        _valid(Ethernet(ether_type=0x0800)),
        _valid(ip),
        _valid(Udp(src_port=1, dst_port=2, length=8)),
    )


def _model_drop_times_ns(model: Aqm, leave_ns: list[int], sojourn_ns: int) -> list[int]:
    dropped = []
    for t in leave_ns:
        arrival = t - sojourn_ns
        data = _bridged(arrival >> CLOCK_TICK_SHIFT, arrival & 0xFFFFFFFF, 0x0A000404)
        md = EgressIntrinsic(4, 0, deq_timedelta=0, global_tstamp_ns=t)
        if model.egress(md, data).drop:
            dropped.append(t)
    return dropped


def _rfc8289_drop_times_ns(leave_ns: list[int], sojourn_ns: int) -> list[int]:
    """RFC 8289's dequeue pseudo-code (section 5.5) on a queue that always
    holds packets with this sojourn: each entry of `leave_ns` is one call."""
    interval = INTERVAL_US * 1000
    first_above = 0.0
    dropping = False
    count = 0
    drop_next = 0.0
    drops: list[int] = []

    def ok_to_drop(now: float) -> bool:
        nonlocal first_above
        if sojourn_ns < TARGET_NS:
            first_above = 0
            return False
        if first_above == 0:
            first_above = now + interval
            return False
        return now >= first_above

    for now in leave_ns:
        ok = ok_to_drop(now)
        if dropping:
            if not ok:
                dropping = False
            while dropping and now >= drop_next:
                drops.append(now)
                count += 1
                if not ok_to_drop(now):
                    dropping = False
                else:
                    drop_next += interval / math.sqrt(count)
        elif ok:
            drops.append(now)
            ok_to_drop(now)
            dropping = True
            count = 1
            drop_next = now + interval / math.sqrt(count)
    return drops


def test_codel_drops_when_rfc8289_does() -> None:
    """1.5 s above target, a packet leaving every 64 us: the summed control
    law drops the same packets as the RFC's chain of drop_next (to the
    tick: each breakpoint is rounded up to 64 ns, the packets leave on
    64 us boundaries)."""
    sojourn_ns = 10_000_000
    leave_ns = [1_000_000_000 + i * 64_000 for i in range(1, 1_500_000 // 64)]
    rfc = _rfc8289_drop_times_ns(leave_ns, sojourn_ns)
    model = _model_drop_times_ns(_codel_model(64), leave_ns, sojourn_ns)
    assert len(rfc) > 20
    assert model == rfc


def test_codel_keeps_the_cap_spacing_after_count_cap() -> None:
    sojourn_ns = 10_000_000
    leave_ns = [1_000_000_000 + i * 64_000 for i in range(1, 1_500_000 // 64)]
    drops = _model_drop_times_ns(_codel_model(4), leave_ns, sojourn_ns)
    rfc = _rfc8289_drop_times_ns(leave_ns, sojourn_ns)
    assert drops[:5] == rfc[:5]
    gaps = [b - a for a, b in itertools.pairwise(drops[5:])]
    step_ns = codel_tail_step_ticks(INTERVAL_US, 4) << CLOCK_TICK_SHIFT
    assert gaps and all(step_ns <= g < step_ns + 64_000 for g in gaps)


def test_tofino_sojourn_comes_from_timestamps() -> None:
    """deq_timedelta reads 262 us at most on Tofino: the model (as the P4)
    takes the egress timestamp minus the arrival's, so a 6.4 ms sojourn
    starts CoDel's interval; on Tofino2 the 32-bit deq_timedelta does."""
    for chip in ("tofino", "tofino2"):
        model = _codel_model(4) if chip == "tofino" else None
        if model is None:
            model2 = make_model("aqm", load_profile(chip))
            assert isinstance(model2, Aqm)
            model = model2
            model.table(f"{EG}.aqm_queue").add(
                {"eg_intr_md.egress_port": Match(4), "eg_intr_md.egress_qid": Match(0)},
                f"{EG}.set_codel",
                {
                    "slot": 1,
                    "curve": 0,
                    "ecn": 0,
                    "target_ns": TARGET_NS,
                    "interval_ticks": 1562500,
                    "tail_step_ticks": 1,
                },
            )
        arrival = 1_000_000_000
        leave = arrival + 6_400_000
        profile = load_profile(chip)
        data = _bridged(arrival >> CLOCK_TICK_SHIFT, arrival & 0xFFFFFFFF, 0x0A000404)
        md = EgressIntrinsic(
            4,
            0,
            deq_timedelta=min(6_400_000, profile.max_timedelta_ns),
            global_tstamp_ns=leave,
        )
        model.egress(md, data)
        first_above = model.register(f"{EG}.codel_first_above_ticks").read(1)
        assert first_above == (leave >> CLOCK_TICK_SHIFT) + 1562500, chip


def test_red_real_random_source_follows_the_level() -> None:
    """Without an injected value the draw is uniform on 0..32767, so an
    average of 12 cells (level 8192 with the vectors' curve) drops about a
    quarter of the packets."""
    model = make_model("aqm", load_profile("tofino"))
    model.table(f"{EG}.aqm_queue").add(
        {"eg_intr_md.egress_port": Match(2), "eg_intr_md.egress_qid": Match(0)},
        f"{EG}.set_red",
        {"slot": 0, "curve": 0, "ecn": 0, "block_last": 3},
    )
    for e in red_entries(8, 16, 0.5, 2, 64):
        model.table(f"{EG}.red_level").add(
            {"eg_md.curve": Match(0), "eg_md.avg_sum_cells": Match(e.value, mask=e.mask)},
            f"{EG}.set_level",
            {"level": e.level, "hard": e.hard},
            priority=1,
        )
    drops = 0
    n = 8000
    for _ in range(n):
        data = _bridged(0, 0, 0x0A000202)
        drops += model.egress(EgressIntrinsic(2, 0, enq_qdepth=12), data).drop
    assert 0.22 < drops / n < 0.28


def _broken_models() -> dict[str, Callable[[Aqm, pytest.MonkeyPatch], None]]:
    """Plausible mistakes, each of which some vector must catch."""

    def count_off_by_one(m: Aqm, mp: pytest.MonkeyPatch) -> None:
        read = m.codel.codel_count.read
        mp.setattr(m.codel.codel_count, "read", lambda slot: read(slot) - 1)

    def first_above_without_interval(m: Aqm, mp: pytest.MonkeyPatch) -> None:
        apply = m.codel.apply

        def deadline_is_departure(md: EgMd, now_ticks: int) -> None:
            md.deadline_base_ticks = now_ticks
            apply(md, now_ticks)

        mp.setattr(m.codel, "apply", deadline_is_departure)

    def wrapless_compare(m: Aqm, mp: pytest.MonkeyPatch) -> None:
        mp.setattr(aqm_mechanisms, "not_before", lambda t, deadline: t >= deadline)

    def no_tail(m: Aqm, mp: pytest.MonkeyPatch) -> None:
        apply = m.codel.apply

        def never_in_tail(md: EgMd, now_ticks: int) -> None:
            apply(md, now_ticks)
            if md.tail == 1:
                md.chosen = 0

        mp.setattr(m.codel, "apply", never_in_tail)

    def red_at_or_below_level(m: Aqm, mp: pytest.MonkeyPatch) -> None:
        apply = m.red.apply

        def at_or_below(md: EgMd) -> None:
            md.random = max(0, md.random - 1)
            apply(md)

        mp.setattr(m.red, "apply", at_or_below)

    def avg_is_instantaneous(m: Aqm, mp: pytest.MonkeyPatch) -> None:
        mp.setattr(m.red.red_avg_sum_cells, "read", lambda slot: 0)

    def empty_queue_ignored(m: Aqm, mp: pytest.MonkeyPatch) -> None:
        mp.setattr(m.red, "block_limit", lambda md: md.block_last)

    def ecn_ignores_hard(m: Aqm, mp: pytest.MonkeyPatch) -> None:
        verdict = m.verdict

        def mark_any_ect(hdr: Any, may_mark: bool, port: int, n: int) -> bool:
            return verdict(hdr, hdr.ipv4.ecn != 0, port, n)

        mp.setattr(m, "verdict", mark_any_ect)

    return {f.__name__: f for f in (
        count_off_by_one, first_above_without_interval, wrapless_compare, no_tail,
        red_at_or_below_level, avg_is_instantaneous, empty_queue_ignored, ecn_ignores_hard,
    )}  # fmt: skip


BROKEN = _broken_models()


@pytest.mark.parametrize("mistake", sorted(BROKEN))
def test_vectors_catch_a_broken_model(mistake: str) -> None:
    failures = 0
    for file in ("red.yaml", "codel.yaml"):
        vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "aqm" / file)
        for vector in vfile.vectors:
            model = make_model("aqm", load_profile("tofino"))
            assert isinstance(model, Aqm)
            with pytest.MonkeyPatch.context() as mp:
                BROKEN[mistake](model, mp)
                try:
                    run_vector(ModelTarget(model), vfile, vector, PROGRAMS["aqm"].queue_hook)
                except VectorMismatch:
                    failures += 1
    assert failures > 0, f"no vector notices {mistake}"
