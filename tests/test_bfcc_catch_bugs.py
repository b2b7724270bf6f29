# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The BFCC vectors must be able to fail: break the model on purpose and watch them catch it."""

from __future__ import annotations

import pytest

from hw_profiles import load_profile
from models.switch import bfcc as bfcc_model
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file
from models.vectors.runner import VectorMismatch, run_vector

# The Python models are broken on purpose here: they run every packet.
pytestmark = pytest.mark.usefixtures("python_model")


def _run(file: str, name: str) -> None:
    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "bfcc" / file)
    vector = next(v for v in vfile.vectors if v.name == name)
    model = make_model("bfcc", load_profile("tofino"))
    run_vector(ModelTarget(model), vfile, vector, PROGRAMS["bfcc"].queue_hook)


def _degree_with_inclusive_bounds(self: bfcc_model.Bfcc, md: bfcc_model.EgMd) -> int:
    # ">= T" where the paper says "> T": the boundaries land in the next degree.
    if md.queue.sojourn_ns >= md.t_max_ns:
        return bfcc_model.BFCC_DEGREE_SEVERE
    if md.queue.sojourn_ns >= md.t_min_ns:
        return bfcc_model.BFCC_DEGREE_MODERATE
    return bfcc_model.BFCC_DEGREE_MILD


@pytest.mark.parametrize("vector", ["sojourn_at_t_min_is_mild", "sojourn_at_t_max_is_moderate"])
def test_wrong_degree_boundary_is_caught(monkeypatch: pytest.MonkeyPatch, vector: str) -> None:
    monkeypatch.setattr(bfcc_model.Bfcc, "congestion_degree", _degree_with_inclusive_bounds)
    with pytest.raises(VectorMismatch):
        _run("congestion_point.yaml", vector)


def test_missing_dedup_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def forgetful(self: bfcc_model.Bfcc, index: int, md: bfcc_model.EgMd) -> int:
        self.bp_last_sent.write(index, md.bp_key)
        return 0  # as if nothing had been sent: every congested packet sends

    monkeypatch.setattr(bfcc_model.Bfcc, "bp_last_sent_swap", forgetful)
    with pytest.raises(VectorMismatch):
        _run("congestion_point.yaml", "same_group_and_degree_sent_once")


def test_congestion_at_the_threshold_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # depth >= threshold instead of depth > threshold.
    monkeypatch.setattr(bfcc_model, "margin_u32", lambda t, m: (t - m - 1) & bfcc_model.U32)
    with pytest.raises(VectorMismatch):
        _run("congestion_point.yaml", "depth_at_threshold_is_not_congestion")


def test_tie_to_the_higher_group_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    step = bfcc_model.Bfcc.congested_vq_step

    def higher_id_wins(self: bfcc_model.Bfcc, index: int, md: bfcc_model.EgMd) -> int:
        # ~count ++ ~group instead of ~count ++ group.
        md.vq_key = (md.vq_key & 0xFF00) | (~md.vq_key & 0xFF)
        best = step(self, index, md)
        return (best & 0xFF00) | (~best & 0xFF)

    monkeypatch.setattr(bfcc_model.Bfcc, "congested_vq_step", higher_id_wins)
    with pytest.raises(VectorMismatch):
        _run("congestion_point.yaml", "tie_goes_to_the_lower_group_id")


def test_16_bit_window_tag_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window number before issue 33: tags compared in 16 bits, so a
    group back after 2^16 windows continues its stale count and is named."""

    def step16(self: bfcc_model.Bfcc, index: int, md: bfcc_model.EgMd) -> int:
        v = self.vq_occupancy.split(self.vq_occupancy.read(index))
        if v["window_id"] & 0xFFFF == md.window_id & 0xFFFF:
            v["key"] = (v["key"] - bfcc_model.BFCC_KEY_ONE_COUNT) & bfcc_model.U32
        else:
            v["key"] = md.vq_first_key
        v["window_id"] = md.window_id
        self.vq_occupancy.write(index, self.vq_occupancy.pack(v))
        return int(v["key"])

    _run("congestion_point.yaml", "tag_two_to_the_16_windows_old_is_not_current")
    monkeypatch.setattr(bfcc_model.Bfcc, "vq_occupancy_step", step16)
    with pytest.raises(VectorMismatch, match="step 2: output differs"):
        _run("congestion_point.yaml", "tag_two_to_the_16_windows_old_is_not_current")


def test_fake_one_packet_late_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def late(self: bfcc_model.Bfcc, index: int, md: bfcc_model.EgMd) -> int:
        sent = self.rr_count.read(index)
        fake = 1 if sent > md.rate_threshold_packets else 0
        self.rr_count.write(index, 0 if fake else sent + 1)
        return fake

    monkeypatch.setattr(bfcc_model.Bfcc, "rr_count_step", late)
    for vector in (
        "mild_keeps_9_of_10_slots_over_40_packets",
        "moderate_keeps_3_of_4_slots_over_40_packets",
        "severe_keeps_1_of_2_slots_over_40_packets",
    ):
        with pytest.raises(VectorMismatch):
            _run("reaction_point.yaml", vector)


def test_backpressure_that_never_expires_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bfcc_model.Bfcc, "bp_recorded_age", lambda self, index, md: 0)
    with pytest.raises(VectorMismatch):
        _run("reaction_point.yaml", "backpressure_expires_without_refresh")


def test_trusting_every_port_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from models.switch import common

    monkeypatch.setattr(common.FeedbackTrust, "apply", lambda self, hdr, port, n: False)
    with pytest.raises(VectorMismatch):
        _run("reaction_point.yaml", "forged_backpressure_from_host_port_dropped_and_counted")


def test_forwarding_fakes_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bfcc_model, "ETHERTYPE_TOFCC_FAKE", 0x88B4)
    with pytest.raises(VectorMismatch):
        _run("reaction_point.yaml", "fake_packets_are_dropped_and_counted")


def test_relaying_forged_backpressure_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust skipped before the relay: a host's forged message would reach
    another group's senders."""
    from models.switch import common

    monkeypatch.setattr(common.FeedbackTrust, "apply", lambda self, hdr, port, n: False)
    with pytest.raises(VectorMismatch):
        _run("reaction_point.yaml", "forged_or_unknown_messages_are_never_relayed")


def test_relay_that_ignores_the_action_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any hit relays (consume entries too): group 2's message would leave."""
    real = bfcc_model.Bfcc.ingress

    def ingress(self: bfcc_model.Bfcc, md: object, data: bytes) -> object:
        t = self.sender_notify
        for e in t.entries:
            if e.action == self.consume.name:
                object.__setattr__(e, "action", self.notify_senders.name)
                object.__setattr__(e, "data", {"port": 1, "src_mac": 1, "dst_mac": 2})
        t._groups = None
        return real(self, md, data)  # type: ignore[arg-type]

    monkeypatch.setattr(bfcc_model.Bfcc, "ingress", ingress)
    with pytest.raises(VectorMismatch):
        _run("reaction_point.yaml", "match_switch_relays_backpressure_and_clear_to_the_named_group")


def test_fakes_under_shaping_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rate_threshold hit that always sets RT (ignoring no_rate_threshold)."""
    real = bfcc_model.Bfcc.egress

    def egress(self: bfcc_model.Bfcc, md: object, data: bytes) -> object:
        t = self.rate_threshold
        for e in t.entries:
            if e.action.endswith("no_rate_threshold"):
                e.data.update({"rt_packets": 1})
                object.__setattr__(e, "action", self.set_rate_threshold.name)
        t._groups = None
        return real(self, md, data)  # type: ignore[arg-type]

    monkeypatch.setattr(bfcc_model.Bfcc, "egress", egress)
    with pytest.raises(VectorMismatch):
        _run("shaping.yaml", "shaping_keeps_the_queues_and_the_record_but_makes_no_fakes")
