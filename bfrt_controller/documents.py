# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A config file read once: a program config or a deployment, told apart
here and nowhere else, with its path and program.

Every command and the service take the Document, never the path again:
each parse is a chance for the file to change between reads, and each
caller deciding anew what kind of file it holds was how a deployment given
where a program config belongs came to be reported as a program config
missing its fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError
from .programs import PROGRAMS, Program, get_program
from .validation import load_yaml

if TYPE_CHECKING:  # the service is imported only when a deployment is read
    from .deployment import ResolvedTarget, ServiceConfig


@dataclass(frozen=True)
class ProgramDocument:
    """A program config: `program` runs `config` (validated whole)."""

    path: Path
    program: Program
    config: Any

    kind = "program config"


@dataclass(frozen=True)
class DeploymentDocument:
    """A deployment file: switches (targets), each with its program and
    config resolved, and the service's own settings."""

    path: Path
    service: ServiceConfig
    targets: list[ResolvedTarget]

    kind = "deployment file"


Document = ProgramDocument | DeploymentDocument


def program_named(raw: object) -> str | None:
    """The `program:` a config names, if it is one tofcc knows."""
    name = raw.get("program") if isinstance(raw, dict) else None
    return name if isinstance(name, str) and name in PROGRAMS else None


def read_document(path: Path, program: str | None = None, default: str = "pmqecn") -> Document:
    """Parse `path` once and validate it whole. `program`: the one the user
    named (--program), against which a program config is validated; else
    the file's own `program:`, else `default`."""
    from .deployment import is_service_config, resolve

    raw = load_yaml(path)
    if is_service_config(raw):
        service, targets = resolve(raw, str(path), path.parent)
        return DeploymentDocument(path, service, targets)
    prog = get_program(program or program_named(raw) or default)
    return ProgramDocument(path, prog, prog.parse_config(raw, str(path)))


def require_program_config(doc: Document, option: str) -> ProgramDocument:
    """A command that takes a program config, given `doc`."""
    if isinstance(doc, ProgramDocument):
        return doc
    raise ConfigError(
        option,
        f"{doc.path} is a deployment file (it has targets:), not a program config: "
        "name one target's config, or use a command that takes a deployment "
        "(apply, diff, check, ports, run)",
    )


def require_deployment(doc: Document, option: str) -> DeploymentDocument:
    if isinstance(doc, DeploymentDocument):
        return doc
    raise ConfigError(
        option,
        f"{doc.path} is a {doc.program.name} program config, not a deployment file "
        "(a deployment lists targets:)",
    )
