# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`--target model`, `grpc://HOST:PORT` or `tofino-model://HOST:PORT` -> a Switch.

`grpc://` is BF-Runtime on a switch; `tofino-model://` is BF-Runtime in
front of Intel's tofino-model, whose TM reads return what was written where
an ASIC returns what its registers keep (Switch.rounds_tm_reads): BF-Runtime
has no table that tells the two apart, so the target says it."""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass

from hw_profiles import HwProfile

from .errors import ConfigError
from .switch import Switch
from .tls import ChannelTls


def open_switch(
    target: str,
    program: str,
    profile: HwProfile,
    client_id: int = 0,
    read_only: bool = False,
    tls: ChannelTls | None = None,
) -> Switch:
    """`client_id`, `read_only` and `tls` matter to BF-Runtime only (see
    BfrtSwitch): one writer binds the program; read-only commands use an
    unbound client; `tls` (a deployment target's `tls:`) secures its channel."""
    if target == "model":
        from .backends.model import ModelSwitch

        return ModelSwitch(program, profile)
    scheme, sep, address = target.partition("://")
    if sep and scheme in BFRT_SCHEMES:
        host, _, port = address.rpartition(":")
        # ASCII digits only: str.isdigit() and int() also take "５" and "²".
        if not host or not re.fullmatch(r"[0-9]{1,5}", port) or not 1 <= int(port) <= 65535:
            raise ConfigError(
                "--target", f"expected {scheme}://HOST:PORT with PORT 1..65535, got {target!r}"
            )
        from .backends.bfrt import BfrtSwitch

        return BfrtSwitch(
            program,
            profile,
            address=address,
            client_id=client_id,
            read_only=read_only,
            asic=scheme == "grpc",
            tls=tls,
        )
    raise ConfigError(
        "--target",
        f"expected 'model', grpc://HOST:PORT or tofino-model://HOST:PORT, got {target!r}",
    )


# BF-Runtime targets: a switch, or tofino-model behind bf_switchd.
BFRT_SCHEMES = ("grpc", "tofino-model")


@dataclass(frozen=True)
class SwitchIdentity:
    """Who answers at grpc://HOST:PORT: the port and what HOST stands for,
    each address it resolves to (`address 127.0.0.1`; an IPv4-mapped IPv6
    address as its IPv4 one, since a dual-stack socket hands it to the same
    listener) and, for a name, the name itself (`name leaf1`, lower case,
    without a trailing dot), resolved or not."""

    port: int
    hosts: frozenset[str]

    def same_switch(self, other: SwitchIdentity) -> bool:
        """One port and a host in common: a connection to either may reach
        the one server (a name resolving to two addresses may use either)."""
        return self.port == other.port and not self.hosts.isdisjoint(other.hosts)

    def shared_with(self, other: SwitchIdentity) -> str:
        # An address before a name (sorted): what the two have in common.
        common = sorted(self.hosts & other.hosts)
        return f"both reach {common[0]} port {self.port}"


def switch_identity(target: str) -> SwitchIdentity:
    """The identity of a BF-Runtime target (grpc:// or tofino-model://
    HOST:PORT) already checked well formed: the scheme aside, since either
    names the one bf_switchd listening there.

    A name that does not resolve here is compared by its text, not refused:
    `check` must pass on a machine that cannot resolve the switches' names
    (a build host, CI, a controller before its DNS is set up), and the
    daemon retries a switch it cannot reach on its own backoff. Two names
    that resolve to one address only on the switches' network are then not
    caught; write addresses to have them caught here."""
    host, _, port = target.partition("://")[2].rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return SwitchIdentity(int(port), _hosts(host))


def _address(text: str) -> str:
    ip = ipaddress.ip_address(text)
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return f"address {mapped or ip}"


def _hosts(host: str) -> frozenset[str]:
    try:
        return frozenset({_address(host)})
    except ValueError:
        pass
    # The forms inet_aton takes and ipaddress does not (127.1, 0x7f000001,
    # 2130706433): the C resolver gRPC uses reads them as these addresses.
    try:
        return frozenset({_address(socket.inet_ntoa(socket.inet_aton(host)))})
    except (OSError, ValueError):  # ValueError: a NUL in the text
        pass
    # A name is its own spelling (case and a trailing dot aside) and the
    # addresses it resolves to here, if any.
    name = f"name {host.lower().rstrip('.')}"
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        return frozenset({name})
    return frozenset({name, *(_address(str(info[4][0])) for info in infos)})
