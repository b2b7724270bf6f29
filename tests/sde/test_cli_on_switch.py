# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc one-shot commands and the supervisor against a BF-Runtime switch (the
fake), issue 12 points 3 and 4: commands start from what the switch holds,
repair a switch that lost its state, and leave a running writer alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bfrt_controller.backends import bfrt
from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.config import DEFAULT_CONFIG as BFCC_DEFAULT
from bfrt_controller.bfcc.config import parse_config as parse_bfcc
from bfrt_controller.cli import cli
from bfrt_controller.pmqecn import names as n
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG, parse_config
from bfrt_controller.supervisor import Supervisor
from bfrt_controller.sync import carriers, holds_state, sync_with_switch
from bfrt_controller.validation import load_yaml
from doubles import FakeBfrtGrpc
from hw_profiles import load_profile
from models.switch.core import Match

TARGET = "grpc://localhost:50052"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeBfrtGrpc:
    f = FakeBfrtGrpc("pmqecn", load_profile("tofino"))
    monkeypatch.setattr(bfrt.client, "load_bfrt_client", lambda: f)
    return f


def tofcc(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["--state", str(tmp_path / "s.yaml"), "--target", TARGET, *args]
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        return 1, f"{result.output}{type(result.exception).__name__}: {result.exception}"
    return result.exit_code, result.output


def threshold_on_switch(fake: FakeBfrtGrpc, class_id: int) -> int:
    entries = fake.entries(n.ECN_THRESHOLD)
    # One entry per ingress pipe (issue 50), each holding the class's K_i.
    held = {int(p["threshold_bytes"]) for k, (_, p) in entries.items() if k[0][2] == class_id}
    (threshold_bytes,) = held
    # The switch holds K_i in bytes; the controller speaks cells.
    return threshold_bytes // load_profile("tofino").cell_bytes


def test_set_threshold_diffs_against_the_switch_not_the_config(
    fake: FakeBfrtGrpc, tmp_path: Path
) -> None:
    assert tofcc(tmp_path, "apply", str(DEFAULT_CONFIG))[0] == 0
    code, out = tofcc(tmp_path, "set-threshold", "voice=33")
    assert code == 0, out
    assert threshold_on_switch(fake, 1) == 33
    # The config says 20: a one-shot command that trusted it would see no change.
    code, out = tofcc(tmp_path, "set-threshold", "voice=20")
    assert code == 0, out
    assert "nothing changed" not in out
    assert "33" in out
    assert threshold_on_switch(fake, 1) == 20


def test_one_shot_command_repairs_a_restarted_switch(fake: FakeBfrtGrpc, tmp_path: Path) -> None:
    assert tofcc(tmp_path, "apply", str(DEFAULT_CONFIG))[0] == 0
    full = fake.snapshot()
    fake.restart()
    code, out = tofcc(tmp_path, "set-weight", "voice=6")
    assert code == 0, out
    assert "pushed the whole intended state" in out
    # Routes, trusted ports and mirror sessions are back, not only the class entries.
    assert fake.snapshot() == full
    assert len(fake.entries("SwitchIngress.forward.ipv4_lpm")) == 5
    assert set(fake.mirror_sessions()) == {11, 12, 13}


def test_status_reads_while_a_writer_holds_the_switch(fake: FakeBfrtGrpc, tmp_path: Path) -> None:
    cfg = parse_config(load_yaml(DEFAULT_CONFIG), str(DEFAULT_CONFIG))
    writer = BfrtSwitch("pmqecn", load_profile("tofino"), client_module=fake)
    writer.connect()
    PmqecnApp(writer, cfg).push_all()
    code, out = tofcc(tmp_path, "status", "--json")
    assert code == 0, out
    assert '"threshold_cells": 20' in out
    # A second writer is refused (tofcc exits 6, SwitchBusy) and says why.
    code, out = tofcc(tmp_path, "--client-id", "3", "set-threshold", "voice=30")
    assert code != 0
    assert out.startswith("SwitchBusy") and "one writer per program" in out.lower()
    assert threshold_on_switch(fake, 1) == 20


def test_client_id_is_configurable(fake: FakeBfrtGrpc, tmp_path: Path) -> None:
    assert tofcc(tmp_path, "--client-id", "5", "apply", str(DEFAULT_CONFIG))[0] == 0
    # The command ended and released its id and its bind.
    assert fake.switch.clients == {} and fake.switch.bound == {}


def test_carriers_map_live_values_to_entry_fields(fake: FakeBfrtGrpc) -> None:
    cfg = parse_config(load_yaml(DEFAULT_CONFIG), str(DEFAULT_CONFIG))
    sw = BfrtSwitch("pmqecn", load_profile("tofino"), client_module=fake)
    sw.connect()
    found = carriers(PmqecnApp(sw, cfg))
    # One entry per ingress pipe (issue 50).
    places = found[("1", "threshold_cells")]
    assert len(places) == load_profile("tofino").pipes
    where = places[0]
    cell_bytes = load_profile("tofino").cell_bytes
    assert where[0][1] == n.ECN_THRESHOLD and where[1:] == ("threshold_bytes", cell_bytes)
    assert ("1", "sojourn_ns") not in found  # a measurement, not written


def test_bfcc_set_adopts_live_params(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = FakeBfrtGrpc("bfcc", load_profile("tofino"))
    monkeypatch.setattr(bfrt.client, "load_bfrt_client", lambda: fake)
    cfg = parse_bfcc(load_yaml(BFCC_DEFAULT), str(BFCC_DEFAULT))
    sw = BfrtSwitch("bfcc", load_profile("tofino"), client_module=fake)
    sw.connect()
    app = BfccApp(sw, cfg)
    app.push_all()
    name = "window_packets"
    original = getattr(app.params, name)
    app.set_params({name: original + 3})
    sw.close()
    fresh = BfrtSwitch("bfcc", load_profile("tofino"), client_module=fake)
    fresh.connect()
    again = BfccApp(fresh, cfg)
    report = sync_with_switch(again)
    assert getattr(again.params, name) == original + 3
    assert report.missing == 0
    assert report.adopted[f"params/{name}"] == (original, original + 3)


def test_supervisor_notices_a_restart_between_cycles(fake: FakeBfrtGrpc) -> None:
    cfg = parse_config(load_yaml(DEFAULT_CONFIG), str(DEFAULT_CONFIG))
    sw = BfrtSwitch("pmqecn", load_profile("tofino"), client_module=fake)
    sw.connect()
    app = PmqecnApp(sw, cfg)
    app.push_all()
    full = fake.snapshot()
    sup = Supervisor(app, probe=lambda: holds_state(app), sleep=lambda _: None)
    # A restarted bf_switchd whose new session is already in place: no RPC
    # fails, the tables are just empty, and the cycle writes nothing.
    fake.switch.state = fake.switch.fresh_state()
    assert sup.run(lambda: "cycle without writes") == "cycle without writes"
    assert sup.restarts_detected == 1
    assert fake.snapshot() == full
    key = {n.K_CLASS_ID: Match(1), n.K_INGRESS_PIPE: Match(0)}
    assert app.switch.read_entry(n.ECN_THRESHOLD, key) is not None
