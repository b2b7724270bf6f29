"""scripts/build_p4.py reads the compiler's resources report the way the
compiler writes it (compiler_interfaces/schemas/resources_schema.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def build_p4() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_p4", REPO / "scripts" / "build_p4.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stages_used_are_those_with_tables_placed(tmp_path: Path) -> None:
    stages = [
        {"stage_number": i, "logical_tables": {"size": 16, "ids": [{"id": 0}] if i < 7 else []}}
        for i in range(12)
    ]
    pipe = tmp_path / "pipe"
    pipe.mkdir()
    (pipe / "resources.json").write_text(
        json.dumps({"resources": {"mau": {"nStages": 12, "mau_stages": stages}}})
    )
    assert build_p4().stage_count(tmp_path) == "7 of 12"


def test_no_or_unreadable_report_is_unknown(tmp_path: Path) -> None:
    assert build_p4().stage_count(tmp_path) is None
    (tmp_path / "resources.json").write_text("{not json")
    assert build_p4().stage_count(tmp_path) is None
