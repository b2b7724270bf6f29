# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN's thresholds for a switch (seed 003, section 3.2.2), in buffer cells.

PFC is the last resort, so each ingress queue (port and priority) must keep
room for what is in flight while a PAUSE takes effect; P4QCN must act
before PFC. With Q the switch buffer, n ports, 8 PFC priorities and
Q_flight the in-flight data of one link::

    Q_PFC    <= (Q - 8 n Q_flight) / (8 n)
    Q_P4QCN  <= Q_PFC - Q_flight
    Q_P4QCN  <  alpha (B - 8 n Q_flight) / (8 n (alpha + 1)),  alpha = 8

B is the same shared buffer as Q (the paper borrows the third bound from
DCQCN's shared-buffer setting, which is why it names it differently). Both
bounds on Q_P4QCN hold: the second is the paper's reason for the threshold
("PFC should not be triggered before P4QCN take effect": what is in flight
while P4QCN's feedback takes effect must fit between Q_P4QCN and Q_PFC),
the third its sizing for a shared buffer. Q_P4QCN is the shared-buffer
value clamped to Q_PFC - Q_flight (`clamped` says so and `lines()` names
both); when Q_PFC - Q_flight is below one cell no threshold satisfies both
and the inputs are refused. (Tofino 100G, 10 m of cable: 344 cells from
the shared-buffer bound, clamped to 216; at 100 m 219 against -66: refused.)

Q_flight = link rate x (cable delay + processing delay), the link's
bandwidth-delay product, with the cable delay taken both ways (the PAUSE
travels up the cable while the data already sent travels down it) at
5 ns per metre (light in fibre or copper at about 2/3 c), and the
processing delay the upstream's time to act on a PAUSE (an input; 1 us by
default, an assumption: the paper gives none). Rounded up to whole cells.

Q (buffer_cells), the cell size and n come from the chip's hardware
profile: n is the number of ports at the given speed, capacity / speed.
Every result is a whole number of cells: Q_PFC rounded down (<=), Q_P4QCN
the largest integer strictly below its bound. Inputs that leave no room
(a threshold below one cell) are refused with an error naming the input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hw_profiles import HwProfile

PFC_PRIORITIES = 8
SHARED_BUFFER_ALPHA = 8
CABLE_NS_PER_M = 5.0
DEFAULT_PROCESSING_NS = 1000.0
# Port speeds a Tofino MAC runs at.
PORT_SPEEDS_GBPS = (10, 25, 40, 50, 100, 200, 400)


class ThresholdError(ValueError):
    """Inputs that are invalid or leave no room; the message names the input."""


@dataclass(frozen=True)
class P4qcnThresholds:
    chip: str
    port_speed_gbps: int
    cable_m: float
    processing_ns: float
    n_ports: int
    buffer_cells: int
    cell_bytes: int
    q_flight_cells: int
    q_pfc_cells: int
    q_p4qcn_cells: int  # the smaller of the two bounds below
    q_p4qcn_shared_cells: int  # < alpha (Q - 8 n Q_flight) / (8 n (alpha + 1))
    q_p4qcn_pfc_bound_cells: int  # Q_PFC - Q_flight

    @property
    def clamped(self) -> bool:
        """The shared-buffer value would let PFC fire before P4QCN acts."""
        return self.q_p4qcn_shared_cells > self.q_p4qcn_pfc_bound_cells

    def lines(self) -> list[str]:
        """Human-readable report, one fact per line."""
        headroom = PFC_PRIORITIES * self.n_ports * self.q_flight_cells
        out = [
            f"chip {self.chip}: buffer Q = {self.buffer_cells} cells of {self.cell_bytes} B, "
            f"n = {self.n_ports} ports at {self.port_speed_gbps} Gb/s",
            f"Q_flight = {self.q_flight_cells} cells ({self.port_speed_gbps} Gb/s x "
            f"(2 x {self.cable_m:g} m x {CABLE_NS_PER_M:g} ns/m + {self.processing_ns:g} ns))",
            f"PFC headroom 8 n Q_flight = {headroom} cells",
            f"Q_PFC   = {self.q_pfc_cells} cells  (<= (Q - 8 n Q_flight) / 8n)",
            f"Q_P4QCN = {self.q_p4qcn_cells} cells  (<= Q_PFC - Q_flight = "
            f"{self.q_p4qcn_pfc_bound_cells})",
            f"  shared buffer: {self.q_p4qcn_shared_cells} cells  "
            f"(< {SHARED_BUFFER_ALPHA} (Q - 8 n Q_flight) / (8 n ({SHARED_BUFFER_ALPHA} + 1)))",
        ]
        if self.clamped:
            out.append(
                f"  clamped from {self.q_p4qcn_shared_cells} to Q_PFC - Q_flight "
                f"{self.q_p4qcn_pfc_bound_cells} (PFC must not fire first)"
            )
        return out


def _number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ThresholdError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def q_flight_cells(
    profile: HwProfile, port_speed_gbps: int, cable_m: float, processing_ns: float
) -> int:
    """One link's in-flight data while a PAUSE takes effect, in whole cells."""
    delay_ns = 2.0 * cable_m * CABLE_NS_PER_M + processing_ns
    in_flight_bytes = port_speed_gbps * delay_ns / 8.0  # Gb/s x ns = bits
    return math.ceil(in_flight_bytes / profile.cell_bytes)


def pfc_bound_cells(q_pfc_cells: int, q_flight_cells: int) -> int:
    """Q_PFC - Q_flight: the largest Q_P4QCN that leaves room below Q_PFC for
    what is in flight while P4QCN's feedback takes effect. The one place the
    bound is computed: `thresholds`, config checks and `set` all use it."""
    return q_pfc_cells - q_flight_cells


def pfc_bound_violation(q_p4qcn_cells: int, q_pfc_cells: int, q_flight_cells: int) -> str | None:
    """Why Q_P4QCN breaks Q_P4QCN <= Q_PFC - Q_flight, or None when it holds."""
    bound = pfc_bound_cells(q_pfc_cells, q_flight_cells)
    if q_p4qcn_cells <= bound:
        return None
    return (
        f"Q_P4QCN {q_p4qcn_cells} cells exceeds Q_PFC - Q_flight = {q_pfc_cells} - "
        f"{q_flight_cells} = {bound} cells: PFC would pause the link before P4QCN's "
        "feedback takes effect (seed 003, 3.2.2)"
    )


def p4qcn_thresholds(
    profile: HwProfile,
    port_speed_gbps: int,
    cable_m: float,
    processing_ns: float = DEFAULT_PROCESSING_NS,
    n_ports: int | None = None,
) -> P4qcnThresholds:
    """Q_PFC and Q_P4QCN for `profile` with every port at `port_speed_gbps`."""
    if isinstance(port_speed_gbps, bool) or port_speed_gbps not in PORT_SPEEDS_GBPS:
        raise ThresholdError(
            f"port_speed_gbps must be one of {', '.join(map(str, PORT_SPEEDS_GBPS))}, "
            f"got {port_speed_gbps!r}"
        )
    if port_speed_gbps > profile.max_port_gbps:
        raise ThresholdError(
            f"port_speed_gbps {port_speed_gbps} exceeds {profile.chip}'s fastest port "
            f"({profile.max_port_gbps} Gb/s)"
        )
    cable = _number(cable_m, "cable_m")
    if cable < 0:
        raise ThresholdError(f"cable_m must be >= 0, got {cable_m!r}")
    processing = _number(processing_ns, "processing_ns")
    if processing < 0:
        raise ThresholdError(f"processing_ns must be >= 0, got {processing_ns!r}")
    most_ports = profile.capacity_gbps // port_speed_gbps
    if n_ports is None:
        n = most_ports
    else:
        if isinstance(n_ports, bool) or not isinstance(n_ports, int) or n_ports < 1:
            raise ThresholdError(f"n_ports must be a positive integer, got {n_ports!r}")
        if n_ports > most_ports:
            raise ThresholdError(
                f"n_ports {n_ports} exceeds {profile.chip}'s {most_ports} ports at "
                f"{port_speed_gbps} Gb/s"
            )
        n = n_ports
    flight = q_flight_cells(profile, port_speed_gbps, cable, processing)
    queues = PFC_PRIORITIES * n
    free = profile.buffer_cells - queues * flight
    what = (
        f"cable_m {cable:g} and processing_ns {processing:g} at port_speed_gbps "
        f"{port_speed_gbps} give Q_flight {flight} cells"
    )
    if free <= 0:
        raise ThresholdError(
            f"{what}; 8 x {n} ports x Q_flight = {queues * flight} cells is not below the "
            f"buffer ({profile.buffer_cells} cells): no room for PFC headroom"
        )
    q_pfc = free // queues
    a = SHARED_BUFFER_ALPHA
    # Largest integer strictly below a free / (queues (a + 1)).
    q_p4qcn = -(-(a * free) // (queues * (a + 1))) - 1
    if q_pfc < 1 or q_p4qcn < 1:
        raise ThresholdError(
            f"{what}; the buffer left after PFC headroom ({free} cells over {queues} "
            f"queues) gives Q_PFC {q_pfc} and Q_P4QCN {q_p4qcn} cells: no room for a threshold"
        )
    pfc_bound = pfc_bound_cells(q_pfc, flight)
    if pfc_bound < 1:
        raise ThresholdError(
            f"{what}; Q_P4QCN {q_p4qcn} cells (shared-buffer bound) against Q_PFC - Q_flight "
            f"= {q_pfc} - {flight} = {pfc_bound} cells: no threshold lets P4QCN act before PFC "
            "fires (shorter cables, fewer ports or a faster PAUSE)"
        )
    return P4qcnThresholds(
        chip=profile.chip,
        port_speed_gbps=port_speed_gbps,
        cable_m=cable,
        processing_ns=processing,
        n_ports=n,
        buffer_cells=profile.buffer_cells,
        cell_bytes=profile.cell_bytes,
        q_flight_cells=flight,
        q_pfc_cells=q_pfc,
        q_p4qcn_cells=min(q_p4qcn, pfc_bound),
        q_p4qcn_shared_cells=q_p4qcn,
        q_p4qcn_pfc_bound_cells=pfc_bound,
    )
