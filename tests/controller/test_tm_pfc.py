"""TmPfcWrite on both backends (issue 16 item 2): the same writes land on
the model and on the fake SDE's tm.port.flowcontrol / tm.queue.cfg rows
(open-p4studio's bf_rt_tm_tf1.json names, types and choices); both refuse
the same bad values with nothing half-applied; the pause-time counter the
watchdog reads is $PORT_STAT's $ReceivePri<cos>Pause1USCount."""

from __future__ import annotations

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.diff import diff_one
from bfrt_controller.errors import WriteError
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
        assert sw.read_tm_pfc(port, 0) == ("NONE", "NONE", 0)
        on = TmPfcWrite(port, cos=3, queues=(0,))
        assert diff_one(sw, on) is not None
        sw.write([on])
        assert sw.read_tm_pfc(port, 0) == ("PFC", "PFC", 3)
        assert sw.read_tm_pfc(port, 1) == ("PFC", "PFC", 0)  # not a lossless queue
        assert diff_one(sw, on) is None
        if fake is not None:
            assert fake.tm_row("tm.port.flowcontrol", 1, port) == {
                "mode_tx": "PFC",
                "mode_rx": "PFC",
            }
            pipe, pg_id, pg_queue = fake.port_queue(port, 0)
            assert fake.tm_row("tm.queue.cfg", pipe, pg_id, pg_queue)["pfc_cos"] == 3
            tables = [(c.table, c.pipe) for c in fake.writes()]
            assert tables == [(f"{tf}.tm.port.flowcontrol", 1), (f"{tf}.tm.queue.cfg", 1)]
        # The watchdog's break: keep sending pauses, stop obeying them.
        sw.write([TmPfcWrite(port, cos=3, queues=(0,), honour=False)])
        assert sw.read_tm_pfc(port, 0) == ("PFC", "NONE", 0)


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (TmPfcWrite(4, cos=0, queues=(0,)), "pfc_cos 0 invalid"),
        (TmPfcWrite(4, cos=8, queues=(0,)), "pfc_cos 8 invalid"),
        (TmPfcWrite(4, cos=3, queues=(0, 0)), "a queue is named twice"),
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
        assert sw.read_tm_pfc(4, 0) == ("NONE", "NONE", 0)
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
    assert fake.tm_row("tm.port.flowcontrol", 0, 4) == {"mode_tx": "NONE", "mode_rx": "NONE"}


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
        assert sw.read_tm_pfc(4, 0) == ("PFC", "PFC", 3)
        assert sw.read_tm_pfc(4, 1) == ("PFC", "PFC", 3)


def test_received_pause_time_per_cos() -> None:
    for sw, fake in backends("tofino"):
        assert sw.read_port_rx_pause_us(4, 3) == 0
        if fake is not None:
            fake.rx_paused(4, 3, 1500)
        else:
            assert isinstance(sw, ModelSwitch)
            sw.port_rx_pause_us[(4, 3)] = 1500
        assert (sw.read_port_rx_pause_us(4, 3), sw.read_port_rx_pause_us(4, 2)) == (1500, 0)
        with pytest.raises(Exception, match="ReceivePri8"):
            sw.read_port_rx_pause_us(4, 8)
