# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every mechanism the controller can run, found by its program name.

`tofcc --program NAME` looks the program up here: its config schema, its
embedded default config, its app, and how `status` shows it, all as
tofcc_common.registry declares them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from tofcc_common import registry

from .errors import ConfigError
from .switch import Switch
from .validation import load_yaml


class App(Protocol):
    """What the CLI and the supervisor need of a mechanism's app."""

    switch: Switch
    config: Any

    def push_all(self) -> None: ...

    def intended_writes(self) -> list[Any]: ...

    def dynamic_writes(self) -> list[Any]: ...

    def static_tables(self) -> frozenset[str]: ...

    def status(self) -> list[dict[str, object]]: ...

    def live_state(self) -> dict[str, Any]:
        """Run-time changes on top of the config (for the model target's state file)."""
        ...

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        """Take the saved run-time changes; ConfigError naming `source`'s field if corrupt."""
        ...

    def service_start(self, now_s: float) -> None: ...

    def service_cycle(self, now_s: float) -> int: ...

    def watchdog_period_s(self) -> float | None: ...

    def service_watchdog(self, now_s: float) -> int: ...


@dataclass(frozen=True)
class Program:
    name: str
    default_config: Path
    parse_config: Callable[[object, str], BaseModel]
    make_app: Callable[[Switch, Any], App]
    # One table per section, for the rows whose "section" is its title.
    status_sections: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

    def load_config(self, path: Path) -> Any:
        return self.parse_config(load_yaml(path), str(path))


def _program(name: str) -> Program:
    spec = registry.PROGRAMS[name]
    config = importlib.import_module(spec.config)
    return Program(
        name,
        config.DEFAULT_CONFIG,
        config.parse_config,
        registry.resolve(spec.app),
        registry.resolve(spec.status_sections),
    )


# Every program the controller runs, from the one registry of programs.
PROGRAMS: tuple[str, ...] = tuple(registry.PROGRAMS)


def get_program(name: str) -> Program:
    if name not in registry.PROGRAMS:
        raise ConfigError("--program", f"unknown program {name!r} (known: {', '.join(PROGRAMS)})")
    return _program(name)
