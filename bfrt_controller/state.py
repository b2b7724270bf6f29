"""Where `tofcc --target model` keeps the intended state between invocations.

A real switch holds its own state; the model lives only as long as one
command, so the model target saves the config and the live per-class
values to a small YAML file and replays them on the next command.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml


def default_state_path(program: str) -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tofcc" / f"model-{program}.yaml"


def load_state(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    data = yaml.safe_load(path.read_text())
    return data if isinstance(data, dict) else None


def save_state(path: Path, program: str, config: dict[str, Any], live: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    state = {"program": program, "config": config, "live": live}
    tmp.write_text(yaml.safe_dump(state, sort_keys=False))
    tmp.replace(path)
