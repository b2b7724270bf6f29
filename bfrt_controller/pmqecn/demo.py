# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A short PMQECN packet trace on the reference model, as a readable table.

Each step sends one packet at a stated time; the class's virtual queue in
the ingress registers grows by its frame and drains at the class's share of
the port over the time since the class's last packet, and a packet that
leaves it above K_i is fed back at arrival. Everything - classification,
virtual queue, marking, feedback bytes - is the model of the P4 doing its
work. (Sojourn times for W_i are injected through the egress test hook: the
model, like tofino-model, has no real queues.)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from rich.console import Console
from rich.table import Table
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet

from hw_profiles import load_profile
from models.switch.core import Match
from models.wire import TofccFeedback

from ..backends.model import ModelSwitch
from ..console import report
from ..switch import EntryWrite
from .app import Change, PmqecnApp
from .config import DEFAULT_CONFIG, load_config
from .names import CLASS_COUNTERS, SPOOFED_SOURCE_DROPS, UNTRUSTED_FEEDBACK_DROPS, VQ_BYTES

HOOK_TABLE = "SwitchEgress.queue_hook.queue_md_override"
HOOK_INJECT = "SwitchEgress.queue_hook.inject"
RECEIVER_PORT = 4
SWITCH_MAC = "02:00:00:00:00:0{}"


@dataclass(frozen=True)
class Flow:
    name: str
    port: int
    src: str
    dscp: int
    ecn: int
    proto: str  # "udp" or "tcp"
    sport: int

    def packet(self, payload: int = 958) -> Packet:
        l4 = (
            UDP(sport=self.sport, dport=9000)
            if self.proto == "udp"
            else TCP(sport=self.sport, dport=9000, flags="A")
        )
        eth = Ether(dst=SWITCH_MAC.format(self.port), src=f"00:00:00:00:0{self.port}:01")
        ip = IP(src=self.src, dst="10.0.4.4", tos=(self.dscp << 2) | self.ecn)
        return eth / ip / l4 / (b"\x00" * payload)


FLOWS = {
    "voice": Flow("voice", 1, "10.0.1.1", 46, 1, "udp", 5004),
    "video": Flow("video", 2, "10.0.2.2", 34, 2, "udp", 5006),
    "bulk": Flow("bulk", 3, "10.0.3.3", 0, 2, "tcp", 40000),
}


@dataclass
class TraceRow:
    step: int
    time_us: float
    flow: str
    vq_bytes: int
    threshold_bytes: int
    queue: int
    out: str
    feedback: str


def inject_depth(switch: ModelSwitch, depth_cells: int, sojourn_ns: int) -> None:
    """What the receiver's egress port reports (the W_i measurement reads it)."""
    switch.write(
        [
            EntryWrite(
                HOOK_TABLE,
                {"eg_intr_md.egress_port": Match(RECEIVER_PORT)},
                HOOK_INJECT,
                {"depth_cells": depth_cells, "sojourn_ns": sojourn_ns},
            )
        ]
    )


def send(app: PmqecnApp, step: int, flow: Flow, time_us: float) -> TraceRow:
    switch = app.switch
    assert isinstance(switch, ModelSwitch)
    cid = next(c.id for c in app.config.classes if c.name == flow.name)
    switch.model.now_ns = round(time_us * 1000)
    outputs = switch.model.send(flow.port, bytes(flow.packet()))
    out, feedback, queue = "dropped", "-", -1
    for o in outputs:
        pkt = Ether(o.data)
        if o.port == RECEIVER_PORT:
            queue = o.qid
            ecn = pkt[IP].tos & 3
            out = f"port {o.port} ECN {ecn:02b}" + (" CE" if ecn == 3 else "")
        elif TofccFeedback in pkt:
            fb = pkt[TofccFeedback]
            feedback = (
                f"ECN 11 to {pkt[IP].dst} (port {o.port}) "
                f"lambda={fb.rate:,} lambda*={fb.target_rate:,}"
            )
    k_bytes = app.live[cid].threshold_cells * app.profile.cell_bytes
    vq = switch.read_register(VQ_BYTES, cid)
    return TraceRow(step, time_us, flow.name, vq, k_bytes, queue, out, feedback)


def _trace_table(title: str, rows: list[TraceRow]) -> Table:
    t = Table(title=title, title_justify="left")
    for col in ("#", "t (us)", "flow", "virtual queue (B)", "K (B)", "queue", "original out",
                "feedback (rates in pps)"):  # fmt: skip
        t.add_column(col, no_wrap=True)
    for r in rows:
        t.add_row(
            str(r.step), f"{r.time_us:g}", r.flow, str(r.vq_bytes), str(r.threshold_bytes),
            str(r.queue) if r.queue >= 0 else "-", r.out, r.feedback,
        )  # fmt: skip
    return t


def run_trace(
    app: PmqecnApp, steps: list[tuple[str, float]], first_step: int = 1, start_us: float = 0.0
) -> list[TraceRow]:
    return [
        send(app, i, FLOWS[flow_name], start_us + t_us)
        for i, (flow_name, t_us) in enumerate(steps, start=first_step)
    ]


def run_demo(console: Console) -> None:
    config = load_config(DEFAULT_CONFIG)
    switch = ModelSwitch("pmqecn", load_profile(config.chip))
    app = PmqecnApp(switch, config)
    app.push_all()
    console.print(
        f"PMQECN on the reference model ({config.chip}), default config "
        f"{DEFAULT_CONFIG.name}: {len(app.intended_writes())} writes pushed.\n"
        "Each class's virtual queue drains at its weight's share of the 10 Gb/s "
        "port; bursts arriving faster than that build it up."
    )
    steps = [
        ("voice", 0), ("voice", 0), ("voice", 1), ("voice", 6),
        ("video", 6), ("video", 6), ("video", 6), ("video", 6.5),
        ("bulk", 7), ("bulk", 7), ("bulk", 7), ("bulk", 7), ("bulk", 7), ("bulk", 7),
        ("bulk", 30),
    ]  # fmt: skip
    rows = run_trace(app, steps)
    report(trace=[asdict(r) for r in rows])
    console.print(_trace_table("Trace: thresholds from the config", rows))

    # Forged feedback from a host port: dropped and counted.
    forged = (
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.4.4", dst="10.0.2.2", tos=3)
        / UDP(sport=9000, dport=19663, chksum=0)
        / TofccFeedback(msg_type=1, class_id=2, rate=1, target_rate=1)
    )
    out = switch.model.send(1, bytes(forged))
    drops = switch.read_counter(UNTRUSTED_FEEDBACK_DROPS, 1)[0]
    report(forged_feedback={"packets_out": len(out), "untrusted_feedback_drops": drops})
    console.print(
        f"Forged feedback from host port 1: {len(out)} packets out, "
        f"untrusted_feedback_drops[1] = {drops}\n"
    )

    # A host on port 1 sending as video's source (10.0.2.2): past the source
    # binding it would count as video and make feedback in video's name.
    video = FLOWS["video"]
    spoofed = replace(video, port=1).packet()
    video_before = switch.read_counter(CLASS_COUNTERS, 2)[0]
    out = switch.model.send(1, bytes(spoofed))
    console.print(
        f"Video's source sent from host port 1: {len(out)} packets out, "
        f"spoofed_source_drops[1] = {switch.read_counter(SPOOFED_SOURCE_DROPS, 1)[0]}, "
        f"video counted {switch.read_counter(CLASS_COUNTERS, 2)[0] - video_before} more\n"
    )

    changes = optimise_demo_interval(app, console)
    if changes:
        rows = run_trace(app, steps, first_step=len(steps) + 1, start_us=10_000)
        report(trace_after_optimise=[asdict(r) for r in rows])
        console.print(_trace_table("Trace: thresholds after one optimise-and-apply cycle", rows))


# One measured interval of the demo: packets each class sends in it and the
# sojourn its packets see. Scaled down (1 ms) so the model runs it in a blink.
DEMO_INTERVAL_S = 0.001
DEMO_LOAD = {"voice": (300, 2_000), "video": (500, 6_000), "bulk": (350, 15_000)}


def optimise_demo_interval(app: PmqecnApp, console: Console) -> list[Change]:
    switch = app.switch
    assert isinstance(switch, ModelSwitch)
    app.sample(0.0)
    for name, (count, sojourn_ns) in DEMO_LOAD.items():
        inject_depth(switch, 0, sojourn_ns)
        data = bytes(FLOWS[name].packet())
        for _ in range(count):
            switch.model.send(FLOWS[name].port, data)
    changes = app.optimize_once(DEMO_INTERVAL_S)
    report(
        optimiser_wrote=[
            {"class": app.config.class_by_id(ch.class_id).name, "what": ch.what, "old": ch.old}
            | {"new": ch.new}
            for ch in changes
        ]
    )
    t = Table(title=f"Measured over {DEMO_INTERVAL_S * 1e3:g} ms", title_justify="left")
    for col in ("class", "lambda_i (pps)", "W_i (ns)"):
        t.add_column(col)
    for c in app.config.classes:
        live = app.live[c.id]
        t.add_row(c.name, f"{live.rate_pps:,}", f"{live.sojourn_ns:,.0f}")
    console.print(t)
    ct = Table(title="Optimiser wrote (one batch)", title_justify="left")
    for col in ("class", "what", "old", "new"):
        ct.add_column(col)
    for ch in changes:
        ct.add_row(app.config.class_by_id(ch.class_id).name, ch.what, f"{ch.old:,}", f"{ch.new:,}")
    console.print(ct if changes else "The optimiser changed nothing.")
    return changes
