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
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from . import (
    Chip,
    Port,
    ProfileError,
    ProfileModel,
    as_tuple,
    load_profile,
    validated,
    validated_file,
)

BOARD_DIR = Path(__file__).resolve().parent / "boards"
# BF-Runtime's $PORT $SPEED choices without the BF_SPEED_ prefix (open-p4studio
# bf_rt_port_tf1.json / _tf2.json); NONE and the 40G_NB aliases are not speeds
# a config chooses.
Speed = Literal["1G", "10G", "25G", "40G", "50G", "100G", "200G", "400G"]
SPEEDS: tuple[str, ...] = get_args(Speed)
Speeds = Annotated[tuple[Speed, ...], BeforeValidator(as_tuple), Field(min_length=1)]
_PORT_NAME = re.compile(r"([0-9]{1,3})/([0-9]{1,2})")


def _none_as_empty(value: object) -> object:
    """`connector_speeds:` left empty in the file is no exceptions."""
    return () if value is None else as_tuple(value)


def _lanes(value: int) -> int:
    # Not a Literal: pydantic takes `true` for the literal 1.
    if value not in (1, 2, 4, 8):
        raise ValueError(f"must be 1, 2, 4 or 8, got {value}")
    return value


class ConnectorSpeeds(ProfileModel):
    """A connector that takes other speeds than the board's (a 10G SFP+ cage)."""

    connector: Annotated[int, Field(gt=0)]
    speeds: Speeds


class BoardProfile(ProfileModel):
    # The file's `board:` key.
    name: Annotated[str, Field(alias="board", min_length=1)]
    chip: Chip
    lanes_per_connector: Annotated[int, AfterValidator(_lanes)]
    speeds: Speeds
    # Connector N's lane 0 is dev_ports[N - 1].
    dev_ports: Annotated[tuple[Port, ...], BeforeValidator(as_tuple), Field(min_length=1)]
    connector_speeds: Annotated[
        tuple[ConnectorSpeeds, ...], BeforeValidator(_none_as_empty), Field(default=())
    ]

    @model_validator(mode="after")
    def _ports_of_the_chip(self) -> BoardProfile:
        """Every lane a port of the chip and no lane twice; speed exceptions
        for connectors the board has, once each. Each message names its key:
        pydantic gives a model's own check no field."""
        profile = load_profile(self.chip)
        used: dict[int, int] = {}
        for i, base in enumerate(self.dev_ports):
            for lane in range(self.lanes_per_connector):
                port = base + lane
                if port >> 7 >= profile.pipes or port & 0x7F >= profile.ports_per_pipe:
                    raise ValueError(
                        f"key 'dev_ports' entry {i} lane {lane} is device port {port}, "
                        f"not a port of {self.chip}"
                    )
                if port in used:
                    raise ValueError(
                        f"connector {i + 1} lane {lane} (device port {port}) is also "
                        f"connector {used[port]}"
                    )
                used[port] = i + 1
        given: set[int] = set()
        for j, item in enumerate(self.connector_speeds):
            if item.connector > self.connectors:
                raise ValueError(
                    f"key 'connector_speeds' entry {j} 'connector' {item.connector} is not a "
                    f"connector (the board has {self.connectors})"
                )
            if item.connector in given:
                raise ValueError(
                    f"key 'connector_speeds' entry {j} 'connector' {item.connector} is given twice"
                )
            given.add(item.connector)
        return self

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
        for item in self.connector_speeds:
            if item.connector == connector:
                return item.speeds
        return self.speeds

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
    """Validate a decoded YAML mapping; `source` names the file in errors."""
    return validated(BoardProfile, raw, source)


def load_board_file(path: str | Path) -> BoardProfile:
    path = Path(path)
    board = validated_file(BoardProfile, path)
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
