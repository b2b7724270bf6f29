# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Values as written in vector and config files: integers, hex, IPv4, MAC."""

from __future__ import annotations

import ipaddress
import re

_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


def parse_int_value(raw: object) -> int:
    """Integer from an int, '0x..' hex, dotted IPv4 or colon MAC; ValueError otherwise."""
    if isinstance(raw, bool):
        raise ValueError(f"expected a number, address or MAC, got {raw!r}")
    if isinstance(raw, int):
        if raw < 0:
            raise ValueError(f"negative value {raw}")
        return raw
    if isinstance(raw, str):
        text = raw.strip()
        if _MAC.match(text):
            return int(text.replace(":", ""), 16)
        if text.lower().startswith("0x"):
            try:
                return int(text, 16)
            except ValueError:
                raise ValueError(f"bad hex value {raw!r}") from None
        if text.isascii() and text.isdigit():
            return int(text)
        try:
            return int(ipaddress.IPv4Address(text))
        except ValueError:
            pass
    raise ValueError(f"expected a number, hex, IPv4 address or MAC, got {raw!r}")


def parse_prefix(raw: str) -> tuple[int, int]:
    """'10.0.0.0/8' -> (value, prefix_len)."""
    try:
        net = ipaddress.IPv4Network(raw, strict=False)
    except ValueError:
        raise ValueError(f"bad IPv4 prefix {raw!r}") from None
    return int(net.network_address), net.prefixlen
