"""PMQECN control-plane optimisation (paper Algorithm 2): convex path and DE reference."""

from models.optimize.pmqecn import (
    DeSettings,
    PmqecnProblem,
    PmqecnSolution,
    ProblemError,
    QosKind,
    SolverError,
    exact_objective,
    solve,
    solve_de,
    thresholds_to_cells,
)

__all__ = [
    "DeSettings",
    "PmqecnProblem",
    "PmqecnSolution",
    "ProblemError",
    "QosKind",
    "SolverError",
    "exact_objective",
    "solve",
    "solve_de",
    "thresholds_to_cells",
]
