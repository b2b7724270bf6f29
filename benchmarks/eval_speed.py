#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Simulation speed of the ns-3 evaluation: the speed-ups against the code
they replaced, scheme by scheme, in one process.

For each scheme of PMQECN's scenario 1, of BFCC's single-receiver
scenario (its first link rate) and of the TCP smoke dumbbell (ns-3's TCP on
the hosts, evaluation/tcp.py), cut to a short simulated time, runs the
simulation twice: with models/speedups.py and the control cycle's
models/cycle_speedups.py off (the reference path: a cppyy std::function per
event and per ns-3 device, header layouts recomputed per packet, a deep copy
of the switch per controller write, the optimiser's kernel and PMQECN's
controller as issue 48 found them) and on. Prints
delivered data packets (TCP: data segments received) per wall-clock second
of each, their ratio, and
whether both runs gave the same results (they must: same seed, same bytes).
Wall time is the whole `run_one`: building the network, the simulation,
PMQECN's optimiser cycles (cvxpy, every 200 ms of simulated time per switch).
Imports and compilations that happen once per process are paid by an untimed
warm-up first. That includes the reference glue's std::function wrappers:
cppyy compiles one per device callback (~0.35 s each) until it has a pool to
reuse, so in `tofcc eval run` the first two runs of a process pay several
seconds the old figures here leave out: the ratios are conservative. On
today's path it also includes the first build of a table every switch's
push fills the same way (PMQECN's drain tables, about 30 ms once a process:
Table.upsert_many's fresh builds).

    python benchmarks/eval_speed.py [--pmqecn-seconds 2] [--bfcc-seconds 0.5]
                                    [--tcp-seconds 3] [--spie-seconds 0.005]
                                    [--dadctcp-seconds 0.005] [--repeat 2] [--min-ratio 2]
                                    [--max-behind 2]

S-PIE's data-centre scenario (`spie-dc`, 10 Gb/s bottleneck, 16 TCP
senders) and DA-DCTCP's (`dadctcp-dc`, 10 Gb/s) time their mechanism's own
scheme (`p4spie`, `dadctcp`) and `none`, issue 48's list. `--X-seconds 0`
leaves scenario X out. Seed 002's 100-flow TCP
dumbbell (`tcp-dumbbell-s002`) is timed with `tofcc eval run`, not here:
the reference glue compiles a std::function per switch port (~0.35 s each,
102 ports) before it simulates anything.

After each scenario's schemes, the ceiling: the same topology, buffers and
flows in ns-3 alone (benchmarks/ns3_alone.py: ns-3's routers, stacks and
applications, no Python per packet), its delivered packets per wall
second, and how many times slower today's path runs each scheme (the
`behind` column; issue 48 asks for at most 2x).

Exits 1 if a mechanism's own scheme (pmqecn, the BFCC variants, p4spie,
dadctcp: issue 48's list; `MECHANISM` below) runs below --min-ratio times
the reference path, or more than --max-behind times slower than the ceiling
(when given), or if any scheme's two paths give different results. The
`all` rows (baselines and `none` included) are printed for the record.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import logging
import sys
import time
from pathlib import Path

from evaluation import ns3_env, speed_results
from evaluation.records import RunResult
from evaluation.scenario import Scenario, load_scenario
from evaluation.simulate import RunSpec, run_one, run_specs
from models import cycle_speedups, speedups

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ns3_alone  # beside this script; benchmarks/ is not a package

WARM_UP_DEFAULT_S = 0.02
# A warm-up long enough to reach the first controller cycle where that
# cycle imports something heavy: PMQECN's optimiser imports cvxpy and scipy
# (~2 s) at its first cycle (200 ms), which a shorter warm-up left to the
# first timed run, the reference path's (issue 48's profile).
WARM_UP_S = {"pmqecn-s1": 0.21}
# Each scenario's mechanism, the scheme(s) --min-ratio and --max-behind
# judge (a prefix: the BFCC variants); tcp-smoke has none.
MECHANISM = speed_results.MECHANISM


def facts(r: RunResult) -> dict[str, object]:
    d = dataclasses.asdict(r)
    d.pop("wall_s")
    return d


def timed(s: Scenario, spec: RunSpec, fast: bool, repeat: int) -> tuple[RunResult, float]:
    """The result and the best wall time of `repeat` runs on one path."""
    best = float("inf")
    result: RunResult | None = None
    for _ in range(repeat):
        # Every timed run starts from the same collector state: the fast
        # path freezes the heap for a run and gives it back after, which
        # leaves the collector's counts such that the next run, on either
        # path, can pay extra full collections.
        gc.collect()
        if fast:
            result = run_one(s, spec)
        else:
            with speedups.disabled(), cycle_speedups.disabled():
                result = run_one(s, spec)
        best = min(best, result.wall_s)
    assert result is not None
    return result, best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pmqecn-seconds", type=float, default=2.0, help="simulated s, pmqecn-s1")
    ap.add_argument("--bfcc-seconds", type=float, default=0.5, help="simulated s, bfcc-single")
    ap.add_argument("--tcp-seconds", type=float, default=3.0, help="simulated s, tcp-smoke")
    ap.add_argument("--spie-seconds", type=float, default=0.005, help="simulated s, spie-dc")
    ap.add_argument("--dadctcp-seconds", type=float, default=0.005, help="simulated s, dadctcp-dc")
    # Two by default: on a shared 2-core machine one run's time varies by
    # 10-20 %, and the fastest of two is the steadier estimate.
    ap.add_argument("--repeat", type=int, default=2, help="runs per path; the fastest counts")
    ap.add_argument(
        "--min-ratio",
        type=float,
        default=None,
        help="exit 1 if a mechanism's scheme is below this ratio to the reference path",
    )
    ap.add_argument(
        "--max-behind",
        type=float,
        default=None,
        help="exit 1 if a mechanism's scheme runs more than this many times slower than "
        "ns-3 alone (its scenario's ceiling)",
    )
    ap.add_argument(
        "--write",
        type=Path,
        default=None,
        metavar="FILE",
        help="append this run's figures to FILE (JSON; docs/evaluation.md's eval:speed "
        f"block renders {speed_results.BUNDLED.relative_to(speed_results.REPO)})",
    )
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")

    # As `tofcc eval run`: the simulated controllers' warnings (BFCC's
    # clamped thresholds, once per switch and run) are a run's notes, for
    # its report, not lines between the benchmark's figures.
    logging.getLogger("tofcc").setLevel(logging.ERROR)
    t = time.perf_counter()
    ns3_env.ns3()
    ns3_env.fast()
    print(f"ns-3 import + glue: {time.perf_counter() - t:.1f} s (once per process, untimed)")
    plan = []
    # (scenario, simulated s, the schemes timed: None for all of them).
    # The two 10 Gb/s TCP scenarios time their mechanism's own scheme and
    # `none` only: every scheme on both paths would take minutes.
    scenarios: list[tuple[str, float, list[str] | None]] = [
        ("pmqecn-s1", args.pmqecn_seconds, None),
        ("bfcc-single", args.bfcc_seconds, None),
        ("tcp-smoke", args.tcp_seconds, None),
        ("spie-dc", args.spie_seconds, ["p4spie", "none"]),
        ("dadctcp-dc", args.dadctcp_seconds, ["dadctcp", "none"]),
    ]
    for name, seconds, only in [row for row in scenarios if row[1] > 0]:
        base = load_scenario(name)
        specs = run_specs(base, only)
        specs = [p for p in specs if p.variant == specs[0].variant]
        plan.append((base, seconds, specs))

    t = time.perf_counter()
    for base, _, specs in plan:
        short = base.model_copy(update={"duration_s": WARM_UP_S.get(base.name, WARM_UP_DEFAULT_S)})
        for spec in specs:
            run_one(short, spec)
            with speedups.disabled(), cycle_speedups.disabled():
                run_one(short, spec)
        ns3_alone.run(short, short.duration_s, specs[0].variant or None)
    print(f"warm-up (imports, first compilations): {time.perf_counter() - t:.1f} s, untimed")

    header = (
        f"{'scenario':12} {'scheme':12} {'delivered':>9} {'old s':>7} {'new s':>7} "
        f"{'old pkt/s':>9} {'new pkt/s':>9} {'ratio':>6} {'behind':>7}  same results"
    )
    print(header)
    print(f"{'':12} {'':12} {'':9} {'':7} {'':7} {'':9} {'':9} {'':6} {'ns-3':>7}")
    failed = False
    measured: list[speed_results.ScenarioTime] = []
    for base, seconds, specs in plan:
        s = base.model_copy(update={"duration_s": seconds})
        # The ceiling first: the same topology and flows with no Python per
        # packet; each scheme's "behind" is how many times slower it runs.
        ceiling = ns3_alone.run(s, seconds, specs[0].variant or None)
        ceiling_rate = ceiling.packets / ceiling.wall_s
        print(
            f"{s.name:12} {'ns-3 alone':12} {ceiling.packets:9d} {'':7} {ceiling.wall_s:7.2f} "
            f"{'':9} {ceiling_rate:9.0f}  (the ceiling)"
        )
        total_n, total_old, total_new = 0, 0.0, 0.0
        mechanism = MECHANISM.get(s.name)
        times: list[speed_results.SchemeTime] = []
        for spec in specs:
            old, old_s = timed(s, spec, fast=False, repeat=args.repeat)
            new, new_s = timed(s, spec, fast=True, repeat=args.repeat)
            same = facts(old) == facts(new)
            failed |= not same
            # Data packets (UDP) or data segments (TCP) that reached their
            # receiver; for UDP the same count as the packet log's.
            n = sum(f.packets_received for f in new.flows)
            total_n, total_old, total_new = total_n + n, total_old + old_s, total_new + new_s
            behind = ceiling_rate / (n / new_s) if n else float("inf")
            label = spec.scheme + (f"@{spec.variant}" if spec.variant else "")
            times.append(speed_results.SchemeTime(label, n, old_s, new_s, same))
            print(
                f"{s.name:12} {label:12} {n:9d} {old_s:7.2f} {new_s:7.2f} "
                f"{n / old_s:9.0f} {n / new_s:9.0f} {old_s / new_s:5.1f}x {behind:6.1f}x  "
                f"{'yes' if same else 'NO'}"
            )
            if mechanism is None or not spec.scheme.startswith(mechanism):
                continue
            if args.min_ratio is not None and old_s / new_s < args.min_ratio:
                print(
                    f"{s.name} {label}: {old_s / new_s:.2f}x is below "
                    f"--min-ratio {args.min_ratio:g}"
                )
                failed = True
            if args.max_behind is not None and behind > args.max_behind:
                print(
                    f"{s.name} {label}: {behind:.1f}x behind ns-3 alone, over "
                    f"--max-behind {args.max_behind:g}"
                )
                failed = True
        measured.append(
            speed_results.ScenarioTime(
                s.name, seconds, ceiling.packets, ceiling.wall_s, tuple(times)
            )
        )
        ratio = total_old / total_new
        print(
            f"{s.name:12} {'all':12} {total_n:9d} {total_old:7.2f} {total_new:7.2f} "
            f"{total_n / total_old:9.0f} {total_n / total_new:9.0f} {ratio:5.1f}x "
            f"{ceiling_rate / (total_n / total_new):6.1f}x  ({seconds:g} simulated s per run)"
        )
    if args.write is not None:
        run = speed_results.SpeedRun(*speed_results.stamp(args.write), args.repeat, tuple(measured))
        held = speed_results.append_run(args.write, run)
        print(f"appended to {args.write} ({held} runs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
