# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 12 point 5: a build is only good with the <program>.conf that
bf_switchd and tofino-model load, left in build/<chip>/<program>/."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def write_conf(outdir: Path, program: str, bfrt: Path) -> None:
    # The shape p4c-gen-conf writes for a BF-RT program (one pipe, "pipe").
    conf = {
        "chip_list": [{"id": "asic-0", "chip_family": "tofino", "instance": 0}],
        "p4_devices": [
            {
                "device-id": 0,
                "p4_programs": [
                    {
                        "program-name": program,
                        "bfrt-config": str(bfrt),
                        "p4_pipelines": [
                            {
                                "p4_pipeline_name": "pipe",
                                "context": str(outdir / "pipe" / "context.json"),
                                "config": str(outdir / "pipe" / "tofino.bin"),
                                "pipe_scope": [0, 1, 2, 3],
                                "path": str(outdir),
                            }
                        ],
                    }
                ],
            }
        ],
    }
    (outdir / f"{program}.conf").write_text(json.dumps(conf))


def test_conf_must_be_there_and_name_real_files(build_p4: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "build" / "tofino" / "pmqecn"
    (out / "pipe").mkdir(parents=True)
    assert "no pmqecn.conf" in build_p4.conf_problem(out, "pmqecn")
    write_conf(out, "pmqecn", out / "bf-rt.json")
    assert "do not exist" in build_p4.conf_problem(out, "pmqecn")
    for name in ("bf-rt.json", "pipe/context.json", "pipe/tofino.bin"):
        (out / name).write_text("{}")
    assert build_p4.conf_problem(out, "pmqecn") is None
    (out / "pmqecn.conf").write_text("{}")
    assert "not a BF-RT conf" in build_p4.conf_problem(out, "pmqecn")


def _fake_compiler(bindir: Path, with_gen_conf: bool) -> Path:
    """A compiler directory like p4c's build tree: the driver, and beside it a
    p4c-gen-conf stand-in that records the arguments it was given."""
    bindir.mkdir(parents=True)
    driver = bindir / "p4c"
    driver.write_text("#!/bin/sh\nexit 0\n")
    driver.chmod(0o755)
    if with_gen_conf:
        (bindir / "p4c-gen-conf").write_text(
            "import argparse, json, pathlib, sys\n"
            "p = argparse.ArgumentParser()\n"
            "for a in ('--conf-type', '--name', '--device', '--outputdir', '--bfrt-name',\n"
            "          '--p4-version'):\n"
            "    p.add_argument(a)\n"
            "p.add_argument('--pipe', nargs='+')\n"
            "a = p.parse_args()\n"
            "out = pathlib.Path(a.outputdir) / (a.name + '.conf')\n"
            "out.write_text(json.dumps(vars(a)))\n"
        )
    return driver


def test_missing_conf_is_written_by_the_gen_conf_beside_the_compiler(
    build_p4: ModuleType, tmp_path: Path
) -> None:
    out = tmp_path / "build" / "tofino2" / "bfcc"
    out.mkdir(parents=True)
    manifest = {"programs": [{"pipes": [{"pipe_name": "pipe"}]}]}
    (out / "manifest.json").write_text(json.dumps(manifest))
    driver = _fake_compiler(tmp_path / "p4c-build", with_gen_conf=True)

    note = build_p4.write_missing_conf(str(driver), out, "bfcc", "tofino2")

    assert note is not None and "p4c-gen-conf" in note
    args = json.loads((out / "bfcc.conf").read_text())
    assert args["conf_type"] == "BF-RT" and args["device"] == "tofino2"
    assert args["name"] == "bfcc" and args["pipe"] == ["pipe"]
    assert args["bfrt_name"] == str(out / "bf-rt.json")
    # A conf the compiler wrote itself is left alone.
    (out / "bfcc.conf").write_text("from the compiler")
    assert build_p4.write_missing_conf(str(driver), out, "bfcc", "tofino2") is None
    assert (out / "bfcc.conf").read_text() == "from the compiler"


def test_without_gen_conf_the_absence_is_reported(build_p4: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    driver = _fake_compiler(tmp_path / "bin", with_gen_conf=False)
    assert build_p4.write_missing_conf(str(driver), out, "pmqecn", "tofino") is None
    assert "no pmqecn.conf" in build_p4.conf_problem(out, "pmqecn")
