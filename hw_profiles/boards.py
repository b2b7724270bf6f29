# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Board facts as data: which device port each front-panel lane is, and the
speeds each connector takes.

A chip profile (tofino.yaml) says what the ASIC has; a board profile
(boards/<name>.yaml) says how a box wires it to its cages, so a config can
name ports as an operator sees them (`1/0`: connector 1, lane 0) and the
controller can refuse a port the box does not have before anything is sent.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import KNOWN_CHIPS, ProfileError, load_profile, safe_yaml

BOARD_DIR = Path(__file__).resolve().parent / "boards"
# BF-Runtime's $PORT $SPEED choices without the BF_SPEED_ prefix (open-p4studio
# bf_rt_port_tf1.json / _tf2.json); NONE and the 40G_NB aliases are not speeds
# a config chooses.
SPEEDS = ("1G", "10G", "25G", "40G", "50G", "100G", "200G", "400G")
_PORT_NAME = re.compile(r"([0-9]{1,3})/([0-9]{1,2})")
_BOARD_KEYS = {"board", "chip", "lanes_per_connector", "speeds", "dev_ports", "connector_speeds"}


@dataclass(frozen=True)
class BoardProfile:
    name: str
    chip: str
    lanes_per_connector: int
    speeds: tuple[str, ...]
    dev_ports: tuple[int, ...]  # connector N's lane 0 is dev_ports[N - 1]
    # Connectors that take other speeds than `speeds` (e.g. a 10G SFP+ cage).
    connector_speeds: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def connectors(self) -> int:
        return len(self.dev_ports)

    @property
    def pipes(self) -> int:
        """The pipes the board's ports use, as a power of two (a 32-port
        Tofino wires pipes 0 and 1: 2; a 64-port one all 4): what the switch
        runs, so the reference model runs as many (models/switch/tna.py)."""
        used = max(port >> 7 for port in self.dev_ports) + 1
        return 1 << (used - 1).bit_length()

    def speeds_of(self, connector: int) -> tuple[str, ...]:
        return self.connector_speeds.get(connector, self.speeds)

    def parse_name(self, name: str) -> tuple[int, int]:
        """(connector, lane) of a front-panel name such as '1/0'; ValueError says why not."""
        m = _PORT_NAME.fullmatch(name) if isinstance(name, str) else None
        if m is None:
            raise ValueError(f"expected CONNECTOR/LANE such as 1/0, got {name!r}")
        connector, lane = int(m.group(1)), int(m.group(2))
        if not 1 <= connector <= self.connectors:
            raise ValueError(
                f"board {self.name} has connectors 1..{self.connectors}, not {connector}"
            )
        if lane >= self.lanes_per_connector:
            raise ValueError(
                f"connector {connector} of board {self.name} has lanes "
                f"0..{self.lanes_per_connector - 1}, not {lane}"
            )
        return connector, lane

    def dev_port(self, name: str) -> int:
        connector, lane = self.parse_name(name)
        return self.dev_ports[connector - 1] + lane

    def name_of(self, dev_port: int) -> str | None:
        for i, base in enumerate(self.dev_ports):
            if base <= dev_port < base + self.lanes_per_connector:
                return f"{i + 1}/{dev_port - base}"
        return None


def parse_board(raw: Any, source: str) -> BoardProfile:
    if not isinstance(raw, dict):
        raise ProfileError(f"{source}: top level must be a mapping")
    unknown = sorted(str(k) for k in set(raw) - _BOARD_KEYS)
    if unknown:
        raise ProfileError(f"{source}: unknown key '{unknown[0]}'")
    for key in _BOARD_KEYS - {"connector_speeds"}:
        if key not in raw:
            raise ProfileError(f"{source}: missing key '{key}'")
    name, chip, lanes = raw["board"], raw["chip"], raw["lanes_per_connector"]
    if not isinstance(name, str) or not name:
        raise ProfileError(f"{source}: key 'board' must be a non-empty string")
    if chip not in KNOWN_CHIPS:
        raise ProfileError(f"{source}: key 'chip' must be one of {KNOWN_CHIPS}")
    if lanes not in (1, 2, 4, 8):
        raise ProfileError(f"{source}: key 'lanes_per_connector' must be 1, 2, 4 or 8")

    def speeds(key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise ProfileError(f"{source}: key '{key}' must be a non-empty list of speeds")
        for s in value:
            if s not in SPEEDS:
                raise ProfileError(f"{source}: key '{key}': {s!r} is not one of {SPEEDS}")
        return tuple(value)

    profile = load_profile(chip)
    ports = raw["dev_ports"]
    if not isinstance(ports, list) or not ports:
        raise ProfileError(f"{source}: key 'dev_ports' must be a non-empty list")
    used: dict[int, int] = {}
    for i, base in enumerate(ports):
        if isinstance(base, bool) or not isinstance(base, int) or base < 0:
            raise ProfileError(f"{source}: dev_ports[{i}] must be a non-negative integer")
        for lane in range(lanes):
            port = base + lane
            local = port & 0x7F
            if port >> 7 >= profile.pipes or local >= profile.ports_per_pipe:
                raise ProfileError(
                    f"{source}: dev_ports[{i}] lane {lane} is device port {port}, "
                    f"not a port of {chip}"
                )
            if port in used:
                raise ProfileError(
                    f"{source}: connector {i + 1} lane {lane} (device port {port}) is also "
                    f"connector {used[port]}"
                )
            used[port] = i + 1
    per_connector: dict[int, tuple[str, ...]] = {}
    extra = raw.get("connector_speeds") or []
    if not isinstance(extra, list):
        raise ProfileError(f"{source}: key 'connector_speeds' must be a list")
    for j, item in enumerate(extra):
        if not isinstance(item, dict) or set(item) != {"connector", "speeds"}:
            raise ProfileError(f"{source}: connector_speeds[{j}] needs connector and speeds")
        c = item["connector"]
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= len(ports):
            raise ProfileError(
                f"{source}: connector_speeds[{j}].connector {c!r} is not a connector"
            )
        per_connector[c] = speeds(f"connector_speeds[{j}].speeds", item["speeds"])
    return BoardProfile(
        name, chip, lanes, speeds("speeds", raw["speeds"]), tuple(ports), per_connector
    )


def load_board_file(path: str | Path) -> BoardProfile:
    path = Path(path)
    try:
        raw = safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ProfileError(str(exc)) from None
    board = parse_board(raw, str(path))
    if board.name != path.stem:
        raise ProfileError(f"{path}: key 'board' is '{board.name}' but the file is {path.name}")
    return board


def known_boards() -> list[str]:
    return sorted(p.stem for p in BOARD_DIR.glob("*.yaml"))


@functools.cache
def load_board(name: str) -> BoardProfile:
    """An embedded board profile by name (hw_profiles/boards/<name>.yaml)."""
    if name not in known_boards():
        raise ProfileError(f"unknown board '{name}'; choose one of {known_boards()}")
    return load_board_file(BOARD_DIR / f"{name}.yaml")
