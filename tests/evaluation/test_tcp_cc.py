# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A Python NewReno (models/hosts/newreno.py) inside ns-3's TCP through a
cross-inherited TcpCongestionOps (evaluation/tcp_cc.py), against ns-3's own
TcpNewReno (issue 14, item 4).

Tolerance: none. The two congestion windows must be the same trace, byte
for byte and nanosecond for nanosecond: the Python rules are ns-3's
arithmetic, and everything else (loss recovery, timeouts, the switches) is
the same code with the same seed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest

from evaluation import tcp, tcp_cc
from evaluation.records import RunResult
from evaluation.scenario import ScenarioError, parse_scenario
from evaluation.simulate import RunSpec, run_one
from models import speedups
from models.hosts.newreno import NewReno, Window

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)


def two_flow_dumbbell(cc: str) -> dict[str, Any]:
    """Two senders into one 10 Mb/s link with a 30-packet buffer, the second
    starting later: slow start, drops and fast recovery, and (under TCN)
    ECN-Echo, so every part of the algorithm is asked."""
    return {
        "name": "tcp-cc",
        "duration_s": 1.5,
        "transport": "tcp",
        "buffer_packets": 30,
        "link": {"rate": "10Mbps", "delay_us": 1000},
        "hosts": ["h1", "h2", "r1", "r2"],
        "switches": ["s1", "s2"],
        "links": [
            {"a": "h1", "b": "s1", "rate": "100Mbps", "delay_us": 100},
            {"a": "h2", "b": "s1", "rate": "100Mbps", "delay_us": 100},
            {"a": "s1", "b": "s2"},
            {"a": "s2", "b": "r1", "rate": "100Mbps", "delay_us": 100},
            {"a": "s2", "b": "r2", "rate": "100Mbps", "delay_us": 100},
        ],
        "flows": [
            {"name": "a", "src": "h1", "dst": "r1", "cc": cc},
            {"name": "b", "src": "h2", "dst": "r2", "cc": cc, "start_s": 0.2},
        ],
        "monitor": [{"switch": "s1", "toward": "s2"}],
        "schemes": {"tcn": {}, "none": {}},
    }


def test_window_rules_are_ns3s() -> None:
    reno = NewReno()
    w = Window(cwnd_bytes=9600, ssthresh_bytes=20_000, segment_bytes=960)
    # Slow start: one segment per ACK however many it covers.
    reno.increase_window(w, 3)
    assert w.cwnd_bytes == 10_560
    # At ssthresh, the segments slow start did not use go to avoidance:
    # max(1, 960 * 960 / cwnd) bytes, truncated.
    w = Window(cwnd_bytes=19_500, ssthresh_bytes=20_000, segment_bytes=960)
    reno.increase_window(w, 2)
    assert w.cwnd_bytes == 20_460 + int(960 * 960 / 20_460)
    w = Window(cwnd_bytes=2_000_000, ssthresh_bytes=1, segment_bytes=960)
    reno.increase_window(w, 1)
    assert w.cwnd_bytes == 2_000_000 + 1  # never less than a byte
    assert reno.ssthresh_bytes(960, 50_000) == 25_000
    assert reno.ssthresh_bytes(960, 1_000) == 1_920


def test_python_cc_is_a_scenario_choice() -> None:
    assert parse_scenario(two_flow_dumbbell("newreno-py")).flows[0].cc == "newreno-py"
    raw = two_flow_dumbbell("newreno-py")
    raw["transport"] = "udp"
    with pytest.raises(ScenarioError) as err:
        parse_scenario(raw)
    assert err.value.field == "flows[0].cc"


def run(cc: str, scheme: str) -> RunResult:
    return run_one(parse_scenario(two_flow_dumbbell(cc)), RunSpec(scheme, ""))


@pytest.fixture(params=["numbers", "reference"])
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each way ns-3's calls reach the algorithm: the shim's numbers
    (models/speedups.py on) or the socket state read from Python."""
    with contextlib.nullcontext() if request.param == "numbers" else speedups.disabled():
        yield request.param


@needs_ns3
@pytest.mark.parametrize("scheme", ["none", "tcn"])
def test_python_newreno_gives_ns3_newrenos_cwnd_trace(
    scheme: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Any] = []
    real = tcp_cc.host_ops

    def counting(*args: Any) -> Any:
        made.append(real(*args))
        return made[-1]

    monkeypatch.setattr(tcp_cc, "host_ops", counting)
    ours = run("newreno-py", scheme)
    ns3 = run("newreno", scheme)
    # The Python algorithm did run, and was asked both questions.
    assert len(made) == 2 and all(ops.calls > 100 for ops in made)
    assert all(ops.GetName() == "NewReno (Python)" for ops in made)
    for a, b in zip(ours.tcp, ns3.tcp, strict=True):
        # The run exercised more than slow start: the window fell.
        falls = sum(1 for x, y in zip(b.cwnd_bytes, b.cwnd_bytes[1:], strict=False) if y < x)
        assert falls > 0
        assert a.cwnd_t_ns == b.cwnd_t_ns
        assert a.cwnd_bytes == b.cwnd_bytes
        assert a.retransmissions == b.retransmissions and a.ece_acks == b.ece_acks
    if scheme == "none":
        assert sum(t.retransmissions for t in ns3.tcp) > 0
    else:
        assert sum(t.ece_acks for t in ns3.tcp) > 0
    assert [f.bytes_received for f in ours.flows] == [f.bytes_received for f in ns3.flows]


@needs_ns3
@pytest.mark.parametrize("rule", ["increase_window", "packets_acked"])
def test_an_exception_in_the_python_algorithm_stops_the_run(
    rule: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: NewReno, w: Window, *args: object) -> None:
        raise ZeroDivisionError("window rule failed")

    monkeypatch.setattr(NewReno, rule, broken)
    with pytest.raises(ZeroDivisionError, match="window rule failed"):
        run("newreno-py", "none")
    # The next run in the process is unharmed.
    monkeypatch.undo()
    r = run("newreno", "none")
    assert r.flows[0].bytes_received > 0
    assert tcp.CC_TYPES["newreno-py"] == "ns3::TcpNewReno"


@needs_ns3
def test_dadctcp_algorithm_1_runs_inside_ns3_tcp(monkeypatch: pytest.MonkeyPatch) -> None:
    """`cc: dadctcp-py`: Algorithm 1 (models/hosts/dadctcp.py) sets the
    window of ns-3's TCP from every ACK's RTT and ECN echo, behind TCN's
    marking: it sees the echoes, takes its own cuts (ns-3's cut on an echo
    is off), keeps the link busy and the queue below drop-tail's."""
    from models.hosts.dadctcp import DaDctcpCc

    made: list[Any] = []
    real = tcp_cc.host_ops

    def keeping(ns: Any, algorithm: Any, errors: Any) -> Any:
        made.append(algorithm)
        return real(ns, algorithm, errors)

    monkeypatch.setattr(tcp_cc, "host_ops", keeping)
    ours = run("dadctcp-py", "tcn")
    assert len(made) == 2 and all(isinstance(a, DaDctcpCc) for a in made)
    assert all(a.acks > 100 for a in made)
    cuts = sum(n for a in made for k, n in a.actions.items() if k not in ("+1", "none"))
    assert cuts > 0 and sum(t.ece_acks for t in ours.tcp) > 0
    assert all(t.ecn for t in ours.tcp)
    goodput_bps = sum(f.bytes_received for f in ours.flows) * 8 / 1.5
    assert goodput_bps > 0.8 * 10e6
    drop_tail = run("newreno", "none")
    assert ours.drops_overflow < drop_tail.drops_overflow


@needs_ns3
@pytest.mark.parametrize("bad", [-1, 1 << 32, 2.0])
@pytest.mark.parametrize("field", ["cwnd_bytes", "ssthresh_bytes"])
def test_a_window_no_socket_holds_stops_the_run(
    field: str, bad: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window or threshold outside uint32_t, or not an integer, stops the
    run with an error naming it, as setting it on ns-3's socket state
    refuses it: the numbers' path must not wrap it into the socket."""
    real = NewReno.packets_acked

    def wild(self: NewReno, w: Window, *args: Any) -> None:
        real(self, w, *args)
        setattr(w, field, bad)

    monkeypatch.setattr(NewReno, "packets_acked", wild)
    with pytest.raises(ValueError, match=field):
        run("newreno-py", "tcn")


@needs_ns3
def test_both_paths_give_dadctcps_run_to_the_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    """The numbers' path (models/speedups.py on) and the socket state's
    give the same run of Algorithm 1, cut for cut: windows and thresholds
    set (the threshold through the shim's out_ssthresh), echoes, drops."""
    from models.hosts.dadctcp import DaDctcpCc

    thresholds = [0]
    real = DaDctcpCc.packets_acked

    def counting(self: DaDctcpCc, w: Window, *args: Any) -> None:
        before = w.ssthresh_bytes
        real(self, w, *args)
        thresholds[0] += w.ssthresh_bytes != before

    monkeypatch.setattr(DaDctcpCc, "packets_acked", counting)
    fast = dataclasses.asdict(run("dadctcp-py", "tcn"))
    assert thresholds[0] > 0, "no ACK moved the threshold: the shim's second answer was not asked"
    with speedups.disabled():
        ref = dataclasses.asdict(run("dadctcp-py", "tcn"))
    fast.pop("wall_s")
    ref.pop("wall_s")
    assert fast == ref
