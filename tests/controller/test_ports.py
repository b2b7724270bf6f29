# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Front-panel ports: board profiles, config validation, and the `$PORT`
writes on the fake BF-Runtime server and the model backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.errors import ConfigError, WriteError
from bfrt_controller.ports import PortsConfig, check_ports, is_mac_port, port_writes
from bfrt_controller.switch import EntryWrite, PortWrite, Switch
from doubles import FakeBfrtGrpc
from hw_profiles import HwProfile, ProfileError, load_profile
from hw_profiles.boards import BOARD_DIR, known_boards, load_board, load_board_file
from models.switch.core import Match

ECN = "SwitchIngress.ecn_threshold"


@pytest.fixture(params=["tofino"])
def profile(request: pytest.FixtureRequest) -> HwProfile:
    return load_profile(request.param)


def p100(dev_port: int, **kw: object) -> PortWrite:
    args: dict[str, object] = {
        "speed": "BF_SPEED_100G",
        "fec": "BF_FEC_TYP_REED_SOLOMON",
        "lanes": 4,
    }
    args.update(kw)
    return PortWrite(dev_port, **args)  # type: ignore[arg-type]


def bad_entry() -> EntryWrite:
    # threshold_bytes is 24 bits wide on the model and the fake: refused.
    return EntryWrite(
        ECN,
        {"hdr.bridged.class_id": Match(1)},
        "SwitchIngress.set_threshold",
        {"threshold_bytes": 1 << 40, "mark_original": 0},
    )


# ---- board profiles ----------------------------------------------------------


def test_the_three_boards_load_with_their_chip() -> None:
    assert known_boards() == ["tofino-32q", "tofino-64q", "tofino2-32d"]
    b32, b64, t2 = (load_board(n) for n in known_boards())
    assert (b32.chip, b32.connectors, b32.lanes_per_connector) == ("tofino", 32, 4)
    assert (b64.chip, b64.connectors, b64.lanes_per_connector) == ("tofino", 64, 4)
    assert (t2.chip, t2.connectors, t2.lanes_per_connector) == ("tofino2", 32, 8)
    # bf_model_pltfm_porting.c + lld_sku.c: the 32Q SKU's connector 1 is MAC 8
    # (pipe 0, ibuf 7); Mavericks' connector 17 is pipe 1's first port; the
    # Tofino2 front panel starts at device port 8.
    assert b32.dev_port("1/0") == 28 and b32.dev_port("1/3") == 31
    assert b64.dev_port("1/0") == 0 and b64.dev_port("17/0") == 128
    assert t2.dev_port("1/0") == 8 and t2.dev_port("32/7") == 455
    assert "400G" in t2.speeds and "400G" not in b32.speeds


@pytest.mark.parametrize("name", ["tofino-32q", "tofino-64q", "tofino2-32d"])
def test_every_board_lane_is_a_front_panel_port_of_its_chip_once(name: str) -> None:
    board = load_board(name)
    profile = load_profile(board.chip)
    seen = set()
    for c in range(1, board.connectors + 1):
        for lane in range(board.lanes_per_connector):
            dev = board.dev_port(f"{c}/{lane}")
            assert is_mac_port(profile, dev)
            assert board.name_of(dev) == f"{c}/{lane}"
            seen.add(dev)
    assert len(seen) == board.connectors * board.lanes_per_connector


def test_a_board_file_that_gives_a_lane_twice_is_refused(tmp_path: Path) -> None:
    text = (BOARD_DIR / "tofino-32q.yaml").read_text().replace("28, 160", "28, 30", 1)
    path = tmp_path / "tofino-32q.yaml"
    path.write_text(text)
    with pytest.raises(ProfileError, match=r"connector 2 lane 0 .*device port 30.* connector 1"):
        load_board_file(path)


# ---- config validation ---------------------------------------------------------


def cfg(*ports: dict[str, object], board: str = "tofino-32q") -> PortsConfig:
    return PortsConfig.model_validate({"board": board, "ports": list(ports)})


def test_a_good_config_becomes_port_writes_in_its_order(profile: HwProfile) -> None:
    c = cfg(
        {"port": "1/0", "speed": "100G", "fec": "rs"},
        {"port": "2/0", "speed": "25G", "autoneg": "disable"},
        {"port": "2/1", "speed": "25G", "enable": False},
        {"port": "3/2", "speed": "50G", "fec": "rs"},
    )
    board = check_ports(c, profile)
    assert port_writes(c, board) == [
        PortWrite(28, "BF_SPEED_100G", "BF_FEC_TYP_REED_SOLOMON", "PM_AN_DEFAULT", 4, True),
        PortWrite(160, "BF_SPEED_25G", "BF_FEC_TYP_NONE", "PM_AN_FORCE_DISABLE", 1, True),
        PortWrite(161, "BF_SPEED_25G", "BF_FEC_TYP_NONE", "PM_AN_DEFAULT", 1, False),
        PortWrite(154, "BF_SPEED_50G", "BF_FEC_TYP_REED_SOLOMON", "PM_AN_DEFAULT", 2, True),
    ]


BAD_PORTS = [
    ({"port": "33/0", "speed": "100G"}, "ports[0].port", "connectors 1..32"),
    ({"port": "1/4", "speed": "25G"}, "ports[0].port", "lanes 0..3"),
    ({"port": "1-0", "speed": "25G"}, "ports[0].port", "CONNECTOR/LANE"),
    ({"port": "1/0", "speed": "400G", "fec": "rs"}, "ports[0].speed", "not 400G"),
    # bf_pm_intf.c: 100G on Tofino starts at channel 0 of a MAC, on 4 lanes.
    ({"port": "1/1", "speed": "100G"}, "ports[0].port", "channel 0 .* channel 1"),
    ({"port": "1/0", "speed": "100G", "lanes": 2}, "ports[0].lanes", "on 4 lanes"),
    ({"port": "1/0", "speed": "100G", "fec": "fc"}, "ports[0].fec", "FIRECODE"),
    ({"port": "1/0", "speed": "10G", "fec": "rs"}, "ports[0].fec", "REED_SOLOMON"),
    ({"port": "1/1", "speed": "50G"}, "ports[0].port", "channel 0 or 2"),
    ({"port": "1/2", "speed": "40G"}, "ports[0].port", "channel 0"),
]


@pytest.mark.parametrize(("port", "field", "why"), BAD_PORTS)
def test_bad_ports_are_refused_naming_the_field(
    profile: HwProfile, port: dict[str, object], field: str, why: str
) -> None:
    with pytest.raises(ConfigError, match=why) as err:
        check_ports(cfg(port), profile)
    assert err.value.field == field


def test_two_ports_on_one_lane_are_refused(profile: HwProfile) -> None:
    c = cfg({"port": "1/0", "speed": "50G"}, {"port": "1/1", "speed": "25G"})
    with pytest.raises(ConfigError, match=r"overlaps ports\[0\] \(1/0\)") as err:
        check_ports(c, profile)
    assert err.value.field == "ports[1].port"


def test_a_board_of_the_other_chip_is_refused(profile: HwProfile) -> None:
    with pytest.raises(ConfigError, match="tofino2 board") as err:
        check_ports(cfg({"port": "1/0", "speed": "400G"}, board="tofino2-32d"), profile)
    assert err.value.field == "board"
    with pytest.raises(ConfigError, match="unknown board"):
        check_ports(cfg(board="wedge"), profile)


def test_tofino2_takes_400g_on_eight_lanes_and_100g_pam4_on_two() -> None:
    t2 = load_profile("tofino2")
    c = cfg(
        {"port": "1/0", "speed": "400G", "fec": "rs"},
        {"port": "2/0", "speed": "100G", "fec": "rs", "lanes": 2},
        {"port": "2/2", "speed": "100G", "fec": "rs", "lanes": 2},
        board="tofino2-32d",
    )
    board = check_ports(c, t2)
    assert [w.dev_port for w in port_writes(c, board)] == [8, 16, 18]
    with pytest.raises(ConfigError, match=r"needs|not valid") as err:
        check_ports(cfg({"port": "1/0", "speed": "400G"}, board="tofino2-32d"), t2)
    assert err.value.field == "ports[0].fec"


# ---- the $PORT table on the fake server and on the model -----------------------


def test_fake_adds_a_port_and_reads_back_oper_status(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    assert sw.read_port(28) is None
    sw.write([p100(28)])
    st = sw.read_port(28)
    assert st is not None and st.up and st.lanes == 4
    # The driver reads RS back by its first name in std::map order.
    assert st.fec == "BF_FEC_TYP_REED_SOLOMON"
    fake.link(28, up=False)
    st = sw.read_port(28)
    assert st is not None and not st.up and st.enable


def test_the_model_reads_back_oper_status_too(profile: HwProfile) -> None:
    m = ModelSwitch("pmqecn", profile)
    m.link_down.add(4)
    m.write([p100(0), p100(4), p100(8, enable=False)])
    up = {d: st.up for d in (0, 4, 8) if (st := m.read_port(d)) is not None}
    assert up == {0: True, 4: False, 8: False}
    m.restart()
    assert m.read_port(0) is None


def test_rewriting_a_port_as_it_is_sends_nothing(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    """A `$SPEED` modify deletes and re-adds the port: a re-push must not flap links."""
    sw.write([p100(28)])
    before = len(fake.writes())
    sw.write([p100(28)])
    assert len(fake.writes()) == before
    sw.write([p100(28, autoneg="PM_AN_FORCE_DISABLE")])
    (call,) = fake.writes()[before:]
    assert (call.table, call.op) == ("$PORT", "MODIFY")
    assert "$SPEED" not in call.fields
    sw.write([PortWrite(28, "BF_SPEED_25G", "BF_FEC_TYP_NONE", "PM_AN_DEFAULT", 1)])
    assert [c.op for c in fake.writes()[before + 1 :]] == ["DELETE", "INSERT"]
    assert fake.ports()[28]["$SPEED"] == "BF_SPEED_25G"


SERVER_REFUSES = [
    (p100(500), "not a (front-panel )?port"),  # pipe 3 local 116: beyond the chip's ports
    (p100(64), "not a (front-panel )?port"),  # a CPU Ethernet port, not a front-panel MAC
    (p100(28, speed="BF_SPEED_42G"), "BF_SPEED_42G"),
    (p100(29), "channel"),  # 100G starts at channel 0 only
    (p100(28, lanes=2), "lanes"),
    (p100(28, speed="BF_SPEED_400G", lanes=8), "no 400G"),
    (p100(28, fec="BF_FEC_TYP_FIRECODE"), "FEC"),
]
REFUSE_IDS = [b.describe() for b, _ in SERVER_REFUSES]


@pytest.mark.parametrize(("bad", "why"), SERVER_REFUSES, ids=REFUSE_IDS)
def test_the_fake_server_refuses_what_the_port_manager_refuses(
    sw: BfrtSwitch, fake: FakeBfrtGrpc, bad: PortWrite, why: str
) -> None:
    sw.write([p100(0)])
    before = fake.ports()
    with pytest.raises(WriteError, match=why) as err:
        sw.write([p100(4), bad])
    assert err.value.index == 1
    # Nothing half-applied: the port added before the refusal is gone again.
    assert fake.ports() == before


@pytest.mark.parametrize(("bad", "why"), SERVER_REFUSES, ids=REFUSE_IDS)
def test_the_model_refuses_the_same(profile: HwProfile, bad: PortWrite, why: str) -> None:
    m = ModelSwitch("pmqecn", profile)
    m.write([p100(0)])
    with pytest.raises(WriteError, match=why) as err:
        m.write([p100(4), bad])
    assert err.value.index == 1
    assert set(m.ports) == {0}


@pytest.mark.parametrize("backend", ["fake", "model"])
def test_a_refused_table_write_puts_ports_back(
    backend: str, sw: BfrtSwitch, fake: FakeBfrtGrpc, profile: HwProfile
) -> None:
    s: Switch = sw if backend == "fake" else ModelSwitch("pmqecn", profile)
    s.write([p100(0), p100(4)])
    held = {d: s.read_port(d) for d in (0, 4, 8)}
    batch = [
        PortWrite(0, "BF_SPEED_25G", "BF_FEC_TYP_NONE", "PM_AN_DEFAULT", 1),
        p100(4, enable=False),
        p100(8),
        bad_entry(),
    ]
    with pytest.raises(WriteError) as err:
        s.write(batch)
    assert err.value.index == 3
    after = {d: s.read_port(d) for d in (0, 4, 8)}
    assert after == held
    assert held[8] is None


def test_the_fake_keeps_an_added_ports_speed_on_a_second_add(
    fake: FakeBfrtGrpc, sw: BfrtSwitch
) -> None:
    """bf_pm_port_add_with_lanes returns BF_SUCCESS for a port already added
    and leaves its speed: why the backend deletes before it re-adds."""
    sw.write([p100(28)])
    t = sw._bfrt().table_get("$PORT")
    key = t.make_key([fake.KeyTuple("$DEV_PORT", 28)])
    data = t.make_data(
        [
            fake.DataTuple("$SPEED", str_val="BF_SPEED_25G"),
            fake.DataTuple("$FEC", str_val="BF_FEC_TYP_NONE"),
            fake.DataTuple("$PORT_ENABLE", bool_val=False),
        ]
    )
    t.entry_add(fake.Target(), [key], [data])
    port = fake.ports()[28]
    assert (port["$SPEED"], port["$PORT_ENABLE"]) == ("BF_SPEED_100G", False)
    t.entry_del(fake.Target(), [t.make_key([fake.KeyTuple("$DEV_PORT", 40)])])  # not added: fine
    assert set(fake.ports()) == {28}


def test_a_port_add_without_fec_is_refused_by_the_fake(fake: FakeBfrtGrpc, sw: BfrtSwitch) -> None:
    """bf_rt_port_table_impl.cpp tableEntryAdd: both $SPEED and $FEC, or BF_INVALID_ARG."""
    t = sw._bfrt().table_get("$PORT")  # the bound writer's session
    key = t.make_key([fake.KeyTuple("$DEV_PORT", 28)])
    data = t.make_data([fake.DataTuple("$SPEED", str_val="BF_SPEED_100G")])
    with pytest.raises(fake.BfruntimeReadWriteRpcException) as err:
        t.entry_add(fake.Target(), [key], [data])
    assert "needs $SPEED and $FEC" in str(err.value)
    assert fake.ports() == {}


# ---- PFC on the MAC ($TX_PFC_EN_MAP / $RX_PFC_EN_MAP) --------------------------


def test_pfc_priorities_become_both_maps(profile: HwProfile) -> None:
    c = cfg({"port": "1/0", "speed": "100G", "fec": "rs", "pfc_priorities": [3, 4]})
    (w,) = port_writes(c, check_ports(c, profile))
    assert w.pfc_map == 0b0001_1000


def test_fake_writes_and_reads_back_the_pfc_maps(sw: BfrtSwitch, fake: FakeBfrtGrpc) -> None:
    sw.write([p100(28, pfc_map=0x08)])
    (call,) = [c for c in fake.writes() if c.table == "$PORT"]
    # Both maps in one write: the server ignores one without the other.
    assert {"$TX_PFC_EN_MAP", "$RX_PFC_EN_MAP"} <= set(call.fields)
    st = sw.read_port(28)
    assert st is not None and st.pfc_map == 0x08
    before = len(fake.writes())
    sw.write([p100(28, pfc_map=0x08)])  # as it is: nothing sent
    assert len(fake.writes()) == before
    sw.write([p100(28, pfc_map=0)])  # PFC off: a modify, no link flap
    (off,) = fake.writes()[before:]
    assert off.op == "MODIFY" and "$SPEED" not in off.fields
    assert sw.read_port(28).pfc_map == 0  # type: ignore[union-attr]


def test_tofino2_per_priority_map_is_refused_by_config_and_ignored_by_the_sde() -> None:
    t2 = load_profile("tofino2")
    c = cfg({"port": "1/0", "speed": "400G", "fec": "rs", "pfc_priorities": [3]},
            board="tofino2-32d")  # fmt: skip
    with pytest.raises(ConfigError, match="all eight priorities or none") as err:
        check_ports(c, t2)
    assert err.value.field == "ports[0].pfc_priorities"
    # bf_port_flow_control_pfc_set refuses it and the server only logs: the
    # write "succeeds" and the port keeps its maps. The controller reads the
    # port back, so on both backends the write is refused and nothing is left.
    w = PortWrite(8, "BF_SPEED_400G", "BF_FEC_TYP_REED_SOLOMON", "PM_AN_DEFAULT", 8, pfc_map=0x08)
    fake = FakeBfrtGrpc("pmqecn", t2)
    sw = BfrtSwitch("pmqecn", t2, client_module=fake)
    sw.connect()
    with pytest.raises(WriteError, match="reads back"):
        sw.write([w])
    assert sw.read_port(8) is None
    m = ModelSwitch("pmqecn", t2)
    with pytest.raises(WriteError, match="reads back"):
        m.write([w])
    assert m.read_port(8) is None
    m.write([PortWrite(8, w.speed, w.fec, w.autoneg, 8, pfc_map=0xFF)])
    assert m.read_port(8).pfc_map == 0xFF  # type: ignore[union-attr]
