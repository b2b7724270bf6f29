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
