# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""RegisterClear: a whole register back to its initial value by one request
(BF-Runtime's delete with no key, which bf_rt runs as tableClear), on both
backends, all or nothing like every other write (PMQECN clears its idle
sojourn half this way each cycle)."""

from __future__ import annotations

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.diff import diff_one
from bfrt_controller.errors import WriteError
from bfrt_controller.switch import EntryWrite, RegisterClear, RegisterWrite
from doubles import FakeBfrtGrpc
from hw_profiles import HwProfile, load_profile
from models.switch.core import Match

VQ_USED = "SwitchIngress.vq_used"
VQ_LEVEL = "SwitchIngress.vq_level"
RATES = "SwitchIngress.class_rates"


@pytest.fixture
def profile() -> HwProfile:
    return load_profile("tofino")


def rates(class_id: int, rate: int) -> EntryWrite:
    return EntryWrite(
        RATES,
        {"hdr.bridged.class_id": Match(class_id)},
        "SwitchIngress.set_rates",
        {"rate": rate, "target_rate": rate // 2},
    )


def _spread(fake: FakeBfrtGrpc) -> None:
    """Cells that differ from pipe to pipe, as the data plane leaves them."""
    for pipe in range(4):
        fake.set_register(VQ_USED, 3, 10 + pipe, pipe=pipe)
        fake.set_register(VQ_USED, 1023, 7 * pipe, pipe=pipe)


def test_a_clear_is_one_keyless_delete_and_reads_nothing_first(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    _spread(fake)
    before = len(fake.calls)
    sw.write([RegisterClear(VQ_USED)])
    calls = fake.calls[before:]
    # The batch's only call: a refusal the switch undoes itself, so no prior is read.
    assert [(c.rpc, c.table, c.op, c.count) for c in calls] == [
        ("write", f"pipe.{VQ_USED}", "DELETE", 1)
    ]
    for index in (3, 1023):
        assert fake.register(VQ_USED, index) == [0, 0, 0, 0]


def test_a_clear_before_a_refused_call_is_put_back_pipe_by_pipe(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    _spread(fake)
    before = fake.snapshot()
    fake.fail_write(RATES)
    with pytest.raises(WriteError) as err:
        sw.write([RegisterClear(VQ_USED), RegisterWrite(VQ_LEVEL, 2, 5), rates(1, 10)])
    assert err.value.index == 2
    assert fake.snapshot() == before


def test_a_clear_of_an_unknown_register_is_refused_before_anything_is_sent(
    sw: BfrtSwitch, fake: FakeBfrtGrpc
) -> None:
    before = fake.snapshot()
    with pytest.raises(WriteError) as err:
        sw.write([RegisterWrite(VQ_LEVEL, 2, 5), RegisterClear("SwitchIngress.no_such")])
    assert err.value.index == 1
    assert "no_such" in str(err.value)
    assert fake.snapshot() == before


def test_the_model_clears_every_pipe_and_undoes_a_refused_batch() -> None:
    sw = ModelSwitch("pmqecn", load_profile("tofino"), 4)
    used = sw.model.register(VQ_USED)
    used.put_pipes(3, [10, 11, 12, 13])
    with pytest.raises(WriteError):
        sw.write([RegisterClear(VQ_USED), RegisterWrite("SwitchIngress.nope", 0, 1)])
    assert used.read_pipes(3) == [10, 11, 12, 13]
    sw.write([RegisterClear(VQ_USED)])
    assert used.read_pipes(3) == [0, 0, 0, 0]
    # The data plane keeps writing the pipe it runs in after a clear.
    used.write(3, 9)
    assert sum(used.read_pipes(3)) == 9


def test_a_clear_is_not_configured_state_to_diff() -> None:
    sw = ModelSwitch("pmqecn", load_profile("tofino"))
    with pytest.raises(TypeError, match="not configured state"):
        diff_one(sw, RegisterClear(VQ_USED))


@pytest.mark.parametrize("fast", [True, False])
def test_by_table_keeps_a_clear_in_order_with_its_registers_writes(
    fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Grouping a batch by table may move writes of different tables past
    each other, never a register's clear past its own cell writes."""
    from bfrt_controller.common import by_table
    from models import cycle_speedups

    monkeypatch.setattr(cycle_speedups, "ENABLED", fast)
    first, clear, then = (
        RegisterWrite(VQ_USED, 1, 5),
        RegisterClear(VQ_USED),
        RegisterWrite(VQ_USED, 2, 6),
    )
    grouped = by_table([first, RegisterWrite(VQ_LEVEL, 2, 5), clear, rates(1, 10), then])
    assert [w for w in grouped if w in (first, clear, then)] == [first, clear, then]
