# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Priority flow control in the evaluation harness (issue 16 item 6): the
802.1Qbb frame, the traffic manager's paused queues, the scenario fields,
and on ns-3 a two-switch chain that drops without PFC and not with it."""

from __future__ import annotations

import importlib.util
import os

import pytest

from evaluation import frames
from evaluation.network import PfcConfig
from evaluation.scenario import ScenarioError, parse_scenario
from evaluation.tm import EgressTm

MAC = bytes.fromhex("025000010001")


def test_pfc_frame_round_trip_and_layout() -> None:
    f = frames.pfc_frame(MAC, {3: 0xFFFF, 5: 0})
    assert len(f) == frames.MIN_FRAME_BYTES
    assert f[:6] == frames.PFC_DST_MAC and f[12:14] == b"\x88\x08"
    # Opcode 0x0101, class-enable vector with bits 3 and 5.
    assert f[14:16] == b"\x01\x01" and f[16:18] == b"\x00\x28"
    p = frames.read_pfc(f)
    assert p is not None and p.quanta == {3: 0xFFFF, 5: 0}


def test_pfc_frame_refuses_bad_priority_and_quanta() -> None:
    with pytest.raises(ValueError, match="priority"):
        frames.pfc_frame(MAC, {8: 1})
    with pytest.raises(ValueError, match="quanta"):
        frames.pfc_frame(MAC, {3: 0x10000})


def test_read_pfc_ignores_other_frames() -> None:
    # 802.3x global PAUSE: same EtherType, opcode 0x0001.
    pause = frames.ETH.pack(frames.PFC_DST_MAC, MAC, 0x8808) + b"\x00\x01" + bytes(44)
    assert frames.read_pfc(pause) is None
    assert frames.read_pfc(bytes(60)) is None


def test_pause_time_is_512_bit_times_per_quantum() -> None:
    # 0xFFFF quanta at 7 Mb/s: 65535 * 512 = 33,553,920 bit times,
    # / 7e6 = 4.7934171428... s, rounded up to the ns.
    assert frames.pfc_pause_ns(0xFFFF, 7_000_000) == 4_793_417_143
    assert frames.pfc_pause_ns(1, 100_000_000_000) == 6  # 5.12 ns, rounded up
    assert frames.pfc_pause_ns(0, 7_000_000) == 0


def test_paused_queue_holds_others_go_and_pause_expires() -> None:
    tm = EgressTm(buffer_bytes=10_000, cell_bytes=80)
    tm.enqueue(b"a" * 100, 0, 0, ingress_port=4)
    tm.enqueue(b"b" * 100, 1, 0)
    tm.pause(0, until_ns=1_000)
    d = tm.dequeue(10)
    assert d is not None and d.qid == 1 and d.ingress_port is None
    assert tm.dequeue(20) is None
    assert tm.pause_ends_ns(20) == 1_000
    d = tm.dequeue(1_000)
    assert d is not None and d.qid == 0 and d.ingress_port == 4


def test_resume_lifts_the_pause_at_once() -> None:
    tm = EgressTm(buffer_bytes=10_000, cell_bytes=80)
    tm.enqueue(b"a" * 100, 0, 0)
    tm.pause(0, until_ns=10**9)
    assert tm.dequeue(5) is None
    tm.pause(0, until_ns=0)
    assert tm.dequeue(6) is not None


def test_pfc_config_refuses_xon_above_xoff() -> None:
    with pytest.raises(ValueError, match="xon_cells"):
        PfcConfig(3, frozenset({0}), 1, xoff_cells=10, xon_cells=11, pause_quanta=100)


def chain(schemes: dict[str, object], transport: str = "udp") -> dict[str, object]:
    """h1 and h2 at 10 Mb/s each into s1, s1-s2 at 10 Mb/s, s2 -> h3 at 5 Mb/s."""
    return {
        "name": "pfc-chain",
        "duration_s": 2.0,
        "buffer_packets": 30,
        "transport": transport,
        "link": {"rate": "10Mbps", "delay_us": 10},
        "hosts": ["h1", "h2", "h3"],
        "switches": ["s1", "s2"],
        "links": [
            {"a": "h1", "b": "s1"},
            {"a": "h2", "b": "s1"},
            {"a": "s1", "b": "s2"},
            {"a": "s2", "b": "h3", "rate": "5Mbps"},
        ],
        "flows": [
            {"name": "a", "src": "h1", "dst": "h3", "load": 0.4, "stop_s": 1.5},
            {"name": "b", "src": "h2", "dst": "h3", "load": 0.4, "stop_s": 1.5},
        ],
        "schemes": schemes,
    }


def test_scenario_pfc_fields() -> None:
    s = parse_scenario(chain({"none": {}, "none-pfc": {"pfc": {}}, "p4qcn-pfc": {"pfc": {}}}))
    assert s.schemes.enabled() == ["p4qcn-pfc", "none", "none-pfc"]
    pfc = s.schemes.get("none-pfc").pfc  # type: ignore[union-attr]
    assert (pfc.xoff_packets, pfc.xon, pfc.priority, pfc.pause_quanta) == (14, 12, 3, 0xFFFF)
    with pytest.raises(ScenarioError, match=r"none-pfc\.pfc: .*xon_packets"):
        parse_scenario(chain({"none-pfc": {"pfc": {"xoff_packets": 4, "xon_packets": 5}}}))
    with pytest.raises(ScenarioError, match=r"schemes\.none-pfc\.pfc: PFC needs transport: udp"):
        tcp = chain({"none-pfc": {"pfc": {}}}, transport="tcp")
        for f in tcp["flows"]:  # type: ignore[attr-defined]
            del f["load"]
        parse_scenario(tcp)
    with pytest.raises(ScenarioError, match=r"dcqcn-pfc\.pfc"):
        parse_scenario(chain({"dcqcn-pfc": {"pfc": {}}}))


@pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None, reason="the ns3 wheel is not installed"
)
def test_two_switch_chain_loses_nothing_with_pfc(tmp_path_factory: pytest.TempPathFactory) -> None:
    from evaluation.simulate import RunSpec, run_one

    s = parse_scenario(chain({"none": {}, "none-pfc": {"pfc": {"xoff_packets": 10}}}))
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))  # the ns3 loader's trap: "test" in the path
    try:
        off = run_one(s, RunSpec("none", ""))
        on = run_one(s, RunSpec("none-pfc", ""))
    finally:
        os.chdir(here)
    # 8 Mb/s into 5: without PFC the bottleneck's buffer overflows.
    assert off.drops_overflow > 100
    assert sum(f.packets_received for f in off.flows) < sum(f.packets_sent for f in off.flows)
    assert off.pfc_pauses_sent == {}
    # With PFC: nothing dropped anywhere, every packet sent arrives.
    assert on.drops_overflow == 0
    for f in on.flows:
        assert f.packets_sent > 0 and f.packets_received == f.packets_sent
    # s2 paused s1, and s1 (its buffer toward s2 filling) paused both hosts.
    assert on.pfc_pauses_sent.get("s2->s1", 0) > 0
    assert on.pfc_pauses_received.get("s1->s2", 0) == on.pfc_pauses_sent["s2->s1"]
    assert on.pfc_pauses_sent.get("s1->h1", 0) > 0 and on.pfc_pauses_sent.get("s1->h2", 0) > 0
    assert on.pfc_pauses_received.get("h1", 0) == on.pfc_pauses_sent["s1->h1"]
    # Each pause was lifted again (the run ends drained).
    assert on.pfc_resumes_sent["s2->s1"] == on.pfc_pauses_sent["s2->s1"]
    # Paused senders sent less: the hosts, not the fabric, hold the excess.
    assert sum(f.packets_sent for f in on.flows) < sum(f.packets_sent for f in off.flows)
