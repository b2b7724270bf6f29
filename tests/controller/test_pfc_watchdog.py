# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""P4QCN's PFC on the chip (issue 16 item 2): the config's `pfc` section
written as TmPfcWrites, off by default, and the PFC watchdog on the model
backend and the fake SDE: a port paused for the detection time is a storm
(reported; with `forward` its pauses are ignored until none has come for
the restoration time), a port paused in bursts is not."""

from __future__ import annotations

import copy

import pytest
import yaml

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.errors import ConfigError
from bfrt_controller.metrics import ROW_METRICS
from bfrt_controller.p4qcn.app import P4qcnApp, ppg_id
from bfrt_controller.p4qcn.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.pfc_watchdog import WATCHDOG_SECTION, PfcWatchdog
from bfrt_controller.switch import IDENTITY_COS_TO_ICOS as IDENTITY
from bfrt_controller.switch import MirrorSessionWrite, Switch, TmPfcWrite
from doubles import FakeBfrtGrpc
from doubles.backends import both_backends
from hw_profiles import load_profile
from models.switch.core import Match

RAW = yaml.safe_load(DEFAULT_CONFIG.read_text())
COS = 3


def with_pfc(**pfc: object) -> dict[str, object]:
    """The default config with PFC on CoS 3, whose iCoS (3) DSCP 26 has."""
    raw = copy.deepcopy(RAW)
    raw["pfc"] = {"ports": [4, 5], "xoff_cells": 182, "headroom_cells": 52, **pfc}
    # PFC covers congestion point 4/0: its Q_max within Q_PFC - Q_flight = 182 - 52
    # (seed 003, 3.2.2), which the default 209 breaks.
    raw["queues"][0].update(q_min_cells=130, q_max_cells=130)
    raw["traffic_classes"] = [{"dscp": 26, "queue": 0, "icos": COS}]
    return raw


class Paused:
    """Drives a port's $ReceivePri<cos>Pause1USCount on either backend."""

    def __init__(self, sw: Switch, fake: FakeBfrtGrpc | None) -> None:
        self.sw, self.fake = sw, fake

    def add(self, port: int, us: int) -> None:
        if self.fake is not None:
            self.fake.rx_paused(port, COS, us)
        else:
            assert isinstance(self.sw, ModelSwitch)
            key = (port, COS)
            self.sw.port_rx_pause_us[key] = self.sw.port_rx_pause_us.get(key, 0) + us


def backends() -> list[tuple[Switch, FakeBfrtGrpc | None]]:
    # The PFC ports, added as the deployment's front panel adds them.
    return both_backends("p4qcn", ports=(4, 5))


def test_pfc_is_off_unless_configured() -> None:
    assert parse_config(RAW).pfc is None
    app = P4qcnApp(ModelSwitch("p4qcn", load_profile("tofino")), parse_config(RAW))
    app.push_all()
    assert app.switch.read_tm_pfc(4, 0) == ("NONE", IDENTITY, 0)
    assert not [w for w in app.intended_writes() if isinstance(w, TmPfcWrite)]
    assert app.watchdog_once(1.0) == []


def test_configured_pfc_is_pushed_on_both_backends() -> None:
    for sw, _ in backends():
        app = P4qcnApp(sw, parse_config(with_pfc()))
        app.push_all()
        for port in (4, 5):
            assert sw.read_tm_pfc(port, 0) == ("PFC", IDENTITY, COS)
            assert sw.read_tm_pfc(port, 1) == ("PFC", IDENTITY, 0)
            # The ingress side: a PPG per port for iCoS 3 (= the CoS), xoff
            # 182, resume the TM's least hysteresis (32 cells) lower, 52 cells
            # of headroom.
            ppg = sw.read_tm_ppg(port, ppg_id(port))
            assert ppg is not None
            assert (ppg.icos, ppg.xoff_cells, ppg.xon_cells, ppg.headroom_cells) == (
                (COS,),
                182,
                150,
                52,
            )
        assert sw.read_tm_pfc(3, 0) == ("NONE", IDENTITY, 0)
        assert sw.read_tm_ppg(3, ppg_id(3)) is None
        app.push_all()  # a re-push modifies, never allocates twice


def test_lossless_class_pools_and_feedback_queue_on_both_backends() -> None:
    """DSCP 26 is the lossless class (queue 1, iCoS 3, its PPG and pool
    limit); feedback waits in queue 7 at iCoS 7, away from the paused
    queue; the skid pool gets room for both ports' headroom (the SDE starts
    it at zero)."""
    raw = with_pfc(icos=[COS], queues=[1], pool="IG_APP_POOL_1")
    raw["traffic_classes"] = [{"dscp": 26, "queue": 1, "icos": COS}]
    raw["feedback"] = {"queue": 7, "icos": 7}
    for sw, _ in backends():
        app = P4qcnApp(sw, parse_config(raw))
        app.push_all()
        entry = sw.read_entry("SwitchIngress.traffic_class", {"hdr.ipv4.dscp": Match(26)})
        assert entry is not None
        assert (entry.action, entry.data) == ("SwitchIngress.set_class", {"qid": 1, "icos": COS})
        ppg = sw.read_tm_ppg(4, ppg_id(4))
        assert ppg is not None
        assert (ppg.icos, ppg.pool) == ((COS,), "IG_APP_POOL_1")
        # 182 cells as the TM keeps it: 22 units of 8 cells.
        assert dict(sw.read_tm_pool("IG_APP_POOL_1").pfc_limit_cells)[COS] == 176
        assert sw.read_tm_pool("IG_SKID_POOL").size_cells == 2 * 52
        assert sw.read_tm_pfc(4, 1) == ("PFC", IDENTITY, COS)
        sessions = [w for w in app.intended_writes() if isinstance(w, MirrorSessionWrite)]
        assert sessions
        assert {(w.queue, w.icos) for w in sessions} == {(7, 7)}
        rows = [r for r in app.status() if r["section"] == "traffic classes"]
        assert rows == [
            {"section": "traffic classes", "dscp": 26, "queue": 1, "icos": COS, "lossless": True}
        ]


def test_the_model_counts_the_class_under_its_icos() -> None:
    """What the TM is told: the model's ingress gives DSCP 26 queue 1 and iCoS 3."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    from models.switch.tna import IngressIntrinsic

    raw = with_pfc(icos=[COS])
    raw["traffic_classes"] = [{"dscp": 26, "queue": 1, "icos": COS}]
    sw = ModelSwitch("p4qcn", load_profile("tofino"))
    P4qcnApp(sw, parse_config(raw)).push_all()
    for tos, want in ((26 << 2, (1, COS)), (0, (0, 0))):
        frame = bytes(Ether() / IP(src="10.0.1.1", dst="10.0.4.4", tos=tos) / UDP())
        r = sw.model.ingress(IngressIntrinsic(1, 0), frame)
        assert not r.drop
        assert (r.qid, r.icos) == want


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"pfc": {"icos": [3]}, "traffic_classes": []}, "pfc.icos[0]"),
        ({"traffic_classes": [{"dscp": 26, "queue": 8}]}, "traffic_classes[0].queue"),
        ({"traffic_classes": [{"dscp": 64}]}, "traffic_classes[0].dscp"),
        ({"traffic_classes": [{"dscp": 1}, {"dscp": 1}]}, "traffic_classes[1].dscp"),
        ({"feedback": {"queue": 8}}, "feedback.queue"),
        ({"feedback": {"icos": 8}}, "feedback.icos"),
        ({"pfc": {"pool_size_cells": 100}}, "pfc.xoff_cells"),
        ({"pfc": {"pool": "EG_APP_POOL_0"}}, "pfc.pool"),
        ({"pfc": {"skid_pool_cells": 10**6}}, "pfc.skid_pool_cells"),
        ({"pfc": {"headroom_cells": 200_000}}, "pfc.skid_pool_cells"),
    ],
)
def test_bad_class_or_buffer_config_names_the_field(
    change: dict[str, dict[str, object]], field: str
) -> None:
    raw = with_pfc(**change.pop("pfc", {}))
    raw.update(change)
    with pytest.raises(ConfigError) as exc:
        parse_config(raw)
    assert exc.value.field.endswith(field), exc.value.field


@pytest.mark.parametrize(
    ("pfc", "field"),
    [
        ({"cos": 0}, "pfc.cos"),
        ({"ports": [4, 4]}, "pfc.ports[1]"),
        ({"ports": [999]}, "pfc.ports[0]"),
        ({"queues": [0, 0]}, "pfc.queues[1]"),
        ({"queues": [127]}, "pfc.queues[0]"),
        ({"watchdog": {"action": "drop"}}, "pfc.watchdog.action"),
        ({"watchdog": {"detection_ms": 0}}, "pfc.watchdog.detection_ms"),
        ({"xoff": 3}, "pfc.xoff"),
        ({"xon_cells": 200}, "pfc"),
        ({"icos": [3, 3]}, "pfc.icos"),
        ({"icos": [8]}, "pfc.icos[0]"),
        ({"ignore_cos": 3}, "pfc.ignore_cos"),
    ],
)
def test_bad_pfc_config_names_the_field(pfc: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(with_pfc(**pfc))
    assert exc.value.field.endswith(field), exc.value.field


def test_storm_detected_forwarded_and_restored() -> None:
    for sw, fake in backends():
        app = P4qcnApp(sw, parse_config(with_pfc()))  # detection = restoration = 200 ms
        app.push_all()
        paused = Paused(sw, fake)
        t = 0.0
        assert app.watchdog_once(t) == []  # the first poll takes the baseline
        # Port 4 paused the whole time, port 5 half of it: only 4 storms,
        # after 200 ms in a row (two 100 ms polls).
        for _ in range(2):
            t += 0.1
            paused.add(4, 100_000)
            paused.add(5, 50_000)
            events = app.watchdog_once(t)
        assert [(e.port, e.what) for e in events] == [(4, "storm")]
        assert sw.read_tm_pfc(4, 0) == ("PFC", IDENTITY, 0)  # pauses ignored, still sent
        assert sw.read_tm_pfc(5, 0) == ("PFC", IDENTITY, COS)
        # A re-push mid-storm keeps the port unhonoured.
        app.push_all()
        assert sw.read_tm_pfc(4, 0) == ("PFC", IDENTITY, 0)
        rows = {r["port"]: r for r in app.status() if r["section"] == WATCHDOG_SECTION}
        assert (rows[4]["storm"], rows[4]["storms"], rows[4]["honouring"]) == (1, 1, 0)
        assert rows[4]["rx_paused_us"] == 200_000 and rows[5]["storm"] == 0
        # Still paused: no restoration. Then 200 ms without a pause: restored.
        t += 0.1
        paused.add(4, 100_000)
        assert app.watchdog_once(t) == []
        for _ in range(2):
            t += 0.1
            events = app.watchdog_once(t)
        assert [(e.port, e.what) for e in events] == [(4, "restored")]
        assert sw.read_tm_pfc(4, 0) == ("PFC", IDENTITY, COS)


def test_alert_only_reports() -> None:
    sw = ModelSwitch("p4qcn", load_profile("tofino"))
    app = P4qcnApp(sw, parse_config(with_pfc(watchdog={"action": "alert", "detection_ms": 100})))
    app.push_all()
    app.watchdog_once(0.0)
    sw.port_rx_pause_us[(4, COS)] = 100_000
    assert [(e.port, e.what) for e in app.watchdog_once(0.1)] == [(4, "storm")]
    assert sw.read_tm_pfc(4, 0) == ("PFC", IDENTITY, COS)  # still honoured
    assert next(r for r in app.status() if r.get("port") == 4 and "storm" in r)["storm"] == 1


def test_counter_reset_is_not_a_storm() -> None:
    sw = ModelSwitch("p4qcn", load_profile("tofino"))
    wd = PfcWatchdog(sw, [4], COS, (0,), 0.1, 0.1, "forward")
    sw.port_rx_pause_us[(4, COS)] = 5_000_000
    wd.poll(0.0)
    sw.port_rx_pause_us[(4, COS)] = 100  # the switch restarted
    assert wd.poll(0.1) == [] and wd.watch[4].paused_s == 0.0


def test_watchdog_rows_become_metrics() -> None:
    names = {m.name for m in ROW_METRICS if m.section == WATCHDOG_SECTION}
    assert names == {"pfc_rx_paused_seconds", "pfc_storm", "pfc_storms"}


def test_reload_without_pfc_turns_it_off() -> None:
    from bfrt_controller.service import reload_writes

    class App:
        def __init__(self, app: P4qcnApp) -> None:
            self.app = app

        def intended_writes(self) -> list[object]:
            return list(self.app.intended_writes())

    sw = ModelSwitch("p4qcn", load_profile("tofino"))
    old = P4qcnApp(sw, parse_config(with_pfc(queues=[0, 1])))
    old.push_all()
    new = P4qcnApp(
        sw,
        parse_config({**with_pfc(), "pfc": {"ports": [5], "xoff_cells": 100, "headroom_cells": 5}}),
    )
    sw.write(reload_writes(App(old), App(new)))  # type: ignore[arg-type]
    assert sw.read_tm_pfc(4, 0) == ("NONE", IDENTITY, 0)
    assert sw.read_tm_pfc(5, 0) == ("PFC", IDENTITY, COS)
    assert sw.read_tm_pfc(5, 1) == ("PFC", IDENTITY, 0)
    assert sw.read_tm_ppg(4, ppg_id(4)) is None
    held = sw.read_tm_ppg(5, ppg_id(5))
    assert held is not None and held.xoff_cells == 100
