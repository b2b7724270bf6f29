# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What a pydantic field's annotation holds, under Annotated and Optional:
shared by the validation messages and the bytes-to-cells conversion, which
both walk a config's models field by field."""

from __future__ import annotations

import types
import typing
from typing import Any


def unwrap(annotation: Any) -> Any:
    """Annotated[X, ...] -> X; Optional[X] (or a union with one non-None
    member) -> X; anything else as it is."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return unwrap(args[0])
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        return unwrap(members[0]) if len(members) == 1 else annotation
    return annotation
