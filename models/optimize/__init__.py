# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""PMQECN control-plane optimisation (paper Algorithm 2): convex path and DE reference.

The names below load on first use: the solver pulls in cvxpy and scipy
(about two seconds), which a `tofcc` command that only reads or writes
thresholds never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        solve_many,
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
    "solve_many",
    "thresholds_to_cells",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from models.optimize import pmqecn

        return getattr(pmqecn, name)
    raise AttributeError(f"module 'models.optimize' has no attribute {name!r}")
