# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What a tna/ program declares, read from its P4 source without a compiler.

Used to hold the reference models to their P4: the tables (keys, actions,
defaults), registers and counters the P4 declares must be exactly the ones
the model declares, under the same control-plane names. It understands the
subset of P4_16 and of the preprocessor that tofino-cc itself uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from hw_profiles import HwProfile


class P4SourceError(ValueError):
    pass


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def preprocess(path: Path, defines: dict[str, str], seen: set[Path] | None = None) -> str:
    """#include "..." (system includes dropped), #define, #if/#ifdef/#ifndef/#else/#endif."""
    seen = set() if seen is None else seen
    path = path.resolve()
    if path in seen:
        return ""
    seen.add(path)
    out: list[str] = []
    active = [True]
    for line in _strip_comments(path.read_text()).splitlines():
        s = line.strip()
        if s.startswith("#"):
            words = s[1:].split()
            if not words:
                continue
            d, rest = words[0], words[1:]
            if d in ("ifdef", "ifndef"):
                cond = (rest[0] in defines) == (d == "ifdef")
                active.append(active[-1] and cond)
            elif d == "if":
                expr = " ".join(rest)
                m = re.fullmatch(r"(\w+)\s*==\s*(\w+)", expr)
                if not m:
                    raise P4SourceError(f"{path}: unsupported #if {expr}")
                cond = defines.get(m.group(1), "0") == m.group(2)
                active.append(active[-1] and cond)
            elif d == "else":
                parent = active[-2] if len(active) > 1 else True
                active[-1] = parent and not active[-1]
            elif d == "endif":
                active.pop()
            elif not active[-1]:
                continue
            elif d == "define":
                defines[rest[0]] = " ".join(rest[1:]) if len(rest) > 1 else "1"
            elif d == "include":
                target = " ".join(rest)
                if target.startswith('"'):
                    out.append(preprocess(path.parent / target.strip('"'), defines, seen))
            continue
        if active[-1]:
            for name, value in defines.items():
                if value and re.fullmatch(r"\w+", name):
                    line = re.sub(rf"\b{name}\b", value, line)
            out.append(line)
    return "\n".join(out)


def _block(text: str, start: int) -> tuple[str, int]:
    """Text inside the {...} that opens at or after `start`, and the index after it."""
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j], j + 1
    raise P4SourceError("unbalanced braces")


@dataclass
class P4Table:
    keys: list[tuple[str, str]]
    actions: list[str]
    default_action: str


@dataclass
class P4Control:
    name: str
    tables: dict[str, P4Table] = field(default_factory=dict)
    actions: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    registers: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Registers whose entry is a struct (a pair): their members, in order.
    register_members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    counters: dict[str, tuple[int, str]] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)


@dataclass
class P4Program:
    """Control-plane objects under their BF-Runtime names."""

    tables: dict[str, P4Table] = field(default_factory=dict)
    actions: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    registers: dict[str, tuple[int, int]] = field(default_factory=dict)
    register_members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    counters: dict[str, tuple[int, str]] = field(default_factory=dict)


def _structs(text: str) -> dict[str, list[tuple[str, int]]]:
    """Structs made only of bit<N> members (register entry types)."""
    out: dict[str, list[tuple[str, int]]] = {}
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{([^}]*)\}", text):
        members = re.findall(r"\bbit<(\d+)>\s+(\w+)\s*;", m.group(2))
        if members and len(members) == m.group(2).count(";"):
            out[m.group(1)] = [(name, int(w)) for w, name in members]
    return out


def _typedefs(text: str) -> dict[str, int]:
    """The program's own `typedef bit<N> name;` (tna.p4's come from the profile)."""
    return {
        m.group(2): int(m.group(1))
        for m in re.finditer(r"\btypedef\s+bit<(\d+)>\s+(\w+)\s*;", text)
    }


def _type_width(type_name: str, profile: HwProfile, typedefs: dict[str, int] | None = None) -> int:
    type_name = type_name.strip()
    m = re.fullmatch(r"bit<(\d+)>", type_name)
    if m:
        return int(m.group(1))
    if typedefs and type_name in typedefs:
        return typedefs[type_name]
    known = {
        "PortId_t": profile.port_id_bits,
        "QueueId_t": profile.queue_id_bits,
        "MirrorId_t": profile.mirror_session_max.bit_length(),
        "mac_addr_t": 48,
        "ipv4_addr_t": 32,
        "class_id_t": 16,
        "vq_id_t": 16,
        "group_t": 8,
        "pkt_type_t": 8,
        "ip_protocol_t": 8,
        "ether_type_t": 16,
    }
    if type_name not in known:
        raise P4SourceError(f"unknown type {type_name}")
    return known[type_name]


def _parse_control(
    name: str,
    body: str,
    profile: HwProfile,
    control_names: set[str],
    structs: dict[str, list[tuple[str, int]]] | None = None,
    typedefs: dict[str, int] | None = None,
) -> P4Control:
    c = P4Control(name)
    for m in re.finditer(r"\baction\s+(\w+)\s*\(([^)]*)\)", body):
        params = []
        for p in filter(None, (x.strip() for x in m.group(2).split(","))):
            ptype, pname = p.rsplit(None, 1)
            params.append((pname, _type_width(ptype, profile, typedefs)))
        c.actions[m.group(1)] = params
    for m in re.finditer(r"\btable\s+(\w+)\s*\{", body):
        tbody, _ = _block(body, m.start())
        keys: list[tuple[str, str]] = []
        km = re.search(r"\bkey\s*=\s*\{([^}]*)\}", tbody)
        if km:
            for entry in filter(None, (x.strip() for x in km.group(1).split(";"))):
                # `expr : kind`, or `expr : kind @name("n")` (a slice's
                # control-plane name); a slice's `[8:7]` has a colon too.
                expr, kind = (x.strip() for x in entry.rsplit(":", 1))
                named = re.fullmatch(r'(\w+)\s*@name\("([^"]+)"\)', kind)
                if named:
                    kind, expr = named.group(1), named.group(2)
                keys.append((expr, kind))
        am = re.search(r"\bactions\s*=\s*\{([^}]*)\}", tbody)
        actions = [a.strip() for a in am.group(1).split(";") if a.strip()] if am else []
        dm = re.search(r"\bdefault_action\s*=\s*(\w+)", tbody)
        c.tables[m.group(1)] = P4Table(keys, actions, dm.group(1) if dm else "NoAction")
    for m in re.finditer(
        r"\bRegister<\s*bit<(\d+)>\s*,\s*\w+\s*>\s*\(\s*(\d+)[^;]*?\)\s*(\w+)\s*;", body
    ):
        c.registers[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    for m in re.finditer(
        r"\bRegister<\s*(\w+)\s*,\s*\w+\s*>\s*\(\s*(\d+)[^;]*?\)\s*(\w+)\s*;", body
    ):
        members = (structs or {}).get(m.group(1))
        if members is None:
            raise P4SourceError(f"register {m.group(3)}: unknown entry type {m.group(1)}")
        c.registers[m.group(3)] = (sum(w for _, w in members), int(m.group(2)))
        c.register_members[m.group(3)] = tuple(n for n, _ in members)
    for m in re.finditer(
        r"\bCounter<[^;]*?>\s*\(\s*(\d+)\s*,\s*CounterType_t\.(\w+)\s*\)\s*(\w+)\s*;", body
    ):
        c.counters[m.group(3)] = (int(m.group(1)), m.group(2).lower())
    for m in re.finditer(r"\b(\w+)\s*\(\s*\)\s+(\w+)\s*;", body):
        if m.group(1) in control_names:
            c.instances[m.group(2)] = m.group(1)
    return c


def read_program(path: Path, profile: HwProfile, test_hooks: bool = True) -> P4Program:
    defines = {"__TARGET_TOFINO__": "2" if profile.chip == "tofino2" else "1"}
    if not test_hooks:
        defines["TOFCC_NO_TEST_HOOKS"] = "1"
    text = preprocess(path, defines)
    headers = list(re.finditer(r"\bcontrol\s+(\w+)\s*\(", text))
    names = {m.group(1) for m in headers}
    structs = _structs(text)
    typedefs = _typedefs(text)
    controls: dict[str, P4Control] = {}
    for m in headers:
        body, _ = _block(text, m.end())
        controls[m.group(1)] = _parse_control(m.group(1), body, profile, names, structs, typedefs)

    prog = P4Program()

    def walk(ctrl: P4Control, path_: str) -> None:
        for t, spec in ctrl.tables.items():
            prog.tables[f"{path_}.{t}"] = P4Table(
                spec.keys,
                [a if a == "NoAction" else f"{path_}.{a}" for a in spec.actions],
                spec.default_action
                if spec.default_action == "NoAction"
                else f"{path_}.{spec.default_action}",
            )
        for a, params in ctrl.actions.items():
            prog.actions[f"{path_}.{a}"] = params
        for r, spec2 in ctrl.registers.items():
            prog.registers[f"{path_}.{r}"] = spec2
        for r, members in ctrl.register_members.items():
            prog.register_members[f"{path_}.{r}"] = members
        for cn, spec3 in ctrl.counters.items():
            prog.counters[f"{path_}.{cn}"] = spec3
        for inst, ctype in ctrl.instances.items():
            walk(controls[ctype], f"{path_}.{inst}")

    for top in ("SwitchIngress", "SwitchEgress"):
        if top not in controls:
            raise P4SourceError(f"{path}: no control {top}")
        walk(controls[top], top)
    return prog
