# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The width audit (scripts/width_audit.py) against the P4 it audits: every
register and counter of the six programs is in it at its declared width,
what it calls unable to overflow outlasts its epoch on both chips, the
known defects are the only ones, and tna/README.md carries the table the
script computes."""

from __future__ import annotations

import importlib.util
import math
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from hw_profiles import load_profile

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "width_audit", ROOT / "scripts" / "width_audit.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["width_audit"] = mod
    spec.loader.exec_module(mod)
    return mod


wa = _load()
PROFILES = {c: load_profile(c) for c in wa.CHIPS}


def test_every_register_and_counter_is_audited_at_its_declared_width() -> None:
    assert wa.check_declarations() == []


def test_all_six_programs_are_covered() -> None:
    programs = {e.program for e in wa.AUDIT}
    assert programs == {"include", *wa.PROGRAMS}
    assert {p.name for p in (ROOT / "tna").iterdir() if p.is_dir() and p.name != "include"} == set(
        wa.PROGRAMS
    )
    # The audit found registers and counters in each, not an empty match.
    for program in wa.PROGRAMS:
        decl = wa.declared(program)
        assert any(kind != "metadata" for kind, _ in decl), program


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new))


def test_a_width_change_in_the_p4_fails_the_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S-PIE's sum of squares narrowed to 16 bits, and a register added to
    AQM's CoDel (a sub-control in a file of its own), in a copy of tna/:
    both are reported."""
    copy = tmp_path / "tna"
    shutil.copytree(ROOT / "tna", copy)
    _edit(
        copy / "spie" / "sketch.p4",
        "Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) sumsq;",
        "Register<bit<16>, spie_slot_t>(SPIE_SLOTS, 0) sumsq;",
    )
    _edit(
        copy / "aqm" / "codel.p4",
        "Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_count;",
        "Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_count;\n"
        "    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) new_sum;",
    )
    monkeypatch.setattr(wa, "TNA", copy)
    problems = wa.check_declarations()
    assert any("sumsq is 16 bits in the P4, 32 in the audit" in p for p in problems), problems
    assert any("register new_sum (bit<32>) is not in the audit" in p for p in problems), problems


def test_nothing_called_safe_overflows_within_its_epoch() -> None:
    assert wa.check_classes(PROFILES) == []


def test_every_entry_is_classified_and_none_wraps_silently() -> None:
    for e in wa.AUDIT:
        assert e.cls in wa.CLASSES, e.name
        if e.cls != wa.CANNOT:
            assert e.note, f"{e.program}.{e.name}: {e.cls} needs its consequence stated"


def test_the_known_defects_are_the_only_ones() -> None:
    """Every defect the audit found is fixed; a new one must be added here on
    purpose."""
    defects = {(e.program, e.name) for e in wa.AUDIT if e.cls == wa.DEFECT}
    assert defects == set()


def test_spie_sum_cannot_wrap_at_line_rate() -> None:
    """The issue's case: S-PIE's sum of squares, bounded at line rate and
    saturating beyond it, never a silent wrap; 400 Gb/s overflows a
    per-packet 32-bit count four times as fast as 100 Gb/s."""
    sumsq = next(e for e in wa.AUDIT if e.program == "spie" and e.name == "sumsq")
    assert sumsq.cls == wa.BY_DESIGN
    assert all(math.isinf(wa.overflow_s(sumsq, p)) for p in PROFILES.values())
    drops = next(e for e in wa.AUDIT if e.name == "large_flow_drops")
    t1, t2 = (wa.overflow_s(drops, PROFILES[c]) for c in wa.CHIPS)
    assert t1 == pytest.approx(4 * t2)
    assert t1 == pytest.approx(2**32 / (100e9 / 672))


def test_readme_table_is_the_scripts() -> None:
    text = (ROOT / "tna" / "README.md").read_text()
    assert wa.readme_section(text) == wa.section(PROFILES)


def test_a_register_in_a_comment_is_not_declared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit reads the P4 as the compiler does (issue 46: its own reader
    kept comments): a declaration commented out, or compiled out, is none."""
    copy = tmp_path / "tna"
    shutil.copytree(ROOT / "tna", copy)
    _edit(
        copy / "aqm" / "aqm.p4",
        "    AqmQueueHook() queue_hook;\n",
        "    AqmQueueHook() queue_hook;\n"
        "    /* Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) ghost; */\n"
        "    // Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) ghost2;\n"
        "#ifdef TOFCC_NEVER\n"
        "    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) ghost3;\n"
        "#endif\n",
    )
    monkeypatch.setattr(wa, "TNA", copy)
    assert wa.check_declarations() == []


def test_typedef_fields_have_their_width() -> None:
    """Fields of a typedef'd type (the program's own, the shared ones and the
    chip's) are declared at the type's width, not left out (issue 46)."""
    spie = wa.declared("spie")
    assert spie[("metadata", "ig_md_t.slot")] == "8"  # spie_slot_t
    assert spie[("metadata", "ig_md_t.next_update_port")] == "9"  # PortId_t
    bfcc = wa.declared("bfcc")
    assert bfcc[("metadata", "eg_md_t.bp_group")] == "8"  # group_t
    assert bfcc[("metadata", "eg_md_t.vq_index")] == "12"  # vq_index_t
    # A chip's own type has the chip's width.
    assert wa.declared("bfcc", "tofino")[("metadata", "ig_md_t.high_qid")] == "5"
    assert wa.declared("bfcc", "tofino2")[("metadata", "ig_md_t.high_qid")] == "7"


def test_objects_of_sub_controls_and_includes_are_their_programs() -> None:
    """A register declared in a program's sub-control file belongs to the
    program; a counter of a shared include to "include", once, whichever
    programs instantiate it."""
    aqm = wa.declared("aqm")
    assert aqm[("register", "red_block_packets")] == "32"  # tna/aqm/red.p4
    assert aqm[("register", "codel_count")] == "32"  # tna/aqm/codel.p4
    assert ("counter", "untrusted_feedback_drops") not in aqm
    include = wa.declared("include")
    assert include[("counter", "untrusted_feedback_drops")] == "32"
    assert not any(kind == "register" for kind, _ in include)
    # A struct entry is its members' widths.
    assert wa.declared("bfcc")[("register", "occupancy_window")] == "32+32"
