# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""scripts/build_p4.py reads stages and memories from what the compiler
writes by default: the assembler's context.json, or the .bfa when the
assembler stopped (e.g. over the chip's stage limit)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _stage_table(stage: int, kind: str, units: list[int]) -> dict[str, Any]:
    return {
        "stage_number": stage,
        "memory_resource_allocation": {
            "memory_type": kind,
            "memory_units_and_vpns": [{"memory_units": units, "vpns": [0]}],
        },
    }


def _context() -> dict[str, Any]:
    return {
        "tables": [
            {  # match table: stage tables nested under match_attributes
                "name": "SwitchIngress.classify",
                "direction": "ingress",
                "match_attributes": {"stage_tables": [_stage_table(0, "tcam", [0, 1])]},
            },
            {  # a register placed late: its stage sets the ingress depth
                "name": "SwitchIngress.vq_len",
                "direction": "ingress",
                "stage_tables": [_stage_table(6, "sram", [12, 13, 14])],
            },
            {
                "name": "SwitchEgress.rewrite",
                "direction": "egress",
                "match_attributes": {"stage_tables": [_stage_table(3, "sram", [5])]},
            },
            {
                "name": "ghosty",
                "direction": "ghost",
                "stage_tables": [_stage_table(11, "sram", [1])],
            },
        ],
        "phv_allocation": [
            {
                "stage_number": 0,
                "ingress": [
                    {"phv_number": 64, "records": [{"field_name": "a"}]},
                    {"phv_number": 65, "records": []},  # allocated to nothing
                ],
                "egress": [{"phv_number": 70, "records": [{"field_name": "b"}]}],
            },
            {
                "stage_number": 1,
                "ingress": [{"phv_number": 64, "records": [{"field_name": "a"}]}],
                "egress": [],
            },
        ],
    }


def test_context_gives_depth_memories_and_phv_per_gress(build_p4: ModuleType) -> None:
    res = build_p4.resources_from_context(_context())
    assert set(res.gress) == {"ingress", "egress"}  # ghost threads are not a gress budget
    assert res.gress["ingress"].stages == 7  # stage 6 used: seven stages deep
    assert res.gress["egress"].stages == 4
    assert (res.gress["ingress"].sram_units, res.gress["ingress"].tcam_units) == (3, 2)
    assert (res.gress["egress"].sram_units, res.gress["egress"].tcam_units) == (1, 0)
    assert res.phv_containers == 2  # 64 (twice) and 70; 65 holds nothing


def test_bfa_stage_sections_when_the_assembler_stopped(
    build_p4: ModuleType, tmp_path: Path
) -> None:
    bfa = "\n".join(
        ["version: 1.0.1", "stage 0 ingress:", "  foo: 1", "stage 7 ingress:"]
        + [f"stage {n} egress:" for n in (0, 1, 14)]
    )
    pipe = tmp_path / "pipe"
    pipe.mkdir()
    (pipe / "bfcc.bfa").write_text(bfa)
    # What the compiler leaves when the assembler did not run: a table-less context.json.
    (pipe / "context.json").write_text('{"tables": [], "phv_allocation": []}')
    res = build_p4.read_resources(tmp_path)
    assert res is not None
    assert {g: r.stages for g, r in res.gress.items()} == {"ingress": 8, "egress": 15}


def test_no_output_is_unknown(build_p4: ModuleType, tmp_path: Path) -> None:
    assert build_p4.read_resources(tmp_path) is None
    (tmp_path / "context.json").write_text("{not json")
    assert build_p4.read_resources(tmp_path) is None


def test_budget_wants_spare_stages_in_every_gress(build_p4: ModuleType) -> None:
    res = build_p4.resources_from_context(_context())  # ingress 7, egress 4
    assert build_p4.over_budget(res, 12, 3) == []
    over = build_p4.over_budget(res, 12, 6)  # budget 6: ingress's 7 is over
    assert len(over) == 1 and over[0].startswith("ingress uses 7 of 12")


def test_readme_table_is_rewritten_between_markers(build_p4: ModuleType, tmp_path: Path) -> None:
    res = build_p4.resources_from_context(_context())
    results = [
        build_p4.BuildResult("pmqecn", "tofino", True, "ok", res),
        build_p4.BuildResult("bfcc", "tofino2", False, "failed", None),
    ]
    table = build_p4.resource_table(results, "p4c 1.2.3")
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{build_p4.README_BEGIN}\nold table\n{build_p4.README_END}\nafter\n")
    build_p4.update_readme(readme, table)
    text = readme.read_text()
    assert "old table" not in text and text.startswith("intro\n") and text.endswith("after\n")
    assert "| pmqecn | tofino | ok | 7 of 12 | 4 of 12 | 3/1 | 2/0 | 2 |" in text
    assert "| bfcc | tofino2 | **fails** | - | - | - | - | - |" in text
    build_p4.update_readme(readme, table)  # idempotent
    assert readme.read_text() == text


def test_a_build_of_some_programs_keeps_the_other_rows(
    build_p4: ModuleType, tmp_path: Path
) -> None:
    """`build_p4.py --update-readme pmqecn` rewrote the table with pmqecn's
    rows alone, dropping every other program's."""
    res = build_p4.resources_from_context(_context())
    kept = [
        "| aqm | tofino | ok | 3 of 12 | 9 of 12 | 11/30 | 12/25 | 104 |",
        "| aqm (production) | tofino | ok | 3 of 12 | 8 of 12 | 10/26 | 12/25 | 103 |",
        "| spie | tofino2 | ok | 8 of 20 | 8 of 20 | 29/11 | 15/4 | 131 |",
    ]
    stale = "| pmqecn | tofino | ok | 8 of 12 | 4 of 12 | 41/8 | 24/0 | 99 |"
    readme = tmp_path / "README.md"
    readme.write_text(
        f"{build_p4.README_BEGIN}\n| program | chip | result |\n|---|---|---|\n"
        + "\n".join([kept[0], kept[1], stale, kept[2]])
        + f"\n{build_p4.README_END}\n"
    )
    results = [build_p4.BuildResult("pmqecn", "tofino", True, "ok", res)]
    build_p4.update_readme(readme, build_p4.resource_table(results, "p4c 1.2.3"))
    rows = [
        line
        for line in readme.read_text().splitlines()
        if line.startswith("| ") and "|---" not in line
    ]
    fresh = "| pmqecn | tofino | ok | 7 of 12 | 4 of 12 | 3/1 | 2/0 | 2 |"
    assert rows[1:] == [kept[0], kept[1], fresh, kept[2]]
    assert stale not in readme.read_text()


def _build_p4(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("P4C", "SDE_INSTALL")}
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_p4.py")],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_named_compiler_that_is_missing_is_an_error_not_a_skip(tmp_path: Path) -> None:
    r = _build_p4({"P4C": "/nonexistent/p4c"})
    assert r.returncode == 2
    assert "P4C='/nonexistent/p4c'" in r.stderr and "does not exist" in r.stderr
    assert "Traceback" not in r.stderr and "SKIPPED" not in r.stdout


def test_a_named_compiler_that_cannot_run_is_an_error(tmp_path: Path) -> None:
    plain = tmp_path / "p4c"
    plain.write_text("not a program")
    r = _build_p4({"P4C": str(plain)})
    assert r.returncode == 2 and "is not executable" in r.stderr


def test_an_sde_install_without_a_compiler_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    r = _build_p4({"SDE_INSTALL": str(tmp_path)})
    assert r.returncode == 2
    assert "has no executable bin/bf-p4c or bin/p4c" in r.stderr


def test_no_compiler_named_is_a_skip_that_says_so() -> None:
    r = _build_p4({})
    assert r.returncode == 0 and "SKIPPED" in r.stdout and "NOT compile-checked" in r.stdout


def test_with_production_builds_both_ways_and_fails_on_either(
    build_p4: ModuleType, monkeypatch: Any
) -> None:
    # The two builds place tables differently (S-PIE's Tofino ingress once
    # fitted with the hooks and not without), so each is checked on its own.
    calls: list[tuple[bool, str | None]] = []

    def fake_build(
        compiler: str,
        program: str,
        target: str,
        production: bool,
        spare: int,
        outdir_name: str | None = None,
        update_schemas: bool = False,
    ) -> Any:
        calls.append((production, outdir_name))
        label = f"{program} (production)" if production else program
        return build_p4.BuildResult(label, target, not production, "x")

    monkeypatch.setattr(build_p4, "find_compiler", lambda: "fake-p4c")
    monkeypatch.setattr(build_p4, "build_one", fake_build)
    argv = ["build_p4", "spie", "--target", "tofino", "--with-production"]
    monkeypatch.setattr(sys, "argv", argv)
    assert build_p4.main() == 1  # the production build failed
    assert calls == [(False, None), (True, "spie-production")]
    calls.clear()
    monkeypatch.setattr(sys, "argv", ["build_p4", "spie", "--target", "tofino"])
    assert build_p4.main() == 0
    assert calls == [(False, None)]


def test_the_committed_schema_is_checked_against_a_fresh_compile(
    tmp_path: Path, build_p4: ModuleType
) -> None:
    """scripts/build_p4.py compares each build's bf-rt.json with the one
    committed under tests/data/bfrt (layout aside), and says which is stale."""
    fresh = tmp_path / "bf-rt.json"
    fresh.write_text('{"tables": [{"name": "pipe.a", "size": 1}], "schema_version": "1.0.0"}')
    committed = tmp_path / "committed.json"
    assert "no committed" in str(build_p4.schema_check(fresh, committed, update=False))
    assert build_p4.schema_check(fresh, committed, update=True) is None
    assert committed.read_text().startswith("{\n")  # sorted and indented
    assert build_p4.schema_check(fresh, committed, update=False) is None
    fresh.write_text('{"schema_version": "1.0.0", "tables": [{"size": 1, "name": "pipe.a"}]}')
    assert build_p4.schema_check(fresh, committed, update=False) is None  # layout only
    fresh.write_text('{"tables": [{"name": "pipe.a", "size": 2}], "schema_version": "1.0.0"}')
    assert "stale" in str(build_p4.schema_check(fresh, committed, update=False))


def test_a_recompile_that_only_renumbers_the_snapshot_tables_is_fresh(
    tmp_path: Path, build_p4: ModuleType
) -> None:
    """The compiler numbers and orders its snapshot tables differently from
    one build of an unchanged program to the next: that is not a stale
    schema. A P4 table's id or any other field still is."""
    import json

    def write(path: Path, tables: list[dict[str, Any]]) -> Path:
        path.write_text(json.dumps({"schema_version": "1.0.0", "tables": tables}))
        return path

    a = {"name": "pipe.SwitchIngress.t", "id": 7, "size": 4, "depends_on": [3, 1]}
    snap = {"name": "pipe.snapshot.cfg", "id": 2447364724, "size": 12}
    committed = tmp_path / "committed.json"
    build_p4.schema_check(write(tmp_path / "one.json", [a, snap]), committed, update=True)
    renumbered = [dict(snap, id=2449491319), dict(a, depends_on=[1, 3])]
    assert build_p4.schema_check(write(tmp_path / "two.json", renumbered), committed, False) is None
    moved = [dict(a, id=8), snap]
    assert "stale" in str(
        build_p4.schema_check(write(tmp_path / "x.json", moved), committed, False)
    )


# A select as the assembler reads it: its match registers, then a row per
# case (cut from a compile of a three-way select on ihl, frag_offset and
# protocol).
_PARSER_HEAD = """parser ingress:
  start: parse_ipv4
  states:
    parse_ipv4:
      *:
        load: { byte1 : 0, half : 6..7, byte0 : 9 }
        next: parse_ipv4.$split_0
    parse_ipv4.$split_0:
"""
_ROWS = """      {tcp}:
        next: parse_tcp
      {udp}:
        next: parse_udp
      {other}:
        next: end
    parse_tcp:
      *:
        next: end
"""
_SELECT_KEPT = (
    _PARSER_HEAD
    + "      match: [ byte1, half, byte0 ]\n"
    + _ROWS.format(
        tcp="0b****0101***000000000000000000110",
        udp="0b****0101***000000000000000010001",
        other="0x********",
    )
    + "deparser ingress:\n  dictionary: {}\n"
)
# p4lang/p4c between #5063 and #5753: no match registers, every row `*`.
_SELECT_DROPPED = _PARSER_HEAD + _ROWS.format(tcp="*", udp="*", other="*")


def test_a_select_whose_match_the_compiler_dropped_is_found(build_p4: ModuleType) -> None:
    assert build_p4.selects_dropped(_SELECT_DROPPED) == [
        "ingress parse_ipv4.$split_0 (3 transitions)"
    ]


def test_a_select_with_its_match_registers_is_not(build_p4: ModuleType) -> None:
    assert build_p4.selects_dropped(_SELECT_KEPT) == []
    # One unconditional transition per state is every parser's shape.
    assert build_p4.selects_dropped(_PARSER_HEAD + "      *:\n        next: end\n") == []


def test_a_build_with_a_dropped_select_is_not_ok(build_p4: ModuleType, tmp_path: Path) -> None:
    """The build reports what the chip would do and names the compiler fix."""
    (tmp_path / "pipe").mkdir()
    (tmp_path / "pipe" / "prog.bfa").write_text(_SELECT_DROPPED)
    problem = build_p4.parser_problem(tmp_path)
    assert problem is not None
    assert "parse_ipv4.$split_0" in problem and "p4lang/p4c#5753" in problem
    assert "first transition for every packet" in problem
    (tmp_path / "pipe" / "prog.bfa").write_text(_SELECT_KEPT)
    assert build_p4.parser_problem(tmp_path) is None


def test_the_compiler_version_is_the_line_that_gives_one(build_p4: ModuleType) -> None:
    """A wrapper around p4c-barefoot printed coreutils' credits last, and the
    resource table said it was compiled with 'Written by David MacKenzie.'."""
    wrapper = (
        "/root/p4c-tofino/build/backends/tofino/bf-p4c/p4c-barefoot\n"
        "Version 9.13.4\n"
        "p4c-tofino: no basename (GNU coreutils) 9.1\n"
        "Written by David MacKenzie.\n"
    )
    assert build_p4.version_line(wrapper, "p4c-tofino") == "p4c-barefoot 9.13.4"
    one_line = "p4c 1.2.5 (SHA: 34b86e9 BUILD: RELEASE)\n"
    assert build_p4.version_line(one_line, "p4c") == "p4c 1.2.5 (SHA: 34b86e9 BUILD: RELEASE)"
    assert build_p4.version_line("", "/opt/sde/bin/bf-p4c --foo") == "bf-p4c"
