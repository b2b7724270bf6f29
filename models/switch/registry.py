"""Executable reference models of the tna/ programs, and their registry."""

from __future__ import annotations

from dataclasses import dataclass

from hw_profiles import HwProfile
from models.vectors.runner import QueueHook

from .aqm import Aqm
from .bfcc import Bfcc
from .dadctcp import Dadctcp
from .p4qcn import P4qcn
from .pmqecn import Pmqecn
from .spie import Spie
from .tna import TnaProgram


@dataclass(frozen=True)
class ProgramInfo:
    name: str
    model: type[TnaProgram]
    queue_hook: QueueHook


PROGRAMS: dict[str, ProgramInfo] = {
    "pmqecn": ProgramInfo(
        "pmqecn",
        Pmqecn,
        QueueHook(
            table="SwitchEgress.queue_hook.queue_md_override",
            inject_action="SwitchEgress.queue_hook.inject",
            clock_table="SwitchIngress.clock.ingress_tstamp_override",
            clock_inject_action="SwitchIngress.clock.inject",
        ),
    ),
    "bfcc": ProgramInfo(
        "bfcc",
        Bfcc,
        QueueHook(
            table="SwitchEgress.queue_hook.queue_md_override",
            inject_action="SwitchEgress.queue_hook.inject",
        ),
    ),
    "dadctcp": ProgramInfo(
        "dadctcp",
        Dadctcp,
        QueueHook(
            table="SwitchEgress.queue_hook.queue_md_override",
            inject_action="SwitchEgress.queue_hook.inject",
        ),
    ),
    "p4qcn": ProgramInfo(
        "p4qcn",
        P4qcn,
        QueueHook(
            table="SwitchEgress.queue_hook.queue_md_override",
            inject_action="SwitchEgress.queue_hook.inject",
            clock_table="SwitchIngress.clock.ingress_tstamp_override",
            clock_inject_action="SwitchIngress.clock.inject",
        ),
    ),
    "aqm": ProgramInfo(
        "aqm",
        Aqm,
        QueueHook(
            table="SwitchEgress.queue_hook.queue_md_override",
            inject_action="SwitchEgress.queue_hook.inject",
            clock_table="SwitchIngress.clock.ingress_tstamp_override",
            clock_inject_action="SwitchIngress.clock.inject",
        ),
    ),
    "spie": ProgramInfo(
        "spie",
        Spie,
        QueueHook(
            table="SwitchEgress.queue_hook.queue_md_override",
            inject_action="SwitchEgress.queue_hook.inject",
            clock_table="SwitchIngress.clock.ingress_tstamp_override",
            clock_inject_action="SwitchIngress.clock.inject",
        ),
    ),
}


def make_model(program: str, profile: HwProfile) -> TnaProgram:
    try:
        return PROGRAMS[program].model(profile)
    except KeyError:
        raise ValueError(f"unknown program '{program}' (known: {', '.join(PROGRAMS)})") from None
