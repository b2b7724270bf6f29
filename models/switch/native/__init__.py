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
PROGRAMS = ("bfcc", "dadctcp", "pmqecn", "spie")
# Set to 0 to run every model in Python even where cppyy is installed.
ENV_SWITCH = "TOFCC_NATIVE"


class Core(NamedTuple):
    """A program's compiled ingress and egress, and the objects they run on."""

    # (binding, intrinsic metadata, data[, digest]) -> the result, or None
    # to run the packet in Python.
    ingress: Callable[..., Any]
    egress: Callable[..., Any]
    binding: tuple[Any, ...]


def available() -> bool:
    """Whether this process can run the cores (cppyy is importable and they
    compiled); False also when TOFCC_NATIVE=0."""
    return _compiled_if_on() is not None


def _compiled_if_on() -> dict[str, Any] | None:
    """The compiled cores, unless TOFCC_NATIVE=0 (read at each bind, so a
    test can turn them off) or cppyy is missing."""
    return _compiled() if os.environ.get(ENV_SWITCH, "1") != "0" else None


@cache
def _compiled() -> dict[str, Any] | None:
    try:
        import cppyy  # type: ignore[import-not-found]
    except ImportError:
        return None
    cppyy.add_include_path(str(HERE))
    out: dict[str, Any] = {}
    for name in PROGRAMS:
        cppyy.cppdef(f'#include "{name}.cpp"')
        ingress, egress, slots = getattr(cppyy.gbl.tofcc_native, name).Functions()
        out[name] = (ingress, egress, slots)
    out["lookup"] = cppyy.gbl.tofcc_native.LookupFunction()
    return out


def lookup_function() -> Callable[[Any, tuple[str, ...], tuple[int, ...]], Any] | None:
    """The cores' table search as a function (table, key fields, key values)
    -> LookupResult, for tests; None where the cores cannot run."""
    compiled = _compiled_if_on()
    return None if compiled is None else compiled["lookup"]


def bind(program: Any) -> Core | None:
    """The compiled core of `program` (a TnaProgram) on its own objects, or
    None where the cores cannot run or the program has none."""
    from .bindings import BINDINGS

    make = BINDINGS.get(program.name)
    compiled = _compiled_if_on()
    if make is None or compiled is None or program.name not in compiled:
        return None
    ingress, egress, slots = compiled[program.name]
    binding = make(program)
    if len(binding) != slots:
        raise RuntimeError(
            f"{program.name}: binding of {len(binding)} objects, the core takes {slots}"
        )
    return Core(ingress, egress, binding)
