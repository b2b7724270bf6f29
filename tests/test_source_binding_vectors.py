# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The source-binding vectors must be able to fail: a model that skips the
check, or checks without counting, is caught on both programs."""

from __future__ import annotations

import pytest

from hw_profiles import load_profile
from models.switch import common
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file
from models.vectors.runner import VectorMismatch, run_vector

# The Python models are broken on purpose here: they run every packet.
pytestmark = pytest.mark.usefixtures("python_model")

CASES = [
    ("pmqecn", "spoofed_packet_leaves_no_trace"),
    ("bfcc", "spoofed_packet_names_no_group_at_the_congestion_point"),
    ("bfcc", "spoofed_packet_is_not_admitted_at_the_reaction_point"),
]


def _run(program: str, name: str) -> None:
    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / program / "source_binding.yaml")
    vector = next(v for v in vfile.vectors if v.name == name)
    model = make_model(program, load_profile("tofino"))
    run_vector(ModelTarget(model), vfile, vector, PROGRAMS[program].queue_hook)


@pytest.mark.parametrize(("program", "name"), CASES)
def test_vectors_pass_on_the_real_model(program: str, name: str) -> None:
    _run(program, name)


@pytest.mark.parametrize(("program", "name"), CASES)
def test_skipping_the_check_is_caught(
    monkeypatch: pytest.MonkeyPatch, program: str, name: str
) -> None:
    monkeypatch.setattr(common.SourceGuard, "apply", lambda self, hdr, port, n: False)
    with pytest.raises(VectorMismatch):
        _run(program, name)


@pytest.mark.parametrize("program", ["pmqecn", "bfcc"])
def test_dropping_without_counting_is_caught(monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    check = common.SourceGuard.apply

    def uncounted(self: common.SourceGuard, hdr: common.Headers, port: int, n: int) -> bool:
        spoofed = check(self, hdr, port, n)
        if spoofed:
            self.spoofed_source_drops.packets[port] -= 1
        return spoofed

    monkeypatch.setattr(common.SourceGuard, "apply", uncounted)
    with pytest.raises(VectorMismatch):
        _run(program, "spoofed_source_dropped_and_counted")


def test_an_unbound_port_is_not_checked() -> None:
    # The table's default (no entry for the port) admits any source: the
    # vectors' switch-facing port relies on it.
    model = make_model("pmqecn", load_profile("tofino"))
    guard = model.source_guard
    assert guard.source_bindings.default[0] == guard.unbound.name
