# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Switches of several pipes for issue 50's tests (tests/test_multipipe*.py).

Each builds a program's embedded default config with senders added in other
pipes, applies it through the program's own controller app on the model
running `pipes` pipes, and returns the app. On Tofino pipe p's local port n
is device port p * 128 + n (hw_profiles: 7 local bits).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.config import DEFAULT_CONFIG as BFCC_DEFAULT
from bfrt_controller.bfcc.config import parse_config as parse_bfcc
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import parse_config as parse_pmqecn
from bfrt_controller.spie.app import SpieApp
from bfrt_controller.spie.config import DEFAULT_CONFIG as SPIE_DEFAULT
from bfrt_controller.spie.config import parse_config as parse_spie
from hw_profiles import load_profile
from models.switch.core import Match
from models.switch.timeline import Timeline
from models.switch.tna import TnaProgram
from models.wire import TofccFeedback

DEFAULTS = Path(__file__).resolve().parents[1] / "bfrt_controller" / "defaults"
PIPE_STRIDE = 128  # Tofino: a port id is its pipe above 7 local bits
CHIP = "tofino"


def port_in(pipe: int, local: int) -> int:
    return pipe * PIPE_STRIDE + local


def sender_net(pipe: int) -> str:
    """The /24 of the hosts behind local port 1 of `pipe` (pipe 0: 10.0.1.0/24)."""
    return "10.0.1" if pipe == 0 else f"10.0.{10 + pipe}"


def _raw(path: Path) -> dict[str, Any]:
    return copy.deepcopy(yaml.safe_load(path.read_text()))


def _add_senders(raw: dict[str, Any], pipes: int) -> None:
    """A host port (local port 1) in every pipe but 0, routed and bound."""
    for pipe in range(1, pipes):
        port = port_in(pipe, 1)
        net = sender_net(pipe)
        raw["routes"].insert(
            0,
            {
                "prefix": f"{net}.0/24",
                "port": port,
                "src_mac": "02:00:00:00:00:11",
                "dst_mac": "00:00:00:00:11:11",
            },
        )
        raw.setdefault("source_bindings", []).append({"port": port, "prefixes": [f"{net}.0/24"]})


def frame(src: str, dst: str, sport: int = 1000, dscp: int = 0, payload: int = 0) -> bytes:
    return bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src=src, dst=dst, tos=dscp << 2)
        / TCP(sport=sport, dport=80)
        / bytes(payload)
    )


# ---- S-PIE ------------------------------------------------------------------

SPIE_PORT = 3  # S-PIE mode, pipe 0
PIE_PORT = 4  # plain PIE, pipe 0


LAST_SPIE_SLOT = 2  # S-PIE on local port 4 of the last pipe
LAST_SPIE_NET = "10.0.50"


def last_spie_port(pipes: int) -> int:
    return port_in(pipes - 1, 4)


def spie_raw(pipes: int, mode: str = "spie", **pie: Any) -> dict[str, Any]:
    """The default S-PIE switch (S-PIE on port 3, plain PIE on port 4, both
    pipe 0), a sender in every pipe, and `mode` (S-PIE) on the last pipe's
    local port 4 (LAST_SPIE_NET's receivers)."""
    raw = _raw(SPIE_DEFAULT)
    raw["pie"].update(pie)
    raw["sketch"]["line_rate_gbps"] = 0.1
    _add_senders(raw, pipes)
    port = last_spie_port(pipes)
    raw["routes"].insert(
        0,
        {
            "prefix": f"{LAST_SPIE_NET}.0/24",
            "port": port,
            "src_mac": "02:00:00:00:00:50",
            "dst_mac": "00:00:00:00:50:50",
        },
    )
    raw["source_bindings"].append({"port": port, "prefixes": [f"{LAST_SPIE_NET}.0/24"]})
    raw["ports"].append({"port": port, "mode": mode})
    return raw


def spie_on(pipes: int, mode: str = "spie", **pie: Any) -> tuple[SpieApp, TnaProgram]:
    switch = ModelSwitch("spie", load_profile(CHIP), pipes)
    app = SpieApp(switch, parse_spie(spie_raw(pipes, mode, **pie)))
    app.push_all()
    model = switch.model
    # The random value pinned above any p for every sender: a probe packet is
    # dropped only where a test unpins it.
    for pipe in range(pipes):
        pin_random(model, port_in(pipe, 1), 0x7FFFFFFF)
    return app, model


def pin_random(model: TnaProgram, port: int, value: int | None) -> None:
    table = model.table("SwitchIngress.random_hook.random_override")
    key = {"ig_intr_md.ingress_port": Match(port)}
    if value is None:
        table.delete(key)
    else:
        table.add_or_modify(key, "SwitchIngress.random_hook.inject", {"random_value": value})


def spie_send(
    model: TnaProgram, t_ns: int, sojourn_ns: int, pipe: int, port: int = SPIE_PORT
) -> bool:
    """One packet from pipe `pipe`'s sender at t_ns that waits sojourn_ns in
    the queue of `port`; True if it leaves."""
    model.now_ns = t_ns
    hook = model.table("SwitchEgress.queue_hook.queue_md_override")
    hook.add_or_modify(
        {"eg_intr_md.egress_port": Match(port)},
        "SwitchEgress.queue_hook.inject",
        {"depth_cells": 0, "sojourn_ns": sojourn_ns},
    )
    dst = f"{LAST_SPIE_NET}.1" if port >= PIPE_STRIDE else f"10.0.{port}.{port}"
    data = frame(f"{sender_net(pipe)}.1", dst)
    return any(o.port == port for o in model.send(port_in(pipe, 1), data))


MS = 1_000_000
PI_PROB = "SwitchEgress.pi_prob"
PIE_SLOT = 1  # the default config's second port (4)


def pie_deep_queue_p(pipes: int, delay_ms: int, sender_pipes: list[int]) -> tuple[float, float]:
    """Plain PIE's port 4 with a steady `delay_ms` queue, run in time order
    (each packet's egress, and the PI step's update through the
    recirculation port, at its departure); senders of `sender_pipes` in
    turn, one packet each 250 us for 1.2 s. (p after 0.6 s, p at the end)."""
    _app, model = spie_on(pipes)
    timeline = Timeline(model, lambda port, qid, now: delay_ms * MS if port == PIE_PORT else 0)
    gap = 250_000
    packets = 1_200 * MS // gap
    middle = 0.0
    for i in range(packets):
        pipe = sender_pipes[i % len(sender_pipes)]
        data = frame(f"{sender_net(pipe)}.1", "10.0.4.4", sport=1000 + i % 7)
        timeline.send(i * gap, port_in(pipe, 1), data)
        if i == packets // 2:
            timeline.run(i * gap)
            middle = model.register(PI_PROB).read_pipe(0, PIE_SLOT) / 2**32
    timeline.run()
    return middle, model.register(PI_PROB).read_pipe(0, PIE_SLOT) / 2**32


# ---- BFCC -------------------------------------------------------------------

REACTION_PORT = 3  # pipe 0, faces the downstream switch
HIGH_QID, LOW_QID = 2, 1
HOST_GROUP = 9  # the attached senders of each pipe's host port


def bfcc_raw(pipes: int, host_pipes: list[int]) -> dict[str, Any]:
    """The default BFCC switch, plus group HOST_GROUP + pipe: the hosts
    behind local port 1 of each pipe in `host_pipes` (pipe 0: port 4's)."""
    raw = _raw(BFCC_DEFAULT)
    _add_senders(raw, pipes)
    for pipe in host_pipes:
        net = "10.0.4" if pipe == 0 else sender_net(pipe)
        raw["groups"].append({"id": HOST_GROUP + pipe, "senders": [f"{net}.0/24"]})
    return raw


def bfcc_on(pipes: int, host_pipes: list[int]) -> tuple[BfccApp, TnaProgram]:
    switch = ModelSwitch("bfcc", load_profile(CHIP), pipes)
    app = BfccApp(switch, parse_bfcc(bfcc_raw(pipes, host_pipes)))
    app.push_all()
    return app, switch.model


def backpressure(group: int, degree: int) -> bytes:
    """What the downstream switch on the reaction port sends."""
    eth = Ether(dst="02:00:00:00:00:03", src="00:00:00:00:03:fe", type=0x88B6)
    return bytes(eth / TofccFeedback(msg_type=2, class_id=group, degree=degree))


def bfcc_host_packet(pipe: int) -> tuple[int, bytes]:
    """(port, packet): a host of `pipe` sending toward the reaction port."""
    if pipe == 0:
        return 4, frame("10.0.4.1", "10.0.3.3")
    return port_in(pipe, 1), frame(f"{sender_net(pipe)}.1", "10.0.3.3")


# ---- PMQECN -----------------------------------------------------------------

PMQECN_DST = "10.0.4.4"  # the receiver, port 4 (pipe 0)
VOICE_DSCP = 46


def pmqecn_raw(pipes: int) -> dict[str, Any]:
    """The default PMQECN switch with the voice class matched on its DSCP
    alone, so hosts of every pipe send in it; feedback to each pipe's
    host port through a session of its own."""
    raw = _raw(DEFAULTS / "pmqecn.yaml")
    _add_senders(raw, pipes)
    raw["classes"][0]["match"] = {"dscp": VOICE_DSCP}
    for pipe in range(1, pipes):
        raw["ports"].append({"port": port_in(pipe, 1), "feedback_session": 20 + pipe})
    return raw


def pmqecn_on(pipes: int) -> tuple[PmqecnApp, TnaProgram]:
    switch = ModelSwitch("pmqecn", load_profile(CHIP), pipes)
    app = PmqecnApp(switch, parse_pmqecn(pmqecn_raw(pipes)))
    app.push_all()
    return app, switch.model


def voice_frame(pipe: int, payload: int) -> tuple[int, bytes]:
    port = 1 if pipe == 0 else port_in(pipe, 1)
    data = bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src=f"{sender_net(pipe)}.1", dst=PMQECN_DST, tos=VOICE_DSCP << 2)
        / UDP(sport=1000 + pipe, dport=80)
        / bytes(payload)
    )
    return port, data


def pmqecn_marked(
    app: PmqecnApp,
    model: TnaProgram,
    sender_pipes: list[int],
    load: float,
    packets: int = 400,
    start_ns: int = 1_000_000,
) -> int:
    """Voice packets from `sender_pipes` in turn from `start_ns`, together at
    `load` x the class's virtual-queue drain rate; how many made feedback (a
    copy back to a sender's port)."""
    voice = app.config.classes[0]
    drain = app.drain_rate_bytes_per_s(voice)
    frames = [voice_frame(p, 1000) for p in sender_pipes]
    size = len(frames[0][1])
    gap_ns = round(size / (drain * load) * 1e9)
    sender_ports = {port for port, _ in frames}
    marked = 0
    for i in range(packets):
        port, data = frames[i % len(frames)]
        model.now_ns = start_ns + i * gap_ns
        marked += sum(1 for o in model.send(port, data) if o.port in sender_ports)
    return marked


def pmqecn_measured(
    app: PmqecnApp, model: TnaProgram, sender_pipes: list[int], packets: int = 200
) -> int:
    """One controller interval in which the voice class's senders of
    `sender_pipes` send together at 0.8 x its rate (no marking), closed by
    the daemon's cycle (which measures each pipe's share of the arrivals);
    the time the interval ended (ns), for the next sends to start after."""
    app.start(0.0)
    pmqecn_marked(app, model, sender_pipes, load=0.8, packets=packets)
    end_ns = model.now_ns + 1_000_000
    app.service_cycle(1.0)
    return end_ns
