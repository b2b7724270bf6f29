# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""solve_many with a switch's ports split between processes.

The ports are independent, so a full switch's problems split into one chunk
per process: this process solves the first while helper processes solve the
others (each chunk with solve_many's batched path). Where most ports take
the batched path (layer 1 through its multiplier, models/optimize/layer1_dual.py)
a 64 x 8 switch takes ~15 ms in one process and the hand-off eats what a
second saves (benchmarks/control_loop.py). Helpers pay off where many ports
need solve()'s own, per-port path (class B weights with b > a, whose CCP
re-solves each port several times): 64 such ports of 8 classes took 445 ms
in one process and 246 ms in two. The answers are solve_many's, up to the
conic solver's last digits where a chunk's block solve differs from a
whole-switch one (tests/models/test_optimize_parallel.py).

Helpers come from a fork server that has already imported the optimiser,
so a helper starts without the two seconds cvxpy takes to import, and is
never forked from a process that runs gRPC threads. A helper compiles each
problem structure on its first chunk (as this process did), so the first
cycle is slower. If a helper dies, its chunk is solved here and the pool
is started again on the next call.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from models.optimize.pmqecn import PmqecnProblem, PmqecnSolution, ProblemError, solve_many

log = logging.getLogger(__name__)

Answer = PmqecnSolution | ProblemError
# Below this many ports a chunk's hand-off costs more than its solve saves.
MIN_PORTS_PER_CHUNK = 4


def chunks(problems: Sequence[PmqecnProblem], parts: int) -> list[list[PmqecnProblem]]:
    """Contiguous chunks with about equal numbers of classes (the solve's cost)."""
    total = sum(p.k for p in problems)
    out: list[list[PmqecnProblem]] = [[] for _ in range(parts)]
    done = 0
    for p in problems:
        # The chunk whose share of the classes this problem's middle falls in.
        index = min(parts - 1, int((done + p.k / 2) * parts / total))
        out[index].append(p)
        done += p.k
    return [c for c in out if c]


def _solve_chunk(problems: list[PmqecnProblem], polish: bool) -> list[Answer]:
    return solve_many(problems, polish=polish)


class ParallelSolver:
    """solve_many over ``processes`` processes (this one included); 1 is solve_many."""

    def __init__(self, processes: int = 1, *, polish: bool = True) -> None:
        if processes < 1:
            raise ValueError(f"processes must be >= 1, got {processes}")
        self.processes = processes
        self.polish = polish
        self._pool: ProcessPoolExecutor | None = None

    def __call__(self, problems: Sequence[PmqecnProblem]) -> list[Answer]:
        parts = min(self.processes, len(problems) // MIN_PORTS_PER_CHUNK)
        if parts <= 1:
            return solve_many(problems, polish=self.polish)
        first, *rest = chunks(problems, parts)
        pool = self._ensure_pool()
        futures: list[Future[list[Answer]] | None] = []
        for chunk in rest:
            try:
                futures.append(pool.submit(_solve_chunk, chunk, self.polish))
            except (BrokenProcessPool, RuntimeError):
                futures.append(None)
        answers = solve_many(first, polish=self.polish)
        for chunk, future in zip(rest, futures, strict=True):
            answers += self._collect(chunk, future)
        return answers

    def _collect(
        self, chunk: list[PmqecnProblem], future: Future[list[Answer]] | None
    ) -> list[Answer]:
        if future is not None:
            try:
                return future.result()
            except (BrokenProcessPool, CancelledError) as exc:
                # Cancelled: close() below, for an earlier chunk, cancels the
                # chunks a live pool had not started.
                log.warning("an optimiser process died (%r); solving its ports here", exc)
        self.close()
        return solve_many(chunk, polish=self.polish)

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["models.optimize.pmqecn"])
            self._pool = ProcessPoolExecutor(max_workers=self.processes - 1, mp_context=ctx)
        return self._pool

    def close(self, *, wait: bool = False) -> None:
        """Stop the helpers; ``wait`` for them to exit (at interpreter exit)."""
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> ParallelSolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
