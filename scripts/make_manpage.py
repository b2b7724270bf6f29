#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Write tofcc's man page (roff, man(7)) from its click help, for packagers:
`python scripts/make_manpage.py build/tofcc.1` (default: tofcc.1 here).
`tofcc deploy init DIR` writes the same page as DIR/man/man1/tofcc.1."""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bfrt_controller.cli import cli
from bfrt_controller.manpage import render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", nargs="?", type=Path, default=Path("tofcc.1"))
    args = parser.parse_args(argv)
    try:
        ver = version("tofino-cc")
    except PackageNotFoundError:
        ver = ""
    args.out.write_text(render(cli, ver))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
