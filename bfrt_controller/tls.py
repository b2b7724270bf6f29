# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Certificate files: read and checked up front, before anything is sent.

A deployment's `tls:` for a BF-Runtime switch (ChannelTls, as P4Runtime and
Stratum clients take a CA, a client certificate and its key) and the /metrics
web config's `tls_server_config` (web_config.py) both name PEM files. Each is
read here, when the file naming it is validated: one that is missing,
unreadable or not PEM is exit 2 naming the field, never a handshake that
fails on the switch's first connect (gRPC retries a bad channel quietly and
the subscribe only times out).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError
from .paths import error as path_error

# A certificate or key file is a few KB; a bundle of CAs some hundred.
MAX_PEM_BYTES = 1 << 20

CERTIFICATE = b"-----BEGIN CERTIFICATE-----"
PRIVATE_KEY = b"PRIVATE KEY-----"  # PKCS#8 (BEGIN PRIVATE KEY), RSA or EC


def read_pem(path: Path, field: str, marker: bytes) -> bytes:
    """The file's bytes, or ConfigError naming `field` (and the path) when it
    cannot be read or holds no PEM block `marker` names."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PEM_BYTES + 1)
    except (OSError, ValueError) as exc:
        raise ConfigError(field, str(path_error(path, exc))) from None
    if len(data) > MAX_PEM_BYTES:
        raise ConfigError(field, f"{path}: larger than {MAX_PEM_BYTES} bytes: not a PEM file")
    if marker not in data:
        what = "certificate" if marker == CERTIFICATE else "private key"
        raise ConfigError(field, f"{path}: no PEM {what} in it ({marker.decode().strip('-')})")
    return data


def resolve_path(value: str, base: Path) -> Path:
    """`value` as given, relative to the directory of the file naming it."""
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


@dataclass(frozen=True)
class ChannelTls:
    """TLS for one BF-Runtime channel: the CA the switch's certificate must
    chain to, and for mutual TLS the client's certificate and key. The bytes,
    not the paths: what was checked is what is sent, and a reload with a
    rotated certificate under the same name is a new session."""

    ca: bytes
    cert: bytes | None = None
    key: bytes | None = None
    # The name checked against the switch's certificate, when it is not the
    # host of grpc://HOST:PORT (a certificate for leaf1 reached by address).
    server_name: str | None = None

    @property
    def mutual(self) -> bool:
        return self.cert is not None

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for part in (self.ca, self.cert or b"", self.key or b"", (self.server_name or "").encode()):
            h.update(len(part).to_bytes(8, "big") + part)
        return h.hexdigest()[:16]
