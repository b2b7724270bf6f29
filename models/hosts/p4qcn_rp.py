# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN reaction point (seed 003, Eqs. 2-4): the host side of the P4QCN
mechanism (tna/p4qcn/).

There is one implementation, the QCN reaction point of
models/baselines/qcn_rp.py: P4QCN as a mechanism and P4QCN as the baseline
the other mechanisms are compared with run the same host code, so a fix to
one is a fix to both and a comparison never pits two readings of Eqs. 2-4
against each other. This module names it from the host side; the
evaluation harness builds it for the `p4qcn` scheme
(evaluation/schemes.py) and tests/models/test_p4qcn_rp.py holds the two
names to the one class.

The paper's values are the defaults: beta = 1 (Eq. 2 halves the rate),
N = 5 fast-recovery cycles (Eq. 3), R_AI = 5 Mb/s (Eq. 4).
"""

from models.baselines.qcn_rp import QcnReactionPoint, QcnRpParams

P4qcnReactionPoint = QcnReactionPoint
P4qcnRpParams = QcnRpParams

__all__ = ["P4qcnReactionPoint", "P4qcnRpParams"]
