# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc as a service: the deployment file, the daemon's loop, reload, a
fleet whose switches fail on their own, the metrics endpoint, and diff."""

from __future__ import annotations

import copy
import signal
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.cli import run as tofcc
from bfrt_controller.diff import diff_writes
from bfrt_controller.errors import ConfigError
from bfrt_controller.metrics import serve
from bfrt_controller.service import (
    Daemon,
    ResolvedTarget,
    load_service_config,
    make_target_app,
    signal_handlers,
)
from bfrt_controller.switch import PortWrite, Switch, Write
from doubles import FakeBfrtGrpc
from doubles.pmqecn_counts import set_class_totals
from hw_profiles import load_profile
from models.switch.core import Match

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LPM = "SwitchIngress.forward.ipv4_lpm"
ECN = "SwitchIngress.ecn_threshold"
EGRESS_PORT = 4  # pmqecn-tm-dwrr.yaml scheduling.egress_ports

# Device ports 1-5 of the examples are lanes of connectors 32 and 13 on the
# 32-port Tofino board (32/0 is device port 0, 13/0 is 4).
FRONT_PANEL = {
    "board": "tofino-32q",
    "ports": [
        {"port": "32/1", "speed": "25G"},
        {"port": "32/2", "speed": "25G"},
        {"port": "32/3", "speed": "25G", "autoneg": "disable"},
    ],
}


def example(name: str) -> dict[str, Any]:
    data = yaml.safe_load((EXAMPLES / name).read_text())
    assert isinstance(data, dict)
    return data


def pmqecn_target(name: str = "leaf1", target: str = "model", **kw: Any) -> dict[str, Any]:
    return {
        "name": name,
        "target": target,
        "program": "pmqecn",
        "config": example("pmqecn-tm-dwrr.yaml"),
        "front_panel": copy.deepcopy(FRONT_PANEL),
        **kw,
    }


def bfcc_target(name: str, config: str, target: str = "model") -> dict[str, Any]:
    return {
        "name": name,
        "target": target,
        "program": "bfcc",
        "config": example(config),
        "front_panel": copy.deepcopy(FRONT_PANEL),
    }


def write_deploy(path: Path, *targets: dict[str, Any], **extra: Any) -> Path:
    path.write_text(yaml.safe_dump({"targets": list(targets), **extra}, sort_keys=False))
    return path


class Clock:
    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s

    def wait(self, event: threading.Event, timeout_s: float) -> None:
        self.now_s += timeout_s


class Recording(ModelSwitch):
    """A model switch that keeps every batch written to it."""

    def __init__(self, program: str, chip: str = "tofino") -> None:
        super().__init__(program, load_profile(chip))
        self.batches: list[list[Write]] = []

    def write(self, writes: Any) -> None:
        self.batches.append(list(writes))
        super().write(writes)


def recording_factory(made: dict[str, Recording]) -> Any:
    def make(t: ResolvedTarget) -> Switch:
        made[t.name] = Recording(t.spec.program, t.profile.chip)
        return made[t.name]

    return make


# ---- the deployment file -------------------------------------------------------


def test_the_shipped_deployment_files_validate() -> None:
    for name in ("fleet.yaml", "model.yaml"):
        _, targets = load_service_config(ROOT / "deploy" / name)
        assert all(t.board is not None for t in targets)
    _, fleet = load_service_config(ROOT / "deploy" / "fleet.yaml")
    assert [(t.name, t.spec.program) for t in fleet] == [("s1", "bfcc"), ("s2", "bfcc")]


BAD_DEPLOY = [
    (
        lambda t: t["config"]["classes"][0].update(queue=99),
        r"targets\[0\]\.config\.classes\[0\]\.queue",
    ),
    (
        lambda t: t["front_panel"]["ports"][0].update(speed="400G"),
        r"targets\[0\]\.front_panel\.ports\[0\]\.speed",
    ),
    (lambda t: t.update(program="ecmp"), r"targets\[0\]\.program"),
    (lambda t: t.update(target="tcp://x"), r"targets\[0\]\.target"),
    (lambda t: t.update(target="grpc://sw:99999"), r"targets\[0\]\.target.*1\.\.65535"),
    (lambda t: t.update(target="grpc://sw"), r"targets\[0\]\.target"),
    (lambda t: t.update(colour="red"), r"targets\[0\]\.colour"),
]


@pytest.mark.parametrize(("spoil", "field"), BAD_DEPLOY)
def test_a_bad_deployment_file_names_the_field(tmp_path: Path, spoil: Any, field: str) -> None:
    t = pmqecn_target()
    spoil(t)
    path = write_deploy(tmp_path / "deploy.yaml", t)
    with pytest.raises(ConfigError, match=field):
        load_service_config(path)


def test_two_writers_for_one_program_on_one_switch_are_refused(tmp_path: Path) -> None:
    path = write_deploy(
        tmp_path / "d.yaml",
        pmqecn_target("a", "grpc://sw:50052"),
        pmqecn_target("b", "grpc://sw:50052", client_id=1),
    )
    with pytest.raises(ConfigError, match=r"targets\[1\]\.target.*already targets\[0\]"):
        load_service_config(path)


def test_a_program_config_by_path_is_read_beside_the_deployment_file(tmp_path: Path) -> None:
    (tmp_path / "leaf.yaml").write_text((EXAMPLES / "pmqecn-tm-dwrr.yaml").read_text())
    path = write_deploy(tmp_path / "d.yaml", pmqecn_target(config="leaf.yaml"))
    _, (t,) = load_service_config(path)
    assert t.config.classes[0].name == "voice"
    (tmp_path / "leaf.yaml").write_text("program: pmqecn\nclasses: []\n")
    with pytest.raises(ConfigError, match=r"targets\[0\]\.config: .*leaf\.yaml: classes"):
        load_service_config(path)


# ---- the daemon's loop -------------------------------------------------------------


def test_the_first_push_is_one_batch_with_the_ports_first(tmp_path: Path) -> None:
    made: dict[str, Recording] = {}
    clock = Clock()
    d = Daemon(write_deploy(tmp_path / "d.yaml", pmqecn_target()), recording_factory(made), clock)
    d.step()
    sw = made["leaf1"]
    first = sw.batches[0]
    assert [w.dev_port for w in first[:3] if isinstance(w, PortWrite)] == [1, 2, 3]
    assert not any(isinstance(w, PortWrite) for w in first[3:])
    assert len(first) == len(d.targets["leaf1"].app.intended_writes())
    st = sw.read_port(3)
    assert st is not None and st.up and st.autoneg == "PM_AN_FORCE_DISABLE"


def test_cycles_follow_the_interval_and_sigterm_ends_the_loop(tmp_path: Path) -> None:
    made: dict[str, Recording] = {}
    clock = Clock()
    path = write_deploy(tmp_path / "d.yaml", pmqecn_target(interval_s=2.0))
    d = Daemon(path, recording_factory(made), clock, wait=clock.wait)
    waits = []

    def wait(event: threading.Event, timeout_s: float) -> None:
        waits.append(timeout_s)
        clock.wait(event, timeout_s)
        if len(waits) == 3:
            signal.raise_signal(signal.SIGTERM)  # as systemd stops the unit

    d._wait = wait
    with signal_handlers(d):
        d.run()
    assert waits == [2.0, 2.0, 2.0]
    # The stop came during the third wait: no cycle starts after it.
    assert d.targets["leaf1"].stats.cycles == 3
    assert d.stopping


def test_the_heap_is_settled_after_the_first_cycle_and_again_after_a_reload(
    tmp_path: Path,
) -> None:
    """What the daemon holds for good (apps, compiled problems) is frozen out
    of the collector's full passes once a cycle has run, re-settled after a
    reload (the old apps are garbage then), and released when it closes."""
    import gc

    made: dict[str, Recording] = {}
    clock = Clock()
    path = write_deploy(tmp_path / "d.yaml", pmqecn_target(interval_s=2.0))
    d = Daemon(path, recording_factory(made), clock)
    try:
        assert not d.heap_settled and gc.get_freeze_count() == 0
        d.step()
        assert d.targets["leaf1"].stats.cycles == 1
        assert d.heap_settled and gc.get_freeze_count() > 0
        d.request_reload()
        d.step()  # the reload, and the new app's first cycle
        assert d.reloads_ok == 1 and d.heap_settled
        d.reload()
        assert not d.heap_settled
    finally:
        d.close()
    assert gc.get_freeze_count() == 0


def test_a_switch_that_lost_its_state_without_losing_the_session_is_re_pushed(
    tmp_path: Path,
) -> None:
    made: dict[str, Recording] = {}
    clock = Clock()
    d = Daemon(write_deploy(tmp_path / "d.yaml", pmqecn_target()), recording_factory(made), clock)
    d.step()
    sw = made["leaf1"]
    routes = list(sw.model.table(LPM).entries)
    ports = dict(sw.ports)
    sw.restart()  # tables, registers and ports gone; the model "session" stays
    assert sw.read_port(1) is None and not sw.model.table(LPM).entries
    before = len(sw.batches)
    clock.now_s += 1.0
    d.step()
    t = d.targets["leaf1"]
    assert (t.restarts_detected, t.reconnects) == (1, 0)
    # One batch put everything back, ports first.
    assert len(sw.batches[before]) == len(t.app.intended_writes())
    assert isinstance(sw.batches[before][0], PortWrite)
    assert sw.model.table(LPM).entries == routes and dict(sw.ports) == ports


def test_a_signal_during_the_loops_wait_cannot_deadlock_it(tmp_path: Path) -> None:
    """A handler runs on the main thread, which may be inside Event.wait
    holding the event's lock. A handler that called Event.set() then waited
    on that lock forever (a daemon hung this way on SIGTERM). Here the
    handler is called while its own thread holds the wait's lock."""
    clock = Clock()
    d = Daemon(write_deploy(tmp_path / "d.yaml", pmqecn_target()), recording_factory({}), clock)
    returned = threading.Event()
    # signal.signal only works on the main thread: take the handlers there,
    # and call them (as the interpreter would) in a thread that can be
    # abandoned if it blocks.
    with signal_handlers(d):
        handlers = {s: signal.getsignal(s) for s in (signal.SIGHUP, signal.SIGTERM)}

    def inside_wait() -> None:
        with d._wake._cond:  # what Event.wait holds while a signal lands
            for signum, handler in handlers.items():
                assert callable(handler)
                handler(signum, None)
        returned.set()

    worker = threading.Thread(target=inside_wait, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert returned.is_set(), "a signal handler blocked on the loop's wait lock"
    # The loop acts on both: the reload at the next step, then the stop.
    assert d.stopping
    d.step()
    assert d.reloads_ok == 1
    d.run()  # returns at once: stopped
    assert d.targets["leaf1"].stats.cycles == 1


def test_sighup_reloads_between_cycles(tmp_path: Path) -> None:
    made: dict[str, Recording] = {}
    clock = Clock()
    path = write_deploy(tmp_path / "d.yaml", pmqecn_target())
    d = Daemon(path, recording_factory(made), clock)
    d.step()
    with signal_handlers(d):
        signal.raise_signal(signal.SIGHUP)
    assert d.reloads_ok == 0  # the handler only asks; the loop reloads
    d.step()
    assert d.reloads_ok == 1


def test_a_reload_writes_the_new_config_as_one_batch(tmp_path: Path) -> None:
    made: dict[str, Recording] = {}
    clock = Clock()
    t = pmqecn_target()
    path = write_deploy(tmp_path / "d.yaml", t)
    d = Daemon(path, recording_factory(made), clock)
    d.step()
    sw = made["leaf1"]
    app = d.targets["leaf1"].app
    routes = t["config"]["routes"]
    gone = routes.pop(3)  # 10.0.4.0/24
    t["config"]["classes"][0]["threshold_cells"] = 33
    t["front_panel"]["ports"].pop(1)  # 32/2
    write_deploy(path, t)
    before = len(sw.batches)
    d.request_reload()
    d.step()
    assert d.reloads_ok == 1 and d.reloads_failed == 0
    reload_batch = sw.batches[before]
    assert PortWrite(2, delete=True) in reload_batch
    assert sw.read_port(2) is None and sw.read_port(1) is not None
    from bfrt_controller.common import lpm

    assert sw.read_entry(LPM, {"hdr.ipv4.dst_addr": lpm(gone["prefix"])}) is None
    new_app = d.targets["leaf1"].app
    assert new_app is not app
    thr = sw.read_entry(ECN, {"hdr.bridged.class_id": Match(1), "ingress_pipe": Match(0)})
    assert thr is not None and thr.data["threshold_bytes"] == 33 * 80


def test_a_good_reload_on_the_fake_server_removes_what_the_old_config_alone_had(
    tmp_path: Path,
) -> None:
    d, fakes, clock = fleet(tmp_path)
    d.step()
    fake = fakes["s2"]
    assert len(fake.entries(LPM)) == 2 and set(fake.ports()) == {1, 2, 3}
    raw = yaml.safe_load((tmp_path / "fleet.yaml").read_text())
    s2 = raw["targets"][1]
    s2["config"]["routes"].pop(1)  # 10.0.1.0/24 towards S1
    s2["front_panel"]["ports"].pop(2)  # 32/3
    s2["config"]["params"]["threshold_packets"] = 20
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    s1_port_writes = [c for c in fakes["s1"].writes() if c.table == "$PORT"]
    d.request_reload()
    clock.now_s += 1.0
    d.step()
    assert (d.reloads_ok, d.reloads_failed) == (1, 0)
    assert len(fake.entries(LPM)) == 1
    assert set(fake.ports()) == {1, 2}
    assert d.targets["s2"].app.config.params.threshold_packets == 20
    # s1 was reloaded with an unchanged config: its switch saw no port writes.
    assert [c for c in fakes["s1"].writes() if c.table == "$PORT"] == s1_port_writes


def test_a_reload_adds_and_removes_switches(tmp_path: Path) -> None:
    d, fakes, clock = fleet(tmp_path)
    d.step()
    raw = yaml.safe_load((tmp_path / "fleet.yaml").read_text())
    raw["targets"] = [raw["targets"][1], pmqecn_target("m1")]
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    d.switch_factory = _with_model(d.switch_factory)
    d.request_reload()
    clock.now_s += 1.0
    d.step()
    assert list(d.targets) == ["s2", "m1"]
    assert fakes["s1"].switch.bound == {}  # s1's session let go of the program
    assert d.targets["m1"].connected and d.targets["s2"].connected


def _with_model(factory: Any) -> Any:
    def make(r: ResolvedTarget) -> Switch:
        if r.spec.target == "model":
            return Recording(r.spec.program, r.profile.chip)
        return factory(r)  # type: ignore[no-any-return]

    return make


def test_a_bad_reload_keeps_the_running_config_and_the_switch(tmp_path: Path) -> None:
    made: dict[str, Recording] = {}
    clock = Clock()
    t = pmqecn_target()
    path = write_deploy(tmp_path / "d.yaml", t)
    d = Daemon(path, recording_factory(made), clock)
    d.step()
    sw = made["leaf1"]
    app = d.targets["leaf1"].app
    held = sw.model.snapshot(), dict(sw.ports)
    t["config"]["classes"][0]["threshold_cells"] = 33
    t["front_panel"]["ports"][0]["speed"] = "100G"  # 32/1 is channel 1: no 100G there
    write_deploy(path, t)
    writes_before = len(sw.batches)
    d.request_reload()
    d.step()
    assert (d.reloads_ok, d.reloads_failed) == (0, 1)
    assert d.targets["leaf1"].app is app
    # Nothing was sent for the reload (the cycle's own writes are register clears).
    assert all(not any(isinstance(w, PortWrite) for w in b) for b in sw.batches[writes_before:])
    assert dict(sw.ports) == held[1]


def test_a_reload_the_switch_refuses_is_rolled_back_and_the_old_config_kept(
    tmp_path: Path,
) -> None:
    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("pmqecn", profile, address="leaf1:50052")
    t = pmqecn_target(target="grpc://leaf1:50052")
    path = write_deploy(tmp_path / "d.yaml", t)

    def factory(r: ResolvedTarget) -> Switch:
        return BfrtSwitch("pmqecn", r.profile, address="leaf1:50052", client_module=fake)

    d = Daemon(path, factory, Clock())
    d.step()
    app = d.targets["leaf1"].app
    held = fake.snapshot()
    t["config"]["classes"][0]["threshold_cells"] = 33
    write_deploy(path, t)
    fake.fail_write(ECN)  # the switch refuses the reload's threshold write
    d.request_reload()
    d.step()
    assert d.reload_batches_refused == 1 and d.reloads_failed == 1
    assert d.targets["leaf1"].app is app
    after = fake.snapshot()
    assert after[f"pipe.{ECN}"] == held[f"pipe.{ECN}"]
    assert after["$PORT"] == held["$PORT"]


# ---- a fleet ----------------------------------------------------------------------------


def fleet(tmp_path: Path) -> tuple[Daemon, dict[str, FakeBfrtGrpc], Clock]:
    profile = load_profile("tofino")
    fakes = {name: FakeBfrtGrpc("bfcc", profile, address=f"{name}:50052") for name in ("s1", "s2")}
    path = write_deploy(
        tmp_path / "fleet.yaml",
        bfcc_target("s1", "bfcc-two-tier-s1.yaml", "grpc://s1:50052"),
        bfcc_target("s2", "bfcc-two-tier-s2.yaml", "grpc://s2:50052"),
    )

    def factory(r: ResolvedTarget) -> Switch:
        address = r.spec.target.removeprefix("grpc://")
        return BfrtSwitch(
            "bfcc",
            r.profile,
            address=address,
            client_id=r.spec.client_id,
            client_module=fakes[r.name],
        )

    clock = Clock()
    return Daemon(path, factory, clock, wait=clock.wait), fakes, clock


def test_a_two_switch_fleet_survives_one_switch_restarting(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="tofcc")
    d, fakes, clock = fleet(tmp_path)
    d.step()
    s1, s2 = d.targets["s1"], d.targets["s2"]
    assert s1.connected and s2.connected
    pushed = fakes["s2"].snapshot()
    assert pushed["$PORT"]  # ports came up with the program
    fakes["s2"].restart()  # bf_switchd restarts: tables, ports and sessions gone
    assert fakes["s2"].snapshot() != pushed
    clock.now_s += 1.0
    d.step()
    assert s1.stats.cycles == 2 and s2.stats.cycles == 2
    assert s2.reconnects == 1 and s1.reconnects == 0
    assert fakes["s2"].snapshot() == pushed  # the whole intended state, ports too
    assert s1.stats.cycle_errors == s2.stats.cycle_errors == 0
    events = [r.getMessage() for r in caplog.records if r.name == "tofcc.service"]
    assert "event=reconnected switch=s2 repushed=True" in events
    assert not any("switch=s1" in e and "reconnected" in e for e in events)


def test_a_target_moved_to_another_switch_releases_the_old_one(tmp_path: Path) -> None:
    d, fakes, clock = fleet(tmp_path)
    d.step()
    assert fakes["s2"].switch.bound == {"bfcc": 0}
    raw = yaml.safe_load((tmp_path / "fleet.yaml").read_text())
    raw["targets"][1]["client_id"] = 7  # a new session for s2
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    d.request_reload()
    clock.now_s += 1.0
    d.step()
    # The old session let go of the program and the new one bound it.
    assert fakes["s2"].switch.bound == {"bfcc": 7}
    assert d.targets["s2"].connected


def test_an_unreachable_switch_backs_off_while_the_other_keeps_cycling(tmp_path: Path) -> None:
    d, fakes, clock = fleet(tmp_path)
    d.step()
    s1, s2 = d.targets["s1"], d.targets["s2"]
    fakes["s2"].down()
    for _ in range(6):
        clock.now_s += 1.0
        d.step()
    assert s1.stats.cycles == 7
    assert not s2.connected
    # Retries at 1, 2, 4 s...: fewer attempts than cycles of the healthy switch.
    assert 1 <= s2.stats.connect_failures < 6
    fakes["s2"].up()
    clock.now_s += 30.0
    d.step()
    assert s2.connected and s2.stats.cycles >= 2


# ---- metrics ------------------------------------------------------------------------------


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        text = resp.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_metrics_are_scraped_over_http(tmp_path: Path) -> None:
    made: dict[str, Recording] = {}
    path = write_deploy(
        tmp_path / "d.yaml",
        pmqecn_target("leaf1"),
        bfcc_target("s2", "bfcc-two-tier-s2.yaml"),
    )
    clock = Clock()
    d = Daemon(path, recording_factory(made), clock)
    d.step()
    leaf1 = made["leaf1"].model
    set_class_totals(leaf1, 1, 500, 600_000)  # traffic of class 1 (voice)
    clock.now_s += 1.0
    d.step()
    set_class_totals(leaf1, 1, 700, 800_000)  # after the cycle: not seen until the next
    server = serve(d, "127.0.0.1", 0)
    try:
        m = scrape(f"http://127.0.0.1:{server.server_port}/metrics")
    finally:
        server.shutdown()
        server.server_close()
    voice = (("class", "voice"), ("queue", "0"), ("switch", "leaf1"))
    # What the switch holds after the optimiser's cycle (K_i, weight, lambda_i*).
    sw = made["leaf1"]
    key = {"hdr.bridged.class_id": Match(1)}
    thr = sw.read_entry(ECN, {**key, "ingress_pipe": Match(0)})
    rates = sw.read_entry("SwitchIngress.class_rates", key)
    assert thr is not None and rates is not None
    assert thr.data["threshold_bytes"] != 20 * 80  # the optimiser moved K_1
    # K_i in bytes as the switch compares it: whole cells of 80 B (issue 52: bytes, not cells).
    assert m[("tofcc_class_ecn_threshold_bytes", voice)] == thr.data["threshold_bytes"] // 80 * 80
    assert m[("tofcc_class_weight", voice)] == sw.read_tm_weight(EGRESS_PORT, 0)
    assert m[("tofcc_class_target_rate_packets_per_second", voice)] == rates.data["target_rate"]
    # lambda_1: 500 packets over the 1 s interval.
    assert m[("tofcc_class_arrival_rate_packets_per_second", voice)] == 500
    assert ("tofcc_class_sojourn_seconds", voice) in m
    # Values are the last cycle's read-back: the counter moved after it.
    assert m[("tofcc_class_packets_total", voice)] == 500
    assert m[("tofcc_class_bytes_total", voice)] == 600_000
    assert m[("tofcc_cycles_total", (("switch", "leaf1"),))] == 2
    assert m[("tofcc_reconnects_total", (("switch", "s2"),))] == 0
    assert m[("tofcc_write_failures_total", (("switch", "s2"),))] == 0
    assert ("tofcc_cycle_duration_seconds", (("switch", "leaf1"),)) in m
    # Ports as the box names them (s2's board is tofino-32q), the device port beside.
    p2 = (("dev_port", "2"), ("port", "32/2"), ("switch", "s2"))
    p1 = (("dev_port", "1"), ("port", "32/1"), ("switch", "s2"))
    assert m[("tofcc_port_spoofed_source_drops_total", p2)] == 0
    assert ("tofcc_port_untrusted_feedback_drops_total", p1) in m
    assert ("tofcc_bfcc_signalled_degree", p2) in m
    up = (("dev_port", "3"), ("port", "32/3"), ("switch", "leaf1"))
    assert m[("tofcc_front_panel_port_up", up)] == 1
    assert m[("tofcc_config_reloads_total", (("result", "ok"),))] == 0
    for name, _ in m:
        assert name.startswith("tofcc_")


def test_bfcc_reaction_point_metrics(tmp_path: Path) -> None:
    made: dict[str, Recording] = {}
    path = write_deploy(tmp_path / "d.yaml", bfcc_target("s1", "bfcc-two-tier-s1.yaml"))
    d = Daemon(path, recording_factory(made), Clock())
    d.step()
    server = serve(d, "127.0.0.1", 0)
    try:
        m = scrape(f"http://127.0.0.1:{server.server_port}/metrics")
    finally:
        server.shutdown()
        server.server_close()
    rp = (("dev_port", "3"), ("port", "32/3"), ("switch", "s1"))
    assert m[("tofcc_bfcc_backpressure_messages_total", rp)] == 0
    assert ("tofcc_bfcc_slowed_degree", rp) in m


# ---- diff -------------------------------------------------------------------------------


def test_diff_shows_only_what_differs(tmp_path: Path) -> None:
    _, (r,) = load_service_config(write_deploy(tmp_path / "d.yaml", pmqecn_target()))
    sw = ModelSwitch("pmqecn", r.profile)
    app = make_target_app(r, sw)
    # An empty switch: entries, mirror sessions and ports to add, TM weights
    # off their power-on 1023; nothing unknown (mirror sessions are read back).
    assert {d.change for d in diff_writes(sw, app.intended_writes())} == {"add", "change"}
    app.push_all()
    assert diff_writes(sw, app.intended_writes()) == []
    t = pmqecn_target()
    t["config"]["classes"][0]["threshold_cells"] = 33
    t["front_panel"]["ports"][0]["autoneg"] = "enable"
    _, (r2,) = load_service_config(write_deploy(tmp_path / "d2.yaml", t))
    changed = [
        d
        for d in diff_writes(sw, make_target_app(r2, sw).intended_writes())
        if d.change != "unknown"
    ]
    # K_i is in the class's entry of each of the four ingress pipes.
    assert [(d.change, d.where.split(" [")[0]) for d in changed] == [
        ("change", "$PORT 1"),
        *[("change", ECN)] * 4,
    ]
    assert all("threshold_bytes=1600" in d.current for d in changed[1:])
    assert all("threshold_bytes=2640" in d.intended for d in changed[1:])


def test_apply_dry_run_and_diff_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.yaml"
    cfg = EXAMPLES / "pmqecn-tm-dwrr.yaml"
    assert tofcc(["--state", str(state), "apply", str(cfg)]) == 0
    saved = state.read_text()
    changed = yaml.safe_load(cfg.read_text())
    changed["classes"][0]["threshold_cells"] = 33
    new = tmp_path / "new.yaml"
    new.write_text(yaml.safe_dump(changed))
    capsys.readouterr()
    assert tofcc(["--state", str(state), "apply", "--dry-run", str(new)]) == 0
    out = capsys.readouterr().out
    # The row names the config field (issue 52); --raw names the table
    # entries: K_i is in the class's entry of each of the four ingress pipes.
    assert "4 change(s)" in out and "voice.threshold_cells" in out
    assert tofcc(["--state", str(state), "diff", "--raw", "--config", str(new)]) == 0
    assert "threshold_bytes=2640" in capsys.readouterr().out
    assert tofcc(["--state", str(state), "diff", "--config", str(cfg)]) == 0
    assert "no changes" in capsys.readouterr().out
    assert state.read_text() == saved


def test_run_refuses_a_bad_deployment_file_with_exit_2(tmp_path: Path) -> None:
    t = pmqecn_target()
    t["front_panel"]["ports"][0]["port"] = "40/0"
    assert tofcc(["run", "--config", str(write_deploy(tmp_path / "d.yaml", t))]) == 2


def test_diff_and_apply_take_a_deployment_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_deploy(tmp_path / "d.yaml", pmqecn_target("leaf1"))
    assert tofcc(["diff", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    # A model target starts empty: its ports and entries are all to add.
    assert "leaf1:" in out and "$PORT 1" in out and "add" in out
    assert tofcc(["apply", str(path)]) == 0
    assert "leaf1: applied" in capsys.readouterr().out


def test_ports_lists_each_switchs_front_panel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    path = write_deploy(tmp_path / "d.yaml", pmqecn_target("leaf1"))
    assert tofcc(["ports", "--config", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["leaf1"]
    # A model target holds nothing between commands: configured, not added, down.
    assert [(r["name"], r["dev_port"], r["speed"], r["up"]) for r in rows] == [
        ("32/1", 1, None, False),
        ("32/2", 2, None, False),
        ("32/3", 3, None, False),
    ]


def test_tofcc_run_as_a_process_serves_metrics_reloads_on_sighup_and_exits_on_sigterm(
    tmp_path: Path,
) -> None:
    """The CLI's wiring end to end: real signals to a real process."""
    import os
    import queue
    import re
    import subprocess
    import sys
    import time

    path = write_deploy(tmp_path / "d.yaml", bfcc_target("s1", "bfcc-two-tier-s1.yaml"))
    TOFCC = [sys.executable, "-m", "bfrt_controller.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [*TOFCC, "run", "--config", str(path), "--metrics-port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    # A reader thread, so a daemon that stops talking fails the test after the
    # timeout instead of blocking readline() (and the suite) forever.
    incoming: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            incoming.put(line)
        incoming.put(None)

    threading.Thread(target=read, daemon=True).start()

    def wait_for(pattern: str, timeout_s: float = 60.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = incoming.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            lines.append(line)
            if m := re.search(pattern, line):
                return m
        raise AssertionError(f"no {pattern!r} in:\n{''.join(lines)}")

    try:
        url = wait_for(r"event=metrics url=(\S+)").group(1)
        wait_for(r"event=connected switch=s1")
        deadline = time.monotonic() + 30
        while True:
            m = scrape(url)
            if m.get(("tofcc_cycles_total", (("switch", "s1"),)), 0) >= 1:
                break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        proc.send_signal(signal.SIGHUP)
        wait_for(r"event=reloaded switches=s1 refused=0")
        proc.send_signal(signal.SIGTERM)
        wait_for(r"event=stopped")
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_cycle_runs_with_the_collector_held_and_collects_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's collector is off while an app's cycle runs (its short-lived
    objects are freed by reference counting) and its young generations are
    collected once the cycle is done (service.collect_after_cycle)."""
    import gc

    from bfrt_controller.pmqecn.app import PmqecnApp

    made: dict[str, Recording] = {}
    d = Daemon(
        write_deploy(tmp_path / "d.yaml", pmqecn_target("leaf1")), recording_factory(made), Clock()
    )
    during: list[bool] = []
    cycle = PmqecnApp.service_cycle

    def spy(self: PmqecnApp, now_s: float) -> int:
        during.append(gc.isenabled())
        return cycle(self, now_s)

    collected: list[int] = []
    collect = gc.collect

    def counted(generation: int = 2) -> int:
        collected.append(generation)
        return collect(generation)

    monkeypatch.setattr(PmqecnApp, "service_cycle", spy)
    monkeypatch.setattr(gc, "collect", counted)
    d.step()
    assert during == [False]
    assert gc.isenabled()
    assert 1 in collected
