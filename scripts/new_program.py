# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Start a new mechanism as a copy of an existing one, under a new name.

    python scripts/new_program.py NAME --from PROGRAM

Copies PROGRAM's P4 (tna/PROGRAM/), reference model (models/switch/),
hand-written vectors (ptf_tests/vectors/PROGRAM/, not p4testgen's
generated/), PTF module, controller package (bfrt_controller/PROGRAM/: app,
config, commands, status, names), default config, compiled bf-rt.json
(tests/data/bfrt/), one bundled scenario (PROGRAM-smoke, else its first),
its scheme's parameter model (evaluation/scenario.py) and switch builder
(evaluation/schemes.py), its width-audit entries and its section of
tna/include/size.p4, each under NAME:
file names and identifiers (PROGRAM, Program, PROGRAM_...) renamed, while
what the copy shares with PROGRAM (its host algorithm, its threshold
module, its tests, its other scenarios) keeps pointing at PROGRAM's. Then
it adds NAME's entry to tofcc_common/registry.py, beside PROGRAM's scheme
wherever the evaluation names it (ECN kinds, fixed-rate senders), a row in
tna/README.md, and rewrites tna/README.md's width table. The tree's suite
then passes with NAME in it; docs/adding-a-program.md says, file by file,
what to change next.

Everything is read and checked before anything is written: a NAME that is
taken or is not one lower-case word, or a PROGRAM it cannot copy, exits 2
with one line and leaves the tree as it was.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import keyword
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tofcc_common import registry  # noqa: E402

NAME_RULE = re.compile(r"^[a-z][a-z0-9]{1,30}$")
REGISTRY = Path("tofcc_common/registry.py")
SCENARIO = Path("evaluation/scenario.py")
SCHEMES = Path("evaluation/schemes.py")
WIDTH_AUDIT = Path("scripts/width_audit.py")
TNA_README = Path("tna/README.md")
SIZES = Path("tna/include/size.p4")
# Files of a program that are a p4testgen run's output, not its source: a
# copy has none until scripts/testgen.py runs on it.
GENERATED = "generated"


class Refused(Exception):
    """Bad input: one line, exit 2, nothing written."""


@dataclass(frozen=True)
class Names:
    """The old and new name in each spelling the project uses."""

    old: str
    new: str

    @property
    def cls_old(self) -> str:
        return self.old.capitalize()

    @property
    def cls_new(self) -> str:
        return self.new.capitalize()

    def spellings(self) -> list[tuple[re.Pattern[str], str]]:
        """dadctcp_x, DadctcpApp and DADCTCP_PORTS, each only as a word of
        its own case (so `p4spie` is not `p4` + `spie`)."""
        o, n = self.old, self.new
        return [
            (re.compile(rf"(?<![a-z0-9]){re.escape(o)}(?![a-z0-9])"), n),
            (
                re.compile(rf"(?<![A-Za-z0-9]){re.escape(o.capitalize())}(?![a-z0-9])"),
                n.capitalize(),
            ),
            (re.compile(rf"(?<![A-Z0-9]){re.escape(o.upper())}(?![A-Z0-9])"), n.upper()),
        ]


@dataclass
class Plan:
    """Every file to write (relative path -> text), and what to tell the user."""

    writes: dict[Path, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# ---- checks ---------------------------------------------------------------------


def _defined_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


CONTEXT = Path("bfrt_controller/context.py")


def _not_copyable(root: Path, program: str) -> str:
    """Why `program` cannot be copied by renaming, or "" if it can."""
    schemes = registry.PROGRAMS[program].schemes
    if schemes != (program,):
        return (
            f"its schemes ({', '.join(schemes)}) are not named after it, so their copies "
            "have no name to take"
        )
    # PMQECN's and BFCC's commands reach their app through a Context method
    # of their own, which shared code would have to grow for the copy.
    if program in _defined_methods(root / CONTEXT):
        return f"its commands use Context.{program}() ({CONTEXT}), which a copy has no twin of"
    return ""


def _defined_methods(path: Path) -> set[str]:
    return {
        f.name
        for c in ast.parse(path.read_text()).body
        if isinstance(c, ast.ClassDef)
        for f in c.body
        if isinstance(f, ast.FunctionDef)
    }


def check(root: Path, names: Names) -> None:
    """Refuse a name that is not one lower-case word or is taken, and a
    source the script cannot copy."""
    new, old = names.new, names.old
    if not NAME_RULE.match(new) or keyword.iskeyword(new):
        raise Refused(
            f"NAME {new!r}: not a program name (one lower-case word, a letter then letters or "
            "digits, 2-31 characters: it becomes a Python package, P4 and class names)"
        )
    if old not in registry.PROGRAMS:
        raise Refused(f"--from {old!r}: no such program (known: {', '.join(registry.PROGRAMS)})")
    why = _not_copyable(root, old)
    if why:
        others = ", ".join(n for n in registry.PROGRAMS if not _not_copyable(root, n))
        raise Refused(f"--from {old}: {why}; copy one of {others}")
    if new in registry.PROGRAMS:
        raise Refused(f"NAME {new!r}: a program of that name exists (tofcc_common/registry.py)")
    from evaluation.scenario import SCHEMES as KINDS

    if new in KINDS:
        raise Refused(f"NAME {new!r}: a scheme of that name exists (evaluation/scenario.py)")
    taken = _defined_names(root / SCENARIO) | _defined_names(root / SCHEMES)
    for ident in (names.cls_new, f"{new}_switch", f"parse_{new}", f"{names.cls_new}App"):
        if ident in taken:
            raise Refused(f"NAME {new!r}: {ident} is taken in evaluation/")
    for path in _copies(root, names).values():
        if (root / path).exists():
            raise Refused(f"NAME {new!r}: {path} exists")


# ---- what is copied ---------------------------------------------------------------


def _files(root: Path, rel: Path) -> list[Path]:
    top = root / rel
    if top.is_file():
        return [rel]
    return sorted(
        p.relative_to(root)
        for p in top.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and GENERATED not in p.parts
    )


def _scenario(root: Path, old: str) -> Path:
    """The bundled scenario to copy: PROGRAM-smoke, else its first by name."""
    scenarios = root / "evaluation" / "scenarios"
    smoke = scenarios / f"{old}-smoke.yaml"
    if smoke.is_file():
        return smoke.relative_to(root)
    found = sorted(scenarios.glob(f"{old}-*.yaml")) or sorted(scenarios.glob(f"{old}.yaml"))
    if not found:
        raise Refused(f"--from {old}: no bundled scenario evaluation/scenarios/{old}-*.yaml")
    return found[0].relative_to(root)


def _copies(root: Path, names: Names) -> dict[Path, Path]:
    """Each file copied (source -> destination, relative to the root)."""
    old = names.old
    sources = [
        Path("tna") / old,
        Path("models/switch") / f"{old}.py",
        Path("ptf_tests/vectors") / old,
        Path("ptf_tests") / old,
        Path("bfrt_controller") / old,
        Path("bfrt_controller/defaults") / f"{old}.yaml",
        _scenario(root, old),
    ]
    missing = [str(s) for s in sources if not (root / s).exists()]
    if missing:
        raise Refused(f"--from {old}: {missing[0]} is missing")
    files = [f for s in sources for f in _files(root, s)]
    files += sorted(p.relative_to(root) for p in (root / "tests/data/bfrt").glob(f"*/{old}*.json"))
    return {f: Path(rename_words(f.as_posix(), names)) for f in files}


# ---- renaming -------------------------------------------------------------------


def rename_words(text: str, names: Names, keep: tuple[str, ...] = ()) -> str:
    """`text` with the old name in each spelling replaced by the new one,
    except inside the strings of `keep` (what the copy still shares)."""
    held: dict[str, str] = {}
    for i, k in enumerate(sorted(set(keep), key=len, reverse=True)):
        token = f"\0{i}\0"
        # Whole: the scenario dadctcp-dc is kept, the variant dadctcp-dctcp is not.
        whole = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(k)}(?![A-Za-z0-9_-])")
        text, n = whole.subn(token, text)
        if n:
            held[token] = k
    for pattern, new in names.spellings():
        text = pattern.sub(new, text)
    for token, k in held.items():
        text = text.replace(token, k)
    return text


# Not the project's: skipped when looking for what the copy shares.
SKIPPED_DIRS = {"build", "__pycache__", "node_modules"}


def _tree(root: Path) -> list[Path]:
    """Every file and folder of the project (not hidden, build or cache ones)."""
    out: list[Path] = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [
            d
            for d in dirs
            if not d.startswith(".") and d not in SKIPPED_DIRS and not d.endswith(".egg-info")
        ]
        base = Path(here).relative_to(root)
        out += [base / d for d in dirs] + [base / f for f in files]
    return out


def _module(rel: Path) -> str:
    parts = rel.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(root: Path, copied: set[Path]) -> tuple[set[str], set[Path]]:
    """The modules the copied Python imports from outside the copy and the
    names it imports from them (they keep their names), and the project's
    files of those modules."""
    modules = {_module(c) for c in copied if c.suffix == ".py"}
    out: set[str] = set()
    for rel in copied:
        if rel.suffix != ".py":
            continue
        for node in ast.walk(ast.parse((root / rel).read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module not in modules:
                    out.add(node.module)
                    out |= {a.name for a in node.names}
            elif isinstance(node, ast.Import):
                out |= {a.name for a in node.names if a.name not in modules}
    files = set()
    for m in out:
        for cand in (Path(*m.split(".")).with_suffix(".py"), Path(*m.split(".")) / "__init__.py"):
            if (root / cand).is_file():
                files.add(cand)
    return out, files


def _shared_words(root: Path, names: Names, files: set[Path]) -> set[str]:
    """The identifiers spelled with the old name that shared code declares:
    the P4 includes' (p4qcn_bridged_h in tna/include/headers.p4) and those of
    the Python modules the copy imports. The copy uses them as they are."""
    spelled = re.compile(rf"\w*(?:{names.old}|{names.cls_old}|{names.old.upper()})\w*")
    bare = {names.old, names.cls_old, names.old.upper()}
    texts = [p.read_text() for p in sorted((root / "tna" / "include").glob("*.p4"))]
    texts += [(root / f).read_text() for f in sorted(files)]
    return {w for text in texts for w in spelled.findall(text) if w not in bare}


P4_DECLARATION = re.compile(
    r"\b(?:header|struct|control|parser|table|action|typedef\s+\S+|const\s+\S+|#define)"
    r"\s+(\w+)|\)\s*(\w+)\s*;"
)


def _declared(root: Path, copied: set[Path]) -> set[str]:
    """What the copied files declare themselves (a Python name bound, a P4
    header, control, table, constant or extern instance): renamed even where
    shared code happens to mention it."""
    out: set[str] = set()
    for rel in copied:
        text = (root / rel).read_text()
        if rel.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    out.add(node.name)
                elif isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store):
                    out.add(node.id if isinstance(node, ast.Name) else node.attr)
        elif rel.suffix == ".p4":
            out |= {a or b for a, b in P4_DECLARATION.findall(text)}
    return out


def shared(root: Path, names: Names, copied: set[Path]) -> tuple[str, ...]:
    """What the copy keeps pointing at: what its Python imports from outside
    the copy; every file (and folder) with the old name in its path that is
    not copied, as a path, a dotted module and a scenario's name; and the
    host algorithms named after the program (TcpCc, e.g. dadctcp-py)."""
    old = names.old
    imported, files = _imported(root, copied)
    out = {s for s in imported if rename_words(s, names) != s}
    out |= _shared_words(root, names, files) - _declared(root, copied) - _own_sizes(root, names)
    for rel in _tree(root):
        p = root / rel
        if old not in rel.name.lower() and old not in rel.as_posix():
            continue
        if rel in copied or (p.is_dir() and any(c.is_relative_to(rel) for c in copied)):
            continue
        out.add(rel.as_posix())
        if p.suffix:
            out.add(rel.with_suffix("").as_posix())
        if p.suffix == ".py":
            out.add(".".join(rel.with_suffix("").parts))
        if p.suffix == ".yaml" and rel.parent.as_posix() == "evaluation/scenarios":
            out.add(p.stem)
        if p.suffix == ".py" and p.stem != old:
            out.add(p.stem)
    tree = ast.parse((root / SCENARIO).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "TcpCc" for t in node.targets
        ):
            out |= {
                c.value
                for c in ast.walk(node.value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and old in c.value
            }
    return tuple(sorted(out))


# ---- edits to files that list programs --------------------------------------------


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _segment(text: str, node: ast.AST) -> str:
    lines = _lines(text)
    return "".join(lines[node.lineno - 1 : node.end_lineno])  # type: ignore[attr-defined]


def _insert_after(text: str, line: int, block: str) -> str:
    lines = _lines(text)
    return "".join(lines[:line]) + block + "".join(lines[line:])


def name_commands(text: str, names: Names) -> str:
    """The copy's own `tofcc` commands named NAME-COMMAND: under PROGRAM's
    names they would replace PROGRAM's commands in tofcc."""
    tree = ast.parse(text)
    edits: list[tuple[int, int, int, str]] = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for deco in fn.decorator_list:
            if not (
                isinstance(deco, ast.Call)
                and isinstance(deco.func, ast.Attribute)
                and deco.func.attr == "command"
            ):
                continue
            first = deco.args[0] if deco.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                new = f'"{names.new}-{first.value}"'
                edits.append((first.lineno, first.col_offset, first.end_col_offset or 0, new))
            else:
                # click names an unnamed command after its function.
                at = deco.func.end_col_offset or 0
                name = f'"{names.new}-{fn.name.replace("_", "-")}"' + (
                    ", " if deco.args or deco.keywords else ""
                )
                edits.append((deco.func.lineno, at + 1, at + 1, name))
    for line, start, end, new in sorted(edits, reverse=True):
        text = _replace_at(text, line, start, end, new)
    return text


def add_registry_entry(text: str, names: Names, keep: tuple[str, ...]) -> str:
    """PROGRAM's `_spec(...)` entry copied as NAME's, after the last entry."""
    tree = ast.parse(text)
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "_spec"
        and n.args
        and isinstance(n.args[0], ast.Constant)
    ]
    mine = [c for c in calls if c.args[0].value == names.old]  # type: ignore[attr-defined]
    if len(mine) != 1 or not calls:
        raise Refused(f"{REGISTRY}: no single _spec({names.old!r}, ...) entry to copy")
    entry = rename_words(_segment(text, mine[0]), names, keep)
    summary = mine[0].args[1]
    if isinstance(summary, ast.Constant) and isinstance(summary.value, str):
        # Said so in `tofcc` listings until the developer writes NAME's own.
        said = rename_words(summary.value, names, keep)
        entry = entry.replace(f'"{said}"', f'"copy of {names.old}: {said}"', 1)
    if not entry.rstrip().endswith(","):
        entry = entry.rstrip("\n") + ",\n"
    last = max(calls, key=lambda c: c.end_lineno or 0)
    line = last.end_lineno or 0
    if _lines(text)[line - 1].rstrip().endswith(")"):
        raise Refused(f"{REGISTRY}: the last entry does not end with a comma")
    return _insert_after(text, line, entry)


def add_scheme_model(text: str, names: Names, keep: tuple[str, ...]) -> str:
    """The scheme's parameter model copied as NAME's, and its kind added to
    _KIND_MODEL (which SCHEMES and the `schemes:` section come from)."""
    tree = ast.parse(text)
    cls = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == names.cls_old]
    if len(cls) != 1:
        raise Refused(f"{SCENARIO}: no class {names.cls_old} (the {names.old} scheme's model)")
    kind_line = None
    for node in tree.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "_KIND_MODEL"
            and isinstance(node.value, ast.Dict)
        ):
            for k in node.value.keys:
                if isinstance(k, ast.Constant) and k.value == names.old:
                    kind_line = k.lineno
    if kind_line is None:
        raise Refused(f"{SCENARIO}: _KIND_MODEL has no {names.old!r}")
    lines = _lines(text)
    indent = lines[kind_line - 1][: len(lines[kind_line - 1]) - len(lines[kind_line - 1].lstrip())]
    text = _insert_after(text, kind_line, f'{indent}"{names.new}": {names.cls_new},\n')
    block = "\n\n" + rename_words(_segment(text, cls[0]), names, keep)
    return _insert_after(text, cls[0].end_lineno or 0, block)


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _replace_at(text: str, line: int, start: int, end: int, new: str) -> str:
    lines = _lines(text)
    raw = lines[line - 1].encode()
    lines[line - 1] = (raw[:start] + new.encode() + raw[end:]).decode()
    return "".join(lines)


def add_scheme_builder(
    text: str, names: Names, keep: tuple[str, ...], copied_modules: set[str]
) -> tuple[str, list[str]]:
    """PROGRAM's switch builder copied as NAME's (with the imports it needs),
    and NAME's model beside PROGRAM's wherever the file tests for it: an
    `if isinstance(p, sc.Program)` is repeated for NAME before it, a union
    `sc.A | sc.Program` gains `| sc.Name`."""
    old_fn, new_fn = f"{names.old}_switch", f"{names.new}_switch"
    tree = ast.parse(text)
    # A scheme built by a shared function (p4qcn's, by baseline_switch) has
    # none of its own: the copy takes PROGRAM's branches of that function.
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == old_fn), None)
    start, end = (fn.lineno, fn.end_lineno or 0) if fn is not None else (0, -1)
    parents = _parents(tree)
    notes: list[str] = []
    unions: list[ast.Attribute] = []
    branches: list[ast.If] = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Attribute)
            and node.attr == names.cls_old
            and isinstance(node.value, ast.Name)
            and node.value.id == "sc"
        ) or (start <= node.lineno <= end):
            continue
        parent = parents[node]
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.BitOr):
            unions.append(node)
            continue
        branch: ast.AST = parent
        while not isinstance(branch, ast.If) and branch in parents:
            branch = parents[branch]
        if isinstance(parent, ast.Call) and isinstance(branch, ast.If) and not branch.orelse:
            branches.append(branch)
        else:
            notes.append(f"{SCHEMES}:{node.lineno}: uses sc.{names.cls_old}; add {names.new}")
    # Edits from the bottom up, so each line number still holds.
    edits: list[tuple[int, str, ast.AST]] = [(u.lineno, "union", u) for u in unions]
    edits += [(b.lineno, "branch", b) for b in branches]
    if fn is not None:
        edits.append((end, "function", fn))
    for imp in tree.body:
        if isinstance(imp, ast.ImportFrom) and imp.module in copied_modules:
            edits.append((imp.end_lineno or 0, "import", imp))
    for _, kind, node in sorted(edits, key=lambda e: e[0], reverse=True):
        if kind == "union":
            assert isinstance(node, ast.Attribute)
            text = _replace_at(
                text,
                node.lineno,
                node.col_offset,
                node.end_col_offset or 0,
                f"sc.{names.cls_old} | sc.{names.cls_new}",
            )
        elif kind == "branch":
            assert isinstance(node, ast.If)
            block = re.sub(rf"\bsc\.{names.cls_old}\b", f"sc.{names.cls_new}", _segment(text, node))
            text = _insert_after(text, node.lineno - 1, re.sub(rf"\b{old_fn}\b", new_fn, block))
        elif kind == "function":
            assert isinstance(node, ast.FunctionDef)
            block = "\n\n" + rename_words(_segment(text, node), names, keep)
            text = _insert_after(text, node.end_lineno or 0, block)
        else:
            assert isinstance(node, ast.ImportFrom)
            text = _insert_after(text, node.end_lineno or 0, _renamed_import(node, names))
    return text, notes


def _renamed_import(imp: ast.ImportFrom, names: Names) -> str:
    """The names of `imp` whose spelling carries the program's name, from
    the copy's module (a name it does not carry stays PROGRAM's)."""
    module = rename_words(imp.module or "", names)
    out = []
    for alias in imp.names:
        bound = alias.asname or alias.name
        if rename_words(bound, names) != bound:
            new_name = rename_words(alias.name, names)
            as_part = f" as {rename_words(alias.asname, names)}" if alias.asname else ""
            out.append(f"from {module} import {new_name}{as_part}\n")
    return "".join(out)


def add_kind_to_sets(text: str, path: Path, names: Names) -> tuple[str, list[str]]:
    """A set literal naming PROGRAM's scheme (tcp.py's ECN_KINDS) names
    NAME's too; a tuple or list that does is reported for review."""
    tree = ast.parse(text)
    edits: list[ast.Constant] = []
    notes: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Set | ast.Tuple | ast.List):
            for elt in node.elts:
                if isinstance(elt, ast.Constant) and elt.value == names.old:
                    if isinstance(node, ast.Set):
                        edits.append(elt)
                    elif not isinstance(node, ast.Tuple) or not _in_subscript(tree, node):
                        notes.append(f"{path}:{elt.lineno}: names {names.old!r}; add {names.new}?")
    for elt in sorted(edits, key=lambda e: (e.lineno, e.col_offset), reverse=True):
        text = _replace_at(
            text,
            elt.lineno,
            elt.end_col_offset or 0,
            elt.end_col_offset or 0,
            f', "{names.new}"',
        )
    return text, notes


def _in_subscript(tree: ast.AST, node: ast.AST) -> bool:
    """Whether `node` is a subscript's index (Literal["a", "b"]): a type, not a list."""
    return any(isinstance(n, ast.Subscript) and n.slice is node for n in ast.walk(tree))


def add_width_entries(text: str, names: Names, keep: tuple[str, ...]) -> str:
    """PROGRAM's width-audit entries copied as NAME's, after PROGRAM's."""
    tree = ast.parse(text)
    audit = next(
        (
            n.value
            for n in tree.body
            if isinstance(n, ast.AnnAssign)
            and isinstance(n.target, ast.Name)
            and n.target.id == "AUDIT"
            and isinstance(n.value, ast.Tuple)
        ),
        None,
    )
    if audit is None:
        raise Refused(f"{WIDTH_AUDIT}: no AUDIT tuple")

    def program_of(elt: ast.expr) -> object:
        call = elt.value if isinstance(elt, ast.Starred) else elt
        if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
            return call.args[0].value
        return None

    mine = [i for i, e in enumerate(audit.elts) if program_of(e) == names.old]
    if not mine:
        return text  # a program with nothing to audit
    if mine != list(range(mine[0], mine[-1] + 1)):
        raise Refused(f"{WIDTH_AUDIT}: {names.old}'s AUDIT entries are not together")
    first, last = audit.elts[mine[0]], audit.elts[mine[-1]]
    lines = _lines(text)
    block = "".join(lines[first.lineno - 1 : last.end_lineno])
    head = f"    # ---- {names.new} (copied from {names.old}) "
    block = head + "-" * max(4, 84 - len(head)) + "\n" + rename_words(block, names, keep)
    return _insert_after(text, last.end_lineno or 0, block)


def _size_section(text: str, old: str) -> tuple[int, int] | None:
    """Where PROGRAM's section of size.p4 is: its lines [start, end), from
    its `/* ---- PROGRAM ----` header to the next section's or the include
    guard's #endif; None for a program without sizes of its own."""
    lines = _lines(text)
    start = next((i for i, line in enumerate(lines) if line.startswith(f"/* ---- {old} -")), None)
    if start is None:
        return None
    ends = [i for i in range(start + 1, len(lines)) if lines[i].startswith("/* ---- ")]
    end = ends[0] if ends else max(i for i, line in enumerate(lines) if line.startswith("#endif"))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return start, end


def _own_sizes(root: Path, names: Names) -> set[str]:
    """The sizes PROGRAM's section of size.p4 defines: the copy gets its own."""
    text = (root / SIZES).read_text()
    where = _size_section(text, names.old)
    if where is None:
        return set()
    return set(re.findall(r"#define\s+(\w+)", "".join(_lines(text)[where[0] : where[1]])))


def add_size_entries(text: str, names: Names, keep: tuple[str, ...]) -> str:
    """PROGRAM's sizes in size.p4 copied as NAME's, after PROGRAM's: the
    copied P4 names NAME_... sizes, which must exist."""
    where = _size_section(text, names.old)
    if where is None:
        return text
    start, end = where
    lines = _lines(text)
    head = f"/* ---- {names.new} (copied from {names.old}) "
    block = "".join(lines[start + 1 : end])
    block = head + "-" * max(4, 78 - len(head)) + " */\n" + rename_words(block, names, keep)
    return _insert_after(text, end, "\n" + block)


def add_tna_row(text: str, names: Names, keep: tuple[str, ...]) -> str:
    """tna/README.md's row for PROGRAM's P4 repeated for NAME's."""
    marker = f"| `{names.old}/{names.old}.p4`"
    lines = _lines(text)
    rows = [i for i, line in enumerate(lines) if line.startswith(marker)]
    if not rows:
        raise Refused(f"{TNA_README}: no row starting {marker}")
    row = rename_words(lines[rows[0]], names, keep)
    return _insert_after(text, rows[0] + 1, row)


# ---- the plan -------------------------------------------------------------------


def plan(root: Path, names: Names) -> Plan:
    check(root, names)
    copies = _copies(root, names)
    keep = shared(root, names, set(copies))
    out = Plan()
    for src, dst in copies.items():
        out.writes[dst] = rename_words((root / src).read_text(), names, keep)
    commands = Path(*registry.PROGRAMS[names.old].commands.split(".")).with_suffix(".py")
    mine = Path(rename_words(commands.as_posix(), names))
    if mine in out.writes:
        out.writes[mine] = name_commands(out.writes[mine], names)
    out.writes[REGISTRY] = add_registry_entry((root / REGISTRY).read_text(), names, keep)
    out.writes[SCENARIO] = add_scheme_model((root / SCENARIO).read_text(), names, keep)
    copied_modules = {".".join(s.with_suffix("").parts) for s in copies if s.suffix == ".py"}
    text, notes = add_scheme_builder((root / SCHEMES).read_text(), names, keep, copied_modules)
    out.writes[SCHEMES] = text
    out.notes += notes
    for path in sorted((root / "evaluation").glob("*.py")):
        rel = path.relative_to(root)
        if rel == SCENARIO:
            continue
        before = out.writes.get(rel, path.read_text())
        text, notes = add_kind_to_sets(before, rel, names)
        if text != before:
            out.writes[rel] = text
        out.notes += [n for n in notes if not n.startswith(f"{SCHEMES}:")]
    out.writes[WIDTH_AUDIT] = add_width_entries((root / WIDTH_AUDIT).read_text(), names, keep)
    out.writes[TNA_README] = add_tna_row((root / TNA_README).read_text(), names, keep)
    out.writes[SIZES] = add_size_entries((root / SIZES).read_text(), names, keep)
    for rel, text in out.writes.items():
        if rel.suffix == ".py":
            try:
                ast.parse(text)
            except SyntaxError as exc:
                why = f"{rel}: the edit does not parse ({exc.msg}, line {exc.lineno})"
                raise Refused(why) from None
    return out


class Failed(Exception):
    """The copy did not check out (the width audit refused it): undone."""


def apply(root: Path, p: Plan) -> None:
    """Write the plan; if the width audit then refuses the tree, put every
    file back as it was and raise Failed."""
    before = {rel: (root / rel).read_text() if (root / rel).exists() else None for rel in p.writes}
    new_dirs = sorted(
        {d for rel in p.writes for d in rel.parents if d.parts and not (root / d).exists()},
        key=lambda d: len(d.parts),
        reverse=True,
    )
    try:
        _write(root, p)
    except (OSError, subprocess.CalledProcessError) as exc:
        for rel, text in before.items():
            if text is None:
                (root / rel).unlink(missing_ok=True)
            else:
                (root / rel).write_text(text)
        for d in new_dirs:
            if (root / d).is_dir() and not any((root / d).iterdir()):
                (root / d).rmdir()
        err = getattr(exc, "stderr", None) or str(exc)
        raise Failed(str(err).strip().splitlines()[0]) from None


def _write(root: Path, p: Plan) -> None:
    for rel, text in p.writes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    # A longer name may push a copied line past the limit, and the copy's
    # imports sit after PROGRAM's: ruff puts both right where it is installed.
    py = [str(root / rel) for rel in p.writes if rel.suffix == ".py"]
    if py and importlib.util.find_spec("ruff") is not None:
        for cmd in (["check", "--fix", "--select", "I", "--quiet"], ["format", "--quiet"]):
            subprocess.run([sys.executable, "-m", "ruff", *cmd, *py], cwd=root, check=False)
    # The width table in tna/README.md now has the copy's rows.
    subprocess.run(
        [sys.executable, str(root / WIDTH_AUDIT), "--write"],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


NEXT = """\
{new}: a copy of {old}, registered in tofcc_common/registry.py; the suite runs it.
Next (docs/adding-a-program.md, file by file): tna/{new}/{new}.p4 and its README,
models/switch/{new}.py, ptf_tests/vectors/{new}/, bfrt_controller/{new}/, then
scripts/build_p4.py {new} (tests/data/bfrt/) and scripts/testgen.py {new}."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", metavar="NAME", help="the new program's name (one lower-case word)")
    ap.add_argument("--from", dest="source", required=True, metavar="PROGRAM")
    args = ap.parse_args(argv)
    names = Names(args.source, args.name)
    try:
        p = plan(ROOT, names)
    except Refused as exc:
        print(f"new_program.py: {exc}", file=sys.stderr)
        return 2
    try:
        apply(ROOT, p)
    except Failed as exc:
        print(f"new_program.py: nothing written: {exc}", file=sys.stderr)
        return 1
    print(NEXT.format(new=names.new, old=names.old))
    for note in p.notes:
        print(f"review: {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
