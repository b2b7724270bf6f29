# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TLS and basic auth for /metrics: `tofcc run --web-config FILE`.

The file is the Prometheus exporters' (exporter-toolkit's
docs/web-configuration.md), so one written for node_exporter serves here:

    tls_server_config:
      cert_file: metrics.pem           # relative to this file
      key_file: metrics.key
      client_ca_file: scrapers-ca.pem  # optional: scrapers need a cert it signed
      client_auth_type: RequireAndVerifyClientCert
      min_version: TLS12
    basic_auth_users:
      prometheus: $2b$12$...           # bcrypt (htpasswd -nBC 12 prometheus)

Read and checked whole before the daemon contacts a switch: a missing file,
a key that is not the certificate's, a hash that is not bcrypt, is exit 2
naming its field. Of exporter-toolkit's client_auth_type values, those
Python's ssl module enforces are taken (NoClientCert, VerifyClientCertIfGiven,
RequireAndVerifyClientCert); a client_ca_file with no client_auth_type
requires a client certificate (exporter-toolkit refuses that file instead).
The file is read once, at start: restart the daemon to change it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import ssl
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import bcrypt
from pydantic import Field, field_validator

from .common import Strict
from .errors import ConfigError
from .tls import CERTIFICATE, PRIVATE_KEY, read_pem, resolve_path
from .validation import load_yaml, parse_model

# $2a$, $2b$ or $2y$, a cost of 04-31, 22 characters of salt and 31 of hash.
BCRYPT_HASH = re.compile(r"^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$")
CLIENT_AUTH = {
    "NoClientCert": ssl.CERT_NONE,
    "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
    "RequireAndVerifyClientCert": ssl.CERT_REQUIRED,
}
TLS_VERSIONS = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
# Verified passwords kept (as digests) so a scrape every few seconds does
# not pay bcrypt's cost each time, as exporter-toolkit caches them.
AUTH_CACHE_SIZE = 100
# Compared against for an unknown user, so its refusal takes as long as a
# wrong password's (cost 10, like the hashes htpasswd -B makes).
_DUMMY_HASH = b"$2b$10$vxgs7X5nperLNDu5/l9lkOoPzCSb1qNmBww1hMUoI9izhE5ubVKr2"


class TlsServerConfig(Strict):
    cert_file: Annotated[str, Field(min_length=1)]
    key_file: Annotated[str, Field(min_length=1)]
    client_ca_file: Annotated[str, Field(min_length=1)] | None = None
    client_auth_type: (
        Literal["NoClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"] | None
    ) = None
    min_version: Literal["TLS12", "TLS13"] = "TLS12"


class WebConfigFile(Strict):
    tls_server_config: TlsServerConfig | None = None
    basic_auth_users: dict[str, str] = Field(default_factory=dict)

    @field_validator("basic_auth_users")
    @classmethod
    def _bcrypt(cls, users: dict[str, str]) -> dict[str, str]:
        for name, hashed in users.items():
            if not name or ":" in name:
                raise ValueError(f"user {name!r}: a name must be non-empty and have no ':'")
            if not BCRYPT_HASH.fullmatch(hashed):
                raise ValueError(
                    f"user {name!r}: expected a bcrypt hash ($2b$..., 60 characters: "
                    f"htpasswd -nBC 12 {name}), got {hashed[:7]!r}..."
                )
        return users


@dataclass(frozen=True)
class WebConfig:
    source: Path
    tls: ssl.SSLContext | None
    users: Mapping[str, bytes] = field(default_factory=dict)

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"


def load_web_config(path: Path) -> WebConfig:
    """The file read and checked whole; ConfigError names the field."""
    cfg = parse_model(WebConfigFile, load_yaml(path), str(path))
    tls = None
    if cfg.tls_server_config is not None:
        tls = _ssl_context(cfg.tls_server_config, path.parent, f"{path}: tls_server_config")
    users = {name: hashed.encode() for name, hashed in cfg.basic_auth_users.items()}
    return WebConfig(path, tls, users)


def _ssl_context(t: TlsServerConfig, base: Path, at: str) -> ssl.SSLContext:
    cert = resolve_path(t.cert_file, base)
    key = resolve_path(t.key_file, base)
    read_pem(cert, f"{at}.cert_file", CERTIFICATE)
    read_pem(key, f"{at}.key_file", PRIVATE_KEY)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = TLS_VERSIONS[t.min_version]
    try:
        # A password callback that refuses: OpenSSL would otherwise prompt on
        # the terminal for an encrypted key (a daemon has none).
        ctx.load_cert_chain(cert, key, password=_no_password)
    except _EncryptedKey:
        raise ConfigError(
            f"{at}.key_file", f"{key} is encrypted: give an unencrypted key (mode 0600)"
        ) from None
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc):
            raise ConfigError(f"{at}.key_file", f"{key} is not the key of {cert}") from None
        raise ConfigError(f"{at}.cert_file", f"{cert} with {key}: {exc.reason or exc}") from None
    auth = t.client_auth_type
    if t.client_ca_file is None:
        if auth not in (None, "NoClientCert"):
            raise ConfigError(
                f"{at}.client_auth_type",
                f"{auth} needs client_ca_file, the CA scrapers' certs chain to",
            )
        return ctx
    if auth == "NoClientCert":
        raise ConfigError(
            f"{at}.client_ca_file",
            "given with client_auth_type NoClientCert: say RequireAndVerifyClientCert "
            "(or VerifyClientCertIfGiven), or drop client_ca_file",
        )
    ca = resolve_path(t.client_ca_file, base)
    read_pem(ca, f"{at}.client_ca_file", CERTIFICATE)
    try:
        ctx.load_verify_locations(cafile=ca)
    except ssl.SSLError as exc:
        raise ConfigError(f"{at}.client_ca_file", f"{ca}: {exc.reason or exc}") from None
    ctx.verify_mode = CLIENT_AUTH[auth or "RequireAndVerifyClientCert"]
    return ctx


class _EncryptedKey(Exception):
    pass


def _no_password() -> bytes:
    raise _EncryptedKey()


WSGIApp = Any


class BasicAuth:
    """A WSGI app behind HTTP basic auth: 401 unless the request names a
    user of `users` with the password their bcrypt hash is of."""

    def __init__(self, app: WSGIApp, users: Mapping[str, bytes]) -> None:
        self.app = app
        self.users = dict(users)
        self._verified: dict[bytes, None] = {}  # insertion-ordered: oldest first
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if self.allowed(environ.get("HTTP_AUTHORIZATION", "")):
            return self.app(environ, start_response)
        body = b"Unauthorized\n"
        start_response(
            "401 Unauthorized",
            [
                ("Content-Type", "text/plain; charset=utf-8"),
                ("Content-Length", str(len(body))),
                ("WWW-Authenticate", 'Basic realm="tofcc", charset="UTF-8"'),
            ],
        )
        return [body]

    def allowed(self, header: str) -> bool:
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            user, sep, password = (
                base64.b64decode(value.strip(), validate=True).decode().partition(":")
            )
        except (binascii.Error, ValueError):  # not base64, not UTF-8
            return False
        hashed = self.users.get(user) if sep else None
        digest = hashlib.sha256(
            b"\0".join((user.encode(), password.encode(), hashed or b""))
        ).digest()
        with self._lock:
            if hashed is not None and digest in self._verified:
                return True
        try:
            ok = bcrypt.checkpw(password.encode(), hashed or _DUMMY_HASH) and hashed is not None
        except ValueError:  # longer than bcrypt's 72 bytes
            return False
        if ok:
            with self._lock:
                self._verified[digest] = None
                while len(self._verified) > AUTH_CACHE_SIZE:
                    del self._verified[next(iter(self._verified))]
        return ok
