# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every setting of a program's config: name, unit, range and default, read
from the pydantic schema itself (so the listing cannot drift from what the
validator accepts), and the JSON Schema editors use for completion.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import types
import typing
from dataclasses import dataclass, replace
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from tofcc_common import registry

# Name suffix -> unit (STYLE.md: units in every name).
UNITS: tuple[tuple[str, str], ...] = (
    ("_cells", "cells"),
    ("_packets", "packets"),
    ("_bytes", "bytes"),
    ("_pps", "packets/s"),
    ("_kbps", "kb/s"),
    ("_mbps", "Mb/s"),
    ("_gbps", "Gb/s"),
    ("_ns", "ns"),
    ("_us", "us"),
    ("_ms", "ms"),
    ("_s", "s"),
    ("_ticks", "ticks"),
    ("_bits", "bits"),
)


@dataclass(frozen=True)
class Param:
    name: str  # dotted; `[]` marks each element of a list
    type: str
    unit: str
    range: str
    default: str
    description: str = ""  # the field's description, else its comment in the schema's source


def config_model(program: str) -> type[BaseModel]:
    """The program's config class: what its parse_config returns."""
    module = importlib.import_module(registry.PROGRAMS[program].config)
    model = typing.get_type_hints(module.parse_config)["return"]
    assert isinstance(model, type) and issubclass(model, BaseModel)
    return model


# A size in bytes, as units.py takes it in place of cells.
SIZE_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": r"^(0|[1-9][0-9]{0,11})(\.[0-9]{1,6})? ?(B|KB|MB|KiB|MiB)$",
}
BYTES_SCHEMA: dict[str, Any] = {"anyOf": [{"type": "integer", "minimum": 0}, SIZE_SCHEMA]}


def _with_bytes(node: Any) -> None:
    """Every `X_cells` property of the schema also takes a size (32KB), and
    has its `X_bytes` twin (units.py), so an editor accepts what tofcc does."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for name in [n for n in props if n.endswith("_cells")]:
                twin = name.removesuffix("_cells") + "_bytes"
                if twin not in props:
                    props[name] = {"anyOf": [props[name], SIZE_SCHEMA]}
                    props[twin] = BYTES_SCHEMA | {"description": f"{name} given in bytes"}
        for value in node.values():
            _with_bytes(value)
    elif isinstance(node, list):
        for value in node:
            _with_bytes(value)


def json_schema(program: str) -> dict[str, Any]:
    schema = config_model(program).model_json_schema()
    _with_bytes(schema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema.setdefault("title", f"tofcc {program} config")
    return schema


def params(program: str) -> list[Param]:
    out: list[Param] = []
    _walk(config_model(program), "", out)
    return out


def _unit(name: str) -> str:
    leaf = name.rsplit(".", 1)[-1].removesuffix("[]")
    return next((u for suffix, u in UNITS if leaf.endswith(suffix)), "")


def _bounds(metadata: list[Any]) -> list[str]:
    lo = hi = None
    parts = []
    for m in metadata:
        if isinstance(m, FieldInfo):
            parts += _bounds(list(m.metadata))
        elif isinstance(m, at.Ge):
            lo = f"{m.ge}"
        elif isinstance(m, at.Gt):
            lo = f">{m.gt}"
        elif isinstance(m, at.Le):
            hi = f"{m.le}"
        elif isinstance(m, at.Lt):
            hi = f"<{m.lt}"
        elif isinstance(m, at.MinLen):
            parts.append(f"at least {m.min_length} item(s)")
        elif isinstance(m, at.MaxLen):
            parts.append(f"at most {m.max_length} item(s)")
    if lo is not None or hi is not None:
        parts.insert(0, f"{lo if lo is not None else ''}..{hi if hi is not None else ''}")
    return parts


def _unwrap(tp: Any, metadata: list[Any]) -> tuple[Any, list[Any], bool]:
    """(inner type, constraints, optional) of an Annotated / `X | None` type."""
    optional = False
    while True:
        origin = get_origin(tp)
        if origin is typing.Annotated:
            tp, *extra = get_args(tp)
            metadata = [*metadata, *extra]
        elif origin in (Union, types.UnionType) and type(None) in get_args(tp):
            rest = [a for a in get_args(tp) if a is not type(None)]
            optional = True
            tp = rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007
        else:
            return tp, metadata, optional


def _type_text(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return " | ".join(str(a) for a in get_args(tp))
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return str(field.default_factory())  # type: ignore[call-arg]
    if field.default is PydanticUndefined:
        return "required"
    d = field.default
    return "-" if d is None else str(d).lower() if isinstance(d, bool) else str(d)


# The fields every program's config has (declared in each), described once.
SHARED_DOCS = {
    "program": "the program this config is for",
    "chip": "the chip the program is compiled for (hw_profiles/<chip>.yaml)",
    "routes": "IPv4 forwarding: each prefix to an egress port, with the MACs to write",
    "routes[].prefix": "IPv4 destination prefix (host bits clear)",
    "routes[].port": "egress device port",
    "routes[].src_mac": "source MAC written on the way out",
    "routes[].dst_mac": "destination MAC written on the way out",
    "trusted_ports": "device ports whose frames skip the source guard (switch links)",
    "source_bindings": "the IPv4 sources each host port may send from (source_guard.p4)",
    "source_bindings[].port": "the host's device port",
    "source_bindings[].prefixes": "the sources it may use; 0.0.0.0/0 alone leaves it unchecked",
}

_FIELD_LINE = re.compile(r"^(\s+)(\w+)\s*:")


@functools.cache
def _class_comments(cls: type) -> dict[str, str]:
    """Field name -> the comment that documents it in `cls`'s source: the
    comment lines right above the field, else one at the end of its line
    (how the config schemas document their fields)."""
    try:
        lines = inspect.getsource(cls).splitlines()
    except (OSError, TypeError):  # no source (a frozen or generated class)
        return {}
    out: dict[str, str] = {}
    pending: list[str] = []
    body_indent: str | None = None
    for line in lines[1:]:
        text = line.strip()
        if text.startswith("#"):
            pending.append(text.lstrip("#").strip())
            continue
        m = _FIELD_LINE.match(line)
        if m is not None and body_indent is None:
            body_indent = m.group(1)
        if m is not None and m.group(1) == body_indent:
            _, _, trailing = line.partition("  # ")
            doc = " ".join(pending) if pending else trailing.strip()
            if doc:
                out.setdefault(m.group(2), doc)
        pending = []
    return out


def _description(model: type[BaseModel], fname: str, field: FieldInfo, name: str) -> str:
    """The field's description, else its comment in the source, else the
    shared one, else the first sentence of the docstring of its model."""
    if field.description:
        return " ".join(field.description.split())
    for cls in model.__mro__:
        if fname in getattr(cls, "__annotations__", {}):
            doc = _class_comments(cls).get(fname, "")
            if doc:
                return doc
            break
    shared = SHARED_DOCS.get(name)
    if shared:
        return shared
    tp, _, _ = _unwrap(field.annotation, [])
    args = [a for a in get_args(tp) if isinstance(a, type)]
    for cls in (tp, *args):
        if isinstance(cls, type) and issubclass(cls, BaseModel) and cls.__doc__:
            return " ".join(cls.__doc__.split(".")[0].split())
    return ""


def _walk(model: type[BaseModel], prefix: str, out: list[Param]) -> None:
    for fname, field in model.model_fields.items():
        name = f"{prefix}{fname}"
        tp, metadata, optional = _unwrap(field.annotation, list(field.metadata))
        start = len(out)
        _leaf(name, tp, metadata, optional, _default(field), out)
        if len(out) > start and out[start].name == name:
            out[start] = replace(out[start], description=_description(model, fname, field, name))


def _leaf(
    name: str, tp: Any, metadata: list[Any], optional: bool, default: str, out: list[Param]
) -> None:
    origin = get_origin(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        _walk(tp, f"{name}.", out)
        return
    if origin in (list, tuple) and get_args(tp):
        args = [a for a in get_args(tp) if a is not Ellipsis]
        item, item_meta, _ = _unwrap(args[0], [])
        own = _bounds(metadata)
        if isinstance(item, type) and issubclass(item, BaseModel):
            out.append(Param(name, "list", "", "; ".join(own) or "-", default))
            _walk(item, f"{name}[].", out)
            return
        rng = "; ".join([*_bounds(item_meta), *own]) or "-"
        kind = f"list of {_type_text(item)}"
        out.append(Param(name, kind, _unit(name), rng, default))
        return
    kind = _type_text(tp) + (" or null" if optional else "")
    out.append(Param(name, kind, _unit(name), "; ".join(_bounds(metadata)) or "-", default))
