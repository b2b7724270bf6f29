# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every test a comment or document cites is there (issue 46, Deliver 5).

A sentence such as "tests/evaluation/test_tcp.py runs it on a short horizon"
sends a reader to that file; after a test moves, the sentence sends them
nowhere. Each `tests/...py` cited in a tracked file must exist, and each
`tests/...py::name` must define `name`.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# (Not "sample.py.txt": a file named so is not a test module.)
CITED = re.compile(r"\btests/[A-Za-z0-9_/]+\.py(?!\.\w)(?:::([A-Za-z_][A-Za-z0-9_]*))?")
# Text a person reads; generated vectors and compiler output cite nothing.
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".sh", ".p4", ".txt", ".cfg", ""}
NOT_PROSE = ("tests/data/", "ptf_tests/vectors/")


def _tracked() -> list[Path]:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True, text=True
    ).stdout.split("\0")
    return [
        REPO / p
        for p in listed
        if p and Path(p).suffix in SUFFIXES and not p.startswith(NOT_PROSE) and (REPO / p).is_file()
    ]


def dangling(files: list[Path], root: Path = REPO) -> list[str]:
    """'file:line: cited' for each citation of a test file or test that is not there."""
    out = []
    for path in files:
        text = path.read_text(errors="replace")
        for m in CITED.finditer(text):
            cited = m.group(0)
            target = root / cited.split("::")[0]
            where = f"{path.relative_to(root)}:{text.count(chr(10), 0, m.start()) + 1}"
            if not target.is_file():
                out.append(f"{where}: {cited} does not exist")
            elif m.group(1) and not re.search(
                rf"^\s*(?:async\s+)?(?:def|class)\s+{m.group(1)}\b", target.read_text(), re.M
            ):
                out.append(f"{where}: {cited}: no such test in the file")
    return out


def test_every_cited_test_exists() -> None:
    # This file's own examples below cite tests that are not there on purpose.
    problems = dangling([f for f in _tracked() if f != Path(__file__).resolve()])
    assert not problems, "\n".join(problems)


def test_a_dangling_citation_is_named(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_real.py").write_text("def test_here() -> None: ...\n")
    doc = tmp_path / "notes.md"
    doc.write_text(
        "see tests/test_real.py::test_here\n"
        "and tests/net/test_gone.py\n"
        "and tests/test_real.py::test_renamed\n"
        "and tests/data/sample.py.txt, a sample\n"
    )
    assert dangling([doc], tmp_path) == [
        "notes.md:2: tests/net/test_gone.py does not exist",
        "notes.md:3: tests/test_real.py::test_renamed: no such test in the file",
    ]
