# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Baseline congestion-control algorithms the evaluation compares against.

Plain, deterministic, event-driven state machines with no simulator or wall
clock inside: time comes in as ``now_ns`` and randomness as an injected uniform
source, so an ns-3 (or any) harness can drive them and tests can replay them.

Switch side: DCQCN's RED/ECN marker, TCN's sojourn-time marker, the P4QCN
congestion point (feedback, PFC, threshold sizing).  Host side: the DCQCN
notification and reaction points and the P4QCN/QCN reaction point.  Each module
docstring lists its parameter defaults and their sources.
"""

from models.baselines._rp_base import RpStage
from models.baselines.dcqcn_np import DcqcnNotificationPoint
from models.baselines.dcqcn_rp import DcqcnReactionPoint, DcqcnRpParams
from models.baselines.p4qcn_cp import (
    P4qcnCongestionPoint,
    P4qcnCpParams,
    P4qcnThresholds,
    PfcAction,
    PfcGate,
    feedback_probability,
    p4qcn_thresholds,
)
from models.baselines.qcn_rp import QcnReactionPoint, QcnRpParams
from models.baselines.red_ecn import RedEcnMarker, RedEcnParams, marking_probability
from models.baselines.tcn import TcnMarker, tcn_threshold_ns

__all__ = [
    "DcqcnNotificationPoint",
    "DcqcnReactionPoint",
    "DcqcnRpParams",
    "P4qcnCongestionPoint",
    "P4qcnCpParams",
    "P4qcnThresholds",
    "PfcAction",
    "PfcGate",
    "QcnReactionPoint",
    "QcnRpParams",
    "RedEcnMarker",
    "RedEcnParams",
    "RpStage",
    "TcnMarker",
    "feedback_probability",
    "marking_probability",
    "p4qcn_thresholds",
    "tcn_threshold_ns",
]
