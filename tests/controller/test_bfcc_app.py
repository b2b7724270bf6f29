# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The BFCC app on the model backend: the pushed state works on packets,
one batch per change, nothing half-applied, restart and re-push."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import pytest
import yaml
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.bfcc import names as n
from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.config import DEFAULT_CONFIG, load_config, parse_config
from bfrt_controller.bfcc.rows import (
    CONGESTION_POINTS,
    GROUPS,
    PORTS,
    RATE_THRESHOLDS,
    REACTION_POINTS,
)
from bfrt_controller.errors import ConfigError, WriteError
from bfrt_controller.supervisor import Supervisor
from bfrt_controller.switch import EntryWrite, PortWrite, Write
from doubles.configs import bfcc_on_tofino2 as on_tofino2
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.switch.bfcc import ETHERTYPE_TOFCC_FAKE
from models.switch.core import Match, Output
from models.wire import TofccFeedback

HOOK_TABLE = "SwitchEgress.queue_hook.queue_md_override"
HOOK_INJECT = "SwitchEgress.queue_hook.inject"


@pytest.fixture
def app() -> BfccApp:
    a = BfccApp(FlakyModelSwitch("bfcc"), load_config(DEFAULT_CONFIG))
    a.push_all()
    return a


def counting(app: BfccApp) -> FlakyModelSwitch:
    assert isinstance(app.switch, FlakyModelSwitch)
    return app.switch


def section(app: BfccApp, name: str) -> list[dict[str, object]]:
    return [r for r in app.status() if r["section"] == name]


def set_queue(sw: ModelSwitch, port: int, depth_cells: int, sojourn_ns: int) -> None:
    """The test hook stands in for the TM's queue, as in the vectors."""
    sw.write(
        [
            EntryWrite(
                HOOK_TABLE,
                {n.K_EGRESS_PORT: Match(port)},
                HOOK_INJECT,
                {"depth_cells": depth_cells, "sojourn_ns": sojourn_ns},
            )
        ]
    )


def sender(host: int, dst: str) -> bytes:
    return bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:fe")
        / IP(src=f"10.0.1.{host}", dst=dst)
        / UDP(sport=5000 + host, dport=6000)
        / bytes(64)
    )


def feedback(msg_type: int, group: int, degree: int) -> bytes:
    return bytes(
        Ether(dst="02:00:00:00:00:03", src="00:00:00:00:03:fe", type=0x88B6)
        / TofccFeedback(msg_type=msg_type, class_id=group, degree=degree)
    )


def messages(outputs: list[Output], port: int = 1) -> list[tuple[int, int, int]]:
    out = []
    for o in outputs:
        pkt = Ether(o.data)
        if o.port == port and TofccFeedback in pkt:
            fb = pkt[TofccFeedback]
            out.append((fb.msg_type, fb.class_id, fb.degree))
    return out


def fakes(outputs: list[Output]) -> int:
    return sum(1 for o in outputs if Ether(o.data).type == ETHERTYPE_TOFCC_FAKE)


# ---- intended state -------------------------------------------------------


def test_push_all_is_one_batch_and_reads_back(app: BfccApp) -> None:
    assert counting(app).batches == [len(app.intended_writes())]
    (cp,) = section(app, CONGESTION_POINTS)
    # 15 packets of the paper's 128 B (2 Tofino cells each: 2.4 kB, where
    # 1500 B packets made it 22.8 kB); the paper's 80/150 ms at 10 Mb/s
    # carried to this 10 Gb/s port.
    assert (cp["port"], cp["cp_id"], cp["threshold_cells"], cp["t_min_ns"], cp["t_max_ns"]) == (
        2, 0, 15 * 2, 80000, 150000,
    )  # fmt: skip
    assert (cp["threshold_packets"], cp["rate_mbps"], cp["saturated"]) == (15, 10_000, "-")
    assert (cp["window_packets"], cp["refresh_ns"]) == (100, 1 << 19)
    (rp,) = section(app, REACTION_POINTS)
    assert (rp["port"], rp["high_qid"], rp["low_qid"], rp["expiry_ns"]) == (3, 2, 1, 5_000_000)
    assert rp["named_group_only"] == 0
    # Tofino pipe 0's port, from the profile; 64 KiB of 80-byte cells.
    assert (rp["recirculation_session"], rp["recirculation_port"]) == (20, 68)
    assert (rp["level_cells"], rp["recirculation_skips"]) == (65536 // 80, 0)
    rts = section(app, RATE_THRESHOLDS)
    assert [(r["degree"], r["rt_packets"]) for r in rts] == [(1, 9), (2, 3), (3, 1)]
    assert [(r["group"], r["senders"], r["mirror_session"]) for r in section(app, GROUPS)] == [
        (1, "10.0.1.1/32", 11), (2, "10.0.1.2/32", 11), (3, "10.0.1.3/32", 11),
    ]  # fmt: skip
    assert [(r["port"], r["trusted"]) for r in section(app, PORTS)] == [
        (1, True), (2, False), (3, True), (4, False),
    ]  # fmt: skip


def test_mirror_sessions_from_config_and_profile(app: BfccApp) -> None:
    sw = counting(app)
    sessions = sw.model.mirror_sessions
    assert (sessions[11].egress_port, sessions[11].max_pkt_len) == (1, n.BP_TRUNCATE_BYTES)
    assert (sessions[20].egress_port, sessions[20].max_pkt_len) == (68, 0)


def test_tofino2_recirculates_through_its_own_port() -> None:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    on_tofino2(raw)
    a = BfccApp(FlakyModelSwitch("bfcc", "tofino2"), parse_config(raw))
    a.push_all()
    assert counting(a).model.mirror_sessions[20].egress_port == 6
    assert {r["recirculation_port"] for r in section(a, REACTION_POINTS)} == {6}


# ---- the pushed state on packets --------------------------------------------


def test_congestion_point_signals_the_upstream(app: BfccApp) -> None:
    """congestion_point.yaml's moderate vector, on the app's state."""
    sw = counting(app)
    set_queue(sw, 2, depth_cells=15 * 2 + 1, sojourn_ns=100000)
    out = sw.model.send(1, sender(1, "10.0.2.2"))
    assert [o.port for o in out if o.port == 2] == [2]
    assert messages(out) == [(2, 1, 2)]
    (cp,) = section(app, CONGESTION_POINTS)
    assert (cp["signalled_group"], cp["signalled_degree"]) == (1, 2)
    # Recovery: one clear naming group 1.
    set_queue(sw, 2, depth_cells=15 * 2, sojourn_ns=0)
    assert messages(sw.model.send(1, sender(2, "10.0.2.2"))) == [(3, 1, 0)]
    (cp,) = section(app, CONGESTION_POINTS)
    assert (cp["signalled_group"], cp["signalled_degree"]) == (None, None)


def test_reaction_point_queues_the_named_group_low_and_cuts_the_port(app: BfccApp) -> None:
    """reaction_point.yaml's severe vector: real and fake alternate (RT 1)
    over every packet to the port (port-wide), the named group on the low queue."""
    sw = counting(app)
    assert sw.model.send(3, feedback(2, 1, 3)) == []
    (rp,) = section(app, REACTION_POINTS)
    assert (rp["slowed_group"], rp["slowed_degree"], rp["backpressure_received"]) == (1, 3, 1)
    out: list[Output] = []
    for _ in range(5):
        out += sw.model.send(1, sender(1, "10.0.3.3"))
    assert fakes(out) == 4  # 1 real, then (fake, recirculated real) x 4
    assert [o.port for o in out] == [3] * 9
    assert sw.read_counter(n.ADMITTED_BY_QID, 1)[0] == 9  # low queue, recirculations too
    # Group 2 is not named: high queue, but it shares the port's cut: after
    # group 1's last real packet, group 2's leaves as the fake.
    assert fakes(sw.model.send(1, sender(2, "10.0.3.3"))) == 1
    assert sw.read_counter(n.ADMITTED_BY_QID, 2)[0] == 2  # and its recirculated real
    (rp,) = section(app, REACTION_POINTS)
    assert (rp["flagged_departures"], rp["fakes_sent"]) == (11, 5)
    # named_group_only: group 2's packets go unflagged.
    app.set_params({"named_group_only": 1})
    for _ in range(4):
        assert fakes(sw.model.send(1, sender(2, "10.0.3.3"))) == 0
    (rp,) = section(app, REACTION_POINTS)
    assert (rp["named_group_only"], rp["flagged_departures"], rp["fakes_sent"]) == (1, 11, 5)


def test_forged_feedback_and_fakes_are_counted_per_port(app: BfccApp) -> None:
    sw = counting(app)
    forged = bytes(
        Ether(dst="02:00:00:00:00:04", src="00:00:00:00:04:04", type=0x88B6)
        / TofccFeedback(msg_type=2, class_id=1, degree=3)
    )
    assert sw.model.send(4, forged) == []
    fake = bytearray(sender(1, "10.0.2.2"))
    fake[12:14] = ETHERTYPE_TOFCC_FAKE.to_bytes(2, "big")
    assert sw.model.send(1, bytes(fake)) == []
    ports = {r["port"]: r for r in section(app, PORTS)}
    assert (ports[4]["forged_drops"], ports[1]["fake_drops"]) == (1, 1)
    (rp,) = section(app, REACTION_POINTS)
    assert rp["slowed_group"] is None  # the forgery recorded nothing


# ---- operator changes -------------------------------------------------------


def test_set_params_writes_one_batch_of_what_changed(app: BfccApp) -> None:
    sw = counting(app)
    changes = app.set_params({"threshold_packets": 20, "rt3_packets": 2, "expiry_ns": 6_000_000})
    assert [(c.what, c.old, c.new) for c in changes] == [
        ("threshold_packets", 15, 20), ("rt3_packets", 1, 2), ("expiry_ns", 5_000_000, 6_000_000),
    ]  # fmt: skip
    # One reaction point, one RT entry (degree 3), one congestion point.
    assert sw.batches[1:] == [3]
    (cp,) = section(app, CONGESTION_POINTS)
    assert cp["threshold_cells"] == 20 * 2
    assert [r["rt_packets"] for r in section(app, RATE_THRESHOLDS)] == [9, 3, 2]
    # The new threshold is live: 16 packets' cells no longer congest port 2.
    set_queue(sw, 2, depth_cells=16 * 2, sojourn_ns=100000)
    assert messages(sw.model.send(1, sender(1, "10.0.2.2"))) == []
    assert app.set_params({"rt3_packets": 2}) == []
    assert sw.batches[1:] == [3, 1]  # only set_queue's write since


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"t_min_us": 150000}, "t_min_us: t_min_us (150000) must be below"),
        ({"t_max_us": 80000}, "t_max_us: t_min_us (80000) must be below"),
        ({"t_min_us": 200000, "t_max_us": 100000}, "t_min_us: t_min_us (200000) must be below"),
        ({"t_min_ns": 80000}, "t_min_ns: wrong unit: set t_min_us instead"),
        ({"threshold_cells": 15}, "threshold_cells: wrong unit: set threshold_packets instead"),
        ({"rt1_packets": 0}, "rt1_packets: Input should be greater than or equal to 1"),
        ({"window_packets": 256}, "window_packets"),
        ({"threshold_packets": 1 << 19}, "threshold_packets"),
        ({"refresh_ns": -1}, "refresh_ns"),
        ({"refresh_ns": 1000}, "refresh_ns: 1000 ns is below the shortest refresh period"),
        ({"colour": 3}, "colour: unknown parameter"),
        ({"rt2_packets": 5, "expiry_ns": 1 << 32}, "expiry_ns"),
        ({"sender_reaction": "maybe"}, "sender_reaction: Input should be 'none' or 'match_sw"),
        ({"sender_reaction": 1}, "sender_reaction: Input should be 'none' or 'match_switch'"),
    ],
)
def test_bad_params_write_nothing(app: BfccApp, changes: dict[str, object], field: str) -> None:
    sw = counting(app)
    before = list(sw.batches)
    with pytest.raises(ConfigError) as exc:
        app.set_params(changes)
    assert str(exc.value).startswith(field), str(exc.value)
    assert sw.batches == before
    assert app.params == load_config(DEFAULT_CONFIG).params
    assert [r["rt_packets"] for r in section(app, RATE_THRESHOLDS)] == [9, 3, 1]


def test_refused_batch_leaves_previous_state(app: BfccApp) -> None:
    """A batch whose last write the switch refuses leaves nothing of it applied."""
    sw = counting(app)
    good = EntryWrite(
        n.RATE_THRESHOLD, {n.K_BP_DEGREE: Match(1)}, n.SET_RATE_THRESHOLD,
        {"rt_packets": 5},
    )  # fmt: skip
    bad = EntryWrite(
        n.CONGESTION_POINT, {n.K_EGRESS_PORT: Match(2)}, n.MONITOR,
        {"cp_id": 16, "congestion_threshold_cells": 1, "t_min_ns": 1, "t_max_ns": 2,
         "window_packets": 1, "refresh_mask": 0},
    )  # fmt: skip
    with pytest.raises(WriteError, match=r"write #1 .*cp_id.*4 bits.*rolled back"):
        sw.write([good, bad])
    assert [r["rt_packets"] for r in section(app, RATE_THRESHOLDS)] == [9, 3, 1]
    assert section(app, CONGESTION_POINTS)[0]["cp_id"] == 0


def test_app_keeps_intended_state_when_switch_refuses(app: BfccApp) -> None:
    sw = counting(app)
    original = sw.write

    def refuse(writes: Sequence[Write]) -> None:
        raise WriteError(0, "x", "refused")

    sw.write = refuse  # type: ignore[method-assign]
    with pytest.raises(WriteError):
        app.set_params({"t_min_us": 90000})
    sw.write = original  # type: ignore[method-assign]
    assert app.params.t_min_us == 80000
    assert section(app, CONGESTION_POINTS)[0]["t_min_ns"] == 80000


def test_restart_then_reconnect_repushes_everything(app: BfccApp) -> None:
    sw = counting(app)
    app.set_params({"t_min_us": 90000, "rt1_packets": 7})
    sw.restart()  # the switch rebooted: tables, registers and sessions gone
    assert sw.read_entry(n.CONGESTION_POINT, {n.K_EGRESS_PORT: Match(2)}) is None
    assert sw.model.mirror_sessions == {}
    sw.down = 3  # unreachable for a while
    sleeps: list[float] = []
    sup = Supervisor(app, first_delay_s=0.5, sleep=sleeps.append)
    rows = sup.run(app.status)
    assert sleeps == [0.5, 1.0]  # exponential backoff while down
    assert sup.reconnects == 1
    cp = next(r for r in rows if r["section"] == CONGESTION_POINTS)
    assert cp["t_min_ns"] == 90000  # operator change survived
    rt = [r["rt_packets"] for r in rows if r["section"] == RATE_THRESHOLDS]
    assert rt == [7, 3, 1]
    assert set(sw.model.mirror_sessions) == {11, 20}


def test_live_state_round_trip() -> None:
    a = BfccApp(FlakyModelSwitch("bfcc"), load_config(DEFAULT_CONFIG))
    a.set_params({"refresh_ns": 2_000_000, "expiry_ns": 8_000_000})
    saved = copy.deepcopy(a.live_state())
    b = BfccApp(FlakyModelSwitch("bfcc"), load_config(DEFAULT_CONFIG))
    b.restore_live(saved)
    assert b.params == a.params
    b.restore_live({})  # an older state file without params: config values stay
    assert b.params == a.params
    saved["params"]["t_min_us"] = 999_999
    with pytest.raises(ConfigError, match=r"saved\.params\.t_min_us"):
        b.restore_live(saved)


def test_chip_mismatch_is_refused() -> None:
    with pytest.raises(ConfigError, match="config is for tofino but the switch is tofino2"):
        BfccApp(ModelSwitch("bfcc", load_profile("tofino2")), load_config(DEFAULT_CONFIG))


def test_bfrt_backend_takes_the_same_batches() -> None:
    from bfrt_controller.backends.bfrt import BfrtSwitch
    from doubles import FakeBfrtGrpc

    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("bfcc", profile)
    sw = BfrtSwitch("bfcc", profile, client_module=fake)
    sw.connect()
    a = BfccApp(sw, load_config(DEFAULT_CONFIG))
    a.push_all()
    sessions = fake.mirror_sessions()
    assert sessions[11][1]["$max_pkt_len"] == n.BP_TRUNCATE_BYTES
    assert sessions[20][1]["$ucast_egress_port"] == 68
    before = len(fake.writes())
    a.set_params({"t_max_us": 200000})
    calls = fake.writes()[before:]
    assert [(c.table, c.count) for c in calls] == [(f"pipe.{n.CONGESTION_POINT}", 1)]
    assert section(a, CONGESTION_POINTS)[0]["t_max_ns"] == 200000


def test_reaction_point_queues_get_strict_priority(app: BfccApp) -> None:
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    # high_qid 2 is served strictly before low_qid 1 on reaction point port 3
    assert (sw.read_tm_priority(3, 2), sw.read_tm_priority(3, 1)) == (1, 0)


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_paper_units_give_the_vectors_congestion_point(chip: str) -> None:
    """congestion_point.yaml's monitor entry is what the controller writes for
    the paper's 15 packets (of 80 B: one cell on either chip) and 80/150 ms at
    10 Mb/s on a 10 Gb/s port, windows of 100, no refresh."""
    from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file

    vfile = load_vector_file(DEFAULT_VECTOR_ROOT / "bfcc" / "congestion_point.yaml")
    (entry,) = [e for e in vfile.setup.tables if e.table == n.CONGESTION_POINT]
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    cp_port = 2
    if chip == "tofino2":
        on_tofino2(raw)
        cp_port += 8
    raw["congestion_points"] = [{"port": cp_port, "rate_mbps": 10_000}]
    raw["params"].update(
        threshold_packets=15, packet_bytes=80, t_min_us=80_000, t_max_us=150_000,
        window_packets=100, refresh_ns=0, expiry_ns=0,
    )  # fmt: skip
    a = BfccApp(FlakyModelSwitch("bfcc", chip), parse_config(raw))
    a.push_all()
    got = a.switch.read_entry(n.CONGESTION_POINT, {n.K_EGRESS_PORT: Match(cp_port)})
    assert got is not None
    assert got.data == dict(entry.data)


def test_saturated_thresholds_are_logged_and_shown(caplog: pytest.LogCaptureFixture) -> None:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["congestion_points"] = [{"port": 2, "rate_mbps": 10}]  # the paper's own link rate
    with caplog.at_level("WARNING", logger="tofcc.bfcc"):
        a = BfccApp(FlakyModelSwitch("bfcc"), parse_config(raw))
    assert "degrees 2 and 3 are never reported" in caplog.text
    a.push_all()
    (cp,) = section(a, CONGESTION_POINTS)
    assert (cp["t_min_ns"], cp["t_max_ns"], cp["saturated"]) == (262143, 262143, "t_min, t_max")
    # Thresholds the chip can measure at 10 Mb/s: written exactly, no report.
    caplog.clear()
    with caplog.at_level("WARNING", logger="tofcc.bfcc"):
        a.set_params({"t_min_us": 200, "t_max_us": 250})
    (cp,) = section(a, CONGESTION_POINTS)
    assert (cp["t_min_ns"], cp["t_max_ns"], cp["saturated"]) == (200_000, 250_000, "-")
    assert "never reported" not in caplog.text


# ---- sender reaction ------------------------------------------------------


def attached_group_config(sender_reaction: str, senders: Sequence[str]) -> dict[str, object]:
    """The default switch with a group 4 whose senders are attached here,
    behind host port 4 (10.0.4.0/24, host MAC 00:00:00:00:04:04)."""
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["groups"].append({"id": 4, "senders": list(senders)})
    raw["params"]["sender_reaction"] = sender_reaction
    return raw


def test_match_switch_relays_backpressure_to_the_attached_group() -> None:
    """The relay is written for the group attached here, to its host port and
    host; a message about a group behind the upstream switch stays consumed."""
    raw = attached_group_config("match_switch", ["10.0.4.1/32", "10.0.4.2/32"])
    app = BfccApp(FlakyModelSwitch("bfcc"), parse_config(raw))
    app.push_all()
    sw = counting(app)
    out = sw.model.send(3, feedback(2, 4, 2))
    assert [(o.port, Ether(o.data).dst, Ether(o.data).src) for o in out] == [
        (4, "00:00:00:00:04:04", "02:00:00:00:00:04")
    ]
    assert messages(out, port=4) == [(2, 4, 2)]
    assert messages(sw.model.send(3, feedback(3, 4, 0)), port=4) == [(3, 4, 0)]
    assert sw.model.send(3, feedback(2, 1, 2)) == []  # group 1 sits behind port 1's switch
    rows = {r["group"]: r for r in section(app, GROUPS)}
    assert (rows[4]["notify_port"], rows[1]["notify_port"]) == (4, None)
    # Back to none: one batch turns the two entries into consume; the state
    # is still recorded, nothing leaves.
    before = len(sw.batches)
    app.set_params({"sender_reaction": "none"})
    assert sw.batches[before:] == [2]
    assert sw.model.send(3, feedback(2, 4, 3)) == []
    assert section(app, GROUPS)[3]["notify_port"] is None
    (rp,) = section(app, REACTION_POINTS)
    assert (rp["slowed_group"], rp["slowed_degree"]) == (4, 3)


def test_a_group_split_over_two_host_ports_is_refused_for_match_switch() -> None:
    senders = ["10.0.4.1/32", "10.0.2.9/32"]
    split = r"groups\[3\]\.senders\[1\]: 10.0.2.9/32 is behind port 2"
    with pytest.raises(ConfigError, match=split):
        parse_config(attached_group_config("match_switch", senders))
    # Under none it loads (no relay for that group), and switching it on is
    # refused naming the field, with nothing written.
    app = BfccApp(FlakyModelSwitch("bfcc"), parse_config(attached_group_config("none", senders)))
    app.push_all()
    before = list(counting(app).batches)
    with pytest.raises(ConfigError, match="sender_reaction: match_switch: groups"):
        app.set_params({"sender_reaction": "match_switch"})
    assert counting(app).batches == before
    assert app.params.sender_reaction == "none"


# ---- reduction: shaping ---------------------------------------------------


def shaping_config(named_group_only: int = 0) -> dict[str, object]:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["reaction_points"][0]["rate_mbps"] = 10_000
    raw["params"]["reduction"] = "shaping"
    raw["params"]["named_group_only"] = named_group_only
    return raw


def test_shaping_cuts_the_port_in_the_tm_instead_of_fakes() -> None:
    """Severe backpressure on port 3: one cycle shapes port 3 to RT/(RT+1) =
    1/2 of its 10 Gb/s; no packet leaves as a fake; a milder degree moves the
    shaper, a clear removes it; a cycle with no change writes nothing."""
    app = BfccApp(FlakyModelSwitch("bfcc"), parse_config(shaping_config()))
    app.push_all()
    sw = counting(app)
    assert app.shape_once() == []
    sw.model.send(3, feedback(2, 1, 3))
    assert sw.read_tm_shaping(3) is None  # not before the controller's cycle
    (w,) = app.shape_once()
    assert (w.port, w.queue, w.max_rate_kbps) == (3, None, 5_000_000)
    assert sw.read_tm_shaping(3) == 5_000_000
    assert app.shape_once() == []
    out: list[Output] = []
    for _ in range(6):
        out += sw.model.send(1, sender(1, "10.0.3.3"))
    assert (fakes(out), len(out)) == (0, 6)
    assert sw.read_counter(n.ADMITTED_BY_QID, 1)[0] == 6  # still the low queue
    (rp,) = section(app, REACTION_POINTS)
    assert (rp["shaped_kbps"], rp["fakes_sent"]) == (5_000_000, 0)
    sw.model.send(3, feedback(2, 1, 1))
    app.shape_once()
    assert sw.read_tm_shaping(3) == 9_000_000  # RT 9: 9/10
    sw.model.send(3, feedback(3, 1, 0))
    app.shape_once()
    assert sw.read_tm_shaping(3) is None


def test_named_group_only_shapes_the_low_queue() -> None:
    app = BfccApp(FlakyModelSwitch("bfcc"), parse_config(shaping_config(named_group_only=1)))
    app.push_all()
    sw = counting(app)
    sw.model.send(3, feedback(2, 1, 2))
    app.shape_once()
    assert (sw.read_tm_shaping(3, 1), sw.read_tm_shaping(3)) == (7_500_000, None)
    # Port-wide again: the queue's shaper goes and the port's comes, in the set.
    app.set_params({"named_group_only": 0})
    assert (sw.read_tm_shaping(3, 1), sw.read_tm_shaping(3)) == (None, 7_500_000)
    # Back to fakes: the shaper goes at once and the RT entries cut again.
    app.set_params({"reduction": "fakes"})
    assert sw.read_tm_shaping(3) is None
    assert [r["rt_packets"] for r in section(app, RATE_THRESHOLDS)] == [9, 3, 1]
    out = sw.model.send(1, sender(1, "10.0.3.3")) + sw.model.send(1, sender(1, "10.0.3.3"))
    out += sw.model.send(1, sender(1, "10.0.3.3")) + sw.model.send(1, sender(1, "10.0.3.3"))
    assert fakes(out) == 1  # RT 3


def test_shaping_needs_each_reaction_points_rate() -> None:
    raw = shaping_config()
    del raw["reaction_points"][0]["rate_mbps"]  # type: ignore[index]
    with pytest.raises(ConfigError, match=r"reaction_points\[0\]\.rate_mbps: required"):
        parse_config(raw)
    raw["params"]["reduction"] = "fakes"  # type: ignore[index]
    app = BfccApp(FlakyModelSwitch("bfcc"), parse_config(raw))
    app.push_all()
    before = list(counting(app).batches)
    with pytest.raises(ConfigError, match=r"reaction_points\[0\]\.rate_mbps: required"):
        app.set_params({"reduction": "shaping"})
    assert counting(app).batches == before and app.params.reduction == "fakes"
    with pytest.raises(ConfigError, match="reduction: Input should be 'fakes' or 'shaping'"):
        app.set_params({"reduction": "pause"})


def test_shaping_on_the_bfrt_backend() -> None:
    """The same cycle on BF-Runtime: the port's shaper row and its enable bit."""
    from bfrt_controller.backends.bfrt import BfrtSwitch
    from doubles import FakeBfrtGrpc

    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("bfcc", profile)
    sw = BfrtSwitch("bfcc", profile, client_module=fake)
    sw.connect()
    app = BfccApp(sw, parse_config(shaping_config()))
    app.push_all()
    fake.set_register(n.BP_STATE, 3, 0x0103, pipe=0)  # what the data plane records
    (w,) = app.shape_once()
    assert w.max_rate_kbps == 5_000_000
    assert fake.tm_row("tm.port.sched_shaping", 0, 3)["max_rate"] == 5_000_000
    assert fake.tm_row("tm.port.sched_cfg", 0, 3) == {"max_rate_enable": True}
    assert app.shape_once() == []
    fake.set_register(n.BP_STATE, 3, 0, pipe=0)
    app.shape_once()
    assert fake.tm_row("tm.port.sched_cfg", 0, 3) == {"max_rate_enable": False}


def test_carried_base_shapes_a_fraction_of_what_the_port_carried() -> None:
    """shaping_base carried: the base is the rate over the cycle before the
    backpressure (here 2 Gb/s on a 10 Gb/s port), held while it lasts, so
    the shaped port's lower rate is not cut again; a new episode measures
    afresh."""
    raw = shaping_config()
    raw["params"]["shaping_base"] = "carried"  # type: ignore[index]
    app = BfccApp(FlakyModelSwitch("bfcc"), parse_config(raw))
    app.push_all()
    sw = counting(app)
    sw.port_tx_bytes[3] = 0
    assert app.shape_once(0.0) == []
    sw.port_tx_bytes[3] = 250_000  # 2 Gb/s over 1 ms
    sw.model.send(3, feedback(2, 1, 2))
    (w,) = app.shape_once(0.001)
    assert w.max_rate_kbps == 1_500_000  # 3/4 of 2 Gb/s, not of the line
    sw.port_tx_bytes[3] += 187_500  # the shaped 1.5 Gb/s
    assert app.shape_once(0.002) == []  # held: no compounding
    sw.model.send(3, feedback(2, 1, 3))
    app.shape_once(0.003)
    assert sw.read_tm_shaping(3) == 1_000_000  # 1/2 of the same base
    sw.model.send(3, feedback(3, 1, 0))
    app.shape_once(0.004)
    assert sw.read_tm_shaping(3) is None
    sw.port_tx_bytes[3] += 50_000  # 400 Mb/s in the next cycle
    sw.model.send(3, feedback(2, 1, 1))
    app.shape_once(0.005)
    assert sw.read_tm_shaping(3) == 360_000  # 9/10 of the new base
    with pytest.raises(ConfigError, match="shaping_base: Input should be 'line' or 'carried'"):
        app.set_params({"shaping_base": "peak"})


def test_port_tx_bytes_on_the_bfrt_backend() -> None:
    from bfrt_controller.backends.bfrt import BfrtSwitch
    from bfrt_controller.errors import ControllerError
    from doubles import FakeBfrtGrpc

    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("bfcc", profile)
    sw = BfrtSwitch("bfcc", profile, client_module=fake)
    sw.connect()
    with pytest.raises(ControllerError, match="not added"):
        sw.read_port_tx_bytes(3)  # bf_pm_port_stat_direct_get: BF_INVALID_ARG
    sw.write([PortWrite(3, "BF_SPEED_25G", "BF_FEC_TYP_NONE", "PM_AN_DEFAULT", 1)])
    assert sw.read_port_tx_bytes(3) == 0
    fake.transmit(3, 1500)
    assert sw.read_port_tx_bytes(3) == 1500
    with pytest.raises(ControllerError):
        sw.read_port_tx_bytes(100)  # no such port on the device


def test_carried_base_waits_for_a_measured_cycle() -> None:
    """Backpressure before the loop has measured a whole cycle: the line
    stands in for that cycle only, then the carried rate becomes the base."""
    raw = shaping_config()
    raw["params"]["shaping_base"] = "carried"  # type: ignore[index]
    app = BfccApp(FlakyModelSwitch("bfcc"), parse_config(raw))
    app.push_all()
    sw = counting(app)
    sw.model.send(3, feedback(2, 1, 1))
    app.shape_once(0.001)  # first sample: nothing measured yet
    assert sw.read_tm_shaping(3) == 9_000_000
    sw.port_tx_bytes[3] = 1_000_000  # 8 Gb/s over the next 1 ms
    app.shape_once(0.002)
    assert sw.read_tm_shaping(3) == 7_200_000
