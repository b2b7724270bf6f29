#!/usr/bin/env python3
"""Simulation speed of the ns-3 evaluation, scheme by scheme, in one run.

For each scheme of PMQECN's scenario 1 and of the BFCC smoke scenario, cut
to the same simulated time, prints delivered data packets per wall-clock
second, so the cost of a P4 reference model (PMQECN, BFCC) sits beside a
baseline's plain Python pipeline (DCQCN, P4QCN, TCN) measured the same way.
PMQECN's time includes its controller's optimiser cycles (cvxpy, every
200 ms of simulated time per switch); DCQCN's and P4QCN's include their
senders' frequent rate re-reads while cut to a low rate. Prints figures,
asserts nothing.

    python benchmarks/eval_speed.py [--seconds 2]
"""

from __future__ import annotations

import argparse
import time

from models.net import ns3_env
from models.net.scenario import load_scenario
from models.net.simulate import RunSpec, run_one


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per run")
    args = ap.parse_args()

    t = time.perf_counter()
    ns3_env.ns3()
    print(f"ns-3 import + glue: {time.perf_counter() - t:.1f} s (once per process)")
    print(f"{'scenario':12} {'scheme':7} {'delivered':>9} {'wall s':>7} {'pkts/s':>8}  cost")
    for name in ("pmqecn-s1", "bfcc-smoke"):
        s = load_scenario(name).model_copy(update={"duration_s": args.seconds})
        rows = []
        for scheme in s.schemes.enabled():
            r = run_one(s, RunSpec(scheme, ""))
            rows.append((scheme, len(r.packets), r.wall_s))
        best = max(n / w for _, n, w in rows)
        for scheme, n, w in rows:
            rate = n / w
            cost = best / rate
            print(f"{name:12} {scheme:7} {n:9d} {w:7.2f} {rate:8.0f}  {cost:5.1f}x the fastest")


if __name__ == "__main__":
    main()
