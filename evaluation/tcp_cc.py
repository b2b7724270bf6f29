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


@cache
def _ops_class() -> Any:
    """The cross-inherited class, made once per process (cppyy compiles a
    dispatcher for it)."""
    base = glue().PyCongestionOps

    class HostCongestionOps(base):  # type: ignore[misc, valid-type]
        def __init__(self, ns: Any, algorithm: HostAlgorithm, errors: list[BaseException]) -> None:
            super().__init__()
            self.ns, self.algorithm, self.errors = ns, algorithm, errors
            # Calls ns-3 made into Python (tests check the algorithm ran).
            self.calls = 0

        def GetName(self) -> str:
            return f"{self.algorithm.name} (Python)"

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

        def SsThreshBytes(self, tcb: Any, bytes_in_flight: int) -> int:
            self.calls += 1
            try:
                return self.algorithm.ssthresh_bytes(
                    tcb.m_segmentSize, int(bytes_in_flight), bool(self.last_ece)
                )
            except BaseException as exc:
                self._failed(exc)
                return int(tcb.m_segmentSize) * 2

        def _failed(self, exc: BaseException) -> None:
            if not self.errors:
                self.errors.append(exc)
            self.ns.Simulator.Stop()

    return HostCongestionOps


def host_ops(ns: Any, algorithm: HostAlgorithm, errors: list[BaseException]) -> Any:
    """A `TcpCongestionOps` running `algorithm`; exceptions go to `errors`."""
    return _ops_class()(ns, algorithm, errors)
