# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Mirror sessions are read back on both backends, so a diff of a pushed
config holds no "unknown" rows and a changed session shows as a change."""

from __future__ import annotations

import pytest

from bfrt_controller.diff import diff_one
from bfrt_controller.switch import MirrorSessionWrite
from doubles.backends import both_backends

SESSION = MirrorSessionWrite(11, 1, 64, "INGRESS", queue=2, icos=1)


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_a_written_session_reads_back_and_diffs_clean(chip: str) -> None:
    for sw, _ in both_backends("pmqecn", chip):
        assert sw.read_mirror_session(11) is None
        assert diff_one(sw, SESSION).change == "add"  # type: ignore[union-attr]
        sw.write([SESSION])
        assert sw.read_mirror_session(11) == SESSION
        assert diff_one(sw, SESSION) is None
        moved = MirrorSessionWrite(11, 2, 64, "INGRESS", queue=2, icos=1)
        d = diff_one(sw, moved)
        assert d is not None and d.change == "change" and "port 1" in d.current
        gone = MirrorSessionWrite(11, 1, delete=True)
        assert diff_one(sw, gone).change == "remove"  # type: ignore[union-attr]
        sw.write([gone])
        assert diff_one(sw, gone) is None
