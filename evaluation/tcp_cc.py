# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A host congestion control written in Python (models/hosts) running inside
ns-3's TCP: a cppyy cross-inherited `TcpCongestionOps`.

ns-3 keeps loss detection, recovery and timeouts (TcpSocketBase); the
Python algorithm answers what `TcpCongestionOps` asks: every ACK's RTT
sample and ECN echo (PktsAcked; the echo from the flow's Rx trace, exact
per ACK), the window increase per ACK (IncreaseWindow) and the slow-start
threshold after congestion (GetSsThresh). The class derives from the C++
shim `tofcc_tcp::PyCongestionOps` (evaluation/tcp.py), not from
`ns3::TcpCongestionOps` itself: cppyy 3.5 cannot compile a Python
override of a method returning uint32_t (the shim's comment says why), so
GetSsThresh reaches Python as SsThreshBytes.

Lifetime: the socket holds the object through ns-3's `Ptr` (a reference
count on the C++ side), Python through the proxy. A Python-made object
starts with a count of one that no `Ptr` gives back, so ns-3 never deletes
it; Python does when the proxy goes, which must be after ns-3 has let go
(after `Simulator::Destroy`): `TcpNet` keeps the proxies for that long.
An exception inside a callback is kept, the simulation stopped, and the
exception raised after the run (cppyy would otherwise print it and hand
ns-3 a default value).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, Protocol

from models import speedups
from models.hosts.dadctcp import DaDctcpCc
from models.hosts.newreno import NewReno, Window

from .tcp_glue import glue


class HostAlgorithm(Protocol):
    """What a Python congestion control answers (models/hosts)."""

    name: str

    def packets_acked(self, w: Window, segments_acked: int, rtt_ns: int, ece: bool) -> None: ...

    def increase_window(self, w: Window, segments_acked: int) -> None: ...

    def ssthresh_bytes(
        self, segment_bytes: int, bytes_in_flight: int, ece: bool = False
    ) -> int: ...


# `cc` names of scenario flows that run a Python algorithm, and its maker.
PYTHON_CC: dict[str, Callable[[], HostAlgorithm]] = {
    "newreno-py": NewReno,
    "dadctcp-py": DaDctcpCc,
}


# What both classes below answer alike, given to each class body by name:
# cppyy compiles the overrides it finds in the class it derives, so a mixin
# base would leave SsThreshBytes abstract.


def _setup(self: Any, ns: Any, algorithm: HostAlgorithm, errors: list[BaseException]) -> None:
    self.ns, self.algorithm, self.errors = ns, algorithm, errors
    # Calls ns-3 made into Python (tests check the algorithm ran).
    self.calls = 0


def _get_name(self: Any) -> str:
    return f"{self.algorithm.name} (Python)"


def _ssthresh_bytes(self: Any, tcb: Any, bytes_in_flight: int) -> int:
    self.calls += 1
    try:
        return self.algorithm.ssthresh_bytes(
            tcb.m_segmentSize, int(bytes_in_flight), bool(self.last_ece)
        )
    except BaseException as exc:
        self._failed(exc)
        return int(tcb.m_segmentSize) * 2


def _failed(self: Any, exc: BaseException) -> None:
    if not self.errors:
        self.errors.append(exc)
    self.ns.Simulator.Stop()


@cache
def _ops_class() -> Any:
    """The cross-inherited class, made once per process (cppyy compiles a
    dispatcher for it): the reference, reading the window from the socket
    state ns-3 passes."""
    base = glue().PyCongestionOps

    class HostCongestionOps(base):  # type: ignore[misc, valid-type]
        GetName, SsThreshBytes, _failed = _get_name, _ssthresh_bytes, _failed

        def __init__(self, ns: Any, algorithm: HostAlgorithm, errors: list[BaseException]) -> None:
            super().__init__()
            _setup(self, ns, algorithm, errors)

        def IncreaseWindow(self, tcb: Any, segments_acked: int) -> None:
            self.calls += 1
            try:
                w = Window(tcb.m_cWnd.Get(), tcb.m_ssThresh.Get(), tcb.m_segmentSize)
                before = w.cwnd_bytes
                self.algorithm.increase_window(w, int(segments_acked))
                if w.cwnd_bytes != before:
                    tcb.m_cWnd.Set(w.cwnd_bytes)
            except BaseException as exc:
                self._failed(exc)

        def PktsAcked(self, tcb: Any, segments_acked: int, rtt: Any) -> None:
            self.calls += 1
            try:
                w = Window(tcb.m_cWnd.Get(), tcb.m_ssThresh.Get(), tcb.m_segmentSize)
                before = (w.cwnd_bytes, w.ssthresh_bytes)
                self.algorithm.packets_acked(
                    w, int(segments_acked), int(rtt.GetNanoSeconds()), bool(self.last_ece)
                )
                if (w.cwnd_bytes, w.ssthresh_bytes) != before:
                    tcb.m_cWnd.Set(w.cwnd_bytes)
                    tcb.m_ssThresh.Set(w.ssthresh_bytes)
            except BaseException as exc:
                self._failed(exc)

    return HostCongestionOps


_WINDOW_LIMIT = 1 << 32  # m_cWnd and m_ssThresh are uint32_t


def _window_numbers(w: Window) -> tuple[int, int]:
    """The window and threshold the algorithm left, refused (as setting them
    through the socket state refuses) unless each fits a uint32_t."""
    for name in ("cwnd_bytes", "ssthresh_bytes"):
        value = getattr(w, name)
        if type(value) is not int or not 0 <= value < _WINDOW_LIMIT:
            raise ValueError(f"{name} must be an integer in 0..2^32-1, got {value!r}")
    return w.cwnd_bytes, w.ssthresh_bytes


@cache
def _numbers_class() -> Any:
    """The same algorithm behind the shim's Acked and Increase, which ns-3's
    calls reach with the window as numbers (models/speedups.py on): the
    same calls of the algorithm with the same arguments, the same window
    set after."""
    base = glue().PyCongestionOps

    class HostCongestionNumbers(base):  # type: ignore[misc, valid-type]
        GetName, SsThreshBytes, _failed = _get_name, _ssthresh_bytes, _failed

        def __init__(self, ns: Any, algorithm: HostAlgorithm, errors: list[BaseException]) -> None:
            super().__init__()
            _setup(self, ns, algorithm, errors)
            self.numbers = True

        def Acked(
            self, cwnd: int, ssthresh: int, segment: int, acked: int, rtt_ns: int, ece: bool
        ) -> int:
            self.calls += 1
            try:
                w = Window(cwnd, ssthresh, segment)
                self.algorithm.packets_acked(w, acked, rtt_ns, ece)
                new_cwnd, new_ssthresh = _window_numbers(w)
                if new_ssthresh == ssthresh:
                    return new_cwnd
                self.out_ssthresh = new_ssthresh
                return -new_cwnd - 1
            except BaseException as exc:
                self._failed(exc)
                return cwnd

        def Increase(self, cwnd: int, ssthresh: int, segment: int, acked: int) -> int:
            self.calls += 1
            try:
                w = Window(cwnd, ssthresh, segment)
                self.algorithm.increase_window(w, acked)
                return _window_numbers(w)[0]
            except BaseException as exc:
                self._failed(exc)
                return cwnd

    return HostCongestionNumbers


def host_ops(ns: Any, algorithm: HostAlgorithm, errors: list[BaseException]) -> Any:
    """A `TcpCongestionOps` running `algorithm`; exceptions go to `errors`."""
    return (_numbers_class() if speedups.ENABLED else _ops_class())(ns, algorithm, errors)
