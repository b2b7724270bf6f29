# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What a tna/ program declares, read from its P4 source without a compiler.

Used to hold the reference models to their P4 (tests/test_p4_model_parity.py)
and the width audit to the declarations (scripts/width_audit.py): the tables
(keys, actions, defaults), registers and counters the P4 declares must be
exactly the ones the model declares, under the same control-plane names, and
every register, counter and metadata field has the width the audit says. It
understands the subset of P4_16 and of the preprocessor that tofino-cc
itself uses: comments, `#include "..."`, `#define NAME value`, the
conditionals, typedefs of `bit<N>`, controls applied from other controls
(with or without constructor arguments) and `@name` annotations, which is
how an object keeps its name when it lives in a sub-control.
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


# Where each included file's text starts (and its includer's resumes) in
# preprocess()'s output, so a declaration can be traced to its file.
_FILE_MARK = "#file "


class _Defines:
    """The object-like macros seen so far, substituted in one pass per line."""

    def __init__(self, defines: dict[str, str]) -> None:
        self.values = defines
        self._pattern: re.Pattern[str] | None = None
        self._seen = -1

    def substitute(self, line: str) -> str:
        names = [n for n, v in self.values.items() if v and re.fullmatch(r"\w+", n)]
        if self._seen != len(self.values):
            self._pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
            self._seen = len(self.values)
        if not names or self._pattern is None:
            return line
        # A value naming another macro is expanded too (bounded: no cycles here).
        for _ in range(4):
            new = self._pattern.sub(lambda m: self.values[m.group(1)], line)
            if new == line:
                break
            line = new
        return line


def preprocess(path: Path, defines: dict[str, str], seen: set[Path] | None = None) -> str:
    """#include "..." (system includes dropped), #define, #if/#ifdef/#ifndef/#else/#endif.

    The output carries a `#file <path>` line wherever the text of another
    file starts or resumes (see `file_of`)."""
    return _preprocess(path, _Defines(defines), set() if seen is None else seen)


def _preprocess(path: Path, defines: _Defines, seen: set[Path]) -> str:
    path = path.resolve()
    if path in seen:
        return ""
    seen.add(path)
    mark = f"{_FILE_MARK}{path}"
    out: list[str] = [mark]
    active = [True]
    for line in _strip_comments(path.read_text()).splitlines():
        s = line.strip()
        if s.startswith("#"):
            words = s[1:].split()
            if not words:
                continue
            d, rest = words[0], words[1:]
            if d in ("ifdef", "ifndef"):
                cond = (rest[0] in defines.values) == (d == "ifdef")
                active.append(active[-1] and cond)
            elif d == "if":
                expr = " ".join(rest)
                m = re.fullmatch(r"(\w+)\s*==\s*(\w+)", expr)
                if not m:
                    raise P4SourceError(f"{path}: unsupported #if {expr}")
                cond = defines.values.get(m.group(1), "0") == m.group(2)
                active.append(active[-1] and cond)
            elif d == "else":
                parent = active[-2] if len(active) > 1 else True
                active[-1] = parent and not active[-1]
            elif d == "endif":
                active.pop()
            elif not active[-1]:
                continue
            elif d == "define":
                defines.values[rest[0]] = " ".join(rest[1:]) if len(rest) > 1 else "1"
            elif d == "include":
                target = " ".join(rest)
                if target.startswith('"'):
                    out.append(_preprocess(path.parent / target.strip('"'), defines, seen))
                    out.append(mark)
            continue
        if active[-1]:
            out.append(defines.substitute(line))
    return "\n".join(out)


def file_of(text: str, pos: int) -> Path:
    """The file the preprocessed `text` holds at `pos`."""
    i = text.rfind("\n" + _FILE_MARK, 0, pos + 1)
    start = i + 1 if i >= 0 else 0
    if not text.startswith(_FILE_MARK, start):
        raise P4SourceError("text without file marks (not from preprocess)")
    return Path(text[start + len(_FILE_MARK) : text.index("\n", start)])


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


@dataclass(frozen=True)
class P4Declared:
    """A register or counter as declared: `kind` "register" or "counter",
    the file that declares it, and the width of each member of its entry
    (one for bit<N>, one per member of a struct entry)."""

    kind: str
    file: Path
    widths: tuple[int, ...]


@dataclass(frozen=True)
class P4Struct:
    """A struct or header: its file, and each field whose type is a bit
    string (bit<N> or a typedef or chip type of one), with its width."""

    file: Path
    fields: dict[str, int]


@dataclass
class P4Control:
    name: str
    file: Path | None = None
    tables: dict[str, P4Table] = field(default_factory=dict)
    actions: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    registers: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Registers whose entry is a struct (a pair): their members, in order.
    register_members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    counters: dict[str, tuple[int, str]] = field(default_factory=dict)
    # Every register's and counter's entry widths (P4Declared.widths).
    widths: dict[str, tuple[int, ...]] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)
    # Declarations annotated @name("..."): their local name -> that name.
    named: dict[str, str] = field(default_factory=dict)


@dataclass
class P4Program:
    """Control-plane objects under their BF-Runtime names."""

    tables: dict[str, P4Table] = field(default_factory=dict)
    actions: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    registers: dict[str, tuple[int, int]] = field(default_factory=dict)
    register_members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    counters: dict[str, tuple[int, str]] = field(default_factory=dict)
    # Registers and counters by name, with where and how wide (the width audit's).
    declarations: dict[str, P4Declared] = field(default_factory=dict)
    # Every struct and header of the program and its includes, by type name.
    structs: dict[str, P4Struct] = field(default_factory=dict)


def _typedefs(text: str) -> dict[str, int]:
    """The program's own `typedef bit<N> name;` (tna.p4's come from the profile)."""
    return {
        m.group(2): int(m.group(1))
        for m in re.finditer(r"\btypedef\s+bit<(\d+)>\s+(\w+)\s*;", text)
    }


def _chip_types(profile: HwProfile) -> dict[str, int]:
    """The architecture's own types, whose widths differ between chips."""
    return {
        "PortId_t": profile.port_id_bits,
        "QueueId_t": profile.queue_id_bits,
        "MirrorId_t": profile.mirror_session_max.bit_length(),
    }


def _type_width(type_name: str, types: dict[str, int]) -> int | None:
    type_name = type_name.strip()
    m = re.fullmatch(r"bit<(\d+)>", type_name)
    if m:
        return int(m.group(1))
    return types.get(type_name)


def _width(type_name: str, types: dict[str, int]) -> int:
    w = _type_width(type_name, types)
    if w is None:
        raise P4SourceError(f"unknown type {type_name}")
    return w


def _structs(text: str, types: dict[str, int]) -> dict[str, P4Struct]:
    """Every struct and header, with the fields whose type is a bit string."""
    out: dict[str, P4Struct] = {}
    for m in re.finditer(r"\b(?:struct|header)\s+(\w+)\s*\{([^}]*)\}", text):
        fields: dict[str, int] = {}
        for fm in re.finditer(r"([\w<>]+)\s+(\w+)\s*;", m.group(2)):
            w = _type_width(fm.group(1), types)
            if w is not None:
                fields[fm.group(2)] = w
        out[m.group(1)] = P4Struct(file_of(text, m.start()), fields)
    return out


def _register_entries(text: str, types: dict[str, int]) -> dict[str, list[tuple[str, int]]]:
    """Structs made only of bit strings (register entry types): their members."""
    out: dict[str, list[tuple[str, int]]] = {}
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{([^}]*)\}", text):
        members = re.findall(r"([\w<>]+)\s+(\w+)\s*;", m.group(2))
        widths = [(name, _type_width(t, types)) for t, name in members]
        if members and all(w is not None for _, w in widths):
            out[m.group(1)] = [(name, w) for name, w in widths if w is not None]
    return out


_ANNOTATED_NAME = re.compile(r'@name\("([^"]+)"\)\s*$')


def _annotated(body: str, start: int) -> str | None:
    """The @name("...") written just before the declaration at `start`."""
    m = _ANNOTATED_NAME.search(body, 0, start)
    return m.group(1) if m else None


def _parse_control(
    name: str,
    body: str,
    types: dict[str, int],
    control_names: set[str],
    entries: dict[str, list[tuple[str, int]]] | None = None,
) -> P4Control:
    c = P4Control(name)

    def note(local: str, start: int) -> None:
        cp = _annotated(body, start)
        if cp is not None:
            c.named[local] = cp

    for m in re.finditer(r"\baction\s+(\w+)\s*\(([^)]*)\)", body):
        params = []
        for p in filter(None, (x.strip() for x in m.group(2).split(","))):
            ptype, pname = p.rsplit(None, 1)
            params.append((pname, _width(ptype, types)))
        c.actions[m.group(1)] = params
        note(m.group(1), m.start())
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
        note(m.group(1), m.start())
    for m in re.finditer(
        r"\bRegister<\s*([\w<>]+?)\s*,\s*\w+\s*>\s*\(\s*(\d+)[^;]*?\)\s*(\w+)\s*;", body
    ):
        entry, size, reg = m.group(1), int(m.group(2)), m.group(3)
        width = _type_width(entry, types)
        if width is not None:
            c.registers[reg] = (width, size)
            c.widths[reg] = (width,)
        else:
            members = (entries or {}).get(entry)
            if members is None:
                raise P4SourceError(f"register {reg}: unknown entry type {entry}")
            c.registers[reg] = (sum(w for _, w in members), size)
            c.register_members[reg] = tuple(n for n, _ in members)
            c.widths[reg] = tuple(w for _, w in members)
        note(reg, m.start())
    for m in re.finditer(
        r"\bCounter<\s*([\w<>]+?)\s*,[^;]*?>\s*\(\s*(\d+)\s*,\s*CounterType_t\.(\w+)\s*\)\s*(\w+)\s*;",
        body,
    ):
        c.counters[m.group(4)] = (int(m.group(2)), m.group(3).lower())
        c.widths[m.group(4)] = (_width(m.group(1), types),)
        note(m.group(4), m.start())
    # Instances of other controls, with constructor arguments or without.
    for m in re.finditer(r"\b(\w+)\s*\([^;{}()]*\)\s+(\w+)\s*;", body):
        if m.group(1) in control_names:
            c.instances[m.group(2)] = m.group(1)
    return c


def read_program(
    path: Path,
    profile: HwProfile,
    test_hooks: bool = True,
    defines: dict[str, str] | None = None,
) -> P4Program:
    """The program as the compiler builds it for `profile`'s chip, with the
    test hooks or without, and `defines` as -D on its command line."""
    defines = {
        **(defines or {}),
        "__TARGET_TOFINO__": "2" if profile.chip == "tofino2" else "1",
    }
    if not test_hooks:
        defines["TOFCC_NO_TEST_HOOKS"] = "1"
    text = preprocess(path, defines)
    headers = list(re.finditer(r"\bcontrol\s+(\w+)\s*\(", text))
    names = {m.group(1) for m in headers}
    types = {**_chip_types(profile), **_typedefs(text)}
    entries = _register_entries(text, types)
    controls: dict[str, P4Control] = {}
    for m in headers:
        body, _ = _block(text, m.end())
        c = _parse_control(m.group(1), body, types, names, entries)
        c.file = file_of(text, m.start())
        controls[m.group(1)] = c

    prog = P4Program(structs=_structs(text, types))

    def walk(ctrl: P4Control, path_: str) -> None:
        def full(local: str) -> str:
            """The control-plane name: an @name starting with "." is the
            whole name, any other replaces the local name in the path."""
            cp = ctrl.named.get(local, local)
            return cp[1:] if cp.startswith(".") else f"{path_}.{cp}"

        def action(a: str) -> str:
            return a if a == "NoAction" else full(a)

        for t, spec in ctrl.tables.items():
            prog.tables[full(t)] = P4Table(
                spec.keys, [action(a) for a in spec.actions], action(spec.default_action)
            )
        for a, params in ctrl.actions.items():
            prog.actions[full(a)] = params
        for r, spec2 in ctrl.registers.items():
            prog.registers[full(r)] = spec2
        for r, members in ctrl.register_members.items():
            prog.register_members[full(r)] = members
        for cn, spec3 in ctrl.counters.items():
            prog.counters[full(cn)] = spec3
        assert ctrl.file is not None
        for n, widths in ctrl.widths.items():
            kind = "register" if n in ctrl.registers else "counter"
            prog.declarations[full(n)] = P4Declared(kind, ctrl.file, widths)
        for inst, ctype in ctrl.instances.items():
            walk(controls[ctype], f"{path_}.{inst}")

    for top in ("SwitchIngress", "SwitchEgress"):
        if top not in controls:
            raise P4SourceError(f"{path}: no control {top}")
        walk(controls[top], top)
    return prog
