# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc deploy init DIR`: the operator's files, written from the installed package.

The wheel carries deploy/ and examples/ as package data (bfrt_controller/
deploy_data and examples_data are links to them in the source tree), so an
operator with only `pip install tofino-cc` gets the systemd unit, the
deployments and their configs, the Grafana dashboard and the alert rules.

The unit is rewritten to name what was written: `Documentation=` the README
in DIR, `ExecStart=` this installation's tofcc on DIR's fleet.yaml.

Beside them, made from this tofcc's own commands (manpage.py): the man page
`man/man1/tofcc.1` and the shell completions `completions/tofcc.bash`,
`completions/_tofcc` (zsh) and `completions/tofcc.fish`.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import click

from . import paths
from .console import json_option, report, say
from .errors import ConfigError

# Package directory -> where its files land under DIR.
SOURCES = {"deploy_data": "", "examples_data": "examples"}
UNIT = "tofcc.service"
SHIPPED_TOFCC = "/opt/tofino-cc/venv/bin/tofcc"
SHIPPED_DOC = "file:///etc/tofcc/README.md"
SHIPPED_CONFIG = "/etc/tofcc/fleet.yaml"


@dataclass(frozen=True)
class OperatorFile:
    relpath: str  # under DIR, '/'-separated
    data: bytes


def _walk(node: Traversable, prefix: str) -> list[OperatorFile]:
    out: list[OperatorFile] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name.startswith((".", "__")):
            continue
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            out.extend(_walk(child, f"{rel}/"))
        else:
            out.append(OperatorFile(rel, child.read_bytes()))
    return out


def shipped_files() -> list[OperatorFile]:
    """Every file the package ships for operators, as `deploy init` lays them out."""
    root = resources.files("bfrt_controller")
    files: list[OperatorFile] = []
    for package_dir, target in SOURCES.items():
        files.extend(_walk(root / package_dir, f"{target}/" if target else ""))
    return files


def _this_tofcc() -> str:
    """The tofcc of the running installation (a venv's bin/ beside its
    python), else the path the guide installs to."""
    candidate = Path(sys.executable).parent / "tofcc"
    return str(candidate) if candidate.is_file() else SHIPPED_TOFCC


def render_unit(text: str, out_dir: Path, tofcc: str) -> str:
    """The shipped unit with its paths pointing at what `deploy init` wrote."""
    replaced = text
    for old, new in (
        (SHIPPED_DOC, (out_dir / "README.md").as_uri()),
        # systemd splits ExecStart= as a shell would: a path with a space quoted.
        (SHIPPED_TOFCC, shlex.quote(tofcc)),
        (SHIPPED_CONFIG, shlex.quote(str(out_dir / "fleet.yaml"))),
    ):
        if old not in replaced:
            # The unit and this function drifted apart: a unit naming the old
            # paths must not be written as if it were rewritten.
            raise ConfigError(UNIT, f"the shipped unit no longer contains {old!r}")
        replaced = replaced.replace(old, new)
    return replaced


MAN_PAGE = "man/man1/tofcc.1"


def generated_files(root: click.Command | None) -> list[OperatorFile]:
    """The man page and completion scripts of the CLI `root` (none without it)."""
    if root is None:
        return []
    from importlib.metadata import PackageNotFoundError, version

    from .manpage import COMPLETION_FILES, completion_script, render

    try:
        ver = version("tofino-cc")
    except PackageNotFoundError:  # a source tree run without an install
        ver = ""
    out = [OperatorFile(MAN_PAGE, render(root, ver).encode())]
    for shell, name in COMPLETION_FILES.items():
        out.append(OperatorFile(f"completions/{name}", completion_script(root, shell).encode()))
    return out


def plan(
    out_dir: Path, force: bool, tofcc: str | None = None, root: click.Command | None = None
) -> list[tuple[Path, bytes]]:
    """What `deploy init` would write: (path, bytes) for every file (`root`:
    the CLI whose man page and completions to write too). Without `force`,
    an existing file (or anything else at a name) is refused before
    anything is written."""
    out_dir = Path(out_dir).absolute()
    if paths.lexists(out_dir) and not paths.is_dir(out_dir):
        raise ConfigError(str(out_dir), "is not a directory")
    writes: list[tuple[Path, bytes]] = []
    for f in shipped_files() + generated_files(root):
        data = f.data
        if f.relpath == UNIT:
            data = render_unit(data.decode(), out_dir, tofcc or _this_tofcc()).encode()
        writes.append((out_dir / f.relpath, data))
    if not force:
        for path, _ in writes:
            if paths.lexists(path):
                raise ConfigError(
                    str(path), "already exists (tofcc deploy init --force replaces it)"
                )
    return writes


def write(writes: list[tuple[Path, bytes]]) -> None:
    for path, data in writes:
        paths.make_dir(path.parent)
        paths.replace_file(path, data)


@click.group(help="The operator's files shipped with tofcc (unit, deployments, dashboards).")
def deploy() -> None:
    pass


@deploy.command(
    "init",
    help="Write the systemd unit, the model and fleet deployments with their configs, "
    "examples/, the Grafana dashboard, the Prometheus alert rules, the man page "
    "(man/man1/tofcc.1) and the bash, zsh and fish completions (completions/) into DIR, "
    "with the unit pointing at them.",
)
@click.argument("out_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="replace files that already exist in DIR")
@json_option
@click.pass_context
def deploy_init(ctx: click.Context, out_dir: Path, force: bool) -> None:
    writes = plan(out_dir, force, root=ctx.find_root().command)
    write(writes)
    report(wrote=[str(path) for path, _ in writes])
    for path, _ in writes:
        say(f"wrote {path}")
