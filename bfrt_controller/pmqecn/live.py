# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What can change at run time for one class, and how a state file holds it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from ..common import Strict

U32_MAX = 0xFFFFFFFF


class SavedClass(Strict):
    """One class's ClassLive as the model target's state file holds it."""

    threshold_cells: Annotated[int, Field(ge=0)]
    weight: Annotated[int, Field(ge=1, le=0xFFFF)]
    target_rate_pps: Annotated[int, Field(ge=0, le=U32_MAX)]
    rate_pps: Annotated[int, Field(ge=0, le=U32_MAX)] = 0
    sojourn_ns: Annotated[float, Field(ge=0)] = 0.0


@dataclass
class ClassLive:
    """What can change at run time for one class."""

    threshold_cells: int
    weight: int
    target_rate_pps: int
    rate_pps: int = 0  # lambda_i as last measured, echoed in feedback
    sojourn_ns: float = 0.0  # W_i as last measured
