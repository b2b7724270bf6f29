# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 12 point 6: vectors placed on each chip's front-panel ports.

Every vector runs on the reference model with its ports moved to the chip's
device ports (Tofino2: front panel from 8) by the same wrapper the PTF modules
use: a port-valued field the wrapper missed would send, route or count on the
wrong port and fail here, long before tofino-model sees it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hw_profiles import load_profile
from models.switch.registry import PROGRAMS, make_model
from models.switch.target import ModelTarget
from models.vectors.format import (
    DEFAULT_VECTOR_ROOT,
    KeyMatch,
    TableEntrySpec,
    Vector,
    VectorFile,
    load_vector_file,
    vector_files,
)
from models.vectors.runner import VectorMismatch, run_vector
from ptf_tests.common.ports import PortMappedTarget, port_file_name, port_file_text

PTF_DIR = Path(__file__).resolve().parents[2] / "ptf_tests"


def _cases() -> list[tuple[Path, VectorFile, Vector]]:
    out = []
    for path in vector_files(DEFAULT_VECTOR_ROOT):
        vfile = load_vector_file(path)
        out.extend((path, vfile, v) for v in vfile.vectors)
    return out


CASES = _cases()


class Spy(ModelTarget):
    """The model, remembering the device ports packets went in and out on."""

    def __init__(self, program):  # type: ignore[no-untyped-def]
        super().__init__(program)
        self.ports: set[int] = set()

    def send_and_expect(self, port, data, expected, context):  # type: ignore[no-untyped-def]
        self.ports.add(port)
        self.ports.update(p for p, _ in expected)
        super().send_and_expect(port, data, expected, context)


@pytest.mark.parametrize(
    ("path", "vfile", "vector"),
    CASES,
    ids=[f"{p.parent.name}/{p.stem}/{v.name}" for p, _, v in CASES],
)
def test_vector_on_tofino2_front_panel_ports(path: Path, vfile: VectorFile, vector: Vector) -> None:
    profile = load_profile("tofino2")
    model = make_model(vfile.program, profile, vector.pipes)
    spy = Spy(model)
    run_vector(
        PortMappedTarget(spy, profile, model), vfile, vector, PROGRAMS[vfile.program].queue_hook
    )
    cpu_or_recirc = set(profile.cpu_eth_ports) | set(profile.recirculation_ports) | {0}
    assert spy.ports, "the vector sent nothing"
    assert min(spy.ports) >= profile.front_panel_port_min
    assert not spy.ports & cpu_or_recirc


def test_a_missed_port_field_fails() -> None:
    """The check above can fail: route to an untranslated port and the packet
    leaves where the vector does not expect it."""
    profile = load_profile("tofino2")
    path = vector_files(DEFAULT_VECTOR_ROOT, "pmqecn")[0]
    vfile = load_vector_file(path)
    vector = vfile.vectors[0]
    model = make_model(vfile.program, profile)

    class ForgetsRouteData(PortMappedTarget):
        def add_entry(self, entry: TableEntrySpec) -> None:
            self.inner.add_entry(entry.model_copy(update={"key": self._key(dict(entry.key))}))

    with pytest.raises(VectorMismatch):
        run_vector(
            ForgetsRouteData(ModelTarget(model), profile, model),
            vfile,
            vector,
            PROGRAMS[vfile.program].queue_hook,
        )


def test_ports_are_moved_per_chip() -> None:
    t1, t2 = load_profile("tofino"), load_profile("tofino2")
    for profile, expect in ((t1, 2), (t2, 10)):
        model = make_model("pmqecn", profile)
        target = PortMappedTarget(ModelTarget(model), profile, model)
        key = target._key({"eg_intr_md.egress_port": KeyMatch(value=2)})
        assert key["eg_intr_md.egress_port"].value == expect
    with pytest.raises(ValueError, match="masked"):
        target._key({"ig_intr_md.ingress_port": KeyMatch(value=2, mask=0x7)})


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_committed_port_files_match_the_profile(chip: str) -> None:
    profile = load_profile(chip)
    path = PTF_DIR / port_file_name(profile)
    assert path.read_text() == port_file_text(profile), (
        f"{path.name} is stale: regenerate with python -m ptf_tests.common.ports"
    )
