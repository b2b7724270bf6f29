# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every program tofino-cc ships, declared once.

Each entry says where each part of one mechanism lives: its P4, its
reference model, its controller app and config schema, its CLI commands,
its shared vectors, its PTF module and the evaluation schemes that run it.
Every list of programs elsewhere (the models' registry, the controller's,
`tofcc --program`, the compile, p4testgen, width-audit and soak scripts,
the vector runners) is derived from this one: tests/test_layout.py fails on
a literal naming every program anywhere else, and
(test_every_program_is_whole) names the part when an entry points at
something that does not exist. `scripts/new_program.py NAME --from PROGRAM`
writes a new entry with a copy of PROGRAM's parts (docs/adding-a-program.md).

Parts are named by dotted path ("package.module:attribute") and imported
only when asked for, so this module imports nothing of the project and any
package may read it without importing upward.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The repository (or installed tree) root: tna/, ptf_tests/ and the
# packages sit beside each other under it.
ROOT = Path(__file__).resolve().parents[1]

# The queue-metadata test hook every program includes (tna/include/test_hooks.p4).
QUEUE_HOOK_TABLE = "SwitchEgress.queue_hook.queue_md_override"
QUEUE_HOOK_ACTION = "SwitchEgress.queue_hook.inject"
# The ingress clock hook, in programs whose decisions read the time.
CLOCK_HOOK_TABLE = "SwitchIngress.clock.ingress_tstamp_override"
CLOCK_HOOK_ACTION = "SwitchIngress.clock.inject"


@dataclass(frozen=True)
class SoakQueue:
    """Where the program's default config manages a queue, and the queue
    state that congests it without pinning it at its maximum: what the
    line-rate soak (scripts/soak.py) pins with the queue hook."""

    port: int
    depth_cells: int
    sojourn_ns: int
    dscp: int = 0


@dataclass(frozen=True)
class ProgramSpec:
    name: str
    # One line for listings: what the mechanism does.
    summary: str
    # The paper in ../shared/seeds/ it follows (its number).
    seed: str
    # The reference model's class.
    model: str
    # The controller app's class, and the module holding the config schema
    # (`parse_config`, `DEFAULT_CONFIG`).
    app: str
    config: str
    # What `tofcc status` prints: a module attribute holding the
    # (title, ((heading, key), ...)) sections.
    status_sections: str
    # The module of the program's own `tofcc` commands: COMMANDS (click
    # commands added to tofcc), set_command (what `tofcc set` runs, or None)
    # and SET_HELP.
    commands: str
    # The schemes `tofcc eval` runs it as.
    schemes: tuple[str, ...]
    # The congested queue the line-rate soak drives.
    soak: SoakQueue
    # Whether its P4 reads the ingress clock through the clock hook.
    clock_hook: bool = True

    @property
    def p4(self) -> Path:
        return ROOT / "tna" / self.name / f"{self.name}.p4"

    @property
    def readme(self) -> Path:
        return ROOT / "tna" / self.name / "README.md"

    @property
    def vectors(self) -> Path:
        return ROOT / "ptf_tests" / "vectors" / self.name

    @property
    def ptf_module(self) -> Path:
        return ROOT / "ptf_tests" / self.name / f"test_{self.name}.py"

    @property
    def default_config(self) -> Path:
        return ROOT / "bfrt_controller" / "defaults" / f"{self.name}.yaml"


def resolve(dotted: str) -> Any:
    """The object a "package.module:attribute" path names."""
    module, _, attr = dotted.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def importable(dotted: str) -> bool:
    """Whether the module a "package.module:attribute" path names is there
    (found, not imported). An entry added before its code is not: what lists
    programs at import time (tofcc's commands) leaves it out rather than fail
    every import, and test_every_program_is_whole names the missing part."""
    try:
        return importlib.util.find_spec(dotted.partition(":")[0]) is not None
    except ModuleNotFoundError:  # its package is missing too
        return False


def _spec(name: str, summary: str, seed: str, model: str, app: str, **kw: Any) -> ProgramSpec:
    pkg = f"bfrt_controller.{name}"
    return ProgramSpec(
        name=name,
        summary=summary,
        seed=seed,
        model=f"models.switch.{name}:{model}",
        app=f"{pkg}.app:{app}",
        config=f"{pkg}.config",
        status_sections=f"{pkg}.status:SECTIONS",
        commands=f"{pkg}.commands",
        **kw,
    )


PROGRAMS: dict[str, ProgramSpec] = {
    s.name: s
    for s in (
        _spec(
            "pmqecn",
            "multi-queue multi-class ECN with virtual queues and an M/M/1/N optimiser",
            "000",
            "Pmqecn",
            "PmqecnApp",
            schemes=("pmqecn",),
            soak=SoakQueue(4, 200, 100_000, dscp=46),
        ),
        _spec(
            "bfcc",
            "switch-to-switch backpressure with fake packets and recirculation",
            "001",
            "Bfcc",
            "BfccApp",
            schemes=("bfcc",),
            soak=SoakQueue(4, 200, 200_000),
            clock_hook=False,
        ),
        _spec(
            "p4qcn",
            "QCN congestion point on IP, with PFC",
            "003",
            "P4qcn",
            "P4qcnApp",
            schemes=("p4qcn",),
            soak=SoakQueue(4, 150, 100_000),  # below Q_min = Q_max = 209
        ),
        _spec(
            "dadctcp",
            "slope-aware ECN marking and controller threshold reallocation",
            "004",
            "Dadctcp",
            "DadctcpApp",
            schemes=("dadctcp",),
            soak=SoakQueue(4, 300, 100_000),  # below K = 20 packets (380 cells)
            clock_hook=False,
        ),
        _spec(
            "aqm",
            "RED and CoDel per egress queue (seed 002's baselines)",
            "002",
            "Aqm",
            "AqmApp",
            schemes=("p4red", "p4codel"),
            soak=SoakQueue(3, 190, 2_000_000),  # RED between min_th 95 and max_th 285
        ),
        _spec(
            "spie",
            "PIE plus a count-min sketch (S-PIE), with plain PIE as a mode",
            "002",
            "Spie",
            "SpieApp",
            schemes=("p4pie", "p4spie"),
            soak=SoakQueue(3, 0, 30_000_000),  # above del_ref / 3: congested
        ),
    )
}


def get(name: str) -> ProgramSpec:
    """The program called `name`; KeyError's message lists the known ones."""
    try:
        return PROGRAMS[name]
    except KeyError:
        raise KeyError(f"unknown program {name!r} (known: {', '.join(PROGRAMS)})") from None
