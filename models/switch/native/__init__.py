# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Compiled per-packet cores of the reference models (issue 48, deliverable 1).

A core is one program's ingress and egress in C++ (`<program>.cpp` here),
written beside its Python model and run on that model's own objects: the
same Register lists, Counter lists and Table memos, so the controller, the
vectors and the reference path see one switch. A packet a core cannot decide
exactly as the model would (a frame the parser rejects, an index the model
would refuse) is handed back, and the Python model runs it.

cppyy compiles the cores when first asked (well under a second), where it is
installed: the `eval` extra brings it with the ns-3 wheel. Elsewhere the
models run in Python, as they always have; `models/speedups.py` turns the
cores off (`native_disabled()`), and with them the rest of the speed-ups
(`disabled()`). tests/test_native_cores.py holds every core to its model on
every vector and on random frames.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
# The programs with a core, each its `<name>.cpp` and namespace.
PROGRAMS = ("dadctcp",)
# Set to 0 to run every model in Python even where cppyy is installed.
ENV_SWITCH = "TOFCC_NATIVE"


class Core(NamedTuple):
    """A program's compiled ingress and egress, and the objects they run on."""

    ingress: Callable[[tuple[Any, ...], Any, bytes], Any]
    egress: Callable[[tuple[Any, ...], Any, bytes], Any]
    binding: tuple[Any, ...]


def available() -> bool:
    """Whether this process can run the cores (cppyy is importable and they
    compiled); False also when TOFCC_NATIVE=0."""
    return os.environ.get(ENV_SWITCH, "1") != "0" and _compiled() is not None


@cache
def _compiled() -> dict[str, tuple[Any, Any, int]] | None:
    try:
        import cppyy  # type: ignore[import-not-found]
    except ImportError:
        return None
    cppyy.add_include_path(str(HERE))
    out = {}
    for name in PROGRAMS:
        cppyy.cppdef(f'#include "{name}.cpp"')
        ingress, egress, slots = getattr(cppyy.gbl.tofcc_native, name).Functions()
        out[name] = (ingress, egress, slots)
    return out


def bind(program: str, binding: tuple[Any, ...]) -> Core | None:
    """`program`'s core on the objects of `binding` (the order its .cpp's
    Slot enum names), or None where the cores cannot run."""
    compiled = _compiled() if os.environ.get(ENV_SWITCH, "1") != "0" else None
    if compiled is None or program not in compiled:
        return None
    ingress, egress, slots = compiled[program]
    if len(binding) != slots:
        raise RuntimeError(f"{program}: binding of {len(binding)} objects, the core takes {slots}")
    return Core(ingress, egress, binding)
