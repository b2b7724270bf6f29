# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The layout holds: one registry whose every entry is whole, packages that
import only downward, no import circles, and no test double in the product.

These read the source (ast), not what happens to be imported at run time,
so a lazy import inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tofcc_common import registry

REPO = Path(__file__).resolve().parents[1]
# What the wheel ships (pyproject's packages), bottom layer first.
PRODUCT = ("tofcc_common", "hw_profiles", "models", "bfrt_controller", "evaluation", "ptf_tests")
# Who may import whom: each package may import itself and those listed.
ALLOWED: dict[str, set[str]] = {
    "tofcc_common": set(),
    "hw_profiles": set(),
    "models": {"tofcc_common", "hw_profiles"},
    # `tofcc eval` comes from evaluation's entry point (pyproject), not an import.
    "bfrt_controller": {"tofcc_common", "hw_profiles", "models"},
    "evaluation": {"tofcc_common", "hw_profiles", "models", "bfrt_controller"},
    "ptf_tests": {"tofcc_common", "hw_profiles", "models", "bfrt_controller"},
}


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in PRODUCT:
        for f in (REPO / pkg).rglob("*.py"):
            parts = f.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = f
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The project modules (or outside top-level names) `name` imports."""
    out: set[str] = set()
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" for a in node.names] + [mod]
        for t in targets:
            probe = t
            while probe and probe not in MODULES:
                probe = probe.rpartition(".")[0]
            out.add(probe or t)
    out.discard(name)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_no_import_circles() -> None:
    # Tarjan's strongly connected components over project modules only; a
    # package's own __init__ re-exporting a submodule is no circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def edges(v: str) -> list[str]:
        return [
            w
            for w in GRAPH[v]
            if w in MODULES and not w.startswith(v + ".") and not v.startswith(w + ".")
        ]

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    assert circles == [], f"import circles: {circles}"


@pytest.mark.parametrize("package", PRODUCT)
def test_packages_import_only_downward(package: str) -> None:
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if name.split(".")[0] == package
        for target in targets
        if target in MODULES and target.split(".")[0] not in {package, *ALLOWED[package]}
    )
    assert wrong == []


def test_tofcc_finds_eval_as_a_plugin() -> None:
    """The controller names no package above it: `tofcc eval` is an entry
    point of the installed distribution."""
    from importlib.metadata import entry_points

    import click

    from bfrt_controller.cli import PLUGIN_GROUP, cli

    found = {ep.name: ep.value for ep in entry_points(group=PLUGIN_GROUP)}
    assert found == {"eval": "evaluation.cli:eval_group"}
    ctx = click.Context(cli)
    assert "eval" in cli.list_commands(ctx)
    assert cli.get_command(ctx, "eval") is not None


def test_product_imports_no_test_double() -> None:
    wrong = sorted(
        f"{name} imports {t}"
        for name, targets in GRAPH.items()
        for t in targets
        if t.split(".")[0] in {"tests", "doubles"}
    )
    assert wrong == []


# The compiled cores' loader uses cppyy as a C++ compiler, not the
# simulator, and only where it is installed: without it the models run in
# Python (test_models_run_without_cppyy).
OPTIONAL_IMPORTS = {("models.switch.native", "cppyy")}


def test_models_and_hw_profiles_need_no_simulator() -> None:
    heavy = {"ns3", "cppyy", "evaluation", "bfrt_controller"}
    wrong = sorted(
        f"{name} imports {t}"
        for name, targets in GRAPH.items()
        if name.split(".")[0] in {"models", "hw_profiles", "tofcc_common"}
        for t in targets
        if t.split(".")[0] in heavy and (name, t) not in OPTIONAL_IMPORTS
    )
    assert wrong == []


def test_models_run_without_cppyy() -> None:
    """A fresh interpreter that cannot import cppyy runs a model with a core
    in Python."""
    code = (
        "import sys; sys.modules['cppyy'] = None\n"
        "from hw_profiles import load_profile\n"
        "from models.switch import native\n"
        "from models.switch.registry import make_model\n"
        "from models.switch.tna import EgressIntrinsic\n"
        "m = make_model('dadctcp', load_profile('tofino'))\n"
        "assert not native.available() and m.native_core() is None\n"
        "r = m.egress(EgressIntrinsic(1, 0), bytes(17 + 14))\n"
        "assert not r.drop\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_wheel_packages_hold_no_test_double() -> None:
    """The packages pyproject ships are exactly the product's."""
    import tomllib

    from setuptools import find_packages

    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())
    include = cfg["tool"]["setuptools"]["packages"]["find"]["include"]
    shipped = find_packages(str(REPO), include=include)
    assert {p.split(".")[0] for p in shipped} == set(PRODUCT)
    assert not [p for p in shipped if "doubles" in p or p.startswith("tests")]


def _scenario_schemes() -> set[str]:
    out: set[str] = set()
    for f in (REPO / "evaluation" / "scenarios").glob("*.yaml"):
        for scheme in (yaml.safe_load(f.read_text()) or {}).get("schemes") or {}:
            out.add(str(scheme).split("-")[0] if "-" in str(scheme) else str(scheme))
    return out


SCENARIO_SCHEMES = _scenario_schemes()


def missing_parts(name: str) -> list[str]:
    """What of program `name`'s registry entry is not there, each part named
    (with the file or module it should be in): a part that is missing is
    reported, never raised, so the list is whole however little exists."""
    from evaluation.scenario import SCHEMES
    from models.switch.tna import TnaProgram

    spec = registry.PROGRAMS[name]
    missing: list[str] = []

    def need(part: str, ok: bool) -> None:
        if not ok:
            missing.append(part)

    def get(part: str, dotted: str) -> Any:
        try:
            return registry.resolve(dotted)
        except (ImportError, AttributeError) as exc:
            missing.append(f"{part} {dotted} ({exc})")
            return None

    need(f"P4 {spec.p4.relative_to(REPO)}", spec.p4.is_file())
    need(f"README {spec.readme.relative_to(REPO)}", spec.readme.is_file())
    model = get("model", spec.model)
    if model is not None:
        need("model: a TnaProgram", isinstance(model, type) and issubclass(model, TnaProgram))
        need("model: its name", getattr(model, "name", None) == name)
    app = get("app", spec.app)
    need("app: callable", app is None or callable(app))
    for attr in ("parse_config", "DEFAULT_CONFIG"):
        get("config", f"{spec.config}:{attr}")
    need(f"default config {spec.default_config.relative_to(REPO)}", spec.default_config.is_file())
    sections = get("status sections", spec.status_sections)
    need("status sections: not empty", sections is None or bool(sections))
    commands = get("commands", spec.commands)
    if commands is not None:
        need("commands: COMMANDS", isinstance(getattr(commands, "COMMANDS", None), tuple))
        need("commands: set_command", hasattr(commands, "set_command"))
        need("commands: SET_HELP", hasattr(commands, "SET_HELP"))
    need(f"vectors in {spec.vectors.relative_to(REPO)}", any(spec.vectors.glob("*.yaml")))
    need(f"PTF module {spec.ptf_module.relative_to(REPO)}", spec.ptf_module.is_file())
    need(
        "evaluation schemes (evaluation/scenario.py _KIND_MODEL)",
        bool(spec.schemes) and set(spec.schemes) <= set(SCHEMES),
    )
    need("a bundled scenario (evaluation/scenarios/)", bool(set(spec.schemes) & SCENARIO_SCHEMES))
    return missing


@pytest.mark.parametrize("name", sorted(registry.PROGRAMS))
def test_every_program_is_whole(name: str) -> None:
    """Each part a registry entry names exists; the failure names the part."""
    from bfrt_controller.programs import get_program

    missing = missing_parts(name)
    assert missing == [], f"{name} lacks: {'; '.join(missing)}"
    # The config the program ships parses.
    program = get_program(name)
    program.load_config(registry.PROGRAMS[name].default_config)


def _bogus() -> registry.ProgramSpec:
    """A registry entry for a program none of whose parts exists (issue 49:
    what a developer has after writing the entry first)."""
    return registry._spec(
        "bogus",
        "nothing yet",
        "004",
        "Bogus",
        "BogusApp",
        schemes=("bogus",),
        soak=registry.SoakQueue(4, 300, 100_000),
    )


def test_an_entry_without_its_parts_is_named_part_by_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(registry.PROGRAMS, "bogus", _bogus())
    missing = "; ".join(missing_parts("bogus"))
    for part in (
        "P4 tna/bogus/bogus.p4",
        "README tna/bogus/README.md",
        "model models.switch.bogus:Bogus",
        "app bfrt_controller.bogus.app:BogusApp",
        "config bfrt_controller.bogus.config:parse_config",
        "default config bfrt_controller/defaults/bogus.yaml",
        "status sections bfrt_controller.bogus.status:SECTIONS",
        "commands bfrt_controller.bogus.commands",
        "vectors in ptf_tests/vectors/bogus",
        "PTF module ptf_tests/bogus/test_bogus.py",
        "evaluation schemes",
        "a bundled scenario",
    ):
        assert part in missing


def test_the_suite_collects_with_an_entry_without_its_parts() -> None:
    """conftest, every test module and tofcc import with such an entry: only
    test_every_program_is_whole[bogus] (and tests that run the program) fail,
    so the developer reads what is missing instead of a ModuleNotFoundError."""
    # The entry is made in the child before pytest imports any test module
    # (importing this one first would fix its parameters without it).
    script = (
        "import sys\n"
        "from tofcc_common import registry\n"
        "registry.PROGRAMS['bogus'] = registry._spec('bogus', 'nothing yet', '004', 'Bogus',"
        " 'BogusApp', schemes=('bogus',), soak=registry.SoakQueue(4, 300, 100_000))\n"
        "import pytest\n"
        "sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider',"
        " '-o', 'addopts=--strict-markers', '-k', 'bogus']))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "tests/test_layout.py::test_every_program_is_whole[bogus]" in out, out[-3000:]


def _named(words: str, names: frozenset[str]) -> bool:
    return names <= set(re.findall(r"[A-Za-z0-9_]+", words))


def _python_lists(text: str, names: frozenset[str]) -> list[int]:
    """Lines of the tuple, list, set or dict literals (keys) and the strings
    (not docstrings) that name every program."""
    tree = ast.parse(text)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            strings = {
                i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
            }
            if names <= strings:
                lines.append(node.lineno)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and _named(node.value, names)
        ):
            lines.append(node.lineno)
    return lines


def _data_lists(data: Any, names: frozenset[str]) -> bool:
    """Whether parsed YAML or TOML holds a list, a mapping's keys or a
    string that names every program."""
    if isinstance(data, dict):
        return names <= {str(k) for k in data} or any(_data_lists(v, names) for v in data.values())
    if isinstance(data, list):
        return names <= {str(v) for v in data} or any(_data_lists(v, names) for v in data)
    return isinstance(data, str) and _named(data, names)


# Data, not code: each vector file is one program's.
NOT_CODE = ("ptf_tests/vectors/", "tests/data/")
SKIPPED_DIRS = {"build", "__pycache__", "node_modules"}


def _code_files(root: Path) -> list[Path]:
    """The repository's .py, .yaml/.yml and .toml files: git's tracked ones,
    else (an exported tree) those outside hidden and build directories."""
    suffixes = {".py", ".yaml", ".yml", ".toml"}
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"],
            capture_output=True,
            check=True,
            text=True,
        ).stdout.split("\0")
        rel = [Path(p) for p in listed if p]
    except (OSError, subprocess.CalledProcessError):
        rel = [
            p.relative_to(root)
            for p in root.rglob("*")
            if p.is_file()
            and not any(
                part.startswith(".")
                or part in {"build", "__pycache__"}
                or part.endswith(".egg-info")
                for part in p.relative_to(root).parts[:-1]
            )
        ]
    return [
        root / p
        for p in sorted(rel)
        if p.suffix in suffixes
        and not str(p.as_posix()).startswith(NOT_CODE)
        and (root / p).is_file()
    ]


def hand_kept_lists(root: Path, names: frozenset[str]) -> list[str]:
    """Every literal outside tofcc_common/registry.py naming all of `names`,
    as "path:line"."""
    import tomllib

    found: list[str] = []
    for path in _code_files(root):
        rel = path.relative_to(root).as_posix()
        if rel == "tofcc_common/registry.py":
            continue
        text = path.read_text(errors="replace")
        if not names <= set(re.findall(r"[A-Za-z0-9_]+", text)):
            continue
        if path.suffix == ".py":
            found += [f"{rel}:{line}" for line in _python_lists(text, names)]
        else:
            data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
            if _data_lists(data, names):
                found.append(rel)
    return found


def test_no_list_of_every_program_is_kept_by_hand() -> None:
    """Issue 49: lists of programs are derived from the registry; one written
    out elsewhere (width audit, soak, a test's table) misses the next program.
    Per-program data belongs in the registry entry or the program's package."""
    assert hand_kept_lists(REPO, frozenset(registry.PROGRAMS)) == []


def test_a_hand_kept_list_is_found(tmp_path: Path) -> None:
    names = frozenset({"alpha", "beta", "gamma"})
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(
        '"""Docs may name alpha, beta and gamma."""\n'
        'OK = ("alpha", "beta")\n'
        'TARGETS = {\n    "alpha": 1,\n    "beta": 2,\n    "gamma": 3,\n}\n'
        'HELP = "one of alpha, beta, gamma"\n'
    )
    (tmp_path / "pkg" / "b.yaml").write_text("programs: [alpha, beta, gamma]\n")
    (tmp_path / "pkg" / "c.yaml").write_text("programs: [alpha, beta]\n")
    (tmp_path / "pkg" / "d.toml").write_text("x = { alpha = 1, beta = 2, gamma = 3 }\n")
    (tmp_path / "pkg" / "e.md").write_text("| alpha | beta | gamma |\n")
    assert hand_kept_lists(tmp_path, names) == [
        "pkg/a.py:3",
        "pkg/a.py:8",
        "pkg/b.yaml",
        "pkg/d.toml",
    ]


def test_no_two_programs_add_a_command_of_the_same_name() -> None:
    """tofcc adds each program's COMMANDS by name: a second `reallocate`
    would replace the first program's (a copy made by new_program.py names
    its own NAME-reallocate)."""
    seen: dict[str, str] = {}
    clashes: list[str] = []
    for name, spec in registry.PROGRAMS.items():
        for command in importlib.import_module(spec.commands).COMMANDS:
            if command.name in seen:
                clashes.append(f"{command.name}: {seen[command.name]} and {name}")
            seen[command.name] = name
    assert clashes == []


def test_nothing_else_names_every_program() -> None:
    """Lists of programs are derived: the models', the controller's and the
    compile script's are the registry's, in its order."""
    from bfrt_controller.programs import PROGRAMS as controller
    from models.switch.registry import PROGRAMS as models

    assert list(models) == list(registry.PROGRAMS)
    assert list(controller) == list(registry.PROGRAMS)


def test_the_controller_stays_readable() -> None:
    """Issue 45's bounds: no class in bfrt_controller/ over 400 lines, no
    module over 700 (BfrtSwitch was one class of 1,170 lines)."""
    big: list[str] = []
    for path in sorted((REPO / "bfrt_controller").rglob("*.py")):
        text = path.read_text()
        if len(text.splitlines()) >= 700:
            big.append(f"{path.relative_to(REPO)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > 400:
                    big.append(f"{path.relative_to(REPO)}: class {node.name}, {lines} lines")
    assert big == []
