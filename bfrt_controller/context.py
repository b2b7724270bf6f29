"""What one `tofcc` command works on: the program, its config, the target
switch and (on the model target) the state file, opened once and released
when the command ends. Every command module takes it as click's `obj`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hw_profiles import load_profile

from .console import console
from .documents import Document, ProgramDocument, read_document, require_program_config
from .errors import ConfigError
from .programs import App, get_program
from .state import default_state_path, load_state, save_state, state_lock
from .sync import sync_with_switch
from .targets import open_switch

if TYPE_CHECKING:  # imported when a command needs them: each app pulls in its solver stack
    from .bfcc import app as bfcc_app
    from .pmqecn import app as pmqecn_app

DEFAULT_PROGRAM = "pmqecn"


class Context:
    def __init__(
        self,
        target: str,
        program: str | None,
        config: Path | None,
        state: Path | None,
        client_id: int = 0,
    ) -> None:
        self.target = target
        # --program / TOFCC_PROGRAM when given; else the config's own
        # `program:` (--config now, or the file a command names: adopt).
        self.explicit_program = program is not None
        self._state = state
        self.config_path = config
        self.client_id = client_id
        self._named_program = program
        # Each file a command names, read once (documents.py).
        self._documents: dict[Path, Document] = {}
        self.program = get_program(program or self._program_of(config) or DEFAULT_PROGRAM)
        # The state-file lock and every switch session the command opened,
        # released when it ends: a BF-Runtime client id and bind are free for
        # the next writer at once, not when the process is reaped.
        self._held = contextlib.ExitStack()

    @property
    def state_path(self) -> Path:
        return self._state or default_state_path(self.program.name)

    def document(self, path: Path) -> Document:
        """`path` read and validated, once per command (documents.py)."""
        doc = self._documents.get(path)
        if doc is None:
            doc = read_document(path, self._named_program, DEFAULT_PROGRAM)
            self._documents[path] = doc
        return doc

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
        doc = require_program_config(self.document(self.config_path), "--config")
        return doc.config

    def close(self) -> None:
        self._held.close()

    @property
    def is_model(self) -> bool:
        return self.target == "model"

    def open_app(self, read_only: bool = False, sync: bool = False) -> App:
        """`sync`: a one-shot command on a switch starts from the live values it
        holds and re-pushes everything if it lost the program's state (sync.py)."""
        saved = None
        if self.is_model:
            if not read_only:
                # Held until the command ends, so its read and its save are one step.
                # A reader takes none (state.py): the file is only replaced whole.
                self._held.enter_context(state_lock(self.state_path))
            saved = load_state(self.state_path)
            self.check_state_program(saved)
        if saved is not None and self.config_path is None:
            cfg: Any = self.program.parse_config(
                saved["config"], f"state file {self.state_path}: config"
            )
        else:
            saved = None
            cfg = self.program_config()
        switch = open_switch(
            self.target,
            self.program.name,
            load_profile(cfg.chip),
            client_id=self.client_id,
            read_only=read_only,
        )
        switch.connect()
        self._held.callback(switch.close)
        app = self.program.make_app(switch, cfg)
        if saved is not None:
            app.restore_live(saved.get("live") or {}, f"state file {self.state_path}: live")
        if self.is_model:
            # The model starts empty every command: replay the intended state.
            app.push_all()
        elif sync:
            report = sync_with_switch(app)
            if report.missing:
                console.print(
                    f"the switch lacked {report.missing} of the program's table entries "
                    f"(restarted?): pushed the whole intended state ({report.pushed} writes)"
                )
        return app

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
            save_state(
                self.state_path,
                self.program.name,
                app.config.model_dump(mode="json"),
                app.live_state(),
            )
