"""Executable reference models of the tna/ programs, and their registry."""

from __future__ import annotations

from dataclasses import dataclass

from hw_profiles import HwProfile
from models.vectors.runner import QueueHook
from tofcc_common import registry

from .tna import TnaProgram


@dataclass(frozen=True)
class ProgramInfo:
    name: str
    model: type[TnaProgram]
    queue_hook: QueueHook


def _info(spec: registry.ProgramSpec) -> ProgramInfo:
    model = registry.resolve(spec.model)
    hook = QueueHook(
        table=registry.QUEUE_HOOK_TABLE,
        inject_action=registry.QUEUE_HOOK_ACTION,
        clock_table=registry.CLOCK_HOOK_TABLE if spec.clock_hook else None,
        clock_inject_action=registry.CLOCK_HOOK_ACTION if spec.clock_hook else None,
    )
    return ProgramInfo(spec.name, model, hook)


# Every program's model, from the one registry of programs.
PROGRAMS: dict[str, ProgramInfo] = {name: _info(spec) for name, spec in registry.PROGRAMS.items()}


def make_model(program: str, profile: HwProfile, pipes: int = 1) -> TnaProgram:
    """The program's model running `pipes` pipes (tna.py: one register set each)."""
    try:
        model = PROGRAMS[program].model(profile)
    except KeyError:
        raise ValueError(f"unknown program '{program}' (known: {', '.join(PROGRAMS)})") from None
    if pipes != 1:
        model.set_pipes(pipes)
    return model
