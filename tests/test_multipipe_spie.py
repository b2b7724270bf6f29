# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 50, findings 1 and 2: S-PIE on a switch of 2 or 4 pipes.

PIE's p and its freshness reach every ingress pipe (the update goes round
the pipes' recirculation ports: tna/spie/spie.p4 pass_update), and an
update is stamped with its step's departure, so a queue of any depth keeps
its AQM. Each failed on the P4 and model before (p went 0.0562 -> 0.0019
after one step from another pipe; a 50 ms queue held p at 0.0042).
"""

from __future__ import annotations

import pytest
import yaml
from multipipe_cases import (
    PIE_PORT,
    pie_deep_queue_p,
    pin_random,
    port_in,
    spie_on,
    spie_send,
)

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.spie import names as n
from bfrt_controller.spie.app import SpieApp
from bfrt_controller.spie.config import DEFAULT_CONFIG, parse_config
from doubles import FakeBfrtGrpc
from hw_profiles import load_profile

MS = 1_000_000
PIPES = [2, 4]
SLOT_SPIE, SLOT_PIE = 0, 1  # the default config's ports 3 and 4


# ---- finding 1: S-PIE's state reaches every ingress pipe ---------------------


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_spie_step_by_another_pipes_packet_continues_p(pipes: int) -> None:
    """A 30 ms queue against PIE's 15 ms reference raises p at every step;
    the step a packet from another pipe takes raises it too, instead of
    restarting it from 0 as if the queue had been idle (issue: 0.056 ->
    0.0019)."""
    _app, model = spie_on(pipes)
    for k in range(1, 11):
        spie_send(model, k * 15 * MS + 1, 30 * MS, pipe=0)
    before = model.register(n.PI_PROB).read_pipe(0, SLOT_SPIE)
    assert before > 0.04 * 2**32
    spie_send(model, 11 * 15 * MS + 1, 30 * MS, pipe=pipes - 1)
    after = model.register(n.PI_PROB).read_pipe(0, SLOT_SPIE)
    assert after > before, f"p {before / 2**32:.4f} -> {after / 2**32:.4f}"


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_spie_arrivals_from_another_pipe_meet_p(pipes: int) -> None:
    """PIE's p, raised by a long queue, drops packets at about rate p
    whichever pipe they arrive in (plain PIE port: no large-flow test)."""
    _app, model = spie_on(pipes, alpha_per_s=4.0, beta_per_s=8.0)
    spie_send(model, 16 * MS, 25 * MS, pipe=0, port=PIE_PORT)
    p = model.register(n.PI_PROB).read_pipe(0, SLOT_PIE) / 2**32
    assert 0.2 < p < 0.8
    last = pipes - 1
    pin_random(model, port_in(last, 1), None)
    passed = sum(
        spie_send(model, 16 * MS + i * 1000, 25 * MS, pipe=last, port=PIE_PORT)
        for i in range(1, 1001)
    )
    assert passed / 1000 == pytest.approx(1 - p, abs=0.06)


# ---- finding 2: a deep queue keeps its AQM -----------------------------------


@pytest.mark.parametrize("pipes", PIPES)
@pytest.mark.parametrize("delay_ms", [50, 70])
def test_multipipe_spie_deep_queue_keeps_raising_p(pipes: int, delay_ms: int) -> None:
    """A queue held at 50 or 70 ms, far above PIE's 15 ms reference: every
    step raises p by about alpha x (delay - reference) (0.125/s x 35 ms =
    0.0044 a step, 40 steps in 0.6 s), so p keeps growing. Today every
    update is already stale when it reaches ingress (it carries the
    stepping packet's arrival time), arrivals are marked idle and each step
    restarts p: it stays at one step's worth."""
    middle, end = pie_deep_queue_p(pipes, delay_ms, [0])
    assert middle > 0.05
    assert end > middle + 0.05


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_spie_ring_over_the_pipes_the_device_reports(pipes: int) -> None:
    """On a switch, the controller builds the update ring from the device's
    own pipe count (`tf1.dev.device_configuration` num_pipes): a 2-pipe
    Tofino's ring is pipes 0 and 1 only, and a recirculation port of a pipe
    the board lacks passes nothing on."""

    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("spie", profile, pipes=pipes)
    sw = BfrtSwitch("spie", profile, client_module=fake)
    sw.connect()
    assert sw.pipe_count() == pipes
    SpieApp(sw, parse_config(yaml.safe_load(DEFAULT_CONFIG.read_text()))).push_all()
    entries = fake.entries(n.UPDATE_PORTS)
    ring = profile.recirculation_ports
    for k, port in enumerate(ring):
        _action, data = entries[(("ig_intr_md.ingress_port", "e", port),)]
        expected = ring[(k + 1) % pipes] if k < pipes else port
        assert data == {"next_port": expected}, (port, data)
