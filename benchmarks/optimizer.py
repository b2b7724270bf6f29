"""cvxpy path vs the paper's differential evolution on the same PMQECN inputs.

Run ``python benchmarks/optimizer.py``.  For a 3-class (paper-like) and a
32-queue problem it prints wall time and the exact M/M/1/N objective of:

* cvxpy cold: first solve of a problem shape, including cvxpy's compile;
* cvxpy warm: median re-solve of the same shape, as a control loop sees it
  (the compiled DPP problem is reused, only parameter values change);
* DE converged: popsize 15, maxiter 1000, scipy's default tol=0.01 stop;
* DE 1000 gen: popsize 15, all 1000 generations (tol=0), the paper's budget.

Both objectives are shown: layer 1 (mu for the measured lambda) is where the
solvers compete on equal terms; the final objective F(mu*, lambda*) is what
layer 2 minimises for the mu* layer 1 handed it, so a worse layer-1 mu* can
end with a lower final value (Algorithm 2 never minimises F jointly).

DE is vectorised over its population (one kernel call per generation), the
fastest way to run it in numpy; a per-candidate Python loop is far slower.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

try:
    from models.optimize import DeSettings, PmqecnProblem, PmqecnSolution, solve, solve_de
except ModuleNotFoundError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from models.optimize import DeSettings, PmqecnProblem, PmqecnSolution, solve, solve_de
from models.optimize.surrogate import clear_compiled


def paper_like() -> PmqecnProblem:
    """Voice (A), video (B), file transfer (C) on a 1000 pkt/s port, as in Section 'Model'."""
    return PmqecnProblem(
        N=100,
        Lambda=900.0,
        Gamma=1000.0,
        C=400.0,
        n=3,
        lambdas=[300.0, 250.0, 200.0],
        W=[0.004, 0.02, 0.01],
        kinds=["A", "B", "C"],
        weights=[(1.0, 20.0), (1.0, 1.0), (1.0, 1000.0)],
    )


def many_queues(k: int = 32, seed: int = 0) -> PmqecnProblem:
    """k queues cycling through A, B, C at 80 % port load."""
    rng = np.random.default_rng(seed)
    lam = rng.uniform(20.0, 60.0, k)
    gamma = float(lam.sum() / 0.8)
    kinds = ["ABC"[i % 3] for i in range(k)]
    second = {"A": 20.0, "B": 1.0, "C": 1000.0}
    return PmqecnProblem(
        N=200,
        Lambda=float(lam.sum()),
        Gamma=gamma,
        C=gamma / 2,
        n=4,
        lambdas=list(lam),
        W=list(rng.uniform(0.5, 3.0, k) * k / (gamma - lam.sum())),
        kinds=kinds,
        weights=[(1.0, second[kd]) for kd in kinds],
    )


def timed(run: Callable[[], PmqecnSolution]) -> tuple[float, PmqecnSolution]:
    start = time.perf_counter()
    sol = run()
    return time.perf_counter() - start, sol


def bench(name: str, problem: PmqecnProblem, repeats: int, full_de: bool) -> None:
    clear_compiled()
    cold, sol = timed(lambda: solve(problem))
    warm = statistics.median(timed(lambda: solve(problem))[0] for _ in range(repeats))
    rows = [("cvxpy cold (compile+solve)", cold, sol), ("cvxpy warm (re-solve)", warm, sol)]
    t, de = timed(lambda: solve_de(problem, seed=0, settings=DeSettings()))
    rows.append(("DE converged (tol=0.01)", t, de))
    if full_de:
        t, de = timed(lambda: solve_de(problem, seed=0, settings=DeSettings(tol=0.0)))
        rows.append(("DE 1000 generations", t, de))
    print(f"\n{name}: k={problem.k}, N={problem.N}")
    print(
        f"  {'solver':<28}{'time [ms]':>11}{'layer-1 obj':>17}{'final obj':>17}"
        f"{'final vs cvxpy':>16}{'DE/cold':>9}{'DE/warm':>9}"
    )
    for label, seconds, s in rows:
        rel = (s.objective - sol.objective) / abs(sol.objective)
        ratios = ""
        if label.startswith("DE"):
            ratios = f"{seconds / cold:>8.1f}x{seconds / warm:>8.1f}x"
        print(
            f"  {label:<28}{seconds * 1e3:>11.1f}{s.layer1_objective:>17.9f}"
            f"{s.objective:>17.9f}{rel:>+16.1e}{ratios}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--repeats", type=int, default=20, help="warm re-solves to take the median of"
    )
    parser.add_argument(
        "--no-full-de", action="store_true", help="skip the 1000-generation DE runs"
    )
    args = parser.parse_args()
    solve(many_queues(k=2))  # import and first-call costs are not what we measure
    bench("paper-like 3 classes", paper_like(), args.repeats, not args.no_full_de)
    bench("32 queues", many_queues(), max(3, args.repeats // 4), not args.no_full_de)


if __name__ == "__main__":
    main()
