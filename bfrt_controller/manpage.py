# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""tofcc.1 and the shell completion scripts, made from the CLI itself.

The man page is click's help, every command and option of it, as roff
(man(7)): written from the same objects `--help` prints, it cannot drift
from them. The completion scripts are click's own (bash, zsh, fish), which
call `tofcc` back with `_TOFCC_COMPLETE` set; `tofcc deploy init` writes all
four beside the unit, and README ("Shell completion and man page") says
where each goes.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import click
from click.shell_completion import get_completion_class

PROG = "tofcc"
COMPLETE_VAR = "_TOFCC_COMPLETE"
# Shell -> the file `deploy init` writes under DIR/completions/.
COMPLETION_FILES = {"bash": "tofcc.bash", "zsh": "_tofcc", "fish": "tofcc.fish"}


def commands(root: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command under `root` as the words that name it (`deploy init`),
    groups included, plugin groups (`eval`) as far as they are installed."""
    if not isinstance(root, click.Group):
        return
    ctx = click.Context(root, info_name=PROG)
    for name in root.list_commands(ctx):
        sub = root.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        yield (*path, name)
        yield from commands(sub, (*path, name))


def _command(root: click.Command, words: tuple[str, ...]) -> click.Command:
    cmd = root
    for w in words:
        assert isinstance(cmd, click.Group)
        found = cmd.get_command(click.Context(cmd, info_name=PROG), w)
        assert found is not None
        cmd = found
    return cmd


def _roff(text: str) -> str:
    """Plain text as roff: backslashes escaped, no line read as a request."""
    out = []
    for line in text.replace("\\", "\\e").splitlines():
        line = line.strip()
        out.append("\\&" + line if line[:1] in (".", "'") else line)
    return "\n".join(out)


def _dashes(text: str) -> str:
    return _roff(text).replace("-", "\\-")


def _options(cmd: click.Command, ctx: click.Context) -> list[str]:
    out: list[str] = []
    for param in cmd.get_params(ctx):
        if not isinstance(param, click.Option):
            continue  # arguments are in the usage line
        record = param.get_help_record(ctx)
        if record is None:
            continue
        opts, help_text = record
        out += [".TP", f"\\fB{_dashes(opts)}\\fR", _roff(help_text or "")]
    return out


def render(root: click.Command, version: str = "") -> str:
    """tofcc.1: NAME, SYNOPSIS, DESCRIPTION (the group's help), OPTIONS,
    one COMMANDS subsection per command with its usage, help and options."""
    ctx = click.Context(root, info_name=PROG)
    date = datetime.date.today().isoformat()
    lines = [
        f'.TH TOFCC 1 "{date}" "tofino-cc {_roff(version)}" "tofino-cc manual"',
        ".SH NAME",
        "tofcc \\- run and retune tofino\\-cc programs on a Tofino switch or the reference model",
        ".SH SYNOPSIS",
        "\\fBtofcc\\fR [\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
        ".SH DESCRIPTION",
        _roff(root.help or ""),
        ".SH OPTIONS",
        *_options(root, ctx),
        ".SH COMMANDS",
    ]
    for words in commands(root):
        cmd = _command(root, words)
        sub_ctx = click.Context(cmd, info_name=" ".join((PROG, *words)))
        usage = " ".join(cmd.collect_usage_pieces(sub_ctx))
        lines += [
            f".SS {_dashes(' '.join((PROG, *words)))} {_roff(usage)}",
            _roff(cmd.help or cmd.short_help or ""),
        ]
        if not isinstance(cmd, click.Group):
            lines += _options(cmd, sub_ctx)
    lines += [
        ".SH FILES",
        ".TP",
        "\\fI$XDG_STATE_HOME/tofcc/\\fR",
        "The model target's state files, checkpoints, pending confirms and, by default, "
        "the audit log (audit.log).",
        ".TP",
        "\\fI/var/log/tofcc/audit.log\\fR",
        "The audit log under the systemd unit (LogsDirectory=); "
        "also journalctl \\-t tofcc\\-audit.",
        ".SH SEE ALSO",
        "The README of tofino\\-cc (operator section) and deploy/README.md, which "
        "\\fBtofcc deploy init\\fR writes beside the unit.",
    ]
    return "\n".join(lines) + "\n"


def completion_script(root: click.Command, shell: str) -> str:
    """click's completion script for `shell` (bash, zsh or fish)."""
    cls = get_completion_class(shell)
    assert cls is not None, shell
    return cls(root, {}, PROG, COMPLETE_VAR).source()
