# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Front-panel ports from config: BF-Runtime's `$PORT` table.

An operator names ports as the box labels them (`1/0`: connector 1, lane 0)
with a speed, FEC and autonegotiation policy; a board profile
(hw_profiles/boards) turns the name into a device port, and the chip's rules
below say whether that port can run that speed on that many lanes. Every
field is checked before anything is written, and the port writes go first in
a push: the program's tables are of no use on a link that is down.

What the switch's `$PORT` table takes, verified in open-p4studio 1f97778f
(pkgsrc/bf-drivers/src/bf_rt/bf_rt_port/):
- bf_rt_port_tf1.json / _tf2.json: key `$DEV_PORT` (uint32); data `$SPEED`
  (string: BF_SPEED_NONE, _1G, _10G, _25G, _40G, _40G_NB,
  _40G_NON_BREAKABLE, _50G, _100G, _200G, _400G), `$FEC` (string:
  BF_FEC_TYP_NONE, _FIRECODE, _REED_SOLOMON, _FC, _RS), `$N_LANES` (uint32),
  `$PORT_ENABLE` (bool), `$AUTO_NEGOTIATION` (string: PM_AN_DEFAULT,
  PM_AN_FORCE_ENABLE, PM_AN_FORCE_DISABLE), read-only `$PORT_UP` (bool).
- bf_rt_port_table_impl.cpp: an add needs both `$SPEED` and `$FEC`
  (BF_INVALID_ARG otherwise); a modify that carries `$SPEED` deletes and
  re-adds the port (a link flap) and validates the new speed against the
  port's *current* FEC, so a speed and FEC change together is a delete and
  an add; a read of a port never added is BF_OBJECT_NOT_FOUND; FEC reads back
  as the first alias in std::map order (BF_FEC_TYP_FC, BF_FEC_TYP_REED_SOLOMON).
- bf_pm/bf_pm_intf.c bf_pm_port_add_with_lanes / bf_pm_port_delete: adding a
  port already added succeeds and keeps its speed, deleting one not added
  succeeds: a mode change must delete before it adds.
- bf_pm/bf_pm_intf.c pm_port_valid_speed_and_channel_internal: which
  channel (lane of the MAC) may start which speed on how many lanes, and
  which FEC each speed allows (CHIP_RULES below); dvm/dvm.c
  bf_port_get_default_lane_numb: the lane count when none is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Literal

from pydantic import Field, field_validator

from hw_profiles import HwProfile, ProfileError
from hw_profiles.boards import BoardProfile, load_board

from .common import Strict
from .errors import ConfigError, ControllerError
from .switch import PortState, PortWrite, Switch

PORT_TABLE = "$PORT"

SPEED_CHOICES = (
    "BF_SPEED_NONE",
    "BF_SPEED_1G",
    "BF_SPEED_10G",
    "BF_SPEED_25G",
    "BF_SPEED_40G",
    "BF_SPEED_40G_NB",
    "BF_SPEED_40G_NON_BREAKABLE",
    "BF_SPEED_50G",
    "BF_SPEED_100G",
    "BF_SPEED_200G",
    "BF_SPEED_400G",
)
FEC_CHOICES = (
    "BF_FEC_TYP_NONE",
    "BF_FEC_TYP_FIRECODE",
    "BF_FEC_TYP_REED_SOLOMON",
    "BF_FEC_TYP_FC",
    "BF_FEC_TYP_RS",
)
AN_CHOICES = ("PM_AN_DEFAULT", "PM_AN_FORCE_ENABLE", "PM_AN_FORCE_DISABLE")

FEC_NAMES = {
    "none": "BF_FEC_TYP_NONE",
    "fc": "BF_FEC_TYP_FIRECODE",
    "rs": "BF_FEC_TYP_REED_SOLOMON",
}
# Not on/off: YAML 1.1 reads an unquoted `off` as false.
AN_NAMES = {
    "default": "PM_AN_DEFAULT",
    "enable": "PM_AN_FORCE_ENABLE",
    "disable": "PM_AN_FORCE_DISABLE",
}
# The driver keeps one enum per FEC; both names of it are the same FEC.
_FEC_CANONICAL = {
    "BF_FEC_TYP_FC": "BF_FEC_TYP_FIRECODE",
    "BF_FEC_TYP_RS": "BF_FEC_TYP_REED_SOLOMON",
}
_SPEED_CANONICAL = {"BF_SPEED_40G_NB": "BF_SPEED_40G", "BF_SPEED_40G_NON_BREAKABLE": "BF_SPEED_40G"}

# dvm.c bf_port_get_default_lane_numb.
DEFAULT_LANES = {"1G": 1, "10G": 1, "25G": 1, "50G": 2, "40G": 4, "100G": 4, "200G": 4, "400G": 8}
# Lanes of one MAC: a device port's channel is its local port modulo this
# (lld_sku_map_mac_ch_to_dev_port_id: ibuf * 4 + ch on Tofino, ibuf * 8 + ch on Tofino2).
MAC_LANES = {"tofino": 4, "tofino2": 8}

# (speed, lanes) -> (channels that may start it, FECs it refuses, FECs it needs)
# from pm_port_valid_speed_and_channel_internal's front-panel branches.
_ANY = (0, 1, 2, 3, 4, 5, 6, 7)
Rule = tuple[tuple[int, ...], frozenset[str], frozenset[str]]
_NONE: frozenset[str] = frozenset()
_RS = frozenset({"BF_FEC_TYP_REED_SOLOMON"})
_FC = frozenset({"BF_FEC_TYP_FIRECODE"})
_ANY_FEC = frozenset({"BF_FEC_TYP_FIRECODE", "BF_FEC_TYP_REED_SOLOMON"})
CHIP_RULES: dict[str, dict[tuple[str, int], Rule]] = {
    "tofino": {
        ("100G", 4): ((0,), _FC, _NONE),
        ("40G", 4): ((0,), _RS, _NONE),
        ("50G", 2): ((0, 2), _NONE, _NONE),
        ("25G", 1): (_ANY, _NONE, _NONE),
        ("10G", 1): (_ANY, _RS, _NONE),
        ("1G", 1): (_ANY, _ANY_FEC, _NONE),
    },
    "tofino2": {
        ("400G", 8): ((0,), _NONE, _RS),
        ("200G", 4): ((0, 4), _NONE, _RS),
        ("200G", 8): ((0,), _NONE, _RS),
        ("100G", 4): ((0, 4), _FC, _NONE),
        ("100G", 2): ((0, 2, 4, 6), _NONE, _RS),
        ("50G", 1): (_ANY, _NONE, _RS),
        ("50G", 2): ((0, 2, 4, 6), _NONE, _NONE),
        ("40G", 4): ((0, 4), _RS, _NONE),
        ("25G", 1): (_ANY, _NONE, _NONE),
        ("10G", 1): (_ANY, _RS, _NONE),
        ("1G", 1): ((0, 2, 4, 6), _ANY_FEC, _NONE),
    },
}


def speed_text(value: object) -> object:
    """A speed as deployment files write it: 100G, 100g, '100' and 100 are
    all '100G' (a bare number is Gb/s, as `thresholds --port-speed` takes
    it); anything else is left for the validator to refuse."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return f"{value}G"
    if isinstance(value, str):
        text = value.strip()
        digits = text[:-1] if text[-1:] in ("G", "g") else text
        if digits.isdigit():
            return f"{int(digits)}G"
    return value


def speed_gbps(field: str, value: str) -> int:
    """`--port-speed 100` or `100G`: the speed in Gb/s."""
    text = speed_text(value)
    if not (isinstance(text, str) and text.endswith("G") and text[:-1].isdigit()):
        raise ConfigError(field, f"{value!r} is not a speed (Gb/s: 100 or 100G)")
    return int(text[:-1])


def speed_name(speed: str) -> str:
    """'100G' -> 'BF_SPEED_100G'."""
    return f"BF_SPEED_{speed}"


def canonical_fec(fec: str) -> str:
    return _FEC_CANONICAL.get(fec, fec)


def canonical_speed(speed: str) -> str:
    return _SPEED_CANONICAL.get(speed, speed)


def is_mac_port(profile: HwProfile, dev_port: int) -> bool:
    """A device port on a front-panel MAC of the chip (not CPU, recirculation
    or a port number the chip lacks)."""
    pipe, local = dev_port >> 7, dev_port & 0x7F
    first = profile.front_panel_port_min
    macs = 16 if profile.chip == "tofino" else 8
    return (
        dev_port >= 0
        and pipe < profile.pipes
        and first <= local < first + macs * MAC_LANES[profile.chip]
    )


def mode_refusal(
    profile: HwProfile, dev_port: int, speed: str, lanes: int, fec: str
) -> tuple[str, str] | None:
    """(what, why) the chip refuses `speed` on `lanes` lanes from `dev_port`
    with `fec` (speed and fec as the table's strings; `what` is the config
    field at fault: port, speed, lanes or fec), or None when it takes it."""
    if not is_mac_port(profile, dev_port):
        return "port", f"device port {dev_port} is not a front-panel port of {profile.chip}"
    short = canonical_speed(speed).removeprefix("BF_SPEED_")
    rules = CHIP_RULES[profile.chip]
    if not any(s == short for s, _ in rules):
        return "speed", f"{profile.chip} has no {short} ports"
    rule = rules.get((short, lanes))
    if rule is None:
        allowed = " or ".join(str(n) for s, n in sorted(rules) if s == short)
        return "lanes", f"{short} runs on {allowed} lanes on {profile.chip}, not {lanes}"
    channels, refused, needed = rule
    channel = (dev_port & 0x7F) % MAC_LANES[profile.chip]
    if channel not in channels:
        return "port", (
            f"{short} on {lanes} lanes must start at channel "
            f"{' or '.join(map(str, channels))} of a MAC; device port {dev_port} is channel "
            f"{channel}"
        )
    fec = canonical_fec(fec)
    if fec in refused or (needed and fec not in needed):
        return "fec", f"FEC {fec} is not valid for {short} on {lanes} lanes"
    return None


class FrontPanelPort(Strict):
    """One port as the operator names it."""

    port: str  # connector/lane, e.g. "1/0"
    speed: Literal["1G", "10G", "25G", "40G", "50G", "100G", "200G", "400G"]
    fec: Literal["none", "fc", "rs"] = "none"
    autoneg: Literal["default", "enable", "disable"] = "default"
    lanes: Annotated[int, Field(ge=1, le=8)] | None = None  # None: the speed's default
    enable: bool = True
    # 802.1Qbb: the priorities whose pause frames this port's MAC sends and
    # honours (none: PFC off). The TM's side (which queues stop, when pauses
    # are sent) is the program's, e.g. P4QCN's `pfc:` section.
    pfc_priorities: list[Annotated[int, Field(ge=0, le=7)]] = Field(default_factory=list)

    @field_validator("speed", mode="before")
    @classmethod
    def _speed_as_written(cls, value: object) -> object:
        return speed_text(value)

    @property
    def pfc_map(self) -> int:
        return sum(1 << p for p in set(self.pfc_priorities))

    @property
    def n_lanes(self) -> int:
        return self.lanes if self.lanes is not None else DEFAULT_LANES[self.speed]


class PortsConfig(Strict):
    board: str
    ports: list[FrontPanelPort] = Field(default_factory=list)


def check_ports(cfg: PortsConfig, profile: HwProfile, field: str = "") -> BoardProfile:
    """The board exists and is of `profile`'s chip; every port exists on it,
    runs a speed its connector takes on lanes the chip allows, and no two
    ports share a lane. Returns the board. `field` is where the section sits
    in its file (errors name `<field>.ports[2].speed`)."""
    at = f"{field}." if field else ""
    try:
        board = load_board(cfg.board)
    except ProfileError as exc:
        raise ConfigError(f"{at}board", str(exc)) from None
    if board.chip != profile.chip:
        raise ConfigError(
            f"{at}board",
            f"board {board.name} is a {board.chip} board, the switch is {profile.chip}",
        )
    taken: dict[int, int] = {}
    for i, p in enumerate(cfg.ports):
        where = f"{at}ports[{i}]"
        try:
            connector, lane = board.parse_name(p.port)
        except ValueError as exc:
            raise ConfigError(f"{where}.port", str(exc)) from None
        if p.speed not in board.speeds_of(connector):
            raise ConfigError(
                f"{where}.speed",
                f"connector {connector} of board {board.name} takes "
                f"{', '.join(board.speeds_of(connector))}, not {p.speed}",
            )
        dev_port = board.dev_ports[connector - 1] + lane
        refused = mode_refusal(profile, dev_port, speed_name(p.speed), p.n_lanes, FEC_NAMES[p.fec])
        if refused is not None:
            what, why = refused
            # Lanes the config did not give are the speed's default: the speed is at fault.
            if what == "lanes" and p.lanes is None:
                what = "speed"
            raise ConfigError(f"{where}.{what}", f"{p.port} (device port {dev_port}): {why}")
        if lane + p.n_lanes > board.lanes_per_connector:
            raise ConfigError(
                f"{where}.lanes",
                f"{p.port} on {p.n_lanes} lanes runs past connector {connector}'s "
                f"{board.lanes_per_connector} lanes",
            )
        if len(set(p.pfc_priorities)) != len(p.pfc_priorities):
            raise ConfigError(f"{where}.pfc_priorities", "a priority is named twice")
        if profile.chip == "tofino2" and p.pfc_map not in (0, 0xFF):
            raise ConfigError(
                f"{where}.pfc_priorities",
                "Tofino2's MAC enables PFC for all eight priorities or none "
                "(bf_port_flow_control_pfc_set); give [0, 1, 2, 3, 4, 5, 6, 7] or leave it out",
            )
        for k in range(p.n_lanes):
            if dev_port + k in taken:
                j = taken[dev_port + k]
                raise ConfigError(
                    f"{where}.port",
                    f"{p.port} on {p.n_lanes} lanes overlaps {at}ports[{j}] ({cfg.ports[j].port})",
                )
            taken[dev_port + k] = i
    return board


def resolve_front_panel(
    cfg: PortsConfig, board: BoardProfile, switch: Switch, field: str = ""
) -> dict[str, int]:
    """Each configured port's device port as the switch itself maps the name
    (`$PORT_STR_INFO` on BF-Runtime: the port manager's map of this box,
    which a vendor BSP or bspless port-map JSON sets; open-p4studio's own
    accton_wedge_32x_port_map.json puts connector 1 on MAC block 23, where
    the model platform's map, the source of hw_profiles/boards/tofino-32q,
    has another). The board file stays the check: a name the two map
    differently is refused, as the deployment's program configs name device
    ports by the board's map. A backend without a map of its own (the
    model) gives the board's."""
    at = f"{field}." if field else ""
    out: dict[str, int] = {}
    for i, p in enumerate(cfg.ports):
        expected = board.dev_port(p.port)
        try:
            held = switch.front_panel_port(p.port)
        except ControllerError as exc:
            raise ConfigError(
                f"{at}ports[{i}].port",
                f"{p.port}: the switch cannot resolve it ({exc}); board {board.name} has it "
                f"as device port {expected}",
            ) from None
        if held is not None and held != expected:
            raise ConfigError(
                f"{at}ports[{i}].port",
                f"{p.port} is device port {held} on the switch ($PORT_STR_INFO) but {expected} "
                f"in board {board.name}: the board file is not this box's port map; give the "
                f"box's board (hw_profiles/boards, or a copy for it) in {at}board",
            )
        out[p.port] = expected if held is None else held
    return out


def port_writes(
    cfg: PortsConfig, board: BoardProfile, dev_ports: Mapping[str, int] | None = None
) -> list[PortWrite]:
    """The `$PORT` writes of `cfg`, at the device ports `dev_ports` resolved
    (resolve_front_panel), else the board's."""
    return [
        PortWrite(
            dev_ports[p.port] if dev_ports else board.dev_port(p.port),
            speed_name(p.speed),
            FEC_NAMES[p.fec],
            AN_NAMES[p.autoneg],
            p.n_lanes,
            p.enable,
            pfc_map=p.pfc_map,
        )
        for p in cfg.ports
    ]


PORT_STATUS_SECTION = "front panel"
PORT_STATUS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("port", "name"),
    ("dev port", "dev_port"),
    ("speed", "speed"),
    ("fec", "fec"),
    ("autoneg", "autoneg"),
    ("lanes", "lanes"),
    ("enabled", "enabled"),
    ("up", "up"),
)


def port_rows(
    switch: Switch,
    cfg: PortsConfig,
    board: BoardProfile,
    dev_ports: Mapping[str, int] | None = None,
) -> list[dict[str, object]]:
    """Each configured port as the switch holds it (None fields: not added)."""
    rows: list[dict[str, object]] = []
    for p in cfg.ports:
        dev_port = dev_ports[p.port] if dev_ports else board.dev_port(p.port)
        st = switch.read_port(dev_port)
        rows.append(
            {
                "section": PORT_STATUS_SECTION,
                "name": p.port,
                "dev_port": dev_port,
                "speed": canonical_speed(st.speed).removeprefix("BF_SPEED_") if st else None,
                "fec": canonical_fec(st.fec).removeprefix("BF_FEC_TYP_").lower() if st else None,
                "autoneg": st.autoneg if st else None,
                "lanes": st.lanes if st else None,
                "enabled": st.enable if st else None,
                "up": st.up if st else False,
            }
        )
    return rows


def same_port(state: PortState | None, w: PortWrite) -> bool:
    """Does the switch already hold `w` (FEC and speed aliases compared as one)?"""
    if state is None:
        return False
    return (
        canonical_speed(state.speed),
        canonical_fec(state.fec),
        state.autoneg,
        state.lanes,
        state.enable,
        state.pfc_map,
    ) == (canonical_speed(w.speed), canonical_fec(w.fec), w.autoneg, w.lanes, w.enable, w.pfc_map)


def dev_ports(writes: Iterable[object]) -> list[int]:
    return [w.dev_port for w in writes if isinstance(w, PortWrite)]
