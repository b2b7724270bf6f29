# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TmPfcWrite on both backends (issue 16 item 2, issue 34 items 1-2): the
same writes land on the model and on the fake SDE's tm.port.flowcontrol /
tm.queue.cfg rows (open-p4studio's bf_rt_tm_tf1.json names, types, choices
and read-only flags); both refuse the same bad values with nothing
half-applied; the pause-time counter the watchdog reads is $PORT_STAT's
$ReceivePri<cos>Pause1USCount, read from the MAC."""

from __future__ import annotations

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.diff import diff_one
from bfrt_controller.errors import WriteError
from bfrt_controller.switch import IDENTITY_COS_TO_ICOS as IDENTITY
from bfrt_controller.switch import Switch, TmPfcWrite, TmQueueWrite
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends

PROGRAM = "p4qcn"


def backends(chip: str) -> list[tuple[Switch, FakeBfrtGrpc | None]]:
    return both_backends(PROGRAM, chip)


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_pfc_on_then_honouring_off(chip: str) -> None:
    tf = "tf2" if chip == "tofino2" else "tf1"
    port = (1 << 7) | 4  # pipe 1
    for sw, fake in backends(chip):
        assert sw.read_tm_pfc(port, 0) == ("NONE", IDENTITY, 0)
        on = TmPfcWrite(port, cos=3, queues=(0,))
        assert diff_one(sw, on) is not None
        sw.write([on])
        assert sw.read_tm_pfc(port, 0) == ("PFC", IDENTITY, 3)
        assert sw.read_tm_pfc(port, 1) == ("PFC", IDENTITY, 0)  # not a lossless queue
        assert diff_one(sw, on) is None
        if fake is not None:
            # mode_rx is read-only: never written, it stays as the chip powered on.
            assert fake.tm_row("tm.port.flowcontrol", 1, port) == {
                "mode_tx": "PFC",
                "mode_rx": "PFC" if chip == "tofino2" else "NONE",
                "cos_to_icos": list(IDENTITY),
            }
            pipe, pg_id, pg_queue = fake.port_queue(port, 0)
            assert fake.tm_row("tm.queue.cfg", pipe, pg_id, pg_queue)["pfc_cos"] == 3
            tables = [(c.table, c.pipe) for c in fake.writes()]
            assert tables == [(f"{tf}.tm.port.flowcontrol", 1), (f"{tf}.tm.queue.cfg", 1)]
        # The watchdog's break: keep sending pauses, stop obeying them by
        # moving the queue to a CoS nobody pauses.
        sw.write([TmPfcWrite(port, cos=3, queues=(0,), honour=False, ignore_cos=5)])
        assert sw.read_tm_pfc(port, 0) == ("PFC", IDENTITY, 5)
        if fake is not None:
            assert all("mode_rx" not in c.fields for c in fake.writes())


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (TmPfcWrite(4, cos=0, queues=(0,)), "pfc_cos 0 invalid"),
        (TmPfcWrite(4, cos=8, queues=(0,)), "pfc_cos 8 invalid"),
        (TmPfcWrite(4, cos=3, queues=(0, 0)), "a queue is named twice"),
        (TmPfcWrite(4, cos=3, queues=(0,), ignore_cos=3), "ignore_cos 3 is the lossless CoS"),
        (TmPfcWrite(4, cos=3, queues=(0,), ignore_cos=8), "pfc_cos 8 .ignore_cos. invalid"),
        (TmPfcWrite(4, cos=3, queues=(128,)), "no queue 128"),
        (TmPfcWrite(512, cos=3), "dev_port 512 invalid"),
    ],
)
def test_bad_pfc_is_refused_by_both_and_nothing_is_written(write: TmPfcWrite, message: str) -> None:
    for sw, fake in backends("tofino"):
        before = sw.read_tm_priority(4, 1)
        with pytest.raises(WriteError, match=message):
            sw.write([TmQueueWrite(4, 1, max_priority=5), write])
        assert sw.read_tm_priority(4, 1) == before
        assert sw.read_tm_pfc(4, 0) == ("NONE", IDENTITY, 0)
        if fake is not None:
            assert fake.writes() == []


def test_the_fake_refuses_what_the_sde_refuses() -> None:
    """Past our own checks, the SDE's: a mode outside the JSON's choices, a
    field the table lacks, a value beyond uint8."""
    sw, fake = backends("tofino")[1]
    assert fake is not None and isinstance(sw, BfrtSwitch)
    gc = sw.gc
    fc = sw._bfrt().table_get("tf1.tm.port.flowcontrol")
    key = fc.make_key([gc.KeyTuple("dev_port", 4)])
    with pytest.raises(Exception, match="XOFF"):
        bad = fc.make_data([gc.DataTuple("mode_tx", str_val="XOFF")])
        fc.entry_mod(sw._target(0), [key], [bad])
    with pytest.raises(Exception, match="xoff_cells"):
        fc.entry_mod(sw._target(0), [key], [fc.make_data([gc.DataTuple("xoff_cells", 5)])])
    qc = sw._bfrt().table_get("tf1.tm.queue.cfg")
    qkey = qc.make_key([gc.KeyTuple("pg_id", 1), gc.KeyTuple("pg_queue", 0)])
    with pytest.raises(Exception, match="pfc_cos"):
        qc.entry_mod(sw._target(0), [qkey], [qc.make_data([gc.DataTuple("pfc_cos", 256)])])
    fc_row = fake.tm_row("tm.port.flowcontrol", 0, 4)
    assert (fc_row["mode_tx"], fc_row["cos_to_icos"]) == ("NONE", list(IDENTITY))


def test_a_refused_batch_puts_pfc_back() -> None:
    for sw, fake in backends("tofino"):
        sw.write([TmPfcWrite(4, cos=3, queues=(0, 1))])
        if fake is not None:
            fake.fail_write(table="tf1.tm.queue.cfg", after=1)
            bad = [TmPfcWrite(4, cos=5, queues=(0, 1), generate=False)]
        else:
            bad = [TmPfcWrite(4, cos=5, queues=(0, 1)), TmPfcWrite(4, cos=0)]
        with pytest.raises(WriteError):
            sw.write(bad)
        assert sw.read_tm_pfc(4, 0) == ("PFC", IDENTITY, 3)
        assert sw.read_tm_pfc(4, 1) == ("PFC", IDENTITY, 3)


def test_received_pause_time_per_cos() -> None:
    for sw, fake in both_backends(PROGRAM, "tofino", ports=(4,)):
        assert sw.read_port_rx_pause_us(4, 3) == 0
        if fake is not None:
            fake.rx_paused(4, 3, 1500)
        else:
            assert isinstance(sw, ModelSwitch)
            sw.port_rx_pause_us[(4, 3)] = 1500
        assert (sw.read_port_rx_pause_us(4, 3), sw.read_port_rx_pause_us(4, 2)) == (1500, 0)
        with pytest.raises(Exception, match="ReceivePri8"):
            sw.read_port_rx_pause_us(4, 8)


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_the_fake_refuses_mode_rx_which_the_sde_skips(chip: str) -> None:
    """Issue 34 item 1: tm.port.flowcontrol mode_rx is "read_only": true
    (bf_rt_tm_tf1.json line 1485, tf2 line 1472); the switch skips it without
    an error (bf_rt_tm_table_impl_port.cpp lines 271-279), the fake refuses
    it. The backend used to write it (so an apply failed here) and now
    writes mode_tx and cos_to_icos only."""
    _, (sw, fake) = backends(chip)
    assert fake is not None and isinstance(sw, BfrtSwitch)
    tf = "tf2" if chip == "tofino2" else "tf1"
    fc = sw._bfrt().table_get(f"{tf}.tm.port.flowcontrol")
    key = fc.make_key([sw.gc.KeyTuple("dev_port", 8)])
    with pytest.raises(Exception, match="mode_rx is read-only"):
        data = fc.make_data([sw.gc.DataTuple("mode_rx", str_val="NONE")])
        fc.entry_mod(sw._target(0), [key], [data])
    sw.write([TmPfcWrite(8, cos=3, queues=(0,), honour=False)])
    written = [c.fields for c in fake.writes() if c.table.endswith("tm.port.flowcontrol")]
    assert written[-1] == ("cos_to_icos", "mode_tx")


def test_the_fake_checks_cos_to_icos_as_the_sde_does() -> None:
    """bf_rt_tm_table_impl_port.cpp BfRtTMPortFlowCtrlTable::tableSetField:
    exactly icos_cnt (8) items (line 1563), each below 8 (line 1589)."""
    _, (sw, fake) = backends("tofino")
    assert fake is not None and isinstance(sw, BfrtSwitch)
    fc = sw._bfrt().table_get("tf1.tm.port.flowcontrol")
    key = fc.make_key([sw.gc.KeyTuple("dev_port", 4)])
    for bad, why in (([0] * 7, "must have 8 items"), ([0] * 7 + [8], "invalid cos_to_icos.7.=8")):
        with pytest.raises(Exception, match=why):
            data = fc.make_data([sw.gc.DataTuple("cos_to_icos", int_arr_val=bad)])
            fc.entry_mod(sw._target(0), [key], [data])
    assert fake.tm_row("tm.port.flowcontrol", 0, 4)["cos_to_icos"] == list(IDENTITY)


def test_pause_time_is_read_from_the_mac_not_the_shadow() -> None:
    """Issue 34 item 6: without from_hw, `$PORT_STAT` answers from a shadow
    refreshed every 1000 ms (bf_pm.h line 28; bf_rt_port_table_impl.cpp
    line 1846). The fake's shadow moves only on poll_port_stats(): a read
    that sees the pause time at once came from the MAC."""
    _, (sw, fake) = both_backends(PROGRAM, "tofino", ports=(4,))
    assert fake is not None
    fake.rx_paused(4, 3, 1500)
    fake.transmit(4, 9000)
    assert sw.read_port_rx_pause_us(4, 3) == 1500
    assert sw.read_port_tx_bytes(4) == 9000
    reads = [c for c in fake.calls if c.rpc == "read" and c.table == "$PORT_STAT"]
    assert reads and fake.switch.last_read_from_hw
