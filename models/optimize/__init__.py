"""PMQECN control-plane optimisation (paper Algorithm 2): convex path and DE reference."""

from models.optimize.pmqecn import (
    THRESHOLD_RULES,
    DeSettings,
    PmqecnProblem,
    PmqecnSolution,
    ProblemError,
    QosKind,
    SolverError,
    ThresholdRule,
    exact_objective,
    share_targets,
    solve,
    solve_de,
    thresholds_to_cells,
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
    "exact_objective",
    "share_targets",
    "solve",
    "solve_de",
    "thresholds_to_cells",
]
