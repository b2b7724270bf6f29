# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Both backends of one program side by side, for tests that hold them to
the same behaviour: the reference model, and BF-Runtime on the fake SDE."""

from __future__ import annotations

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.switch import PortWrite, Switch
from hw_profiles import load_profile

from .fake_bfrt_grpc import FakeBfrtGrpc


def both_backends(
    program: str, chip: str = "tofino", ports: tuple[int, ...] = ()
) -> list[tuple[Switch, FakeBfrtGrpc | None]]:
    """[(model switch, None), (connected BF-Runtime switch, its fake SDE)],
    with `ports` added (25G on one lane) as a deployment's front panel adds
    them: the SDE refuses `$PORT_STAT` on a port that is not."""
    profile = load_profile(chip)
    fake = FakeBfrtGrpc(program, profile)
    sw = BfrtSwitch(program, profile, client_module=fake)
    sw.connect()
    model = ModelSwitch(program, profile)
    adds = [PortWrite(p, "BF_SPEED_25G", "BF_FEC_TYP_NONE", "PM_AN_DEFAULT", 1) for p in ports]
    for s in (model, sw):
        s.write(adds)
    return [(model, None), (sw, fake)]
