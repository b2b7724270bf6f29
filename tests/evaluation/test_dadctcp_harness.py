# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP's switch program (its reference model, configured by its
controller app) as an evaluation scheme: ns-3's DCTCP senders react to its
CE marks and the queue stays near K, where `none` fills the buffer."""

from __future__ import annotations

import importlib.util

import pytest

from evaluation.metrics import compute_metrics
from evaluation.scenario import ScenarioError, load_scenario, parse_scenario
from evaluation.schemes import check_buildable
from evaluation.simulate import RunSpec, run_one

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)
HORIZON_S = 1.5


def _scenario(transport: str = "tcp") -> object:
    raw = load_scenario("tcp-smoke").model_dump()
    raw.update(
        name="dadctcp-test",
        duration_s=HORIZON_S,
        transport=transport,
        flows=[
            {"name": "d1", "src": "h1", "dst": "r1", "cc": "dctcp" if transport == "tcp" else None},
            {"name": "d2", "src": "h2", "dst": "r2", "cc": "dctcp" if transport == "tcp" else None},
        ],
        schemes={"dadctcp": {"k_packets": 20}, "dadctcp-dctcp": {"mode": "dctcp"}, "none": {}},
        claims=[],
    )
    if transport == "udp":
        for f in raw["flows"]:
            f.pop("cc")
    return parse_scenario(raw)


def test_dadctcp_with_udp_senders_is_refused_by_check() -> None:
    s = _scenario("udp")
    with pytest.raises(ScenarioError, match=r"schemes\.dadctcp.*transport: tcp"):
        check_buildable(s)  # type: ignore[arg-type]


@needs_ns3
def test_dctcp_senders_hold_the_queue_near_k_through_dadctcp() -> None:
    s = _scenario()
    runs = {name: run_one(s, RunSpec(name, "")) for name in ("dadctcp", "none")}  # type: ignore[arg-type]
    m = {name: compute_metrics(r, s).values for name, r in runs.items()}  # type: ignore[arg-type]
    da, none = runs["dadctcp"], runs["none"]
    assert all(t.ece_acks > 0 for t in da.tcp)
    assert da.drops_overflow == 0 and none.drops_overflow > 0
    assert m["dadctcp"]["queue_mean_packets"] < 0.4 * m["none"]["queue_mean_packets"]
    # Not bought with idle link: at least 85 % of the 10 Mb/s delivered.
    goodput_bps = sum(f.bytes_received for f in da.flows) * 8 / HORIZON_S
    assert goodput_bps > 0.85 * 10e6


def test_queues_per_port_share_k_port_by_algorithm_2() -> None:
    """`queues: 2`: DSCP 1 takes queue 1, each queue starts at K = 20 of
    K_port = 40, and a round of Algorithm 2 with queue 0 idle and queue 1
    busy moves threshold to queue 1, keeping the sum; DCTCP mode keeps K."""
    from evaluation.schemes import switch_setup
    from evaluation.topology import Topology
    from hw_profiles import load_profile

    raw = _scenario().model_dump()  # type: ignore[attr-defined]
    raw["schemes"] = {
        "dadctcp": {"k_packets": 20, "queues": 2},
        "dadctcp-dctcp": {"k_packets": 20, "queues": 2, "mode": "dctcp"},
    }
    s = parse_scenario(raw)
    topo = Topology(s)
    profile = load_profile(s.chip)
    switch = s.switches[0]
    port = sorted(topo.ports[switch])[0]
    for scheme, moves in (("dadctcp", True), ("dadctcp-dctcp", False)):
        setup = switch_setup(topo, switch, scheme, profile, 1)
        model = setup.pipeline.program  # type: ignore[attr-defined]
        sel = model.table("SwitchIngress.queue_select").lookup({"hdr.ipv4.dscp": 1})
        assert (sel.action, sel.data) == ("SwitchIngress.set_queue", {"qid": 1})

        def k1(q: int, model: object = model) -> int:
            r = model.table("SwitchEgress.queue_threshold").lookup(  # type: ignore[attr-defined]
                {"eg_intr_md.egress_port": port, "eg_intr_md.egress_qid": q}
            )
            return int(r.data["k1_cells"])

        before = (k1(0), k1(1))
        assert before[0] == before[1]
        slot1 = (
            model.table("SwitchEgress.queue_threshold")
            .lookup({"eg_intr_md.egress_port": port, "eg_intr_md.egress_qid": 1})
            .data["slot"]
        )
        model.register("SwitchEgress.last_depth").write(slot1, 3 * before[1])
        # ... as a departure just left it (a queue that never sent reads idle).
        model.register("SwitchEgress.last_departure").write(slot1, 1000)
        assert setup.periodic is not None
        setup.periodic(1.0)
        after = (k1(0), k1(1))
        assert (after[1] > before[1]) is moves
        assert sum(after) == sum(before)


@needs_ns3
def test_a_dscp_leaves_tcp_ecn_capable_and_picks_the_queue() -> None:
    """ns-3's TCP sends no ECT once its socket has a TOS, so the host adaptor
    marks the flows' DSCP instead: DSCP-1 DCTCP flows in queue 1 of two are
    CE-marked and echoed as DSCP-0 flows are, and nothing overflows."""
    raw = _scenario().model_dump()  # type: ignore[attr-defined]
    echoes = {}
    for dscp in (0, 1):
        raw["duration_s"] = 1.0
        raw["flows"] = [
            {"name": f"d{i}", "src": f"h{i}", "dst": f"r{i}", "cc": "dctcp", "dscp": dscp}
            for i in (1, 2)
        ]
        raw["schemes"] = {"dadctcp-dctcp": {"mode": "dctcp", "queues": 2}}
        r = run_one(parse_scenario(raw), RunSpec("dadctcp-dctcp", ""))
        assert r.drops_overflow == 0
        echoes[dscp] = [t.ece_acks for t in r.tcp]
    assert all(n > 0 for n in echoes[1])
    assert echoes[1] == echoes[0]
