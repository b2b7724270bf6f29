# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 50, deliver 1: the reference model runs the pipes a board has.

Registers and counters per pipe, tables and mirror sessions shared; ingress
in the arrival port's pipe, egress in the departure port's, mirror copies
in their session port's pipe, a recirculated packet back in the pipe of its
recirculation port, a resubmitted one in its ingress pipe; the control
plane reading pipes as BF-Runtime does. Every shared vector runs in the last
pipe of each board's switch. The behaviours issue 50 found wrong, as they
are now, are in tests/test_multipipe_spie.py, tests/test_multipipe_bfcc.py
and tests/test_multipipe_pmqecn.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from multipipe_cases import (
    HOST_GROUP,
    LAST_SPIE_SLOT,
    LOW_QID,
    MS,
    PI_PROB,
    PIE_PORT,
    PIE_SLOT,
    REACTION_PORT,
    backpressure,
    bfcc_host_packet,
    bfcc_on,
    frame,
    last_spie_port,
    pie_deep_queue_p,
    pin_random,
    pmqecn_marked,
    pmqecn_on,
    port_in,
    sender_net,
    spie_on,
    spie_send,
)

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.errors import WriteError
from bfrt_controller.switch import RegisterWrite
from doubles.backends import both_backends
from hw_profiles import load_profile
from hw_profiles.boards import load_board
from models import speedups
from models.switch.core import MirrorSession, P4ModelError
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.switch.timeline import Timeline
from models.switch.tna import TnaProgram
from models.vectors.format import (
    DEFAULT_VECTOR_ROOT,
    Vector,
    VectorFile,
    VectorFormatError,
    load_vector_file,
    parse_vector_file,
    vector_files,
)
from models.vectors.runner import apply_setup, apply_write, run_vector
from ptf_tests.common.ports import PortMappedTarget

PIPES = [2, 4]
BOARDS = ["tofino-32q", "tofino-64q", "tofino2-32d"]


def test_multipipe_boards_run_their_pipes() -> None:
    """A 32 x 100G Tofino wires 2 pipes, a 64 x 100G one and a 32 x 400G
    Tofino2 all 4: the model runs as many."""
    assert {b: load_board(b).pipes for b in BOARDS} == {
        "tofino-32q": 2,
        "tofino-64q": 4,
        "tofino2-32d": 4,
    }


@pytest.mark.parametrize("pipes", [0, 3, 8])
def test_multipipe_pipe_counts_no_chip_has_are_refused(pipes: int) -> None:
    model = make_model("bfcc", load_profile("tofino"))
    with pytest.raises(P4ModelError, match=f"{pipes} pipes"):
        model.set_pipes(pipes)


# ---- every shared vector, in the last pipe of each board ---------------------


def _cases() -> list[tuple[Path, VectorFile, Vector]]:
    out = []
    for path in vector_files(DEFAULT_VECTOR_ROOT):
        vfile = load_vector_file(path)
        out.extend((path, vfile, v) for v in vfile.vectors if v.pipes == 1)
    return out


CASES = _cases()


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize(
    ("path", "vfile", "vector"),
    CASES,
    ids=[f"{p.parent.name}/{p.stem}/{v.name}" for p, _, v in CASES],
)
def test_multipipe_shared_vector_in_the_last_pipe(
    board: str, path: Path, vfile: VectorFile, vector: Vector
) -> None:
    """The vector, its ports moved into the board's last pipe (the pipe's
    recirculation port, its copy of each register), passes as on one pipe;
    the other pipes keep what the control plane wrote (setup and step
    writes) and count nothing."""
    b = load_board(board)
    profile = load_profile(b.chip)
    last = b.pipes - 1
    hook = PROGRAMS[vfile.program].queue_hook
    model = make_model(vfile.program, profile, b.pipes)
    run_vector(
        PortMappedTarget(ModelTarget(model, pipe=last), profile, model, pipe=last),
        vfile,
        vector,
        hook,
    )
    written = make_model(vfile.program, profile, b.pipes)
    target = PortMappedTarget(ModelTarget(written, pipe=last), profile, written, pipe=last)
    target.reset()
    apply_setup(target, vfile.setup)
    apply_setup(target, vector.setup)
    # A step's write (the AQM family's switch) is the control plane's too.
    for step in vector.steps:
        if step.write is not None:
            apply_write(target, step.write)
    for pipe in range(last):
        for name, r in model.p4.registers.items():
            assert r.copies()[pipe] == written.p4.registers[name].copies()[pipe], (pipe, name)
        for name, c in model.p4.counters.items():
            packets, _ = c.copies()[pipe]
            assert not any(packets), (pipe, name)


# ---- where each pass runs ----------------------------------------------------


def _spy_pipes(model: TnaProgram) -> list[tuple[str, int, int]]:
    """(gress, port, pipe whose state it used) for every pass from now on."""
    seen: list[tuple[str, int, int]] = []
    ingress, egress = model.ingress, model.egress

    def spy_ingress(md: Any, data: bytes) -> Any:
        seen.append(("ingress", md.ingress_port, model.active_pipe))
        return ingress(md, data)

    def spy_egress(md: Any, data: bytes) -> Any:
        seen.append(("egress", md.egress_port, model.active_pipe))
        return egress(md, data)

    model.ingress = spy_ingress  # type: ignore[method-assign]
    model.egress = spy_egress  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_bfcc_host_in_the_reaction_points_pipe_is_slowed(pipes: int) -> None:
    """Hosts in the reaction port's pipe see its backpressure: the named
    group takes the low queue and is cut by fakes (RT 1 at severe), its
    departures counted in the reaction port's egress pipe."""
    _app, model = bfcc_on(pipes, host_pipes=[0])
    model.send(REACTION_PORT, backpressure(HOST_GROUP, degree=3))
    port, data = bfcc_host_packet(0)
    outs = [o for _ in range(10) for o in model.send(port, data) if o.port == REACTION_PORT]
    assert outs and all(o.qid == LOW_QID for o in outs)
    flagged = model.counter("SwitchEgress.flagged_departures")
    assert flagged.read_pipe(0, REACTION_PORT)[0] >= 10
    assert all(flagged.read_pipe(p, REACTION_PORT)[0] == 0 for p in range(1, pipes))


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_fakes_recirculate_through_the_reaction_points_pipe(pipes: int) -> None:
    """A fake's original recirculates through the reaction port's pipe's
    recirculation port and re-enters ingress in that pipe; the sender's
    ingress runs in its own pipe, every egress in its port's pipe."""
    _app, model = bfcc_on(pipes, host_pipes=[0])
    model.send(REACTION_PORT, backpressure(HOST_GROUP, degree=3))
    seen = _spy_pipes(model)
    port, data = bfcc_host_packet(0)
    for _ in range(4):
        model.send(port, data)
    recirculation = model.profile.recirculation_ports[0]
    assert ("ingress", recirculation, 0) in seen
    assert all(pipe == model.pipe_of(p) for _, p, pipe in seen)


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_spie_update_goes_round_every_pipe_once(pipes: int) -> None:
    """The PI step of a port in pipe 0 mirrors its update to pipe 0's
    recirculation port; from there it goes round every pipe's
    recirculation port, each re-entering its own pipe's ingress, and stops
    when the next stop would be pipe 0 again: p reaches every ingress copy
    (the update_ports ring the controller writes; issue 50 finding 1)."""
    _app, model = spie_on(pipes)
    seen = _spy_pipes(model)
    spie_send(model, 16 * MS, 30 * MS, pipe=0, port=PIE_PORT)
    p = model.register(PI_PROB).read_pipe(0, PIE_SLOT)
    assert p > 0
    ingress_prob = model.register("SwitchIngress.prob").read_pipes(PIE_SLOT)
    assert ingress_prob == [p >> 1] * pipes
    for pipe in range(pipes):
        recirculation = model.profile.recirculation_ports[pipe]
        assert ("egress", recirculation, pipe) in seen and ("ingress", recirculation, pipe) in seen
    recirculated = [
        e for e in seen if e[0] == "ingress" and e[1] in model.profile.recirculation_ports
    ]
    assert len(recirculated) == pipes  # once round, no loop
    assert all(pipe == model.pipe_of(port) for _, port, pipe in seen)


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_spie_resubmitted_packet_stays_in_its_ingress_pipe(pipes: int) -> None:
    """S-PIE on a port of the last pipe, p raised by its own pipe's sender:
    a counted packet it drops there is resubmitted to be uncounted, and
    both passes run in the last pipe; no other pipe's sketch moves. (Mode
    spie_pie: the 25 ms queue is congested, where Algorithm 2 alone would
    admit a small flow.)"""
    _app, model = spie_on(pipes, "spie_pie", alpha_per_s=4.0, beta_per_s=8.0)
    last, port = pipes - 1, last_spie_port(pipes)
    spie_send(model, 16 * MS, 25 * MS, pipe=last, port=port)
    assert model.register("SwitchIngress.prob").read_pipe(last, LAST_SPIE_SLOT) > 0
    pin_random(model, port_in(last, 1), 0)  # below any p: dropped
    passes: list[tuple[bool, int]] = []
    ingress_pass = model.ingress_pass  # type: ignore[attr-defined]

    def spy(md: Any, data: bytes, digest: Any) -> Any:
        passes.append((digest is not None, model.active_pipe))
        return ingress_pass(md, data, digest)

    model.ingress_pass = spy  # type: ignore[attr-defined]
    rows = [model.register(f"SwitchIngress.sketch_row{i}") for i in range(3)]
    before = [r.copies() for r in rows]
    assert not spie_send(model, 16 * MS + 1000, 25 * MS, pipe=last, port=port)
    # The second pass comes a resubmission later (models/switch/spie.py).
    model.run_resubmitted()  # type: ignore[attr-defined]
    assert passes == [(False, last), (True, last)]
    for r, was in zip(rows, before, strict=True):
        assert r.copies()[:last] == was[:last]


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_feedback_copy_leaves_in_its_session_ports_pipe(pipes: int) -> None:
    """PMQECN's feedback is an ingress mirror copy: made in the sender's
    ingress pipe, its egress runs in the pipe of its session's port (the
    sender's host port, here in the last pipe)."""
    app, model = pmqecn_on(pipes)
    seen = _spy_pipes(model)
    last = pipes - 1
    assert pmqecn_marked(app, model, [last], load=1.5, packets=60) > 0
    sender = port_in(last, 1)
    assert ("egress", sender, last) in seen
    assert all(pipe == model.pipe_of(port) for _, port, pipe in seen)


# ---- PMQECN's virtual queue: one pipe's load ---------------------------------


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_class_over_its_rate_in_one_pipe_is_marked(pipes: int) -> None:
    app, model = pmqecn_on(pipes)
    assert pmqecn_marked(app, model, [pipes - 1], load=1.5) > 0


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_pmqecn_class_under_its_rate_over_every_pipe_is_not_marked(pipes: int) -> None:
    app, model = pmqecn_on(pipes)
    assert pmqecn_marked(app, model, list(range(pipes)), load=0.8) == 0


# ---- S-PIE in time order ------------------------------------------------------


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_spie_p_builds_from_its_own_pipes_steps(pipes: int) -> None:
    """Steps taken by packets of the port's own pipe raise p step after
    step (30 ms against 15 ms), and p reaches that pipe's ingress."""
    _app, model = spie_on(pipes)
    last = 0
    for k in range(1, 11):
        spie_send(model, k * 15 * MS + 1, 30 * MS, pipe=0, port=PIE_PORT)
        p = model.register(PI_PROB).read_pipe(0, PIE_SLOT)
        assert p > last
        assert model.register("SwitchIngress.prob").read_pipe(0, PIE_SLOT) == p >> 1
        last = p


@pytest.mark.parametrize("pipes", PIPES)
def test_multipipe_spie_queue_within_the_stale_limit_keeps_raising_p(pipes: int) -> None:
    """Time-ordered, a 30 ms queue (below stale_after - T_update = 45 ms):
    each update reaches ingress fresh, so p rises all along. (At 50 ms it
    did not before issue 50: tests/test_multipipe_spie.py.)"""
    middle, end = pie_deep_queue_p(pipes, 30, [0])
    assert middle > 0.02
    assert end > middle + 0.02


def test_multipipe_timeline_runs_egress_at_departure() -> None:
    """A packet that waits 5 ms leaves 5 ms after it arrived, and egress
    measures that wait as its sojourn (PIE's del_old after a step)."""
    _app, model = spie_on(2)
    timeline = Timeline(model, lambda port, qid, now: 5 * MS if port == PIE_PORT else 0)
    timeline.send(20 * MS, port_in(1, 1), frame(f"{sender_net(1)}.1", "10.0.4.4"))
    out = timeline.run()
    assert [(e.time_ns, e.output.port) for e in out] == [(25 * MS, PIE_PORT)]
    assert model.register("SwitchEgress.del_old").read_pipe(0, PIE_SLOT) == 5 * MS >> 10
    timeline.close()
    assert model.tm is None


# ---- ports of pipes the switch does not run ----------------------------------


def test_multipipe_ports_of_pipes_a_two_pipe_switch_lacks() -> None:
    model = make_model("bfcc", load_profile("tofino"), 2)
    assert model.has_port(port_in(1, 5)) and not model.has_port(port_in(2, 5))
    with pytest.raises(P4ModelError, match="pipe 2"):
        model.send(port_in(2, 1), frame("10.0.1.1", "10.0.3.3"))
    with pytest.raises(P4ModelError, match="ucast_egress_port"):
        model.mirror_session_add(MirrorSession(5, port_in(3, 0)))


# ---- the control plane ---------------------------------------------------------


def test_multipipe_snapshot_and_restore_keep_every_pipe() -> None:
    model = make_model("bfcc", load_profile("tofino"), 4)
    bp = model.register("SwitchIngress.bp_state")
    bp.put_pipes(3, [1, 2, 3, 4])
    model.counter("SwitchEgress.fakes_sent").select_pipe(2)
    model.counter("SwitchEgress.fakes_sent").count(3, 100)
    snap = model.snapshot()
    bp.write_all(3, 9)
    model.reset()
    model.restore(snap)
    assert bp.read_pipes(3) == [1, 2, 3, 4]
    assert model.counter("SwitchEgress.fakes_sent").read(3) == (1, 100)


@pytest.mark.parametrize("fast", [True, False])
def test_multipipe_refused_batch_puts_every_pipe_back(
    fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(speedups, "ENABLED", fast)
    switch = ModelSwitch("bfcc", load_profile("tofino"), 4)
    bp = switch.model.register("SwitchIngress.bp_state")
    bp.put_pipes(3, [1, 2, 3, 4])
    with pytest.raises(WriteError):
        switch.write(
            [RegisterWrite("SwitchIngress.bp_state", 3, 7), RegisterWrite("nonexistent", 0, 1)]
        )
    assert bp.read_pipes(3) == [1, 2, 3, 4]
    switch.write([RegisterWrite("SwitchIngress.bp_state", 3, 7)])
    assert bp.read_pipes(3) == [7, 7, 7, 7]


def test_multipipe_model_reads_pipes_as_bf_runtime_does() -> None:
    """The model switch of 4 pipes and BF-Runtime (the fake SDE, 4 pipes)
    answer alike: a register summed over the pipes, or one pipe's, or every
    pipe's; a counter summed; a write reaching every pipe."""
    [_, (bfrt, fake)] = both_backends("bfcc")
    model = ModelSwitch("bfcc", load_profile("tofino"), 4)
    assert fake is not None
    name, counter = "SwitchIngress.bp_state", "SwitchEgress.fakes_sent"
    for switch in (model, bfrt):
        switch.write([RegisterWrite(name, 5, 0x0102)])
    for pipe, value in enumerate([1, 0, 3, 0x10]):
        fake.set_register(name, 6, value, pipe)
        fake.count(counter, 6, pipe + 1, 100 * (pipe + 1), pipe)
    model.model.register(name).put_pipes(6, [1, 0, 3, 0x10])
    c = model.model.counter(counter)
    for pipe in range(4):
        c.select_pipe(pipe)
        for _ in range(pipe + 1):
            c.count(6, 100)
    for switch in (model, bfrt):
        assert switch.read_register_pipes(name, 5) == [0x0102] * 4  # type: ignore[attr-defined]
        assert switch.read_register(name, 5) == 4 * 0x0102
        assert switch.read_register_pipes(name, 6) == [1, 0, 3, 0x10]  # type: ignore[attr-defined]
        assert switch.read_register(name, 6) == 0x14
        assert switch.read_register(name, 6, pipe=2) == 3  # type: ignore[call-arg]
        assert switch.read_registers(name, [5, 6]) == [4 * 0x0102, 0x14]
        # A packets counter: BF-Runtime has no byte count for it.
        assert switch.read_counter(counter, 6)[0] == 10


# ---- vectors of several pipes -------------------------------------------------


def _vector_file(**vector: Any) -> dict[str, Any]:
    step = {"send": {"port": 1, "packet": {"hex": "00" * 60}}, "expect": []}
    return {
        "program": "bfcc",
        "vectors": [{"name": "v", "description": "d", "steps": [step], **vector}],
    }


def test_multipipe_vector_of_several_pipes_is_model_only() -> None:
    with pytest.raises(VectorFormatError, match="model_only"):
        parse_vector_file(_vector_file(pipes=2), "f.yaml")
    assert parse_vector_file(_vector_file(pipes=2, model_only=True), "f.yaml").vectors[0].pipes == 2
    with pytest.raises(VectorFormatError, match="pipe 2"):
        parse_vector_file(
            _vector_file(
                pipes=2,
                model_only=True,
                registers=[{"register": "r", "index": 0, "value": 0, "pipe": 2}],
            ),
            "f.yaml",
        )
    with pytest.raises(VectorFormatError, match="every pipe"):
        parse_vector_file(
            _vector_file(
                setup={"registers": [{"register": "r", "index": 0, "value": 0, "pipe": 1}]}
            ),
            "f.yaml",
        )
    with pytest.raises(VectorFormatError, match="pipes"):
        parse_vector_file(_vector_file(pipes=3, model_only=True), "f.yaml")


def test_multipipe_vectors_exist_for_the_format() -> None:
    """The shared vectors use the pipes field (selected by -k multipipe)."""
    several = [
        v.name
        for p in vector_files(DEFAULT_VECTOR_ROOT)
        for v in load_vector_file(p).vectors
        if v.pipes > 1
    ]
    assert len(several) >= 2 and all(name.startswith("multipipe_") for name in several)
