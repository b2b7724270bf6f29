# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What the real BF-Runtime server and client refuse, on the fake and through
BfrtSwitch (issue 12). Each rule cites the open-p4studio source it comes from;
every test here failed on the fake as it was before the rule was modelled.
"""

from __future__ import annotations

from typing import Any

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch, _message
from bfrt_controller.errors import ControllerError, SwitchBusy, SwitchUnavailable, WriteError
from bfrt_controller.pmqecn import names as n
from bfrt_controller.switch import EntryWrite, MirrorSessionWrite, TmQueueWrite
from doubles import FakeBfrtGrpc, StatusCode
from hw_profiles import HwProfile, load_profile
from models.switch.core import Match

PROGRAM = "pmqecn"
ADDR = "localhost:50052"
RATES = n.CLASS_RATES
MIRROR = "$mirror.cfg"


@pytest.fixture
def profile() -> HwProfile:
    return load_profile("tofino")


def bound_client(fake: FakeBfrtGrpc, client_id: int = 0) -> Any:
    c = fake.ClientInterface(ADDR, client_id=client_id, device_id=0)
    c.bind_pipeline_config(PROGRAM)
    return c


def mirror_write(fake: FakeBfrtGrpc, client: Any, op: str, sid: int, atomicity: int) -> None:
    t = client.bfrt_info_get(PROGRAM).table_get(MIRROR)
    key = t.make_key([fake.KeyTuple("$sid", sid)])
    if op == "entry_del":
        t.entry_del(fake.Target(), [key], atomicity=atomicity)
        return
    data = t.make_data(
        [
            fake.DataTuple("$direction", str_val="EGRESS"),
            fake.DataTuple("$session_enable", bool_val=True),
            fake.DataTuple("$ucast_egress_port", 3),
            fake.DataTuple("$ucast_egress_port_valid", bool_val=True),
            fake.DataTuple("$max_pkt_len", 64),
        ],
        "$normal",
    )
    getattr(t, op)(fake.Target(), [key], [data], atomicity=atomicity)


def refused_code(exc: Any) -> StatusCode:
    ((_, err),) = exc.errors
    return StatusCode(err.canonical_code)


def rates(class_id: int, rate: int) -> EntryWrite:
    return EntryWrite(
        RATES,
        {n.K_CLASS_ID: Match(class_id)},
        n.SET_RATES,
        {"rate": rate, "target_rate": rate},
    )


# ---- 1. mirror sessions outside transactions -------------------------------


def test_fake_refuses_mirror_sessions_inside_a_transaction(fake: FakeBfrtGrpc) -> None:
    # bf_pipe_mgr_mirror_buffer.c api_setup: PIPE_TXN_NOT_SUPPORTED -> UNIMPLEMENTED
    c = bound_client(fake)
    wr = fake.bfruntime_pb2.WriteRequest
    with pytest.raises(fake.BfruntimeReadWriteRpcException) as err:
        mirror_write(fake, c, "entry_add", 5, wr.ROLLBACK_ON_ERROR)
    assert refused_code(err.value) is StatusCode.UNIMPLEMENTED
    assert fake.mirror_sessions() == {}
    mirror_write(fake, c, "entry_add", 5, wr.CONTINUE_ON_ERROR)
    with pytest.raises(fake.BfruntimeReadWriteRpcException) as err:
        mirror_write(fake, c, "entry_del", 5, wr.ROLLBACK_ON_ERROR)
    assert refused_code(err.value) is StatusCode.UNIMPLEMENTED
    assert 5 in fake.mirror_sessions()


@pytest.mark.parametrize(
    ("op", "sid", "existing", "code"),
    [
        # bf_rt_mirror_table_impl.cpp: each of these is BF_INVALID_ARG
        ("entry_add", 5, True, StatusCode.INVALID_ARGUMENT),
        ("entry_mod", 5, False, StatusCode.INVALID_ARGUMENT),
        ("entry_del", 5, False, StatusCode.INVALID_ARGUMENT),
        # sid 0 is reserved (api_setup PIPE_INVALID_ARG)
        ("entry_add", 0, False, StatusCode.INVALID_ARGUMENT),
        # above the normal-session maximum: bf_mirror_session_set PIPE_OBJ_NOT_FOUND
        ("entry_add", 1016, False, StatusCode.NOT_FOUND),
    ],
)
def test_fake_mirror_error_codes_follow_the_driver(
    fake: FakeBfrtGrpc, op: str, sid: int, existing: bool, code: StatusCode
) -> None:
    c = bound_client(fake)
    cont = fake.bfruntime_pb2.WriteRequest.CONTINUE_ON_ERROR
    if existing:
        mirror_write(fake, c, "entry_add", sid, cont)
    with pytest.raises(fake.BfruntimeReadWriteRpcException) as err:
        mirror_write(fake, c, op, sid, cont)
    assert refused_code(err.value) is code


def test_mirror_sessions_go_one_per_call_without_atomicity(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    sw.write([MirrorSessionWrite(5, 1), MirrorSessionWrite(6, 2), rates(1, 10)])
    mirror_calls = [c for c in fake.writes() if c.table == MIRROR]
    assert [(c.op, c.count) for c in mirror_calls] == [("INSERT", 1), ("INSERT", 1)]
    cont = fake.bfruntime_pb2.WriteRequest.CONTINUE_ON_ERROR
    assert {c.atomicity for c in mirror_calls} == {cont}
    assert set(fake.mirror_sessions()) == {5, 6}


def test_a_refused_batch_undoes_its_mirror_sessions(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    sw.write([MirrorSessionWrite(5, 1)])
    before = fake.snapshot()
    fake.fail_write(RATES)
    with pytest.raises(WriteError):
        sw.write([MirrorSessionWrite(5, 7), MirrorSessionWrite(6, 2), rates(1, 10)])
    assert fake.snapshot() == before
    # The undo itself went outside transactions too.
    assert all(c.atomicity == 0 for c in fake.writes() if c.table == MIRROR)


def test_a_refused_mirror_session_undoes_the_one_before(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    before = fake.snapshot()
    fake.fail_write(MIRROR, after=1)
    with pytest.raises(WriteError) as err:
        sw.write([MirrorSessionWrite(5, 1), MirrorSessionWrite(6, 2)])
    assert err.value.index == 1
    assert fake.snapshot() == before


# ---- 2. TM fields as the server types them ---------------------------------


def _sched(fake: FakeBfrtGrpc, client: Any) -> tuple[Any, Any]:
    t = client.bfrt_info_get(PROGRAM).table_get("tf1.tm.queue.sched_cfg")
    _, pg_id, pg_queue = fake.port_queue(4, 0)
    key = t.make_key([fake.KeyTuple("pg_id", pg_id), fake.KeyTuple("pg_queue", pg_queue)])
    return t, key


def test_fake_tm_priority_is_a_string_choice(fake: FakeBfrtGrpc) -> None:
    c = bound_client(fake)
    t, key = _sched(fake, c)
    # bf_rt_tm_tf1.json: string with choices; the client's ensure_binary refuses an int.
    with pytest.raises(TypeError):
        t.entry_mod(
            fake.Target(pipe_id=0), [key], [t.make_data([fake.DataTuple("max_priority", 3)])]
        )
    t.entry_mod(
        fake.Target(pipe_id=0), [key], [t.make_data([fake.DataTuple("max_priority", str_val="3")])]
    )
    (data, _), *_ = t.entry_get(fake.Target(pipe_id=0), [key])
    assert data.to_dict()["max_priority"] == "3"
    t.entry_mod(
        fake.Target(pipe_id=0), [key], [t.make_data([fake.DataTuple("max_priority", str_val="0")])]
    )
    (data, _), *_ = t.entry_get(fake.Target(pipe_id=0), [key])
    # prio_to_str: BF_TM_SCH_PRIO_0 == BF_TM_SCH_PRIO_LOW, named "LOW"
    assert data.to_dict()["max_priority"] == "LOW"


def test_fake_transaction_does_not_undo_tm_writes(fake: FakeBfrtGrpc) -> None:
    c = bound_client(fake)
    t, key = _sched(fake, c)
    bad = t.make_key([fake.KeyTuple("pg_id", 200), fake.KeyTuple("pg_queue", 0)])
    data = t.make_data([fake.DataTuple("dwrr_weight", 9)])
    with pytest.raises(fake.BfruntimeReadWriteRpcException):
        t.entry_mod(
            fake.Target(pipe_id=0),
            [key, bad],
            [data, data],
            atomicity=fake.bfruntime_pb2.WriteRequest.ROLLBACK_ON_ERROR,
        )
    _, pg_id, pg_queue = fake.port_queue(4, 0)
    assert fake.tm_weight(0, pg_id, pg_queue) == 9


def test_tm_priorities_are_sent_and_read_as_strings(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    sw.write([TmQueueWrite(4, 0, max_priority=0), TmQueueWrite(4, 1, max_priority=7)])
    assert sw.read_tm_priority(4, 0) == 0  # read back as "LOW"
    assert sw.read_tm_priority(4, 1) == 7
    assert fake.tm_queue(*fake.port_queue(4, 1))["max_priority"] == 7


def test_tm_writes_go_one_per_call_and_undo_only_their_fields(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    sw.write([TmQueueWrite(4, 0, max_priority=3)])
    fake.calls.clear()
    fake.fail_write(RATES)
    with pytest.raises(WriteError):
        sw.write(
            [TmQueueWrite(4, 0, dwrr_weight=20), TmQueueWrite(4, 1, dwrr_weight=30), rates(1, 1)]
        )
    tm_calls = [c for c in fake.writes() if c.table.endswith("sched_cfg")]
    assert [c.count for c in tm_calls] == [1, 1, 1, 1]  # two writes, two undos
    assert {c.atomicity for c in tm_calls} == {fake.bfruntime_pb2.WriteRequest.CONTINUE_ON_ERROR}
    # The snapshot held only the weight: the undo never rewrote the priority.
    assert {c.fields for c in tm_calls} == {("dwrr_weight",)}
    assert sw.read_tm_weight(4, 0) == 1023 and sw.read_tm_weight(4, 1) == 1023  # power-on
    assert sw.read_tm_priority(4, 0) == 3


# ---- 3. more than one client -----------------------------------------------


def test_fake_refuses_a_second_client_id_and_a_second_bind(fake: FakeBfrtGrpc) -> None:
    bound_client(fake, 0)
    with pytest.raises(RuntimeError, match="client_id 0"):
        fake.ClientInterface(ADDR, client_id=0, device_id=0)
    other = fake.ClientInterface(ADDR, client_id=1, device_id=0)
    with pytest.raises(fake.BfruntimeForwardingRpcException) as err:
        other.bind_pipeline_config(PROGRAM)
    assert err.value.grpc_error.code() is StatusCode.ALREADY_EXISTS


def test_fake_independent_client_reads_by_program_name(fake: FakeBfrtGrpc) -> None:
    bound_client(fake, 0)
    ro = fake.ClientInterface(ADDR, client_id=0, device_id=0, perform_subscribe=False)
    t = ro.bfrt_info_get(PROGRAM).table_get(RATES)
    key = t.make_key([fake.KeyTuple("hdr.bridged.class_id", 1)])
    with pytest.raises(fake.BfruntimeReadWriteRpcException):
        list(t.entry_get(fake.Target(), [key]))
    with pytest.raises(fake.BfruntimeReadWriteRpcException) as err:
        list(t.entry_get(fake.Target(), [key], p4_name=PROGRAM))
    assert refused_code(err.value) is StatusCode.NOT_FOUND  # reached the table: no entry


def test_second_writer_is_told_the_switch_is_busy(
    sw: BfrtSwitch, fake: FakeBfrtGrpc, profile: HwProfile
) -> None:
    with pytest.raises(SwitchUnavailable, match="client id 0"):
        BfrtSwitch(PROGRAM, profile, client_module=fake).connect()
    second = BfrtSwitch(PROGRAM, profile, client_module=fake, client_id=7)
    with pytest.raises(SwitchBusy, match=r"(?i)one writer per program"):
        second.connect()
    assert set(fake.switch.clients) == {0}  # the refused client left nothing behind


def test_read_only_client_reads_while_the_writer_holds_the_switch(
    sw: BfrtSwitch, fake: FakeBfrtGrpc, profile: HwProfile
) -> None:
    sw.write([rates(1, 10), TmQueueWrite(4, 0, dwrr_weight=5)])
    ro = BfrtSwitch(PROGRAM, profile, client_module=fake, client_id=0, read_only=True)
    ro.connect()
    assert ro.read_entry(RATES, {"hdr.bridged.class_id": Match(1)}) is not None
    assert ro.read_tm_weight(4, 0) == 5
    with pytest.raises(ControllerError, match="read-only"):
        ro.write([rates(1, 11)])
    ro.close()
    sw.write([rates(1, 12)])  # the writer is untouched by the reader coming and going


# ---- 8. error text falls back to the gRPC status ---------------------------


def test_error_without_per_update_errors_names_the_status(fake: FakeBfrtGrpc) -> None:
    from doubles.fake_bfrt_grpc import FakeRpcError

    exc = fake.BfruntimeReadWriteRpcException(
        FakeRpcError(StatusCode.NOT_FOUND, "Unable to obtain BF_RT info for (x)")
    )
    # The client's own text is just "Error(s):" here.
    assert str(exc).strip() == "Error(s):"
    assert _message(exc) == "NOT_FOUND: Unable to obtain BF_RT info for (x)"
