# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC config validation: every bad field is named, chip limits follow the profile."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.config import (
    DEFAULT_CONFIG,
    Params,
    load_config,
    param_warnings,
    parse_config,
    recirculation_level_cells,
    recirculation_loads,
    recirculation_ports,
    recirculation_sessions,
    refresh_mask,
    refresh_period_ns,
    saturation_reports,
    sojourn_thresholds,
    threshold_cells,
)
from bfrt_controller.common import pipe_of
from bfrt_controller.errors import ConfigError
from doubles.configs import bfcc_on_tofino2 as on_tofino2
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile

RAW: dict[str, Any] = yaml.safe_load(DEFAULT_CONFIG.read_text())


def _err(mutate: Any, raw: dict[str, Any] | None = None) -> ConfigError:
    raw = copy.deepcopy(RAW if raw is None else raw)
    mutate(raw)
    with pytest.raises(ConfigError) as exc:
        parse_config(raw, "cfg.yaml")
    return exc.value


def test_default_config_is_valid() -> None:
    cfg = load_config(DEFAULT_CONFIG)
    assert [cp.port for cp in cfg.congestion_points] == [2]
    assert [rp.port for rp in cfg.reaction_points] == [3]
    assert (cfg.params.rt1_packets, cfg.params.rt2_packets, cfg.params.rt3_packets) == (9, 3, 1)
    assert param_warnings(cfg.params) == []
    assert saturation_reports(cfg, cfg.params, load_profile(cfg.chip)) == []


def test_rate_thresholds_default_to_the_paper() -> None:
    p = Params(threshold_packets=15, t_min_us=80000, t_max_us=150000)
    assert p.rate_thresholds() == {1: 9, 2: 3, 3: 1}
    assert (p.window_packets, p.refresh_ns, p.expiry_ns) == (100, 0, 0)
    assert (p.packet_bytes, p.reference_rate_mbps, p.named_group_only) == (128, 10, 0)


def _cps(n: int) -> Any:
    return lambda r: r.update(congestion_points=[{"port": p} for p in range(8, 8 + n)])


BAD: list[tuple[Any, str, str]] = [
    # params: widths, relations, chip limits
    (lambda r: r["params"].update(t_min_us=150000), "params.t_min_us", "must be below t_max_us"),
    (lambda r: r["params"].update(t_max_us=80000), "params.t_min_us", "must be below t_max_us"),
    (lambda r: r["params"].update(t_max_us=1 << 32), "params.t_max_us", "less than or equal"),
    (lambda r: r["params"].update(t_min_us=-1), "params.t_min_us", "greater than or equal"),
    # 2 cells a 128 B packet on Tofino: more packets than the buffer holds.
    (
        lambda r: r["params"].update(threshold_packets=286720 // 2 + 1),
        "params.threshold_packets",
        "is it in packets?",
    ),
    (lambda r: r["params"].update(threshold_packets=0), "params.threshold_packets", ""),
    (lambda r: r["params"].update(packet_bytes=20), "params.packet_bytes", ""),
    (lambda r: r["params"].update(reference_rate_mbps=0), "params.reference_rate_mbps", ""),
    # The chip's units, refused with the field to use instead.
    (
        lambda r: r["params"].update(threshold_cells=285),
        "params.threshold_cells",
        "wrong unit: set threshold_packets",
    ),
    (lambda r: r["params"].update(t_min_ns=80000), "params.t_min_ns", "set t_min_us"),
    (lambda r: r["params"].update(t_max_ns=150000), "params.t_max_ns", "set t_max_us"),
    (lambda r: r["params"].update(rt1_packets=0), "params.rt1_packets", "greater than or equal"),
    (lambda r: r["params"].update(rt3_packets=256), "params.rt3_packets", "less than or equal"),
    (lambda r: r["params"].update(window_packets=0), "params.window_packets", ""),
    (lambda r: r["params"].update(window_packets=256), "params.window_packets", ""),
    (lambda r: r["params"].update(refresh_ns=1 << 32), "params.refresh_ns", "less than"),
    (
        lambda r: r["params"].update(refresh_ns=400_000),
        "params.refresh_ns",
        "shortest refresh period",
    ),
    (lambda r: r["params"].update(expiry_ns=1 << 32), "params.expiry_ns", ""),
    (lambda r: r["params"].update(named_group_only=2), "params.named_group_only", ""),
    (lambda r: r["params"].update(rt1_packets="lots"), "params.rt1_packets", "integer"),
    (lambda r: r["params"].update(colour=1), "params.colour", "unknown field"),
    (lambda r: r["params"].pop("threshold_packets"), "params.threshold_packets", "required"),
    (lambda r: r["congestion_points"][0].update(rate_mbps=0), "congestion_points[0].rate_mbps", ""),
    (lambda r: r.pop("params"), "cfg.yaml: params", "required"),
    # groups
    (lambda r: r["groups"][1].update(id=1), "groups[1].id", "repeats groups[0].id"),
    (lambda r: r["groups"][0].update(id=0), "groups[0].id", ""),
    (lambda r: r["groups"][0].update(id=256), "groups[0].id", ""),
    (
        lambda r: r["groups"][0].update(senders=["10.0.1.1/24"]),
        "groups[0].senders[0]",
        "host bits",
    ),
    (lambda r: r["groups"][0].update(senders=[]), "groups[0].senders", "at least 1"),
    (
        lambda r: r["groups"][2]["senders"].append("10.0.1.1"),
        "groups[2].senders[1]",
        "already in groups[0].senders[0]",
    ),
    (
        lambda r: r["groups"][1].update(upstream_port=7),
        "groups[1].upstream_port",
        "not in upstream_ports",
    ),
    # upstream ports
    (
        lambda r: r["upstream_ports"][0].update(mirror_session=1016),
        "upstream_ports[0].mirror_session",
        "outside 1..1015",
    ),
    (lambda r: r["upstream_ports"][0].update(src_mac="02:00"), "upstream_ports[0].src_mac", ""),
    (
        lambda r: r["upstream_ports"][0].update(port=68),
        "upstream_ports[0].port",
        "recirculation port of pipe 0",
    ),
    (
        lambda r: r["upstream_ports"].append(dict(r["upstream_ports"][0], mirror_session=12)),
        "upstream_ports[1].port",
        "repeats upstream_ports[0].port",
    ),
    (
        lambda r: r["upstream_ports"].append(dict(r["upstream_ports"][0], port=5)),
        "upstream_ports[1].mirror_session",
        "repeats",
    ),
    # congestion points
    (_cps(17), "congestion_points", "at most 16"),
    (
        lambda r: r["congestion_points"].append({"port": 2}),
        "congestion_points[1].port",
        "repeats",
    ),
    (
        lambda r: r["congestion_points"][0].update(port=600),
        "congestion_points[0].port",
        "exceeds",
    ),
    (
        lambda r: r["congestion_points"][0].update(port=100),
        "congestion_points[0].port",
        "does not exist",
    ),
    (
        lambda r: r["congestion_points"][0].update(cp_id=3),
        "congestion_points[0].cp_id",
        "unknown field",
    ),
    # reaction points and recirculation
    (
        lambda r: r["reaction_points"][0].update(high_qid=40),
        "reaction_points[0].high_qid",
        "max queue id 31",
    ),
    (
        lambda r: r["reaction_points"][0].update(low_qid=2),
        "reaction_points[0].low_qid",
        "must differ",
    ),
    (
        lambda r: r["reaction_points"][0].update(port=4),
        "reaction_points[0].port",
        "not in trusted_ports",
    ),
    (
        # Pipe 1 takes the next session, which is the upstream port's.
        lambda r: (
            r["trusted_ports"].append(130),
            r["reaction_points"].append({"port": 130, "high_qid": 2, "low_qid": 1}),
            r.update(recirculation_session=10),
        ),
        "recirculation_session",
        "session 11 (recirculation_session + 1) is upstream_ports[0].mirror_session",
    ),
    (
        lambda r: (
            r["trusted_ports"].append(130),
            r["reaction_points"].append({"port": 130, "high_qid": 2, "low_qid": 1}),
            r.update(recirculation_session=1015),
        ),
        "recirculation_session",
        "pipe 1's recirculation, is outside",
    ),
    (
        lambda r: r["params"].update(recirculation_level_bytes=10**9),
        "params.recirculation_level_bytes",
        "can never exceed",
    ),
    (
        lambda r: r["reaction_points"].append(r["reaction_points"][0]),
        "reaction_points[1].port",
        "repeats",
    ),
    (lambda r: r.pop("recirculation_session"), "recirculation_session", "required when"),
    (
        lambda r: r.update(recirculation_session=11),
        "recirculation_session",
        "upstream_ports[0].mirror_session",
    ),
    (lambda r: r.update(recirculation_session=0), "recirculation_session", ""),
    (lambda r: r.update(recirculation_port=68), "recirculation_port", "unknown field"),
    # shared sections
    (lambda r: r["trusted_ports"].append(1), "trusted_ports[2]", "repeats trusted_ports[0]"),
    (lambda r: r["trusted_ports"].append(600), "trusted_ports[2]", "exceeds"),
    (lambda r: r["routes"][0].update(prefix="10.0.1.1/24"), "routes[0].prefix", "host bits"),
    (lambda r: r.update(chip="tofino3"), "chip", ""),
    (lambda r: r.update(program="pmqecn"), "program", "'bfcc'"),
]


@pytest.mark.parametrize(
    ("mutate", "field", "words"), BAD, ids=[b[1] + "-" + str(i) for i, b in enumerate(BAD)]
)
def test_bad_config_names_the_field(mutate: Any, field: str, words: str) -> None:
    err = _err(mutate)
    assert field in str(err), str(err)
    assert words in str(err), str(err)


@pytest.mark.parametrize(
    ("rate_mbps", "t_min_ns", "t_max_ns"),
    [
        (10, 80_000_000, 150_000_000),  # the paper's own links: its values exactly
        (10_000, 80_000, 150_000),  # same queued bytes at 10 Gb/s
        (100_000, 8_000, 15_000),
        (25_000, 32_000, 60_000),
        (3, 266_666_666, 500_000_000),  # slower than the paper: longer, floor
    ],
)
def test_sojourn_thresholds_keep_the_queued_bytes(
    rate_mbps: int, t_min_ns: int, t_max_ns: int
) -> None:
    p = Params(threshold_packets=15, t_min_us=80_000, t_max_us=150_000)
    t = sojourn_thresholds(p, rate_mbps, load_profile("tofino2"))
    assert (t.t_min_ns, t.t_max_ns) == (t_min_ns, t_max_ns)
    assert (t.written_t_min_ns, t.written_t_max_ns) == (t_min_ns, t_max_ns)
    assert t.saturated == ()


def test_saturation_on_tofino_is_reported_not_hidden() -> None:
    # The paper's 80/150 ms on a 10 Mb/s port cannot be measured by an 18-bit
    # deq_timedelta (262143 ns): written as the limit, and reported.
    raw = copy.deepcopy(RAW)
    raw["congestion_points"] = [{"port": 2, "rate_mbps": 10}, {"port": 4, "rate_mbps": 1000}]
    cfg = parse_config(raw)
    profile = load_profile("tofino")
    t = sojourn_thresholds(cfg.params, 10, profile)
    assert (t.written_t_min_ns, t.written_t_max_ns) == (262143, 262143)
    assert t.saturated == ("t_min", "t_max")
    # 1 Gb/s: T_min 800 us, T_max 1.5 ms: both beyond Tofino's range too.
    reports = saturation_reports(cfg, cfg.params, profile)
    assert len(reports) == 2
    assert "congestion_points[0] (port 2, 10 Mb/s)" in reports[0]
    assert "degrees 2 and 3 are never reported" in reports[0]
    # 100 Gb/s: 8 us and 15 us, well inside.
    raw["congestion_points"] = [{"port": 2, "rate_mbps": 100_000}]
    cfg = parse_config(raw)
    assert saturation_reports(cfg, cfg.params, profile) == []
    # Tofino2's 32-bit deq_timedelta (the P4 tests bit 31) holds 150 ms.
    on_tofino2(raw)
    raw["congestion_points"] = [{"port": 10, "rate_mbps": 10}]
    cfg = parse_config(raw)
    assert saturation_reports(cfg, cfg.params, load_profile("tofino2")) == []


def test_only_t_max_saturating_loses_only_severe() -> None:
    raw = copy.deepcopy(RAW)
    # 5 Gb/s: T_min 160 us fits Tofino's 262 us, T_max 300 us does not.
    raw["congestion_points"] = [{"port": 2, "rate_mbps": 5000}]
    cfg = parse_config(raw)
    (report,) = saturation_reports(cfg, cfg.params, load_profile("tofino"))
    assert "degree 3 is never reported" in report


@pytest.mark.parametrize(
    ("chip", "packet_bytes", "cells"),
    [("tofino", 1500, 15 * 19), ("tofino2", 1500, 15 * 9), ("tofino", 80, 15), ("tofino", 81, 30)],
)
def test_threshold_packets_become_cells_of_the_chip(
    chip: str, packet_bytes: int, cells: int
) -> None:
    p = Params(threshold_packets=15, packet_bytes=packet_bytes, t_min_us=1, t_max_us=2)
    assert threshold_cells(p, load_profile(chip)) == cells


@pytest.mark.parametrize(
    ("refresh_ns", "period_ns", "mask"),
    [
        (0, 0, 0),
        (1 << 19, 1 << 19, 0x1F80000),
        (1_000_000, 1 << 19, 0x1F80000),
        (1 << 20, 1 << 20, 0x1F00000),
        (10_000_000, 1 << 23, 0x1800000),
        (1 << 30, 1 << 24, 0x1000000),
    ],
)
def test_refresh_rounds_down_to_an_epoch(refresh_ns: int, period_ns: int, mask: int) -> None:
    p = Params(threshold_packets=15, t_min_us=1, t_max_us=2, refresh_ns=refresh_ns)
    assert refresh_period_ns(p) == period_ns
    assert refresh_mask(p) == mask


def test_mirror_session_range_follows_the_chip() -> None:
    raw = copy.deepcopy(RAW)
    raw["upstream_ports"][0]["mirror_session"] = 300
    parse_config(raw)  # fine on Tofino (10-bit ids)
    on_tofino2(raw)
    with pytest.raises(ConfigError, match=r"upstream_ports\[0\].mirror_session.*1..255 on tofino2"):
        parse_config(raw)


def test_queue_ids_follow_the_chip() -> None:
    raw = copy.deepcopy(RAW)
    raw["reaction_points"][0]["high_qid"] = 100
    with pytest.raises(ConfigError, match=r"reaction_points\[0\].high_qid"):
        parse_config(raw)
    on_tofino2(raw)  # 7-bit queue ids
    parse_config(raw)


@pytest.mark.parametrize(
    ("chip", "port", "recirc"),
    [("tofino", 3, 68), ("tofino", 130, 196), ("tofino2", 11, 6), ("tofino2", 300, 262)],
)
def test_recirculation_port_is_the_reaction_points_pipe(chip: str, port: int, recirc: int) -> None:
    raw = copy.deepcopy(RAW)
    if chip == "tofino2":
        on_tofino2(raw)
    # Ports 1 and 3 stay trusted: port 3's route would otherwise make it an
    # unbound host port.
    raw["trusted_ports"] = sorted({*raw["trusted_ports"], port})
    raw["reaction_points"][0]["port"] = port
    cfg = parse_config(raw)
    profile = load_profile(chip)
    assert recirculation_ports(cfg, profile)[pipe_of(port, profile)] == recirc


def test_multipipe_bfcc_every_pipe_the_config_uses_gets_the_next_session() -> None:
    """Reaction points in pipes 0 and 2, a host port in pipe 1: sessions
    20, 21, 22 to the recirculation ports of pipes 0, 1, 2 (backpressure
    goes round all three; fakes recirculate in 0 and 2)."""
    raw = copy.deepcopy(RAW)
    raw["routes"].append(
        {
            "prefix": "10.0.9.0/24",
            "port": 129,
            "src_mac": "02:00:00:00:00:09",
            "dst_mac": "00:00:00:00:09:09",
        }
    )
    raw["source_bindings"].append({"port": 129, "prefixes": ["10.0.9.0/24"]})
    _reaction_ports(raw, [3, 260])
    cfg = parse_config(raw)
    profile = load_profile("tofino")
    assert recirculation_sessions(cfg, profile) == {0: 20, 1: 21, 2: 22}
    assert recirculation_ports(cfg, profile) == {0: 68, 1: 196, 2: 324}


def test_recirculation_level_is_whole_cells_below_the_bytes() -> None:
    p = Params(threshold_packets=15, t_min_us=1, t_max_us=2, recirculation_level_bytes=8079)
    assert recirculation_level_cells(p, load_profile("tofino")) == 100  # 80 B cells
    assert recirculation_level_cells(p, load_profile("tofino2")) == 45  # 176 B cells


def test_no_reaction_points_need_no_recirculation() -> None:
    raw = copy.deepcopy(RAW)
    raw["reaction_points"] = []
    raw.pop("recirculation_session")
    cfg = parse_config(raw)
    assert recirculation_ports(cfg, load_profile("tofino")) == {}


def test_dubious_but_legal_params_warn() -> None:
    base: dict[str, Any] = {"threshold_packets": 15, "t_min_us": 1, "t_max_us": 2}
    warn = param_warnings(Params(**base, rt1_packets=1, rt3_packets=5))
    assert "rt1_packets >= rt2_packets >= rt3_packets" in warn[0]
    assert "never renewed" in param_warnings(Params(**base, expiry_ns=10))[0]
    # refresh_ns 1 ms repeats every 524 us: below a 600 us expiry, above a 500 us one.
    assert (
        "below expiry_ns"
        in param_warnings(Params(**base, expiry_ns=500_000, refresh_ns=1_000_000))[0]
    )
    assert param_warnings(Params(**base, expiry_ns=600_000, refresh_ns=1_000_000)) == []


@pytest.mark.parametrize(
    ("mutate", "field", "words"),
    [
        (lambda r: r["routes"][0].update(port=68), "routes[0].port", "recirculation port"),
        (lambda r: r["routes"][0].update(port=65), "routes[0].port", "CPU Ethernet"),
        (lambda r: r["routes"][0].update(port=100), "routes[0].port", "does not exist"),
        (
            lambda r: r["routes"].append(dict(r["routes"][0], port=5)),
            "routes[4].prefix",
            "repeats routes[0].prefix",
        ),
        (lambda r: r["params"].update(threshold_packets=True), "params.threshold_packets", ""),
        (lambda r: r["params"].update(t_max_us=1.5e5), "params.t_max_us", ""),
    ],
)
def test_routes_and_types_as_strict_as_pmqecn(mutate: Any, field: str, words: str) -> None:
    raw = copy.deepcopy(RAW)
    mutate(raw)
    with pytest.raises(ConfigError) as exc:
        parse_config(raw)
    assert field in str(exc.value) and words in str(exc.value), str(exc.value)


@pytest.mark.parametrize(
    ("section", "port"),
    [("congestion_points", 64), ("reaction_points", 66), ("upstream_ports", 65)],
)
def test_switch_facing_ports_are_not_cpu_ports(section: str, port: int) -> None:
    raw = copy.deepcopy(RAW)
    raw[section][0]["port"] = port
    raw["trusted_ports"].append(port)
    with pytest.raises(
        ConfigError, match=rf"{section}\[0\].port: port {port} is one of tofino's CPU"
    ):
        parse_config(raw)


def test_default_threshold_is_the_papers_15_packets_of_128_bytes() -> None:
    """Seed 001 ran 128-byte packets: its 15-packet threshold is about 2 kB
    of queue. The config's default and the embedded default config keep
    that (30 Tofino cells, 2.4 kB; 15 Tofino2 cells); 1500-byte packets made
    it 285 cells, 22.8 kB, a threshold ten times the paper's."""
    assert Params(threshold_packets=15, t_min_us=1, t_max_us=2).packet_bytes == 128
    cfg = load_config(DEFAULT_CONFIG)
    assert cfg.params.packet_bytes == 128
    assert threshold_cells(cfg.params, load_profile("tofino")) == 30
    assert threshold_cells(cfg.params, load_profile("tofino2")) == 15


# ---- the recirculation budget (issue 50, deliver 3) ------------------------


def _reaction_ports(raw: dict[str, Any], ports: list[int], rate_mbps: int | None = None) -> None:
    """`ports` (trusted, switch-facing) as the reaction points."""
    raw["trusted_ports"] = sorted({*raw["trusted_ports"], *ports})
    raw["reaction_points"] = [
        {"port": p, "high_qid": 2, "low_qid": 1}
        | ({} if rate_mbps is None else {"rate_mbps": rate_mbps})
        for p in ports
    ]


def _budget_raw(ports: list[int], rate_mbps: int | None = 100_000, **params: Any) -> dict[str, Any]:
    raw = copy.deepcopy(RAW)
    _reaction_ports(raw, ports, rate_mbps)
    raw["params"].update(params)
    return raw


def test_multipipe_bfcc_budget_two_severe_100g_ports_fill_the_recirculation_port() -> None:
    """Severe (RT 1) recirculates half a port's rate: two 100G reaction
    ports need the pipe's whole 100G recirculation port, which is allowed."""
    cfg = parse_config(_budget_raw([3, 5]))
    (load,) = recirculation_loads(cfg, cfg.params, load_profile("tofino"))
    assert (load.pipe, load.port, load.load_gbps, load.capacity_gbps) == (0, 68, 100.0, 100.0)
    assert not load.over


def test_multipipe_bfcc_budget_three_severe_100g_ports_refused() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(_budget_raw([3, 5, 6]), "cfg.yaml")
    msg = str(exc.value)
    assert msg.startswith("cfg.yaml: reaction_points[2].port: ")
    assert "pipe 0" in msg and "port 68" in msg and "150 Gb/s against its 100 Gb/s" in msg


@pytest.mark.parametrize(("ports", "ok"), [(10, True), (11, False)])
def test_multipipe_bfcc_budget_mild_alone_fills_it_at_ten_ports(ports: int, ok: bool) -> None:
    """With RT 9 at every degree (mild's 1/10), ten 100G ports fill the
    recirculation port and an eleventh is refused."""
    raw = _budget_raw([3, *range(5, 5 + ports - 1)], rt1_packets=9, rt2_packets=9, rt3_packets=9)
    if ok:
        parse_config(raw)
        return
    with pytest.raises(ConfigError, match=r"reaction_points\[10\].port: pipe 0.*110 Gb/s"):
        parse_config(raw)


def test_multipipe_bfcc_budget_is_per_pipe_three_severe_100g_ports_over_two_pipes() -> None:
    """Each pipe's reaction points recirculate through their own pipe's
    port: two severe 100G ports in pipe 0 (100G) and one in pipe 1 (50G)
    are within budget; a third in pipe 0 is refused naming pipe 0."""
    cfg = parse_config(_budget_raw([3, 5, 130]))
    loads = recirculation_loads(cfg, cfg.params, load_profile("tofino"))
    assert [(x.pipe, x.port, x.load_gbps) for x in loads] == [(0, 68, 100.0), (1, 196, 50.0)]
    with pytest.raises(ConfigError, match=r"reaction_points\[3\].port: pipe 0's .* 150 Gb/s"):
        parse_config(_budget_raw([3, 5, 130, 6]))


def test_multipipe_bfcc_budget_counts_each_ports_rate() -> None:
    """Four 25G ports at severe recirculate 50G; the same ports without a
    rate_mbps count as the chip's fastest (100G): 200G, refused."""
    cfg = parse_config(_budget_raw([3, 5, 6, 7], rate_mbps=25_000))
    (load,) = recirculation_loads(cfg, cfg.params, load_profile("tofino"))
    assert load.load_gbps == 50.0
    with pytest.raises(ConfigError, match="200 Gb/s"):
        parse_config(_budget_raw([3, 5, 6, 7], rate_mbps=None))


def test_multipipe_bfcc_budget_shaping_recirculates_nothing() -> None:
    """reduction: shaping cuts the port in the TM: no fakes, no budget."""
    ports = [3, *range(5, 20)]
    cfg = parse_config(_budget_raw(ports, reduction="shaping"))
    assert recirculation_loads(cfg, cfg.params, load_profile("tofino")) == []


def test_multipipe_bfcc_budget_names_the_reaction_points_pipe_on_tofino2() -> None:
    """Reaction points in Tofino2's pipe 2 recirculate through its port 262."""
    raw = copy.deepcopy(RAW)
    on_tofino2(raw)
    _reaction_ports(raw, [264, 265, 266], 400_000)
    with pytest.raises(ConfigError, match=r"pipe 2's recirculation port 262 .* 600 Gb/s"):
        parse_config(raw)


def test_multipipe_bfcc_budget_set_that_lowers_rt_is_refused_and_writes_nothing() -> None:
    """Three 100G ports fit at RT 3 (75G); `set rt3_packets=1` would make it
    150G: refused naming the parameter, nothing written."""
    cfg = parse_config(_budget_raw([3, 5, 6], rt3_packets=3))
    switch = FlakyModelSwitch("bfcc")
    app = BfccApp(switch, cfg)
    app.push_all()
    batches = list(switch.batches)
    with pytest.raises(ConfigError, match=r"rt3_packets: pipe 0.*150 Gb/s"):
        app.set_params({"rt3_packets": 1})
    assert switch.batches == batches and app.params.rt3_packets == 3
    with pytest.raises(ConfigError, match=r"reduction: pipe 0"):
        BfccApp(
            FlakyModelSwitch("bfcc"), parse_config(_budget_raw([3, 5, 6], reduction="shaping"))
        ).set_params({"reduction": "fakes"})


def test_multipipe_bfcc_budget_check_exits_2_naming_pipe_and_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bfrt_controller import cli as cli_module

    path = tmp_path / "bfcc.yaml"
    path.write_text(yaml.safe_dump(_budget_raw([3, 5, 6])))
    argv = ["tofcc", "--state", str(tmp_path / "s.yaml"), "--program", "bfcc", "check"]
    monkeypatch.setattr(sys, "argv", [*argv, "--config", str(path)])
    with pytest.raises(SystemExit) as exc:
        cli_module.main()
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert str(path) in err and "pipe 0" in err and "150 Gb/s against its 100 Gb/s" in err


@pytest.mark.parametrize(
    "path",
    [DEFAULT_CONFIG, *sorted((Path(__file__).resolve().parents[2] / "examples").glob("bfcc-*"))],
    ids=lambda p: p.name,
)
def test_multipipe_bfcc_budget_shipped_configs_are_within(path: Path) -> None:
    cfg = load_config(path)
    for load in recirculation_loads(cfg, cfg.params, load_profile(cfg.chip)):
        assert not load.over, load
