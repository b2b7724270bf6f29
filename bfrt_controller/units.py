# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Bytes wherever cells are: a depth or threshold as SONiC and EOS take it.

The chip counts its buffer in cells (80 B on Tofino, 176 B on Tofino2:
hw_profiles), and every config field and `set` value that the chip compares
with a queue depth is in cells (`threshold_cells`, `q_max_cells`,
`pfc.xoff_cells`, ...). An operator may give any of them in bytes instead:

* beside the field, its `_bytes` twin: `threshold_bytes: 32000` (a number of
  bytes, or a size with a unit: `32KB`);
* in the field itself, a size with a unit: `threshold_cells: 32KB`;
* on the command line the same: `set q_max_bytes=24000`, `set
  max_th_cells=32KiB`, `set-threshold voice=32KB`.

Units: B, KB (1000 B), MB (10^6 B), KiB (1024 B), MiB (2^20 B); a
fraction only where the bytes come out whole (`1.5KB`). The bytes become
whole cells, rounded up (the threshold the switch holds is never below what
was asked, as a packet of N bytes takes ceil(N / cell) cells), and every
conversion is shown - by `check`, `apply`, `diff` and `set`, under --json
as `conversions` - with what the cells hold: `classes[0].threshold_bytes:
1000 B -> 13 cells of 80 B = 1040 B (40 B more)`. What is stored, saved and
diffed is the cells.
"""

from __future__ import annotations

import contextlib
import copy
import math
import re
import typing
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel

from .annotations import unwrap as _unwrap
from .errors import ConfigError

UNITS = {"B": 1, "KB": 1000, "MB": 1000**2, "KiB": 1024, "MiB": 1024**2}
_SIZE = re.compile(r"(0|[1-9][0-9]{0,11})(?:\.([0-9]{1,6}))? ?(B|KB|MB|KiB|MiB)")
_PLAIN = re.compile(r"0|[1-9][0-9]{0,11}")
CELLS, BYTES = "_cells", "_bytes"


@dataclass(frozen=True)
class Conversion:
    """One value given in bytes and written in cells."""

    field: str  # as the operator wrote it: classes[0].threshold_bytes
    given: str  # 32KB
    bytes: int
    cells: int
    cell_bytes: int

    @property
    def held_bytes(self) -> int:
        return self.cells * self.cell_bytes

    def note(self) -> str:
        shown = "" if self.given == f"{self.bytes}" else f"{self.given} = "
        extra = self.held_bytes - self.bytes
        rounding = f" ({extra} B more: whole cells)" if extra else " (exact)"
        return (
            f"{self.field}: {shown}{self.bytes} B -> {self.cells} cells of "
            f"{self.cell_bytes} B = {self.held_bytes} B{rounding}"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"held_bytes": self.held_bytes}


# Conversions made while a command reads its files (Context.document), to be
# shown; none is kept where nobody records (a daemon's reload).
_recorded: ContextVar[list[Conversion] | None] = ContextVar("tofcc_conversions", default=None)
_prefix: ContextVar[str] = ContextVar("tofcc_conversion_prefix", default="")


@contextlib.contextmanager
def recording() -> Iterator[list[Conversion]]:
    notes: list[Conversion] = []
    token = _recorded.set(notes)
    try:
        yield notes
    finally:
        _recorded.reset(token)


@contextlib.contextmanager
def within(prefix: str) -> Iterator[None]:
    """Name the fields converted inside as `prefix.<field>` (a deployment's target)."""
    token = _prefix.set(f"{_prefix.get()}{prefix}.")
    try:
        yield
    finally:
        _prefix.reset(token)


def _record(c: Conversion) -> None:
    notes = _recorded.get()
    if notes is not None:
        notes.append(c)


def parse_size(field: str, value: object) -> tuple[int, str] | None:
    """(bytes, as written) of a size with a unit; None when `value` is not
    one (a plain number is the field's own unit); ConfigError when it looks
    like one but is not whole bytes."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = _SIZE.fullmatch(text)
    if m is None:
        if text[-1:] in ("B", "b") or text.lower().endswith(("kb", "mb", "kib", "mib")):
            units = ", ".join(UNITS)
            raise ConfigError(field, f"expected a size such as 32KB ({units}), got {value!r}")
        return None
    whole, frac, unit = m.group(1), m.group(2) or "", m.group(3)
    scaled = (int(whole) * 10 ** len(frac) + int(frac or 0)) * UNITS[unit]
    nbytes, rest = divmod(scaled, 10 ** len(frac))
    if rest:
        raise ConfigError(field, f"{text} is not a whole number of bytes")
    return nbytes, text


def bytes_value(field: str, value: object) -> tuple[int, str]:
    """A `_bytes` field's value: a number of bytes or a size with a unit."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, str(value)
    if isinstance(value, str) and _PLAIN.fullmatch(value.strip()):
        return int(value.strip()), value.strip()
    size = parse_size(field, value)
    if size is None:
        raise ConfigError(field, f"expected bytes (a number, or a size as 32KB), got {value!r}")
    return size


def to_cells(field: str, nbytes: int, given: str, cell_bytes: int) -> int:
    """`nbytes` as whole cells, rounded up; the conversion is recorded."""
    cells = math.ceil(nbytes / cell_bytes)
    _record(Conversion(f"{_prefix.get()}{field}", given, nbytes, cells, cell_bytes))
    return cells


# ---- config files ---------------------------------------------------------------------


def _models_in(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """('one'|'list'|'dict', model) of a field whose value holds a model."""
    current = _unwrap(annotation)
    origin, args = typing.get_origin(current), typing.get_args(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return "one", current
    if origin in (list, tuple) and args:
        inner = _unwrap(args[0])
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return "list", inner
    if origin is dict and len(args) == 2:
        inner = _unwrap(args[1])
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return "dict", inner
    return None


CellBytes = Callable[[], int]


def _convert(raw: dict[str, Any], model: type[BaseModel], at: str, cell_bytes: CellBytes) -> bool:
    """Convert `raw` (validated by `model`) in place; whether anything changed."""
    changed = False
    fields = model.model_fields
    for key in list(raw):
        if not isinstance(key, str):
            continue  # not a field name: pydantic names it as such
        where = f"{at}{key}"
        if key.endswith(BYTES) and key not in fields and key[: -len(BYTES)] + CELLS in fields:
            twin = key[: -len(BYTES)] + CELLS
            if twin in raw:
                raise ConfigError(where, f"give {twin} or {key}, not both")
            nbytes, given = bytes_value(where, raw.pop(key))
            raw[twin] = to_cells(where, nbytes, given, cell_bytes())
            changed = True
        elif key.endswith(CELLS) and key in fields:
            size = parse_size(where, raw[key])
            if size is not None:
                raw[key] = to_cells(where, size[0], size[1], cell_bytes())
                changed = True
        elif key in fields:
            changed |= _descend(raw[key], fields[key].annotation, where, cell_bytes)
    return changed


def _descend(value: Any, annotation: Any, where: str, cell_bytes: CellBytes) -> bool:
    holds = _models_in(annotation)
    if holds is None:
        return False
    kind, inner = holds
    if kind == "one" and isinstance(value, dict):
        return _convert(value, inner, f"{where}.", cell_bytes)
    if kind == "list" and isinstance(value, list):
        return any(
            [
                _convert(v, inner, f"{where}[{i}].", cell_bytes)
                for i, v in enumerate(value)
                if isinstance(v, dict)
            ]
        )
    if kind == "dict" and isinstance(value, dict):
        return any(
            [
                _convert(v, inner, f"{where}.{k}.", cell_bytes)
                for k, v in value.items()
                if isinstance(v, dict)
            ]
        )
    return False


def _mentions_bytes(raw: Any) -> bool:
    """Is there a `_bytes` key or a size string anywhere (the cheap test first)?"""
    if isinstance(raw, dict):
        return any(
            (isinstance(k, str) and k.endswith(BYTES)) or _mentions_bytes(v) for k, v in raw.items()
        )
    if isinstance(raw, list):
        return any(_mentions_bytes(v) for v in raw)
    return isinstance(raw, str) and raw[-1:] == "B"


def accept_bytes(raw: object, model: type[BaseModel], source: str = "") -> object:
    """`raw` (a program config as read) with every value given in bytes as
    the cells of its chip; `raw` itself when there is none."""
    if not isinstance(raw, dict) or not _mentions_bytes(raw):
        return raw
    from hw_profiles import load_profile

    chip = raw.get("chip", model.model_fields["chip"].default)

    def cell_bytes() -> int:
        # Loaded only when a value needs it: a broken installed profile is
        # reported where it always was (exit 1), not by a file without bytes.
        if chip not in typing.get_args(model.model_fields["chip"].annotation):
            raise ConfigError("chip", f"unknown chip {chip!r}: bytes cannot become its cells")
        return load_profile(str(chip)).cell_bytes

    out = copy.deepcopy(raw)
    try:
        changed = _convert(out, model, "", cell_bytes)
    except ConfigError as exc:
        raise exc.within(source) from None
    return out if changed else raw


def show(notes: list[Conversion]) -> None:
    """Each conversion, one line for the operator (`conversions` under --json)."""
    from .console import report, say

    if not notes:
        return
    report(conversions=[c.as_dict() for c in notes])
    for c in notes:
        say(f"bytes to cells: {c.note()}")


# ---- `set` values ---------------------------------------------------------------------


def set_value(name: str, text: str, cell_bytes: int) -> tuple[str, str]:
    """A `set` pair's (name, value) with bytes made cells: `q_max_bytes=24KB`
    is `q_max_cells=<cells>`, `max_th_cells=32KiB` too; anything else as it is."""
    if name.endswith(BYTES):
        nbytes, given = bytes_value(name, text)
        return name[: -len(BYTES)] + CELLS, str(to_cells(name, nbytes, given, cell_bytes))
    if name.endswith(CELLS):
        size = parse_size(name, text)
        if size is not None:
            return name, str(to_cells(name, size[0], size[1], cell_bytes))
    return name, text
