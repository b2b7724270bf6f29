#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Where one shortened run's wall time goes, by part of the harness.

    python benchmarks/profile_run.py SCENARIO SCHEME SECONDS [VARIANT]
        [--warm-up 0.02] [--reference] [--top 0]

Runs SCENARIO's SCHEME for SECONDS of simulated time under cProfile, after
an unprofiled warm-up run (imports, first compilations; make it reach the
first controller cycle when that imports something, as PMQECN's optimiser
does at 200 ms), and prints the profiled time by area: the ns-3 event loop
(C++, with the dispatch into Python: the run's own time), the harness's
glue (network, TM, ns-3 calls), the switch model's program code, its core
objects (tables, registers, counters), header parse and emit, the hosts'
reaction points, the controller (app and backend, optimiser), metrics.
A builtin's time counts for the area that called it. cProfile adds a cost
per Python call, so many small calls (the model's) weigh more here than in
a plain run: compare areas and runs, not these seconds with wall time.
`--reference` profiles with models/speedups.py off; `--top N` also prints
the N functions with the most own time.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import sys
import time

from evaluation.scenario import load_scenario
from evaluation.simulate import RunSpec, run_one
from models import speedups

# (substring of the file path, area), first match wins.
AREAS = [
    ("importlib", "imports"),
    ("site-packages/cvxpy", "controller: optimiser"),
    ("site-packages/scipy", "controller: optimiser"),
    ("site-packages/numpy", "controller: optimiser"),
    ("models/optimize", "controller: optimiser"),
    ("models/queueing", "controller: optimiser"),
    ("bfrt_controller/pmqecn/solver", "controller: optimiser"),
    ("bfrt_controller", "controller: app and backend"),
    ("evaluation/schemes.py", "controller: app and backend"),
    ("models/switch/core.py", "model: tables, registers, counters"),
    ("models/switch/headers.py", "model: header parse and emit"),
    ("models/switch/common.py", "model: header parse and emit"),
    (" layout>", "model: header parse and emit"),
    ("models/switch/", "model: program code"),
    ("models/hosts", "hosts: reaction points, cc"),
    ("models/baselines", "hosts: reaction points, cc"),
    ("evaluation/tcp", "glue: TCP hosts"),
    ("evaluation/pipelines.py", "glue: pipeline adapter"),
    ("evaluation/frames.py", "glue: frames"),
    ("evaluation/metrics.py", "metrics"),
    ("evaluation/records.py", "metrics"),
    ("evaluation/", "glue: network, TM, ns-3 calls"),
]
OTHER = "other"
IMPORT_BUILTINS = ("<built-in method builtins.exec>", "<built-in method marshal.loads>")

Key = tuple[str, int, str]


def area(key: Key) -> str:
    path, _, name = key
    if path.endswith("evaluation/simulate.py") and name in ("run_one", "_run_one"):
        # The ns-3 run is called from here: its C++ time (and the fast
        # glue's C-API dispatch into Python) is this function's own time.
        return "ns-3 event loop (C++) and dispatch"
    if path == "~" and name in IMPORT_BUILTINS:
        return "imports"
    for part, label in AREAS:
        if part in path:
            return label
    return OTHER


def by_area(stats: pstats.Stats) -> dict[str, float]:
    out: dict[str, float] = {}
    raw: dict[Key, tuple[int, int, float, float, dict[Key, tuple[int, int, float, float]]]]
    raw = stats.stats  # type: ignore[attr-defined]
    for key, (_, _, own, _, callers) in raw.items():
        label = area(key)
        spread = sum(c[2] for c in callers.values())
        if label == OTHER and spread > 0:
            # A builtin or library call: its time goes to its callers' areas.
            for caller, c in callers.items():
                out[area(caller)] = out.get(area(caller), 0.0) + own * c[2] / spread
        else:
            out[label] = out.get(label, 0.0) + own
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("scheme")
    ap.add_argument("seconds", type=float)
    ap.add_argument("variant", nargs="?", default="")
    ap.add_argument("--warm-up", type=float, default=0.02, help="simulated s, unprofiled")
    ap.add_argument("--reference", action="store_true", help="models/speedups.py off")
    ap.add_argument("--top", type=int, default=0)
    args = ap.parse_args()
    s = load_scenario(args.scenario).model_copy(update={"duration_s": args.seconds})
    spec = RunSpec(args.scheme, args.variant)
    with speedups.disabled() if args.reference else contextlib.nullcontext():
        run_one(s.model_copy(update={"duration_s": args.warm_up}), spec)
        prof = cProfile.Profile()
        started = time.perf_counter()
        prof.enable()
        r = run_one(s, spec)
        prof.disable()
        wall = time.perf_counter() - started
    n = sum(f.packets_received for f in r.flows)
    stats = pstats.Stats(prof)
    areas = by_area(stats)
    total = sum(areas.values())
    print(f"{args.scenario} {args.scheme}: {n} delivered, {wall:.2f} s wall under cProfile")
    for label, own in sorted(areas.items(), key=lambda item: -item[1]):
        if own >= 0.005 * total:
            print(f"  {100 * own / total:5.1f} %  {own:7.2f} s  {label}")
    if args.top:
        stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
