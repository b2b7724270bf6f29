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
