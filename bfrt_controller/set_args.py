# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The arguments of `tofcc set`, checked before the switch is opened.

One parser for every program's NAME=VALUE pairs (a program says each
name's kind: int, float, bool, or the words it may take) and for
`--queue PORT/QUEUE`, so a typo is refused the same way, naming the
field, whichever program it was meant for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from .errors import ConfigError
from .units import set_value

# int, float, bool, or the words a value may be.
Kind = type | tuple[str, ...]

# No leading zero anywhere (`007`, `000000000001.5`, `0003/0000`): a digit
# lost or slipped, refused as parse_signed_int and the YAML reader refuse it.
_INT = re.compile(r"0|[1-9][0-9]{0,9}")
_NUMBER = re.compile(r"(0|[1-9][0-9]{0,11})(\.[0-9]{1,12})?")
_QUEUE = re.compile(r"(0|[1-9][0-9]{0,3})/(0|[1-9][0-9]{0,3})")
_QUEUE_ID = re.compile(r"0|[1-9][0-9]{0,3}")
_BOOL = {"true": True, "false": False}
# Plain ASCII decimal: int() would also take "1_000", " 5", "٣" and "²" (via isdigit).
DECIMAL = re.compile(r"-?[0-9]+")
# Longer than any field tofcc writes (32 bits); int() of a huge string is slow.
MAX_DIGITS = 20


def refuse_options(program: str, **given: object) -> None:
    """Refuse a `set` option `program` does not take, naming it: ignored, the
    setting went to every queue or port and the command exited 0."""
    for option, value in given.items():
        if value:
            name = f"--{option}"
            takes = {"--queue": "p4qcn and aqm", "--port": "dadctcp"}[name]
            raise ConfigError(name, f"{program} `set` does not take it (it is for {takes})")


def parse_int(field: str, text: str) -> int:
    if not _INT.fullmatch(text):
        raise ConfigError(field, f"expected a non-negative integer (no leading zero), got {text!r}")
    return int(text)


def parse_signed_int(field: str, text: str) -> int:
    """A decimal integer, sign allowed: the app's own checks say what range."""
    # "-0" and "007" are slips (a sign or a digit lost), refused like parse_int
    # refuses them and like the YAML reader refuses a leading zero.
    if len(text) > MAX_DIGITS or not DECIMAL.fullmatch(text) or re.fullmatch(r"-?0[0-9]+|-0", text):
        raise ConfigError(field, f"expected an integer, got {text!r}")
    return int(text)


def parse_number(field: str, text: str) -> float:
    if not _NUMBER.fullmatch(text):
        raise ConfigError(field, f"expected a non-negative number (no leading zero), got {text!r}")
    return float(text)


def parse_values(
    pairs: tuple[str, ...], settable: Mapping[str, Kind], cell_bytes: int | None = None
) -> dict[str, object]:
    """NAME=VALUE pairs, each name settable and each value of its kind.
    With the chip's `cell_bytes`, a cells value may be given in bytes
    (`q_max_bytes=24000`, `q_max_cells=24KB`: units.py)."""
    out: dict[str, object] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ConfigError("set", f"expected NAME=VALUE, got {pair!r}")
        cells = name.removesuffix("_bytes").removesuffix("_cells") + "_cells"
        sized = name.endswith(("_cells", "_bytes")) and settable.get(cells) is int
        if cell_bytes is not None and sized:
            name, value = set_value(name, value, cell_bytes)
        if name not in settable:
            raise ConfigError(name, f"not settable (settable: {', '.join(settable)})")
        if name in out:
            raise ConfigError(name, f"given twice ({name}={out[name]}, {pair})")
        kind = settable[name]
        if isinstance(kind, tuple):
            if value not in kind:
                raise ConfigError(name, f"must be one of {', '.join(kind)}, got {value!r}")
            out[name] = value
        elif kind is bool:
            if value not in _BOOL:
                raise ConfigError(name, f"must be true or false, got {value!r}")
            out[name] = _BOOL[value]
        elif kind is int:
            out[name] = parse_int(name, value)
        else:
            out[name] = parse_number(name, value)
    return out


def parse_queues(
    texts: tuple[str, ...], dev_port_of: Callable[[str, str], int] | None = None
) -> list[tuple[int, int]]:
    """`--queue PORT/QUEUE`, repeatable, no repeats. PORT is a device port,
    or a front-panel name (`32/3/0`: port 32/3, queue 0) resolved by
    `dev_port_of` (Context.dev_port_of: known where the deployment target's
    board is)."""
    out: list[tuple[int, int]] = []
    for text in texts:
        port_text, _, queue_text = text.rpartition("/")
        m = _QUEUE.fullmatch(text)
        if m is not None:
            q = (int(m.group(1)), int(m.group(2)))
        elif "/" in port_text and _QUEUE_ID.fullmatch(queue_text):
            if dev_port_of is None:
                raise ConfigError("--queue", f"{text!r}: a front-panel name needs a board")
            q = (dev_port_of("--queue", port_text), int(queue_text))
        else:
            raise ConfigError(
                "--queue",
                f"expected PORT/QUEUE, a device port or a front-panel name (1/0/3) and a "
                f"queue, integers without leading zeros, got {text!r}",
            )
        if q in out:
            raise ConfigError("--queue", f"{text} given twice")
        out.append(q)
    return out
