# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 50, findings 3 and 4, for BFCC on a switch of 2 or 4 pipes.

Finding 4: backpressure is recorded in the reaction port's ingress pipe and
copied round every other pipe the config uses (bp_replicate), so a sender
in any pipe is slowed. Finding 3: each pipe's reaction points recirculate
through their own pipe's recirculation port, and while that port's queue
is over its level a fake's original leaves itself instead of a fake, so a
full recirculation port never drops one. The switches are the program's
default config with hosts in other pipes (multipipe_cases.py), applied by
the controller app.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from multipipe_cases import (
    HIGH_QID,
    HOST_GROUP,
    LOW_QID,
    REACTION_PORT,
    backpressure,
    bfcc_host_packet,
    bfcc_on,
    bfcc_raw,
    frame,
    port_in,
)
from scapy.layers.l2 import Ether

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.config import parse_config
from bfrt_controller.bfcc.rows import REACTION_POINTS
from bfrt_controller.errors import ConfigError
from hw_profiles import load_profile
from models.switch.tna import TnaProgram
from models.wire import TofccFeedback

PIPES = [2, 4]
BP_STATE = "SwitchIngress.bp_state"
DEPTH = "SwitchEgress.recirculation_depth"
SKIPS = "SwitchEgress.recirculation_skips"
FAKES = "SwitchEgress.fakes_sent"
FAKE_TYPE = 0x88B5


def clear(group: int) -> bytes:
    """The downstream switch's clear about `group`, on the reaction port."""
    eth = Ether(dst="02:00:00:00:00:03", src="00:00:00:00:03:fe", type=0x88B6)
    return bytes(eth / TofccFeedback(msg_type=3, class_id=group, degree=0))


def ether_type(data: bytes) -> int:
    return int.from_bytes(data[12:14], "big")


# ---- finding 4: a sender in any pipe sees the reaction port's state --------


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_bfcc_host_in_another_pipe_is_slowed_or_refused(pipes: int) -> None:
    """Backpressure naming the group of hosts attached in another pipe than
    the reaction port: their packets to the reaction port take the low
    queue as the reaction port's own pipe's hosts do, or the controller
    refuses the binding, naming the pipe."""
    last = pipes - 1
    try:
        _app, model = bfcc_on(pipes, host_pipes=[last])
    except ConfigError as exc:
        assert f"pipe {last}" in str(exc), exc
        return
    assert model.send(REACTION_PORT, backpressure(HOST_GROUP + last, degree=3)) == []
    port, data = bfcc_host_packet(last)
    out = [o for o in model.send(port, data) if o.port == REACTION_PORT]
    assert out and out[0].qid == LOW_QID, [o.qid for o in out]


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_bfcc_severe_backpressure_fakes_for_a_host_in_another_pipe(pipes: int) -> None:
    """At severe (RT 1) every other departure of the backpressured port is a
    fake, whichever pipe its sender is in (or the binding is refused)."""
    last = pipes - 1
    try:
        _app, model = bfcc_on(pipes, host_pipes=[last])
    except ConfigError:
        return
    model.send(REACTION_PORT, backpressure(HOST_GROUP + last, degree=3))
    port, data = bfcc_host_packet(last)
    flagged = 0
    for _ in range(10):
        for o in model.send(port, data):
            flagged += o.port == REACTION_PORT and o.qid != HIGH_QID
    assert flagged >= 5
    counter = model.counter("SwitchEgress.flagged_departures")
    assert counter.read(REACTION_PORT)[0] >= 10


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_bfcc_backpressure_and_clear_reach_every_pipe_once(pipes: int) -> None:
    """A message on the reaction port is recorded in every pipe, counted
    once, and read back by the controller from the port's own pipe; the
    clear empties every pipe's record."""
    app, model = bfcc_on(pipes, host_pipes=[0])
    model.now_ns = 5_000
    assert model.send(REACTION_PORT, backpressure(HOST_GROUP, degree=2)) == []
    key = (HOST_GROUP << 8) | 2
    assert model.register(BP_STATE).read_pipes(REACTION_PORT) == [key] * pipes
    recorded = model.register("SwitchIngress.bp_recorded_ns").read_pipes(REACTION_PORT)
    assert recorded == [5_000] * pipes
    assert model.counter("SwitchIngress.backpressure_received").read(REACTION_PORT)[0] == 1
    (row,) = [r for r in app.status() if r["section"] == REACTION_POINTS]
    assert (row["slowed_group"], row["slowed_degree"]) == (HOST_GROUP, 2)
    model.send(REACTION_PORT, clear(HOST_GROUP))
    assert model.register(BP_STATE).read_pipes(REACTION_PORT) == [0] * pipes
    assert model.counter("SwitchIngress.backpressure_received").read(REACTION_PORT)[0] == 2


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_bfcc_copies_are_relayed_to_the_senders_once(pipes: int) -> None:
    """sender_reaction match_switch: the original is relayed to the named
    group's host port (in the last pipe) once; the copies going round the
    pipes are consumed where they are recorded."""
    last = pipes - 1
    raw = bfcc_raw(pipes, host_pipes=[last])
    raw["params"]["sender_reaction"] = "match_switch"
    switch = ModelSwitch("bfcc", load_profile("tofino"), pipes)
    BfccApp(switch, parse_config(raw)).push_all()
    out = switch.model.send(REACTION_PORT, backpressure(HOST_GROUP + last, degree=1))
    assert [o.port for o in out] == [port_in(last, 1)]


def _second_reaction_point(pipes: int) -> dict[str, Any]:
    """The default switch plus a reaction point on the last pipe's local
    port 3, toward 10.0.33.0/24."""
    raw = bfcc_raw(pipes, host_pipes=[0])
    port = port_in(pipes - 1, 3)
    raw["routes"].insert(
        0,
        {
            "prefix": "10.0.33.0/24",
            "port": port,
            "src_mac": "02:00:00:00:00:33",
            "dst_mac": "00:00:00:00:33:fe",
        },
    )
    raw["trusted_ports"].append(port)
    raw["reaction_points"].append({"port": port, "high_qid": 2, "low_qid": 1})
    return raw


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_bfcc_reaction_points_in_two_pipes_recirculate_in_their_own(
    pipes: int,
) -> None:
    """Issue 50, finding 3: reaction points may sit in several pipes, each
    recirculating through its own pipe's port (its own session), so each
    pipe's recirculation budget is its own. Backpressure on the last pipe's
    reaction port cuts a pipe-0 host's packets to it; the original re-enters
    ingress through the last pipe's recirculation port."""
    last = pipes - 1
    switch = ModelSwitch("bfcc", load_profile("tofino"), pipes)
    app = BfccApp(switch, parse_config(copy.deepcopy(_second_reaction_point(pipes))))
    app.push_all()
    model = switch.model
    port = port_in(last, 3)
    eth = Ether(dst="02:00:00:00:00:33", src="00:00:00:00:33:fe", type=0x88B6)
    model.send(port, bytes(eth / TofccFeedback(msg_type=2, class_id=HOST_GROUP, degree=3)))
    seen: list[int] = []
    ingress = model.ingress

    def spy(md: Any, data: bytes) -> Any:
        seen.append(md.ingress_port)
        return ingress(md, data)

    model.ingress = spy  # type: ignore[method-assign]
    outs = [o for _ in range(4) for o in model.send(4, frame("10.0.4.1", "10.0.33.3"))]
    fakes = [ether_type(o.data) for o in outs if o.port == port].count(FAKE_TYPE)
    assert fakes >= 2
    recirculation = model.profile.recirculation_ports
    assert recirculation[last] in seen and recirculation[0] not in seen
    assert model.counter(FAKES).read_pipe(last, port)[0] == fakes


# ---- finding 3: a full recirculation port never costs an original ----------


def _severe_from_every_pipe(pipes: int) -> tuple[TnaProgram, list[tuple[int, bytes]]]:
    """Severe backpressure on the reaction port naming the hosts of the last
    pipe; (port, packet) of each pipe's host toward it."""
    _app, model = bfcc_on(pipes, host_pipes=list(range(pipes)))
    model.send(REACTION_PORT, backpressure(HOST_GROUP + pipes - 1, degree=3))
    return model, [bfcc_host_packet(p) for p in range(pipes)]


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_bfcc_full_recirculation_sends_every_original_itself(pipes: int) -> None:
    """Pipe 0's recirculation queue over its level: each fake's slot carries
    its original instead, so every packet sent leaves once, real, and
    nothing recirculates that a full port could drop; the skips are
    counted. (Before issue 50 every second packet left as a fake and its
    original went to the full port.)"""
    model, senders = _severe_from_every_pipe(pipes)
    model.register(DEPTH).put_pipes(0, [1 << 20] + [0] * (pipes - 1))
    sent = 0
    delivered: list[int] = []
    for _ in range(6):
        for port, data in senders:
            sent += 1
            delivered += [ether_type(o.data) for o in model.send(port, data)]
    assert delivered == [0x0800] * sent
    assert model.counter(SKIPS).read(REACTION_PORT)[0] == sent // 2
    assert model.counter(FAKES).read(REACTION_PORT)[0] == 0


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_bfcc_level_is_the_reaction_ports_own_pipes(pipes: int) -> None:
    """Only the reaction port's pipe's recirculation queue counts: the last
    pipe's full queue leaves pipe 0's fakes alone."""
    model, senders = _severe_from_every_pipe(pipes)
    model.register(DEPTH).put_pipes(0, [0] * (pipes - 1) + [1 << 20])
    for _ in range(4):
        for port, data in senders:
            model.send(port, data)
    # Port-wide state: a recirculated original is flagged again, so a fake
    # comes every second departure, recirculated ones included.
    assert model.counter(FAKES).read(REACTION_PORT)[0] >= 2 * pipes
    assert model.counter(SKIPS).read(REACTION_PORT)[0] == 0
