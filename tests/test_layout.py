"""The layout holds: one registry whose every entry is whole, packages that
import only downward, no import circles, and no test double in the product.

These read the source (ast), not what happens to be imported at run time,
so a lazy import inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

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


def test_models_and_hw_profiles_need_no_simulator() -> None:
    heavy = {"ns3", "cppyy", "evaluation", "bfrt_controller"}
    wrong = sorted(
        f"{name} imports {t}"
        for name, targets in GRAPH.items()
        if name.split(".")[0] in {"models", "hw_profiles", "tofcc_common"}
        for t in targets
        if t.split(".")[0] in heavy
    )
    assert wrong == []


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


@pytest.mark.parametrize("name", sorted(registry.PROGRAMS))
def test_every_program_is_whole(name: str) -> None:
    """Each part a registry entry names exists; the failure names the part."""
    from bfrt_controller.programs import get_program
    from evaluation.scenario import SCHEMES
    from models.switch.tna import TnaProgram

    spec = registry.PROGRAMS[name]
    missing: list[str] = []

    def need(part: str, ok: bool) -> None:
        if not ok:
            missing.append(part)

    need(f"P4 {spec.p4.relative_to(REPO)}", spec.p4.is_file())
    need(f"README {spec.readme.relative_to(REPO)}", spec.readme.is_file())
    model = registry.resolve(spec.model)
    need("model: a TnaProgram", isinstance(model, type) and issubclass(model, TnaProgram))
    need("model: its name", getattr(model, "name", None) == name)
    program = get_program(name)
    need("app", callable(program.make_app))
    need(f"default config {spec.default_config.relative_to(REPO)}", spec.default_config.is_file())
    need("status sections", bool(program.status_sections))
    commands = importlib.import_module(spec.commands)
    need("commands: COMMANDS", isinstance(getattr(commands, "COMMANDS", None), tuple))
    need("commands: set_command", hasattr(commands, "set_command"))
    need(f"vectors in {spec.vectors.relative_to(REPO)}", any(spec.vectors.glob("*.yaml")))
    need(f"PTF module {spec.ptf_module.relative_to(REPO)}", spec.ptf_module.is_file())
    need("evaluation schemes", bool(spec.schemes) and set(spec.schemes) <= set(SCHEMES))
    need("a bundled scenario", bool(set(spec.schemes) & SCENARIO_SCHEMES))
    assert missing == [], f"{name} lacks: {', '.join(missing)}"
    # The config the program ships parses.
    program.load_config(spec.default_config)


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
