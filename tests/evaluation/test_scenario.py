# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Scenario files: every bundled one is valid; a bad field is named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaluation.scenario import (
    Dcqcn,
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


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("link", {"rate": "0bps"}, "link.rate"),
        ("link", {"rate": "0.5bps"}, "link.rate"),
        ("link", {"rate": "1.5bps"}, "link.rate"),
        ("link", {"delay_us": float("inf")}, "link.delay_us"),
        ("links.0", {"a": "h1", "b": "s1", "delay_us": float("inf")}, "links[0].delay_us"),
        ("links.0", {"a": "h1", "b": "s1", "rate": "0Mbps"}, "links[0].rate"),
        ("flows.0.stop_s", float("inf"), "flows[0].stop_s"),
        ("flows.0.start_s", float("nan"), "flows[0].start_s"),
        ("link_rates", ["10Mbps", "0kbps"], "link_rates[1]"),
        ("schemes", {"dcqcn": {"rai": "0bps"}}, "schemes.dcqcn.rai"),
    ],
)
def test_rates_that_send_nothing_and_infinite_times_are_refused(
    path: str, value: object, field: str, tmp_path: Path
) -> None:
    """Refused by `tofcc eval check`, naming the field, not at run time."""
    from click.testing import CliRunner

    from bfrt_controller.cli import cli

    with pytest.raises(ScenarioError) as exc:
        parse_scenario(with_change(path, value), "x.yaml")
    assert exc.value.field == field
    bad = tmp_path / "bad.yaml"
    # YAML spells infinity .inf and nan .nan; safe_dump writes them so.
    bad.write_text(yaml.safe_dump(with_change(path, value)))
    result = CliRunner().invoke(cli, ["eval", "check", str(bad)])
    assert result.exit_code == 2, result.output
    assert field in result.output


def test_rate_parsing_refuses_zero_and_fractions_of_a_bit() -> None:
    assert parse_rate("1bps") == 1
    assert parse_rate("0.5kbps") == 500
    for text in ("0bps", "0.5bps", "0.0001kbps"):
        with pytest.raises(ValueError, match="rate must"):
            parse_rate(text)


def test_every_bundled_scenario_runs_none_beside_its_schemes() -> None:
    for n in bundled_scenarios():
        s = load_scenario(n)
        assert "none" in s.schemes.enabled(), f"{n}: no `none` run to compare with"
        assert len(s.schemes.enabled()) >= 2, n


def test_variants_are_named_kinds_with_their_own_parameters() -> None:
    raw = copy.deepcopy(BASE)
    raw["schemes"] = {
        "dcqcn": None,  # YAML `dcqcn:` with nothing under it: the defaults
        "dcqcn-10ms": {"rate_timer_us": 10_000, "kmin_packets": 11, "kmax_packets": 11},
        "none": {},
        "pmqecn": {},
    }
    s = parse_scenario(raw)
    assert s.schemes.enabled() == ["pmqecn", "dcqcn", "dcqcn-10ms", "none"]
    d = s.schemes.get("dcqcn")
    assert isinstance(d, Dcqcn) and d.rate_timer_us == 55 and d.kmin_bytes == 5_000
    v = s.schemes.get("dcqcn-10ms")
    assert isinstance(v, Dcqcn) and v.rate_timer_us == 10_000 and v.kmin_packets == 11
    raw["claims"] = [{"metric": "fct_mean_ms", "ours": "pmqecn", "paper": {"dcqcn-10ms": -10}}]
    assert parse_scenario(raw).claims[0].paper == {"dcqcn-10ms": -10}


@pytest.mark.parametrize(
    ("schemes", "field"),
    [
        ({"dcqcn-10ms": {"rate_timer_us": 0}}, "schemes.dcqcn-10ms.rate_timer_us"),
        ({"dcqcn-x": {"kmin_pakets": 3}}, "schemes.dcqcn-x.kmin_pakets"),
        ({"blue-10ms": {}}, "schemes.blue-10ms"),
        ({"dcqcn": {"kmin_packets": 11}}, "schemes.dcqcn"),
        ({"dcqcn": {"kmin_packets": 11, "kmax_packets": 11, "kmin_bytes": 1}}, "schemes.dcqcn"),
    ],
)
def test_bad_variant_or_threshold_is_named(schemes: dict[str, Any], field: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario(with_change("schemes", schemes), "x.yaml")
    assert exc.value.field == field


def test_extends_takes_the_named_scenario_and_replaces_given_fields(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump(BASE))
    child = tmp_path / "child.yaml"
    child.write_text(yaml.safe_dump({"extends": "base.yaml", "name": "c", "buffer_packets": 64}))
    s = load_scenario(child)
    assert (s.name, s.buffer_packets, s.hosts) == ("c", 64, ["h1", "h2"])
    loop = tmp_path / "loop.yaml"
    loop.write_text(yaml.safe_dump({"extends": "loop.yaml", "name": "l"}))
    with pytest.raises(ScenarioError, match="extends itself") as exc:
        load_scenario(loop)
    assert exc.value.field == "extends"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"extends": "base.yaml", "name": "b", "buffer_packets": 0}))
    with pytest.raises(ScenarioError) as exc:
        load_scenario(bad)
    assert exc.value.field == "buffer_packets" and str(bad) in str(exc.value)


def test_bfcc_scenarios_use_the_papers_packets_unless_data_centre() -> None:
    """Seed 001's runs used 128-byte packets, so its 15-packet threshold is
    about 2 kB: every bundled BFCC scenario that stands for the paper sends
    128 B (the harness gives BFCC the flows' size, so its threshold is 15 x 2
    Tofino cells), and the data-centre ones (`-dc`) name their own size."""
    from evaluation.schemes import switch_setup
    from evaluation.topology import Topology
    from hw_profiles import load_profile

    for name in bundled_scenarios():
        s = load_scenario(name)
        if not any(k == "bfcc" or k.startswith("bfcc-") for k in s.schemes.enabled()):
            continue
        sizes = {f.packet_bytes for f in s.flows}
        if "-dc" in name:
            assert sizes and min(sizes) > 128, name
        else:
            assert sizes == {128}, name
    s = load_scenario("bfcc-single")
    topo = Topology(s)
    setup = switch_setup(topo, "s3", "bfcc", load_profile(s.chip), 1)
    model = setup.pipeline.program  # type: ignore[attr-defined]
    thresholds = {
        e.data["congestion_threshold_cells"]
        for e in model.table("SwitchEgress.congestion_point").entries
    }
    assert thresholds == {30}
