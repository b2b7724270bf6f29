# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 48: a program's compiled core (models/switch/native) decides every
packet as its Python model does. Every shared and p4testgen vector of the
program runs on the core, on the Python model with the other speed-ups, and
on the reference path; all three must pass and end in the same registers and
counters. Random frames (odd ones included: truncated, options, fragments,
TTL 1, forged feedback, spoofed sources, two pipes) must give
the same results, the same errors and the same state, and the core must have
decided nearly all of them itself (a core that hands every packet back would
pass the rest).

The core is C++ in the same process: where cppyy is installed (the eval
extra) these tests run, and fail if the core does not compile."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from native_cases import SKIPS, Decided, outcome, paths, random_frame, spie_frame, state
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from bfrt_controller.bfcc.app import BfccApp
from bfrt_controller.bfcc.config import DEFAULT_CONFIG as DEFAULT_BFCC
from bfrt_controller.bfcc.config import parse_config as parse_bfcc
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG as DEFAULT_PMQECN
from bfrt_controller.pmqecn.config import parse_config as parse_pmqecn
from bfrt_controller.spie.app import SpieApp
from bfrt_controller.spie.config import DEFAULT_CONFIG as DEFAULT_SPIE
from bfrt_controller.spie.config import parse_config as parse_spie
from doubles.flaky_model import FlakyModelSwitch
from hw_profiles import load_profile
from models.switch import native
from models.switch.core import Match
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.switch.tna import EgressIntrinsic, IngressIntrinsic, TnaProgram
from models.vectors.format import (
    DEFAULT_VECTOR_ROOT,
    Vector,
    VectorFile,
    generated_files,
    load_vector_file,
    vector_files,
)
from models.vectors.runner import run_vector

pytestmark = SKIPS


def test_the_cores_compile_where_cppyy_is_installed() -> None:
    assert native.available(), "cppyy is installed but the compiled cores did not load"
    for program in native.PROGRAMS:
        model = make_model(program, load_profile("tofino"))
        assert model.native_core() is not None, program


def _vector_cases() -> list[Any]:
    out = []
    for program in native.PROGRAMS:
        for path in vector_files(DEFAULT_VECTOR_ROOT, program):
            vfile = load_vector_file(path)
            for chip in ("tofino", "tofino2"):
                out += [
                    pytest.param(vfile, v, chip, id=f"{program}/{path.stem}/{chip}/{v.name}")
                    for v in vfile.vectors
                ]
        for path in generated_files(DEFAULT_VECTOR_ROOT):
            vfile = load_vector_file(path)
            if vfile.program != program:
                continue
            assert vfile.chip is not None
            out += [
                pytest.param(vfile, v, vfile.chip, id=f"{program}/generated/{vfile.chip}/{v.name}")
                for v in vfile.vectors
            ]
    return out


@pytest.mark.parametrize(("vfile", "vector", "chip"), _vector_cases())
def test_every_vector_gives_the_same_state_on_every_path(
    vfile: VectorFile, vector: Vector, chip: str
) -> None:
    states = {}
    for name, path in paths().items():
        model = make_model(vfile.program, load_profile(chip), vector.pipes)
        with path:
            if name == "core":
                Decided(model)
            run_vector(ModelTarget(model), vfile, vector, PROGRAMS[vfile.program].queue_hook)
        states[name] = state(model)
    assert states["core"] == states["python"] == states["reference"]


def test_the_vectors_are_decided_by_the_core() -> None:
    """Over all the program's vectors, the core decided the packets itself."""
    decided = 0
    for program in native.PROGRAMS:
        for path in vector_files(DEFAULT_VECTOR_ROOT, program):
            vfile = load_vector_file(path)
            for vector in vfile.vectors:
                model = make_model(program, load_profile("tofino"), vector.pipes)
                counter = Decided(model)
                run_vector(ModelTarget(model), vfile, vector, PROGRAMS[program].queue_hook)
                decided += counter.count
    assert decided >= 50


# ---- random frames --------------------------------------------------------

MACS = (0x020000000001, 0x020000000002)


def configure_dadctcp(model: TnaProgram, rng: random.Random) -> None:
    t = model.table
    for n in range(1, 5):
        t("SwitchIngress.forward.ipv4_lpm").add(
            {"hdr.ipv4.dst_addr": Match(0x0A000000 | n << 8, prefix_len=24)},
            "SwitchIngress.forward.route",
            {"port": n, "src_mac": MACS[0] + n, "dst_mac": MACS[1] + n},
        )
    t("SwitchIngress.forward.ipv4_lpm").add(
        {"hdr.ipv4.dst_addr": Match(0x0A000900, prefix_len=24)}, "SwitchIngress.forward.drop", {}
    )
    t("SwitchIngress.trust.trusted_ports").add(
        {"ig_intr_md.ingress_port": Match(4)}, "SwitchIngress.trust.trusted", {}
    )
    guard = t("SwitchIngress.source_guard.source_bindings")
    guard.add(
        {
            "ig_intr_md.ingress_port": Match(1),
            "hdr.ipv4.src_addr": Match(0x0A000100, prefix_len=24),
        },
        "SwitchIngress.source_guard.bound",
        {},
    )
    guard.add(
        {"ig_intr_md.ingress_port": Match(1), "hdr.ipv4.src_addr": Match(0, prefix_len=0)},
        "SwitchIngress.source_guard.spoofed_source",
        {},
    )
    for dscp in (10, 46):
        t("SwitchIngress.queue_select").add(
            {"hdr.ipv4.dscp": Match(dscp)}, "SwitchIngress.set_queue", {"qid": dscp % 8}
        )
    slot = 0
    for port in range(1, 5):
        for qid in (0, 6, 2):
            k1 = rng.randint(0, 60)
            t("SwitchEgress.queue_threshold").add(
                {
                    "eg_intr_md.egress_port": Match(port),
                    "eg_intr_md.egress_qid": Match(qid, mask=0x1F if qid else 0x1E),
                },
                "SwitchEgress.set_threshold",
                {
                    "slot": slot,
                    "k1_cells": k1,
                    "k2_cells": 2 * k1,
                    "use_slope": rng.randint(0, 1),
                    "drop_not_ect": rng.randint(0, 1),
                },
                priority=qid,
            )
            slot += 1
    t("SwitchEgress.queue_hook.queue_md_override").add(
        {"eg_intr_md.egress_port": Match(3)},
        "SwitchEgress.queue_hook.inject",
        {"depth_cells": 50, "sojourn_ns": 7},
    )


def run_random(seed: int, path: str) -> tuple[list[object], object, int]:
    """DA-DCTCP's tables by hand; ingress and egress called one by one."""
    rng = random.Random(seed)
    model = make_model("dadctcp", load_profile("tofino"), rng.choice([1, 2]))
    configure_dadctcp(model, rng)
    counter = Decided(model) if path == "core" else None
    log: list[object] = []
    with paths()[path]:
        for i in range(600):
            frame = random_frame(rng)
            port = rng.choice([1, 1, 2, 3, 4, 130, 200])
            log.append(outcome(lambda: model.ingress_in_pipe(IngressIntrinsic(port, i), frame)))  # noqa: B023
            # Egress sees what ingress made, or a bridged frame of its own.
            r = log[-1]
            data = (
                r[1].data
                if r[0] == "ok" and not r[1].drop  # type: ignore[index, union-attr]
                else bytes(17) + frame
            )
            md = EgressIntrinsic(
                rng.choice([1, 2, 3, 4, 150]),
                rng.choice([0, 1, 2, 6]),
                deq_qdepth=rng.choice([0, 5, 19, 20, 39, 40, 41, 120, (1 << 19) - 1]),
                global_tstamp_ns=i * 1000 + rng.getrandbits(40),
            )
            if rng.random() < 0.05:
                data = data[: rng.randint(0, 30)]
            log.append(outcome(lambda: model.egress_in_pipe(md, data)))  # noqa: B023
    return log, state(model), counter.count if counter else 0


def preload_sketch(model: TnaProgram, rng: random.Random, now_ns: int) -> None:
    """Counters at the edges the sketch's rules turn on: an epoch's start,
    the count cap, the alias window, another epoch, a saturated S."""
    epoch_mask = model.table("SwitchIngress.sketch_config").default[1]["epoch_mask"]
    base = (now_ns >> 6) & epoch_mask
    counts = [0, base, base + 1, base + 0xFFFE, base + 0xFFFF, base + 0x10000, base - 1]
    names = [f"SwitchIngress.sketch_row{i}" for i in range(3)] + ["SwitchIngress.m_count"]
    for name in names:
        reg = model.register(name)
        for i in range(reg.size):
            if rng.random() < 0.3:
                reg.write_all(i, rng.choice([*counts, rng.getrandbits(32)]) & 0xFFFFFFFF)
    sumsq = model.register("SwitchIngress.sumsq")
    for i in range(sumsq.size):
        sumsq.write_all(i, rng.choice([0, 0xFFFFFFFF, 0xFFFFFFF0, rng.getrandbits(32)]))


def run_random_spie(seed: int, path: str) -> tuple[list[object], object, int]:
    """The shipped config on the model through the controller (the log and
    PI term tables as it writes them, the recirculation ring, mirror
    sessions), the sketch sized to act within a few packets; every packet
    through the whole switch (`send`: the second passes, the PI steps'
    copies round the ring)."""
    rng = random.Random(seed)
    raw = yaml.safe_load(DEFAULT_SPIE.read_text())
    raw["ports"][0]["mode"] = rng.choice(["spie", "spie_pie", "pie"])
    # Sized to judge within a few packets, or for a 100 Gb/s port (one
    # packet in several counted).
    raw["sketch"]["line_rate_gbps"] = rng.choice([0.001, 0.01, 100])
    raw["sketch"]["large_drop_probability"] = rng.choice([1.0, 0.5])
    raw["pie"]["t_update_us"] = rng.choice([1000, 3000])
    log: list[object] = []
    with paths()[path]:
        app = SpieApp(FlakyModelSwitch("spie"), parse_spie(raw))
        app.push_all()
        model = app.switch.model  # type: ignore[attr-defined]
        preload_sketch(model, rng, 10_000_000)
        counter = Decided(model) if path == "core" else None
        hook = model.table("SwitchEgress.queue_hook.queue_md_override")
        for i in range(1500):
            model.now_ns = 10_000_000 + i * rng.choice([1_000, 20_000, 300_000])
            if i % 50 == 0:
                for port in (3, 4):
                    hook.add_or_modify(
                        {"eg_intr_md.egress_port": Match(port)},
                        "SwitchEgress.queue_hook.inject",
                        {"depth_cells": 0, "sojourn_ns": rng.choice([0, 2_000_000, 40_000_000])},
                    )
            port = rng.choice([1, 1, 2, 2, 5, 6])
            frame = spie_frame(rng, port)
            log.append(outcome(lambda: model.send(port, frame)))  # noqa: B023
    return log, state(model), counter.count if counter else 0


def backpressure(rng: random.Random) -> bytes:
    """A backpressure or clear message as the downstream switch sends it."""
    msg = rng.choice([2, 2, 3])
    fb = bytes([0x20 | msg, 0, rng.choice([1, 2, 3, 4, 9]), 0, rng.randint(0, 3), 0, 0, 0])
    return bytes(6) + bytes.fromhex("020000000003") + b"\x88\xb6" + fb + bytes(8)


def run_random_bfcc(seed: int, path: str) -> tuple[list[object], object, int]:
    """The shipped config through the controller (a congestion point on port
    2 toward upstream port 1, a reaction point on port 3 with fakes and
    recirculation); traffic from the groups' senders, backpressure arriving
    on port 3, queues at the congestion point and the recirculation port
    drawn; every packet through the whole switch (`send`: messages, fakes,
    originals round the recirculation port, backpressure copies)."""
    rng = random.Random(seed)
    raw = yaml.safe_load(DEFAULT_BFCC.read_text())
    raw["params"]["named_group_only"] = rng.choice([0, 1])
    # A group of hosts behind port 2 whose backpressure is relayed to them.
    raw["groups"].append({"id": 4, "senders": ["10.0.2.5/32"]})
    raw["params"]["sender_reaction"] = rng.choice(["none", "match_switch"])
    log: list[object] = []
    with paths()[path]:
        app = BfccApp(FlakyModelSwitch("bfcc"), parse_bfcc(raw))
        app.push_all()
        model = app.switch.model  # type: ignore[attr-defined]
        counter = Decided(model) if path == "core" else None
        hook = model.table("SwitchEgress.queue_hook.queue_md_override")
        recirc_hook = model.table("SwitchEgress.recirc_queue_hook.queue_md_override")
        recirc_ports = sorted(model.profile.recirculation_ports)
        for i in range(1500):
            model.now_ns = 10_000_000 + i * rng.choice([1_000, 20_000, 50_000, 600_000])
            if i % 40 == 0:
                hook.add_or_modify(
                    {"eg_intr_md.egress_port": Match(2)},
                    "SwitchEgress.queue_hook.inject",
                    {
                        "depth_cells": rng.choice([0, 10, 40, 400]),
                        "sojourn_ns": rng.choice([0, 90_000, 200_000]),
                    },
                )
                for port in recirc_ports:
                    recirc_hook.add_or_modify(
                        {"eg_intr_md.egress_port": Match(port)},
                        "SwitchEgress.recirc_queue_hook.inject",
                        {"depth_cells": rng.choice([0, 0, 10**6]), "sojourn_ns": 0},
                    )
            roll = rng.random()
            if roll < 0.08:
                port, frame = 3, backpressure(rng)
            elif roll < 0.15:
                port, frame = rng.choice([1, 2, 3, 5]), random_frame(rng)
            else:
                port = rng.choice([1, 1, 2])
                src = f"10.0.{port}.{rng.choice([1, 2, 3, 4])}"
                dst = f"10.0.{rng.choice([2, 3, 3])}.{rng.randint(1, 3)}"
                frame = bytes(
                    Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
                    / IP(src=src, dst=dst)
                    / UDP(sport=rng.choice([1000, 2000]), dport=5001)
                    / bytes(rng.choice([0, 100, 1000]))
                )
            log.append(outcome(lambda: model.send(port, frame)))  # noqa: B023
    return log, state(model), counter.count if counter else 0


def pmqecn_frame(rng: random.Random, port: int) -> bytes:
    """A packet of one of the three classes toward the receiver (port 4),
    mostly from its port's own prefix, ECN-capable or not; or one of
    random_frame's odd ones."""
    if rng.random() < 0.15:
        return random_frame(rng)
    net = port if rng.random() < 0.9 else rng.choice([1, 2, 3])
    ip = IP(
        src=f"10.0.{net}.{rng.choice([1, 2])}",
        dst=rng.choice(["10.0.4.4", "10.0.4.4", "10.0.1.9", "10.9.0.1"]),
        tos=rng.choice([46, 34, 0, 10]) << 2 | rng.choice([0, 1, 2, 3]),
    )
    l4 = TCP(sport=rng.choice([1000, 2000]), dport=80) if rng.random() < 0.7 else UDP(dport=5001)
    return bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / ip
        / l4
        / bytes(rng.choice([0, 100, 1000, 1400]))
    )


def run_random_pmqecn(seed: int, path: str) -> tuple[list[object], object, int]:
    """The shipped config through the controller (classify, virtual queues
    and their drain tables, thresholds, feedback sessions), in either
    scheduling mode, thresholds low enough to mark and send feedback; the
    sojourn epoch flipped and a queue injected now and then; every packet
    through the whole switch (`send`: feedback copies rebuilt and sent)."""
    rng = random.Random(seed)
    raw = yaml.safe_load(DEFAULT_PMQECN.read_text())
    if rng.random() < 0.5:
        raw["scheduling"] = {"mode": "p4_wrr", "level_queues": [0, 1, 2], "egress_ports": [4]}
    for c in raw["classes"]:
        c["threshold_cells"] = rng.choice([0, 1, 5, 20])
        c["mark_original"] = rng.random() < 0.7
        c["feedback_interval_us"] = rng.choice([0, 5, 50])
    log: list[object] = []
    with paths()[path]:
        app = PmqecnApp(FlakyModelSwitch("pmqecn"), parse_pmqecn(raw))
        app.push_all()
        model = app.switch.model  # type: ignore[attr-defined]
        counter = Decided(model) if path == "core" else None
        hook = model.table("SwitchEgress.queue_hook.queue_md_override")
        epoch = model.table("SwitchEgress.sojourn_epoch")
        for i in range(1500):
            model.now_ns = 10_000_000 + i * rng.choice([100, 1_000, 20_000, 300_000])
            if i % 50 == 0:
                epoch.set_default("SwitchEgress.set_sojourn_epoch", {"epoch": rng.randint(0, 1)})
                hook.add_or_modify(
                    {"eg_intr_md.egress_port": Match(4)},
                    "SwitchEgress.queue_hook.inject",
                    {"depth_cells": 0, "sojourn_ns": rng.choice([0, 7, 2_000_000, 2**32 - 1])},
                )
            port = rng.choice([1, 1, 2, 3, 5])
            frame = pmqecn_frame(rng, port)
            log.append(outcome(lambda: model.send(port, frame)))  # noqa: B023
    # The traffic reached the marks and the feedback copies (each rebuilt
    # into a UDP packet to the tofcc feedback port), not only forwarding.
    sent = [out.data for entry in log if entry[0] == "ok" for out in entry[1]]  # type: ignore[index, union-attr]
    assert any(len(d) > 37 and d[36:38] == b"\x4c\xcf" for d in sent), "no feedback was made"
    assert any(len(d) > 15 and d[12:14] == b"\x08\x00" and (d[15] & 3) == 3 for d in sent)
    return log, state(model), counter.count if counter else 0


RUNNERS = {
    "bfcc": run_random_bfcc,
    "dadctcp": run_random,
    "pmqecn": run_random_pmqecn,
    "spie": run_random_spie,
}


@pytest.mark.parametrize("program", native.PROGRAMS)
@pytest.mark.parametrize("seed", range(8))
def test_random_frames_give_the_same_results_and_state(program: str, seed: int) -> None:
    run = RUNNERS[program]
    core, core_state, decided = run(seed, "core")
    ref, ref_state, _ = run(seed, "reference")
    py, py_state, _ = run(seed, "python")
    assert core == ref == py
    assert core_state == ref_state == py_state
    kinds = {entry[0] for entry in core}  # type: ignore[index]
    # DA-DCTCP's egress is called on frames its parser refuses: both kinds
    # of answer are compared.
    assert kinds == ({"ok", "refused"} if program == "dadctcp" else {"ok"})
    # About a fifth of the frames are ones the parser rejects (the model's
    # to drop or refuse); the core decides the rest.
    assert decided >= 0.7 * len(core), f"the core decided {decided} of {len(core)}"


@pytest.fixture
def no_cores() -> Iterator[None]:
    saved = os.environ.get(native.ENV_SWITCH)
    os.environ[native.ENV_SWITCH] = "0"
    try:
        yield
    finally:
        if saved is None:
            del os.environ[native.ENV_SWITCH]
        else:
            os.environ[native.ENV_SWITCH] = saved


def test_the_switch_turns_the_cores_off(no_cores: None) -> None:
    model = make_model(native.PROGRAMS[0], load_profile("tofino"))
    assert not native.available()
    assert model.native_core() is None


def test_a_copy_binds_its_own_core() -> None:
    import copy

    model = make_model(native.PROGRAMS[0], load_profile("tofino"))
    core = model.native_core()
    twin = copy.deepcopy(model)
    twin_core = twin.native_core()
    assert core is not None and twin_core is not None
    # The copy's core runs on the copy's tables and registers.
    assert all(
        a is not b
        for a, b in zip(core.binding, twin_core.binding, strict=True)
        if not isinstance(a, (str, tuple, type))
    )


def test_every_core_is_a_source_file_the_package_ships() -> None:
    """One .cpp per program with a core, and the wheel's package data takes
    every .cpp and .hpp here (.ci/run checks the built wheel)."""
    import tomllib

    here = Path(native.__file__).parent
    assert {p.stem for p in here.glob("*.cpp")} == set(native.PROGRAMS)
    pyproject = tomllib.loads((here.parents[2] / "pyproject.toml").read_text())
    shipped = pyproject["tool"]["setuptools"]["package-data"]["models"]
    assert {"switch/native/*.cpp", "switch/native/*.hpp"} <= set(shipped)
