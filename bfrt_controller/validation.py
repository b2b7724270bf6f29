"""Turn pydantic's errors into ConfigError naming the field, e.g. classes[1].queue."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from hw_profiles import safe_yaml

from .errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def parse_model(model: type[M], raw: Any, source: str = "") -> M:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        prefix = f"{source}: " if source else ""
        msg = err["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{prefix}{field_path(tuple(err['loc']))}", msg) from None


def load_yaml(path: str | Path) -> Any:
    try:
        return safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ConfigError(exc.path, exc.reason) from None
