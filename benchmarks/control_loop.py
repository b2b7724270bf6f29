#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PMQECN control-loop cycle time on the model backend: ports solved one by one vs together.

One cycle = read every class counter and sojourn accumulator, solve each
port's M/M/1/N problem, write K_i, weights and lambda_i* as one batch. The
ports are solved one after another (``solve_many(batched=False)``, the
earlier path), together (``solve_many``: layer 1 through every port's
multiplier at once, the remaining conic solves as one block-diagonal
problem, one exact-model evaluation for all ports) and together in two
processes (``optimizer.solver_processes: 2``, models/optimize/parallel.py:
half the ports each), side by side in one run. Traffic is sent through the
model between cycles so every class has a measured rate.

Configurations: 1 and 64 ports with the paper's three classes each; 64
ports with 8 classes each (512 classes, the issue's full switch); and the
optimiser alone for 64 ports x 8 classes. Then DA-DCTCP's cycle on
BF-Runtime (the test suite's fake SDE, 4 pipes, which counts every request):
read requests and cells per cycle for 4 to 1024 queue slots (issue 50: one
request per register). Prints figures, asserts nothing (targets belong
here, not in timed tests).

    python benchmarks/control_loop.py [--cycles 7]
"""

from __future__ import annotations

import argparse
import copy
import functools
import gc
import statistics
import sys
import time
from collections.abc import Callable
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
from bfrt_controller.pmqecn import solver
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import parse_config
from bfrt_controller.service import settle_heap
from hw_profiles import load_profile
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
    packets = [
        (BURST[qos], bytes(
            Ether(dst="02:00:00:00:00:01", src="00:00:00:00:00:09")
            / IP(src="10.200.0.1", dst=f"10.{p}.0.1", tos=dscp << 2)
            / UDP(sport=1, dport=2)
            / (b"\x00" * 100)
        ))
        for p in range(1, ports + 1)
        for _, qos, dscp, _ in kinds
    ]  # fmt: skip
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
    # The fake SDE is the test suite's double (tests/doubles), not shipped.
    tests = str(Path(__file__).resolve().parents[1] / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from doubles.fake_bfrt_grpc import FakeBfrtGrpc

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
    args = parser.parse_args()
    one_by_one = functools.partial(solve_many, batched=False)
    heads = ("one port at a time", "ports together", "2 processes")
    print(f"{'':30} {heads[0]:>20} {heads[1]:>16} {heads[2]:>16} {'ratio':>6}")
    print(f"{'':30} {'median (max) ms':>20} {'median (max) ms':>16} {'median (max) ms':>16}")
    setups = (("1 port x 3 classes", 1, KINDS), ("64 ports x 3 classes", 64, KINDS),
              ("64 ports x 8 classes", 64, KINDS8))  # fmt: skip
    for label, ports, kinds in setups:
        row = []
        for path in (one_by_one, solve_many):
            # The app's solver module looks the name up at call time.
            solver.solve_many = path  # type: ignore[assignment]
            row.append(run(ports, kinds, args.cycles))
        solver.solve_many = solve_many  # type: ignore[assignment]
        row.append(run(ports, kinds, args.cycles, processes=2))
        print(_row(label, row))
    with ParallelSolver(2) as two:
        rows = [optimiser_alone(64, 8, args.cycles, s) for s in (one_by_one, solve_many, two)]
    print(_row("64 ports x 8, optimiser alone", rows))
    print()
    print(f"{'DA-DCTCP cycle (BF-Runtime, 4 pipes)':40} {'reads/cycle':>12} {'cells/cycle':>12}")
    for ports in (1, 16, 64, 128):
        requests, cells = dadctcp_reads(ports, args.cycles)
        label = f"{ports} ports x 8 queues ({8 * ports} slots)"
        print(f"{label:40} {requests:>12.0f} {cells:>12.0f}")


def _row(label: str, runs: list[list[float]]) -> str:
    """Medians and maxima; the ratio is one port at a time over the fastest path."""
    cells = [f"{statistics.median(r) * 1e3:.1f} ({max(r) * 1e3:.1f})" for r in runs]
    ratio = statistics.median(runs[0]) / min(statistics.median(r) for r in runs[1:])
    return f"{label:30} {cells[0]:>20} {cells[1]:>16} {cells[2]:>16} {ratio:>5.2f}x"


if __name__ == "__main__":
    main()
