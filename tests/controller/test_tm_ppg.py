# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TmPpgWrite on both backends (issue 16 item 2): the lossless PPG that
generates PFC, on tm.ppg.cfg as open-p4studio's bf_rt_tm_tf1.json declares
it (ppg_id 1..255 allocated per pipe by entry add with action dev_port;
xoff as pool_max_cells with dynamic_baf DISABLE, xoff - xon as
hysteresis_cells, the headroom as pfc_skid_max_cells). Same refusals on
both, nothing half-applied. The hysteresis reads back as the TM keeps it,
in 8-cell units and at least 32 cells (issue 34 item 9), and a re-push of
what the switch holds already writes nothing."""

from __future__ import annotations

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.diff import diff_one
from bfrt_controller.errors import WriteError
from bfrt_controller.switch import IDENTITY_COS_TO_ICOS as IDENTITY
from bfrt_controller.switch import Switch, TmPfcWrite, TmPpgWrite
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends


def backends(chip: str = "tofino") -> list[tuple[Switch, FakeBfrtGrpc | None]]:
    return both_backends("p4qcn", chip)


# Hysteresis 42 cells: the TM keeps 40 (5 units of 8), so xon reads 142.
PPG = TmPpgWrite(5, (1 << 7) | 4, icos=(0,), xoff_cells=182, xon_cells=140, headroom_cells=52)
PPG_HELD = TmPpgWrite(5, (1 << 7) | 4, icos=(0,), xoff_cells=182, xon_cells=142, headroom_cells=52)


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_add_modify_delete(chip: str) -> None:
    tf = "tf2" if chip == "tofino2" else "tf1"
    for sw, fake in backends(chip):
        assert sw.read_tm_ppg(PPG.port, 5) is None
        assert diff_one(sw, PPG) is not None
        sw.write([PPG])
        assert sw.read_tm_ppg(PPG.port, 5) == PPG_HELD
        assert diff_one(sw, PPG) is None
        if fake is not None:
            held = fake.switch.state[f"{tf}.tm.ppg.cfg"][(1, 5)]
            assert (held["pool_max_cells"], held["hysteresis_cells"], held["dynamic_baf"]) == (
                182,
                40,
                "DISABLE",
            )
            assert (held["pfc_enable"], held["pfc_skid_max_cells"], held["icos_0"]) == (
                True,
                52,
                True,
            )
            assert [(c.table, c.pipe) for c in fake.writes()] == [(f"{tf}.tm.ppg.cfg", 1)]
        # A re-push of what the switch holds (rounded) writes nothing.
        calls = len(fake.writes()) if fake is not None else 0
        sw.write([PPG])
        if fake is not None:
            assert len(fake.writes()) == calls
        # A change is a modify, not a second allocation; a hysteresis under
        # the TM's least (10 < 32 cells) reads back as 32.
        lower = TmPpgWrite(5, PPG.port, (0,), 100, 90, 52)
        sw.write([lower])
        assert sw.read_tm_ppg(PPG.port, 5) == TmPpgWrite(5, PPG.port, (0,), 100, 68, 52)
        assert diff_one(sw, lower) is None
        sw.write([TmPpgWrite(5, PPG.port, delete=True)])
        assert sw.read_tm_ppg(PPG.port, 5) is None


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (TmPpgWrite(0, 4, (0,), 10, 5, 5), "ppg_id 0 invalid"),
        (TmPpgWrite(256, 4, (0,), 10, 5, 5), "ppg_id 256 invalid"),
        (TmPpgWrite(1, 4, (), 10, 5, 5), "names no icos"),
        (TmPpgWrite(1, 4, (8,), 10, 5, 5), "icos_8 invalid"),
        (TmPpgWrite(1, 4, (0,), 10, 11, 5), "xon_cells 11 above xoff_cells 10"),
        (TmPpgWrite(1, 4, (0,), 1 << 32, 5, 5), "xoff_cells 4294967296 invalid"),
        (TmPpgWrite(1, 4, (0,), 10, 5, 5, pool="IG_APP_POOL_9"), "pool_id"),
        (TmPpgWrite(1, 512, (0,), 10, 5, 5), "dev_port 512 invalid"),
    ],
)
def test_bad_ppg_is_refused_by_both(write: TmPpgWrite, message: str) -> None:
    for sw, fake in backends():
        with pytest.raises(WriteError, match=message):
            sw.write([TmPfcWrite(4, 3, (0,)), write])
        assert sw.read_tm_pfc(4, 0) == ("NONE", IDENTITY, 0)
        if fake is not None:
            assert fake.writes() == []


def test_an_icos_belongs_to_one_ppg_of_a_port() -> None:
    for sw, _ in backends():
        sw.write([TmPpgWrite(1, 4, (0, 1), 10, 5, 5)])
        with pytest.raises(WriteError, match="icos"):
            sw.write([TmPpgWrite(2, 4, (1,), 10, 5, 5)])
        assert sw.read_tm_ppg(4, 2) is None
        sw.write([TmPpgWrite(2, 5, (1,), 10, 5, 5)])  # another port may


def test_a_refused_batch_frees_the_ppg_it_added() -> None:
    for sw, fake in backends():
        if fake is not None:
            fake.fail_write(table="tf1.tm.port.flowcontrol", after=0)
            bad = [PPG, TmPfcWrite(PPG.port, 3, (0,))]
        else:
            bad = [PPG, TmPfcWrite(PPG.port, 0, (0,))]
        with pytest.raises(WriteError):
            sw.write(bad)
        assert sw.read_tm_ppg(PPG.port, 5) is None


def test_the_fake_refuses_what_the_sde_refuses() -> None:
    sw, fake = backends()[1]
    assert fake is not None and isinstance(sw, BfrtSwitch)
    gc = sw.gc
    t = sw._bfrt().table_get("tf1.tm.ppg.cfg")
    key = t.make_key([gc.KeyTuple("ppg_id", 7)])
    # An add without dev_port, a dev_port of another pipe, an unknown BAF.
    with pytest.raises(Exception, match="dev_port is required"):
        t.entry_add(sw._target(0), [key], [t.make_data([gc.DataTuple("pool_max_cells", 5)])])
    with pytest.raises(Exception, match="not in pipe 0"):
        data = t.make_data([gc.DataTuple("dev_port", (1 << 7) | 4)], "dev_port")
        t.entry_add(sw._target(0), [key], [data])
    with pytest.raises(Exception, match="dynamic_baf"):
        data = t.make_data(
            [gc.DataTuple("dev_port", 4), gc.DataTuple("dynamic_baf", str_val="99%")], "dev_port"
        )
        t.entry_add(sw._target(0), [key], [data])
    with pytest.raises(Exception, match="xoff_cells"):
        t.make_data([gc.DataTuple("xoff_cells", 5)])
    assert fake.switch.state["tf1.tm.ppg.cfg"] == {}
