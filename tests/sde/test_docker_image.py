# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 34 items 4, 5 and 11, on file trees (no Docker engine here): the
compiler found as an open-p4studio install has it (bin/p4c), --no-clot
for its Tofino2 builds, the entrypoint's `all` running PTF with JUnit XML
and no suite first, and a Dockerfile whose SDE layer does not depend on the
project's files, fetched shallow, with a .dockerignore."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
ENTRYPOINT = REPO / "docker" / "entrypoint.sh"


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


# ---- items 4 and 5: scripts/build_p4.py ---------------------------------------------


def test_the_compiler_an_open_p4studio_install_has_is_found(
    build_p4: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("P4C", raising=False)
    monkeypatch.setenv("SDE_INSTALL", str(tmp_path))
    # An install named but holding no driver is an error, not a skip.
    with pytest.raises(build_p4.CompilerNotFound, match="bin/bf-p4c or bin/p4c"):
        build_p4.find_compiler()
    p4c = executable(tmp_path / "bin" / "p4c", "#!/bin/sh\n")
    assert build_p4.find_compiler() == str(p4c)
    bf = executable(tmp_path / "bin" / "bf-p4c", "#!/bin/sh\n")
    assert build_p4.find_compiler() == str(bf)  # Intel's SDE: its own driver


def test_tofino2_gets_no_clot_on_the_open_source_compiler_only(
    build_p4: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("P4FLAGS_TOFINO2", raising=False)
    monkeypatch.delenv("P4FLAGS_TOFINO", raising=False)
    assert build_p4.target_flags("/sde/install/bin/p4c", "tofino2") == ["-Xp4c=--no-clot"]
    assert build_p4.target_flags("/sde/install/bin/p4c", "tofino") == []
    assert build_p4.target_flags("/sde/install/bin/bf-p4c", "tofino2") == []
    monkeypatch.setenv("P4FLAGS_TOFINO2", "")  # an explicit choice wins, even nothing
    assert build_p4.target_flags("/sde/install/bin/p4c", "tofino2") == []


# ---- items 4 and 11: docker/entrypoint.sh ------------------------------------------


def run_entrypoint(
    tmp_path: Path, *args: str, compiler: bool = True
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The entrypoint against an install with only bin/p4c, a checkout whose
    build and PTF scripts record their calls, and stand-in sudo/ip/python."""
    log = tmp_path / "calls.log"
    sde = tmp_path / "sde"
    executable(sde / "run_tofino_model.sh", "#!/bin/sh\n")
    if compiler:
        executable(sde / "install" / "bin" / "p4c", "#!/bin/sh\n")
    executable(sde / "install" / "bin" / "veth_setup.sh", f'#!/bin/sh\necho "veth $*" >> {log}\n')
    src = tmp_path / "src"
    for program in ("bfcc", "pmqecn"):
        (src / "ptf_tests" / "vectors" / program).mkdir(parents=True)
    xml_out = sde / "pkgsrc" / "ptf-modules" / "ptf-utils" / "xml_out"
    executable(
        src / "ptf_tests" / "run_ptf.sh",
        f'#!/bin/sh\necho "run_ptf $*" >> {log}\n'
        f'mkdir -p {xml_out}/x && echo "<testsuite name=\\"$2-$3\\"/>" > {xml_out}/x/$2-$3.xml\n',
    )
    bin_dir = tmp_path / "bin"
    executable(bin_dir / "python", f'#!/bin/sh\necho "python P4C=$P4C $*" >> {log}\n')
    executable(bin_dir / "sudo", '#!/bin/sh\nexec "$@"\n')
    executable(bin_dir / "ip", "#!/bin/sh\nexit 1\n")  # no veth0 yet
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SDE": str(sde),
        "SDE_INSTALL": str(sde / "install"),
        "TOFCC_SRC": str(src),
        "PYTHON": str(bin_dir / "python"),
    }
    env.pop("P4C", None)
    proc = subprocess.run(
        ["bash", str(ENTRYPOINT), *args], env=env, capture_output=True, text=True, timeout=60
    )
    return proc, log


def test_all_runs_ptf_with_the_installed_p4c_and_junit_and_no_suite_first(tmp_path: Path) -> None:
    proc, log = run_entrypoint(tmp_path, "all")
    assert proc.returncode == 0, proc.stderr
    assert "no SDE" not in proc.stdout
    calls = log.read_text().splitlines()
    p4c = tmp_path / "sde" / "install" / "bin" / "p4c"
    builds = [c for c in calls if c.startswith("python ")]
    assert builds == [
        f"python P4C={p4c} scripts/build_p4.py {program} --target {chip}"
        for program in ("bfcc", "pmqecn")
        for chip in ("tofino", "tofino2")
    ]
    assert not any("-m pytest" in c for c in calls)
    runs = [c for c in calls if c.startswith("run_ptf ")]
    assert runs[0] == "run_ptf --start bfcc tofino --gen-xml-output"
    junit = tmp_path / "src" / "build" / "junit" / "ptf"
    assert (junit / "pmqecn-tofino2" / "pmqecn-tofino2.xml").exists()


def test_without_a_compiler_the_suite_runs_with_junit(tmp_path: Path) -> None:
    proc, log = run_entrypoint(tmp_path, "all", compiler=False)
    assert proc.returncode == 0, proc.stderr
    assert "no SDE" in proc.stdout
    junit = tmp_path / "src" / "build" / "junit" / "suite.xml"
    assert log.read_text().splitlines() == [f"python P4C= -m pytest -q --junitxml {junit}"]


# ---- item 11: docker/Dockerfile and .dockerignore ----------------------------------


def test_the_sde_layer_comes_before_the_project_and_is_fetched_once_shallow() -> None:
    lines = (REPO / "docker" / "Dockerfile").read_text().splitlines()
    copy_project = lines.index("COPY . .")
    sde_build = next(i for i, line in enumerate(lines) if "p4studio profile apply" in line)
    assert sde_build < copy_project
    # Before the project, only the SDE's own inputs are copied in.
    early = [line for line in lines[:copy_project] if line.startswith(("COPY", "ADD"))]
    assert early == ["COPY docker/p4studio-profile.yaml docker/sd[e] /opt/sde-context/"]
    text = "\n".join(lines)
    assert "clone --recursive" not in text and "fetch -q --depth 1" in text
    assert text.count("submodule update") == 1


def test_dockerignore_keeps_local_environments_out() -> None:
    ignored = {
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", ".git", "build"} <= ignored
    assert not any(i.startswith("docker") for i in ignored)
