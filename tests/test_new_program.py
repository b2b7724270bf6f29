# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""scripts/new_program.py (issue 49): a new mechanism from one command.

The acceptance run copies the repository to a temporary directory, makes
a program there as a copy of DA-DCTCP and runs that tree's tests of it
(`pytest -k <name>`): they must pass, and be at least 50. Refusals are run
against this tree itself, since a refused name writes nothing.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "new_program.py"
# The copy's name. Not a word of any test id here: the child's `-k` must not
# select this module (the environment variable below guards that too).
NEW = "gadget"
CHILD = "TOFCC_NEW_PROGRAM_CHILD"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("new_program", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["new_program"] = module
    spec.loader.exec_module(module)
    return module


np = _load()


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")])}
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "new_program.py"), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _export(dest: Path) -> None:
    """This repository's tree as committed (git archive HEAD), or, outside a
    git checkout, its files without hidden, build and cache folders."""
    archive = dest.parent / "tree.tar"
    done = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(archive), "HEAD"],
        capture_output=True,
    )
    dest.mkdir()
    if done.returncode == 0:
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
        return

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {
            n
            for n in names
            if n.startswith(".") or n in {"build", "__pycache__"} or n.endswith(".egg-info")
        }

    shutil.copytree(REPO, dest, ignore=ignore, dirs_exist_ok=True)


@pytest.mark.skipif(bool(os.environ.get(CHILD)), reason="inside the copy's own run")
def test_a_copy_of_dadctcp_passes_its_own_tests(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _export(root)
    made = _run(root, NEW, "--from", "dadctcp")
    assert made.returncode == 0, made.stderr
    for part in (
        f"tna/{NEW}/{NEW}.p4",
        f"models/switch/{NEW}.py",
        f"bfrt_controller/{NEW}/app.py",
        f"bfrt_controller/defaults/{NEW}.yaml",
        f"ptf_tests/{NEW}/test_{NEW}.py",
        f"ptf_tests/vectors/{NEW}/marking.yaml",
        f"evaluation/scenarios/{NEW}-smoke.yaml",
    ):
        assert (root / part).is_file(), part
    assert not (root / "ptf_tests" / "vectors" / NEW / "generated").exists()
    env = {
        **os.environ,
        CHILD: "1",
        "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")]),
    }
    # Its own addopts: one process, whatever this run's are.
    pytest_args = ["-q", "-p", "no:cacheprovider", "-o", "addopts=--strict-markers", "-k", NEW]
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    summary = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else tests.stderr
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    assert "failed" not in summary and "error" not in summary, summary
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) >= 50, summary


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("dadctcp", "--from", "dadctcp"), "a program of that name exists"),
        (("Widget", "--from", "dadctcp"), "not a program name"),
        (("my-prog", "--from", "dadctcp"), "not a program name"),
        (("class", "--from", "dadctcp"), "not a program name"),
        (("none", "--from", "dadctcp"), "a scheme of that name exists"),
        (("tcn", "--from", "dadctcp"), "a scheme of that name exists"),
        (("widget", "--from", "nosuch"), "no such program"),
        (("widget", "--from", "aqm"), "not named after it"),
        (("widget", "--from", "bfcc"), "Context.bfcc()"),
    ],
)
def test_a_taken_or_bad_name_is_refused_in_one_line(args: tuple[str, ...], words: str) -> None:
    before = sorted(p.name for p in (REPO / "tna").iterdir())
    done = _run(REPO, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in (REPO / "tna").iterdir()) == before


def test_renaming_keeps_what_the_copy_shares() -> None:
    names = np.Names("dadctcp", "widget")
    keep = ("dadctcp-dc", "models.dadctcp_thresholds", "dadctcp-py")
    text = (
        "class DadctcpApp: DADCTCP_PORTS dadctcp_switch(sc.Dadctcp) test_dadctcp.py\n"
        "dadctcp-dc dadctcp-dctcp models.dadctcp_thresholds.reallocate cc: dadctcp-py\n"
        "DA-DCTCP p4dadctcp dadctcps\n"
    )
    assert np.rename_words(text, names, keep) == (
        "class WidgetApp: WIDGET_PORTS widget_switch(sc.Widget) test_widget.py\n"
        "dadctcp-dc widget-dctcp models.dadctcp_thresholds.reallocate cc: dadctcp-py\n"
        "DA-DCTCP p4dadctcp dadctcps\n"
    )
    # A name with a digit keeps its class spelling (P4qcn, not P4Qcn).
    assert np.rename_words("P4qcnApp P4QCN p4qcn_bridged", np.Names("p4qcn", "pq")) == (
        "PqApp PQ pq_bridged"
    )


def test_a_copy_the_width_audit_refuses_is_undone(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "width_audit.py").write_text("raise SystemExit('width audit: no')\n")
    (tmp_path / "kept.txt").write_text("as it was\n")
    plan = np.Plan(
        writes={Path("new/dir/file.txt"): "copied\n", Path("kept.txt"): "edited\n"},
    )
    with pytest.raises(np.Failed, match="width audit: no"):
        np.apply(tmp_path, plan)
    assert (tmp_path / "kept.txt").read_text() == "as it was\n"
    assert not (tmp_path / "new").exists()
