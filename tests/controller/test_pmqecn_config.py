# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
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
        (
            lambda r: r["classes"][1].update(feedback_interval_us=-1),
            "classes[1].feedback_interval_us",
            "",
        ),
        (
            lambda r: r["classes"][1].update(feedback_interval_us=2e6),
            "classes[1].feedback_interval_us",
            "",
        ),
        (lambda r: r["classes"][0].update(colour="red"), "classes[0].colour", "unknown field"),
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


def _set_port(path: str, value: int) -> Any:
    """A mutation putting `value` at `path` ("routes.0.port", "trusted_ports.0")."""

    def mutate(raw: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = raw
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


# Every field of a PMQECN config that names a port, as the error names it.
PORT_FIELDS = {
    "routes.0.port": "routes[0].port",
    "trusted_ports.0": "trusted_ports[0]",
    "ports.0.port": "ports[0].port",
    "scheduling.egress_ports.0": "scheduling.egress_ports[0]",
    "classes.0.port": "classes[0].port",
}


@pytest.mark.parametrize("path", list(PORT_FIELDS))
@pytest.mark.parametrize(
    ("port", "words"),
    [
        (-1, "greater than or equal to 0"),
        (512, "exceeds"),
        (100, "does not exist"),
        (200, "does not exist"),
    ],
)
def test_every_port_field_is_a_port_of_the_chip(path: str, port: int, words: str) -> None:
    err = _err(_set_port(path, port))
    assert PORT_FIELDS[path] in str(err) and words in str(err), str(err)


@pytest.mark.parametrize("path", [p for p in PORT_FIELDS if p != "trusted_ports.0"])
@pytest.mark.parametrize(
    ("port", "words"), [(68, "recirculation port of pipe 0"), (324, "pipe 2"), (64, "CPU")]
)
def test_traffic_and_feedback_never_go_to_recirculation_or_cpu_ports(
    path: str, port: int, words: str
) -> None:
    """A route to the recirculation port loops (the model stops it after 16
    passes; hardware would not); one to a CPU port hands tenants' traffic to
    the control plane."""
    err = _err(_set_port(path, port))
    assert PORT_FIELDS[path] in str(err) and words in str(err), str(err)


def test_tofino2_ports_follow_its_profile() -> None:
    raw = copy.deepcopy(RAW)
    raw["chip"] = "tofino2"
    with pytest.raises(ConfigError, match=r"routes\[1\].port: port 2 is one of tofino2's CPU"):
        parse_config(raw)
    raw["routes"] = [dict(r, port=r["port"] + 8) for r in raw["routes"]]
    raw["routes"][0]["port"] = 6
    with pytest.raises(ConfigError, match=r"routes\[0\].port: port 6 is tofino2's recirculation"):
        parse_config(raw)


@pytest.mark.parametrize(
    ("mutate", "field", "words"),
    [
        (
            lambda r: r["ports"][1].update(feedback_session=11),
            "ports[1].feedback_session",
            "11 repeats ports[0].feedback_session",
        ),
        (
            lambda r: r["ports"].append({"port": 1, "feedback_session": 14}),
            "ports[3].port",
            "1 repeats ports[0].port",
        ),
        (
            lambda r: r.update(trusted_ports=[5, 6, 5]),
            "trusted_ports[2]",
            "repeats trusted_ports[0]",
        ),
        (
            lambda r: r["routes"].append(dict(r["routes"][1], port=6)),
            "routes[5].prefix",
            "'10.0.2.0/24' repeats routes[1].prefix",
        ),
        (
            lambda r: r["scheduling"].update(egress_ports=[4, 4]),
            "scheduling.egress_ports[1]",
            "repeats",
        ),
        (lambda r: r["ports"][0].update(feedback_session=0), "ports[0].feedback_session", ""),
        (lambda r: r["ports"][0].update(feedback_session=-3), "ports[0].feedback_session", ""),
        (lambda r: r["classes"][0].update(id=1024), "classes[0].id", ""),
        (lambda r: r["classes"][0].update(vq=0), "classes[0].vq", ""),
        (lambda r: r["classes"][0].update(vq=1024), "classes[0].vq", ""),
        (lambda r: r["optimizer"].update(solver_processes=0), "optimizer.solver_processes", ""),
        (lambda r: r["classes"][0].update(priority=-1), "classes[0].priority", ""),
        (lambda r: r["classes"][0].update(queue=-1), "classes[0].queue", ""),
        (lambda r: r["classes"][0].update(weight=0), "classes[0].weight", ""),
        (lambda r: r["classes"][0]["match"].update(protocol=256), "classes[0].match.protocol", ""),
        (
            lambda r: r["scheduling"].update(level_queues=[0, 32]),
            "scheduling.level_queues[1]",
            "max queue id 31",
        ),
        (
            lambda r: r["scheduling"].update(level_queues=[-2]),
            "scheduling.level_queues[0]",
            "",
        ),
        (
            lambda r: r["optimizer"].update(capacity_packets=10**9),
            "optimizer.capacity_packets",
            "buffer",
        ),
        (lambda r: r["classes"][0].update(threshold_cells=True), "classes[0].threshold_cells", ""),
        (lambda r: r["ports"][0].update(port="1"), "ports[0].port", ""),
    ],
)
def test_pmqecn_ids_are_checked_as_strictly_as_bfcc(mutate: Any, field: str, words: str) -> None:
    err = _err(mutate)
    assert field in str(err), str(err)
    assert words in str(err), str(err)


def test_feedback_interval_is_written_in_ticks_rounded_up() -> None:
    """50 us is 781.25 ticks of 64 ns: 782, so the limit is never shorter."""
    from bfrt_controller.pmqecn.config import feedback_interval_ticks

    assert feedback_interval_ticks(50.0) == 782
    assert feedback_interval_ticks(0.0) == 0
    assert feedback_interval_ticks(0.064) == 1
    cfg = load_config(DEFAULT_CONFIG)
    assert [c.feedback_interval_us for c in cfg.classes] == [50.0, 50.0, 50.0]
