# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Errors the controller raises; each names what was wrong."""

from __future__ import annotations


class ControllerError(Exception):
    """Base of every error tofcc reports to a user."""

    exit_code = 1


class ConfigError(ControllerError, ValueError):
    """A request or config file is invalid; `field` says where."""

    exit_code = 2

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = message

    def within(self, source: str) -> ConfigError:
        """The same error, naming the file (or state) the field was read from."""
        return ConfigError(f"{source}: {self.field}", self.reason) if source else self


class WriteError(ControllerError):
    """The switch refused a batch; nothing of it was left applied."""

    exit_code = 3

    def __init__(self, index: int, what: str, message: str) -> None:
        super().__init__(f"write #{index} ({what}) refused: {message}; batch rolled back")
        self.index = index
        self.what = what
        self.reason = message


class SwitchUnavailable(ControllerError):
    """The switch cannot be reached (down, restarting, wrong address)."""

    exit_code = 4


class SdeMissing(ControllerError):
    """The BF-Runtime backend needs the SDE's bfrt_grpc, which is not installed."""

    exit_code = 5


class SwitchBusy(ControllerError):
    """Another client owns the program on the switch (one writer per program)."""

    exit_code = 6
