# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Source binding from the config to the switch, for every program: what the
operator writes is validated (field named, nothing written), written in the
same batch as the rest, and on the switch a host can no longer send as
another tenant."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bfrt_controller import common
from bfrt_controller.bfcc import config as bfcc_config
from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.rows import PORTS
from bfrt_controller.errors import ConfigError
from bfrt_controller.pmqecn import config as pmqecn_config
from bfrt_controller.pmqecn import names as pn
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.switch import EntryWrite
from doubles.flaky_model import FlakyModelSwitch

PROGRAMS: dict[str, tuple[Any, Callable[..., Any]]] = {
    "pmqecn": (pmqecn_config.DEFAULT_CONFIG, pmqecn_config.parse_config),
    "bfcc": (bfcc_config.DEFAULT_CONFIG, bfcc_config.parse_config),
}


def raw_default(program: str) -> dict[str, Any]:
    path, _ = PROGRAMS[program]
    raw: dict[str, Any] = yaml.safe_load(path.read_text())
    return copy.deepcopy(raw)


def error(program: str, mutate: Callable[[dict[str, Any]], object]) -> ConfigError:
    raw = raw_default(program)
    mutate(raw)
    with pytest.raises(ConfigError) as exc:
        PROGRAMS[program][1](raw, "cfg.yaml")
    return exc.value


def _append_prefix(raw: dict[str, Any], prefix: str) -> None:
    raw["source_bindings"][0]["prefixes"].append(prefix)


def _add_port_binding(raw: dict[str, Any], port: int, prefixes: list[str]) -> None:
    raw["source_bindings"].append({"port": port, "prefixes": prefixes})


# The first binding of each default config is on a host port whose route is
# routes[1] (pmqecn: port 1 is routes[0]; bfcc: port 2 is routes[1]).
BAD_INPUTS = [
    (lambda r: _append_prefix(r, "10.0.9.1/24"), "source_bindings[0].prefixes[1]", "host bits"),
    (lambda r: _append_prefix(r, "10.0.300.0/24"), "source_bindings[0].prefixes[1]", "IPv4"),
    (lambda r: _append_prefix(r, "not-a-prefix"), "source_bindings[0].prefixes[1]", ""),
    (lambda r: _append_prefix(r, 17), "source_bindings[0].prefixes[1]", ""),
    (
        lambda r: _append_prefix(r, r["source_bindings"][0]["prefixes"][0]),
        "source_bindings[0].prefixes[1]",
        "repeats source_bindings[0].prefixes[0]",
    ),
    (lambda r: _append_prefix(r, "0.0.0.0/0"), "source_bindings[0].prefixes[1]", "every source"),
    (lambda r: r["source_bindings"][0].update(prefixes=[]), "source_bindings[0].prefixes", ""),
    (lambda r: r["source_bindings"][0].pop("prefixes"), "source_bindings[0].prefixes", ""),
    (lambda r: r["source_bindings"][0].update(port=-1), "source_bindings[0].port", ""),
    (lambda r: r["source_bindings"][0].update(port=600), "source_bindings[0].port", "exceeds"),
    (lambda r: r["source_bindings"][0].update(port="1"), "source_bindings[0].port", ""),
    (lambda r: r["source_bindings"][0].update(port=True), "source_bindings[0].port", ""),
    (lambda r: r.update(source_bindings={"port": 1}), "source_bindings", "list"),
    (lambda r: r["source_bindings"][0].update(ports=[1]), "source_bindings[0].ports", ""),
    (
        lambda r: _add_port_binding(r, r["source_bindings"][0]["port"], ["192.168.0.0/16"]),
        "source_bindings[",
        "repeats source_bindings[0].port",
    ),
]


@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize(("mutate", "field", "why"), BAD_INPUTS)
def test_bad_bindings_name_their_field(
    program: str, mutate: Callable[[dict[str, Any]], object], field: str, why: str
) -> None:
    err = error(program, mutate)
    assert field in str(err)
    assert why in str(err)


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_bindings_larger_than_the_table_are_refused(program: str) -> None:
    def fill(raw: dict[str, Any]) -> None:
        # 1021 distinct prefixes on one more port: with the defaults' entries
        # (and its own /0) the table's 1024 are exceeded.
        prefixes = [f"192.{i // 256}.{i % 256}.0/24" for i in range(1021)]
        raw["source_bindings"].append({"port": 9, "prefixes": prefixes})

    err = error(program, fill)
    assert err.field == "cfg.yaml: source_bindings" and "1024-entry" in str(err)


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_an_unbound_host_port_is_refused_naming_what_makes_it_one(program: str) -> None:
    def unbind(raw: dict[str, Any]) -> None:
        raw["source_bindings"].pop(0)

    err = error(program, unbind)
    port = raw_default(program)["source_bindings"][0]["port"]
    route = next(i for i, r in enumerate(raw_default(program)["routes"]) if r["port"] == port)
    assert err.field == f"cfg.yaml: routes[{route}].port"
    assert f"port {port} is a host port" in str(err)


def test_a_pmqecn_feedback_port_is_a_host_port() -> None:
    def feedback_on_unrouted_port(raw: dict[str, Any]) -> None:
        raw["ports"].append({"port": 9, "feedback_session": 19})

    assert "ports[3].port" in str(error("pmqecn", feedback_on_unrouted_port))


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_any_source_lists_a_port_without_checking_it(program: str) -> None:
    raw = raw_default(program)
    raw["source_bindings"][0]["prefixes"] = [common.ANY_SOURCE]
    cfg = PROGRAMS[program][1](raw)
    writes = common.source_binding_writes(cfg.source_bindings)
    port = cfg.source_bindings[0].port
    mine = [
        w for w in writes if isinstance(w, EntryWrite) and w.key[pn.K_INGRESS_PORT].value == port
    ]
    assert [(w.key[pn.K_SRC_ADDR].prefix_len, w.action) for w in mine] == [(0, pn.BOUND)]


def test_bfcc_refuses_to_bind_the_recirculation_port() -> None:
    err = error("bfcc", lambda r: _add_port_binding(r, 68, ["10.0.1.0/24"]))
    assert "source_bindings[2].port" in str(err) and "recirculation" in str(err)


def test_a_trusted_port_may_be_bound_too() -> None:
    raw = raw_default("bfcc")
    raw["source_bindings"].append({"port": 1, "prefixes": ["10.0.1.0/24"]})
    assert [b.port for b in bfcc_config.parse_config(raw).source_bindings] == [2, 4, 1]


def test_writes_bind_prefixes_before_the_catch_all() -> None:
    cfg = pmqecn_config.parse_config(raw_default("pmqecn"))
    writes = [w for w in common.source_binding_writes(cfg.source_bindings)]
    assert all(isinstance(w, EntryWrite) for w in writes)
    actions = [w.action for w in writes if isinstance(w, EntryWrite)]
    # Every bound prefix is in before any port starts dropping what misses.
    assert actions == [pn.BOUND] * 4 + [pn.SPOOFED_SOURCE] * 4


# ---- on the switch ----------------------------------------------------------


def udp(src: str, dst: str, eth_dst: str) -> bytes:
    return bytes(Ether(dst=eth_dst, src="00:00:00:00:00:aa") / IP(src=src, dst=dst) / UDP() / b"x")


def test_pmqecn_app_binds_host_ports_in_its_one_batch() -> None:
    sw = FlakyModelSwitch("pmqecn")
    app = PmqecnApp(sw, pmqecn_config.load_config(pmqecn_config.DEFAULT_CONFIG))
    app.push_all()
    assert sw.batches == [len(app.intended_writes())]
    model = sw.model
    # Voice (class 1) is 10.0.1.0/24 with DSCP 46. From port 2 it is a lie.
    spoofed = bytes(
        Ether(dst="02:00:00:00:00:02")
        / IP(src="10.0.1.5", dst="10.0.4.4", tos=46 << 2)
        / UDP()
        / bytes(100)
    )
    assert model.send(2, spoofed) == []
    assert sw.read_counter(pn.SPOOFED_SOURCE_DROPS, 2)[0] == 1
    assert sw.read_counter(pn.CLASS_COUNTERS, 1) == (0, 0)
    assert sw.read_register(pn.VQ_BYTES, 1) == 0
    # The same packet from port 1, where 10.0.1.0/24 lives, is voice.
    assert [o.port for o in model.send(1, spoofed)] == [4]
    assert sw.read_counter(pn.CLASS_COUNTERS, 1)[0] == 1
    # The uplink (trusted, unbound) carries any source.
    assert [o.port for o in model.send(5, udp("10.0.2.9", "10.0.4.4", "02:00:00:00:00:05"))] == [4]
    assert sw.read_counter(pn.SPOOFED_SOURCE_DROPS, 5)[0] == 0


def test_bfcc_app_binds_host_ports_and_reports_them() -> None:
    sw = FlakyModelSwitch("bfcc")
    app = BfccApp(sw, bfcc_config.load_config(bfcc_config.DEFAULT_CONFIG))
    app.push_all()
    assert sw.batches == [len(app.intended_writes())]
    # A host on port 4 claiming group 1's sender: dropped, counted on port 4.
    assert sw.model.send(4, udp("10.0.1.1", "10.0.2.2", "02:00:00:00:00:04")) == []
    assert [o.port for o in sw.model.send(4, udp("10.0.4.7", "10.0.2.2", "02:00:00:00:00:04"))] == [
        2
    ]
    rows = {r["port"]: r for r in app.status() if r["section"] == PORTS}
    assert (rows[4]["bound_sources"], rows[4]["spoofed_drops"]) == ("10.0.4.0/24", 1)
    assert (rows[1]["bound_sources"], rows[1]["spoofed_drops"]) == (None, 0)
