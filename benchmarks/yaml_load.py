# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The strict YAML loader's cost, beside PyYAML's own safe loader, in one run.

Run ``python benchmarks/yaml_load.py`` (about half a minute).  Prints, for
every YAML file the project ships read together, and for hostile files just
under the 2 MiB cap, the CPU seconds ``hw_profiles.safe_yaml`` spends and the
parser events it pulls before it returns or refuses.  For the shipped files
PyYAML's ``CSafeLoader`` reads the same text in the same run, as the ratio's
base.  The hostile files are not given to PyYAML: it spends 19-115 s and up
to 1.7 GB on each (issue 44).  The suite counts events (tests/yaml_work.py);
only this script reports seconds.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hw_profiles import safe_yaml  # noqa: E402

HOSTILE: dict[str, Callable[[], str]] = {
    "2 M zeros in one flow list": lambda: "[" + "0," * 1_040_000 + "0]\n",
    "690 k empty flow lists": lambda: "[" + "[]," * 690_000 + "[]]\n",
    "200 k keys": lambda: "".join(f"k{i}: 0\n" for i in range(200_000)),
    "1 M nested lists": lambda: "[" * 1_035_000 + "]" * 1_035_000,
}


class _Counting:
    def __init__(self, events: object) -> None:
        self.events, self.pulled = events, 0

    def get_event(self) -> object:
        self.pulled += 1
        return self.events.get_event()  # type: ignore[attr-defined]

    def dispose(self) -> None:
        self.events.dispose()  # type: ignore[attr-defined]


def _ours(texts: list[str]) -> tuple[float, int]:
    made: list[_Counting] = []
    plain = safe_yaml._events

    def counting(text: str) -> _Counting:
        made.append(_Counting(plain(text)))
        return made[-1]

    safe_yaml._events = counting  # type: ignore[assignment]
    try:
        began = time.process_time()
        for text in texts:
            with contextlib.suppress(safe_yaml.YamlFileError):
                safe_yaml.loads(text, hex_ints=True)
        return time.process_time() - began, sum(c.pulled for c in made)
    finally:
        safe_yaml._events = plain


def _pyyaml(texts: list[str]) -> float:
    began = time.process_time()
    for text in texts:
        yaml.load(text, Loader=yaml.CSafeLoader)
    return time.process_time() - began


def main() -> None:
    shipped = sorted(
        p for p in REPO.rglob("*.y*ml") if ".venv" not in p.parts and ".git" not in p.parts
    )
    texts = [p.read_text() for p in shipped]
    ours, events = _ours(texts)
    theirs = _pyyaml(texts)
    print(f"{'input':34} {'safe_yaml s':>11} {'events':>9} {'CSafeLoader s':>13} {'ratio':>6}")
    label = f"{len(texts)} shipped files"
    print(f"{label:34} {ours:11.3f} {events:9d} {theirs:13.3f} {ours / theirs:6.2f}")
    for name, make in HOSTILE.items():
        spent, pulled = _ours([make()])
        print(f"{name:34} {spent:11.3f} {pulled:9d} {'(not run)':>13} {'':>6}")


if __name__ == "__main__":
    main()
