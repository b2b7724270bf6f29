# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc end to end on the model target: readable output, exit codes, nothing
written on bad input, state kept between invocations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bfrt_controller.cli import cli
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--state", str(tmp_path / "state.yaml"), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def status(tmp_path: Path, section: str = "classes") -> list[dict[str, object]]:
    code, out = run(tmp_path, "status", "--json")
    assert code == 0, out
    return [r for r in json.loads(out) if r["section"] == section]


def test_status_json_shows_the_default(tmp_path: Path) -> None:
    rows = status(tmp_path)
    assert [(r["name"], r["threshold_cells"], r["weight"]) for r in rows] == [
        ("voice", 20, 6),
        ("video", 40, 5),
        ("bulk", 60, 5),
    ]


def test_status_table_is_readable(tmp_path: Path) -> None:
    code, out = run(tmp_path, "status")
    assert code == 0
    assert "voice" in out and "K cells" in out and "lambda* pps" in out
    assert "bound sources" in out and "spoofed drops" in out


def test_status_shows_each_ports_guards_as_the_switch_holds_them(tmp_path: Path) -> None:
    ports = {r["port"]: r for r in status(tmp_path, "ports")}
    bound = [p for p, r in ports.items() if r["bound_sources"]]
    trusted = [p for p, r in ports.items() if r["trusted"]]
    assert bound and trusted and not set(bound) & set(trusted)
    assert all(r["spoofed_drops"] == 0 and r["forged_drops"] == 0 for r in ports.values())


def test_set_threshold_persists_on_the_model_target(tmp_path: Path) -> None:
    # By name: "3=70" once meant class id 3 (issue 44 item 7 refuses ids).
    code, out = run(tmp_path, "set-threshold", "voice=33", "bulk=70")
    assert code == 0, out
    assert "threshold_cells" in out
    assert [r["threshold_cells"] for r in status(tmp_path)] == [33, 40, 70]


def test_bad_input_exit_code_and_nothing_written(tmp_path: Path) -> None:
    from bfrt_controller.cli import main  # noqa: F401 - exit codes come from main

    run(tmp_path, "set-threshold", "voice=33")
    with pytest.raises(Exception, match=r"class 3 threshold_cells"):
        run(tmp_path, "set-threshold", "video=41", "bulk=9999999")
    assert [r["threshold_cells"] for r in status(tmp_path)] == [33, 40, 60]
    with pytest.raises(Exception, match="unknown class 'nope'"):
        run(tmp_path, "set-weight", "nope=3")
    with pytest.raises(Exception, match="expected an integer"):
        run(tmp_path, "set-weight", "voice=lots")


def test_apply_validates_whole_file_first(tmp_path: Path) -> None:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["classes"][0]["threshold_cells"] = 11
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(raw))
    code, out = run(tmp_path, "apply", str(good))
    assert code == 0, out
    assert status(tmp_path)[0]["threshold_cells"] == 11

    raw["classes"][0]["threshold_cells"] = 12
    raw["classes"][2]["queue"] = 99
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw))
    with pytest.raises(Exception, match=r"classes\[2\].queue"):
        run(tmp_path, "apply", str(bad))
    assert status(tmp_path)[0]["threshold_cells"] == 11


def test_main_maps_errors_to_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from bfrt_controller import cli as cli_module

    def exit_code(*args: str) -> int:
        monkeypatch.setattr(sys, "argv", ["tofcc", "--state", str(tmp_path / "s.yaml"), *args])
        with pytest.raises(SystemExit) as exc:
            cli_module.main()
        return int(exc.value.code or 0)

    assert exit_code("set-threshold", "voice=-4") == 2
    assert exit_code("--target", "grpc://nohost", "status") == 2
    assert exit_code("--target", "grpc://localhost:1", "status") in (4, 5)
