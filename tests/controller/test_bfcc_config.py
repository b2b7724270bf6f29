"""BFCC config validation: every bad field is named, chip limits follow the profile."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from bfrt_controller.bfcc.config import (
    DEFAULT_CONFIG,
    Params,
    load_config,
    param_warnings,
    parse_config,
    recirculation_port,
)
from bfrt_controller.errors import ConfigError
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
    assert (cfg.params.rt1, cfg.params.rt2, cfg.params.rt3) == (9, 3, 1)
    assert param_warnings(cfg.params) == []


def test_rate_thresholds_default_to_the_paper() -> None:
    p = Params(threshold_cells=15, t_min_ns=80000, t_max_ns=150000)
    assert p.rate_thresholds() == {1: 9, 2: 3, 3: 1}
    assert (p.window_pkts, p.refresh_ns, p.expiry_ns) == (100, 0, 0)


def _cps(n: int) -> Any:
    return lambda r: r.update(congestion_points=[{"port": p} for p in range(8, 8 + n)])


BAD: list[tuple[Any, str, str]] = [
    # params: widths, relations, chip limits
    (lambda r: r["params"].update(t_min_ns=150000), "params.t_min_ns", "must be below t_max_ns"),
    (lambda r: r["params"].update(t_max_ns=262143), "params.t_max_ns", "18 bits"),
    (lambda r: r["params"].update(t_max_ns=1 << 32), "params.t_max_ns", "less than or equal"),
    (lambda r: r["params"].update(t_min_ns=-1), "params.t_min_ns", "greater than or equal"),
    (
        lambda r: r["params"].update(threshold_cells=(1 << 19) - 1),
        "params.threshold_cells",
        "can never be exceeded",
    ),
    (lambda r: r["params"].update(rt1=0), "params.rt1", "greater than or equal to 1"),
    (lambda r: r["params"].update(rt3=256), "params.rt3", "less than or equal to 255"),
    (lambda r: r["params"].update(window_pkts=0), "params.window_pkts", ""),
    (lambda r: r["params"].update(window_pkts=256), "params.window_pkts", ""),
    (lambda r: r["params"].update(refresh_ns=1 << 31), "params.refresh_ns", "less than"),
    (lambda r: r["params"].update(expiry_ns=1 << 32), "params.expiry_ns", ""),
    (lambda r: r["params"].update(rt1="lots"), "params.rt1", "integer"),
    (lambda r: r["params"].update(colour=1), "params.colour", "Extra inputs"),
    (lambda r: r["params"].pop("threshold_cells"), "params.threshold_cells", "required"),
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
        "Extra inputs",
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
        lambda r: (
            r["trusted_ports"].append(130),
            r["reaction_points"].append({"port": 130, "high_qid": 2, "low_qid": 1}),
        ),
        "reaction_points[1].port",
        "pipe 1",
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
    (lambda r: r.update(recirculation_port=68), "recirculation_port", "Extra inputs"),
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


def test_sojourn_limit_follows_the_chip() -> None:
    raw = copy.deepcopy(RAW)
    raw["params"]["t_max_ns"] = 262142  # the largest that a Tofino sojourn can exceed
    parse_config(raw)
    raw["params"]["t_max_ns"] = 1_000_000
    with pytest.raises(ConfigError, match=r"params.t_max_ns.*degree 3 \(severe\) unreachable"):
        parse_config(raw)
    raw["chip"] = "tofino2"  # 32-bit deq_timedelta
    raw["params"]["t_max_ns"] = 1_000_000
    parse_config(raw)


def test_mirror_session_range_follows_the_chip() -> None:
    raw = copy.deepcopy(RAW)
    raw["upstream_ports"][0]["mirror_session"] = 300
    parse_config(raw)  # fine on Tofino (10-bit ids)
    raw["chip"] = "tofino2"
    with pytest.raises(ConfigError, match=r"upstream_ports\[0\].mirror_session.*1..255 on tofino2"):
        parse_config(raw)


def test_queue_ids_follow_the_chip() -> None:
    raw = copy.deepcopy(RAW)
    raw["reaction_points"][0]["high_qid"] = 100
    with pytest.raises(ConfigError, match=r"reaction_points\[0\].high_qid"):
        parse_config(raw)
    raw["chip"] = "tofino2"  # 7-bit queue ids
    parse_config(raw)


@pytest.mark.parametrize(
    ("chip", "port", "recirc"),
    [("tofino", 3, 68), ("tofino", 130, 196), ("tofino2", 3, 6), ("tofino2", 300, 262)],
)
def test_recirculation_port_is_the_reaction_points_pipe(chip: str, port: int, recirc: int) -> None:
    raw = copy.deepcopy(RAW)
    raw["chip"] = chip
    raw["trusted_ports"] = [1, port]
    raw["reaction_points"][0]["port"] = port
    cfg = parse_config(raw)
    assert recirculation_port(cfg, load_profile(chip)) == recirc


def test_no_reaction_points_need_no_recirculation() -> None:
    raw = copy.deepcopy(RAW)
    raw["reaction_points"] = []
    raw.pop("recirculation_session")
    cfg = parse_config(raw)
    assert recirculation_port(cfg, load_profile("tofino")) is None


def test_dubious_but_legal_params_warn() -> None:
    base = {"threshold_cells": 15, "t_min_ns": 1, "t_max_ns": 2}
    assert "rt1 >= rt2 >= rt3" in param_warnings(Params(**base, rt1=1, rt3=5))[0]
    assert "never renewed" in param_warnings(Params(**base, expiry_ns=10))[0]
    assert "below expiry_ns" in param_warnings(Params(**base, expiry_ns=10, refresh_ns=10))[0]
    assert param_warnings(Params(**base, expiry_ns=10, refresh_ns=9)) == []
