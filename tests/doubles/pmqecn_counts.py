# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A PMQECN class's arrivals set on the model as its data plane counts them.

Ingress counts a classified packet twice, side by side: `class_counters`
(packets and bytes, read summed over the pipes) and its pipe's cell of
`class_arrivals` (wrapping packets), which the controller reads for
lambda_i and the pipe shares. A test that stands in for traffic by setting
the totals must set both, or the controller sees no arrivals."""

from __future__ import annotations

from models.switch.tna import TnaProgram

COUNTERS = "SwitchIngress.class_counters"
ARRIVALS = "SwitchIngress.class_arrivals"


def set_class_totals(model: TnaProgram, class_id: int, packets: int, nbytes: int) -> None:
    """`packets` and `nbytes` counted for the class so far, all in pipe 0."""
    model.counter(COUNTERS).write(class_id, packets, nbytes)
    arrivals = model.register(ARRIVALS)
    arrivals.put_pipes(class_id, [packets % (1 << 32)] + [0] * (arrivals.pipes - 1))
