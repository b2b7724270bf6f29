from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from bfrt_controller.errors import ConfigError
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG, load_config, parse_config

RAW: dict[str, Any] = yaml.safe_load(DEFAULT_CONFIG.read_text())


def _err(mutate: Any) -> ConfigError:
    raw = copy.deepcopy(RAW)
    mutate(raw)
    with pytest.raises(ConfigError) as exc:
        parse_config(raw, "cfg.yaml")
    return exc.value


def test_default_config_is_valid() -> None:
    cfg = load_config(DEFAULT_CONFIG)
    assert [c.name for c in cfg.classes] == ["voice", "video", "bulk"]


@pytest.mark.parametrize(
    ("mutate", "field", "words"),
    [
        (lambda r: r["classes"][1].update(queue=40), "classes[1].queue", "max queue id 31"),
        (lambda r: r["classes"][0].update(threshold_cells=-1), "classes[0].threshold_cells", ""),
        (
            lambda r: r["classes"][2].update(threshold_cells=1 << 20),
            "classes[2].threshold_cells",
            "can never be reached",
        ),
        (lambda r: r["classes"][0].update(qos="D"), "classes[0].qos", ""),
        (lambda r: r["classes"][0].update(colour="red"), "classes[0].colour", "Extra inputs"),
        (
            lambda r: r["classes"][1].update(id=1),
            "cfg.yaml: (top level)",
            "classes[1].id 1 repeats",
        ),
        (lambda r: r["routes"][0].update(prefix="10.0.1.1/24"), "routes[0].prefix", "host bits"),
        (lambda r: r["routes"][0].update(src_mac="02:00:00"), "routes[0].src_mac", ""),
        (
            lambda r: r["ports"][0].update(feedback_session=1016),
            "ports[0].feedback_session",
            "outside 1..1015",
        ),
        (lambda r: r["trusted_ports"].append(600), "trusted_ports[1]", "exceeds"),
        (lambda r: r["optimizer"].update(service_rate_pps=0), "optimizer.service_rate_pps", ""),
        (lambda r: r["optimizer"].pop("arrival_cap_pps"), "optimizer.arrival_cap_pps", "required"),
        (lambda r: r.update(chip="tofino3"), "chip", ""),
        (
            lambda r: r["optimizer"].update(target_utilisation=1.2),
            "optimizer.target_utilisation",
            "",
        ),
        (lambda r: r["optimizer"].update(target_utilisation=0), "optimizer.target_utilisation", ""),
        (lambda r: r["optimizer"].update(threshold_rule="wn"), "optimizer.threshold_rule", ""),
        (
            lambda r: r["scheduling"].update(mode="tm_dwrr", egress_ports=[]),
            "scheduling.egress_ports",
            "tm_dwrr needs",
        ),
    ],
)
def test_bad_config_names_the_field(mutate: Any, field: str, words: str) -> None:
    err = _err(mutate)
    assert field in str(err), str(err)
    assert words in str(err), str(err)


def test_mirror_session_range_follows_the_chip() -> None:
    raw = copy.deepcopy(RAW)
    raw["ports"][0]["feedback_session"] = 300
    parse_config(raw)  # fine on Tofino (10-bit ids)
    raw["chip"] = "tofino2"
    raw["routes"] = [dict(r, port=r["port"] + 8) for r in raw["routes"]]  # CPU ports 2-5 on tofino2
    with pytest.raises(ConfigError, match=r"ports\[0\].feedback_session.*1..255 on tofino2"):
        parse_config(raw)
