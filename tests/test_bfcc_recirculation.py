# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What BFCC's rate reduction costs in recirculation, counted on the model.

A flagged group's packets leave in windows of RT real packets and one fake;
each fake's real packet recirculates once. So 1/(RT+1) of the group's slots
on the port are recirculated, i.e. 10 %, 25 % and 50 % of the port rate for
degrees 1-3 when the group fills the port (tna/bfcc/README.md).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hw_profiles import load_profile
from models.switch.bfcc import DEFAULT_RATE_THRESHOLDS, ETHERTYPE_TOFCC_FAKE, Bfcc
from models.switch.core import Match, Output
from models.switch.target import ModelTarget
from models.vectors.format import DEFAULT_VECTOR_ROOT, load_vector_file
from models.vectors.runner import apply_setup
from models.wire import TofccFeedback

DOWNSTREAM_PORT = 3
# The reaction-point vectors' switch: groups, routes, RT 9/3/1, recirculation.
SETUP = load_vector_file(DEFAULT_VECTOR_ROOT / "bfcc" / "reaction_point.yaml").setup


class CountingSwitch:
    """A BFCC model whose recirculation passes are counted."""

    def __init__(self, chip: str, degree: int, named_group_only: int = 0) -> None:
        self.sw = Bfcc(load_profile(chip))
        apply_setup(ModelTarget(self.sw), SETUP)
        if named_group_only:
            rp = self.sw.table("SwitchIngress.reaction_point")
            key = {"ig_tm_md.ucast_egress_port": Match(DOWNSTREAM_PORT)}
            rp.delete(key)
            rp.add(
                key,
                "SwitchIngress.react",
                {"high_qid": 2, "low_qid": 1, "bp_expiry_ns": 0, "named_group_only": 1},
            )
        self.recirculated: list[int] = []
        run = self.sw._run

        def counting_run(port: int, data: bytes, outputs: list[Output], depth: int) -> None:
            if depth > 0:
                self.recirculated.append(len(data))
            run(port, data, outputs, depth)

        self.sw._run = counting_run  # type: ignore[method-assign]
        backpressure = Ether(dst="02:00:00:00:00:03", src="00:00:00:00:03:fe", type=0x88B6)
        message = backpressure / TofccFeedback(msg_type=2, class_id=1, degree=degree)
        assert self.sw.send(3, bytes(message)) == []

    def send(self, host: int) -> list[Output]:
        return self.sw.send(1, PACKETS[host])


PACKETS = {
    host: bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src=f"10.0.1.{host}", dst="10.0.3.3")
        / UDP(sport=5000, dport=6000)
        / bytes(200)
    )
    for host in (1, 2)
}


def is_fake(o: Output) -> bool:
    return int.from_bytes(o.data[12:14], "big") == ETHERTYPE_TOFCC_FAKE


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
@pytest.mark.parametrize("degree", [1, 2, 3])
def test_recirculated_share_of_the_groups_slots(chip: str, degree: int) -> None:
    rt = DEFAULT_RATE_THRESHOLDS[degree]
    windows = 20
    sw = CountingSwitch(chip, degree)
    emitted: list[Output] = []
    # The first window is RT sends; every later one RT sends too, the fake's
    # recirculated real opening it. k*RT + 1 sends end right after k fakes.
    for _ in range(windows * rt + 1):
        emitted += sw.send(host=1)
    assert {o.port for o in emitted} == {DOWNSTREAM_PORT}
    fakes = [o for o in emitted if is_fake(o)]
    assert len(fakes) == len(sw.recirculated) == windows
    # The last real packet opens window k+1; the k full windows are exact.
    slots = len(emitted) - 1
    assert slots == windows * (rt + 1)
    assert Fraction(len(sw.recirculated), slots) == Fraction(1, rt + 1)
    # Fakes and recirculated copies are full-size: the byte shares are the same.
    recirculated_bytes = sum(sw.recirculated)
    assert Fraction(recirculated_bytes, slots * len(emitted[0].data)) == Fraction(1, rt + 1)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_port_wide_recirculation_is_one_in_rt_plus_one_of_the_port(degree: int) -> None:
    # Group 1 (named) and group 2 alternate on the port; both are flagged
    # (the paper's port-wide state), so every port slot counts towards RT.
    rt = DEFAULT_RATE_THRESHOLDS[degree]
    sw = CountingSwitch("tofino", degree)
    port_slots = 0
    for _ in range(10 * (rt + 1)):
        port_slots += len(sw.send(host=1)) + len(sw.send(host=2))
    windows = len(sw.recirculated)
    # Whole windows of RT real + 1 fake, plus at most one window in progress.
    assert windows * (rt + 1) <= port_slots < (windows + 1) * (rt + 1)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_named_group_only_recirculation_scales_with_the_groups_share(degree: int) -> None:
    # named_group_only: group 1 (flagged) and group 2 (not) alternate on the
    # port: recirculation is group 1's share of 1/(RT+1).
    rt = DEFAULT_RATE_THRESHOLDS[degree]
    sw = CountingSwitch("tofino", degree, named_group_only=1)
    flagged_slots = 0
    port_slots = 0
    for _ in range(20 * rt + 1):
        out = sw.send(host=1)
        flagged_slots += len(out)
        port_slots += len(out)
        port_slots += len(sw.send(host=2))
    assert Fraction(len(sw.recirculated), flagged_slots - 1) == Fraction(1, rt + 1)
    share = Fraction(flagged_slots - 1, port_slots - 1)
    assert Fraction(len(sw.recirculated), port_slots - 1) == share / (rt + 1)
