# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Executable reference models of the tna/ programs, and their registry."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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


class _Models(Mapping[str, ProgramInfo]):
    """The registry's programs, each model imported when first asked for:
    an entry whose model is not written yet breaks only what uses that
    program (test_every_program_is_whole names it), not every import of
    this module."""

    def __init__(self) -> None:
        self._got: dict[str, ProgramInfo] = {}

    def __getitem__(self, name: str) -> ProgramInfo:
        if name not in self._got:
            self._got[name] = _info(registry.PROGRAMS[name])
        return self._got[name]

    def __iter__(self) -> Iterator[str]:
        return iter(registry.PROGRAMS)

    def __len__(self) -> int:
        return len(registry.PROGRAMS)


# Every program's model, from the one registry of programs.
PROGRAMS: Mapping[str, ProgramInfo] = _Models()


def make_model(program: str, profile: HwProfile, pipes: int = 1) -> TnaProgram:
    """The program's model running `pipes` pipes (tna.py: one register set each)."""
    try:
        model = PROGRAMS[program].model(profile)
    except KeyError:
        raise ValueError(f"unknown program '{program}' (known: {', '.join(PROGRAMS)})") from None
    if pipes != 1:
        model.set_pipes(pipes)
    return model
