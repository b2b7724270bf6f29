# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Line-rate soak of every program's reference model, without ns-3.

Each program runs from its controller's default configuration on the
model (bfrt_controller/defaults/<program>.yaml pushed by its app).
Synthetic arrivals are spaced at a line rate (100 Gb/s, 400 Gb/s, or a
paper's rate) in frames of a given size; the queue hook pins the managed
port's depth and sojourn (congested, or empty), the model's clock is the
arrival time. Scenarios:

- equal: four equal flows in turn;
- elephant: one flow sending half the packets among eight mice;
- incast: sixteen flows from two ingress ports into one port, each port at
  the line rate (twice the port's rate arrives);
- wake: a port idle for a second, then four flows with an empty queue.

Invariants, checked per packet for the program's accumulating registers
(every register every `scan_every` packets): no register beyond its
declared width, none beyond the width audit's bound (scripts/
width_audit.py) and, for S-PIE, the sketch's counts within their cap and
its sum never decreasing within an epoch (a wrap would) nor saturating at
or below the line rate. Per run: equal flows get a Jain index >= 0.95 of
what they deliver; no flow at or below its fair share is delivered less
than the elephant; an idle port that wakes with an empty queue drops and
marks nothing. S-PIE also: four equal congested flows keep a drop rate
within 2x of what plain PIE gives them, in every eighth of the clearing
interval and over all of it.

    python scripts/soak.py                # the CI length (tests/test_line_rate_soak.py)
    python scripts/soak.py --full         # every program a full epoch at 100/400 Gb/s
    python scripts/soak.py --program spie --full
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scapy.layers.inet import IP, TCP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402

from bfrt_controller.backends.model import ModelSwitch  # noqa: E402
from bfrt_controller.programs import get_program  # noqa: E402
from evaluation.metrics import jain_index  # noqa: E402
from hw_profiles import load_profile  # noqa: E402
from models.switch.core import Match  # noqa: E402
from tofcc_common.registry import PROGRAMS, SoakQueue  # noqa: E402

WIRE_OVERHEAD_BYTES = 20  # preamble + inter-frame gap
SOAK_SEED = 33


def _audit() -> Any:
    spec = importlib.util.spec_from_file_location(
        "width_audit", ROOT / "scripts" / "width_audit.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("width_audit", mod)
    spec.loader.exec_module(mod)
    return mod


WA = _audit()


# Each program's congested queue, as its registry entry declares it.
Target = SoakQueue
TARGETS: dict[str, Target] = {name: spec.soak for name, spec in PROGRAMS.items()}


@dataclass
class Flow:
    port: int
    frame: bytes
    sent: int = 0
    delivered: int = 0
    marked: int = 0


@dataclass
class Result:
    program: str
    scenario: str
    gbps: float
    packets: int
    flows: list[Flow]
    seconds: float
    failures: list[str] = field(default_factory=list)
    notes: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures


def _raw(program: str) -> dict[str, Any]:
    raw: dict[str, Any] = yaml.safe_load(get_program(program).default_config.read_text())
    return raw


def _app(program: str, raw: dict[str, Any]) -> Any:
    prog = get_program(program)
    switch = ModelSwitch(program, load_profile(raw.get("chip", "tofino")))
    app = prog.make_app(switch, prog.parse_config(raw, f"{program} soak config"))
    app.push_all()
    return app


def _frame(src: str, sport: int, dst: str, payload: int, dscp: int, src_mac: str) -> bytes:
    pkt = (
        Ether(dst="02:00:00:00:00:01", src=src_mac)
        / IP(src=src, dst=dst, tos=(dscp << 2) | 0b10)  # ECT(0): markable
        / TCP(sport=sport, dport=5001)
    )
    return bytes(pkt) + b"\x00" * max(0, payload)


def _flows(scenario: str, target: Target, frame_bytes: int) -> list[Flow]:
    dst = f"10.0.{target.port}.{target.port}"
    payload = max(0, frame_bytes - 54)
    n = {"equal": 4, "elephant": 9, "incast": 16, "wake": 4}[scenario]
    out = []
    for i in range(n):
        port = 2 if scenario == "incast" and i % 2 else 1
        src = f"10.0.{port}.{10 + i}"
        out.append(
            Flow(port, _frame(src, 40000 + i, dst, payload, target.dscp, f"00:00:00:00:0{port}:01"))
        )
    return out


def _order(scenario: str, n: int, count: int) -> Iterator[int]:
    """Which flow sends each packet: in turn, or the elephant every other."""
    mice = n - 1
    for k in range(count):
        if scenario == "elephant":
            yield 0 if k % 2 == 0 else 1 + (k // 2) % mice
        else:
            yield k % n


def _pin_queue(model: Any, ports: list[int], depth_cells: int, sojourn_ns: int) -> None:
    hook = model.table("SwitchEgress.queue_hook.queue_md_override")
    for p in ports:
        hook.add_or_modify(
            {"eg_intr_md.egress_port": Match(p)},
            "SwitchEgress.queue_hook.inject",
            {"depth_cells": depth_cells, "sojourn_ns": sojourn_ns},
        )


class Watch:
    """Per-packet and periodic register checks."""

    def __init__(self, program: str, model: Any, scan_every: int) -> None:
        self.model = model
        self.scan_every = scan_every
        self.failures: list[str] = []
        regs = model.p4.registers
        bounds: dict[str, int] = {}
        for e in WA.AUDIT:
            if e.program == program and e.kind == "register" and isinstance(e.growth, WA.Bounded):
                for name in regs:
                    if name.rsplit(".", 1)[-1] == e.name:
                        bounds[name] = e.growth.max_value
        self.bounds = bounds

    def fail(self, msg: str) -> None:
        if len(self.failures) < 20:
            self.failures.append(msg)

    def scan(self, k: int) -> None:
        for name, reg in self.model.p4.registers.items():
            top = (1 << reg.width) - 1
            hi = max(reg.values)
            if hi > top or min(reg.values) < 0:
                self.fail(f"packet {k}: {name} holds {hi}, beyond {reg.width} bits")
            bound = self.bounds.get(name)
            if bound is not None and not reg.members:
                # A tagged register's bound is on its count, not its tag.
                if name.rsplit(".", 1)[-1] in ("m_count",) or ".sketch_row" in name:
                    continue
                if hi > bound:
                    self.fail(f"packet {k}: {name} = {hi} beyond the audit's bound {bound}")


class SpieWatch:
    """S-PIE's sketch per packet: counts within the cap, S down within an
    epoch by no more than one packet's undo, and never saturated at or
    below the line rate."""

    def __init__(self, model: Any, slot: int, overload: bool) -> None:
        from models.switch.spie import SPIE_COUNT_CAP

        self.model = model
        self.slot = slot
        self.cap = SPIE_COUNT_CAP
        self.overload = overload
        self.last_s = 0
        self.last_base = -1
        self.failures: list[str] = []
        self.max_count = 0
        self.max_s = 0

    def check(self, k: int) -> None:
        m = self.model
        mask = m.sketch_config.lookup({}).data["epoch_mask"]
        c = m.m_count.read(self.slot)
        base = c & mask
        count = (c - base) & 0xFFFFFFFF
        s = m.sumsq.read(self.slot)
        self.max_count = max(self.max_count, count)
        self.max_s = max(self.max_s, s)
        if count > self.cap:
            self.failures.append(f"packet {k}: m_count {count} beyond the cap")
        # A dropped packet's second pass takes back what it added, at most
        # one count (below the cap); a wrap would fall by about 2^32.
        if base == self.last_base and self.last_s - s > self.cap:
            self.failures.append(f"packet {k}: S fell from {self.last_s} to {s} within an epoch")
        if s == 0xFFFFFFFF and not self.overload:
            self.failures.append(f"packet {k}: S saturated at or below the line rate")
        self.last_s, self.last_base = s, base


def _spie_raw(chip: str, gbps: float, mode: str) -> dict[str, Any]:
    raw = _raw("spie")
    raw["sketch"]["line_rate_gbps"] = gbps
    raw["ports"] = [{"port": 3, "mode": mode}, {"port": 4, "mode": "pie"}]
    if chip == "tofino2":
        raw["chip"] = "tofino2"
        for r in raw["routes"]:
            r["port"] += 8
        raw["trusted_ports"] = [p + 8 for p in raw["trusted_ports"]]
        for b in raw["source_bindings"]:
            b["port"] += 8
        for p in raw["ports"]:
            p["port"] += 8
    return raw


def run(
    program: str,
    scenario: str,
    gbps: float,
    packets: int,
    frame_bytes: int = 84 - WIRE_OVERHEAD_BYTES,
    scan_every: int = 64,
    spie_mode: str = "spie",
) -> Result:
    """One soak run; `packets` at `gbps` in frames of `frame_bytes`."""
    t0 = time.perf_counter()
    target = TARGETS[program]
    shift = 0
    if program == "spie":
        chip = "tofino2" if gbps > 100 else "tofino"
        shift = 8 if chip == "tofino2" else 0
        raw = _spie_raw(chip, gbps, spie_mode)
    else:
        raw = _raw(program)
    app = _app(program, raw)
    model = app.switch.model
    port = target.port + shift
    flows = _flows(scenario, target, frame_bytes)
    for f in flows:
        f.port += shift  # Tofino2's front panel starts at 8; the prefixes stay
    watch = Watch(program, model, scan_every)
    spie = SpieWatch(model, 0, overload=scenario == "incast") if program == "spie" else None
    gap_ns = (frame_bytes + WIRE_OVERHEAD_BYTES) * 8 / gbps
    if scenario == "incast":
        gap_ns /= 2  # two ports at line rate into one
    now = 20_000_000.0
    congested = scenario != "wake"
    _pin_queue(
        model, [port], target.depth_cells if congested else 0, target.sojourn_ns if congested else 0
    )
    if program == "spie":
        # A PI step that says congested (or not), then p for PIE's share.
        model.now_ns = int(now)
        model.send(flows[0].port, flows[0].frame)
        model.register("SwitchEgress.pi_prob").write(0, 1 << 28)
        model.register("SwitchIngress.prob").write(0, 1 << 27)
        now += 1000
    if scenario == "wake":
        now += 1e9  # a second of silence
    windows = 8
    per_window: list[tuple[int, int]] = [(0, 0)] * windows
    for k, i in enumerate(_order(scenario, len(flows), packets)):
        f = flows[i]
        model.now_ns = int(now)
        out = model.send(f.port, f.frame)
        f.sent += 1
        got = [o for o in out if o.port == port]
        w = min(windows - 1, k * windows // max(packets, 1))
        sent_w, drop_w = per_window[w]
        per_window[w] = (sent_w + 1, drop_w + (0 if got else 1))
        if got:
            f.delivered += 1
            ecn = got[0].data[15] & 0b11
            f.marked += ecn == 0b11
        if spie is not None:
            spie.check(k)
        if k % scan_every == 0:
            watch.scan(k)
        now += gap_ns
    watch.scan(packets)
    res = Result(program, scenario, gbps, packets, flows, time.perf_counter() - t0)
    res.failures += watch.failures
    if spie is not None:
        res.failures += spie.failures[:20]
        res.notes["max_count"] = spie.max_count
        res.notes["max_sumsq"] = spie.max_s
    res.notes["drop_rate"] = 1 - sum(f.delivered for f in flows) / max(
        1, sum(f.sent for f in flows)
    )
    res.notes["windows"] = len(per_window)
    for w, (s_w, d_w) in enumerate(per_window):
        res.notes[f"drop_rate_w{w}"] = d_w / s_w if s_w else 0.0
    _judge(res, scenario)
    return res


def _judge(res: Result, scenario: str) -> None:
    flows = res.flows
    share = [f.delivered / f.sent for f in flows if f.sent]
    if scenario in ("equal", "incast", "wake"):
        j = jain_index([f.delivered for f in flows])
        if j is None:  # no flow delivered anything: all alike, as the soak always scored it
            j = 1.0
        res.notes["jain"] = j
        if j < 0.95:
            res.failures.append(f"equal flows' Jain index {j:.3f} < 0.95")
    if scenario == "elephant":
        elephant = flows[0].delivered / flows[0].sent
        worst_mouse = min(share[1:])
        res.notes["elephant_share"] = elephant
        res.notes["worst_mouse_share"] = worst_mouse
        if worst_mouse + 0.02 < elephant:
            res.failures.append(
                f"a mouse (at most its fair share) delivered {worst_mouse:.3f}, "
                f"less than the elephant's {elephant:.3f}"
            )
    if scenario == "wake":
        dropped = sum(f.sent - f.delivered for f in flows)
        marked = sum(f.marked for f in flows)
        if dropped or marked:
            res.failures.append(
                f"idle port woke with an empty queue: {dropped} dropped, {marked} marked"
            )


def spie_against_pie(gbps: float, packets: int, frame_bytes: int = 1500) -> Result:
    """S-PIE's acceptance in mode spie_pie (PIE's p while congested too):
    four equal congested flows keep a drop rate within 2x of plain PIE's
    (at most twice in every eighth; over the whole run between half and
    twice), and none is starved (Jain >= 0.95). Mode spie, Algorithm 2,
    drops none of them while congested: no flow is large (tna/spie/README.md,
    departure 12)."""
    s = run("spie", "equal", gbps, packets, frame_bytes, spie_mode="spie_pie")
    p = run("spie", "equal", gbps, packets, frame_bytes, spie_mode="pie")
    pie_rate = p.notes["drop_rate"]
    s.notes["pie_drop_rate"] = pie_rate
    for w in range(int(s.notes["windows"])):
        sr, pr = s.notes[f"drop_rate_w{w}"], p.notes[f"drop_rate_w{w}"]
        if sr > 2 * pr + 1e-9:
            s.failures.append(f"eighth {w}: S-PIE drops {sr:.4f}, more than 2x PIE's {pr:.4f}")
    if not pie_rate / 2 <= s.notes["drop_rate"] <= 2 * pie_rate + 1e-9:
        s.failures.append(
            f"S-PIE drops {s.notes['drop_rate']:.4f}, not within 2x of PIE's {pie_rate:.4f}"
        )
    s.scenario = "equal vs pie"
    return s


def epoch_packets(gbps: float, frame_bytes: int) -> int:
    """Packets in one S-PIE clearing interval at the line rate: the epoch the
    controller picks for that rate."""
    from bfrt_controller.spie.config import parse_config, sketch_scaling
    from hw_profiles import load_profile

    chip = "tofino2" if gbps > 100 else "tofino"
    cfg = parse_config(_spie_raw(chip, gbps, "spie"))
    k, _u = sketch_scaling(cfg, load_profile(chip))
    epoch_ns = (1 << k) * 64
    return int(epoch_ns * gbps / ((frame_bytes + WIRE_OVERHEAD_BYTES) * 8))


Plan = list[tuple[str, Callable[[], Result]]]


def plan(full: bool, programs: tuple[str, ...]) -> Plan:
    """CI: short runs at both rates and the paper's; --full: a whole
    clearing interval of S-PIE at each rate and long runs elsewhere."""
    jobs: Plan = []
    rates = (100.0, 400.0)
    n = 40_000 if full else 300
    for program in programs:
        for scenario in ("equal", "elephant", "incast", "wake"):
            for gbps in rates:
                jobs.append(
                    (f"{program} {scenario} {gbps:g}G", partial(run, program, scenario, gbps, n))
                )
        if program == "spie":
            for gbps in rates:
                m = epoch_packets(gbps, 1500) if full else 2_000
                jobs.append((f"spie equal vs pie {gbps:g}G", partial(spie_against_pie, gbps, m)))
            # The paper's 100 Mb/s bottleneck.
            m = 20_000 if full else 1_000
            jobs.append(("spie equal vs pie 0.1G", partial(spie_against_pie, 0.1, m)))
    return jobs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--full", action="store_true", help="a whole clearing interval, long runs")
    ap.add_argument("--program", choices=PROGRAMS, action="append")
    args = ap.parse_args(argv)
    programs = tuple(args.program or PROGRAMS)
    bad = 0
    for name, job in plan(args.full, programs):
        r = job()
        status = "ok" if r.ok else "FAIL"
        notes = " ".join(
            f"{k}={v:.4g}" for k, v in r.notes.items() if not k.startswith("drop_rate_w")
        )
        print(f"{status:4} {name:32} {r.packets:>8} pkts {r.seconds:6.1f} s  {notes}")
        for f in r.failures:
            print(f"       {f}")
        bad += not r.ok
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
