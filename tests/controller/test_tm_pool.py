# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TmPoolWrite on both backends (issue 16 item 2): the buffer PFC draws on,
tm.pool.cfg size_cells and tm.pool.app_pfc pfc_limit_cells as open-p4studio's
bf_rt_tm_tf1.json declares them (rows that always exist, modified only) and
traffic_mgr refuses them (more cells than the buffer, a PFC limit on an
egress pool or a cos of 8). Same refusals on both, nothing half-applied;
and the mirror session's feedback queue and iCoS. PFC limits read back in
the TM's 8-cell units and a diff compares them so (issue 34 item 9)."""

from __future__ import annotations

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.diff import diff_one
from bfrt_controller.errors import WriteError
from bfrt_controller.switch import IDENTITY_COS_TO_ICOS as IDENTITY
from bfrt_controller.switch import MirrorSessionWrite, Switch, TmPfcWrite, TmPoolWrite
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends
from hw_profiles import load_profile


def backends(chip: str = "tofino") -> list[tuple[Switch, FakeBfrtGrpc | None]]:
    return both_backends("p4qcn", chip)


POOL = TmPoolWrite("IG_APP_POOL_1", 100_000, ((3, 182), (4, 200)))
SKID = TmPoolWrite("IG_SKID_POOL", 104)


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_sizes_and_limits_are_written_and_read_back(chip: str) -> None:
    tf = "tf2" if chip == "tofino2" else "tf1"
    for sw, fake in backends(chip):
        assert diff_one(sw, POOL) is not None
        sw.write([SKID, POOL])
        held = sw.read_tm_pool("IG_APP_POOL_1")
        assert held.size_cells == 100_000
        # 182 is not a multiple of 8: the register holds 22 units, 176 cells.
        assert dict(held.pfc_limit_cells)[3] == 176
        assert dict(held.pfc_limit_cells)[4] == 200
        assert sw.read_tm_pool("IG_SKID_POOL").size_cells == 104
        assert diff_one(sw, POOL) is None
        if fake is not None:
            st = fake.switch.state
            assert st[f"{tf}.tm.pool.cfg"][("IG_APP_POOL_1", None)] == 100_000
            assert st[f"{tf}.tm.pool.app_pfc"][("IG_APP_POOL_1", 3)] == 176
            # Only modifies: the rows exist from power-on.
            assert {c.op for c in fake.writes()} == {"MODIFY"}


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (TmPoolWrite("IG_APP_POOL_7", 10), "pool"),
        (TmPoolWrite("EG_APP_POOL_0", None, ((3, 10),)), "no PFC limits"),
        (TmPoolWrite("IG_APP_POOL_0", None, ((8, 10),)), "cos 8 invalid"),
        (TmPoolWrite("IG_APP_POOL_0", 286_721), "size_cells 286721"),
        (TmPoolWrite("IG_APP_POOL_0", None, ((3, 286_721),)), "pfc_limit_cells 286721"),
        (TmPoolWrite("IG_APP_POOL_0"), "sets nothing"),
    ],
)
def test_bad_pool_is_refused_by_both_before_anything(write: TmPoolWrite, message: str) -> None:
    for sw, _ in backends():
        with pytest.raises(WriteError, match=message):
            sw.write([SKID, TmPfcWrite(4, 3, (0,)), write])
        assert sw.read_tm_pfc(4, 0) == ("NONE", IDENTITY, 0)
        assert sw.read_tm_pool("IG_SKID_POOL").size_cells in (None, 0)


def test_a_refused_batch_puts_the_pools_back() -> None:
    for sw, _ in backends():
        sw.write([TmPoolWrite("IG_APP_POOL_0", 50_000, ((3, 100),))])
        before = sw.read_tm_pool("IG_APP_POOL_0")
        with pytest.raises(WriteError, match="pfc_cos 0 invalid"):
            sw.write([POOL, TmPoolWrite("IG_APP_POOL_0", 60_000, ((3, 150),)), TmPfcWrite(4, 0)])
        assert sw.read_tm_pool("IG_APP_POOL_0") == before
        assert dict(sw.read_tm_pool("IG_APP_POOL_1").pfc_limit_cells)[3] == 0


def test_the_fake_refuses_what_the_server_refuses() -> None:
    """Past the backend's own checks: the fake's rows behave as
    bf_rt_tm_table_impl_pool.cpp (no add; cos >= 8 and cells beyond the
    buffer are BF_INVALID_ARG)."""
    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("p4qcn", profile)
    sw = BfrtSwitch("p4qcn", profile, client_module=fake)
    sw.connect()
    t = sw._bfrt().table_get("tf1.tm.pool.app_pfc")
    gc = fake
    target = sw._target()

    def key(pool: str, cos: int) -> object:
        return t.make_key([gc.KeyTuple("pool", pool), gc.KeyTuple("cos", cos)])

    def data(cells: int) -> object:
        return t.make_data([gc.DataTuple("pfc_limit_cells", cells)])

    with pytest.raises(Exception, match="not supported"):
        t.entry_add(target, [key("IG_APP_POOL_0", 3)], [data(10)])
    with pytest.raises(Exception, match="cos is not valid"):
        t.entry_mod(target, [key("IG_APP_POOL_0", 7 + 1)], [data(10)])
    with pytest.raises(Exception, match="pool not valid"):
        t.entry_mod(target, [key("EG_APP_POOL_0", 3)], [data(10)])
    with pytest.raises(Exception, match="above the buffer"):
        t.entry_mod(target, [key("IG_APP_POOL_0", 3)], [data(profile.buffer_cells + 1)])


@pytest.mark.parametrize(("chip", "queue"), [("tofino", 32), ("tofino2", 128)])
def test_mirror_session_queue_and_icos_limits(chip: str, queue: int) -> None:
    """pipe_mgr_mirror_buffer.c: "Egress Port Queue" above 5 / 7 bits,
    "ingress COS" above 3 bits."""
    for sw, _ in backends(chip):
        sw.write([MirrorSessionWrite(11, 4, queue=queue - 1, icos=7)])
        with pytest.raises(WriteError, match="egress_port_queue"):
            sw.write([MirrorSessionWrite(12, 4, queue=queue)])
        with pytest.raises(WriteError, match="ingress_cos"):
            sw.write([MirrorSessionWrite(12, 4, icos=8)])
