# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The reference models against the compiler's own bf-rt.json.

The committed bf-rt.json files (tests/data/bfrt/, refreshed and checked
fresh by scripts/build_p4.py) are written by p4c-barefoot, not by us: every
table, key, action, parameter, register and counter the model declares must
be there with the same width, match kind and size, and the compiled program
must have no P4 table the model lacks. The fake SDE takes its P4 tables from
the same files, so a name both the model and the controller get wrong fails
here even where no compiler is installed.
"""

from __future__ import annotations

import pytest

from hw_profiles import load_profile
from models.switch.registry import PROGRAMS, make_model
from tests.doubles.compiled_tables import p4_table_specs, schema_path

CHIPS = ("tofino", "tofino2")
HOOK_SUFFIX = "_override"
MATCH = {"exact": "Exact", "lpm": "LPM", "ternary": "Ternary"}


def _builds() -> list[tuple[str, str, bool]]:
    return [(p, c, prod) for p in PROGRAMS for c in CHIPS for prod in (False, True)]


@pytest.mark.parametrize(("program", "chip", "production"), _builds())
def test_every_program_has_its_compiled_schema(program: str, chip: str, production: bool) -> None:
    assert schema_path(program, chip, production).is_file()


@pytest.mark.parametrize(("program", "chip", "production"), _builds())
def test_model_declares_what_the_compiler_declares(
    program: str, chip: str, production: bool
) -> None:
    model = make_model(program, load_profile(chip)).p4
    compiled = {s.name.removeprefix("pipe."): s for s in p4_table_specs(program, chip, production)}
    problems: list[str] = []

    def want(name: str, kind: str) -> object:
        spec = compiled.get(name)
        if spec is None:
            problems.append(f"{kind} {name}: not in the compiled bf-rt.json")
        elif spec.kind != kind:
            problems.append(f"{name}: a {spec.kind} in bf-rt.json, a {kind} in the model")
            return None
        return spec

    for name, t in model.tables.items():
        if production and name.endswith(HOOK_SUFFIX):
            continue  # compiled out of production builds
        spec = want(name, "mat")
        if spec is None:
            continue
        keys = {k.name: (k.bits, MATCH[k.match]) for k in t.keys.values()}
        if t.needs_priority:
            keys["$MATCH_PRIORITY"] = (32, "Exact")
        got = {k.name: (k.bits, k.match) for k in spec.keys.values()}  # type: ignore[attr-defined]
        if got != keys:
            problems.append(f"{name}: keys {got} compiled, {keys} in the model")
        actions = {a.name: dict(a.params) for a in t.actions.values()}
        got_actions = {
            a: {f.name: f.bits for f in fields.values()}
            for a, fields in spec.actions.items()  # type: ignore[attr-defined]
        }
        if got_actions != actions:
            problems.append(f"{name}: actions {got_actions} compiled, {actions} in the model")
        if spec.size != t.size:  # type: ignore[attr-defined]
            problems.append(f"{name}: size {spec.size} compiled, {t.size} in the model")  # type: ignore[attr-defined]
        if t.default[0] in spec.table_only or spec.const_default:  # type: ignore[attr-defined]
            problems.append(f"{name}: the model's default {t.default[0]} cannot be a default")
    for name, r in model.registers.items():
        spec = want(name, "register")
        if spec is None:
            continue
        fields = {f.name: f.bits for f in spec.fields.values()}  # type: ignore[attr-defined]
        # A struct register shows one field per member, in declaration order.
        members = r.members or ("f1",)
        expect = {f"{name}.{m}": r.width // len(members) for m in members}
        if list(fields.items()) != list(expect.items()) or spec.size != r.size:  # type: ignore[attr-defined]
            problems.append(
                f"{name}: {fields} x {spec.size} compiled, {r.width} bits x {r.size} in the model"  # type: ignore[attr-defined]
            )
    for name, c in model.counters.items():
        spec = want(name, "counter")
        if spec is None:
            continue
        counted = set()
        if c.kind in ("packets", "packets_and_bytes"):
            counted.add("$COUNTER_SPEC_PKTS")
        if c.kind in ("bytes", "packets_and_bytes"):
            counted.add("$COUNTER_SPEC_BYTES")
        if set(spec.fields) != counted or spec.size != c.size:  # type: ignore[attr-defined]
            problems.append(
                f"{name}: {sorted(spec.fields)} x {spec.size} compiled, "  # type: ignore[attr-defined]
                f"{sorted(counted)} x {c.size} in the model"
            )
    declared = set(model.tables) | set(model.registers) | set(model.counters)
    for name, spec in compiled.items():
        if spec.kind in ("mat", "register", "counter") and name not in declared:
            problems.append(f"{spec.kind} {name}: compiled, but the model has no such object")
    assert not problems, "\n".join(problems)


def test_the_fake_takes_its_p4_schema_from_bfrt_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """Change the compiler's answer and the fake follows it, whatever the model says."""
    import copy

    from tests.doubles import compiled_tables
    from tests.doubles.fake_bfrt_grpc import FakeBfrtGrpc

    info = copy.deepcopy(compiled_tables.load_schema("spie", "tofino2"))
    (table,) = [t for t in info["tables"] if t["name"] == "pipe.SwitchIngress.spie_port"]
    table["size"] = 7
    (set_spie,) = [a for a in table["action_specs"] if a["name"] == "SwitchIngress.set_spie"]
    set_spie["data"][0]["type"]["width"] = 3
    monkeypatch.setattr(compiled_tables, "load_schema", lambda *_: info)
    fake = FakeBfrtGrpc("spie", load_profile("tofino2"))
    spec = fake.switch.spec("pipe.SwitchIngress.spie_port")
    assert spec.size == 7
    assert spec.actions["SwitchIngress.set_spie"][set_spie["data"][0]["name"]].bits == 3
    # Objects bf-rt.json declares that no model has (hash configuration,
    # snapshot) are there too, refused as not modelled if ever used.
    assert fake.switch.spec("pipe.SwitchIngress.hasher0.compute").kind == "unmodelled"


def test_a_production_fake_has_no_test_hooks() -> None:
    from tests.doubles.fake_bfrt_grpc import FakeBfrtGrpc

    fake = FakeBfrtGrpc("pmqecn", load_profile("tofino"), production=True)
    names = {s.name for s in fake.switch.specs}
    assert not any(n.endswith(HOOK_SUFFIX) for n in names)
    assert "pipe.SwitchEgress.queue_hook.queue_md_override" not in names


def _names_module(program: str) -> object:
    import importlib

    return importlib.import_module(f"bfrt_controller.{program}.names")


def _named(names: object) -> list[tuple[str, str]]:
    """(where, name) for every control-plane name a names module keeps: its
    string constants and the strings inside its tuples and mappings
    (spie's SET_TERM maps each term table to its action)."""
    out: list[tuple[str, str]] = []

    def walk(where: str, value: object) -> None:
        if isinstance(value, str):
            out.append((where, value))
        elif isinstance(value, tuple | list | frozenset | set):
            for i, item in enumerate(value):
                walk(f"{where}[{i}]", item)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(f"{where}[{key!r}]", key)
                walk(f"{where}[{key!r}]", item)

    for attr in dir(names):
        if not attr.startswith("_"):
            walk(attr, getattr(names, attr))
    return out


GROUPS = {"ALL_TABLES": "mat", "ALL_REGISTERS": "register", "ALL_COUNTERS": "counter"}


@pytest.mark.parametrize(("program", "chip"), [(p, c) for p in PROGRAMS for c in CHIPS])
def test_controller_names_are_the_compilers(program: str, chip: str) -> None:
    """Every control-plane name a controller's names.py keeps by hand,
    field by field, against the committed bf-rt.json of both builds: each
    key (K_*) a key of some compiled table; each action an action of some
    table; each object of the kind its ALL_* group says, and listed in that
    group, so no constant's kind goes unchecked. Objects of the production
    build are there in it; test hooks (in the test build only) are not.
    ALL_TABLES is every table the production build has: a table added to
    the P4 without a controller name fails here. A typo or a rename in the
    P4 fails here, not on a switch."""
    names = _names_module(program)
    full = {s.name.removeprefix("pipe."): s for s in p4_table_specs(program, chip)}
    prod = {s.name.removeprefix("pipe."): s for s in p4_table_specs(program, chip, True)}
    hooks = set(full) - set(prod)
    actions = {a for s in full.values() for a in s.actions}
    hook_actions = actions - {a for s in prod.values() for a in s.actions}
    keys = {k for s in full.values() for k in s.keys}
    grouped = {name: kind for group, kind in GROUPS.items() for name in getattr(names, group, ())}
    problems = []
    for where, value in _named(names):
        if where.startswith("K_") or where.startswith("ALL_KEYS"):
            if value not in keys:
                problems.append(f"{where} = {value!r}: no compiled table has this key")
            continue
        if not value.startswith(("SwitchIngress.", "SwitchEgress.")):
            continue  # a prefix (IG, EG), a size: not a name
        if value in full:
            kind = full[value].kind
            if value in hooks:
                if kind != "mat":
                    problems.append(f"{where} = {value!r}: a {kind} only the test build has")
            elif value not in grouped:
                problems.append(f"{where} = {value!r}: a {kind} no ALL_* group lists")
            elif grouped[value] != kind:
                problems.append(
                    f"{where} = {value!r}: a {kind} in bf-rt.json, a {grouped[value]} by its group"
                )
            elif prod[value].kind != kind:
                problems.append(f"{where} = {value!r}: a {prod[value].kind} in production")
        elif value in actions:
            if where.startswith(tuple(GROUPS)):
                problems.append(f"{where} = {value!r}: an action, listed as an object")
        else:
            problems.append(f"{where} = {value!r}: neither an object nor an action compiled")
    for where, value in _named(names):
        if where.startswith("ALL_ACTIONS") and (value not in actions or value in hook_actions):
            problems.append(f"{where} = {value!r}: not an action of the production build")
    tables = {name for name, s in prod.items() if s.kind == "mat"}
    listed = set(getattr(names, "ALL_TABLES", ()))
    for name in sorted(tables - listed):
        problems.append(f"ALL_TABLES: lacks {name}, a table of the production build")
    assert not problems, "\n".join(problems)


def test_the_names_check_fails_on_a_wrong_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a table given as a counter, an action in a
    mapping misspelt, a key renamed and a table left out of ALL_TABLES are
    each named."""
    names = _names_module("spie")
    monkeypatch.setattr(names, "ALL_COUNTERS", (*names.ALL_COUNTERS, names.SPIE_PORT))  # type: ignore[attr-defined]
    terms = dict(names.SET_TERM)  # type: ignore[attr-defined]
    terms[names.ALPHA_HI] = "SwitchEgress.set_alpha_high"  # type: ignore[attr-defined]
    monkeypatch.setattr(names, "SET_TERM", terms)
    monkeypatch.setattr(names, "K_D_REF", "eg_md.d_reference")
    first, *rest = names.ALL_TABLES  # type: ignore[attr-defined]
    monkeypatch.setattr(names, "ALL_TABLES", tuple(rest))
    with pytest.raises(AssertionError) as failed:
        test_controller_names_are_the_compilers("spie", "tofino2")
    said = str(failed.value)
    assert "SwitchIngress.spie_port': a mat in bf-rt.json, a counter by its group" in said
    assert "'SwitchEgress.set_alpha_high': neither an object nor an action compiled" in said
    assert "K_D_REF = 'eg_md.d_reference': no compiled table has this key" in said
    assert f"ALL_TABLES: lacks {first}, a table of the production build" in said
