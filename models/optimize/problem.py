# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Validated input of the PMQECN two-layer optimisation (paper Algorithm 2, Fig. 3)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from numbers import Integral, Real
from typing import cast

import numpy as np
import numpy.typing as npt

from models import cycle_speedups

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
# When the floor on lambda* must be cut to fit the cap (see
# PmqecnProblem.target_floor), it is fitted to this fraction of the cap rather
# than onto it, so projecting onto sum(lambda*) <= cap (which may shave a few
# ulps) cannot push a point below it.
_FLOOR_CAP_MARGIN = 1e-9
# A floor summing to within this of the cap leaves layer 2 no room to move.
FLOOR_FILLS_CAP = 1e-8
# The load a cut steers a port to. The sources' own increase refills the rest
# between cuts, so this is not the utilisation they reach: measured in
# docs/evaluation.md ("Target utilisation"), u = 0.6 keeps 95-97 % of a
# 10 Mb/s link at a mean queue of about one packet and 85 % of a 25 Gb/s
# one, where 0.9 kept more of the link at three to five times the queue.
DEFAULT_TARGET_UTILISATION = 0.6
# However long the standing queue, the targets keep this share of u Gamma: the
# queue then drains at up to 3/4 of the port's rate, and no port's targets
# collapse to ~0 on one interval's measurement.
MIN_CAP_SHARE = 0.25


def _real(value: object, name: str, *, positive: bool) -> float:
    if isinstance(value, float):
        # The common case first: a control cycle checks thousands of floats,
        # and the Real ABC check below costs more than everything else here.
        result = float(value)  # a numpy float64 becomes a plain float, as below
    elif isinstance(value, bool) or not isinstance(value, Real):
        raise ProblemError(f"{name} must be a real number, got {value!r}")
    else:
        result = float(value)
    if not math.isfinite(result):
        raise ProblemError(f"{name} must be finite, got {value!r}")
    if positive and result <= 0.0:
        raise ProblemError(f"{name} must be > 0, got {value!r}")
    if not positive and result < 0.0:
        raise ProblemError(f"{name} must be >= 0, got {value!r}")
    return result


def _reals(values: list[object], name: str, *, positive: bool) -> tuple[float, ...]:
    """_real of each of `values`, named `name[i]` only in an error: a full
    switch's cycle checks a thousand, and formats no name unless one is bad."""
    if values and set(map(type, values)) == {float}:
        out = cast(tuple[float, ...], tuple(values))
        low = min(out)
        # A NaN or an infinity makes the sum one (an overflowing sum of finite
        # values only sends them down the checks below).
        if math.isfinite(sum(out)) and (low > 0.0 if positive else low >= 0.0):
            return out
    return tuple(_real(v, f"{name}[{i}]", positive=positive) for i, v in enumerate(values))


def _weights(values: list[object]) -> tuple[tuple[float, float], ...]:
    """PmqecnProblem._weight of each (delay, qos) pair; pairs of plain finite
    floats, neither negative nor both zero (every pair a config makes), are
    taken as they are."""
    # A port's classes mostly share one or two pairs: each distinct pair checked once.
    if all(
        type(v) is tuple
        and len(v) == 2
        and type(v[0]) is float
        and type(v[1]) is float
        and 0.0 <= v[0] < math.inf
        and 0.0 <= v[1] < math.inf
        and (v[0] > 0.0 or v[1] > 0.0)
        for v in _distinct(values)
    ):
        return cast(tuple[tuple[float, float], ...], tuple(values))
    return tuple(PmqecnProblem._weight(v, i) for i, v in enumerate(values))


def _distinct(values: list[object]) -> Iterable[object]:
    try:
        return set(values)
    except TypeError:  # an unhashable member: each checked
        return values


def _integer(value: object, name: str, minimum: int) -> int:
    if type(value) is int and value >= minimum:
        return value
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ProblemError(f"{name} must be an integer, got {value!r}")
    if int(value) < minimum:
        raise ProblemError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


_KIND_OF = {k.value: k for k in QosKind}


def _kind(value: object, name: str) -> QosKind:
    if isinstance(value, QosKind):
        return value
    # A config's "A" (a full switch's cycle builds 512): what QosKind(value) finds.
    if type(value) is str and value in _KIND_OF:
        return _KIND_OF[value]
    try:
        return QosKind(value)
    except ValueError:
        raise ProblemError(f"{name} must be one of 'A', 'B', 'C', got {value!r}") from None


def check_utilisation(value: object, name: str = "target_utilisation") -> float:
    """A target utilisation u in (0, 1]: above 1 a port could not carry its targets."""
    u = _real(value, name, positive=True)
    if u > 1.0:
        raise ProblemError(f"{name} must be in (0, 1], got {value!r}: a port cannot carry more")
    return u


def port_target(gamma: float, utilisation: float, backlog_drain: float = 0.0) -> float:
    """What the targets of a port with service rate ``gamma`` may total.

    u Gamma, less what clearing the standing queue within one control
    interval needs beyond the 1 - u headroom: min(u Gamma, Gamma - drain),
    ``backlog_drain`` being that queue over the interval (a rate).  Never
    below MIN_CAP_SHARE u Gamma.
    """
    steady = utilisation * gamma
    return max(min(steady, gamma - backlog_drain), MIN_CAP_SHARE * steady)


def share_targets(demands: npt.ArrayLike, weights: npt.ArrayLike, capacity: float) -> FloatArray:
    """Each class's share of ``capacity``: weighted max-min fair (water-filling).

    When the demands fit (sum <= capacity) every class keeps its demand.
    Otherwise a class whose demand is below its weighted share
    ``capacity * w_i / sum(w)`` keeps its demand, the capacity it leaves is
    shared by the others in proportion to their weights, and so on: the heavy
    classes end on a common level ``theta * w_i`` and the total is exactly
    ``capacity``.  So a light class is never cut for a heavy one, and every
    cut class's target falls, and its cut deepens, as any demand grows.
    """
    d = np.asarray(demands, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if d.shape != w.shape or d.ndim != 1:
        raise ProblemError(f"weights: shape {w.shape} does not match demands {d.shape}")
    if not (np.isfinite(d).all() and (d >= 0.0).all()):
        raise ProblemError(f"demands must be finite and >= 0, got {d.tolist()}")
    if not (np.isfinite(w).all() and (w > 0.0).all()):
        raise ProblemError(f"weights must be finite and > 0, got {w.tolist()}")
    cap = _real(capacity, "capacity", positive=False)
    if float(d.sum()) <= cap:
        return d.copy()
    out = np.empty_like(d)
    room, weight_left = cap, float(w.sum())
    # Satisfy classes in order of demand per unit weight while they fit under
    # the current level; the rest share what is left by weight.
    order = np.argsort(d / w, kind="stable")
    for n_done, i in enumerate(order):
        if d[i] * weight_left <= room * w[i]:
            out[i] = d[i]
            room -= d[i]
            weight_left -= w[i]
            continue
        rest = order[n_done:]
        out[rest] = w[rest] * (room / weight_left)
        break
    return out


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

    ``target_utilisation`` (u, 0 < u <= 1) is the load the port is steered
    to: no class's lambda* is below its share of u * Gamma (see
    :meth:`target_floor` and :func:`share_targets`), which replaces the
    paper's layer 2 answer of lambda* -> 0 (see :mod:`models.optimize.pmqecn`).
    It also joins C3 and C6 in capping sum(lambda*) (:attr:`target_cap`).
    ``backlog_drain`` (>= 0, a rate in the lambdas' unit) is the standing
    queue divided by the control interval: what draining it within one
    interval takes from the port (:func:`port_target`); 0 for no queue.
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
    target_utilisation: float = DEFAULT_TARGET_UTILISATION
    backlog_drain: float = 0.0

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
        target_utilisation: float = DEFAULT_TARGET_UTILISATION,
        backlog_drain: float = 0.0,
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
        setter(self, "lambdas", _reals(lams, "lambdas", positive=True))
        setter(self, "W", _reals(w_meas, "W", positive=False))
        if all(type(v) is QosKind for v in kind_list):
            setter(self, "kinds", tuple(kind_list))
        elif set(map(type, kind_list)) == {str} and _KIND_OF.keys() >= set(kind_list):
            # A config's "A", "B", "C" (a full switch's cycle builds 512).
            setter(self, "kinds", tuple(_KIND_OF[v] for v in kind_list))  # type: ignore[index]
        else:
            setter(self, "kinds", tuple(_kind(v, f"kinds[{i}]") for i, v in enumerate(kind_list)))
        setter(self, "weights", _weights(weight_list))
        setter(self, "target_utilisation", check_utilisation(target_utilisation))
        setter(self, "backlog_drain", _real(backlog_drain, "backlog_drain", positive=False))
        self._check_load()

    @staticmethod
    def _sequence(value: object, name: str, length: int | None = None) -> list[object]:
        # list and tuple first: the Sequence ABC check is the slow part.
        if type(value) not in (list, tuple) and (
            isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray)
        ):
            raise ProblemError(f"{name} must be a sequence, got {type(value).__name__}")
        items = list(cast(Sequence[object], value))
        if length is not None and len(items) != length:
            raise ProblemError(f"{name} has {len(items)} entries but lambdas has {length}")
        return items

    @staticmethod
    def _weight(value: object, index: int) -> tuple[float, float]:
        name = f"weights[{index}]"
        # tuple/list first: the Sequence ABC check is the slow part of a control cycle.
        if not isinstance(value, tuple | list) and (
            isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray)
        ):
            raise ProblemError(f"{name} must be a (delay, qos) pair, got {value!r}")
        pair = list(value)  # type: ignore[call-overload]
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
        bound = sum(map(math.sqrt, self.lambdas)) ** 2 / (self.Gamma - total)
        if bound >= self.N:
            raise ProblemError(
                f"N ({self.N}) is too small for the load: at the best split of Gamma the "
                f"M/M/1 queues still total {bound:.4g} packets (C2); raise N or Gamma"
            )

    @property
    def k(self) -> int:
        """Number of classes (queues)."""
        return len(self.lambdas)

    def _frozen(self, name: str, make: Callable[[], FloatArray]) -> FloatArray:
        """An array derived from the (frozen) problem, made once and
        read-only: a full switch's cycle asked for each a dozen times per
        port. Read-only, a caller that would change it in place fails
        instead of changing every later caller's copy."""
        if not cycle_speedups.ENABLED:
            return make()
        got = self.__dict__.get(name)
        if got is None:
            got = make()
            got.flags.writeable = False
            self.__dict__[name] = got
        return got

    @property
    def lambdas_array(self) -> FloatArray:
        return self._frozen("_lambdas", lambda: np.asarray(self.lambdas, dtype=np.float64))

    @property
    def target_cap(self) -> float:
        """Upper bound on sum(lambda*): C3 (Lambda), the throughput reading of C6
        (n C) and the port's target (u Gamma, less any backlog drain)."""
        port = port_target(self.Gamma, self.target_utilisation, self.backlog_drain)
        return min(self.Lambda, self.n * self.C, port)

    def target_floor(self, mu: FloatArray) -> FloatArray:
        """Lower bound on lambda* for service rates ``mu`` (shape (k,)); every solver obeys it.

        Layer 2 alone answers lambda* -> 0 for most classes (derivation in
        :mod:`models.optimize.pmqecn`), so the floor carries the port's load:
        each class's share of the cap (u Gamma unless C3/C6 are tighter),
        weighted by mu* (:func:`share_targets`).  A port carrying no more than
        the cap gives every class lambda* >= lambda (no cut); a busier one cuts
        the classes above their share, to a total equal to the cap.  Within a
        class's share layer 2 may still raise lambda*, never lower it.
        """
        if not cycle_speedups.ENABLED:
            return self._target_floor(mu)
        # Layer 2 and the projection of its answer ask for the same mu's
        # floor (a water-filling when the port is over its cap): kept per
        # problem, a copy handed out.
        at = np.asarray(mu, dtype=np.float64).tobytes()
        floors: dict[bytes, FloatArray] = self.__dict__.setdefault("_floors", {})
        floor = floors.get(at)
        if floor is None:
            floor = floors[at] = self._target_floor(mu)
        return floor.copy()

    def keep_floor(self, mu: FloatArray, floor: FloatArray) -> None:
        """Take ``floor`` as target_floor(mu) from now on: models/optimize/stacked.py
        works out a full switch's floors at once, equal to _target_floor's."""
        if cycle_speedups.ENABLED:
            floors: dict[bytes, FloatArray] = self.__dict__.setdefault("_floors", {})
            floors[np.asarray(mu, dtype=np.float64).tobytes()] = floor

    def _target_floor(self, mu: FloatArray) -> FloatArray:
        lam = self.lambdas_array
        cap = self.target_cap
        if float(lam.sum()) <= cap:
            floor = lam.copy()
        else:
            floor = share_targets(lam, mu, cap * (1.0 - _FLOOR_CAP_MARGIN))
        # C4 (lambda* < mu*) and the open 0 < lambda*, as every solver's bounds.
        return floor.clip(RHO_EPS * mu, (1.0 - RHO_EPS) * mu)

    def mask(self, kind: QosKind) -> npt.NDArray[np.bool_]:
        return np.array([k is kind for k in self.kinds])

    def weight_arrays(self) -> tuple[FloatArray, FloatArray]:
        """(delay weights, qos weights) as arrays."""
        w = self.weights_matrix
        return w[:, 0], w[:, 1]

    @property
    def weights_matrix(self) -> FloatArray:
        """``weights`` as a (k, 2) array: (delay, qos) per class."""
        return self._frozen("_weights", lambda: np.asarray(self.weights, dtype=np.float64))

    @property
    def w_array(self) -> FloatArray:
        """``W`` as an array."""
        return self._frozen("_w", lambda: np.asarray(self.W, dtype=np.float64))
