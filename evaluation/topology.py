# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A scenario's graph: port numbers, addresses, shortest-path routes.

Pure Python (no ns-3), so the numbering every scheme's switch configuration
is built from can be tested on its own. A switch's links take the chip's
front-panel device ports in the order the scenario lists them, from the
second (hw_profiles' front_panel_ports: Tofino 1..63, then pipe 1's 128...).
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass

from hw_profiles import load_profile

from .network import ip_of_host, mac_of_host, mac_of_port
from .scenario import Scenario, parse_rate


@dataclass(frozen=True)
class LinkEnd:
    node: str
    port: int | None  # None on a host


@dataclass(frozen=True)
class TopoLink:
    a: LinkEnd
    b: LinkEnd
    rate_bps: int
    delay_ns: int


class Topology:
    def __init__(self, s: Scenario, rate_override: str | None = None) -> None:
        self.scenario = s
        self.host_index = {h: i for i, h in enumerate(s.hosts)}
        self.switch_index = {w: i for i, w in enumerate(s.switches)}
        # ports[switch][port] = neighbour
        self.ports: dict[str, dict[int, str]] = {w: {} for w in s.switches}
        self.links: list[TopoLink] = []
        self.neighbours: dict[str, list[str]] = {n: [] for n in (*s.hosts, *s.switches)}
        profile = load_profile(s.chip)
        self._front_panel = profile.front_panel_ports()
        local_bits = profile.port_id_bits - (profile.pipes - 1).bit_length()
        self._by_pipe = [
            [p for p in self._front_panel if p >> local_bits == pipe] for pipe in range(s.pipes)
        ]
        for link in s.links:
            rate = parse_rate(rate_override or link.rate or s.link.rate)
            delay_us = s.link.delay_us if link.delay_us is None else link.delay_us
            ends = []
            for node, other in ((link.a, link.b), (link.b, link.a)):
                port = None
                if node in self.switch_index:
                    port = self._dev_port(node, len(self.ports[node]) + 1)
                    self.ports[node][port] = other
                ends.append(LinkEnd(node, port))
                self.neighbours[node].append(other)
            self.links.append(TopoLink(ends[0], ends[1], rate, round(delay_us * 1000)))

    def _dev_port(self, switch: str, n: int) -> int:
        """The n-th link's device port: the chip's front-panel ports in
        order from the second (port 1 on Tofino, 9 on Tofino2), past a
        pipe's last into the next pipe's, never a CPU or recirculation port.
        With `pipes` 2 or 4, link n takes pipe (n - 1) mod pipes, each pipe's
        ports in the same order from its second."""
        if self.scenario.pipes > 1:
            ports = self._by_pipe[(n - 1) % self.scenario.pipes]
            k = (n - 1) // self.scenario.pipes + 1
            if k >= len(ports):
                raise ValueError(
                    f"{switch}: link {n} needs more than the {len(ports) - 1} front-panel "
                    f"ports of each of {self.scenario.chip}'s {self.scenario.pipes} pipes"
                )
            return ports[k]
        if n >= len(self._front_panel):
            raise ValueError(
                f"{switch}: link {n} needs more than the {len(self._front_panel) - 1} "
                f"front-panel ports of {self.scenario.chip}"
            )
        return self._front_panel[n]

    def port_to(self, switch: str, neighbour: str) -> int:
        for port, n in self.ports[switch].items():
            if n == neighbour:
                return port
        raise KeyError(f"{switch} has no link to {neighbour}")

    def link_between(self, a: str, b: str) -> TopoLink:
        for link in self.links:
            if {link.a.node, link.b.node} == {a, b}:
                return link
        raise KeyError(f"no link {a}-{b}")

    def is_switch(self, node: str) -> bool:
        return node in self.switch_index

    def path(self, src: str, dst: str) -> list[str]:
        """Shortest path by hops; ties go to the neighbour listed first."""
        prev: dict[str, str | None] = {src: None}
        todo = deque([src])
        while todo:
            n = todo.popleft()
            if n == dst:
                break
            for m in self.neighbours[n]:
                # Hosts do not forward.
                if m not in prev and (m == dst or self.is_switch(m)):
                    prev[m] = n
                    todo.append(m)
        if dst not in prev:
            raise ValueError(f"no path from {src} to {dst}")
        out = [dst]
        while (p := prev[out[-1]]) is not None:
            out.append(p)
        return out[::-1]

    def next_hop(self, switch: str, host: str) -> int:
        """The port of `switch` toward `host`."""
        return self.port_to(switch, self.path(switch, host)[1])

    def routes(self, switch: str) -> dict[str, int]:
        return {h: self.next_hop(switch, h) for h in self.scenario.hosts}

    def access_rate(self, host: str) -> int:
        return self.link_between(host, self.neighbours[host][0]).rate_bps

    def base_rtt_ns(self, src: str, dst: str, packet_bytes: int) -> int:
        """Both ways along the path: propagation plus one packet's serialisation per hop."""
        p = self.path(src, dst)
        total = 0
        for a, b in itertools.pairwise(p):
            link = self.link_between(a, b)
            total += link.delay_ns + (packet_bytes + 16) * 8 * 1_000_000_000 // link.rate_bps
        return 2 * total

    # Addresses: the same plan for every scheme.
    def ip(self, host: str) -> bytes:
        return ip_of_host(self.host_index[host])

    def ip_text(self, host: str) -> str:
        return ".".join(str(b) for b in self.ip(host))

    def host_mac(self, host: str) -> bytes:
        return mac_of_host(self.host_index[host])

    def port_mac(self, switch: str, port: int) -> bytes:
        return mac_of_port(self.switch_index[switch], port)

    def neighbour_mac(self, switch: str, port: int) -> bytes:
        n = self.ports[switch][port]
        if self.is_switch(n):
            return self.port_mac(n, self.port_to(n, switch))
        return self.host_mac(n)


def mac_text(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)
