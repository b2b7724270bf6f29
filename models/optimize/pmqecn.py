# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PMQECN control-plane optimiser: mu*, lambda*, omega and K per virtual queue.

The paper (Algorithm 2, Fig. 3) solves two layers, each with differential
evolution: layer 1 picks service rates mu for the measured arrival rates
lambda, layer 2 picks target arrival rates lambda* for those mu*.  The
objective of both is the exact M/M/1/N function F of
:mod:`models.optimize.objective`.  :func:`solve_de` keeps that DE as the
reference; :func:`solve` instead solves a convex stand-in of each layer with
cvxpy (CLARABEL) and, where the stand-in can be loose, polishes on the exact F
with SLSQP, keeping whichever point is better.

Why layer 2 answers lambda* -> 0, and the target rule that replaces it
-----------------------------------------------------------------------
Layer 2 fixes mu* and minimises Eq. 14,
F(lambda) = sum_i (mu*_i/Gamma) (a_i Gamma W_s,i + b_i q_i), under C2-C6.

* The constraints only bound lambda from above.  L_s,i and lambda_e,i grow
  with lambda_i, so C2 (sum L_s <= N), C3 (sum lambda <= Lambda) and C6
  (sum lambda_e <= n C) hold at every point below a feasible one; C4 gives
  lambda_i < mu*_i and the open 0 < lambda_i; C1 and C5 concern mu only.
  So the feasible set reaches down to lambda = 0, and only the objective can
  keep lambda* away from it.
* Delay (every class): at fixed mu, W_s,i grows with lambda_i (from 1/mu_i
  at rho -> 0 towards N/mu_i); the term's slope is a_i/mu_i at lambda_i = 0
  (M/M/1: (mu/Gamma) Gamma/(mu - lambda)) and grows with lambda_i.
* Loss (class C, Eq. 13): N_loss = lambda P_N also grows with lambda_i, so
  both of class C's terms rise with lambda_C.
* Residual bandwidth (class A, Eq. 11): q_A = (n C - sum_j lambda_e,j)/(n C)
  is the only term that falls as traffic rises; it rewards every class's
  lambda_e (whose slope in lambda is at most 1) by w_A/(n C) per packet/s,
  w_A = sum over class-A queues of b_i mu*_i/Gamma <= max b_A.
* Jitter (class B, Eq. 12): b_i Gamma |W_i - W_s,i| pulls W_s,i towards the
  measured W_i; with a_i >= b_i the sum a_i W_s + b_i |W_i - W_s| does not
  fall as W_s rises, so it too is least at the smallest lambda_i; only
  b_i > a_i gives an interior optimum (W_s,i = W_i).

Hence dF/dlambda_i >= a_i/mu*_i - w_A/(n C) > 0 on the whole feasible set
for classes C and A unless w_A > a_i n C/mu*_i (>= a_i n, as mu*_i <= C on
any port): with equal weights (a, b) = (1, 1), the controller's default and
the evaluation harness's, that needs b_A mu*_A/Gamma > n >= 1, impossible.  The
optimum is the open bound, lambda*_i -> 0 (~mu* RHO_EPS here), and Eq. 15
feeds back lambda*/lambda ~ 0, "stop sending": the model has no term for
the traffic a class wants to carry except class A's, divided by n C.

We therefore keep Eq. 14 as the paper's objective and give layer 2 a floor
that carries the port's load (:meth:`PmqecnProblem.target_floor`): with u
the target utilisation (``PmqecnProblem.target_utilisation``, default 0.6,
``DEFAULT_TARGET_UTILISATION`` in :mod:`models.optimize.problem`; 0.9 until
the "Target utilisation" runs in docs/evaluation.md) and
cap = min(Lambda, n C, u Gamma), each class's floor is its weighted max-min
share of the cap, weights mu*_i (:func:`share_targets`), and
sum(lambda*) <= cap.  So a port carrying no more than the cap gives every
class lambda* >= lambda (feedback never cuts there); a busier one cuts the
classes above their share, to a total equal to the cap (the layer's answer
then is the floor), a light class keeping its rate; and a class's lambda*
/ lambda never rises as load grows.  The floor is a linear bound on rho in
the convex layer, bounds in the SLSQP polish, the encoding of DE's genes
and the feasibility projection.  Floors never exceed the measured lambda,
so C2 holds at the floor whenever it holds at the measurement (layer 1).
A standing queue counts as load too: the controller passes its drain rate
(sum lambda_i W_i over the control interval, Little's law) as
``backlog_drain``, and the port's part of the cap becomes
min(u Gamma, Gamma - backlog_drain), never below a quarter of u Gamma
(:func:`models.optimize.problem.port_target`).

Convex formulation (omega = mu/Gamma, lam~ = lambda/Gamma, rho = lambda/mu)
---------------------------------------------------------------------------
* Delay: M/M/1/N's W_s is replaced by the M/M/1 delay 1/(mu - lambda), an
  upper bound that is tight once rho^N is negligible (N of tens of packets).
  With Eq. 14's weight mu/Gamma the term becomes 1 + lam~/(omega - lam~) in
  layer 1 and 1/(1 - rho) in layer 2: both ``inv_pos`` of an affine, convex.
* C2 (sum L_s <= N): the M/M/1 queue lam~/(omega - lam~), resp.
  1/(1 - rho) - 1, is an upper bound on L_s, so the convex set is inside the
  exact one.  C3 and C6 are linear in rho (lambda_e <= lambda); C5 is linear.
* Loss (class C): P_N <= rho^N for rho < 1, so omega * N_loss / Gamma is
  bounded by exp((N+1) ln lam~ + (1 - N) ln omega) in layer 1 (exponential
  cone; convex because 1 - N <= 0) and by omega^2 rho^(N+1) in layer 2 (power
  cone, exact for any N).
* Residual bandwidth (class A): lambda_e ~ lambda makes it affine in rho
  (layer 2) and a constant times omega_A (layer 1).
* Jitter (class B): with g the convex delay above and t = omega Gamma W_i
  affine, a g + b |t - g| = max((a+b) g - b t, (a-b) g + b t), which is
  convex whenever the delay weight a >= the jitter weight b, and is then
  solved exactly.  For b > a the part b (t - g) is concave: g is replaced by
  its tangent (a majoriser) and re-linearised until the value settles
  (convex-concave procedure, a few re-solves of the compiled problem).

Where the stand-ins differ from M/M/1/N (small N, rho near 1, the loss
bound) the SLSQP polish on the exact F and exact C2 closes the gap; the convex
answer is kept when the polish does not improve it.  Where they coincide
(N rho^N negligible, one convex solve) the polish is skipped: it would move F
by ~1e-8 relative and cost several times the rest of the solve.

Layer 1 does not minimise the final F(mu*, lambda*), so only each layer's
value is ordered between solvers: a worse layer-1 mu* (e.g. DE's) can still
end with a lower final F.  ``solve(..., mu=...)`` and ``solve_de(..., mu=...)``
run layer 2 alone, which is how the two are compared on equal terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from models import cycle_speedups
from models.optimize.de import DeSettings, solve_de
from models.optimize.objective import Evaluation, evaluate, evaluate_many, exact_objective
from models.optimize.polish import polish_layer1, polish_layer2
from models.optimize.problem import (
    PmqecnProblem,
    ProblemError,
    QosKind,
    SolverError,
    share_targets,
)
from models.optimize.solution import (
    THRESHOLD_RULES,
    PmqecnSolution,
    ThresholdRule,
    build_solution,
    fixed_service_rates,
    layer_value,
    project_lam,
    project_mu,
    thresholds_to_cells,
)
from models.optimize.stacked import (
    build_solutions,
    keep_floors,
    or_error,
    project_lam_many,
    project_mu_many,
)
from models.optimize.surrogate import (
    ConvexResult,
    solve_layer1,
    solve_layer1_many,
    solve_layer2,
    solve_layer2_many,
)

__all__ = [
    "THRESHOLD_RULES",
    "DeSettings",
    "PmqecnProblem",
    "PmqecnSolution",
    "ProblemError",
    "QosKind",
    "SolverError",
    "ThresholdRule",
    "evaluate",
    "exact_objective",
    "share_targets",
    "solve",
    "solve_de",
    "solve_many",
    "thresholds_to_cells",
]

FloatArray = npt.NDArray[np.float64]


# Below this, (N+1)^2 max_i rho_i^N says the stand-ins are exact near the convex
# answer: M/M/1/N's L_s, W_s, lambda_e and loss differ from M/M/1's (and from the
# rho^N loss bound) by O(N rho^N) in value and O(N^2 rho^N) in slope, and the
# polish gains about the square of that.  Measured on the tests' problems and
# the benchmark's: below 1e-3 the polish gained <= 3e-8 of F (the size of
# Clarabel's own error), above it 1e-7 to 1e-1; so below it the polish is skipped.
_EXACT_TAIL = 1e-3


class _Candidate(NamedTuple):
    mu: FloatArray
    lam: FloatArray
    source: str


class _Scored(NamedTuple):
    candidate: _Candidate
    ev: Evaluation  # exact model at the candidate, reused by build_solution


def _best(problem: PmqecnProblem, candidates: list[_Candidate]) -> _Scored:
    """The candidate with the lowest exact objective among those meeting C2."""
    feasible: list[tuple[float, _Scored]] = []
    for c in candidates:
        scored = _Scored(c, evaluate(problem, c.mu, c.lam))
        value, violation = layer_value(problem, c.mu, c.lam, scored.ev)
        if violation == 0.0:
            feasible.append((value, scored))
    if not feasible:
        raise SolverError("N: no candidate point keeps sum L_s <= N (C2)")
    return min(feasible, key=lambda item: item[0])[1]


def _stand_in_tail(problem: PmqecnProblem, rho: FloatArray) -> float:
    """(N+1)^2 max_i rho_i^N, computed in logs (rho^N underflows for large N)."""
    log_tail = problem.N * float(np.log(np.max(rho))) + 2.0 * np.log(problem.N + 1.0)
    return float(np.exp(min(log_tail, 700.0)))


def _worth_polishing(problem: PmqecnProblem, rho: FloatArray, convex: ConvexResult) -> bool:
    """Whether SLSQP on the exact model can improve the convex answer beyond solver noise.

    No when the answer is the optimum of one convex problem whose stand-ins
    are exact near it (see _EXACT_TAIL), or the only feasible point (a floor
    that fills the cap).  Always yes for a CCP answer (several
    solves: only a stationary point of the re-linearised jitter) and for the
    floor fallback of layer 2 (no solve at all).
    """
    if convex.pinned:
        return False
    return convex.solves != 1 or _stand_in_tail(problem, rho) > _EXACT_TAIL


def _layer1(problem: PmqecnProblem, polish: bool) -> tuple[FloatArray, Evaluation, str]:
    lam_meas = problem.lambdas_array
    first = solve_layer1(problem)
    mu_cvx = project_mu(problem, problem.Gamma * first.x)
    candidates = [_Candidate(mu_cvx, lam_meas, "cvxpy")]
    polished = polish and _worth_polishing(problem, lam_meas / mu_cvx, first)
    if polished:
        omega = polish_layer1(problem, mu_cvx / problem.Gamma)
        candidates.append(_Candidate(project_mu(problem, problem.Gamma * omega), lam_meas, "slsqp"))
    best = _best(problem, candidates)
    note = f"kept {best.candidate.source}" if polished else "no polish needed" if polish else ""
    status = f"layer1 {first.status} ({first.solves} solves{', ' + note if note else ''})"
    return best.candidate.mu, best.ev, status


def _layer2(
    problem: PmqecnProblem, mu: FloatArray, polish: bool
) -> tuple[FloatArray, Evaluation, str]:
    second = solve_layer2(problem, mu)
    lam_cvx = project_lam(problem, mu, second.x * mu)
    candidates = [_Candidate(mu, lam_cvx, "cvxpy" if second.solves else "floor")]
    polished = polish and _worth_polishing(problem, lam_cvx / mu, second)
    if polished:
        rho = polish_layer2(problem, mu, lam_cvx / mu)
        candidates.append(_Candidate(mu, project_lam(problem, mu, rho * mu), "slsqp"))
    best = _best(problem, candidates)
    note = f"kept {best.candidate.source}" if polished else "no polish needed" if polish else ""
    status = f"layer2 {second.status} ({second.solves} solves{', ' + note if note else ''})"
    return best.candidate.lam, best.ev, status


def _feasible(problem: PmqecnProblem, mu: FloatArray, lam: FloatArray, ev: Evaluation) -> None:
    if layer_value(problem, mu, lam, ev)[1] != 0.0:
        raise SolverError("N: no candidate point keeps sum L_s <= N (C2)")


def solve_many(
    problems: Sequence[PmqecnProblem], *, polish: bool = True, batched: bool = True
) -> list[PmqecnSolution | ProblemError]:
    """:func:`solve` for independent ports (one problem each), as batches.

    Layer 1 is solved through each port's multiplier, all ports at once
    (:mod:`models.optimize.layer1_dual`; the same optimum as solve()'s conic
    layer 1, to that solver's tolerance), the remaining single-solve convex
    problems as one block-diagonal problem, and the exact model is evaluated
    for all ports in one call; a port that needs more (CCP re-linearisation,
    the SLSQP polish) takes :func:`solve`'s own path. The answers are
    :func:`solve`'s to within the conic solver's tolerance
    (tests/models/test_optimize_many.py). A port
    whose problem fails gets its ProblemError (or SolverError) in its place.
    ``batched=False`` solves one port after another (the reference path,
    benchmarks/control_loop.py measures both).
    """
    if batched:
        try:
            return _solve_batched(problems, polish)
        except ProblemError:
            # A conic solve that failed inside a batch (every per-port error is
            # caught below): the per-port path tells which port and why.
            pass
    return [or_error(solve, problem, polish=polish) for problem in problems]


def _solve_batched(
    problems: Sequence[PmqecnProblem], polish: bool
) -> list[PmqecnSolution | ProblemError]:
    out: list[PmqecnSolution | ProblemError | None] = [None] * len(problems)
    first = solve_layer1_many(list(problems))
    projected = _project_mus(problems, [res.x for res in first])
    batch: list[int] = []
    mus: dict[int, FloatArray] = {}
    for i, (problem, res) in enumerate(zip(problems, first, strict=True)):
        mu = projected[i]
        if isinstance(mu, ProblemError):
            out[i] = mu
            continue
        if polish and _worth_polishing(problem, problem.lambdas_array / mu, res):
            out[i] = or_error(solve, problem, polish=polish)
            continue
        mus[i] = mu
        batch.append(i)
    evs1 = evaluate_many(
        [problems[i] for i in batch], [mus[i] for i in batch],
        [problems[i].lambdas_array for i in batch],
    )  # fmt: skip
    layer1_ev: dict[int, Evaluation] = {}
    for i, ev in zip(batch, evs1, strict=True):
        try:
            _feasible(problems[i], mus[i], problems[i].lambdas_array, ev)
            layer1_ev[i] = ev
        except ProblemError as exc:
            out[i] = exc
    batch = [i for i in batch if i in layer1_ev]
    if cycle_speedups.ENABLED:
        keep_floors([problems[i] for i in batch], [mus[i] for i in batch])
    second = solve_layer2_many([problems[i] for i in batch], [mus[i] for i in batch])
    lams_in = _project_lams(
        [problems[i] for i in batch], [mus[i] for i in batch],
        [res.x * mus[i] for i, res in zip(batch, second, strict=True)],
    )  # fmt: skip
    lams: dict[int, FloatArray] = {}
    statuses: dict[int, str] = {}
    for i, res, lam in zip(batch, second, lams_in, strict=True):
        problem, mu = problems[i], mus[i]
        if isinstance(lam, ProblemError):
            out[i] = lam
            continue
        note = ", no polish needed" if polish else ""
        status1 = f"layer1 {first[i].status} ({first[i].solves} solves{note})"
        if polish and _worth_polishing(problem, lam / mu, res):
            try:
                lam, ev, status2 = _layer2(problem, mu, polish)
            except ProblemError as exc:
                out[i] = exc
                continue
            out[i] = or_error(
                build_solution, problem, mu, lam, _solver_name(polish), f"{status1}; {status2}",
                layer1_ev=layer1_ev[i], final_ev=ev,
            )  # fmt: skip
            continue
        statuses[i] = f"{status1}; layer2 {res.status} ({res.solves} solves{note})"
        lams[i] = lam
    batch = list(lams)
    evs2 = evaluate_many(
        [problems[i] for i in batch], [mus[i] for i in batch], [lams[i] for i in batch]
    )
    final_ev: dict[int, Evaluation] = {}
    for i, ev in zip(batch, evs2, strict=True):
        try:
            _feasible(problems[i], mus[i], lams[i], ev)
            final_ev[i] = ev
        except ProblemError as exc:
            out[i] = exc
    batch = list(final_ev)
    built = _build_solutions(
        [problems[i] for i in batch], [mus[i] for i in batch], [lams[i] for i in batch],
        _solver_name(polish), [statuses[i] for i in batch],
        [layer1_ev[i] for i in batch], [final_ev[i] for i in batch],
    )  # fmt: skip
    for i, answer in zip(batch, built, strict=True):
        out[i] = answer
    answers = [r for r in out if r is not None]
    assert len(answers) == len(problems), "every port has an answer or its error"
    return answers


# Each port's projection and answer: port by port (the reference path), or all
# ports of one class count at once, bit for bit the same (models/optimize/stacked.py).
def _project_mus(
    problems: Sequence[PmqecnProblem], xs: Sequence[FloatArray]
) -> list[FloatArray | ProblemError]:
    if cycle_speedups.ENABLED:
        return project_mu_many(problems, xs)
    return [or_error(project_mu, p, p.Gamma * x) for p, x in zip(problems, xs, strict=True)]


def _project_lams(
    problems: Sequence[PmqecnProblem], mus: Sequence[FloatArray], lams: Sequence[FloatArray]
) -> list[FloatArray | ProblemError]:
    if cycle_speedups.ENABLED:
        return project_lam_many(problems, mus, lams)
    return [or_error(project_lam, *args) for args in zip(problems, mus, lams, strict=True)]


def _build_solutions(
    problems: Sequence[PmqecnProblem],
    mus: Sequence[FloatArray],
    lams: Sequence[FloatArray],
    solver: str,
    statuses: Sequence[str],
    layer1_evs: Sequence[Evaluation],
    final_evs: Sequence[Evaluation],
) -> list[PmqecnSolution | ProblemError]:
    if cycle_speedups.ENABLED:
        return build_solutions(problems, mus, lams, solver, statuses, layer1_evs, final_evs)
    return [
        or_error(build_solution, p, mu, lam, solver, s, layer1_ev=e1, final_ev=e2)
        for p, mu, lam, s, e1, e2 in zip(
            problems, mus, lams, statuses, layer1_evs, final_evs, strict=True
        )
    ]


def _solver_name(polish: bool) -> str:
    return "cvxpy-CLARABEL+SLSQP" if polish else "cvxpy-CLARABEL"


def solve(
    problem: PmqecnProblem, *, polish: bool = True, mu: Sequence[float] | None = None
) -> PmqecnSolution:
    """Both layers via cvxpy, each polished with SLSQP on the exact objective where that can help.

    The polish exists for where the stand-ins are loose (small N, rho near 1,
    the CCP jitter): there it gains up to ~10 % of the objective.  Where they
    are exact it would move the answer by ~1e-8 relative at the cost of most of
    the solve time, so it is skipped (see _worth_polishing; ``status`` says
    which).  ``polish=False`` never polishes.  Passing ``mu`` skips layer 1 and
    solves layer 2 for those service rates.
    """
    layer1_ev: Evaluation | None = None
    if mu is None:
        mu_star, layer1_ev, status1 = _layer1(problem, polish)
    else:
        mu_star, status1 = fixed_service_rates(problem, mu), "layer1 given"
    lam, final_ev, status2 = _layer2(problem, mu_star, polish)
    solver = "cvxpy-CLARABEL+SLSQP" if polish else "cvxpy-CLARABEL"
    return build_solution(
        problem,
        mu_star,
        lam,
        solver,
        f"{status1}; {status2}",
        layer1_ev=layer1_ev,
        final_ev=final_ev,
    )
