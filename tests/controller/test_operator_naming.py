# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Naming an operator need not translate (issue 52, Deliver 5): bytes
wherever cells are, the rounding shown; front-panel names in tables, JSON
rows and metric labels with the device port beside; `status --config
DEPLOY` over every switch; `--json` on every command that prints; the man
page and the shell completions `deploy init` writes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from bfrt_controller.cli import cli
from bfrt_controller.manpage import COMPLETE_VAR, commands
from doubles.cli_run import out_of
from hw_profiles.boards import load_board

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pmqecn-tm-dwrr.yaml"
TOFINO2 = ROOT / "examples" / "pmqecn-tofino2.yaml"
AQM = ROOT / "bfrt_controller" / "defaults" / "aqm.yaml"
Capsys = pytest.CaptureFixture[str]


def ok(capsys: Capsys, *args: str) -> str:
    code, out, err = out_of(capsys, *args)
    assert code == 0, out + err
    return out


def edited(tmp_path: Path, source: Path, old: str, new: str, name: str = "c.yaml") -> Path:
    text = source.read_text()
    assert old in text
    out = tmp_path / name
    out.write_text(text.replace(old, new, 1))
    return out


def classes(capsys: Capsys, *args: str) -> dict[str, dict[str, Any]]:
    rows = json.loads(ok(capsys, *args, "status", "--json"))
    return {str(r["name"]): r for r in rows if r.get("section") == "classes"}


# ---- bytes wherever cells are ---------------------------------------------------------


def test_a_config_in_bytes_is_written_in_cells_with_the_rounding_shown(
    tmp_path: Path, capsys: Capsys
) -> None:
    cfg = edited(tmp_path, EXAMPLE, "threshold_cells: 20", "threshold_bytes: 1000")
    text = cfg.read_text().replace("threshold_cells: 40", "threshold_cells: 4KB", 1)
    cfg.write_text(text)
    out = ok(capsys, "check", "--config", str(cfg))
    # 1000 B is 12.5 cells of 80 B: 13 whole cells, 40 B more, and it says so.
    assert "classes[0].threshold_bytes: 1000 B -> 13 cells of 80 B = 1040 B (40 B more" in out
    assert "classes[1].threshold_cells: 4KB = 4000 B -> 50 cells of 80 B = 4000 B (exact)" in out
    doc = json.loads(ok(capsys, "check", "--config", str(cfg), "--json"))
    assert [(c["field"], c["cells"], c["held_bytes"]) for c in doc["conversions"]] == [
        ("classes[0].threshold_bytes", 13, 1040),
        ("classes[1].threshold_cells", 50, 4000),
    ]
    assert "13 cells" in ok(capsys, "apply", str(cfg))
    got = classes(capsys)
    assert (got["voice"]["threshold_cells"], got["video"]["threshold_cells"]) == (13, 50)
    # What runs is the file: the diff of it is empty, and says how it read the bytes.
    code, out, _ = out_of(capsys, "diff", "--config", str(cfg), "--exit-code")
    assert code == 0 and "13 cells" in out


def test_bytes_become_cells_of_the_configs_chip(tmp_path: Path, capsys: Capsys) -> None:
    cfg = edited(tmp_path, TOFINO2, "threshold_cells: 20", "threshold_bytes: 1000")
    out = ok(capsys, "check", "--config", str(cfg))
    # Tofino2's cells are 176 B: 1000 B take 6 of them.
    assert "1000 B -> 6 cells of 176 B = 1056 B (56 B more" in out


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("threshold_cells: 20", "threshold_cells: 20\n  threshold_bytes: 800", "threshold_bytes"),
        ("threshold_cells: 20", "threshold_bytes: 32XB", "threshold_bytes"),
        ("threshold_cells: 20", "threshold_cells: 1.00001KB", "threshold_cells"),
    ],
)
def test_bytes_that_do_not_read_exit_2_naming_the_field(
    tmp_path: Path, capsys: Capsys, old: str, new: str, field: str
) -> None:
    cfg = edited(tmp_path, EXAMPLE, old, new)
    code, out, err = out_of(capsys, "apply", str(cfg))
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert f"classes[0].{field}" in line and str(cfg) in line


def test_a_deployment_names_the_target_of_each_conversion(tmp_path: Path, capsys: Capsys) -> None:
    raw = yaml.safe_load(EXAMPLE.read_text())
    raw["classes"][0].pop("threshold_cells")
    raw["classes"][0]["threshold_bytes"] = "2KiB"
    deploy = tmp_path / "d.yaml"
    deploy.write_text(
        yaml.safe_dump({"targets": [{"name": "leaf1", "program": "pmqecn", "config": raw}]})
    )
    out = ok(capsys, "check", "--config", str(deploy))
    assert "targets[0].config.classes[0].threshold_bytes: 2KiB = 2048 B -> 26 cells" in out


def test_set_takes_bytes_where_it_takes_cells(capsys: Capsys) -> None:
    aqm = ["--program", "aqm"]
    doc = json.loads(ok(capsys, *aqm, "set", "max_th_bytes=32KB", "--queue", "3/0", "--json"))
    assert [(c["what"], c["new"]) for c in doc["changes"]] == [("max_th_cells", "400")]
    assert doc["conversions"][0]["field"] == "max_th_bytes"
    out = ok(capsys, *aqm, "set", "min_th_cells=1000B", "--queue", "3/0")
    assert "min_th_cells: 1000B = 1000 B -> 13 cells of 80 B = 1040 B (40 B more" in out
    code, _, err = out_of(capsys, *aqm, "set", "max_th_cells=5", "max_th_bytes=800")
    assert code == 2 and "given twice" in err
    ok(capsys, "apply", str(EXAMPLE))
    out = ok(capsys, "set-threshold", "voice=2.5KiB", "bulk=7")
    assert "set-threshold voice: 2.5KiB = 2560 B -> 32 cells" in out
    got = classes(capsys)
    assert (got["voice"]["threshold_cells"], got["bulk"]["threshold_cells"]) == (32, 7)


# ---- front-panel names, the device port beside -----------------------------------------


def aqm_deployment(tmp_path: Path, *extra: dict[str, Any]) -> Path:
    ports = [{"port": "32/3", "speed": "25G"}, {"port": "13/0", "speed": "25G"}]
    leaf = {
        "name": "leaf1",
        "program": "aqm",
        "config": yaml.safe_load(AQM.read_text()),
        "front_panel": {"board": "tofino-32q", "ports": ports},
    }
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"targets": [leaf, *extra]}, sort_keys=False))
    return path


def test_status_and_queues_name_ports_as_the_box_does(tmp_path: Path, capsys: Capsys) -> None:
    deploy = aqm_deployment(tmp_path)
    board = load_board("tofino-32q")
    ok(capsys, "apply", str(deploy))
    rows = json.loads(ok(capsys, "status", "--config", str(deploy), "--json"))
    queues = {(r["port"], r["dev_port"]) for r in rows if r["section"] == "queues"}
    assert queues == {(board.name_of(3), 3), (board.name_of(4), 4)}
    assert all(r["switch"] == "leaf1" for r in rows)
    out = ok(capsys, "status", "--config", str(deploy))
    assert "dev port" in out and f"{board.name_of(3)}" in out
    rows = json.loads(ok(capsys, "--config", str(deploy), "queues", "--port", "32/3", "--json"))
    assert {(r["port"], r["dev_port"]) for r in rows if "queue" in r} == {("32/3", 3)}
    # A name without a board to read it by: exit 2, naming the option.
    code, _, err = out_of(capsys, "--program", "aqm", "queues", "--port", "32/3")
    assert code == 2 and "--port" in err


def test_without_a_board_the_port_is_the_device_port_and_dev_port_is_beside_it(
    capsys: Capsys,
) -> None:
    rows = json.loads(ok(capsys, "--program", "aqm", "status", "--json"))
    queues = [r for r in rows if r["section"] == "queues"]
    assert queues and all(r["port"] == r["dev_port"] for r in queues)


def test_status_of_a_deployment_shows_every_switch(tmp_path: Path, capsys: Capsys) -> None:
    pmqecn = {"name": "leaf2", "program": "pmqecn", "config": yaml.safe_load(EXAMPLE.read_text())}
    gone = {"name": "leaf3", "target": "grpc://127.0.0.1:1", "program": "pmqecn"}
    deploy = aqm_deployment(tmp_path, pmqecn, gone)
    code, out, err = out_of(capsys, "status", "--config", str(deploy), "--json")
    rows = json.loads(out)
    assert {r["switch"] for r in rows} == {"leaf1", "leaf2", "leaf3"}
    assert {r["section"] for r in rows if r["switch"] == "leaf2"} >= {"classes"}
    # The switch that cannot be read is said so, and the others are still shown.
    (bad,) = [r for r in rows if r["switch"] == "leaf3"]
    assert bad["section"] == "error" and "leaf3: " in err
    assert code in (4, 5)
    code, out, _ = out_of(capsys, "status", "--config", str(deploy))
    assert "leaf1: aqm on" in out and "leaf2: pmqecn on" in out
    # --switch: that one only, as before.
    rows = json.loads(ok(capsys, "--switch", "leaf2", "status", "--config", str(deploy), "--json"))
    assert {r.get("switch") for r in rows} == {"leaf2"}


# ---- --json on every command that prints -----------------------------------------------

# `run` is the daemon: its output is logfmt lines (and /metrics), not a result.
NO_JSON = {("run",)}


def test_every_command_that_prints_takes_json() -> None:
    missing = []
    for words in commands(cli):
        cmd = cli
        for w in words:
            assert isinstance(cmd, click.Group)
            sub = cmd.get_command(click.Context(cmd), w)
            assert sub is not None
            cmd = sub
        if isinstance(cmd, click.Group) or words in NO_JSON:
            continue
        if not any("--json" in p.opts for p in cmd.params if isinstance(p, click.Option)):
            missing.append(" ".join(words))
    assert missing == []


def test_json_is_one_document_on_stdout(tmp_path: Path, capsys: Capsys) -> None:
    def doc(*args: str) -> Any:
        code, out, err = out_of(capsys, *args, "--json")
        assert code == 0, err
        return json.loads(out)  # the whole of stdout, one document

    assert doc("apply", str(EXAMPLE))["writes"] > 0
    assert doc("check", "--config", str(EXAMPLE))["ok"] is True
    assert doc("set-weight", "bulk=3")["changes"][0]["class"] == "bulk"
    assert "changes" in doc("optimize", "--once")
    assert doc("checkpoint", "one")["checkpoint"] == "one"
    assert doc("checkpoint", "--list")["checkpoints"] == ["one"]
    assert doc("rollback", "one")["rolled_back_to"] == "one"
    assert doc("save", str(tmp_path / "saved.yaml"))["saved"] == str(tmp_path / "saved.yaml")
    assert doc("clear", "all")["cleared"] == "all"
    assert doc("apply", "--dry-run", str(EXAMPLE)) is not None
    assert (
        doc("--program", "p4qcn", "thresholds", "--port-speed", "100", "--cable-m", "10")[
            "q_pfc_cells"
        ]
        > 0
    )
    assert doc("--program", "aqm", "set", "max_p=0.1", "--queue", "3/0")["changes"]
    assert "changes" in doc("--program", "dadctcp", "reallocate")
    assert doc("deploy", "init", str(tmp_path / "etc"))["wrote"]
    # A command that failed prints no document: its error is on stderr.
    code, out, err = out_of(capsys, "rollback", "nope", "--json")
    assert code == 2 and out == "" and "nope" in err


def test_a_deployment_apply_in_json_lists_each_switchs_result(
    tmp_path: Path, capsys: Capsys
) -> None:
    gone = {"name": "leaf3", "target": "grpc://127.0.0.1:1", "program": "pmqecn"}
    deploy = aqm_deployment(tmp_path, gone)
    code, out, err = out_of(capsys, "apply", str(deploy), "--json")
    doc = json.loads(out)
    assert code in (4, 5) and doc["exit_code"] == code and "leaf3: " in err
    assert [s["switch"] for s in doc["switches"]] == ["leaf1", "leaf3"]
    assert doc["switches"][0]["writes"] > 0 and "error" in doc["switches"][1]


# ---- man page and shell completion -------------------------------------------------------


def test_deploy_init_writes_the_man_page_and_completions(tmp_path: Path, capsys: Capsys) -> None:
    ok(capsys, "deploy", "init", str(tmp_path))
    page = (tmp_path / "man" / "man1" / "tofcc.1").read_text()
    assert page.startswith(".TH TOFCC 1")
    for words in commands(cli):
        assert f".SS {' '.join(('tofcc', *words)).replace('-', chr(92) + '-')}" in page, words
    for name in ("tofcc.bash", "_tofcc", "tofcc.fish"):
        assert COMPLETE_VAR in (tmp_path / "completions" / name).read_text()


def test_the_completion_scripts_get_their_answers_from_tofcc(
    capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(COMPLETE_VAR, "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "tofcc sta")
    monkeypatch.setenv("COMP_CWORD", "1")
    code, out, _ = out_of(capsys)
    assert code == 0 and out.split() == ["plain,status"]
    assert os.environ[COMPLETE_VAR] == "bash_complete"


def test_set_takes_and_shows_a_queue_by_its_front_panel_name(
    tmp_path: Path, capsys: Capsys
) -> None:
    """`set --queue` reads a front-panel port (`32/3/0`: port 32/3, queue 0)
    where the board names it, and the changes table names the queue both
    ways; --json keeps the device key a script matches on."""
    board = load_board("tofino-32q")
    name = board.name_of(4)
    assert name is not None
    leaf = {
        "name": "leaf1",
        "program": "p4qcn",
        "config": yaml.safe_load((AQM.parent / "p4qcn.yaml").read_text()),
        "front_panel": {"board": "tofino-32q", "ports": [{"port": name, "speed": "25G"}]},
    }
    deploy = tmp_path / "fleet.yaml"
    deploy.write_text(yaml.safe_dump({"targets": [leaf]}, sort_keys=False))
    ok(capsys, "apply", str(deploy))
    out = ok(capsys, "--config", str(deploy), "set", "q_max_cells=300", "--queue", f"{name}/0")
    assert f"{name}/0 (dev 4/0)" in " ".join(out.split()), out
    doc = json.loads(
        ok(capsys, "--config", str(deploy), "set", "q_max_cells=310", "--queue", "4/0", "--json")
    )
    assert [c["queue"] for c in doc["changes"]] == ["4/0"]
    code, _, err = out_of(capsys, "--program", "p4qcn", "set", "q_max_cells=9", "--queue", "1/0/0")
    assert code == 2 and "--queue" in err


def test_aqm_set_takes_and_shows_a_front_panel_queue(tmp_path: Path, capsys: Capsys) -> None:
    deploy = aqm_deployment(tmp_path)
    ok(capsys, "apply", str(deploy))
    out = ok(capsys, "--config", str(deploy), "set", "max_p=0.2", "--queue", "32/3/0")
    assert "32/3/0 (dev 3/0)" in " ".join(out.split()), out
