#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Compile every tna/<program>/<program>.p4 for Tofino and Tofino2.

The compiler is `$P4C`, else the one the SDE installed: `$SDE_INSTALL/bin/bf-p4c`
(Intel's SDE) or `$SDE_INSTALL/bin/p4c` (open-p4studio, whose p4c installs
only its `p4c` driver; bf-p4c is a link in its build tree). Artifacts land in
build/<target>/<program>/ and each build is checked against the reference
model's control-plane names (bf-rt.json must declare every table, register
and counter the model has). With no compiler it says so and exits 0, so CI
on machines without one stays honest about what it did not check.

Extra compiler flags: P4FLAGS (all targets), P4FLAGS_TOFINO / P4FLAGS_TOFINO2.
With the open-source compiler (a driver named `p4c`) Tofino2 builds get
`-Xp4c=--no-clot` unless P4FLAGS_TOFINO2 is set (even to nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hw_profiles import load_profile  # noqa: E402
from models.switch.registry import PROGRAMS, make_model  # noqa: E402

TARGETS = {"tofino": "tna", "tofino2": "t2na"}
# The compiler's bf-rt.json of every build, committed: the fake SDE
# (tests/doubles/fake_bfrt_grpc.py) takes its P4 tables from these, and the
# model's names are checked against them, so CI without a compiler still
# tests against what the compiler declares. Each build here compares them
# with a fresh compile (--update-schemas rewrites them).
SCHEMA_DIR = REPO / "tests" / "data" / "bfrt"


def schema_path(program: str, target: str, production: bool) -> Path:
    return SCHEMA_DIR / target / f"{program}{'-production' if production else ''}.json"


# Tables the compiler numbers and orders differently from one build of the
# same program to the next (the snapshot tables' ids): their ids are left
# out, every table is sorted by name and every depends_on list by id, so a
# recompile of an unchanged program reports its schema fresh.
UNSTABLE_ID_PREFIX = "pipe.snapshot."


def normalised_schema(bfrt_json: Path) -> str:
    """bf-rt.json as committed: parsed and written back sorted and indented,
    so a diff shows a change of the schema, not of the writer's layout."""
    info = json.loads(bfrt_json.read_text())
    tables = info.get("tables", [])
    for t in tables:
        if str(t.get("name", "")).startswith(UNSTABLE_ID_PREFIX):
            t.pop("id", None)
        # Which tables a table waits for is a set; the compiler lists it in
        # no fixed order.
        if isinstance(t.get("depends_on"), list):
            t["depends_on"] = sorted(t["depends_on"])
    info["tables"] = sorted(tables, key=lambda t: str(t.get("name", "")))
    return json.dumps(info, indent=1, sort_keys=True) + "\n"


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def schema_check(bfrt_json: Path, committed: Path, update: bool) -> str | None:
    """Why the committed schema does not match this build (None: it does, or
    it was just written)."""
    fresh = normalised_schema(bfrt_json)
    if update:
        committed.parent.mkdir(parents=True, exist_ok=True)
        committed.write_text(fresh)
        return None
    if not committed.exists():
        return f"no committed {_shown(committed)} (run with --update-schemas)"
    if committed.read_text() != fresh:
        return (
            f"{_shown(committed)} is stale: it differs from this compile's "
            "bf-rt.json (run with --update-schemas and commit it)"
        )
    return None


# The drivers an SDE install may have, in the order they are looked for: Intel's
# SDE installs bf-p4c; open-p4studio 1f97778f installs p4lang/p4c's `p4c`
# (backends/tofino/bf-p4c/CMakeLists.txt links bf-p4c only in the build tree,
# which the Docker image deletes; open-p4studio issue #37: P4C-NOTFOUND when
# p4studio/CMakeLists.txt line 234 looks for bf-p4c in the install).
SDE_DRIVERS = ("bf-p4c", "p4c")
# What the open-source backend needs for Tofino2 (README "Compiling the P4").
OPEN_SOURCE_TOFINO2_FLAGS = ("-Xp4c=--no-clot",)


class CompilerNotFound(Exception):
    """A compiler was named (P4C or SDE_INSTALL) but is not there to run."""


def find_compiler() -> str | None:
    """The compiler P4C or SDE_INSTALL names; None when neither is set.
    Set but unusable is an error: a run that was asked to compile must not
    report a skip."""
    given = os.environ.get("P4C")
    if given is not None:
        words = shlex.split(given)
        if not words:
            raise CompilerNotFound("P4C is set but empty")
        exe = shutil.which(words[0])
        if exe is None:
            why = "is not executable" if Path(words[0]).exists() else "does not exist"
            raise CompilerNotFound(f"P4C={given!r}: {words[0]} {why}")
        return given
    sde = os.environ.get("SDE_INSTALL")
    if sde is None:
        return None
    for name in SDE_DRIVERS:
        path = Path(sde, "bin", name)
        if path.exists() and os.access(path, os.X_OK):
            return str(path)
    looked = " or ".join(f"bin/{n}" for n in SDE_DRIVERS)
    raise CompilerNotFound(f"SDE_INSTALL={sde!r} has no executable {looked}")


def is_open_source_driver(compiler: str) -> bool:
    """p4lang/p4c's driver is `p4c`; Intel's SDE's is `bf-p4c`."""
    return Path(shlex.split(compiler)[0]).name == "p4c"


def target_flags(compiler: str, target: str) -> list[str]:
    """P4FLAGS_<TARGET> when set (even empty), else what the compiler needs
    for the target: --no-clot for Tofino2 on the open-source compiler."""
    given = os.environ.get(f"P4FLAGS_{target.upper()}")
    if given is not None:
        return shlex.split(given)
    if target == "tofino2" and is_open_source_driver(compiler):
        return list(OPEN_SOURCE_TOFINO2_FLAGS)
    return []


def programs() -> list[str]:
    return sorted(PROGRAMS)


def bfrt_names(bfrt_json: Path) -> set[str]:
    info = json.loads(bfrt_json.read_text())
    names: set[str] = set()
    for table in info.get("tables", []):
        name = table.get("name", "")
        names.add(name.removeprefix("pipe."))
    return names


@dataclass(frozen=True)
class GressResources:
    """What one gress of one compiled program occupies."""

    stages: int  # pipeline depth: deepest MAU stage used + 1
    sram_units: int
    tcam_units: int


@dataclass(frozen=True)
class Resources:
    gress: dict[str, GressResources]
    phv_containers: int | None  # distinct PHV containers allocated, both gresses


def _walk(node: Any, stage: int | None, found: list[tuple[int, str, int]]) -> set[int]:
    """Every stage number under `node`, and (stage, memory type, unit) triples
    for the memories placed there. context.json nests stage tables at several
    depths (match_attributes, attached tables, ways), so the walk is generic."""
    stages: set[int] = set()
    if isinstance(node, dict):
        if isinstance(node.get("stage_number"), int):
            stage = node["stage_number"]
            stages.add(stage)
        mem = node.get("memory_resource_allocation")
        if isinstance(mem, dict) and stage is not None:
            for group in mem.get("memory_units_and_vpns", []) or []:
                for unit in group.get("memory_units", []) or []:
                    found.append((stage, str(mem.get("memory_type")), int(unit)))
        for value in node.values():
            stages |= _walk(value, stage, found)
    elif isinstance(node, list):
        for value in node:
            stages |= _walk(value, stage, found)
    return stages


def resources_from_context(context: dict[str, Any]) -> Resources:
    """Stages per gress, SRAM/TCAM units and PHV containers from the
    assembler's context.json: both the open-source compiler and the SDE's
    write it by default (the driver loads it), unlike resources.json."""
    per_gress: dict[str, tuple[set[int], set[tuple[int, str, int]]]] = {}
    for table in context.get("tables", []):
        gress = table.get("direction")
        if gress not in ("ingress", "egress"):
            continue
        found: list[tuple[int, str, int]] = []
        stages = _walk(table, None, found)
        used, memories = per_gress.setdefault(gress, (set(), set()))
        used |= stages
        memories |= set(found)
    gress = {
        name: GressResources(
            stages=max(used) + 1 if used else 0,
            sram_units=sum(1 for _, kind, _ in mems if kind == "sram"),
            tcam_units=sum(1 for _, kind, _ in mems if kind == "tcam"),
        )
        for name, (used, mems) in sorted(per_gress.items())
    }
    containers: set[int] = set()
    found_phv = False
    for stage in context.get("phv_allocation", []) or []:
        for gress_name in ("ingress", "egress"):
            for container in stage.get(gress_name, []) or []:
                if isinstance(container, dict) and container.get("records"):
                    found_phv = True
                    containers.add(int(container["phv_number"]))
    return Resources(gress=gress, phv_containers=len(containers) if found_phv else None)


_BFA_STAGE = re.compile(r"^stage (\d+) (ingress|egress):", re.MULTILINE)


def stages_from_bfa(text: str) -> dict[str, int]:
    """Pipeline depth per gress from the assembly's `stage N <gress>:` sections."""
    deepest: dict[str, int] = {}
    for number, gress in _BFA_STAGE.findall(text):
        deepest[gress] = max(deepest.get(gress, 0), int(number) + 1)
    return dict(sorted(deepest.items()))


# A parser section of the assembly: `parser ingress:`/`parser egress:`, its
# states two spaces deeper than `states:`, each state's rows deeper still.
_BFA_PARSER = re.compile(r"^parser (\w+):$")
_BFA_STATE = re.compile(r"^    (\S+):$")
_BFA_ROW = re.compile(r"^      (\S.*):$")


def selects_dropped(text: str) -> list[str]:
    """Parser states of an assembly whose select has no match registers but
    more than one transition: every row is `*`, so the first is taken for
    every packet and the rest are dead (bfas warns "Can't match parser state
    due to previous match"). p4c's Tofino backend emitted this for every
    select on packet data between p4lang/p4c#5063 and its fix, #5753: such a
    binary parses every IPv4 packet as its first case (TCP here) on the
    chip, whatever the header says. A select the backend then merges into
    the state before it leaves a single row and no trace of its own (our
    EtherType select went so); the states that keep their rows give the
    build away."""
    dropped: list[str] = []
    gress = state = ""
    rows = 0
    has_match = False

    def close() -> None:
        if state and rows > 1 and not has_match:
            dropped.append(f"{gress} {state} ({rows} transitions)")

    for line in text.splitlines():
        if (m := _BFA_PARSER.match(line)) is not None:
            close()
            gress, state, rows, has_match = m[1], "", 0, False
        elif line and not line.startswith(" "):  # the next top-level section
            close()
            gress, state = "", ""
        elif gress and (m := _BFA_STATE.match(line)) is not None:
            close()
            state, rows, has_match = m[1], 0, False
        elif gress and state:
            if line.startswith("      match:"):
                has_match = True
            elif _BFA_ROW.match(line) is not None:
                rows += 1
    close()
    return dropped


def parser_problem(outdir: Path) -> str | None:
    """The assembled parser takes the wrong branch of a select (above)."""
    dropped = [
        s
        for path in sorted(outdir.rglob("*.bfa"))
        for s in selects_dropped(path.read_text(errors="replace"))
    ]
    if not dropped:
        return None
    return (
        f"the compiler dropped the match of {len(dropped)} parser select(s), so the chip would "
        f"take each one's first transition for every packet: {'; '.join(dropped[:3])}"
        f"{' ...' if len(dropped) > 3 else ''}. A p4c Tofino backend bug (p4lang/p4c#5753 "
        "fixes it: MatcherAllocator::bind_use keeps ordinary match registers); use a "
        "compiler with the fix"
    )


def read_resources(outdir: Path) -> Resources | None:
    """context.json if the assembler wrote one, else the stage sections of the
    .bfa (a build that stopped in the assembler, e.g. over the stage limit,
    leaves only that)."""
    for path in sorted(outdir.rglob("context.json")):
        try:
            res = resources_from_context(json.loads(path.read_text()))
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
        if res.gress:  # the compiler's own context.json has no tables until bfas fills it
            return res
    for path in sorted(outdir.rglob("*.bfa")):
        stages = stages_from_bfa(path.read_text(errors="replace"))
        if stages:
            return Resources(
                gress={g: GressResources(n, 0, 0) for g, n in stages.items()},
                phv_containers=None,
            )
    return None


def over_budget(res: Resources, mau_stages: int, spare_stages: int) -> list[str]:
    """Gresses that leave fewer than `spare_stages` of the chip's stages free."""
    return [
        f"{gress} uses {g.stages} of {mau_stages} stages (budget {mau_stages - spare_stages})"
        for gress, g in res.gress.items()
        if g.stages > mau_stages - spare_stages
    ]


def describe(res: Resources | None, mau_stages: int) -> str:
    if res is None:
        return "? MAU stages (no context.json or .bfa found)"
    parts = [f"{g} {r.stages}/{mau_stages}" for g, r in res.gress.items()]
    return "MAU stages " + ", ".join(parts)


@dataclass
class BuildResult:
    program: str
    target: str
    ok: bool
    message: str
    resources: Resources | None = None


def conf_problem(outdir: Path, program: str) -> str | None:
    """bf_switchd (--conf-file) and tofino-model (--p4-target-config) load the
    program from the <program>.conf that p4c-gen-conf writes into the output
    directory (p4c backends/tofino/scripts/p4c-gen-conf); it stays there, and
    the files it names (absolute, as -o is) must exist."""
    conf = outdir / f"{program}.conf"
    if not conf.exists():
        return f"no {conf.name} was written (bf_switchd and tofino-model need it)"
    try:
        data = json.loads(conf.read_text())
        progs = [p for d in data["p4_devices"] for p in d["p4_programs"]]
        named = [p.get("bfrt-config") for p in progs] + [
            pipe.get(k) for p in progs for pipe in p["p4_pipelines"] for k in ("context", "config")
        ]
    except (ValueError, KeyError, TypeError) as exc:
        return f"{conf.name} is not a BF-RT conf: {exc!r}"
    absent = [n for n in named if n and Path(n).is_absolute() and not Path(n).exists()]
    return f"{conf.name} names files that do not exist: {', '.join(absent)}" if absent else None


def pipe_names(outdir: Path) -> list[str]:
    """The pipelines the compiler's manifest.json lists (["pipe"] for one)."""
    try:
        manifest = json.loads((outdir / "manifest.json").read_text())
        names = [p["pipe_name"] for prog in manifest["programs"] for p in prog["pipes"]]
    except (OSError, ValueError, KeyError, TypeError):
        return ["pipe"]
    return names or ["pipe"]


def write_missing_conf(compiler: str, outdir: Path, program: str, target: str) -> str | None:
    """p4lang/p4c's driver (34b86e9) lists p4c-gen-conf among its steps but never
    enables it (the step list is fixed before the command is registered), so it
    writes no <program>.conf; the SDE's bf-p4c does. Where the compiler left
    none, run the p4c-gen-conf installed beside it with the arguments the driver
    would have passed. Returns what was done, or None when nothing was needed or
    possible (conf_problem then reports the absence)."""
    if (outdir / f"{program}.conf").exists():
        return None
    driver = shutil.which(shlex.split(compiler)[0])
    if driver is None:
        return None
    gen_conf = Path(driver).resolve().parent / "p4c-gen-conf"
    if not gen_conf.exists():
        return None
    cmd = [
        sys.executable,
        str(gen_conf),
        "--conf-type",
        "BF-RT",
        "--name",
        program,
        "--device",
        target,
        "--outputdir",
        str(outdir),
        "--bfrt-name",
        str(outdir / "bf-rt.json"),
        "--p4-version",
        "p4-16",
        "--pipe",
        *pipe_names(outdir),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return f"p4c-gen-conf failed: {proc.stderr.strip()[-300:]}"
    return f"{program}.conf written by {gen_conf} (the driver did not run it)"


def build_one(
    compiler: str,
    program: str,
    target: str,
    production: bool,
    spare_stages: int,
    outdir_name: str | None = None,
    update_schemas: bool = False,
) -> BuildResult:
    """Compile one program for one chip into build/<target>/<outdir_name or
    program>/."""
    outdir = REPO / "build" / target / (outdir_name or program)
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    cmd = [
        *shlex.split(compiler),
        "--target",
        target,
        "--arch",
        TARGETS[target],
        "--std",
        "p4-16",
        "-o",
        str(outdir),
        "--bf-rt-schema",
        str(outdir / "bf-rt.json"),
        *shlex.split(os.environ.get("P4FLAGS", "")),
        *target_flags(compiler, target),
    ]
    if production:
        cmd.append("-DTOFCC_NO_TEST_HOOKS")
    cmd.append(str(REPO / "tna" / program / f"{program}.p4"))
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    (outdir / "compile.log").write_text(
        f"$ {shlex.join(cmd)}\n{proc.stdout}\n{proc.stderr}\nexit {proc.returncode}\n"
    )
    mau_stages = load_profile(target).mau_stages
    resources = read_resources(outdir)
    label = f"{program} (production)" if production else program
    result = BuildResult(label, target, False, "", resources)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        result.message = (
            f"compile failed ({seconds:.0f}s, {describe(resources, mau_stages)}), "
            f"see {outdir}/compile.log\n{tail}"
        )
        return result
    bfrt = next(iter(sorted(outdir.rglob("bf-rt.json"))), None) or next(
        iter(sorted(outdir.rglob("bfrt.json"))), None
    )
    if bfrt is None:
        result.message = "compiled but no bf-rt.json was written"
        return result
    model = make_model(program, load_profile(target))
    wanted = set(model.p4.tables) | set(model.p4.registers) | set(model.p4.counters)
    if production:
        # The test hooks' tables (queue metadata, ingress clock) are compiled out.
        wanted = {n for n in wanted if not n.endswith("_override")}
    missing = sorted(n for n in wanted if not any(b.endswith(n) for b in bfrt_names(bfrt)))
    if missing:
        result.message = f"bf-rt.json lacks names the model uses: {', '.join(missing)}"
        return result
    stale = schema_check(bfrt, schema_path(program, target, production), update_schemas)
    if stale:
        result.message = stale
        return result
    dropped = parser_problem(outdir)
    if dropped:
        result.message = (
            f"compiled in {seconds:.0f}s ({describe(resources, mau_stages)}) but {dropped}"
        )
        return result
    conf_note = write_missing_conf(compiler, outdir, program, target)
    problem = conf_problem(outdir, program)
    if problem:
        result.message = f"compiled but {problem}" + (f" ({conf_note})" if conf_note else "")
        return result
    if resources is None:
        result.message = f"compiled in {seconds:.0f}s but no stage count could be read"
        return result
    over = over_budget(resources, mau_stages, spare_stages)
    if over:
        result.message = f"does not fit with {spare_stages} stages spare: {'; '.join(over)}"
        return result
    result.ok = True
    result.message = (
        f"ok in {seconds:.0f}s, {describe(resources, mau_stages)}, "
        f"bf-rt.json {'written' if update_schemas else 'fresh'}"
    )
    if conf_note:
        result.message += f"; {conf_note}"
    return result


README_BEGIN = "<!-- resources:begin (scripts/build_p4.py --update-readme) -->"
README_END = "<!-- resources:end -->"


def _depth(g: GressResources | None, mau_stages: int) -> str:
    return f"{g.stages} of {mau_stages}" if g else "-"


def _units(ig: GressResources | None, eg: GressResources | None, kind: str) -> str:
    if ig is None and eg is None:
        return "-"
    return "/".join(str(getattr(g, kind)) if g else "0" for g in (ig, eg))


def resource_table(results: list[BuildResult], compiler_version: str) -> str:
    lines = [
        f"Compiled with {compiler_version}. Stages are the pipeline depth per gress",
        "(deepest MAU stage used + 1); SRAM/TCAM are memory units placed, per gress;",
        "PHV is the number of containers allocated.",
        "",
        "| program | chip | result | ingress stages | egress stages "
        "| SRAM units (ig/eg) | TCAM units (ig/eg) | PHV containers |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.target not in TARGETS:
            continue
        mau = load_profile(r.target).mau_stages
        res = r.resources
        ig = res.gress.get("ingress") if res else None
        eg = res.gress.get("egress") if res else None
        phv = str(res.phv_containers) if res and res.phv_containers is not None else "-"
        verdict = "ok" if r.ok else "**fails**"
        lines.append(
            f"| {r.program} | {r.target} | {verdict} | {_depth(ig, mau)} | {_depth(eg, mau)} "
            f"| {_units(ig, eg, 'sram_units')} | {_units(ig, eg, 'tcam_units')} | {phv} |"
        )
    return "\n".join(lines)


def _row_key(line: str) -> tuple[str, str, bool]:
    """(program, chip, production) of a table row: the table's order."""
    program, chip = (cell.strip() for cell in line.split("|")[1:3])
    return program.split()[0], chip, "(production)" in program


def _rows(block: str) -> dict[tuple[str, str, bool], str]:
    return {
        _row_key(line): line
        for line in block.splitlines()
        if line.startswith("| ") and not line.startswith("| program |")
    }


def update_readme(readme: Path, table: str) -> None:
    """The block's rows of the programs built replaced by `table`'s; the
    rows of programs not built this time kept as they were."""
    text = readme.read_text()
    if README_BEGIN not in text or README_END not in text:
        raise SystemExit(f"build_p4: {readme} has no {README_BEGIN} ... {README_END} block")
    head, rest = text.split(README_BEGIN, 1)
    block, tail = rest.split(README_END, 1)
    rows = {**_rows(block), **_rows(table)}
    lines = [
        line
        for line in table.splitlines()
        if not line.startswith("| ") or line.startswith("| program |")
    ]
    lines += [rows[key] for key in sorted(rows)]
    merged = "\n".join(lines)
    readme.write_text(f"{head}{README_BEGIN}\n{merged}\n{README_END}{tail}")


_VERSION = re.compile(r"\b\d+\.\d+\.\d+\b")


def version_line(output: str, compiler: str) -> str:
    """The line of `--version` output that gives a version: a driver that
    prints its name and version on one line, or p4lang/p4c's p4c-barefoot,
    its path and then `Version 9.13.4`, with whatever a wrapper prints after."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if _VERSION.search(line) is None:
            continue
        if line.lower().startswith("version ") and i > 0:
            return f"{Path(lines[i - 1]).name} {line.split(None, 1)[1]}"
        return line
    return Path(shlex.split(compiler)[0]).name


def compiler_version(compiler: str) -> str:
    proc = subprocess.run(
        [*shlex.split(compiler), "--version"], capture_output=True, text=True, check=False
    )
    return version_line(f"{proc.stdout}\n{proc.stderr}", compiler)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help="programs to build (default: all)")
    parser.add_argument("--target", choices=sorted(TARGETS), action="append")
    parser.add_argument("--production", action="store_true", help="compile the queue test hook out")
    parser.add_argument(
        "--with-production",
        action="store_true",
        help="build each program both ways: with the test hooks, and without them into "
        "build/<target>/<program>-production/ (the two can place tables differently)",
    )
    parser.add_argument(
        "--spare-stages",
        type=int,
        default=3,
        help="MAU stages every gress must leave free on each chip (default 3)",
    )
    parser.add_argument(
        "--update-schemas",
        action="store_true",
        help="write each build's bf-rt.json to tests/data/bfrt/<target>/ (commit them)",
    )
    parser.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite the resource table in tna/README.md from this build",
    )
    args = parser.parse_args()
    try:
        compiler = find_compiler()
    except CompilerNotFound as exc:
        print(f"build_p4: error: {exc}", file=sys.stderr)
        return 2
    selected = args.programs or programs()
    unknown = [p for p in selected if p not in programs()]
    if unknown:
        print(f"build_p4: unknown program(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    if compiler is None:
        print(
            "build_p4: SKIPPED - no Tofino compiler found (set P4C=/path/to/p4c or "
            "SDE_INSTALL with bin/bf-p4c or bin/p4c); the P4 was NOT compile-checked."
        )
        return 0
    results: list[BuildResult] = []
    for program in selected:
        for target in args.target or sorted(TARGETS):
            builds: list[tuple[bool, str | None]] = [(args.production, None)]
            if args.with_production and not args.production:
                builds.append((True, f"{program}-production"))
            for production, outdir_name in builds:
                result = build_one(
                    compiler,
                    program,
                    target,
                    production,
                    args.spare_stages,
                    outdir_name,
                    args.update_schemas,
                )
                print(f"{result.program:10s} {target:8s} {result.message}", flush=True)
                results.append(result)
    if args.update_readme:
        update_readme(
            REPO / "tna" / "README.md", resource_table(results, compiler_version(compiler))
        )
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
