#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PMQECN control-loop cycle time: a full switch through both backends, and the optimiser's paths.

One cycle = read every class counter and sojourn accumulator, solve each
port's M/M/1/N problem, write K_i, weights and lambda_i* as one batch.

First, the issue 48 figure: 64 ports x 8 classes (512 classes, a full
switch) through the BF-Runtime backend (BfrtSwitch on the test suite's fake
SDE, tests/doubles/fake_bfrt_grpc.py: the client's key and data objects,
the batching, the rollback snapshots and the requests included) and
through the model backend, each on today's code and on the reference path
the control loop's speed-ups replaced (models/cycle_speedups.py), the two
cycles alternating in one run so both see the same machine. Wall and CPU
time of each cycle (the machine may be shared: CPU time is what an idle one
would show), and on BF-Runtime the requests a cycle makes. `--profile`
adds where each backend's cycle spends its time (cProfile, by area: the
fake switch, the BF-Runtime backend, the model backend, the app, the
optimiser). `--only-switch` stops there.

Then the optimiser's paths on the model backend: the ports solved one
after another (``solve_many(batched=False)``, the earlier path), together
(``solve_many``: layer 1 through every port's multiplier at once, the
remaining conic solves as one block-diagonal problem, one exact-model
evaluation for all ports) and together in two processes
(``optimizer.solver_processes: 2``, models/optimize/parallel.py: half the
ports each). Traffic is sent through the model between cycles so every
class has a measured rate. Configurations: 1 and 64 ports with the
paper's three classes each; 64 ports with 8 classes each; and the
optimiser alone for 64 ports x 8 classes. Then DA-DCTCP's cycle on
BF-Runtime (the fake SDE, 4 pipes, which counts every request): read
requests and cells per cycle for 4 to 1024 queue slots (issue 50: one
request per register). Prints figures, asserts nothing (targets belong
here, not in timed tests).

    python benchmarks/control_loop.py [--cycles 7] [--profile] [--only-switch] [--max-ms 20]
                                      [--write FILE]

`--max-ms X` exits 1 when either backend's median cycle on today's path is
above X ms (issue 48 asks for 20), after the run is written. `--write FILE`
appends the 64 x 8 figures, and the optimiser's paths unless
`--only-switch`, to FILE (evaluation/speed_results.py; README.md's tables
render benchmarks/results/control_loop.json).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import cProfile
import functools
import gc
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.dadctcp.app import DadctcpApp
from bfrt_controller.dadctcp.config import DEFAULT_CONFIG as DADCTCP_DEFAULT
from bfrt_controller.dadctcp.config import parse_config as parse_dadctcp
from bfrt_controller.pmqecn import names as pn
from bfrt_controller.pmqecn import solver
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import parse_config
from bfrt_controller.service import collect_after_cycle, settle_heap
from evaluation import speed_results
from hw_profiles import load_profile
from models import cycle_speedups
from models.optimize import PmqecnProblem, solve_many
from models.optimize.parallel import ParallelSolver

KINDS = (("voice", "A", 46, 20), ("video", "B", 34, 40), ("bulk", "C", 10, 60))
# Eight classes per port: the three kinds again with other DSCPs.
KINDS8 = (
    *KINDS,
    ("voice2", "A", 40, 20), ("video2", "B", 32, 40), ("bulk2", "C", 8, 60),
    ("video3", "B", 26, 40), ("bulk3", "C", 0, 60),
)  # fmt: skip
BURST = {"A": 3, "B": 4, "C": 2}
SENDER_PORT = 0


def port_of(i: int) -> int:
    """Receiver i's device port: pipe 0's front panel is 0..63 (0 is the
    sender's), so the 64th receiver is pipe 1's first port."""
    return i if i < 64 else 128 + i - 64


def config_for(
    ports: int, kinds: tuple[tuple[str, str, int, int], ...] = KINDS, processes: int = 1
) -> dict[str, Any]:
    """`ports` receiver ports 1..ports, each with len(kinds) classes, one sender port."""
    classes, routes = [], []
    for p in range(1, ports + 1):
        routes.append(
            {"prefix": f"10.{p}.0.0/16", "port": port_of(p), "src_mac": "02:00:00:00:00:01",
             "dst_mac": "00:00:00:00:00:02"}
        )  # fmt: skip
        for k, (name, qos, dscp, k_cells) in enumerate(kinds):
            cid = (p - 1) * len(kinds) + k + 1
            classes.append(
                {"id": cid, "name": f"{name}-{p}", "priority": cid, "vq": cid, "queue": k,
                 "qos": qos, "threshold_cells": k_cells, "port": port_of(p),
                 "match": {"dst": f"10.{p}.0.0/16", "dscp": dscp}}
            )  # fmt: skip
    return {
        "chip": "tofino",
        "routes": routes,
        "ports": [{"port": SENDER_PORT, "feedback_session": 1}],
        # Host ports are bound to their hosts' sources (the receivers' /16s,
        # the senders' 10.200/16), as a config must.
        "source_bindings": [
            *({"port": port_of(p), "prefixes": [f"10.{p}.0.0/16"]} for p in range(1, ports + 1)),
            {"port": SENDER_PORT, "prefixes": ["10.200.0.0/16"]},
        ],
        "scheduling": {"mode": "p4_wrr", "level_queues": [0, 1, 2]},
        "classes": classes,
        "optimizer": {
            "capacity_packets": 1000, "service_rate_pps": 1_250_000,
            "arrival_cap_pps": 1_500_000, "link_capacity_pps": 1_250_000,
            "solver_processes": processes,
        },
    }  # fmt: skip


def run(
    ports: int, kinds: tuple[tuple[str, str, int, int], ...], cycles: int, processes: int = 1
) -> list[float]:
    """Cycle times (s) of ``cycles`` optimise-and-apply cycles, each port loaded
    to about 80 % of its 1.25M pps (under it, so every port is a solve). The
    first cycle, which compiles each problem structure (in every process),
    is not counted; after it the heap is settled as the daemon settles it."""
    cfg = parse_config(config_for(ports, kinds, processes))
    app = PmqecnApp(ModelSwitch("pmqecn", load_profile("tofino")), cfg)
    app.push_all()
    switch = app.switch
    assert isinstance(switch, ModelSwitch)
    packets = _model_packets(ports, kinds)
    now = 0.0
    app.sample(now)
    times: list[float] = []
    for cycle in range(cycles + 1):
        for burst, data in packets:
            for _ in range(burst):
                switch.model.send(SENDER_PORT, data)
        # 2-4 packets per class per step: 3 classes in 10 us (200k-400k pps
        # each), 8 classes in 25 us (80k-160k pps each).
        now += 1e-5 if len(kinds) <= 3 else 2.5e-5
        start = time.perf_counter()
        app.optimize_once(now)
        times.append(time.perf_counter() - start)
        if cycle == 0:
            # As `tofcc run` does after its first cycle (service.settle_heap).
            settle_heap()
    gc.unfreeze()
    return times[1:]


def _fake_module() -> Any:
    """The fake SDE: the test suite's double (tests/doubles), not shipped."""
    # The double imports its siblings as `tests.doubles.*`: the repository
    # root goes on the path, not tests/.
    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    from tests.doubles import fake_bfrt_grpc

    return fake_bfrt_grpc


@dataclass
class Rig:
    """One PMQECN app on one backend, with the traffic of one interval."""

    app: PmqecnApp
    traffic: Callable[[], None]
    # (reads, writes) requests so far; None on the model backend.
    requests: Callable[[], tuple[int, int]] | None = None
    now: float = 0.0

    def cycle(self, dt: float) -> tuple[float, float]:
        """(wall s, CPU s) of one optimise-and-apply cycle after one
        interval's traffic, the collector held back as `tofcc run` holds it
        (service.collect_after_cycle: its collection after the cycle is not
        the cycle's time; a reference cycle runs with the collector on, as
        it did)."""
        self.traffic()
        self.now += dt
        held = collect_after_cycle() if cycle_speedups.ENABLED else contextlib.nullcontext()
        with held:
            wall, cpu = time.perf_counter(), time.process_time()
            self.app.optimize_once(self.now)
            took = time.perf_counter() - wall, time.process_time() - cpu
        return took


def _model_packets(
    ports: int, kinds: tuple[tuple[str, str, int, int], ...]
) -> list[tuple[int, bytes]]:
    return [
        (BURST[qos], bytes(
            Ether(dst="02:00:00:00:00:01", src="00:00:00:00:00:09")
            / IP(src="10.200.0.1", dst=f"10.{p}.0.1", tos=dscp << 2)
            / UDP(sport=1, dport=2)
            / (b"\x00" * 100)
        ))
        for p in range(1, ports + 1)
        for _, qos, dscp, _ in kinds
    ]  # fmt: skip


def model_rig(ports: int, kinds: tuple[tuple[str, str, int, int], ...]) -> Rig:
    """The model backend, traffic sent through the model's pipeline."""
    app = PmqecnApp(
        ModelSwitch("pmqecn", load_profile("tofino")), parse_config(config_for(ports, kinds))
    )
    app.push_all()
    switch = app.switch
    assert isinstance(switch, ModelSwitch)
    packets = _model_packets(ports, kinds)

    def traffic() -> None:
        for burst, data in packets:
            for _ in range(burst):
                switch.model.send(SENDER_PORT, data)

    app.sample(0.0)
    return Rig(app, traffic)


# What each packet of the BF-Runtime rig's traffic waited, in ns: a queue of
# a few packets at 10 Gb/s, well inside deq_timedelta's range.
SOJOURN_NS = 2_000
PACKET_BYTES = 142


def bfrt_rig(ports: int, kinds: tuple[tuple[str, str, int, int], ...]) -> Rig:
    """BfrtSwitch on the fake SDE; the interval's traffic is what the data
    plane would have left in the class counters, the per-pipe arrival
    counts and the sojourn half the switch sums into (the sender's pipe 0)."""
    fake_mod = _fake_module()
    profile = load_profile("tofino")
    fake = fake_mod.FakeBfrtGrpc("pmqecn", profile)
    switch = BfrtSwitch("pmqecn", profile, client_module=fake)
    switch.connect()
    cfg = parse_config(config_for(ports, kinds))
    app = PmqecnApp(switch, cfg)
    app.push_all()
    burst = {c.id: BURST[c.qos] for c in cfg.classes}
    arrivals = fake.switch.state[fake.switch.spec(pn.CLASS_ARRIVALS).name][0]

    def traffic() -> None:
        for cid, k in burst.items():
            fake.count(pn.CLASS_COUNTERS, cid, k, k * PACKET_BYTES, pipe=0)
            arrivals[cid] = (arrivals[cid] + k) % (1 << 32)
            epoch = app.meter.epoch
            fake.set_register(pn.SOJOURN_SUM_NS[epoch], cid, SOJOURN_NS * k, pipe=0)
            fake.set_register(pn.SOJOURN_PKTS[epoch], cid, k, pipe=0)

    def requests() -> tuple[int, int]:
        calls = fake.calls
        reads = sum(1 for c in calls if c.rpc == "read")
        return reads, len(calls) - reads

    app.start(0.0)
    return Rig(app, traffic, requests)


@dataclass
class Paths:
    """Both paths' cycles: (wall s, CPU s) each, and requests per cycle."""

    reference: list[tuple[float, float]] = field(default_factory=list)
    fast: list[tuple[float, float]] = field(default_factory=list)
    requests: dict[str, tuple[float, float]] = field(default_factory=dict)


def both_paths(make: Callable[[], Rig], cycles: int, dt: float) -> Paths:
    """Today's path and the reference, one rig each, their cycles alternating.
    The first cycle of each (it compiles every problem structure) is not
    counted; after it the heap is settled as `tofcc run` settles it."""
    with cycle_speedups.disabled():
        ref = make()
    fast = make()
    out = Paths()
    for k in range(cycles + 1):
        with cycle_speedups.disabled():
            r, r_requests = _counted(ref, dt)
        f, f_requests = _counted(fast, dt)
        if k == 0:
            settle_heap()
            continue
        out.reference.append(r)
        out.fast.append(f)
        for name, got in (("reference", r_requests), ("fast", f_requests)):
            if got is not None:
                was = out.requests.get(name, (0.0, 0.0))
                out.requests[name] = (was[0] + got[0] / cycles, was[1] + got[1] / cycles)
    gc.unfreeze()
    return out


def _counted(rig: Rig, dt: float) -> tuple[tuple[float, float], tuple[int, int] | None]:
    """One cycle's times and, on BF-Runtime, its (read, write) requests."""
    before = rig.requests() if rig.requests else None
    times = rig.cycle(dt)
    if rig.requests is None or before is None:
        return times, None
    after = rig.requests()
    return times, (after[0] - before[0], after[1] - before[1])


# Where a cycle's time goes, by the file a function is in (--profile).
AREAS = (
    ("fake SDE (switch and client objects)", "doubles/fake_"),
    ("BF-Runtime backend", "bfrt_controller/backends/bfrt/"),
    ("model backend and model", ("bfrt_controller/backends/model", "models/switch/")),
    ("PMQECN app (measure, pipes, commit)", "bfrt_controller/"),
    ("optimiser (models/optimize)", "models/optimize/"),
    ("cvxpy / CLARABEL", ("cvxpy", "clarabel")),
    ("numpy / scipy", ("numpy", "scipy")),
)


def profile_cycles(make: Callable[[], Rig], cycles: int, dt: float) -> list[tuple[str, float]]:
    """Today's path under cProfile: each area's share of the cycles' time
    (own time of the functions in it; cProfile slows small calls most, so
    shares, not milliseconds)."""
    rig = make()
    rig.cycle(dt)
    settle_heap()  # as both_paths and `tofcc run`
    prof = cProfile.Profile()
    for _ in range(cycles):
        rig.traffic()
        rig.now += dt
        prof.enable()
        rig.app.optimize_once(rig.now)
        prof.disable()
    gc.unfreeze()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = 0.0
    by_area: dict[str, float] = {}
    for (filename, _, _), (_, _, own, _, _) in stats.items():
        total += own
        area = next(
            (
                name
                for name, where in AREAS
                if any(w in filename for w in ((where,) if isinstance(where, str) else where))
            ),
            "other (Python built-ins, stdlib)",
        )
        by_area[area] = by_area.get(area, 0.0) + own
    return sorted(((a, t / total) for a, t in by_area.items()), key=lambda x: -x[1])


def switch_section(cycles: int, profile: bool) -> list[speed_results.CycleTime]:
    """The 64 x 8 cycle through both backends, today's path against the
    reference: what it printed, per backend."""
    print("PMQECN 64 ports x 8 classes, one cycle (ms): today's path against the reference")
    print(f"{'':24} {'reference':>22} {'today':>22} {'ratio':>7}   requests/cycle (reads + writes)")
    print(f"{'':24} {'wall med (max) | CPU':>22} {'wall med (max) | CPU':>22}")
    rigs = (("BF-Runtime (fake SDE)", functools.partial(bfrt_rig, 64, KINDS8)),
            ("model backend", functools.partial(model_rig, 64, KINDS8)))  # fmt: skip
    measured: list[speed_results.CycleTime] = []
    for label, make in rigs:
        got = both_paths(make, cycles, INTERVAL_8)
        cells = [_cell(r) for r in (got.reference, got.fast)]
        ratio = _median(got.reference, 0) / _median(got.fast, 0)
        measured.append(
            speed_results.CycleTime(
                label,
                _median(got.reference, 0) * 1e3,
                max(r[0] for r in got.reference) * 1e3,
                _median(got.fast, 0) * 1e3,
                max(r[0] for r in got.fast) * 1e3,
                _median(got.fast, 1) * 1e3,
            )
        )
        req = ""
        if got.requests:
            (r0, w0), (r1, w1) = got.requests["reference"], got.requests["fast"]
            req = f"{r0:.0f} + {w0:.0f} -> {r1:.0f} + {w1:.0f}"
        print(f"{label:24} {cells[0]:>22} {cells[1]:>22} {ratio:>6.1f}x   {req}")
    if profile:
        for label, make in rigs:
            print()
            print(f"Where today's cycle goes, {label} (cProfile, share of own time):")
            for area, share in profile_cycles(make, cycles, INTERVAL_8):
                print(f"  {area:40} {share * 100:5.1f} %")
    return measured


# 2-4 packets per class per step: 8 classes in 25 us (80k-160k pps each).
INTERVAL_8 = 2.5e-5


def _median(runs: list[tuple[float, float]], which: int) -> float:
    return statistics.median(r[which] for r in runs)


def _cell(runs: list[tuple[float, float]]) -> str:
    wall = f"{_median(runs, 0) * 1e3:.1f} ({max(r[0] for r in runs) * 1e3:.1f})"
    return f"{wall} | {_median(runs, 1) * 1e3:.1f}"


def optimiser_alone(
    ports: int, k: int, cycles: int, solver: Callable[[list[PmqecnProblem]], object]
) -> list[float]:
    """``solver`` for ``ports`` independent ports of ``k`` classes (A, B, C cycling)."""
    rng = np.random.default_rng(0)
    times = []
    for _ in range(cycles + 1):
        problems = []
        for _ in range(ports):
            lam = rng.uniform(0.5, 1.5, k)
            problems.append(
                PmqecnProblem(
                    N=1000, Lambda=1.5e6, Gamma=1.25e6, C=1.25e6, n=1,
                    lambdas=list(lam * 0.8 * 1.25e6 / lam.sum()),
                    W=list(rng.uniform(2e-6, 15e-6, k)),
                    kinds=["ABC"[i % 3] for i in range(k)], weights=[(1.0, 1.0)] * k,
                )
            )  # fmt: skip
        start = time.perf_counter()
        solver(problems)
        times.append(time.perf_counter() - start)
    return times[1:]  # the first compiles the structure


def dadctcp_reads(queue_ports: int, cycles: int) -> tuple[float, float]:
    """(read requests, cells read) per DA-DCTCP cycle with 8 queues on each
    of `queue_ports` ports (pipes 0 and 1), on the fake SDE."""
    FakeBfrtGrpc = _fake_module().FakeBfrtGrpc
    raw = copy.deepcopy(yaml.safe_load(DADCTCP_DEFAULT.read_text()))
    ports = [*range(64), *range(128, 192)][:queue_ports]
    raw["ports"] = [
        {"port": p, "k_port_packets": 80, "drop_not_ect": False,
         "queues": [{"queue": q, "k_packets": 10} for q in range(8)]}
        for p in ports
    ]  # fmt: skip
    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("dadctcp", profile)
    switch = BfrtSwitch("dadctcp", profile, client_module=fake)
    switch.connect()
    app = DadctcpApp(switch, parse_dadctcp(raw))
    app.push_all()
    before = len(fake.calls)
    for k in range(cycles):
        app.cycle(k * app.config.interval_s)
    reads = [c for c in fake.calls[before:] if c.rpc == "read"]
    return len(reads) / cycles, sum(c.count for c in reads) / cycles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=7)
    parser.add_argument(
        "--profile", action="store_true", help="where each backend's cycle spends its time"
    )
    parser.add_argument(
        "--only-switch", action="store_true", help="only the 64 x 8 cycle through both backends"
    )
    parser.add_argument(
        "--max-ms",
        type=float,
        default=None,
        help="exit 1 if either backend's 64 x 8 median (today's path) is above this",
    )
    parser.add_argument(
        "--write",
        type=Path,
        default=None,
        metavar="FILE",
        help="append the figures to FILE, a JSON list of runs (README.md's eval:cycles and "
        "eval:cycle-paths blocks render "
        f"{speed_results.BUNDLED_CYCLES.relative_to(speed_results.REPO)})",
    )
    args = parser.parse_args()
    measured = switch_section(args.cycles, args.profile)
    paths = () if args.only_switch else optimiser_section(args.cycles)
    if args.write is not None:
        record = speed_results.CycleRun(
            *speed_results.stamp(args.write), args.cycles, tuple(measured), paths
        )
        held = speed_results.append_run(args.write, record)
        print(f"appended to {args.write} ({held} runs)")
    over = [m for m in measured if args.max_ms is not None and m.today_ms > args.max_ms]
    if over:
        print()
        for m in over:
            print(f"{m.backend}: median {m.today_ms:.1f} ms, above --max-ms {args.max_ms:g}")
        sys.exit(1)


def optimiser_section(cycles: int) -> tuple[speed_results.PathTime, ...]:
    """The optimiser's three paths on the model backend, then DA-DCTCP's
    reads: what it printed of the paths."""
    print()
    one_by_one = functools.partial(solve_many, batched=False)
    heads = ("one port at a time", "ports together", "2 processes")
    print(f"{'':30} {heads[0]:>20} {heads[1]:>16} {heads[2]:>16} {'ratio':>6}")
    print(f"{'':30} {'median (max) ms':>20} {'median (max) ms':>16} {'median (max) ms':>16}")
    setups = (("1 port x 3 classes", 1, KINDS), ("64 ports x 3 classes", 64, KINDS),
              ("64 ports x 8 classes", 64, KINDS8))  # fmt: skip
    timed: list[speed_results.PathTime] = []
    for label, ports, kinds in setups:
        row = []
        for path in (one_by_one, solve_many):
            # The app's solver module looks the name up at call time.
            solver.solve_many = path  # type: ignore[assignment]
            row.append(run(ports, kinds, cycles))
        solver.solve_many = solve_many  # type: ignore[assignment]
        row.append(run(ports, kinds, cycles, processes=2))
        print(_row(label, row))
        timed.append(_path_time(label, row))
    with ParallelSolver(2) as two:
        rows = [optimiser_alone(64, 8, cycles, s) for s in (one_by_one, solve_many, two)]
    label = "64 ports x 8, optimiser alone"
    print(_row(label, rows))
    timed.append(_path_time(label, rows))
    print()
    print(f"{'DA-DCTCP cycle (BF-Runtime, 4 pipes)':40} {'reads/cycle':>12} {'cells/cycle':>12}")
    for ports in (1, 16, 64, 128):
        requests, cells = dadctcp_reads(ports, cycles)
        label = f"{ports} ports x 8 queues ({8 * ports} slots)"
        print(f"{label:40} {requests:>12.0f} {cells:>12.0f}")
    return tuple(timed)


def _path_time(setup: str, runs: list[list[float]]) -> speed_results.PathTime:
    """One _row's figures (ms), in the order of the paths."""
    figures = [x * 1e3 for r in runs for x in (statistics.median(r), max(r))]
    return speed_results.PathTime(setup, *figures)


def _row(label: str, runs: list[list[float]]) -> str:
    """Medians and maxima; the ratio is one port at a time over the fastest path."""
    cells = [f"{statistics.median(r) * 1e3:.1f} ({max(r) * 1e3:.1f})" for r in runs]
    ratio = statistics.median(runs[0]) / min(statistics.median(r) for r in runs[1:])
    return f"{label:30} {cells[0]:>20} {cells[1]:>16} {cells[2]:>16} {ratio:>5.2f}x"


if __name__ == "__main__":
    main()
