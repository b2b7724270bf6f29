# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What one `tofcc` command works on: the program, its config, the target
switch and (on the model target) the state file, opened once and released
when the command ends. Every command module takes it as click's `obj`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hw_profiles import ProfileError, load_profile

from . import units
from .command_audit import CommandAudit
from .console import console
from .documents import (
    DeploymentDocument,
    Document,
    ProgramDocument,
    read_document,
    require_program_config,
)
from .errors import ConfigError
from .port_names import Namer, namer
from .programs import App, get_program
from .state import default_state_path, load_state, save_state, state_lock, target_state_path
from .sync import sync_with_switch
from .targets import open_switch
from .tls import ChannelTls

if TYPE_CHECKING:  # imported when a command needs them: each app pulls in its solver stack
    from .bfcc import app as bfcc_app
    from .deployment import ResolvedTarget
    from .pmqecn import app as pmqecn_app

DEFAULT_PROGRAM = "pmqecn"


class Context(CommandAudit):
    def __init__(
        self,
        target: str,
        program: str | None,
        config: Path | None,
        state: Path | None,
        client_id: int = 0,
        given: frozenset[str] = frozenset(),
        switch: str | None = None,
        audit_log: Path | None = None,
        command: str = "tofcc",
        fleet: bool = False,
        documents: dict[Path, Document] | None = None,
    ) -> None:
        self.target = target
        # --audit-log, and the command line each audit line names (audit.py).
        self.audit_log = audit_log
        self.command = command
        # Writes this command opened a switch for, and one it set out to make
        # (apply, set) even if it is refused before a switch is opened.
        self._writes: list[tuple[str, str, str, Any]] = []
        self._intent: dict[str, Any] | None = None
        # The global options the user gave (click's parameter names), not defaulted.
        self.given = given
        # --program / TOFCC_PROGRAM when given; else the config's own
        # `program:` (--config now, or the file a command names: adopt).
        self.explicit_program = program is not None
        self._state = state
        self.config_path = config
        self.client_id = client_id
        self._named_program = program
        # Each file a command names, read once (documents.py); a target's
        # Context (for_target) shares its parent's.
        self._documents: dict[Path, Document] = {} if documents is None else documents
        self._conversions: dict[Path, list[units.Conversion]] = {}
        # --switch, and whether the command takes a whole deployment (`status`:
        # then --config DEPLOY without --switch binds no one target).
        self.switch_name = switch
        self._fleet = fleet
        self._given_raw = (target, client_id, state, audit_log)
        self.program = get_program(program or self._program_of(config) or DEFAULT_PROGRAM)
        # --config naming a deployment: a one-shot command works on one of its
        # targets, on that target's switch (and, on the model, its state file).
        self.deployment_target: ResolvedTarget | None = None
        self._deployment_path: Path | None = None
        if config is not None:
            self._bind_deployment_target(config, switch)
        elif switch is not None and not fleet:  # `status --config DEPLOY` binds it later
            raise ConfigError("--switch", "names a target of a deployment file given as --config")
        # The state-file lock and every switch session the command opened,
        # released when it ends: a BF-Runtime client id and bind are free for
        # the next writer at once, not when the process is reaped.
        self._held = contextlib.ExitStack()
        # The model target's state file as this command read it (open_app).
        self._saved: dict[str, Any] | None = None

    @property
    def fleet(self) -> DeploymentDocument | None:
        """The deployment whose every switch the command works on (`status
        --config DEPLOY` without --switch), if that is what it was given."""
        if self.deployment_target is not None or self._deployment_path is None:
            return None
        doc = self.document(self._deployment_path)
        return doc if isinstance(doc, DeploymentDocument) else None

    def for_target(self, name: str) -> Context:
        """A Context bound to target `name` of the fleet's deployment, as
        `--config DEPLOY --switch NAME` would make it."""
        assert self._deployment_path is not None
        return self.with_config(self._deployment_path, name, fleet=False)

    def with_config(self, config: Path, switch: str | None, fleet: bool) -> Context:
        """This command's options with `--config config [--switch switch]`, as
        if given before the command (a command's own --config: `status`)."""
        target, client_id, state, audit_log = self._given_raw
        sub = Context(
            target,
            self._named_program,
            config,
            state,
            client_id,
            self.given,
            switch,
            audit_log,
            self.command,
            fleet=fleet,
            documents=self._documents,
        )
        self._held.callback(sub.close)
        return sub

    def dev_port_of(self, option: str, text: str) -> int:
        """A port an operator typed: a device port number, or a front-panel
        name (`1/0`) where the bound target's board knows it."""
        from .set_args import parse_int

        bound = self.deployment_target
        board = bound.board if bound is not None else None
        if "/" not in text:
            return parse_int(option, text)
        if board is None:
            raise ConfigError(
                option,
                f"{text!r} is a front-panel name, known only with a deployment target "
                "whose front_panel names its board (--config DEPLOY.yaml); give the device port",
            )
        try:
            return board.dev_port(text)
        except ValueError as exc:
            raise ConfigError(option, str(exc)) from None

    def cell_bytes(self) -> int:
        """The cell size of the chip the command's switch runs (its config's
        chip; on the model target, the state file's when no --config)."""
        chip = None
        if self.is_model and self.config_path is None:
            saved = load_state(self.state_path)  # read only: open_app takes the lock
            if saved is not None and saved["program"] == self.program.name:
                chip = (saved.get("config") or {}).get("chip")
        if not isinstance(chip, str):
            chip = self.program_config().chip
        try:
            return load_profile(chip).cell_bytes
        except ProfileError:
            return load_profile(self.program_config().chip).cell_bytes

    def port_namer(self) -> Namer:
        """Device port -> front-panel name, where the bound target's board says."""
        bound = self.deployment_target
        return namer(bound.board if bound is not None else None)

    @property
    def switch_label(self) -> str:
        """The switch as an operator names it: the deployment target's name, else --target."""
        bound = self.deployment_target
        return bound.name if bound is not None else self.target

    @property
    def deployment_path(self) -> Path | None:
        """The deployment file --config named, when a target of it is bound."""
        return self._deployment_path

    @property
    def state_path(self) -> Path:
        if self.deployment_target is not None and self.is_model:
            return target_state_path(self.deployment_target.name)
        return self._state or default_state_path(self.program.name)

    def _bind_deployment_target(self, config: Path, switch: str | None) -> None:
        try:
            doc = self.document(config)
        except ConfigError:
            return  # reported by the command that reads --config
        if not isinstance(doc, DeploymentDocument):
            if switch is not None:
                raise ConfigError(
                    "--switch", f"{config} is a program config, not a deployment file"
                )
            return
        names = [t.name for t in doc.targets]
        if switch is None and self._fleet:
            self._deployment_path = config  # every target: the command's (fleet)
            return
        if switch is None and len(names) > 1:
            raise ConfigError(
                "--switch", f"{config} has targets {', '.join(names)}: name one with --switch"
            )
        chosen = next((t for t in doc.targets if switch in (None, t.name)), None)
        if chosen is None:
            raise ConfigError(
                "--switch", f"{config} has no target {switch!r} (it has {', '.join(names)})"
            )
        for option, flag in (
            ("target", "--target"),
            ("client_id", "--client-id"),
            ("state_path", "--state"),
        ):
            if option in self.given:
                raise ConfigError(
                    flag,
                    f"not taken with the deployment file {config}: target {chosen.name} "
                    "names its own switch, client id and state",
                )
        if self.explicit_program and self._named_program != chosen.spec.program:
            raise ConfigError(
                "--program", f"target {chosen.name} of {config} runs {chosen.spec.program}"
            )
        self.deployment_target = chosen
        self._deployment_path = config
        self.program = chosen.program
        self.target = chosen.spec.target
        self.client_id = chosen.spec.client_id

    def document(self, path: Path) -> Document:
        """`path` read and validated, once per command (documents.py)."""
        doc = self._documents.get(path)
        if doc is None:
            with units.recording() as notes:
                doc = read_document(path, self._named_program, DEFAULT_PROGRAM)
            self._documents[path] = doc
            self._conversions[path] = notes
        return doc

    def show_conversions(self, path: Path) -> None:
        """The values `path` gave in bytes, as the cells they became (units.py)."""
        units.show(self._conversions.get(path, []))

    def _program_of(self, config: Path | None) -> str | None:
        """The program of --config's file, if it is a program config that
        reads (an unreadable one is reported by the command that uses it)."""
        if config is None:
            return None
        try:
            doc = self.document(config)
        except ConfigError:
            return None
        return doc.program.name if isinstance(doc, ProgramDocument) else None

    def adopt(self, doc: ProgramDocument) -> None:
        """A config file a command was given decides the program, unless the
        user named one (then the file was validated against that one)."""
        if not self.explicit_program:
            self.program = doc.program

    def program_config(self) -> Any:
        """The program's config: --config's, else the program's shipped default."""
        if self.config_path is None:
            return self.program.load_config(self.program.default_config)
        if self.deployment_target is not None and self.config_path == self._deployment_path:
            return self.deployment_target.config
        doc = require_program_config(self.document(self.config_path), "--config")
        return doc.config

    def close(self) -> None:
        self._held.close()

    @property
    def tls(self) -> ChannelTls | None:
        """TLS for the switch: the deployment target's `tls:`, if one is bound."""
        bound = self.deployment_target
        return bound.tls if bound is not None else None

    @property
    def is_model(self) -> bool:
        return self.target == "model"

    def open_app(self, read_only: bool = False, sync: bool = False, adopt_live: bool = True) -> App:
        """`sync`: a one-shot command on a switch starts from the live values it
        holds and re-pushes everything if it lost the program's state (sync.py).

        The model target is a switch that stays up: a fresh model switch is
        first brought to what its state file says it held (fleet.replay_target),
        then a command given --config starts from it as on a real switch: the
        live values it holds win over the file's (sync.py), unless `adopt_live`
        is off (apply: the file's values are the point)."""
        from .fleet import replay_target

        if not self.is_model:
            app = self._make_app(self.program_config(), read_only)
            if sync:
                report = sync_with_switch(app)
                if report.missing:
                    console.print(
                        f"the switch lacked {report.missing} of the program's table entries "
                        f"(restarted?): pushed the whole intended state ({report.pushed} writes)"
                    )
            return app
        if not read_only:
            # Held until the command ends, so its read and its save are one step.
            # A reader takes none (state.py): the file is only replaced whole.
            self._held.enter_context(state_lock(self.state_path))
        saved = load_state(self.state_path)
        self.check_state_program(saved)
        self._saved = saved
        if saved is not None and self.config_path is None:
            cfg: Any = self.program.parse_config(
                saved["config"], f"state file {self.state_path}: config"
            )
            app = self._make_app(cfg, read_only)
            app.restore_live(saved.get("live") or {}, f"state file {self.state_path}: live")
        else:
            cfg = self.program_config()
            app = self._make_app(cfg, read_only)
            if saved is not None and adopt_live:
                replay_target(app.switch, self.state_path, self.program.name)
                sync_with_switch(app)
        # The model starts empty every command: replay the intended state.
        app.push_all()
        return app

    def _make_app(self, cfg: Any, read_only: bool) -> App:
        if not read_only:
            self._note_writer(self.program.name, cfg)
        switch = open_switch(
            self.target,
            self.program.name,
            load_profile(cfg.chip),
            client_id=self.client_id,
            read_only=read_only,
            tls=self.tls,
        )
        switch.connect()
        self._held.callback(switch.close)
        return self.program.make_app(switch, cfg)

    def check_state_program(self, saved: dict[str, Any] | None) -> None:
        """Refuse a state file another program saved: taking it as "no state"
        made the save replace that program's state with this one's."""
        if saved is not None and saved["program"] != self.program.name:
            raise ConfigError(
                f"state file {self.state_path}: program",
                f"holds {saved['program']!r} state, not {self.program.name}'s: "
                f"give --program {saved['program']} or another --state",
            )

    def pmqecn(self, sync: bool = True) -> pmqecn_app.PmqecnApp:
        from .pmqecn import app as pmqecn_app

        app = self.open_app(sync=sync)
        if not isinstance(app, pmqecn_app.PmqecnApp):
            raise ConfigError("--program", f"this command is for pmqecn, not {self.program.name}")
        return app

    def require(self, program: str) -> None:
        """Refuse a command meant for another program, before touching the switch."""
        if self.program.name != program:
            raise ConfigError(
                "--program", f"this command is for {program}, not {self.program.name}"
            )

    def bfcc(self) -> bfcc_app.BfccApp:
        from .bfcc import app as bfcc_app

        self.require("bfcc")
        app = self.open_app(sync=True)
        assert isinstance(app, bfcc_app.BfccApp)
        return app

    def save(self, app: App) -> None:
        if self.is_model:
            # A deployment target's ports stay as its switch holds them.
            front_panel = None
            if self.deployment_target is not None:
                spec = self.deployment_target.spec.front_panel
                held = self._saved.get("front_panel") if self._saved else None
                front_panel = held or (spec.model_dump(mode="json") if spec else None)
            save_state(
                self.state_path,
                self.program.name,
                app.config.model_dump(mode="json"),
                app.live_state(),
                front_panel,
            )
