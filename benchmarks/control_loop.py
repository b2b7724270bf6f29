#!/usr/bin/env python3
"""PMQECN control-loop cycle time on the model backend, 1 port vs 64 ports.

One cycle = read every class counter and sojourn accumulator, solve each
port's M/M/1/N problem, write K_i, weights and lambda_i* as one batch. Each
port carries the paper's three classes; traffic is sent through the model
between cycles so every class has a measured rate. Prints figures, asserts
nothing (targets belong here, not in timed tests).

    python benchmarks/control_loop.py [--cycles 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import parse_config
from hw_profiles import load_profile

KINDS = (("voice", "A", 46, 20), ("video", "B", 34, 40), ("bulk", "C", 10, 60))
SENDER_PORT = 0


def port_of(i: int) -> int:
    """Receiver i's device port: pipe 0's front panel is 0..63 (0 is the
    sender's), so the 64th receiver is pipe 1's first port."""
    return i if i < 64 else 128 + i - 64


def config_for(ports: int) -> dict[str, Any]:
    """`ports` receiver ports 1..ports, each with three classes, one sender port."""
    classes, routes = [], []
    for p in range(1, ports + 1):
        routes.append(
            {"prefix": f"10.{p}.0.0/16", "port": port_of(p), "src_mac": "02:00:00:00:00:01",
             "dst_mac": "00:00:00:00:00:02"}
        )  # fmt: skip
        for k, (name, qos, dscp, k_cells) in enumerate(KINDS):
            cid = (p - 1) * 3 + k + 1
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
        },
    }  # fmt: skip


def run(ports: int, cycles: int) -> dict[str, float]:
    app = PmqecnApp(ModelSwitch("pmqecn", load_profile("tofino")), parse_config(config_for(ports)))
    app.push_all()
    switch = app.switch
    assert isinstance(switch, ModelSwitch)
    packets = {
        (p, dscp): bytes(
            Ether(dst="02:00:00:00:00:01", src="00:00:00:00:00:09")
            / IP(src="10.200.0.1", dst=f"10.{p}.0.1", tos=dscp << 2)
            / UDP(sport=1, dport=2)
            / (b"\x00" * 100)
        )
        for p in range(1, ports + 1)
        for _, _, dscp, _ in KINDS
    }
    now = 0.0
    app.sample(now)
    times: list[float] = []
    for _ in range(cycles):
        for (_, dscp), data in packets.items():
            for _ in range({46: 3, 34: 4, 10: 2}[dscp]):
                switch.model.send(SENDER_PORT, data)
        now += 1e-5  # 3-4 packets in 10 us: 200k-400k pps per class
        start = time.perf_counter()
        app.optimize_once(now)
        times.append(time.perf_counter() - start)
    return {
        "classes": len(app.config.classes),
        "median_s": statistics.median(times),
        "max_s": max(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=5)
    args = parser.parse_args()
    print(f"{'ports':>5} {'classes':>7} {'median cycle':>13} {'max cycle':>10}")
    results = {}
    for ports in (1, 64):
        r = run(ports, args.cycles)
        results[ports] = r
        median_ms, max_ms = r["median_s"] * 1e3, r["max_s"] * 1e3
        print(f"{ports:>5} {r['classes']:>7.0f} {median_ms:>11.1f}ms {max_ms:>8.1f}ms")
    ratio = results[64]["median_s"] / results[1]["median_s"]
    print(f"64-port cycle / 1-port cycle: {ratio:.1f}x (64x the classes)")


if __name__ == "__main__":
    main()
