# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Vector ports -> device ports of the chip under test.

Vectors number ports from the first front-panel port of pipe 0 (port 1 is the
second front-panel port), so one file runs on both chips: on Tofino that is
device port 1, on Tofino2 device port 9, because Tofino2's pipe 0 starts with
the PCIe CPU port (0), recirculation (1, 6-7) and the CPU Ethernet ports (2-5)
(open-p4studio port_mgr_tof2_map.c; hw_profiles `front_panel_port_min`).

`PortMappedTarget` wraps any vector target and translates every port a
vector names, without touching the vector files:
- the port a packet is sent on and every expected output port;
- key fields whose name ends in `port` (ig_intr_md.ingress_port,
  eg_intr_md.egress_port, ig_tm_md.ucast_egress_port, hdr.bridged.ingress_port,
  and the queue hook's key), and those ending in `pipe` (PMQECN's
  ecn_threshold `ingress_pipe`, a port's bits 8:7): pipe p of the vector is
  pipe p of the ports it moved into;
- action data named `port` or ending in `_port` (e.g. route's port), but
  not data written `recirculation`;
- mirror-session ports and port keys (not `recirculation`, which is already
  a device port);
- the index of a register or counter with one cell per port (size
  2**port_id_bits, e.g. untrusted_feedback_drops, BFCC's bp_state).

The PTF modules wrap the BF-Runtime target with it; tests/ptf_runner runs every
vector on the Tofino2 model through it, which catches a port this list misses.
Also writes the per-chip PTF port files (ports.json, ports_tof2.json).
"""

from __future__ import annotations

import json
from typing import Any

from hw_profiles import HwProfile
from models.vectors.format import KeyMatch, TableEntrySpec

# Veth pairs per port in a PTF port file: device port n-th <-> veth 2n / 2n+1.
# 16: p4testgen's tests use pipe 0's first 16 front-panel ports
# (scripts/testgen.py --port-ranges 0:15 on Tofino, 8:23 on Tofino2).
PTF_PORTS = 16


def device_port(profile: HwProfile, vector_port: int, pipe: int = 0) -> int:
    """Vector port n: pipe 0's n-th front-panel port, or with `pipe` that
    pipe's (the same local port, its pipe number above the local bits)."""
    local_bits = profile.port_id_bits - (profile.pipes - 1).bit_length()
    return (pipe << local_bits) + profile.front_panel_port(vector_port)


def port_file(profile: HwProfile, count: int = PTF_PORTS) -> dict[str, Any]:
    """tofino-model's -f file: vector ports 0..count-1 on veth pairs 0/1, 2/3, ..."""
    return {
        "PortToVeth": [
            {"device_port": device_port(profile, n), "veth1": 2 * n, "veth2": 2 * n + 1}
            for n in range(count)
        ]
    }


def port_file_name(profile: HwProfile) -> str:
    # run_tofino_model.sh looks for ports_tof2.json before ports.json on tf2.
    return "ports_tof2.json" if profile.chip == "tofino2" else "ports.json"


def port_file_text(profile: HwProfile, count: int = PTF_PORTS) -> str:
    rows = port_file(profile, count)["PortToVeth"]
    body = ",\n".join(f"    {json.dumps(r)}" for r in rows)
    return f'{{\n  "PortToVeth": [\n{body}\n  ]\n}}\n'


def _is_port_name(name: str) -> bool:
    return name.rsplit(".", 1)[-1].endswith("port")


def _is_pipe_name(name: str) -> bool:
    return name.rsplit(".", 1)[-1].endswith("pipe")


def _is_port_param(name: str) -> bool:
    return name == "port" or name.endswith("_port")


class PortMappedTarget:
    """A vector target whose vector ports are the chip's front-panel ports."""

    def __init__(self, inner: Any, profile: HwProfile, model: Any, pipe: int = 0) -> None:
        self.inner = inner
        self.profile = profile
        self.model = model  # a TnaProgram: which registers/counters are per port
        # The pipe the vector's ports move into (the model runs a vector in
        # any pipe of several: tests/test_multipipe.py).
        self.pipe = pipe
        self._recirculation: int | None = None

    def __getattr__(self, name: str) -> Any:
        # Optional target methods (set_time_ns, ...) pass through.
        return getattr(self.inner, name)

    def port(self, vector_port: int) -> int:
        return device_port(self.profile, vector_port, self.pipe)

    def _key(self, key: dict[str, KeyMatch]) -> dict[str, KeyMatch]:
        out = {}
        full = (1 << self.profile.port_id_bits) - 1
        for name, k in key.items():
            if _is_port_name(name) and k.prefix_len is None and not k.recirculation:
                if k.mask not in (None, full):
                    raise ValueError(f"{name}: a masked port key cannot be moved to device ports")
                k = k.model_copy(update={"value": self.port(k.value)})
            elif _is_pipe_name(name) and k.mask is None and k.prefix_len is None:
                k = k.model_copy(update={"value": k.value + self.pipe})
            out[name] = k
        return out

    def _index(self, kind: str, name: str, index: int) -> int:
        obj = self.model.register(name) if kind == "register" else self.model.counter(name)
        return self.port(index) if obj.size == 1 << self.profile.port_id_bits else index

    def recirculation_port(self) -> int:
        # Already a device port: the mirror session that follows keeps it.
        port = int(self.inner.recirculation_port())
        self._recirculation = port
        return port

    def reset(self) -> None:
        self.inner.reset()

    def add_entry(self, entry: TableEntrySpec) -> None:
        data = {
            n: (self.port(v) if _is_port_param(n) and n not in entry.recirculation_data else v)
            for n, v in dict(entry.data).items()
        }
        self.inner.add_entry(
            entry.model_copy(update={"key": self._key(dict(entry.key)), "data": data})
        )

    def delete_entry(self, table: str, key: dict[str, KeyMatch]) -> None:
        self.inner.delete_entry(table, self._key(key))

    def write_register(self, name: str, index: int, value: int) -> None:
        self.inner.write_register(name, self._index("register", name, index), value)

    def read_register(self, name: str, index: int, pipe: int | None = None) -> int:
        moved = self._index("register", name, index)
        if pipe is None:
            return int(self.inner.read_register(name, moved))
        return int(self.inner.read_register(name, moved, pipe=pipe))

    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        pkts, nbytes = self.inner.read_counter(name, self._index("counter", name, index))
        return int(pkts), int(nbytes)

    def add_mirror_session(self, sid: int, port: int, max_pkt_len: int, direction: str) -> None:
        if self._recirculation is not None and port == self._recirculation:
            device = port
        else:
            device = self.port(port)
        self._recirculation = None
        self.inner.add_mirror_session(sid, device, max_pkt_len, direction)

    def send_and_expect(
        self,
        port: int,
        data: bytes,
        expected: list[tuple[int, bytes]],
        context: str,
        masks: list[bytes | None] | None = None,
    ) -> None:
        moved = [(self.port(p), d) for p, d in expected]
        if masks is None:
            self.inner.send_and_expect(self.port(port), data, moved, context)
        else:
            self.inner.send_and_expect(self.port(port), data, moved, context, masks=masks)


def main() -> None:
    """Rewrite ptf_tests/ports.json and ports_tof2.json from hw_profiles."""
    from pathlib import Path

    from hw_profiles import KNOWN_CHIPS, load_profile

    here = Path(__file__).resolve().parents[1]
    for chip in KNOWN_CHIPS:
        profile = load_profile(chip)
        (here / port_file_name(profile)).write_text(port_file_text(profile))
        print(f"wrote {here / port_file_name(profile)}")


if __name__ == "__main__":
    main()
