# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The BFCC controller's names module against the reference model (which
tests/test_bfcc_model.py holds to the P4 source)."""

from __future__ import annotations

import pytest

from bfrt_controller.bfcc import names as n
from hw_profiles import load_profile
from models.switch.registry import make_model

HOOK_TABLES = {
    "SwitchEgress.queue_hook.queue_md_override",
    "SwitchEgress.recirc_queue_hook.queue_md_override",
}


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_every_bfcc_name_exists_in_the_model(chip: str) -> None:
    model = make_model("bfcc", load_profile(chip))
    assert set(n.ALL_TABLES) == set(model.p4.tables) - HOOK_TABLES
    assert set(n.ALL_REGISTERS) == set(model.p4.registers)
    assert set(n.ALL_COUNTERS) == set(model.p4.counters)
    actions = {a for t in model.p4.tables.values() for a in t.actions}
    assert set(n.ALL_ACTIONS) <= actions
    keys = {k for t in model.p4.tables.values() for k in t.keys}
    assert set(n.ALL_KEYS) <= keys


def test_action_parameters_are_the_ones_the_app_writes() -> None:
    model = make_model("bfcc", load_profile("tofino"))

    def params(table: str, action: str) -> set[str]:
        return set(dict(model.table(table).actions[action].params))

    assert params(n.REACTION_POINT, n.REACT) == {
        "high_qid",
        "low_qid",
        "bp_expiry_ns",
        "named_group_only",
    }
    assert params(n.RATE_THRESHOLD, n.SET_RATE_THRESHOLD) == {"rt_packets"}
    assert params(n.RECIRCULATION, n.RECIRCULATE) == {"session", "level_cells"}
    assert params(n.BP_REPLICATE, n.REPLICATE) == {"session", "pipes_left"}
    assert params(n.BP_REPLICATE, n.RELAY_REPLICA) == {"session"}
    assert params(n.CONGESTION_POINT, n.MONITOR) == {
        "cp_id",
        "congestion_threshold_cells",
        "t_min_ns",
        "t_max_ns",
        "window_packets",
        "refresh_mask",
    }
    assert params(n.BP_UPSTREAM, n.TO_UPSTREAM) == {"session_id", "src_mac", "dst_mac"}
    assert params(n.SENDER_GROUP, n.SET_GROUP) == {"group"}
    assert params(n.SENDER_NOTIFY, n.NOTIFY_SENDERS) == {"port", "src_mac", "dst_mac"}
    assert params(n.SENDER_NOTIFY, n.CONSUME) == set()
