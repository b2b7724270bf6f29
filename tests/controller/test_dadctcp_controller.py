# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The DA-DCTCP app on the model backend: the thresholds the data plane
applies, Algorithm 2 as one batch per round keeping K_port, strict
validation with nothing half-applied, and the `set` / `reallocate` commands."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import pytest
import yaml
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.cli import run
from bfrt_controller.dadctcp import names as n
from bfrt_controller.dadctcp.app import QUEUES, DadctcpApp
from bfrt_controller.dadctcp.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.errors import ConfigError, WriteError
from bfrt_controller.switch import Write
from doubles.fake_bfrt_grpc import FakeBfrtGrpc
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.switch.core import Match
from models.switch.headers import ECN_CE
from models.switch.tna import EgressIntrinsic, IngressIntrinsic

RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())
CELLS = 19  # 1500 B in 80 B cells


def _app(raw: dict[str, object] | None = None) -> DadctcpApp:
    a = DadctcpApp(FlakyModelSwitch("dadctcp"), parse_config(raw or RAW))
    a.push_all()
    return a


def _k1(app: DadctcpApp, queue: int) -> int:
    model = app.switch.model  # type: ignore[attr-defined]
    r = model.table(n.QUEUE_THRESHOLD).lookup({n.K_EGRESS_PORT: 4, n.K_EGRESS_QID: queue})
    return int(r.data["k1_cells"])


# Departure stamps for _set_depths: 1M ticks (64 ms) later on every call.
_STAMPS = itertools.count(1_000_000, 1_000_000)


def _set_depths(app: DadctcpApp, depths_packets: list[int]) -> None:
    """The registers as departures leave them: each queue holding packets
    sent one just now (the same fresh stamp, later on every call)."""
    model = app.switch.model  # type: ignore[attr-defined]
    now_ticks = next(_STAMPS)
    for q, d in enumerate(depths_packets):
        model.register(n.LAST_DEPTH).write(app.slot[(4, q)], d * CELLS)
        if d:
            model.register(n.LAST_DEPARTURE).write(app.slot[(4, q)], now_ticks)


def _depart(app: DadctcpApp, dscp: int, enq_packets: int, deq_packets: int, t_ns: int) -> None:
    """One ECT packet of DSCP `dscp` through the model to port 4, leaving its
    queue at `t_ns` with the depths the TM would report."""
    model = app.switch.model  # type: ignore[attr-defined]
    pkt = bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.1.1", dst="10.0.4.4", tos=(dscp << 2) | 2)
        / TCP(sport=40000, dport=80)
        / bytes(1446)
    )
    ig = model.ingress(IngressIntrinsic(1, t_ns), pkt)
    assert not ig.drop and ig.egress_port == 4
    md = EgressIntrinsic(
        4,
        ig.qid,
        enq_qdepth=enq_packets * CELLS,
        deq_qdepth=deq_packets * CELLS,
        global_tstamp_ns=t_ns,
    )
    assert not model.egress(md, ig.data).drop


def test_names_exist_in_the_model() -> None:
    model = FlakyModelSwitch("dadctcp").model
    for t in n.ALL_TABLES:
        model.table(t)
    for r in n.ALL_REGISTERS:
        model.register(r)
    for c in n.ALL_COUNTERS:
        model.counter(c)


def test_pushed_thresholds_mark_as_eq6() -> None:
    """K = 20 packets is K1 = 380 cells, K2 = 760: a rising queue at K1
    marks an ECT packet; in DCTCP mode only q > K does."""
    app = _app()
    model = app.switch.model  # type: ignore[attr-defined]
    assert _k1(app, 0) == 20 * CELLS
    hook = model.table("SwitchEgress.queue_hook.queue_md_override")
    hook.add({"eg_intr_md.egress_port": Match(4)}, "SwitchEgress.queue_hook.inject",
             {"depth_cells": 20 * CELLS, "sojourn_ns": 0})  # fmt: skip
    pkt = bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.1.1", dst="10.0.4.4", tos=2)
        / TCP(sport=40000, dport=80)
    )
    (out,) = model.send(1, pkt)
    assert out.port == 4 and Ether(out.data)[IP].tos & 3 == ECN_CE
    app.set_values({"mode": "dctcp"})
    (out,) = model.send(1, pkt)  # q = K: not above it
    assert Ether(out.data)[IP].tos & 3 == 2


def test_reallocation_is_one_batch_and_keeps_k_port() -> None:
    app = _app()
    switch = app.switch
    assert isinstance(switch, FlakyModelSwitch)
    _set_depths(app, [40, 5, 0, 0])  # 45 < 80: an idle port, queue 0 over its 20
    before = len(switch.batches)
    changes = app.reallocate_once()
    assert len(switch.batches) == before + 1
    assert changes and all("q=" in c.why for c in changes)
    assert sum(app.k_packets.values()) == 80
    assert [_k1(app, q) // CELLS for q in range(4)] == [app.k_packets[(4, q)] for q in range(4)]
    # The idle queue holding 5 packets keeps at least 5 (Eq. 11b).
    assert app.k_packets[(4, 1)] >= 5


def test_busy_port_moves_threshold_to_the_busy_queue() -> None:
    app = _app()
    _set_depths(app, [60, 30, 0, 0])  # 90 >= 80: K_rest 40 goes by depth share
    app.reallocate_once()
    k = [app.k_packets[(4, q)] for q in range(4)]
    assert sum(k) == 80 and k[0] > 20 and k[2] < 20


def test_dctcp_mode_never_reallocates() -> None:
    app = _app()
    app.set_values({"mode": "dctcp"})
    _set_depths(app, [60, 30, 0, 0])
    assert app.reallocate_once() == []


def test_daemon_cycle_waits_for_the_interval() -> None:
    app = _app()
    _set_depths(app, [60, 30, 0, 0])
    assert app.service_cycle(0.0) > 0
    _set_depths(app, [0, 0, 60, 30])
    assert app.service_cycle(0.05) == 0  # interval_s 0.1 not yet over
    assert app.service_cycle(0.1) > 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"queues": [{"queue": 0, "k_packets": 20}]}, r"ports\[0\]\.queues.*sum to 20"),
        ({"k_port_packets": 100000}, r"ports\[0\]\.k_port_packets.*in cells"),
        ({"queues": [{"queue": 99, "k_packets": 80}]}, r"ports\[0\]\.queues\[0\]\.queue"),
    ],
)
def test_config_refused_naming_the_field(change: dict[str, object], field: str) -> None:
    raw = copy.deepcopy(RAW)
    raw["ports"][0].update(change)
    with pytest.raises(ConfigError, match=field):
        parse_config(raw)


def test_dscp_queues_pick_the_queue_and_its_threshold() -> None:
    app = _app()
    model = app.switch.model  # type: ignore[attr-defined]
    hook = model.table("SwitchEgress.queue_hook.queue_md_override")
    hook.add({"eg_intr_md.egress_port": Match(4)}, "SwitchEgress.queue_hook.inject",
             {"depth_cells": 25 * CELLS, "sojourn_ns": 0})  # fmt: skip
    app.set_values({"k_port_packets": 120})  # 30 packets each
    ef = bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.1.1", dst="10.0.4.4", tos=(46 << 2) | 2)
        / TCP(sport=40000, dport=80)
    )
    (out,) = model.send(1, ef)
    assert Ether(out.data)[IP].tos & 3 == 2  # queue 1: 25 < K1 = 30
    assert model.register(n.LAST_DEPTH).read(app.slot[(4, 1)]) == 25 * CELLS
    assert model.register(n.LAST_DEPTH).read(app.slot[(4, 0)]) == 0


def test_repeated_dscp_refused() -> None:
    raw = copy.deepcopy(RAW)
    raw["dscp_queues"] = [{"dscp": 46, "queue": 1}, {"dscp": 46, "queue": 2}]
    with pytest.raises(ConfigError, match="dscp_queues"):
        parse_config(raw)


def test_bad_mode_refused() -> None:
    raw = {**copy.deepcopy(RAW), "mode": "fast"}
    with pytest.raises(ConfigError, match="mode"):
        parse_config(raw)


def test_set_all_or_none() -> None:
    app = _app()
    switch = app.switch
    assert isinstance(switch, FlakyModelSwitch)
    before = list(switch.batches)
    for bad, msg in [
        ({"mode": "fast"}, "mode"),
        ({"k_port_packets": 3}, "leaves no packet"),
        ({"k_port_packets": 10**6}, "in cells"),
        ({"drop_not_ect": "yes"}, "drop_not_ect"),
        ({"k_packets": 3}, "not settable"),
    ]:
        with pytest.raises(ConfigError, match=msg):
            app.set_values(bad)
    with pytest.raises(ConfigError, match="no DA-DCTCP port 9"):
        app.set_values({"drop_not_ect": True}, port=9)
    assert switch.batches == before


def test_set_k_port_shares_in_proportion() -> None:
    app = _app()
    app.set_values({"k_port_packets": 120})
    assert [app.k_packets[(4, q)] for q in range(4)] == [30, 30, 30, 30]
    assert _k1(app, 3) == 30 * CELLS


def test_refused_write_keeps_the_old_state() -> None:
    class Refusing(FlakyModelSwitch):
        refuse = False

        def write(self, writes: list[Write]) -> None:  # type: ignore[override]
            if self.refuse:
                raise WriteError(0, "modify", "refused")
            super().write(writes)

    switch = Refusing("dadctcp")
    app = DadctcpApp(switch, parse_config(RAW))
    app.push_all()
    _set_depths(app, [60, 30, 0, 0])
    switch.refuse = True
    with pytest.raises(WriteError):
        app.reallocate_once()
    assert [app.k_packets[(4, q)] for q in range(4)] == [20, 20, 20, 20]
    with pytest.raises(WriteError):
        app.set_values({"mode": "dctcp"})
    assert app.mode == "dadctcp"


def test_restore_live_refuses_a_corrupt_state() -> None:
    app = _app()
    good = app.live_state()
    bad = copy.deepcopy(good)
    bad["ports"]["4"]["k_packets"]["0"] = 50  # sums to 110, not 80
    with pytest.raises(ConfigError, match=r"live\.ports\.4\.k_packets"):
        app.restore_live(bad)
    assert app.k_packets[(4, 0)] == 20
    app.restore_live(good)


def test_cli_set_reallocate_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = str(tmp_path / "state.json")
    base = ["--program", "dadctcp", "--state", state]
    assert run([*base, "set", "k_port_packets=120", "--port", "4"]) == 0
    assert run([*base, "set", "mode=slow"]) == 2
    assert "mode" in capsys.readouterr().err
    assert run([*base, "set", "k_port_packets=12.5"]) == 2
    assert run([*base, "reallocate"]) == 0
    capsys.readouterr()
    assert run([*base, "status", "--json"]) == 0
    rows = [r for r in yaml.safe_load(capsys.readouterr().out) if r.get("section") == QUEUES]
    assert [r["k_packets"] for r in rows] == [30, 30, 30, 30]
    assert rows[0]["k1_cells"] == 30 * CELLS and rows[0]["k2_cells"] == 60 * CELLS
    assert run(["--program", "bfcc", "--state", state, "set", "x=1", "--port", "4"]) == 2


PACKET_NS = 1_200  # one 1500-byte packet at 10 Gb/s


def test_queue_idle_after_a_burst_moves_no_threshold() -> None:
    """Issue 33: queue 1 (DSCP 46) takes a burst of 30 packets and drains;
    queue 0 stays at 70 packets. The port holds 70 < K_port = 80, its only
    busy queue keeps its K (Algorithm 2's idle-port branch: 70 - 50 = 20),
    so no threshold moves, round after round. With the depth taken on
    arrival and no departure time, queue 1 read 29 packets for ever and
    every round wrote K = [46, 32, 1, 1]."""
    app = _app()
    t = 0
    for i in range(30):  # the burst arrived at once and leaves one by one
        _depart(app, 46, enq_packets=i, deq_packets=29 - i, t_ns=t)
        _depart(app, 0, enq_packets=70, deq_packets=70, t_ns=t + PACKET_NS // 2)
        t += PACKET_NS
    for round_ms in (10, 110, 210):
        # Queue 0 keeps sending (its last few departures before each read).
        for i in range(10, 0, -1):
            t = round_ms * 1_000_000 - i * PACKET_NS
            _depart(app, 0, enq_packets=70, deq_packets=70, t_ns=t)
        assert app.reallocate_once() == [], f"round at {round_ms} ms"
        assert [app.k_packets[(4, q)] for q in range(4)] == [20, 20, 20, 20]


def test_stale_depth_of_an_old_departure_reads_idle() -> None:
    """Whatever the depth register holds (on hardware deq_qdepth may count
    the departing packet's own cells), a queue whose latest departure is
    older than idle_age_us against the freshest one holds nothing."""
    app = _app()
    model = app.switch.model  # type: ignore[attr-defined]
    _depart(app, 46, enq_packets=30, deq_packets=30, t_ns=0)  # then silence
    _depart(app, 0, enq_packets=70, deq_packets=70, t_ns=10_000_000)
    assert model.register(n.LAST_DEPTH).read(app.slot[(4, 1)]) == 30 * CELLS
    assert app.reallocate_once() == []
    # Both sent within idle_age_us (2 ms) of each other: both busy, 100 >= 80.
    _depart(app, 46, enq_packets=30, deq_packets=30, t_ns=10_001_000)
    _depart(app, 0, enq_packets=70, deq_packets=70, t_ns=10_002_000)
    changes = app.reallocate_once()
    assert [app.k_packets[(4, q)] for q in range(4)] == [46, 32, 1, 1]
    assert {c.where for c in changes} == {"4/0", "4/1", "4/2", "4/3"}


def test_no_departure_for_a_whole_interval_reads_idle() -> None:
    """Every queue fell silent together (no fresher departure to compare
    with): a stamp unchanged since the previous round means nothing left the
    queue for a whole interval, so the port reads empty and nothing moves."""
    app = _app()
    _set_depths(app, [60, 30, 0, 0])
    first = app.reallocate_once()
    assert first  # both busy: 90 >= 80
    k = dict(app.k_packets)
    assert app.reallocate_once() == []  # same stamps: idle, whatever the depths say
    assert app.k_packets == k


def _big_raw(ports: list[int], queues: int) -> dict[str, object]:
    """`queues` queues on each of `ports`: ports x queues register slots."""
    raw = copy.deepcopy(RAW)
    raw["ports"] = [
        {
            "port": p,
            "k_port_packets": 10 * queues,
            "drop_not_ect": False,
            "queues": [{"queue": q, "k_packets": 10} for q in range(queues)],
        }
        for p in ports
    ]
    return raw


@pytest.mark.parametrize("ports", [4, 128])
def test_a_cycle_reads_each_register_in_one_request(ports: int) -> None:
    """Issue 50 item 5: Algorithm 2's round reads last_depth and
    last_departure for every queue slot (up to all 1024, ports in two pipes
    of a 4-pipe switch) as one bulk request each, never cell by cell or in
    batches; the values are the sum over the pipes (each queue departs in
    its port's pipe only)."""
    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("dadctcp", profile)
    switch = BfrtSwitch("dadctcp", profile, client_module=fake)
    switch.connect()
    panel = [*range(64), *range(128, 192)][:ports]
    app = DadctcpApp(switch, parse_config(_big_raw(panel, 8)))
    app.push_all()
    for t in (0.0, 0.1, 0.2):
        before = len(fake.calls)
        app.cycle(t)
        reads = [(c.table, c.count) for c in fake.calls[before:] if c.rpc == "read"]
        assert reads == [
            (f"pipe.{n.LAST_DEPTH}", 8 * ports),
            (f"pipe.{n.LAST_DEPARTURE}", 8 * ports),
        ]
