#!/usr/bin/env python3
"""Compile every tna/<program>/<program>.p4 for Tofino and Tofino2.

The compiler is `$P4C`, else `$SDE_INSTALL/bin/bf-p4c`. Artifacts land in
build/<target>/<program>/ and each build is checked against the reference
model's control-plane names (bf-rt.json must declare every table, register
and counter the model has). With no compiler it says so and exits 0, so CI
on machines without one stays honest about what it did not check.

Extra compiler flags: P4FLAGS (all targets), P4FLAGS_TOFINO / P4FLAGS_TOFINO2.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hw_profiles import load_profile  # noqa: E402
from models.switch.registry import PROGRAMS, make_model  # noqa: E402

TARGETS = {"tofino": "tna", "tofino2": "t2na"}


def find_compiler() -> str | None:
    if os.environ.get("P4C"):
        return os.environ["P4C"]
    sde = os.environ.get("SDE_INSTALL")
    if sde and Path(sde, "bin", "bf-p4c").exists():
        return str(Path(sde, "bin", "bf-p4c"))
    return None


def programs() -> list[str]:
    return sorted(
        p.name for p in (REPO / "tna").iterdir() if p.is_dir() and (p / f"{p.name}.p4").exists()
    )


def bfrt_names(bfrt_json: Path) -> set[str]:
    info = json.loads(bfrt_json.read_text())
    names: set[str] = set()
    for table in info.get("tables", []):
        name = table.get("name", "")
        names.add(name.removeprefix("pipe."))
    return names


def stage_count(outdir: Path) -> str | None:
    """'used of available' MAU stages, from the compiler's resources report
    (compiler_interfaces resources_schema: mau.nStages, and one mau_stages
    entry per stage whose logical_tables.ids lists the tables placed there)."""
    for path in sorted(outdir.rglob("resources.json")):
        try:
            mau = json.loads(path.read_text())["resources"]["mau"]
            stages = mau["mau_stages"]
            used = sum(1 for st in stages if st.get("logical_tables", {}).get("ids"))
            return f"{used} of {mau.get('nStages', len(stages))}"
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return None


def build_one(compiler: str, program: str, target: str, production: bool) -> tuple[bool, str]:
    outdir = REPO / "build" / target / program
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
        *shlex.split(os.environ.get(f"P4FLAGS_{target.upper()}", "")),
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
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        return False, f"compile failed ({seconds:.0f}s), see {outdir}/compile.log\n{tail}"
    bfrt = next(iter(sorted(outdir.rglob("bf-rt.json"))), None) or next(
        iter(sorted(outdir.rglob("bfrt.json"))), None
    )
    if bfrt is None:
        return False, "compiled but no bf-rt.json was written"
    model = make_model(program, load_profile(target))
    wanted = set(model.p4.tables) | set(model.p4.registers) | set(model.p4.counters)
    if production:
        # The test hooks' tables (queue metadata, ingress clock) are compiled out.
        wanted = {n for n in wanted if not n.endswith("_override")}
    missing = sorted(n for n in wanted if not any(b.endswith(n) for b in bfrt_names(bfrt)))
    if missing:
        return False, f"bf-rt.json lacks names the model uses: {', '.join(missing)}"
    stages = stage_count(outdir)
    return True, f"ok in {seconds:.0f}s, {stages or '?'} MAU stages"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help="programs to build (default: all)")
    parser.add_argument("--target", choices=sorted(TARGETS), action="append")
    parser.add_argument("--production", action="store_true", help="compile the test hooks out")
    args = parser.parse_args()
    compiler = find_compiler()
    selected = args.programs or programs()
    unknown = [p for p in selected if p not in programs()]
    if unknown:
        print(f"build_p4: unknown program(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    if compiler is None:
        print(
            "build_p4: SKIPPED - no Tofino compiler found (set P4C=/path/to/p4c or "
            "SDE_INSTALL with bin/bf-p4c); the P4 was NOT compile-checked."
        )
        return 0
    failed = 0
    for program in selected:
        if program not in PROGRAMS:
            print(f"build_p4: {program}: no reference model registered", file=sys.stderr)
            failed += 1
            continue
        for target in args.target or sorted(TARGETS):
            ok, message = build_one(compiler, program, target, args.production)
            print(f"{program:10s} {target:8s} {message}")
            failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
