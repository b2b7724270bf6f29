# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A model-backed switch that counts batches and can be unreachable, for
testing apps' batching and their recovery after a switch restart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.errors import SwitchUnavailable
from bfrt_controller.switch import EntryState, Write
from hw_profiles import load_profile
from models.switch.core import Match


class FlakyModelSwitch(ModelSwitch):
    def __init__(self, program: str, chip: str = "tofino") -> None:
        super().__init__(program, load_profile(chip))
        self.batches: list[int] = []  # size of every batch written
        self.down = 0  # calls left that raise SwitchUnavailable

    def _gone(self) -> None:
        if self.down:
            self.down -= 1
            raise SwitchUnavailable("switch restarting")

    def connect(self) -> None:
        self._gone()

    def write(self, writes: Sequence[Write]) -> None:
        self._gone()
        self.batches.append(len(writes))
        super().write(writes)

    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        self._gone()
        return super().read_counter(name, index)

    def read_entry(
        self, table: str, key: Mapping[str, Match], priority: int = 0
    ) -> EntryState | None:
        self._gone()
        return super().read_entry(table, key, priority)
