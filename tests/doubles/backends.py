"""Both backends of one program side by side, for tests that hold them to
the same behaviour: the reference model, and BF-Runtime on the fake SDE."""

from __future__ import annotations

from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.switch import Switch
from hw_profiles import load_profile

from .fake_bfrt_grpc import FakeBfrtGrpc


def both_backends(program: str, chip: str = "tofino") -> list[tuple[Switch, FakeBfrtGrpc | None]]:
    """[(model switch, None), (connected BF-Runtime switch, its fake SDE)]."""
    profile = load_profile(chip)
    fake = FakeBfrtGrpc(program, profile)
    sw = BfrtSwitch(program, profile, client_module=fake)
    sw.connect()
    return [(ModelSwitch(program, profile), None), (sw, fake)]
