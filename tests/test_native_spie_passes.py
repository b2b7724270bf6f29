# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""S-PIE's compiled core (models/switch/native/spie.cpp) pass by pass, from
states a run seldom reaches: before each ingress pass or egress, the cells
the packet will touch are set to the edges the rules turn on (an epoch's
start, the count cap and the alias window, a saturated S, a stale or fresh
state, p near 0 and near 2^32), the sketch's sizing and the random value are
drawn, and a second pass carries a random digest. The core, the Python
model and the reference path must give the same results and end in the same
state. (tests/test_native_cores.py runs whole switches on traffic.)"""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml
from native_cases import SKIPS, Decided, outcome, paths, spie_frame, state

from bfrt_controller.spie.app import SpieApp
from bfrt_controller.spie.config import DEFAULT_CONFIG, parse_config
from doubles.flaky_model import FlakyModelSwitch
from models.switch.core import Match
from models.switch.spie import UndoDigest, flow_key, row_hashes
from models.switch.tna import EgressIntrinsic, IngressIntrinsic

pytestmark = SKIPS

U32 = 0xFFFFFFFF
IG = "SwitchIngress"
EG = "SwitchEgress"


def edge(rng: random.Random, base: int) -> int:
    """A 32-bit value at one of the edges around `base`."""
    if rng.random() < 0.1:
        return rng.getrandbits(32)
    edges = [0, base, base + 1, base + 0xFFFE, base + 0xFFFF, base + 0x10000, base - 1, U32]
    return rng.choice(edges) & U32


def flow_columns(model: Any, frame: bytes, column_mask: int) -> list[int]:
    from models.switch.common import Cursor, header_parser
    from models.switch.spie import IgMd, SpieHeaders

    hdr, md = SpieHeaders(), IgMd()
    try:
        header_parser(Cursor(frame), hdr, md.parsed)
    except ValueError:
        return []
    return [h & column_mask for h in row_hashes(flow_key(hdr, md.parsed))]


SLOT_REGISTERS = [
    f"{IG}.m_count",
    f"{IG}.sumsq",
    f"{IG}.prob",
    f"{IG}.state",
    f"{IG}.congested",
    f"{EG}.last_update_ticks",
    f"{EG}.del_old",
    f"{EG}.pi_prob",
]


def cells(model: Any, columns: list[int]) -> tuple[int, ...]:
    """The cells a pass may write: both slots' registers, the flow's columns."""
    out = [model.register(name).values[slot] for name in SLOT_REGISTERS for slot in (0, 1)]
    out += [model.register(f"{IG}.sketch_row{r}").values[c] for r, c in enumerate(columns)]
    return tuple(out)


def run_passes(seed: int, path: str) -> tuple[list[object], object, int]:
    rng = random.Random(seed)
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["ports"][0]["mode"] = rng.choice(["spie", "spie_pie", "pie"])
    log: list[object] = []
    with paths()[path]:
        app = SpieApp(FlakyModelSwitch("spie"), parse_config(raw))
        app.push_all()
        model = app.switch.model  # type: ignore[attr-defined]
        counter = Decided(model) if path == "core" else None
        reg = model.register
        sketch = model.table(f"{IG}.sketch_config")
        for i in range(400):
            now_ns = rng.choice([10**7, 2**38 - 5000, rng.getrandbits(40)]) + i
            now_ticks = (now_ns >> 6) & U32
            data = dict(sketch.default[1])
            data["epoch_mask"] = rng.choice([0xFF000000, 0xFFFF0000, 0xFFFFF000])
            data["sample_mask"] = rng.choice([0, 0, 0xF, 0x7FFFFFFF])
            data["large_drop"] = rng.choice([0, 0x40000000, 0x80000000])
            sketch.set_default(sketch.default[0], data)
            base = now_ticks & data["epoch_mask"]
            port = rng.choice([1, 2, 5])
            frame = spie_frame(rng, port)
            columns = flow_columns(model, frame, data["column_mask"])
            for r, column in enumerate(columns):
                reg(f"{IG}.sketch_row{r}").write_all(column, edge(rng, base))
            for slot in (0, 1):
                reg(f"{IG}.m_count").write_all(slot, edge(rng, base))
                reg(f"{IG}.sumsq").write_all(slot, edge(rng, 0xFFFF0000))
                reg(f"{IG}.prob").write_all(slot, edge(rng, 0x40000000))
                reg(f"{IG}.state").write_all(slot, edge(rng, now_ticks))
                reg(f"{IG}.congested").write_all(slot, rng.choice([0, edge(rng, now_ticks)]))
                reg(f"{EG}.last_update_ticks").write_all(slot, edge(rng, now_ticks))
                reg(f"{EG}.del_old").write_all(slot, edge(rng, 0))
                reg(f"{EG}.pi_prob").write_all(slot, edge(rng, 0xFFFF0000))
            override = model.table(f"{IG}.random_hook.random_override")
            if rng.random() < 0.7:
                override.add_or_modify(
                    {"ig_intr_md.ingress_port": Match(port)},
                    f"{IG}.random_hook.inject",
                    {"random_value": edge(rng, 0x40000000)},
                )
            digest = (
                UndoDigest(edge(rng, 0), rng.choice([base, edge(rng, base)]))
                if rng.random() < 0.3
                else None
            )
            ig = IngressIntrinsic(port, now_ns)
            made = outcome(lambda: model.ingress_pass(ig, frame, digest))  # noqa: B023
            # With what the pass wrote, before the next draw overwrites it.
            log += [made, cells(model, columns)]
            # Egress of what ingress made (or a packet of its own), its port's
            # queue and the packet's idle mark drawn.
            out = made[1][0] if made[0] == "ok" else None  # type: ignore[index]
            data_out = out.data if out is not None and not out.drop else None
            if data_out is None:
                continue
            if rng.random() < 0.3:
                data_out = data_out[:1] + bytes([0, 1]) + data_out[3:]  # idle
            eg_port = rng.choice([3, 4])
            model.table(f"{EG}.queue_hook.queue_md_override").add_or_modify(
                {"eg_intr_md.egress_port": Match(eg_port)},
                f"{EG}.queue_hook.inject",
                {"depth_cells": 0, "sojourn_ns": rng.choice([0, 5_000_000, 40_000_000, U32])},
            )
            md = EgressIntrinsic(eg_port, 0, global_tstamp_ns=now_ns + 1000)
            log.append(outcome(lambda: model.egress(md, data_out)))  # noqa: B023
            log.append(cells(model, columns))
    return log, state(model), counter.count if counter else 0


@pytest.mark.parametrize("seed", range(10))
def test_passes_from_edge_states_match(seed: int) -> None:
    core, core_state, decided = run_passes(seed, "core")
    ref, ref_state, _ = run_passes(seed, "reference")
    py, py_state, _ = run_passes(seed, "python")
    assert core == ref == py
    assert core_state == ref_state == py_state
    calls = sum(1 for entry in core if entry[0] in ("ok", "refused"))  # type: ignore[index]
    assert decided >= 0.7 * calls, f"the core decided {decided} of {calls}"
