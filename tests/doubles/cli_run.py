# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Running tofcc in-process the way a shell would, for CLI tests."""

from __future__ import annotations

import pytest

from bfrt_controller.cli import run as tofcc


def out_of(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `tofcc ARGS`."""
    capsys.readouterr()
    code = tofcc(list(args))
    got = capsys.readouterr()
    return code, got.out, got.err
