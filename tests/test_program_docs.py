# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every program in tna/ is documented where an operator looks for it.

The project's rule: read the paper beside the P4 and list every departure,
with its reason, in the program's README. A program added without that file
or section fails here, and so does a registered model without its P4.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from models.switch.registry import PROGRAMS

TNA = Path(__file__).resolve().parent.parent / "tna"
# A program is tna/<name>/<name>.p4; the other files beside it hold its
# sub-controls.
P4_PROGRAMS = sorted(p.parent.name for p in TNA.glob("*/*.p4") if p.stem == p.parent.name)


def test_every_p4_program_has_a_reference_model_and_the_reverse() -> None:
    assert set(P4_PROGRAMS) == set(PROGRAMS)


@pytest.mark.parametrize("program", P4_PROGRAMS)
def test_program_readme_lists_departures_from_its_paper(program: str) -> None:
    readme = TNA / program / "README.md"
    assert readme.is_file(), f"tna/{program}/README.md is missing"
    text = readme.read_text()
    heading = re.search(r"^#+ .*[Dd]epartures.*$", text, re.MULTILINE)
    assert heading, f"tna/{program}/README.md has no 'Departures' section"
    section = text[heading.end() :]
    # A table with at least one row (paper | here | why) or a list item.
    assert re.search(r"^\|.*\|.*\|", section, re.MULTILINE) or re.search(
        r"^([-*]|\d+\.) ", section, re.MULTILINE
    ), f"tna/{program}/README.md: the departures section lists nothing"


@pytest.mark.parametrize("program", P4_PROGRAMS)
def test_top_level_tna_readme_names_the_program(program: str) -> None:
    assert f"`{program}/{program}.p4`" in (TNA / "README.md").read_text()


# README's mechanism rows name their program by these words.
README_ROW_PROGRAM = {
    "PMQECN": "pmqecn",
    "BFCC": "bfcc",
    "P4QCN": "p4qcn",
    "DA-DCTCP": "dadctcp",
    "The AQM family": "aqm",
    "S-PIE": "spie",
}


def _built_stages(program: str, target: str) -> tuple[int, int]:
    """(ingress, egress) of the test build in tna/README.md's resource
    table, the one scripts/build_p4.py --update-readme writes."""
    row = re.search(
        rf"^\| {program} \| {target} \| ok \| (\d+) of \d+ \| (\d+) of \d+ \|",
        (TNA / "README.md").read_text(),
        re.MULTILINE,
    )
    assert row, f"tna/README.md's resource table has no ok {target} row for {program}"
    return int(row[1]), int(row[2])


@pytest.mark.parametrize("words", sorted(README_ROW_PROGRAM))
def test_readme_stage_counts_are_the_resource_tables(words: str) -> None:
    """README's 'compiles: Tofino i/e ..., Tofino2 i/e' is typed; the
    resource table is the compiler's. A recompile that moves a gress must
    move both (S-PIE's row said 9/8 for two stops after it fitted in 8)."""
    program = README_ROW_PROGRAM[words]
    readme = (TNA.parent / "README.md").read_text()
    row = re.search(rf"^\| \*\*{re.escape(words)}\*\*.*$", readme, re.MULTILINE)
    assert row, f"README.md has no row for {words}"
    said = re.search(r"Tofino (\d+)/(\d+)\D[^|]*?Tofino2 (\d+)/(\d+) of 20", row[0])
    assert said, f"README.md's {words} row gives no 'Tofino i/e ..., Tofino2 i/e of 20'"
    tofino, tofino2 = _built_stages(program, "tofino"), _built_stages(program, "tofino2")
    assert (int(said[1]), int(said[2])) == tofino, (
        f"README.md says {words} compiles to Tofino {said[1]}/{said[2]}; "
        f"tna/README.md's build: {tofino[0]}/{tofino[1]}"
    )
    assert (int(said[3]), int(said[4])) == tofino2, (
        f"README.md says {words} compiles to Tofino2 {said[3]}/{said[4]}; "
        f"tna/README.md's build: {tofino2[0]}/{tofino2[1]}"
    )
