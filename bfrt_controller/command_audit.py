# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A command's audit lines (audit.py): what it set out to write, each switch
it opened as a writer, each cycle of an `--interval` loop that wrote, and
how it ended. Context's part that audits, kept apart so the command context
stays readable."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .documents import DeploymentDocument, Document

if TYPE_CHECKING:
    from .audit import AuditLog
    from .deployment import ResolvedTarget
    from .programs import Program


class CommandAudit:
    """Mixed into Context, which sets these."""

    audit_log: Path | None
    command: str
    target: str
    program: Program
    deployment_target: ResolvedTarget | None
    _deployment_path: Path | None
    _writes: list[tuple[str, str, str, Any]]
    _intent: dict[str, Any] | None

    def document(self, path: Path) -> Document:
        raise NotImplementedError

    def audit(self, doc: Document | None = None) -> AuditLog:
        """Where this command's audit lines go: --audit-log, else the
        deployment's `audit_log:` (`doc`'s, or the bound target's), else the default."""
        from .audit import audit_log
        from .deployment import audit_log_path

        path = self.audit_log
        deployment = doc if isinstance(doc, DeploymentDocument) else None
        if deployment is None and self._deployment_path is not None:
            bound = self.document(self._deployment_path)
            deployment = bound if isinstance(bound, DeploymentDocument) else None
        if path is None and deployment is not None:
            path = audit_log_path(deployment.service, deployment.path.parent)
        return audit_log(path, self.command)

    def intend_write(self, **fields: Any) -> None:
        """This command is to write: even a refusal before any switch is
        opened leaves an audit line."""
        self._intent = fields

    def settled_write(self) -> None:
        """The command recorded its own lines (a deployment apply: one per switch)."""
        self._intent = None

    def _note_writer(self, program: str, config: Any) -> None:
        """A switch is about to be opened as this command's writer: the audit
        file must take a line first (else exit 2, nothing sent)."""
        self.audit().check()
        bound = self.deployment_target
        switch = bound.name if bound is not None else self.target
        self._writes.append((switch, self.target, program, config))

    def audit_cycle(self, action: str, changes: int, repushed: bool = False) -> None:
        """One line for a cycle of an `--interval` loop that wrote (its changes,
        or a re-push of a restarted switch); the command's own line, at its
        end, says how the loop ended. A cycle that wrote nothing leaves none."""
        if changes == 0 and not repushed:
            return
        audit = self.audit()
        for switch, target, program, config in self._writes:
            audit.record(
                action,
                switch,
                program,
                config,
                None,
                target=target,
                changes=changes,
                repushed=repushed,
            )

    def settle_audit(self, action: str, error: BaseException | None) -> None:
        """One audit line per write this command opened a switch for, with
        how the command ended; or, for a write refused before that, one."""
        writes, intent = self._writes, self._intent
        self._writes, self._intent = [], None
        if not writes and intent is None:
            return
        audit = self.audit()
        for switch, target, program, config in writes:
            audit.record(action, switch, program, config, error, target=target)
        if not writes and intent is not None:
            audit.record(action, self.target, self.program.name, None, error, **intent)
