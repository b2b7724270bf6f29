"""Scenario files: every bundled one is valid; a bad field is named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from models.net.scenario import (
    ScenarioError,
    bundled_scenarios,
    load_scenario,
    parse_rate,
    parse_scenario,
)

BASE: dict[str, Any] = {
    "name": "t",
    "duration_s": 1,
    "hosts": ["h1", "h2"],
    "switches": ["s1"],
    "links": [{"a": "h1", "b": "s1"}, {"a": "h2", "b": "s1"}],
    "flows": [{"name": "f", "src": "h1", "dst": "h2"}],
    "schemes": {"dcqcn": {}, "pmqecn": {}},
}


def with_change(path: str, value: object) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    node: Any = raw
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[int(p)] if p.isdigit() else node[p]
    last = parts[-1]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return raw


def test_every_bundled_scenario_is_valid() -> None:
    names = bundled_scenarios()
    assert {"pmqecn-s1", "pmqecn-s2", "bfcc-single", "bfcc-two-receivers", "bfcc-smoke"} <= set(
        names
    )
    for n in names:
        s = load_scenario(n)
        assert s.name == n, "a bundled scenario's name is its file name"


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("duration_s", 0, "duration_s"),
        ("link", {"rate": "fast"}, "link.rate"),
        ("flows.0.dst", "h9", "flows[0].dst"),
        ("flows.0.packet_bytes", 20, "flows[0].packet_bytes"),
        ("flows.0.load", 1.5, "flows[0].load"),
        ("schemes", {"dcqcn": {"kmin_packets": -1}}, "schemes.dcqcn.kmin_packets"),
        ("schemes", {"dcqcn": {"kmin_pakets": 3}}, "schemes.dcqcn.kmin_pakets"),
        ("schemes", {"p4qcn": {"qmin_packets": 20, "qmax_packets": 10}}, "schemes.p4qcn"),
        ("schemes", {}, "schemes"),
        ("links.1", {"a": "h2", "b": "s9"}, "links[1].b"),
        ("monitor", [{"switch": "s1", "toward": "h9"}], "monitor[0].toward"),
        ("colour", "blue", "colour"),
    ],
)
def test_bad_field_is_named(path: str, value: object, field: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(with_change(path, value), "x.yaml")
    assert exc.value.field == field
    assert str(exc.value).startswith(f"x.yaml: {field}")


def test_claim_must_name_enabled_schemes() -> None:
    raw = copy.deepcopy(BASE)
    raw["claims"] = [{"metric": "fct_mean_ms", "ours": "pmqecn", "paper": {"tcn": -10}}]
    with pytest.raises(ScenarioError, match=r"claims\[0\].*'tcn' is not in schemes"):
        parse_scenario(raw)


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(with_change("flows.0.src", "nobody")))
    with pytest.raises(ScenarioError) as exc:
        load_scenario(bad)
    assert exc.value.field == "flows[0].src"
    assert str(bad) in str(exc.value)
    with pytest.raises(ScenarioError, match="no such file or bundled scenario"):
        load_scenario("no-such-scenario")


def test_rates() -> None:
    assert parse_rate("10Mbps") == 10_000_000
    assert parse_rate("1.5Gbps") == 1_500_000_000
    assert parse_rate("100kbps") == 100_000
    with pytest.raises(ValueError):
        parse_rate("10 Mb/s")


def test_cli_check_names_the_bad_field_and_exits_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bfrt_controller.cli import cli

    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(with_change("flows.0.packet_bytes", 10)))
    result = CliRunner().invoke(cli, ["eval", "check", "pmqecn-s1", str(bad)])
    assert result.exit_code == 2
    assert "flows[0].packet_bytes" in result.output
    ok = CliRunner().invoke(cli, ["eval", "list"])
    assert ok.exit_code == 0 and "bfcc-single" in ok.output
