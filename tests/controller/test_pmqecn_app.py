# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The PMQECN app on the model backend: batches, rollback, restart, reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.errors import ConfigError, SwitchUnavailable, WriteError
from bfrt_controller.pmqecn import names as n
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG, load_config
from bfrt_controller.supervisor import Supervisor
from bfrt_controller.switch import EntryWrite, Write
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.switch.core import Match


def pipe0(cid: int) -> dict[str, Match]:
    """A class's ecn_threshold key in pipe 0 (K_i is the same in every pipe's)."""
    return {n.K_CLASS_ID: Match(cid), n.K_INGRESS_PIPE: Match(0)}


@pytest.fixture
def app() -> PmqecnApp:
    a = PmqecnApp(FlakyModelSwitch("pmqecn"), load_config(DEFAULT_CONFIG))
    a.push_all()
    return a


def threshold(app: PmqecnApp, cid: int) -> int:
    """K_i in cells, as the app keeps it (the switch holds it in bytes)."""
    e = app.switch.read_entry(n.ECN_THRESHOLD, pipe0(cid))
    assert e is not None
    cell = app.profile.cell_bytes
    assert e.data["threshold_bytes"] % cell == 0
    return int(e.data["threshold_bytes"] // cell)


def test_push_all_is_one_batch(app: PmqecnApp) -> None:
    sw = app.switch
    assert isinstance(sw, FlakyModelSwitch)
    assert sw.batches == [len(app.intended_writes())]
    assert [r["threshold_cells"] for r in app.status() if r["section"] == "classes"] == [20, 40, 60]


def test_set_thresholds_writes_one_batch(app: PmqecnApp) -> None:
    changes = app.set_thresholds({1: 30, 3: 90})
    assert {(c.class_id, c.new) for c in changes} == {(1, 30), (3, 90)}
    assert (threshold(app, 1), threshold(app, 3)) == (30, 90)
    assert isinstance(app.switch, FlakyModelSwitch)
    assert len(app.switch.batches) == 2


def test_invalid_threshold_writes_nothing(app: PmqecnApp) -> None:
    sw = app.switch
    assert isinstance(sw, FlakyModelSwitch)
    before = list(sw.batches)
    with pytest.raises(ConfigError, match="class 3 threshold_cells"):
        app.set_thresholds({1: 30, 3: 1 << 20})
    assert sw.batches == before
    assert threshold(app, 1) == 20
    with pytest.raises(ConfigError, match="no class with id 9"):
        app.set_thresholds({9: 1})
    with pytest.raises(ConfigError, match="class 2 weight"):
        app.set_weights({2: 0})


def test_refused_batch_leaves_previous_state(app: PmqecnApp) -> None:
    """A batch whose last write the switch refuses leaves nothing of it applied."""
    good = EntryWrite(
        n.ECN_THRESHOLD, pipe0(1), n.SET_THRESHOLD,
        {"threshold_bytes": 5, "mark_original": 0, "rate_log2_q7": 0,
         "feedback_interval_ticks": 0},
    )  # fmt: skip
    bad = EntryWrite(
        n.VQ_WEIGHT, {n.K_VQ_ID: Match(2)}, n.WRR, {"weight": 1 << 16, "last_level": 2}
    )
    with pytest.raises(WriteError, match=r"write #1 .*weight.*16 bits.*rolled back"):
        app.switch.write([good, bad])
    assert threshold(app, 1) == 20


def test_app_keeps_intended_state_when_switch_refuses(app: PmqecnApp) -> None:
    sw = app.switch
    assert isinstance(sw, FlakyModelSwitch)
    original = sw.write

    def refuse(writes: Sequence[Write]) -> None:
        raise WriteError(0, "x", "refused")

    sw.write = refuse  # type: ignore[method-assign]
    with pytest.raises(WriteError):
        app.set_thresholds({1: 33})
    sw.write = original  # type: ignore[method-assign]
    assert app.live[1].threshold_cells == 20


def test_restart_then_reconnect_repushes_everything(app: PmqecnApp) -> None:
    sw = app.switch
    assert isinstance(sw, FlakyModelSwitch)
    app.set_thresholds({2: 44})
    sw.restart()  # the switch rebooted: tables empty
    assert sw.read_entry(n.ECN_THRESHOLD, pipe0(2)) is None
    sw.down = 3  # unreachable for a while
    sleeps: list[float] = []
    sup = Supervisor(app, first_delay_s=0.5, sleep=sleeps.append)
    rows = sup.run(app.status)
    assert sleeps == [0.5, 1.0]  # exponential backoff while down
    assert sup.reconnects == 1
    assert [r["threshold_cells"] for r in rows if r["section"] == "classes"] == [
        20,
        44,
        60,
    ]  # operator change survived


def test_supervisor_gives_up_after_max_attempts(app: PmqecnApp) -> None:
    sw = app.switch
    assert isinstance(sw, FlakyModelSwitch)
    sw.down = 100
    sup = Supervisor(app, sleep=lambda s: None, max_attempts=3)
    with pytest.raises(SwitchUnavailable):
        sup.run(app.status)


def test_sample_measures_rates_and_sojourn(app: PmqecnApp) -> None:
    from bfrt_controller.pmqecn.demo import FLOWS, inject_depth

    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    app.sample(10.0)
    inject_depth(sw, 0, 3000)
    data = bytes(FLOWS["video"].packet())
    for _ in range(50):
        sw.model.send(2, data)
    samples = {s.class_id: s for s in app.sample(10.5)}
    assert samples[2].rate_pps == pytest.approx(100.0)
    assert samples[2].mean_sojourn_ns == pytest.approx(3000.0)
    assert samples[1].rate_pps == 0.0
    # The next interval sums into the other half, cleared before the flip.
    assert sw.read_register(n.SOJOURN_PKTS[app.meter.epoch], 2) == 0
    sw.model.send(2, data)
    assert app.sample(11.0)[1].packets == 1


def test_counter_reset_by_restart_is_not_a_negative_rate(app: PmqecnApp) -> None:
    """A restarted switch counts arrivals from zero: the push after it makes
    the next reading a baseline, not a wrapped difference (2^32 - 25
    packets), and the one after measures again."""
    from bfrt_controller.pmqecn.demo import FLOWS

    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    data = bytes(FLOWS["voice"].packet())
    for _ in range(30):
        sw.model.send(1, data)
    app.sample(1.0)
    sw.restart()
    app.push_all()
    for _ in range(5):
        sw.model.send(1, data)
    s = {s.class_id: s for s in app.sample(2.0)}
    assert s[1].packets == 0 and s[1].rate_pps == 0.0
    for _ in range(7):
        sw.model.send(1, data)
    s = {s.class_id: s for s in app.sample(3.0)}
    assert s[1].packets == 7 and s[1].rate_pps == pytest.approx(7.0)


def test_tm_dwrr_mode_writes_tm_weights_not_p4() -> None:
    import yaml

    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["scheduling"] = {"mode": "tm_dwrr", "egress_ports": [4]}
    from bfrt_controller.pmqecn.config import parse_config

    a = PmqecnApp(FlakyModelSwitch("pmqecn"), parse_config(raw))
    a.push_all()
    sw = a.switch
    assert isinstance(sw, ModelSwitch)
    assert sw.tm_weights == {(4, 0): 6, (4, 1): 5, (4, 2): 5, **{(4, q): 1 for q in range(3, 8)}}
    assert sw.model.table(n.VQ_WEIGHT).entries == []
    a.set_weights({1: 9})
    assert sw.read_tm_weight(4, 0) == 9


def test_chip_mismatch_is_refused() -> None:
    with pytest.raises(ConfigError, match="config is for tofino but the switch is tofino2"):
        PmqecnApp(ModelSwitch("pmqecn", load_profile("tofino2")), load_config(DEFAULT_CONFIG))


def _p4_wrr_raw() -> dict[str, Any]:
    import yaml

    raw: dict[str, Any] = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["scheduling"] = {"mode": "p4_wrr", "level_queues": [0, 1, 2], "egress_ports": [4]}
    return raw


def test_default_scheduling_is_tm_dwrr(app: PmqecnApp) -> None:
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    assert app.config.scheduling.mode == "tm_dwrr"
    assert sw.tm_weights == {(4, 0): 6, (4, 1): 5, (4, 2): 5, **{(4, q): 1 for q in range(3, 8)}}
    assert sw.tm_priorities == {}
    assert sw.model.table(n.VQ_WEIGHT).entries == []


def test_p4_wrr_sets_strict_priority_on_level_queues() -> None:
    from bfrt_controller.pmqecn.config import parse_config

    a = PmqecnApp(FlakyModelSwitch("pmqecn"), parse_config(_p4_wrr_raw()))
    a.push_all()
    sw = a.switch
    assert isinstance(sw, ModelSwitch)
    # level 0 (queue 0) is served first
    assert [sw.read_tm_priority(4, q) for q in (0, 1, 2)] == [2, 1, 0]
    assert len(sw.model.table(n.VQ_WEIGHT).entries) == 3


def test_drain_rates_follow_the_weights(app: PmqecnApp) -> None:
    """mu_i* in the data plane: each class's weight share of its port's Gamma."""
    from bfrt_controller.pmqecn.drain import drain_bytes

    gamma_bytes = 1_250_000 * 1000  # the default config's 10 Gb/s of 1000-byte packets
    # Weights 6, 5, 5: each class's share of the port (the port's five other
    # queues are set to 1 by the app and are not counted: idle, they take nothing).
    assert [app.drain_rate_bytes_per_s(c) for c in app.config.classes] == [
        gamma_bytes * 6 // 16,
        gamma_bytes * 5 // 16,
        gamma_bytes * 5 // 16,
    ]
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    bits = app.config.virtual_queue.drain_mantissa_bits
    ticks = 1000

    def table_drain(class_id: int) -> int:
        """What the switch drains for class_id over `ticks`: its log rate
        from ecn_threshold, plus the shared log table, through the exp table."""
        rate_log = sw.model.table(n.ECN_THRESHOLD).lookup(
            {n.K_CLASS_ID: class_id, n.K_INGRESS_PIPE: 0}
        )
        log_e = sw.model.table(n.VQ_LOG_ELAPSED).lookup({n.K_ELAPSED_TICKS: ticks})
        total = rate_log.data["rate_log2_q7"] + log_e.data["log_elapsed_q7"]
        return sw.model.table(n.VQ_EXP_DRAIN).lookup({n.K_LOG_DRAIN: total}).data["drain_bytes"]

    assert table_drain(1) == drain_bytes(gamma_bytes * 6 // 16, bits, ticks) > 0
    # A weight change moves every share of the port: class 2's drain changes
    # too, though only class 1's weight was set (one entry per class written).
    before = table_drain(2)
    app.set_weights({1: 11})
    assert table_drain(2) == drain_bytes(gamma_bytes * 5 // 21, bits, ticks) < before


def test_feedback_sessions_mirror_at_ingress(app: PmqecnApp) -> None:
    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    assert {s.direction for s in sw.model.mirror_sessions.values()} == {"INGRESS"}


def test_duplicate_level_queue_is_refused() -> None:

    from bfrt_controller.pmqecn.config import parse_config

    raw = _p4_wrr_raw()
    raw["scheduling"]["level_queues"] = [0, 1, 1]
    with pytest.raises(ConfigError, match=r"scheduling\.level_queues: each level needs its own"):
        parse_config(raw)


def test_backlog_from_little_while_sojourns_are_resolvable() -> None:
    from bfrt_controller.pmqecn.measure import backlog_packets

    # 1000 pkt/s waiting 20 us on average: 0.02 packets queued, whatever came before.
    assert backlog_packets(50.0, 100, 100, 20_000, 1000.0, 262_143, 200) == pytest.approx(0.02)


def test_backlog_counts_arrivals_less_departures_once_sojourns_saturate() -> None:
    """On a 10 Mb/s link every wait saturates Tofino's 18-bit deq_timedelta:
    the queue is then what came in less what went out, capped at the buffer."""
    from bfrt_controller.pmqecn.measure import backlog_packets

    sat = 262_143
    q = backlog_packets(0.0, 500, 250, sat, 2500.0, sat, 200)
    assert q == 200.0  # 250 more arrived than left, but the buffer holds 200
    q = backlog_packets(120.0, 250, 300, sat, 1250.0, sat, 200)
    assert q == pytest.approx(70.0)
    # Never below Little's lower bound with the saturated W ...
    assert backlog_packets(0.0, 100, 200, sat, 1000.0, sat, 200) == pytest.approx(0.262143)
    # ... and re-anchored once packets see short waits again.
    assert backlog_packets(180.0, 100, 100, 1_000, 1000.0, sat, 200) == pytest.approx(0.001)


def _sample_mask(app: PmqecnApp, cid: int) -> int:
    e = app.switch.read_entry(n.SOJOURN_SAMPLING, {n.K_CLASS_ID: Match(cid)})
    assert e is not None
    return int(e.data["sample_mask"])


def test_pinned_sojourn_sum_is_sampled_then_measured_exactly(app: PmqecnApp) -> None:
    """A class whose sum pinned (a deep queue at a high rate) gives no W_i for
    that interval and is summed one departure in 16 from then on; the next
    interval's W_i is exact, and once the whole sum fits again every
    departure is summed."""
    from bfrt_controller.pmqecn.demo import FLOWS, inject_depth
    from bfrt_controller.switch import RegisterWrite

    sw = app.switch
    assert isinstance(sw, ModelSwitch)
    assert _sample_mask(app, 2) == 0
    app.sample(10.0)
    summing = app.meter.epoch
    sw.write(
        [
            RegisterWrite(n.SOJOURN_SUM_NS[summing], 2, 0xFFFFFFFF),
            RegisterWrite(n.SOJOURN_PKTS[summing], 2, 30_000),
        ]
    )
    pinned = {s.class_id: s for s in app.sample(11.0)}
    # The backlog is counted, not read from a lower bound of W_i.
    assert pinned[2].backlog_packets == 0.0
    assert _sample_mask(app, 2) == 15
    inject_depth(sw, 40, 200_000)
    data = bytes(FLOWS["video"].packet())
    for _ in range(64):
        sw.model.send(2, data)
    summing = app.meter.epoch
    assert sw.read_register(n.SOJOURN_SUM_NS[summing], 2) == 4 * 200_000
    assert sw.read_register(n.SOJOURN_PKTS[summing], 2) == 64
    measured = {s.class_id: s for s in app.sample(12.0)}
    assert measured[2].mean_sojourn_ns == pytest.approx(200_000.0)
    # 16 x 800,000 ns is far below 2^31: summed whole again.
    assert _sample_mask(app, 2) == 0
    # The mask is intended state: a restarted switch gets it back.
    assert any(
        isinstance(w, EntryWrite) and w.table == n.SOJOURN_SAMPLING for w in app.intended_writes()
    )


def test_sampling_keeps_a_line_rate_deep_class_in_range() -> None:
    """At Tofino's worst case (148.8 Mpps for a second, every departure at the
    longest deq_timedelta), the k the controller settles on keeps the sum
    below the register, so W_i is measured rather than pinned."""
    from bfrt_controller.pmqecn.sampling import U32_MAX, next_sample_log2

    profile = load_profile("tofino")
    departures = 148_800_000
    per_departure_ns = profile.max_timedelta_ns
    k = 0
    for _ in range(10):
        summed = -(-departures // (1 << k))
        k = next_sample_log2(k, min(summed * per_departure_ns, U32_MAX))
    assert -(-departures // (1 << k)) * per_departure_ns < U32_MAX
