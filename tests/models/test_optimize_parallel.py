# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""ParallelSolver: a switch's ports split between processes, the answers unchanged.

Each chunk is solve_many's batched path on fewer ports, so every port gets
the answer solve() gives it (to the conic solver's tolerance), in the order
the ports were given, and a helper process that dies costs time, not answers.
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from models.optimize import PmqecnProblem, ProblemError, SolverError, solve
from models.optimize.parallel import MIN_PORTS_PER_CHUNK, ParallelSolver, chunks
from tests.models.test_optimize_many import mixed_ports, port


def assert_same_answers(got: list[object], want: list[object]) -> None:
    assert len(got) == len(want)
    for many, alone in zip(got, want, strict=True):
        assert not isinstance(many, ProblemError)
        assert not isinstance(alone, ProblemError)
        np.testing.assert_allclose(many.mu, alone.mu, rtol=1e-5)  # type: ignore[attr-defined]
        np.testing.assert_allclose(many.lam_star, alone.lam_star, rtol=1e-5)  # type: ignore[attr-defined]
        assert many.k_ls_packets == alone.k_ls_packets  # type: ignore[attr-defined]


def test_chunks_keep_the_order_and_share_the_classes() -> None:
    rng = np.random.default_rng(0)
    ports = [port(rng, k, 0.5) for k in (8, 2, 8, 8, 3, 8, 1, 8)]
    parts = chunks(ports, 2)
    assert [p for c in parts for p in c] == ports
    sizes = [sum(p.k for p in c) for c in parts]
    assert abs(sizes[0] - sizes[1]) <= 8
    assert chunks(ports, 1) == [ports]
    # More parts than ports leaves no empty chunk.
    assert all(chunks(ports[:2], 5))


def test_two_processes_give_each_port_solves_answer() -> None:
    ports = mixed_ports(0) + mixed_ports(1)
    assert len(ports) >= 2 * MIN_PORTS_PER_CHUNK
    want = [solve(p) for p in ports]
    with ParallelSolver(2) as two:
        assert_same_answers(two(ports), want)


@pytest.mark.parametrize("processes", [2, 3])
def test_dead_helpers_cost_time_not_answers(processes: int) -> None:
    # Every helper killed between cycles: each helper chunk of the next call
    # fails with the pool and is solved here, and the call after that has
    # helpers again.
    rng = np.random.default_rng(9)
    ports = [port(rng, 4, 0.5) for _ in range(processes * MIN_PORTS_PER_CHUNK)]
    want = [solve(p) for p in ports]
    with ParallelSolver(processes) as solver:
        assert_same_answers(solver(ports), want)
        pool = solver._pool
        assert pool is not None
        for pid in list(pool._processes):
            os.kill(pid, signal.SIGKILL)
        assert_same_answers(solver(ports), want)
        assert_same_answers(solver(ports), want)
        assert solver._pool is not None and solver._pool is not pool


def test_one_process_or_few_ports_never_start_helpers() -> None:
    rng = np.random.default_rng(1)
    ports = [port(rng, 3, 0.5) for _ in range(MIN_PORTS_PER_CHUNK)]
    with ParallelSolver(1) as one:
        assert_same_answers(one(ports * 3), [solve(p) for p in ports * 3])
        assert one._pool is None
    with ParallelSolver(4) as four:
        four(ports)  # too few ports to split
        assert four._pool is None
    with pytest.raises(ValueError, match="processes"):
        ParallelSolver(0)


def test_what_crosses_to_and_from_helpers_survives_pickling() -> None:
    # A helper gets pickled problems and returns pickled answers or errors
    # (solve_many puts a failing port's ProblemError in its place).
    import pickle

    rng = np.random.default_rng(2)
    p = port(rng, 5, 0.4, target_utilisation=0.9)
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, PmqecnProblem)
    assert q == p
    answer = solve(p)
    assert pickle.loads(pickle.dumps(answer)) == answer
    err = pickle.loads(pickle.dumps(SolverError("N: no candidate point keeps sum L_s <= N (C2)")))
    assert isinstance(err, SolverError)
    assert str(err).startswith("N: ")
