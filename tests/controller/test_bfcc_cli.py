# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc --program bfcc end to end on the model target: status, set, apply,
nothing written on bad input, state kept between invocations."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bfrt_controller.bfcc.config import DEFAULT_CONFIG
from bfrt_controller.cli import cli
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG as PMQECN_DEFAULT


def run(tmp_path: Path, *args: str, program: str = "bfcc") -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["--state", str(tmp_path / "state.yaml"), "--program", program, *args]
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def status(tmp_path: Path, section: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(
        cli, ["--state", str(tmp_path / "state.yaml"), "--program", "bfcc", "status", "--json"]
    )
    assert result.exit_code == 0, result.output
    # The JSON is stdout alone: warnings (a saturated T_max) go to stderr.
    return [r for r in json.loads(result.stdout) if r["section"] == section]


def congestion_point(tmp_path: Path) -> dict[str, object]:
    (row,) = status(tmp_path, "congestion points")
    return row


def test_status_json_shows_the_default(tmp_path: Path) -> None:
    cp = congestion_point(tmp_path)
    # 15 packets of the paper's 128 B are 15 x 2 Tofino cells; its 80/150 ms at
    # 10 Mb/s are 80/150 us at this 10 Gb/s port.
    assert (cp["port"], cp["threshold_packets"], cp["threshold_cells"]) == (2, 15, 30)
    assert (cp["t_min_ns"], cp["t_max_ns"], cp["saturated"]) == (80000, 150000, "-")
    assert [r["rt_packets"] for r in status(tmp_path, "rate thresholds")] == [9, 3, 1]


def test_status_tables_are_readable(tmp_path: Path) -> None:
    code, out = run(tmp_path, "status")
    assert code == 0, out
    for words in ("congestion points", "reaction points", "rate thresholds", "groups", "ports"):
        assert words in out
    assert "T_max ns" in out and "recirc" in out and "skips" in out and "forged drops" in out


def test_set_persists_on_the_model_target(tmp_path: Path) -> None:
    code, out = run(tmp_path, "set", "t_min_us=90000", "rt1_packets=7", "expiry_ns=6000000")
    assert code == 0, out
    assert "t_min_us" in out and "rt1_packets" in out
    assert congestion_point(tmp_path)["t_min_ns"] == 90000
    assert [r["rt_packets"] for r in status(tmp_path, "rate thresholds")] == [7, 3, 1]
    (rp,) = status(tmp_path, "reaction points")
    assert rp["expiry_ns"] == 6000000
    code, out = run(tmp_path, "set", "rt1_packets=7")
    assert "nothing changed" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("t_min_us=95000", "t_max_us=90000"), r"t_min_us: t_min_us \(95000\) must be below"),
        (("t_max_us=80000",), r"t_max_us: t_min_us \(85000\) must be below t_max_us \(80000\)"),
        (("t_min_us=95000", "rt1_packets=0"), "rt1_packets: Input should be greater than"),
        (("threshold_packets=lots",), "threshold_packets: expected an integer, got 'lots'"),
        (("threshold_packets=200000",), "threshold_packets: 200000 packets of 128 B .* in packets"),
        # The chip's units are refused before anything is opened, naming the field.
        (("threshold_cells=285",), "threshold_cells: wrong unit: set threshold_packets instead"),
        (("t_min_ns=80000",), "t_min_ns: wrong unit: set t_min_us instead"),
        (("t_max_ns=150000",), "t_max_ns: wrong unit: set t_max_us instead"),
        (("colour=3",), "colour: unknown parameter"),
        (("sender_reaction=maybe",), "sender_reaction: Input should be 'none' or 'match_switch'"),
        (("sender_reaction=",), "sender_reaction: Input should be 'none' or 'match_switch'"),
        (("reduction=pause",), "reduction: Input should be 'fakes' or 'shaping'"),
        (("reduction=3",), "reduction: Input should be 'fakes' or 'shaping'"),
        (("t_min_us",), "set: expected NAME=VALUE"),
    ],
)
def test_bad_set_names_the_field_and_writes_nothing(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    run(tmp_path, "set", "t_min_us=85000")
    with pytest.raises(Exception, match=message):
        run(tmp_path, "set", *args)
    assert congestion_point(tmp_path)["t_min_ns"] == 85000
    assert [r["rt_packets"] for r in status(tmp_path, "rate thresholds")] == [9, 3, 1]


def test_commands_refuse_the_other_program(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"--program: `set` is for bfcc, .*not pmqecn"):
        run(tmp_path, "set", "rt1_packets=3", program="pmqecn")
    with pytest.raises(Exception, match="--program: this command is for pmqecn, not bfcc"):
        run(tmp_path, "set-threshold", "voice=3")


def test_apply_validates_whole_file_first(tmp_path: Path) -> None:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["params"]["threshold_packets"] = 30
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(raw))
    code, out = run(tmp_path, "apply", str(good))
    assert code == 0, out
    assert "(bfcc)" in out
    assert congestion_point(tmp_path)["threshold_cells"] == 30 * 2

    raw["params"]["threshold_packets"] = 31
    raw["groups"][2]["upstream_port"] = 9
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw))
    with pytest.raises(Exception, match=r"groups\[2\].upstream_port"):
        run(tmp_path, "apply", str(bad))
    assert congestion_point(tmp_path)["threshold_cells"] == 30 * 2
    with pytest.raises(Exception, match="program: Input should be 'bfcc'"):
        run(tmp_path, "apply", str(PMQECN_DEFAULT))
    assert congestion_point(tmp_path)["threshold_cells"] == 30 * 2


def test_set_after_apply_keeps_the_applied_config(tmp_path: Path) -> None:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["congestion_points"].append({"port": 4})
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(raw))
    run(tmp_path, "apply", str(path))
    run(tmp_path, "set", "window_packets=50")
    rows = status(tmp_path, "congestion points")
    assert [(r["port"], r["cp_id"], r["window_packets"]) for r in rows] == [
        (2, 0, 50),
        (4, 1, 50),
    ]
    # Port 4 has no rate_mbps: the paper's values as they are, which an
    # 18-bit deq_timedelta cannot measure, and the status says so.
    assert [(r["t_max_ns"], r["saturated"]) for r in rows] == [
        (150_000, "-"),
        (262_143, "t_min, t_max"),
    ]


def test_main_maps_errors_to_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bfrt_controller import cli as cli_module

    def exit_code(*args: str) -> int:
        argv = ["tofcc", "--state", str(tmp_path / "s.yaml"), "--program", "bfcc", *args]
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as exc:
            cli_module.main()
        return int(exc.value.code or 0)

    assert exit_code("set", "rt2=0") == 2
    assert exit_code("set", "nope=1") == 2
    assert exit_code("--target", "grpc://nohost", "set", "rt2=2") == 2


def test_set_takes_a_choice_as_a_word(tmp_path: Path) -> None:
    code, out = run(tmp_path, "set", "sender_reaction=match_switch")
    assert code == 0, out
    assert "sender_reaction" in out and "match_switch" in out
    code, out = run(tmp_path, "set", "sender_reaction=match_switch")
    assert "nothing changed" in out


def test_shape_runs_the_shaping_cycle_once_reduction_is_shaping(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="reduction: is fakes: set reduction=shaping first"):
        run(tmp_path, "shape")
    code, out = run(tmp_path, "set", "reduction=shaping")
    assert code == 0, out
    # No backpressure recorded on the model target: nothing to shape.
    code, out = run(tmp_path, "shape")
    assert code == 0 and "nothing changed" in out, out
    with pytest.raises(Exception, match="--count: counts --interval cycles"):
        run(tmp_path, "shape", "--count", "2")
    (rt,) = [r for r in status(tmp_path, "rate thresholds") if r["degree"] == 1]
    assert rt["rt_packets"] is None  # no fakes under shaping
