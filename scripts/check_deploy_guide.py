#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Run deploy/README.md's systemd steps as written, under a temporary root.

Every `/opt/` and `/etc/` in the steps (and in deploy/tofcc.service's
ExecStart) is moved under ROOT; `useradd`, `systemctl` and `journalctl` need
a real system and are skipped (and listed). Then the unit's ExecStart runs
against the copied deployment file with `check` in place of `run`, since a
fleet's switches are not reachable here. Exit 0 when every step worked.

    scripts/check_deploy_guide.py --root /tmp/r --install /path/to/wheel-or-tree
    scripts/check_deploy_guide.py --root /tmp/r --tofcc .venv/bin/tofcc  # no install
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NEEDS_A_SYSTEM = ("useradd", "systemctl", "journalctl")


def guide_steps(readme: Path) -> list[str]:
    text = readme.read_text()
    section = text[text.index("## systemd") :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    if block is None:
        raise SystemExit(f"{readme}: no ```sh block under '## systemd'")
    return [ln for ln in block.group(1).splitlines() if ln.strip()]


def rooted(text: str, root: Path) -> str:
    return re.sub(r"(?<![\w/.])/(opt|etc)/", lambda m: f"{root}/{m.group(1)}/", text)


def exec_start(unit: Path) -> list[str]:
    for line in unit.read_text().splitlines():
        if line.startswith("ExecStart="):
            return shlex.split(line.removeprefix("ExecStart="))
    raise SystemExit(f"{unit}: no ExecStart")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True)
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--install", help="what `pip install` gets: a wheel or the source tree")
    how.add_argument(
        "--tofcc", type=Path, help="skip the venv and pip steps: link this tofcc in their place"
    )
    args = ap.parse_args(argv)
    root = args.root.resolve()
    # What every systemd host already has.
    (root / "etc" / "systemd" / "system").mkdir(parents=True, exist_ok=True)
    for step in guide_steps(REPO / "deploy" / "README.md"):
        cmd = rooted(step, root)
        if cmd.split()[0] in NEEDS_A_SYSTEM:
            print(f"skipped (needs a real system): {step}")
            continue
        if args.tofcc is not None and ("-m venv" in cmd or "pip install" in cmd):
            if "-m venv" in cmd:
                venv_bin = Path(cmd.split("-m venv", 1)[1].split()[0]) / "bin"
                venv_bin.mkdir(parents=True, exist_ok=True)
                (venv_bin / "tofcc").symlink_to(args.tofcc.resolve())
            print(f"replaced by a link to {args.tofcc}: {step}")
            continue
        if args.install is not None:
            cmd = cmd.replace("/path/to/tofino-cc", shlex.quote(str(Path(args.install).resolve())))
        print(f"$ {cmd}", flush=True)
        subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=REPO, check=True)
    unit = root / "etc" / "systemd" / "system" / "tofcc.service"
    start = [rooted(a, root) for a in exec_start(unit)]
    if start[1] != "run":
        raise SystemExit(f"{unit}: ExecStart is not `tofcc run`: {start}")
    # From another directory: nothing may resolve against the source tree.
    check = [start[0], "check", *start[2:]]
    print(f"$ {shlex.join(check)}", flush=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run(check, cwd=root, env=env, check=True)
    print("deploy guide: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
