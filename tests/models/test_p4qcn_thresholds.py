# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN's threshold calculator (seed 003, section 3.2.2) on cases worked by hand."""

from __future__ import annotations

import pytest

from hw_profiles import load_profile
from models.p4qcn_thresholds import ThresholdError, p4qcn_thresholds, q_flight_cells

TOFINO = load_profile("tofino")
TOFINO2 = load_profile("tofino2")


def test_tofino_100g_10m_is_clamped_to_q_pfc_minus_q_flight() -> None:
    # Q_flight: 100 Gb/s x (2 x 10 m x 5 ns/m + 1000 ns) = 100 x 1100 / 8 = 13750 B
    # = 171.9 -> 172 cells of 80 B. n = 64; 8 n = 512; 286720 - 512 x 172 = 198656.
    # Q_PFC = 198656 / 512 = 388; the shared-buffer bound 8 x 198656 / (512 x 9)
    # = 344.9 -> 344, but Q_P4QCN <= Q_PFC - Q_flight = 388 - 172 = 216.
    t = p4qcn_thresholds(TOFINO, 100, 10.0)
    assert (t.q_flight_cells, t.q_pfc_cells, t.q_p4qcn_shared_cells) == (172, 388, 344)
    assert (t.q_p4qcn_pfc_bound_cells, t.q_p4qcn_cells, t.clamped) == (216, 216, True)
    report = "\n".join(t.lines())
    assert "clamped from 344 to Q_PFC - Q_flight 216" in report


def test_tofino_100g_100m_refused_naming_both_values() -> None:
    # Q_flight 2 x 100 x 5 + 1000 = 2000 ns: 25000 B -> 313 cells; free
    # 286720 - 512 x 313 = 126464; Q_PFC 247, shared bound 219.56 -> 219;
    # Q_PFC - Q_flight = 247 - 313 = -66: no threshold acts before PFC.
    with pytest.raises(ThresholdError, match=r"Q_P4QCN 219 cells .* 247 - 313 = -66 cells"):
        p4qcn_thresholds(TOFINO, 100, 100.0)


def test_tofino2_400g_3m_half_microsecond() -> None:
    # Q_flight: 400 x (30 + 500) / 8 = 26500 B = 150.6 -> 151 cells of 176 B.
    # n = 12800 / 400 = 32; 8 n = 256; 393216 - 256 x 151 = 354560.
    # Q_PFC = 354560 / 256 = 1385; Q_P4QCN < 8 x 354560 / (256 x 9) = 1231.1 -> 1231.
    t = p4qcn_thresholds(TOFINO2, 400, 3.0, processing_ns=500.0)
    assert (t.n_ports, t.q_flight_cells, t.q_pfc_cells, t.q_p4qcn_cells) == (32, 151, 1385, 1231)


def test_strict_bound_at_an_integer_takes_one_less() -> None:
    # 10 ports, no delay: Q_flight 0, 8 n = 80, free = 286720.
    # 8 x 286720 / (80 x 9) = 3185.78 -> 3185; Q_PFC = 286720 / 80 = 3584.
    t = p4qcn_thresholds(TOFINO, 100, 0.0, processing_ns=0.0, n_ports=10)
    assert (t.q_flight_cells, t.q_pfc_cells, t.q_p4qcn_cells) == (0, 3584, 3185)
    # 9 ports: free 286720, 8 x 286720 / (72 x 9) = 3539.75 -> 3539 (not an integer);
    # 64 ports, Q_flight 0: 8 x 286720 / (512 x 9) = 497.78 -> 497.
    assert p4qcn_thresholds(TOFINO, 100, 0.0, 0.0, n_ports=64).q_p4qcn_cells == 497


def test_q_flight_rounds_up_to_whole_cells() -> None:
    # 10 Gb/s x 64 ns / 8 = 80 B: exactly one cell; one more ns is a second cell.
    assert q_flight_cells(TOFINO, 10, 0.0, 64.0) == 1
    assert q_flight_cells(TOFINO, 10, 0.0, 65.0) == 2


def test_refuses_a_cable_that_leaves_no_headroom() -> None:
    # 10 km at 100 Gb/s: Q_flight = 100 x (100000 + 1000) / 8 / 80 = 15782 cells,
    # 512 x 15782 > 286720.
    with pytest.raises(ThresholdError, match="cable_m 10000"):
        p4qcn_thresholds(TOFINO, 100, 10_000.0)


def test_refuses_inputs_that_leave_less_than_one_cell() -> None:
    # 8 n Q_flight just below Q: free > 0 but Q_P4QCN < 1 cell.
    # 64 ports, Q_flight 559 cells (100 x 3577.6 ns / 8 / 80 = 559): 512 x 559 = 286208,
    # free = 512, Q_PFC = 1, Q_P4QCN < 8 x 512 / 4608 = 0.89 -> 0: refused.
    with pytest.raises(ThresholdError, match="no room for a threshold"):
        p4qcn_thresholds(TOFINO, 100, 0.0, processing_ns=3577.6)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"port_speed_gbps": 30}, "port_speed_gbps"),
        ({"port_speed_gbps": 400}, "port_speed_gbps"),  # Tofino's fastest port is 100G
        ({"cable_m": -1.0}, "cable_m"),
        ({"cable_m": float("nan")}, "cable_m"),
        ({"processing_ns": -5.0}, "processing_ns"),
        ({"n_ports": 0}, "n_ports"),
        ({"n_ports": 65}, "n_ports"),
    ],
)
def test_refuses_bad_input_naming_it(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"port_speed_gbps": 100, "cable_m": 10.0}
    args.update(kwargs)
    with pytest.raises(ThresholdError, match=field):
        p4qcn_thresholds(TOFINO, **args)  # type: ignore[arg-type]
