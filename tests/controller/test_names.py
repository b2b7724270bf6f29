# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The controller's names module against the reference model (which the parity
test holds to the P4, and build_p4.py to the compiler's bf-rt.json)."""

from __future__ import annotations

from bfrt_controller.pmqecn import names as n
from hw_profiles import load_profile
from models.switch.registry import make_model


def test_every_pmqecn_name_exists_in_the_model() -> None:
    model = make_model("pmqecn", load_profile("tofino"))
    hooks = {n.QUEUE_MD_OVERRIDE, n.INGRESS_TSTAMP_OVERRIDE}
    assert hooks <= set(model.p4.tables)
    assert set(n.ALL_TABLES) == set(model.p4.tables) - hooks
    assert set(n.ALL_REGISTERS) == set(model.p4.registers)
    assert set(n.ALL_COUNTERS) == set(model.p4.counters)
    actions = {a for t in model.p4.tables.values() for a in t.actions}
    for action in (n.ROUTE, n.TRUSTED, n.SET_CLASS, n.WRR, n.SET_PRIORITY_QUEUE,
                   n.SET_THRESHOLD, n.LOG_ELAPSED, n.DRAIN, n.SET_RATES,
                   n.SET_FEEDBACK_SESSION):  # fmt: skip
        assert action in actions, action
    keys = {k for t in model.p4.tables.values() for k in t.keys}
    for key in (n.K_DST_ADDR, n.K_SRC_ADDR, n.K_DSCP, n.K_PROTOCOL, n.K_INGRESS_PORT,
                n.K_VQ_ID, n.K_WRR_LEVEL, n.K_CLASS_ID, n.K_BRIDGED_INGRESS_PORT,
                n.K_ELAPSED_TICKS, n.K_LOG_DRAIN):  # fmt: skip
        assert key in keys, key
