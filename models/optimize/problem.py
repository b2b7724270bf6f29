"""Validated input of the PMQECN two-layer optimisation (paper Algorithm 2, Fig. 3)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from numbers import Integral, Real

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


class ProblemError(ValueError):
    """The problem is meaningless or infeasible; the message starts with the field name."""


class SolverError(ProblemError):
    """A solver could not produce an answer that satisfies the constraints."""


class QosKind(Enum):
    """Which objective pair of the paper a class is optimised for."""

    A = "A"  # delay + residual bandwidth, Eq. 11 (voice)
    B = "B"  # delay + jitter, Eq. 12 (video)
    C = "C"  # delay + loss, Eq. 13 (file transfer)


# lambda* is kept inside [EPS, 1 - EPS] * mu*: the paper's 0 < lambda* < mu* is
# open, and an optimiser needs a closed set to return a point of.
RHO_EPS = 1e-6
# When C3/C6 squeeze the floor on lambda* (see PmqecnProblem.target_floor), it is
# scaled to this fraction of the cap rather than onto it, so projecting onto
# sum(lambda*) <= cap (which may shave a few ulps) cannot push a point below it.
_FLOOR_CAP_MARGIN = 1e-9


def _real(value: object, name: str, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ProblemError(f"{name} must be a real number, got {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise ProblemError(f"{name} must be finite, got {value!r}")
    if positive and result <= 0.0:
        raise ProblemError(f"{name} must be > 0, got {value!r}")
    if not positive and result < 0.0:
        raise ProblemError(f"{name} must be >= 0, got {value!r}")
    return result


def _integer(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ProblemError(f"{name} must be an integer, got {value!r}")
    if int(value) < minimum:
        raise ProblemError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def _kind(value: object, name: str) -> QosKind:
    if isinstance(value, QosKind):
        return value
    try:
        return QosKind(value)
    except ValueError:
        raise ProblemError(f"{name} must be one of 'A', 'B', 'C', got {value!r}") from None


@dataclass(frozen=True)
class PmqecnProblem:
    """One control-plane snapshot (Algorithm 2's inputs), every rate in one unit.

    ``N`` is each queue's capacity and the bound on the total expected queue
    (C2), in packets.  ``Lambda``, ``Gamma``, ``lambdas`` and the per-link
    bandwidth ``C`` are packet rates (convert bits/s with the mean packet size
    first); ``n`` links.  ``W[i]`` is class i's measured queueing delay in the
    rates' time unit; only class B's jitter uses it, but all must be valid.
    ``weights[i] = (delay_weight, qos_weight)`` weight class i's two objectives
    (Eqs. 11-13); Eq. 14's outer weight mu_i/Gamma applies on top
    (see :mod:`models.optimize.objective`).

    ``min_target_fraction`` (f, 0 < f <= 1) bounds one cycle's cut:
    ``lambda*_i >= f * min(lambda_i, mu*_i (1 - RHO_EPS))``.  The paper's layer 2
    alone can answer lambda* ~ 0 (see :meth:`target_floor`); 0.5 is the
    "at most halve per feedback" step of QCN/DCQCN.
    """

    N: int
    Lambda: float
    Gamma: float
    C: float
    n: int
    lambdas: tuple[float, ...]
    W: tuple[float, ...]
    kinds: tuple[QosKind, ...]
    weights: tuple[tuple[float, float], ...]
    min_target_fraction: float = 0.5

    def __init__(
        self,
        *,
        N: int,
        Lambda: float,
        Gamma: float,
        C: float,
        n: int,
        lambdas: Sequence[float],
        W: Sequence[float],
        kinds: Sequence[QosKind | str],
        weights: Sequence[tuple[float, float]],
        min_target_fraction: float = 0.5,
    ) -> None:
        # Frozen dataclass with a validating constructor: every instance that
        # exists is a meaningful problem, so solvers never re-check.
        setter = object.__setattr__
        setter(self, "N", _integer(N, "N", 2))
        setter(self, "Lambda", _real(Lambda, "Lambda", positive=True))
        setter(self, "Gamma", _real(Gamma, "Gamma", positive=True))
        setter(self, "C", _real(C, "C", positive=True))
        setter(self, "n", _integer(n, "n", 1))
        lams = self._sequence(lambdas, "lambdas")
        if not lams:
            raise ProblemError("lambdas must name at least one class")
        k = len(lams)
        w_meas = self._sequence(W, "W", k)
        kind_list = self._sequence(kinds, "kinds", k)
        weight_list = self._sequence(weights, "weights", k)
        setter(
            self,
            "lambdas",
            tuple(_real(v, f"lambdas[{i}]", positive=True) for i, v in enumerate(lams)),
        )
        setter(self, "W", tuple(_real(v, f"W[{i}]", positive=False) for i, v in enumerate(w_meas)))
        setter(self, "kinds", tuple(_kind(v, f"kinds[{i}]") for i, v in enumerate(kind_list)))
        setter(self, "weights", tuple(self._weight(v, i) for i, v in enumerate(weight_list)))
        fraction = _real(min_target_fraction, "min_target_fraction", positive=True)
        if fraction > 1.0:
            raise ProblemError(
                f"min_target_fraction must be in (0, 1], got {min_target_fraction!r}: "
                "a floor above the measured rate would raise lambda* beyond what arrives"
            )
        setter(self, "min_target_fraction", fraction)
        self._check_load()

    @staticmethod
    def _sequence(value: object, name: str, length: int | None = None) -> list[object]:
        if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
            raise ProblemError(f"{name} must be a sequence, got {type(value).__name__}")
        items = list(value)
        if length is not None and len(items) != length:
            raise ProblemError(f"{name} has {len(items)} entries but lambdas has {length}")
        return items

    @staticmethod
    def _weight(value: object, index: int) -> tuple[float, float]:
        name = f"weights[{index}]"
        if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
            raise ProblemError(f"{name} must be a (delay, qos) pair, got {value!r}")
        pair = list(value)
        if len(pair) != 2:
            raise ProblemError(f"{name} must be a (delay, qos) pair, got {value!r}")
        delay = _real(pair[0], f"{name}[0]", positive=False)
        qos = _real(pair[1], f"{name}[1]", positive=False)
        if delay == 0.0 and qos == 0.0:
            raise ProblemError(f"{name} must not be all zero: the class would have no objective")
        return delay, qos

    def _check_load(self) -> None:
        total = sum(self.lambdas)
        # RHO_EPS margin: each queue needs mu_i >= lambda_i / (1 - RHO_EPS).
        if total >= self.Gamma * (1.0 - RHO_EPS):
            raise ProblemError(
                f"Gamma ({self.Gamma}) must exceed the total measured arrival rate sum(lambdas) "
                f"= {total}: otherwise no split of Gamma gives every queue mu_i > lambda_i (C4)"
            )
        if total > self.n * self.C:
            raise ProblemError(
                f"C: the links carry n*C = {self.n * self.C} "
                f"but sum(lambdas) = {total} arrives (C6)"
            )
        # The smallest total M/M/1 queue over all splits of Gamma is
        # (sum sqrt(lambda_i))^2 / (Gamma - sum lambda_i) (Lagrange on C5).  The
        # convex layer bounds C2 by M/M/1 queues (an upper bound on M/M/1/N), so
        # this must fit in N or the convex layer 1 has no feasible point at all.
        bound = sum(math.sqrt(v) for v in self.lambdas) ** 2 / (self.Gamma - total)
        if bound >= self.N:
            raise ProblemError(
                f"N ({self.N}) is too small for the load: at the best split of Gamma the "
                f"M/M/1 queues still total {bound:.4g} packets (C2); raise N or Gamma"
            )

    @property
    def k(self) -> int:
        """Number of classes (queues)."""
        return len(self.lambdas)

    @property
    def lambdas_array(self) -> FloatArray:
        return np.asarray(self.lambdas, dtype=np.float64)

    @property
    def target_cap(self) -> float:
        """Upper bound on sum(lambda*): C3 (Lambda) and the throughput reading of C6 (n C)."""
        return min(self.Lambda, self.n * self.C)

    def target_floor(self, mu: FloatArray) -> FloatArray:
        """Lower bound on lambda* for service rates ``mu`` (shape (k,)); every solver obeys it.

        Layer 2 minimises delay plus a second objective for each class, and for
        some classes (C always: delay + loss; A when the residual-bandwidth
        weight is small) both fall monotonically as lambda* falls, so its
        optimum is lambda* -> 0.  Fed back as lambda*/lambda (Eq. 15), that
        tells the source to stop sending.  The floor caps one cycle's cut at
        the fraction f = min_target_fraction of the current rate (or of what
        mu* can serve), as QCN/DCQCN bound one feedback's cut; repeated cycles
        can still bring a rate down, but no single answer can zero it.

        RHO_EPS * mu stays the bound where it is higher.  C3/C6 (sum lambda*
        <= min(Lambda, n C)) are the paper's hard constraints, so when the
        floors alone would exceed that cap they are scaled down to fit it.
        """
        floor = self.min_target_fraction * np.minimum(self.lambdas_array, mu * (1.0 - RHO_EPS))
        floor = np.maximum(floor, RHO_EPS * mu)
        cap = self.target_cap * (1.0 - _FLOOR_CAP_MARGIN)
        total = float(floor.sum())
        if total > cap:
            floor = floor * (cap / total)
        return floor

    def mask(self, kind: QosKind) -> npt.NDArray[np.bool_]:
        return np.array([k is kind for k in self.kinds])

    def weight_arrays(self) -> tuple[FloatArray, FloatArray]:
        """(delay weights, qos weights) as arrays."""
        w = np.asarray(self.weights, dtype=np.float64)
        return w[:, 0], w[:, 1]
