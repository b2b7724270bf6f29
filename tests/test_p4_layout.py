# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The P4 stays composed of small controls, and its sizes stay in one place
(issue 46): no control of tna/ is longer than a screenful or two, every
table, register and counter size is a name tna/include/size.p4 defines
with an #ifndef override, and no program has a port count of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hw_profiles import load_profile
from models.switch.p4_source import P4SourceError, preprocess, read_program

TNA = Path(__file__).resolve().parents[1] / "tna"
SOURCES = sorted(TNA.glob("*/*.p4"))
SIZE_P4 = TNA / "include" / "size.p4"
MAX_CONTROL_LINES = 200
# A keyless table holds its one default action, and BFCC's recirculation
# depth is one cell per pipe: sizes by construction (size.p4 says so).
STRUCTURAL_SIZES = {"1"}


def control_lengths(text: str) -> dict[str, int]:
    """Each control's lines, from `control Name(` to its closing brace
    (comments counted, their braces not)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    out: dict[str, int] = {}
    for m in re.finditer(r"^control\s+(\w+)\s*\(", text, re.M):
        depth = 0
        for i in range(text.index("{", m.end()), len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                out[m.group(1)] = text.count("\n", m.start(), i) + 1
                break
        else:
            raise P4SourceError(f"control {m.group(1)}: unbalanced braces")
    return out


def test_control_lengths_are_counted() -> None:
    text = (
        "control A(in bit<1> x) {\n    /* } */\n    apply {\n    }\n}\n\n"
        "control B() { apply { } }\n"
    )
    assert control_lengths(text) == {"A": 5, "B": 1}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(TNA)))
def test_no_control_is_longer_than_the_limit(path: Path) -> None:
    long = {
        name: n for name, n in control_lengths(path.read_text()).items() if n > MAX_CONTROL_LINES
    }
    assert not long, f"{path.relative_to(TNA)}: split {long} into controls per concern"


def _size_defines() -> dict[str, str]:
    text = SIZE_P4.read_text()
    defines = dict(re.findall(r"^#define\s+(\w+)\s+(\d+)\s*$", text, re.M))
    guarded = set(re.findall(r"^#ifndef\s+(\w+)\s*\n#define\s+\1\s+\d+\s*$", text, re.M))
    assert defines and set(defines) == guarded, set(defines) ^ guarded
    return defines


def test_every_size_in_size_p4_can_be_overridden() -> None:
    sizes = _size_defines()
    assert sizes["TOFCC_PORTS"] == "512"
    # Overridden as the compiler's -D would: the reader sees the new size.
    aqm = TNA / "aqm" / "aqm.p4"
    profile = load_profile("tofino")
    assert read_program(aqm, profile).counters["SwitchEgress.aqm_drops"] == (512, "packets")
    bigger = read_program(aqm, profile, defines={"TOFCC_PORTS": "1024"})
    assert bigger.counters["SwitchEgress.aqm_drops"] == (1024, "packets")
    assert bigger.counters["SwitchIngress.trust.untrusted_feedback_drops"] == (1024, "packets")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(TNA)))
def test_every_size_is_a_name_from_size_p4(path: Path) -> None:
    """A literal size anywhere but size.p4 (a keyless table's 1 aside), or a
    program's own port count, fails."""
    if path == SIZE_P4:
        return
    sizes = _size_defines()
    # Comments and inactive branches out; the defines not substituted.
    text = preprocess(path, {}, seen={SIZE_P4.resolve()})
    text = "\n".join(line for line in text.splitlines() if not line.startswith("#file "))
    used = re.findall(r"\bsize\s*=\s*(\w+)\s*;", text)
    used += re.findall(r"\b(?:Register|Counter)\s*<[^;]*?>\s*\(\s*(\w+)", text)
    for size in used:
        assert size in sizes or size in STRUCTURAL_SIZES, f"{path.name}: size {size}"
    own = re.findall(r"^#define\s+(\w*PORTS\w*)\b", path.read_text(), re.M)
    assert not own, f"{path.name} defines a port count of its own: {own}"
