# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 12 point 8: the PTF target compares outputs as a multiset and names
the gRPC status when a call fails. The SDE's ptf and bfrt_grpc are replaced by
stand-ins (the fake BF-Runtime client; a dataplane that hands out packets)."""

from __future__ import annotations

import importlib
import sys
import types
from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest

from doubles import FakeBfrtGrpc
from hw_profiles import load_profile
from models.switch.registry import make_model
from models.vectors.format import TableEntrySpec
from models.vectors.runner import VectorMismatch
from ptf_tests.common.dataplane import collect_outputs, expect_outputs

A, B, C = b"\x01" * 60, b"\x02" * 60, b"\x03" * 60


def poller(packets: list[tuple[int, bytes]]) -> Any:
    q = deque(packets)
    return lambda timeout_s: q.popleft() if q else None


def test_outputs_compare_as_a_multiset_in_any_order() -> None:
    # The switch emits the mirror copy (port 1) before the forwarded packet.
    expect_outputs(poller([(1, B), (2, A)]), [(2, A), (1, B)], "ctx", 0.0, 0.0)
    expect_outputs(poller([(2, A), (2, A)]), [(2, A), (2, A)], "ctx", 0.0, 0.0)


@pytest.mark.parametrize(
    ("got", "message"),
    [
        ([(2, A)], "missing on port 1"),
        ([(2, A), (1, B), (3, C)], "unexpected on port 3"),
        ([(2, A), (2, B)], "unexpected on port 2"),
        ([(2, A), (1, B), (2, A)], "unexpected on port 2"),
    ],
)
def test_missing_extra_or_moved_packets_fail(got: list[tuple[int, bytes]], message: str) -> None:
    with pytest.raises(VectorMismatch, match=message):
        expect_outputs(poller(got), [(2, A), (1, B)], "step 0", 0.0, 0.0)


def test_collect_waits_long_for_expected_and_briefly_for_extras() -> None:
    waits: list[float] = []
    q = deque([(2, A)])

    def poll(timeout_s: float) -> tuple[int, bytes] | None:
        waits.append(timeout_s)
        return q.popleft() if q else None

    assert collect_outputs(poll, 2, timeout_s=2.0, quiet_s=0.1) == [(2, A)]
    assert waits == [2.0, 2.0]  # gave up on the second expected packet; no quiet wait
    waits.clear()
    q.extend([(2, A)])
    assert collect_outputs(poll, 1, timeout_s=2.0, quiet_s=0.1) == [(2, A)]
    assert waits == [2.0, 0.1]


@pytest.fixture
def bfrt_target_module(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, FakeBfrtGrpc]]:
    fake = FakeBfrtGrpc("pmqecn", load_profile("tofino"))
    grpc_pkg = types.ModuleType("bfrt_grpc")
    grpc_pkg.client = fake  # type: ignore[attr-defined]
    ptf_pkg = types.ModuleType("ptf")
    ptf_pkg.ptfutils = types.SimpleNamespace(default_timeout=0.0, default_negative_timeout=0.0)  # type: ignore[attr-defined]
    testutils = types.ModuleType("ptf.testutils")
    testutils.sent = []  # type: ignore[attr-defined]
    testutils.send_packet = lambda test, port, data: testutils.sent.append((port, data))  # type: ignore[attr-defined]

    def dp_poll(test: Any, device_number: int = 0, timeout: float = 0.0) -> Any:
        return test.outputs.popleft() if test.outputs else None

    testutils.dp_poll = dp_poll  # type: ignore[attr-defined]
    ptf_pkg.testutils = testutils  # type: ignore[attr-defined]
    for name, mod in (
        ("bfrt_grpc", grpc_pkg),
        ("bfrt_grpc.client", fake),
        ("ptf", ptf_pkg),
        ("ptf.testutils", testutils),
    ):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.delitem(sys.modules, "ptf_tests.common.bfrt_target", raising=False)
    module = importlib.import_module("ptf_tests.common.bfrt_target")
    yield module, fake
    sys.modules.pop("ptf_tests.common.bfrt_target", None)


class Success(tuple):  # type: ignore[type-arg]
    """DataPlane.PollSuccess: (device, port, packet, time)."""

    @property
    def port(self) -> int:
        return int(self[1])

    @property
    def packet(self) -> bytes:
        return bytes(self[2])


def make_test(outputs: list[tuple[int, bytes]]) -> Any:
    return types.SimpleNamespace(
        dataplane=types.SimpleNamespace(PollSuccess=Success),
        outputs=deque(Success((0, p, d, 0.0)) for p, d in outputs),
    )


def test_bfrt_target_sends_then_compares_everything_that_came_out(
    bfrt_target_module: tuple[Any, FakeBfrtGrpc],
) -> None:
    module, fake = bfrt_target_module
    profile = load_profile("tofino")
    client = fake.ClientInterface("localhost:50052", client_id=0, device_id=0)
    client.bind_pipeline_config("pmqecn")
    test = make_test([(1, B), (2, A)])
    target = module.BfrtTarget(
        test, client.bfrt_info_get("pmqecn"), make_model("pmqecn", profile), profile
    )
    target.send_and_expect(3, C, [(2, A), (1, B)], "ctx")
    test.outputs.extend([Success((0, 2, A, 0.0))])
    with pytest.raises(VectorMismatch, match="missing on port 1"):
        target.send_and_expect(3, C, [(2, A), (1, B)], "ctx")


def test_bfrt_target_names_the_grpc_status(bfrt_target_module: tuple[Any, FakeBfrtGrpc]) -> None:
    module, fake = bfrt_target_module
    profile = load_profile("tofino")
    # Subscribed but not bound: the server cannot tell which program is meant
    # and answers with a status that carries no per-update errors.
    client = fake.ClientInterface("localhost:50052", client_id=0, device_id=0)
    target = module.BfrtTarget(
        make_test([]), client.bfrt_info_get("pmqecn"), make_model("pmqecn", profile), profile
    )
    entry = TableEntrySpec(
        table="SwitchIngress.trust.trusted_ports",
        key={"ig_intr_md.ingress_port": {"value": 3}},
        action="SwitchIngress.trust.trusted",
    )
    with pytest.raises(VectorMismatch) as err:
        target.add_entry(entry)
    assert "INTERNAL: Error getting BfRtInfo" in str(err.value)
    assert "Error(s):" not in str(err.value)


def test_bfrt_target_writes_a_ternary_key_given_as_a_value_with_a_full_mask(
    bfrt_target_module: tuple[Any, FakeBfrtGrpc], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vector's bare value on a ternary key means that value exactly, as on
    the model (aqm's egress_qid, ternary for p4testgen's sake: issue 32).
    BF-Runtime refuses a ternary key field without a mask."""
    module, _ = bfrt_target_module
    fake = FakeBfrtGrpc("aqm", load_profile("tofino"))
    monkeypatch.setattr(module, "gc", fake)
    profile = load_profile("tofino")
    client = fake.ClientInterface("localhost:50052", client_id=0, device_id=0)
    client.bind_pipeline_config("aqm")
    target = module.BfrtTarget(
        make_test([]), client.bfrt_info_get("aqm"), make_model("aqm", profile), profile
    )
    entry = TableEntrySpec(
        table="SwitchEgress.aqm_queue",
        key={"eg_intr_md.egress_port": {"value": 2}, "eg_intr_md.egress_qid": {"value": 3}},
        action="SwitchEgress.no_aqm",
    )
    target.add_entry(entry)
    [ident] = fake.entries("SwitchEgress.aqm_queue")
    assert ("eg_intr_md.egress_qid", "t", 3, 0x1F) in ident
    target.delete_entry("SwitchEgress.aqm_queue", entry.key)
    assert not fake.entries("SwitchEgress.aqm_queue")
