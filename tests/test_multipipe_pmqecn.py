# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 50, finding 4 (PMQECN) and PMQECN's items of finding 5, on 2 and 4 pipes.

A class's virtual queue lives in each ingress pipe its senders use; the
controller measures each pipe's share of the class's arrivals every cycle and
drains each pipe at that share of the class's rate (bfrt_controller/pmqecn/
pipes.py). Feedback copies are limited to one per class per interval in each
pipe and counted on both sides of the mirror; W_i's accumulators are read
from the half the data plane no longer writes.
"""

from __future__ import annotations

import pytest
from multipipe_cases import (
    pmqecn_marked,
    pmqecn_measured,
    pmqecn_on,
    pmqecn_raw,
    port_in,
    voice_frame,
)

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.pmqecn import names as n
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import parse_config
from bfrt_controller.pmqecn.drain import rate_log2_q7
from bfrt_controller.pmqecn.pipes import MIN_SHARE_UNITS, SHARE_UNITS, WHOLE
from bfrt_controller.pmqecn.status import feedback_lost
from hw_profiles import load_profile
from models.switch.core import Match

PIPES = [2, 4]


def _summed_vq(app: PmqecnApp, class_id: int) -> int:
    """The class's virtual queue as the controller reads it: summed over pipes."""
    return app.switch.read_register(n.VQ_BYTES, class_id)


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_class_spread_over_pipes_is_marked(pipes: int) -> None:
    """A class sent at 1.5 x its drain rate by hosts in every pipe, each
    below the rate, is marked as the same load from one pipe is: after one
    measured interval each pipe drains its share of the rate, not the whole
    rate (today: never marked, each pipe draining the whole class's rate)."""
    app, model = pmqecn_on(pipes)
    every = list(range(pipes))
    start = pmqecn_measured(app, model, every)
    assert pmqecn_marked(app, model, every, load=1.5, start_ns=start) > 0


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_virtual_queue_counts_every_pipes_arrivals(pipes: int) -> None:
    """The class's virtual queue, summed over the pipes as the controller
    reads it, holds what every pipe's arrivals brought beyond the class's
    drain: past K_i after 400 packets at 1.5 x the rate, and within 10 % of
    the queue the same packets leave when they all arrive in one pipe."""
    app, model = pmqecn_on(pipes)
    every = list(range(pipes))
    start = pmqecn_measured(app, model, every)
    pmqecn_marked(app, model, every, load=1.5, start_ns=start)
    voice = app.config.classes[0]
    spread = _summed_vq(app, voice.id)
    assert spread > app.live[voice.id].threshold_cells * model.profile.cell_bytes

    one_app, one_model = pmqecn_on(pipes)
    start = pmqecn_measured(one_app, one_model, [0])
    pmqecn_marked(one_app, one_model, [0], load=1.5, start_ns=start)
    alone = _summed_vq(one_app, voice.id)
    assert alone > 0
    assert spread == pytest.approx(alone, rel=0.10)


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_shares_follow_the_measured_arrivals(pipes: int) -> None:
    """Even senders in every pipe: each of those pipes' entries drains
    1/pipes of the class's rate, a pipe without senders (and every pipe of
    a class without arrivals) the whole rate; K_i and the feedback interval
    are the same in every pipe's entry."""
    app, model = pmqecn_on(pipes)
    pmqecn_measured(app, model, list(range(pipes)))
    voice, video = app.config.classes[0], app.config.classes[1]
    assert app.pipes.shares[voice.id] == (SHARE_UNITS // pipes,) * pipes + (WHOLE,) * (4 - pipes)
    assert app.pipes.shares[video.id] == (WHOLE,) * 4

    def entry(cid: int, pipe: int) -> dict[str, int]:
        e = app.switch.read_entry(
            n.ECN_THRESHOLD, {n.K_CLASS_ID: Match(cid), n.K_INGRESS_PIPE: Match(pipe)}
        )
        assert e is not None
        return dict(e.data)

    drain = app.drain_rate_bytes_per_s(voice)
    for pipe in range(4):
        got = entry(voice.id, pipe)
        share = drain // pipes if pipe < pipes else drain
        assert got["rate_log2_q7"] == rate_log2_q7(share)
        assert got["threshold_bytes"] == app.live[voice.id].threshold_cells * 80
        assert got["feedback_interval_ticks"] == 782  # 50 us in 64 ns ticks, rounded up
        assert entry(video.id, pipe)["rate_log2_q7"] == rate_log2_q7(
            app.drain_rate_bytes_per_s(video)
        )


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_class_in_one_pipe_keeps_the_whole_rate(pipes: int) -> None:
    """A class whose senders are all behind one pipe (of a switch with more)
    drains at its whole rate there, as on a one-pipe switch: marked over its
    rate, not under it."""
    app, model = pmqecn_on(pipes)
    last = pipes - 1
    start = pmqecn_measured(app, model, [last])
    assert app.pipes.shares[app.config.classes[0].id] == (WHOLE,) * 4
    assert pmqecn_marked(app, model, [last], load=0.8, start_ns=start) == 0
    assert pmqecn_marked(app, model, [last], load=1.5, start_ns=start + 10**9) > 0


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_spread_class_under_its_rate_is_not_marked(pipes: int) -> None:
    """The split does not mark early: 0.8 x the rate over every pipe, after
    the shares are measured, makes no feedback."""
    app, model = pmqecn_on(pipes)
    every = list(range(pipes))
    start = pmqecn_measured(app, model, every)
    assert pmqecn_marked(app, model, every, load=0.8, start_ns=start) == 0


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_shares_survive_a_quiet_interval_and_a_restart(pipes: int) -> None:
    """An interval with too few arrivals to tell keeps the shares (a cycle
    writes nothing); a re-push (a restarted switch) writes them again and
    the next cycle only takes a new baseline of the arrival counts."""
    app, model = pmqecn_on(pipes)
    pmqecn_measured(app, model, list(range(pipes)))
    voice = app.config.classes[0].id
    split = app.pipes.shares[voice]
    assert app.balance_pipes() == []
    assert app.pipes.shares[voice] == split
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    sw.restart()
    app.push_all()
    key = {n.K_CLASS_ID: Match(voice), n.K_INGRESS_PIPE: Match(0)}
    before = sw.read_entry(n.ECN_THRESHOLD, key)
    assert app.balance_pipes() == []
    assert sw.read_entry(n.ECN_THRESHOLD, key) == before
    assert app.pipes.shares[voice] == split


def test_multipipe_pmqecn_tiny_share_gets_the_floor() -> None:
    """A pipe with 1 % of the arrivals drains at least 1/16 of the rate, so a
    sender there that speeds up is not marked at once; a pipe with none
    keeps the whole rate."""
    from bfrt_controller.pmqecn.pipes import moved, shares_from

    assert shares_from([990, 10, 0, 0]) == (63, MIN_SHARE_UNITS, WHOLE, WHOLE)
    assert shares_from([10, 10]) is None  # too few to tell
    assert shares_from([100, 100]) == (32, 32, WHOLE, WHOLE)
    assert not moved((32, 32, WHOLE, WHOLE), (34, 30, WHOLE, WHOLE))
    assert moved((32, 32, WHOLE, WHOLE), (36, 28, WHOLE, WHOLE))
    assert moved((WHOLE, WHOLE, WHOLE, WHOLE), (WHOLE, WHOLE, 60, 4))


# ---- finding 5: feedback per class per interval, counted both sides -------


def _congested(pipes: int, interval_us: float | None) -> tuple[PmqecnApp, ModelSwitch]:
    raw = pmqecn_raw(pipes)
    if interval_us is not None:
        raw["classes"][0]["feedback_interval_us"] = interval_us
    switch = ModelSwitch("pmqecn", load_profile("tofino"), pipes)
    app = PmqecnApp(switch, parse_config(raw))
    app.push_all()
    return app, switch


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_feedback_is_one_per_class_per_interval(pipes: int) -> None:
    """A class at 1.5 x its rate from one pipe for 2 ms: every packet after
    the first few is over K_i, yet the gate lets one copy through per 50 us
    (the default feedback_interval_us), not one per arrival (today: one per
    marked packet, over 200 here)."""
    app, switch = _congested(pipes, None)
    model = switch.model
    voice = app.config.classes[0]
    drain = app.drain_rate_bytes_per_s(voice)
    _, data = voice_frame(pipes - 1, 1000)
    gap_ns = round(len(data) / (drain * 1.5) * 1e9)
    packets = 2_000_000 // gap_ns
    marked = pmqecn_marked(app, model, [pipes - 1], load=1.5, packets=packets)
    span_us = packets * gap_ns / 1000
    assert packets > 200
    assert 0 < marked <= span_us / 50 + 1
    # ... and feedback_interval_us 0 is the old behaviour: a copy per marked packet.
    app, switch = _congested(pipes, 0.0)
    every = pmqecn_marked(app, switch.model, [pipes - 1], load=1.5, packets=packets)
    assert every > 4 * marked


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_lost_feedback_copies_are_counted(pipes: int) -> None:
    """Copies the gate made that never reached egress (here the session of
    the last pipe's host port disabled, as a full mirror buffer drops them)
    show in the class's status row and metric; copies that did are counted
    as feedback packets."""
    app, switch = _congested(pipes, 0.0)
    model = switch.model
    made = pmqecn_marked(app, model, [0], load=1.5, packets=100)
    assert made > 0
    last_port = port_in(pipes - 1, 1)
    session = next(s for s in model.mirror_sessions.values() if s.egress_port == last_port)
    session.enabled = False
    assert pmqecn_marked(app, model, [pipes - 1], load=1.5, packets=100, start_ns=10**9) == 0
    row = next(r for r in app.status() if r.get("name") == "voice")
    gates = switch.read_registers_pipes(n.FEEDBACK_GATE, [1])[0]
    made_total = sum(g % 2**32 for g in gates)
    assert row["feedback_copies"] == made
    assert row["feedback_lost"] == made_total - made > 0


def test_multipipe_pmqecn_lost_count_reads_through_wraps() -> None:
    """`made` wraps at 2^32 in each pipe; the loss is the difference modulo
    2^32, and a copy rebuilt between the two reads shows as no loss."""
    assert feedback_lost([2**32 - 5, 10], 3) == 2**32 - 5 + 10 - 3 - 2**32
    assert feedback_lost([7], 7) == 0
    assert feedback_lost([7], 9) == 0


# ---- finding 5: W_i read without losing a departure ------------------------


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_departures_during_a_read_are_not_lost(pipes: int) -> None:
    """A departure that happens while the controller reads W_i's accumulators
    (after its read, before what was its clear) is measured in the next
    interval: the meter flips the epoch first and reads the half no departure
    writes any more. Today the read and the clear are two calls: the
    departure between them is summed, then cleared unread, and the next
    interval measures no W_i."""
    from bfrt_controller.pmqecn.demo import inject_depth

    app, model = pmqecn_on(pipes)
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    inject_depth(sw, 0, 3000)
    app.start(0.0)
    port, data = voice_frame(pipes - 1, 1000)
    original = sw.read_registers
    departed_during_read = 0

    def read_then_depart(name: str, indices: list[int]) -> list[int]:
        nonlocal departed_during_read
        values = original(name, indices)
        if name in n.SOJOURN_PKTS:
            model.send(port, data)
            departed_during_read += 1
        return values

    for _ in range(5):
        model.send(port, data)
    sw.read_registers = read_then_depart  # type: ignore[method-assign]
    first = {s.class_id: s for s in app.sample(1.0)}
    sw.read_registers = original  # type: ignore[method-assign]
    second = {s.class_id: s for s in app.sample(2.0)}
    voice = app.config.classes[0].id
    assert departed_during_read == 1
    assert first[voice].packets == 5
    assert first[voice].mean_sojourn_ns == pytest.approx(3000.0)
    assert second[voice].packets == 1
    assert second[voice].mean_sojourn_ns == pytest.approx(3000.0)


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_arrivals_count_what_the_class_counter_counts(pipes: int) -> None:
    """lambda_i is read from class_arrivals (summed over the pipes), not
    the class counter: the two must count the same packets, whatever a
    host sends. Voice from every pipe, a spoofed source, a frame the
    switch cannot route and one that is not IPv4: per class, the pipes'
    arrivals sum to the counter's packets, and the controller's measured
    packets equal the counter's change."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    app, model = pmqecn_on(pipes)
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    ids = [c.id for c in app.config.classes]
    app.start(0.0)
    before = {cid: sw.read_counter(n.CLASS_COUNTERS, cid)[0] for cid in ids}
    for pipe in range(pipes):
        port, data = voice_frame(pipe, 100)
        for _ in range(3 + pipe):
            model.send(port, data)
    port, _ = voice_frame(pipes - 1, 100)
    spoofed = Ether(dst="02:00:00:00:00:01") / IP(src="192.0.2.9", dst="10.1.0.1", tos=46 << 2)
    unrouted = Ether(dst="02:00:00:00:00:01") / IP(src="10.0.1.1", dst="198.51.100.1", tos=46 << 2)
    for frame in (spoofed / UDP() / bytes(50), unrouted / UDP() / bytes(50)):
        model.send(port, bytes(frame))
    model.send(1, bytes(Ether(dst="02:00:00:00:00:01", type=0x88B5) / bytes(60)))
    measured = {s.class_id: s.packets for s in app.sample(1.0)}
    for cid in ids:
        counted = sw.read_counter(n.CLASS_COUNTERS, cid)[0]
        assert sum(sw.read_register_pipes(n.CLASS_ARRIVALS, cid)) == counted, cid
        assert measured[cid] == counted - before[cid], cid
    voice = app.config.classes[0].id
    assert measured[voice] == sum(3 + pipe for pipe in range(pipes))
