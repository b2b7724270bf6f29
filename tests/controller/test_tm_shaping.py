# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TmShapingWrite on both backends: the same writes land on the model's TM
and on the fake SDE's tm.{port,queue}.sched_shaping / sched_cfg tables; both
refuse the same bad values, nothing half-applied."""

from __future__ import annotations

import pytest

from bfrt_controller.errors import WriteError
from bfrt_controller.switch import Switch, TmQueueWrite, TmShapingWrite
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends

PROGRAM = "bfcc"


def backends(chip: str) -> list[tuple[Switch, FakeBfrtGrpc | None]]:
    return both_backends(PROGRAM, chip)


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_port_shaping_on_and_off(chip: str) -> None:
    tf = "tf2" if chip == "tofino2" else "tf1"
    port = (1 << 7) | 4  # pipe 1
    for sw, fake in backends(chip):
        assert sw.read_tm_shaping(port) is None
        sw.write([TmShapingWrite(port, max_rate_kbps=7_500_000, max_burst_bytes=4500)])
        assert sw.read_tm_shaping(port) == 7_500_000
        assert sw.read_tm_shaping(port, 1) is None  # the queues are not shaped
        if fake is not None:
            assert fake.tm_row("tm.port.sched_shaping", 1, port) == {
                "unit": "BPS",
                "provisioning": "LOWER",
                "max_rate": 7_500_000,
                "max_burst_size": 4500,
            }
            assert fake.tm_row("tm.port.sched_cfg", 1, port) == {"max_rate_enable": True}
            tables = [(c.table, c.pipe) for c in fake.writes()]
            assert tables == [(f"{tf}.tm.port.sched_shaping", 1), (f"{tf}.tm.port.sched_cfg", 1)]
        sw.write([TmShapingWrite(port)])
        assert sw.read_tm_shaping(port) is None
        if fake is not None:
            assert fake.tm_row("tm.port.sched_cfg", 1, port) == {"max_rate_enable": False}


def test_queue_shaping_goes_to_the_ports_pg_queue() -> None:
    for sw, fake in backends("tofino"):
        sw.write([TmShapingWrite(4, queue=1, max_rate_kbps=5000)])
        assert (sw.read_tm_shaping(4, 1), sw.read_tm_shaping(4, 2), sw.read_tm_shaping(4)) == (
            5000,
            None,
            None,
        )
        if fake is not None:
            pipe, pg_id, pg_queue = fake.port_queue(4, 1)
            assert fake.tm_row("tm.queue.sched_shaping", pipe, pg_id, pg_queue)["max_rate"] == 5000
            assert fake.tm_queue(pipe, pg_id, pg_queue)["max_rate_enable"] is True
            # Enabling the shaper left the queue's scheduling alone.
            assert fake.tm_queue(pipe, pg_id, pg_queue)["dwrr_weight"] == 1023


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (TmShapingWrite(4, max_rate_kbps=0), "max_rate 0 kb/s invalid"),
        (TmShapingWrite(4, max_rate_kbps=1 << 32), "max_rate 4294967296 kb/s invalid"),
        (TmShapingWrite(4, max_rate_kbps=100, max_burst_bytes=0), "max_burst_size 0 invalid"),
        (TmShapingWrite(4, queue=128, max_rate_kbps=100), "queue 128 invalid"),
        (TmShapingWrite(512, max_rate_kbps=100), "port 512 invalid"),
    ],
)
def test_bad_shaping_is_refused_by_both_and_nothing_is_written(
    write: TmShapingWrite, message: str
) -> None:
    for sw, fake in backends("tofino"):
        before = sw.read_tm_priority(4, 1)
        with pytest.raises(WriteError, match=message):
            sw.write([TmQueueWrite(4, 1, max_priority=5), write])
        assert sw.read_tm_priority(4, 1) == before
        assert sw.read_tm_shaping(4) is None
        if fake is not None:
            assert fake.writes() == []


def test_a_port_the_device_lacks_is_refused_before_any_write() -> None:
    """Port 100 is valid as a number on Tofino but not a port of pipe 0 (72
    ports a pipe): the SDE has no row for it, and tm.port.cfg says so first."""
    sw, fake = backends("tofino")[1]
    assert fake is not None
    with pytest.raises(WriteError, match="dev_port 100"):
        sw.write([TmShapingWrite(100, max_rate_kbps=1000)])
    assert fake.writes() == []


def test_a_refused_batch_puts_the_shaper_back() -> None:
    for sw, fake in backends("tofino"):
        sw.write([TmShapingWrite(4, max_rate_kbps=9000)])
        if fake is not None:
            fake.fail_write(table="tf1.tm.port.sched_cfg", after=0)
            bad = [TmShapingWrite(4, max_rate_kbps=4000)]
        else:
            bad = [TmShapingWrite(4, max_rate_kbps=4000), TmShapingWrite(4, max_rate_kbps=0)]
        with pytest.raises(WriteError):
            sw.write(bad)
        assert sw.read_tm_shaping(4) == 9000
