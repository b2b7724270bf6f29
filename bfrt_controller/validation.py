# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Turn pydantic's errors into ConfigError naming the field, e.g. classes[1].queue."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from hw_profiles import HwProfile, load_profile, safe_yaml

from .annotations import unwrap as _unwrap
from .errors import ConfigError
from .units import accept_bytes

M = TypeVar("M", bound=BaseModel)


def field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model that validates the mapping at `loc`, following fields,
    list items and dict values; None where that is not one model (a union of
    several, a custom type): the suggestion then falls back to what is missing."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
            continue
        args = typing.get_args(current)
        if typing.get_origin(current) in (list, tuple, set, frozenset) and args:
            current = args[0]
        elif typing.get_origin(current) is dict and len(args) == 2:
            current = args[1]
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _field_names(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return []
    return [f.alias or name for name, f in model.model_fields.items()]


def _unknown_field(model: type[BaseModel], errors: list[Any], err: Any) -> str:
    """'unknown field X (did you mean Y?)', Y the closest field the mapping
    may hold; a required field left missing beside it (the usual misspelling
    of a required key) is named too."""
    loc = tuple(err["loc"])
    key, parent = str(loc[-1]), loc[:-1]
    missing = [
        str(e["loc"][-1])
        for e in errors
        if e["type"] == "missing" and tuple(e["loc"][:-1]) == parent
    ]
    known = _field_names(_model_at(model, parent)) or missing
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    msg = f"unknown field {key}"
    if close:
        msg += f" (did you mean {close[0]}?)"
    others = [m for m in missing if not close or m != close[0]]
    if close and close[0] in missing:
        msg += f"; {close[0]} is required and missing"
    if others:
        msg += f"; required and missing: {', '.join(others)}"
    return msg


def parse_model(model: type[M], raw: Any, source: str = "") -> M:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors()
        err = errors[0]
        if err["type"] == "missing":
            # A misspelled required key makes two errors, the field missing
            # (pydantic's first) and the key unknown: the misspelling is the
            # one to report, with the field it resembles.
            parent = tuple(err["loc"][:-1])
            err = next(
                (
                    e
                    for e in errors
                    if e["type"] == "extra_forbidden" and tuple(e["loc"][:-1]) == parent
                ),
                err,
            )
        prefix = f"{source}: " if source else ""
        where = f"{prefix}{field_path(tuple(err['loc']))}"
        if err["type"] == "extra_forbidden":
            raise ConfigError(where, _unknown_field(model, errors, err)) from None
        if err["type"] in ("model_type", "dict_type"):
            # pydantic's words name the model class, which the file's author never sees.
            got = type(err["input"]).__name__
            raise ConfigError(where, f"must be a mapping, got {got}") from None
        msg = err["msg"].removeprefix("Value error, ")
        raise ConfigError(where, msg) from None


def parse_on_chip(
    model: type[M], raw: Any, source: str, check: Callable[[M, HwProfile], None]
) -> M:
    """A program config: `raw` as `model`, then `check`ed against the facts
    of the chip it names (its `chip:` field). An error of either names `source`.
    Bytes are accepted wherever cells are, as the chip's cells (units.py)."""
    cfg = parse_model(model, accept_bytes(raw, model, source), source)
    try:
        check(cfg, load_profile(cast(Any, cfg).chip))
    except ConfigError as exc:
        raise exc.within(source) from None
    return cfg


def load_yaml(path: str | Path) -> Any:
    try:
        return safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        raise ConfigError(exc.path, exc.reason) from None
