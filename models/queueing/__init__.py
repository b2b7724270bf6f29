# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Queueing-theory models behind the PMQECN control plane (M/M/1/N per virtual queue)."""

from models.queueing.mm1n import (
    MM1NMetrics,
    c_rest,
    effective_arrival_rate,
    jitter,
    loss_rate,
    mm1n_metrics,
    p0,
    p_m,
    p_n,
    queue_length,
    sojourn_time,
)

__all__ = [
    "MM1NMetrics",
    "c_rest",
    "effective_arrival_rate",
    "jitter",
    "loss_rate",
    "mm1n_metrics",
    "p0",
    "p_m",
    "p_n",
    "queue_length",
    "sojourn_time",
]
