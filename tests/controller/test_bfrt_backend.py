# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BfrtSwitch against the fake bfrt_grpc client, for pmqecn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bfrt_controller.backends.bfrt import READ_BATCH, BfrtSwitch, p4tables
from bfrt_controller.errors import SdeMissing, SwitchUnavailable, WriteError
from bfrt_controller.switch import (
    EntryState,
    EntryWrite,
    MirrorSessionWrite,
    RegisterWrite,
    TmQueueWrite,
    Write,
)
from doubles import FakeBfrtGrpc
from hw_profiles import HwProfile, load_profile
from models.switch.core import Match, P4ModelError

PROGRAM = "pmqecn"
ECN = "SwitchIngress.ecn_threshold"
PIPE = "ingress_pipe"  # ecn_threshold's second key: the ingress pipe
RATES = "SwitchIngress.class_rates"
CLASSIFY = "SwitchIngress.classify"
LPM = "SwitchIngress.forward.ipv4_lpm"
VQ_USED = "SwitchIngress.vq_used"
CLASS_COUNTERS = "SwitchIngress.class_counters"


@pytest.fixture(params=["tofino"])
def profile(request: pytest.FixtureRequest) -> HwProfile:
    return load_profile(request.param)


def threshold(class_id: int, cells: int, op: str = "upsert") -> EntryWrite:
    return EntryWrite(
        ECN,
        {"hdr.bridged.class_id": Match(class_id), PIPE: Match(0)},
        "SwitchIngress.set_threshold",
        {
            "threshold_bytes": cells,
            "mark_original": 0,
            "rate_log2_q7": 0,
            "feedback_interval_ticks": 0,
        },
        op=op,  # type: ignore[arg-type]
    )


def rates(class_id: int, rate: int, op: str = "upsert") -> EntryWrite:
    return EntryWrite(
        RATES,
        {"hdr.bridged.class_id": Match(class_id)},
        "SwitchIngress.set_rates",
        {"rate": rate, "target_rate": rate // 2},
        op=op,  # type: ignore[arg-type]
    )


def test_writes_to_one_table_go_as_one_rollback_call(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    sw.write([threshold(c, 1000 + c) for c in range(20)])
    (call,) = fake.writes()
    assert (call.table, call.op, call.count) == (f"pipe.{ECN}", "INSERT_OR_MODIFY", 20)
    assert call.atomicity == fake.bfruntime_pb2.WriteRequest.ROLLBACK_ON_ERROR
    assert len(fake.entries(ECN)) == 20


def test_only_consecutive_writes_to_a_table_share_a_call(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    sw.write([threshold(1, 10), threshold(2, 20), rates(1, 5), rates(2, 6), threshold(3, 30)])
    assert [(c.table, c.count) for c in fake.writes()] == [
        (f"pipe.{ECN}", 2),
        (f"pipe.{RATES}", 2),
        (f"pipe.{ECN}", 1),
    ]


def test_ternary_and_lpm_keys(sw: BfrtSwitch) -> None:
    key = {"hdr.ipv4.dscp": Match(46, mask=0x3F)}
    action = "SwitchIngress.set_class"
    sw.write(
        [
            EntryWrite(CLASSIFY, key, action, {"class_id": 7, "vq_id": 3, "qid": 2}, priority=5),
            EntryWrite(
                LPM,
                {"hdr.ipv4.dst_addr": Match(0x0A000000, prefix_len=8)},
                "SwitchIngress.forward.route",
                {"port": 4, "src_mac": 1, "dst_mac": 2},
            ),
        ]
    )
    assert sw.read_entry(CLASSIFY, key, priority=5) == EntryState(
        action, {"class_id": 7, "vq_id": 3, "qid": 2}
    )
    # Priority is part of a ternary key.
    assert sw.read_entry(CLASSIFY, key, priority=6) is None
    assert sw.read_entry(LPM, {"hdr.ipv4.dst_addr": Match(0x0A000000, prefix_len=8)}) is not None


BAD_WRITES: list[tuple[Write, str]] = [
    (EntryWrite("SwitchEgress.nope", {}, "NoAction"), "SwitchEgress.nope"),
    (
        EntryWrite(ECN, {"hdr.bridged.klass": Match(1)}, "SwitchIngress.no_threshold"),
        "hdr.bridged.klass",
    ),
    (
        EntryWrite(ECN, {"hdr.bridged.class_id": Match(1), PIPE: Match(0)}, "SwitchEgress.nope"),
        "nope",
    ),
    (
        EntryWrite(
            ECN,
            {"hdr.bridged.class_id": Match(1 << 16), PIPE: Match(0)},
            "SwitchIngress.no_threshold",
        ),
        "hdr.bridged.class_id",
    ),
    (
        EntryWrite(
            ECN,
            {"hdr.bridged.class_id": Match(1), PIPE: Match(0)},
            "SwitchIngress.set_threshold",
            {
                "threshold_bytes": 1,
                "mark_original": 2,
                "rate_log2_q7": 0,
                "feedback_interval_ticks": 0,
            },
        ),
        "mark_original",
    ),
    (
        EntryWrite(
            ECN,
            {"hdr.bridged.class_id": Match(1), PIPE: Match(0)},
            "SwitchIngress.set_threshold",
            {
                "threshold_bytes": 1,
                "mark_original": 0,
                "rate_log2_q7": 0,
                "feedback_interval_ticks": 0,
                "extra": 1,
            },
        ),
        "extra",
    ),
    (
        EntryWrite(CLASSIFY, {"hdr.ipv4.dscp": Match(64, mask=0x3F)}, "SwitchIngress.unclassified"),
        "hdr.ipv4.dscp",
    ),
    (RegisterWrite(VQ_USED, 0, 1 << 16), VQ_USED),
    (RegisterWrite(VQ_USED, 1024, 0), VQ_USED),
    (MirrorSessionWrite(sid=0, port=1), "$sid"),
    (TmQueueWrite(port=1, queue=1, dwrr_weight=0), "dwrr_weight"),
]


@pytest.mark.parametrize(("bad", "named"), BAD_WRITES, ids=[b.describe() for b, _ in BAD_WRITES])
def test_bad_names_and_widths_are_refused_before_any_write(
    sw: BfrtSwitch, fake: FakeBfrtGrpc, bad: Write, named: str
) -> None:
    sw.write([threshold(9, 99)])
    before, calls = fake.snapshot(), len(fake.writes())
    with pytest.raises(WriteError) as err:
        sw.write([threshold(1, 10), rates(1, 5), bad])
    assert err.value.index == 2
    assert named in str(err.value)
    assert fake.snapshot() == before
    assert len(fake.writes()) == calls


def test_names_the_switch_lacks_are_refused_before_any_write(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    # The model declares the table, but the loaded P4 does not (model/P4 drift).
    for name in [n for n, s in fake.switch._by_name.items() if s.name == f"pipe.{RATES}"]:
        del fake.switch._by_name[name]
    with pytest.raises(WriteError) as err:
        sw.write([threshold(1, 10), rates(1, 5)])
    assert err.value.index == 1
    assert RATES in str(err.value)
    assert fake.writes() == []


def _populate(sw: BfrtSwitch) -> None:
    sw.write(
        [
            threshold(1, 100),
            threshold(2, 200),
            rates(1, 10),
            EntryWrite(ECN, op="default", action="SwitchIngress.no_threshold"),
            RegisterWrite(VQ_USED, 3, 7),
            MirrorSessionWrite(sid=5, port=9, max_pkt_len=64),
            TmQueueWrite(port=2, queue=1, dwrr_weight=50),
        ]
    )


def test_failure_in_second_group_rolls_back_the_first(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    _populate(sw)
    before = fake.snapshot()
    fake.fail_write(RATES)
    batch = [threshold(1, 111, op="modify"), threshold(5, 500, op="insert"), rates(2, 20)]
    with pytest.raises(WriteError) as err:
        sw.write(batch)
    assert err.value.index == 2
    assert "injected failure" in str(err.value)
    assert fake.snapshot() == before


def test_failure_inside_a_group_names_that_write(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    _populate(sw)
    before = fake.snapshot()
    fake.fail_write(RATES, after=1)
    with pytest.raises(WriteError) as err:
        sw.write([threshold(7, 1), rates(3, 30), rates(4, 40), rates(5, 50)])
    assert err.value.index == 2
    assert err.value.what == rates(4, 40).describe()
    assert fake.snapshot() == before


def test_every_kind_of_write_is_rolled_back(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    _populate(sw)
    fake.set_register(VQ_USED, 4, 9, pipe=2)  # pipes disagree: each gets its value back
    before = fake.snapshot()
    fake.fail_write(CLASSIFY)
    batch: list[Write] = [
        threshold(1, 0, op="delete"),
        threshold(2, 222, op="modify"),
        threshold(3, 333, op="insert"),
        EntryWrite(
            ECN,
            op="default",
            action="SwitchIngress.set_threshold",
            data={
                "threshold_bytes": 5,
                "mark_original": 1,
                "rate_log2_q7": 0,
                "feedback_interval_ticks": 0,
            },
        ),
        rates(1, 0, op="delete"),
        RegisterWrite(VQ_USED, 3, 8),
        RegisterWrite(VQ_USED, 4, 8),
        MirrorSessionWrite(sid=5, port=10),
        MirrorSessionWrite(sid=6, port=11),
        TmQueueWrite(port=2, queue=1, dwrr_weight=70),
        TmQueueWrite(port=130, queue=0, dwrr_weight=80),
        threshold(1, 1, op="insert"),
        EntryWrite(CLASSIFY, {}, "SwitchIngress.unclassified"),
    ]
    with pytest.raises(WriteError) as err:
        sw.write(batch)
    assert err.value.index == len(batch) - 1
    assert fake.snapshot() == before


def test_refused_by_the_switch_itself_rolls_back(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    _populate(sw)
    before = fake.snapshot()
    with pytest.raises(WriteError) as err:
        sw.write([rates(9, 1), threshold(1, 5, op="insert")])  # class 1 exists already
    assert err.value.index == 1
    assert fake.snapshot() == before


def test_restart_makes_calls_unavailable_until_reconnect(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    _populate(sw)
    fake.restart()
    with pytest.raises(SwitchUnavailable):
        sw.write([threshold(1, 10)])
    with pytest.raises(SwitchUnavailable):
        sw.read_register(VQ_USED, 3)
    sw.connect()
    # A reboot loses every entry; the session works again.
    assert sw.read_entry(ECN, {"hdr.bridged.class_id": Match(1), PIPE: Match(0)}) is None
    sw.write([threshold(1, 10)])
    assert len(fake.entries(ECN)) == 1


def test_unreachable_switch(fake: FakeBfrtGrpc, profile: HwProfile) -> None:
    sw = BfrtSwitch(PROGRAM, profile, address="10.9.9.9:50052", client_module=fake)
    with pytest.raises(SwitchUnavailable, match=r"10\.9\.9\.9:50052"):
        sw.connect()
    with pytest.raises(SwitchUnavailable):
        sw.write([threshold(1, 10)])
    ok = BfrtSwitch(PROGRAM, profile, client_module=fake)
    fake.down()
    with pytest.raises(SwitchUnavailable, match="localhost:50052"):
        ok.connect()
    fake.up()
    ok.connect()
    fake.down()
    with pytest.raises(SwitchUnavailable):
        ok.read_counter(CLASS_COUNTERS, 0)
    fake.up()
    assert ok.read_counter(CLASS_COUNTERS, 0) == (0, 0)


def test_wrong_program_is_unavailable(fake: FakeBfrtGrpc, profile: HwProfile) -> None:
    fake.switch.program = "other"
    with pytest.raises(SwitchUnavailable, match="pmqecn"):
        BfrtSwitch(PROGRAM, profile, client_module=fake).connect()
    # The failed attempt released its session.
    assert fake.switch.clients == {}


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_tm_weight_goes_to_the_ports_pg_queue(chip: str) -> None:
    profile = load_profile(chip)
    fake = FakeBfrtGrpc(PROGRAM, profile)
    sw = BfrtSwitch(PROGRAM, profile, client_module=fake)
    sw.connect()
    port = (1 << 7) | 6  # pipe 1
    sw.write([TmQueueWrite(port=port, queue=3, dwrr_weight=77)])
    pipe, pg_id, pg_queue = fake.port_queue(port, 3)
    assert pipe == 1
    assert fake.tm_weight(pipe, pg_id, pg_queue) == 77
    (call,) = fake.writes()
    tf = "tf2" if chip == "tofino2" else "tf1"
    assert (call.table, call.op, call.pipe) == (f"{tf}.tm.queue.sched_cfg", "MODIFY", 1)
    assert sw.read_tm_weight(port, 3) == 77
    assert sw.read_tm_weight(port, 2) == 1023  # power-on (tm_api_sch.c line 64)
    assert fake.tm_weight(pipe, pg_id, pg_queue - 1) == 1023


def test_tm_queue_the_port_lacks_is_refused_before_any_write(
    sw: BfrtSwitch, fake: FakeBfrtGrpc, profile: HwProfile
) -> None:
    queues = profile.min_queues_per_port
    with pytest.raises(WriteError, match=f"{queues} queues"):
        sw.write([threshold(1, 10), TmQueueWrite(port=0, queue=queues, dwrr_weight=5)])
    assert fake.writes() == []


def test_register_reads_per_pipe(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    sw.write([RegisterWrite(VQ_USED, 3, 7)])
    assert fake.register(VQ_USED, 3) == [7, 7, 7, 7]
    fake.set_register(VQ_USED, 3, 40, pipe=2)
    assert sw.read_register_pipes(VQ_USED, 3) == [7, 7, 40, 7]
    assert sw.read_register(VQ_USED, 3) == 7 + 7 + 40 + 7
    assert sw.read_register(VQ_USED, 3, pipe=1) == 7


def test_counter_reads_sum_the_pipes(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    fake.count(CLASS_COUNTERS, 5, packets=3, nbytes=300, pipe=0)
    fake.count(CLASS_COUNTERS, 5, packets=2, nbytes=128, pipe=3)
    assert sw.read_counter(CLASS_COUNTERS, 5) == (5, 428)
    # A packets-only counter has no byte field.
    assert sw.read_counter("SwitchIngress.trust.untrusted_feedback_drops", 1) == (0, 0)


def test_many_cells_are_read_in_one_request_per_table(
    sw: BfrtSwitch, fake: FakeBfrtGrpc, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A control cycle reads every class's cells: one request per table (the
    # largest table fits one; issue 50 item 5), not one per cell, each cell
    # still the sum over the pipes; past READ_BATCH keys, one per batch.
    indices = list(range(1, 1000, 2))[::-1] + list(range(1000, 1023))
    assert len(indices) <= READ_BATCH
    for i in (1, 999, 1002):
        fake.count(CLASS_COUNTERS, i, packets=i, nbytes=2 * i, pipe=1)
    fake.set_register(VQ_USED, 999, 40, pipe=3)
    before = len(fake.calls)
    got = sw.read_counters(CLASS_COUNTERS, indices)
    regs = sw.read_registers(VQ_USED, indices)
    reads = [c for c in fake.calls[before:] if c.rpc == "read"]
    assert [(c.table, c.count) for c in reads] == [
        (f"pipe.{CLASS_COUNTERS}", len(indices)),
        (f"pipe.{VQ_USED}", len(indices)),
    ]
    by_index = dict(zip(indices, got, strict=True))
    assert by_index[999] == (999, 1998)
    assert by_index[1002] == (1002, 2004)
    assert by_index[3] == (0, 0)
    assert dict(zip(indices, regs, strict=True))[999] == 40
    assert sum(regs) == 40
    monkeypatch.setattr(p4tables, "READ_BATCH", 256)
    before = len(fake.calls)
    assert sw.read_registers(VQ_USED, indices) == regs
    reads = [c for c in fake.calls[before:] if c.rpc == "read"]
    assert [c.count for c in reads] == [256, 256, len(indices) - 512]


def test_a_batched_read_refuses_an_index_before_any_request(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    before = len(fake.calls)
    with pytest.raises(P4ModelError, match="1024"):
        sw.read_registers(VQ_USED, [1, 2, 1024])
    assert len(fake.calls) == before


def test_mirror_session_add_modify_delete(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    sw.write([MirrorSessionWrite(sid=5, port=9, max_pkt_len=64)])
    sw.write([MirrorSessionWrite(sid=5, port=10, direction="BOTH", queue=7, icos=6)])
    assert fake.mirror_sessions()[5] == (
        "$normal",
        {
            "$session_enable": True,
            "$direction": "BOTH",
            "$ucast_egress_port": 10,
            "$ucast_egress_port_valid": True,
            "$max_pkt_len": 0,
            "$egress_port_queue": 7,
            "$ingress_cos": 6,
        },
    )
    assert [c.op for c in fake.writes()] == ["INSERT", "MODIFY"]
    sw.write([MirrorSessionWrite(sid=5, port=10, delete=True)])
    assert fake.mirror_sessions() == {}


def test_fake_checks_names_and_widths_like_the_server(fake: FakeBfrtGrpc) -> None:
    client = fake.ClientInterface("localhost:50052", client_id=0, device_id=0)
    client.bind_pipeline_config(PROGRAM)
    info = client.bfrt_info_get(PROGRAM)
    with pytest.raises(KeyError):
        info.table_get("SwitchEgress.nope")
    t = info.table_get(ECN)
    with pytest.raises(KeyError, match="klass"):
        t.make_key([fake.KeyTuple("hdr.bridged.klass", 1)])
    with pytest.raises(KeyError, match=r"SwitchEgress\.nope"):
        t.make_data([], "SwitchEgress.nope")
    key = t.make_key([fake.KeyTuple("hdr.bridged.class_id", 70000), fake.KeyTuple(PIPE, 0)])
    data = t.make_data([], "SwitchIngress.no_threshold")
    with pytest.raises(fake.BfruntimeReadWriteRpcException) as err:
        t.entry_add(fake.Target(), [key], [data])
    ((idx, error),) = err.value.sub_errors_get()
    assert idx == 0
    assert "hdr.bridged.class_id" in error.message
    assert "16 bits" in error.message


def test_fake_rollback_is_per_call(fake: FakeBfrtGrpc) -> None:
    client = fake.ClientInterface("localhost:50052", client_id=0, device_id=0)
    client.bind_pipeline_config(PROGRAM)
    t = client.bfrt_info_get(PROGRAM).table_get(ECN)
    keys = [
        t.make_key([fake.KeyTuple("hdr.bridged.class_id", c), fake.KeyTuple(PIPE, 0)])
        for c in (1, 2, 1)
    ]
    datas = [t.make_data([], "SwitchIngress.no_threshold") for _ in keys]
    wr = fake.bfruntime_pb2.WriteRequest
    with pytest.raises(fake.BfruntimeReadWriteRpcException):
        t.entry_add(fake.Target(), keys, datas, atomicity=wr.ROLLBACK_ON_ERROR)
    assert fake.entries(ECN) == {}
    with pytest.raises(fake.BfruntimeReadWriteRpcException):
        t.entry_add(fake.Target(), keys, datas, atomicity=wr.CONTINUE_ON_ERROR)
    assert len(fake.entries(ECN)) == 2


def test_sde_missing_without_bfrt_grpc(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, profile: HwProfile
) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "tofino" / "bfrt_grpc").mkdir(parents=True)
    monkeypatch.setenv("SDE_INSTALL", str(tmp_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    # None in sys.modules makes the import fail even where an SDE is installed.
    monkeypatch.setitem(sys.modules, "bfrt_grpc", None)
    with pytest.raises(SdeMissing, match="SDE_INSTALL"):
        BfrtSwitch(PROGRAM, profile)
    assert str(site / "tofino") in sys.path
    assert str(site / "tofino" / "bfrt_grpc") in sys.path
    monkeypatch.delenv("SDE_INSTALL")
    with pytest.raises(SdeMissing, match="SDE_INSTALL is not set"):
        BfrtSwitch(PROGRAM, profile)


def test_client_is_imported_from_sde_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, profile: HwProfile
) -> None:
    pkg = tmp_path / "lib" / "python3.11" / "site-packages" / "tofino" / "bfrt_grpc"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "client.py").write_text("FROM_SDE = True\n")
    monkeypatch.setenv("SDE_INSTALL", str(tmp_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("bfrt_grpc", "bfrt_grpc.client"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    sw = BfrtSwitch(PROGRAM, profile)
    assert sw.gc.FROM_SDE is True
    for name in ("bfrt_grpc", "bfrt_grpc.client"):
        sys.modules.pop(name, None)


def test_tm_priority_is_written_alone_and_rolled_back(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    sw.write([TmQueueWrite(port=4, queue=0, max_priority=7)])
    assert sw.read_tm_priority(4, 0) == 7
    assert sw.read_tm_weight(4, 0) == 1023  # the weight was not touched (power-on)
    fake.fail_write(table=rates(1, 1).table, after=0)
    with pytest.raises(WriteError):
        sw.write([TmQueueWrite(port=4, queue=0, max_priority=2), rates(1, 5)])
    assert sw.read_tm_priority(4, 0) == 7
    with pytest.raises(WriteError, match="max_priority 8 invalid"):
        sw.write([TmQueueWrite(port=4, queue=1, max_priority=8)])
