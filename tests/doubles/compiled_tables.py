# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The P4 tables a switch declares, read from the compiler's bf-rt.json.

The fake SDE must not learn a program's table, key, action and field names,
widths and sizes from the reference model: a name both the model and the
controller get wrong would then pass. These come from the bf-rt.json that
p4c-barefoot wrote for each program and chip (`tests/data/bfrt/<chip>/`,
refreshed and checked fresh by `scripts/build_p4.py`), so CI without a
compiler still tests the controller against the compiler's schema.

Two things bf-rt.json does not carry come from the model, and
tests/test_compiled_schema.py holds them to the JSON where it can:
- a table's initial default action and its parameters (the P4's
  `default_action = ...(args)`; bf-rt.json lists the actions a default may
  take, not which one the program set), and
- a register's initial value (the P4's `Register<>(size, initial)`;
  bf-rt.json has only the data field and its width).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "data" / "bfrt"

# bf-rt.json table_type -> the fake's kind. The rest (DynHash*, Snapshot*,
# PortMetadata, TblDbgCnt) are declared, so their names resolve, but any
# read or write of them is refused as not modelled.
P4_KINDS = {"MatchAction_Direct": "mat", "Register": "register", "Counter": "counter"}
UNMODELLED = "unmodelled"


@dataclass(frozen=True)
class KeySpec:
    name: str
    bits: int
    match: str  # "Exact" | "LPM" | "Ternary"


@dataclass(frozen=True)
class FieldSpec:
    name: str
    bits: int = 0
    type: str = "int"  # "int" | "bool" | "str" | "int_arr"
    choices: tuple[str, ...] = ()
    # "mandatory": false in the JSON: an action's data may leave it out (0).
    optional: bool = False
    # "read_only": true in the JSON: reads return it, writes are refused here.
    read_only: bool = False


@dataclass
class TableSpec:
    name: str
    # "mat" | "register" | "counter" | "mirror" | "tm_port" (tm.port.cfg, read
    # only) | "tm_sched" (fixed per-queue TM tables) | "tm_port_sched" (fixed
    # per-port TM tables) | ... | "unmodelled"
    kind: str
    keys: dict[str, KeySpec]
    actions: dict[str, dict[str, FieldSpec]] = field(default_factory=dict)
    fields: dict[str, FieldSpec] = field(default_factory=dict)
    size: int = 0
    initial_default: tuple[str, dict[str, int]] = ("", {})
    initial_value: int = 0
    # Fixed TM tables: every row exists, holding these values at power-on.
    tm_defaults: dict[str, Any] = field(default_factory=dict)
    # Actions an entry may not use ("DefaultOnly") or a default may not
    # ("TableOnly"); a const default may not be changed at all.
    default_only: frozenset[str] = frozenset()
    table_only: frozenset[str] = frozenset()
    const_default: bool = False


class SchemaMissing(FileNotFoundError):
    pass


def schema_path(program: str, chip: str, production: bool = False) -> Path:
    return SCHEMA_DIR / chip / f"{program}{'-production' if production else ''}.json"


@functools.cache
def load_schema(program: str, chip: str, production: bool = False) -> dict[str, Any]:
    path = schema_path(program, chip, production)
    if not path.is_file():
        raise SchemaMissing(
            f"{path}: no committed bf-rt.json for {program} on {chip}; "
            "run scripts/build_p4.py --update-schemas with a Tofino compiler"
        )
    info: dict[str, Any] = json.loads(path.read_text())
    return info


def _bits(what: str, type_: dict[str, Any]) -> int:
    """Width of a key or data field: `bytes` carry it, the uints imply it."""
    kind = type_["type"]
    if kind == "bytes":
        return int(type_["width"])
    if kind in ("uint32", "uint64", "uint16", "uint8"):
        return int(kind[4:])
    if kind == "bool":
        return 1
    raise ValueError(f"{what}: field type {kind!r} is not modelled")


def _data_field(what: str, d: dict[str, Any]) -> FieldSpec:
    return FieldSpec(
        d["name"],
        _bits(f"{what} {d['name']}", d["type"]),
        optional=not d["mandatory"],
        read_only=bool(d.get("read_only", False)),
    )


def p4_table_specs(program: str, chip: str, production: bool = False) -> list[TableSpec]:
    """Every table of the compiled program, keys, actions and fields as the
    JSON declares them. Defaults and initial values are left to the caller."""
    specs = []
    for t in load_schema(program, chip, production)["tables"]:
        name = t["name"]
        kind = P4_KINDS.get(t["table_type"], UNMODELLED)
        if kind == UNMODELLED:
            specs.append(TableSpec(name, kind, {}, size=int(t.get("size", 0))))
            continue
        keys = {
            k["name"]: KeySpec(
                k["name"], _bits(f"{name} key {k['name']}", k["type"]), k["match_type"]
            )
            for k in t["key"]
        }
        actions = {
            a["name"]: {d["name"]: _data_field(f"{name} {a['name']}", d) for d in a["data"]}
            for a in t.get("action_specs", [])
        }
        fields = {}
        for d in t.get("data", []):
            single = d["singleton"]
            fields[single["name"]] = FieldSpec(
                single["name"],
                _bits(f"{name} {single['name']}", single["type"]),
                optional=not d["mandatory"],
                read_only=bool(d.get("read_only", False)),
            )
        scope = {
            a["name"]: a.get("action_scope", "TableAndDefault") for a in t.get("action_specs", [])
        }
        specs.append(
            TableSpec(
                name,
                kind,
                keys,
                actions,
                fields,
                size=int(t["size"]),
                default_only=frozenset(a for a, s in scope.items() if s == "DefaultOnly"),
                table_only=frozenset(a for a, s in scope.items() if s == "TableOnly"),
                const_default=bool(t.get("has_const_default_action", False)),
            )
        )
    return specs
