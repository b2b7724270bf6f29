# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The vectors must be able to fail: break the model on purpose and watch them catch it."""

from __future__ import annotations

import pytest

from hw_profiles import load_profile
from models.switch import pmqecn as pmqecn_model
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file
from models.vectors.runner import VectorMismatch, run_vector

# The bugs are planted in the Python models: run those, not the compiled
# cores (which keep the unbroken logic).
pytestmark = pytest.mark.usefixtures("python_model")

VECTOR_ROOT = DEFAULT_VECTOR_ROOT


def _run(file: str, name: str) -> None:
    vfile = load_vector_file(VECTOR_ROOT / "pmqecn" / file)
    vector = next(v for v in vfile.vectors if v.name == name)
    model = make_model("pmqecn", load_profile("tofino"))
    run_vector(ModelTarget(model), vfile, vector, PROGRAMS["pmqecn"].queue_hook)


def test_marking_at_threshold_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # ">= K" instead of "> K": a length read one byte longer flips the at-threshold case.
    grow = pmqecn_model.Pmqecn.vq_grow

    def one_more(self: pmqecn_model.Pmqecn, index: int, md: pmqecn_model.IgMd) -> int:
        return grow(self, index, md) + 1

    monkeypatch.setattr(pmqecn_model.Pmqecn, "vq_grow", one_more)
    with pytest.raises(VectorMismatch):
        _run("marking.yaml", "class1_at_threshold")


def test_marking_on_the_physical_queue_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # A virtual queue that never reaches K (the old design marked on enq_qdepth).
    monkeypatch.setattr(pmqecn_model, "VQ_CAP_BYTES", 0)
    with pytest.raises(VectorMismatch):
        _run("marking.yaml", "class1_burst_crosses_threshold")


def test_virtual_queue_without_drain_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_time(self: pmqecn_model.Pmqecn, index: int, md: pmqecn_model.IgMd) -> int:
        self.vq_last_tick.write(index, md.now_ticks)
        return 0

    monkeypatch.setattr(pmqecn_model.Pmqecn, "vq_clock_step", no_time)
    with pytest.raises(VectorMismatch):
        _run("virtual_queue.yaml", "vq_drains_over_elapsed_ticks")


def test_nanosecond_clock_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from models.switch import common

    monkeypatch.setattr(common, "CLOCK_TICK_SHIFT", 0)
    with pytest.raises(VectorMismatch):
        _run("virtual_queue.yaml", "vq_ticks_are_64_ns")


def test_wrapping_sojourn_sum_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pmqecn_model, "sat_add_u32", lambda a, b: (a + b) & 0xFFFFFFFF)
    with pytest.raises(VectorMismatch):
        _run("marking.yaml", "sojourn_accumulates_and_saturates")


def test_wrr_without_wrap_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_wrap(self: pmqecn_model.Pmqecn, index: int, md: pmqecn_model.IgMd) -> int:
        level = self.vq_level.read(index)
        if md.wrr_advance == 1:
            level = min(level + 1, md.wrr_last_level)
        self.vq_level.write(index, level)
        return level

    monkeypatch.setattr(pmqecn_model.Pmqecn, "vq_level_step", no_wrap)
    with pytest.raises(VectorMismatch):
        _run("wrr.yaml", "wrr_weight1_every_packet_demotes")


def test_trusting_every_port_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from models.switch import common

    monkeypatch.setattr(common.FeedbackTrust, "apply", lambda self, hdr, port, n: False)
    with pytest.raises(VectorMismatch):
        _run("forwarding_and_trust.yaml", "forged_feedback_from_host_dropped_and_counted")
