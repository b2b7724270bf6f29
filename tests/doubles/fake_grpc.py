# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The `grpc` module the fake `bfrt_grpc.client` makes its channel with, and
the TLS a fake switch serves.

The SDE's client builds its channel itself: `grpc.insecure_channel(grpc_addr,
options=[...])` through its module's global `grpc` (open-p4studio 1f97778f,
bfruntime_grpc_client/python/client.py lines 26 and 436); its
ClientInterface takes no credentials or channel (line 405), so passing one
is a TypeError there and here. FakeGrpc records how each channel was made,
with grpc's own signatures (grpc/__init__.py ssl_channel_credentials,
insecure_channel, secure_channel), and ServerTls decides the handshake as a
TLS server would: the client must trust the CA that signed the switch's
certificate and find in it the name it checks (the host, or
`grpc.ssl_target_name_override`); with a client CA (mutual TLS) the client
must present a certificate that CA signed, with its key. Signatures are
checked with `cryptography`, not compared as text.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization

NAME_OVERRIDE = "grpc.ssl_target_name_override"


@dataclass(frozen=True)
class FakeCredentials:
    root_certificates: bytes | None
    private_key: bytes | None
    certificate_chain: bytes | None


@dataclass
class FakeChannel:
    target: str
    credentials: FakeCredentials | None  # None: insecure_channel
    options: list[tuple[str, Any]]
    closed: bool = False

    def close(self) -> None:
        self.closed = True

    def option(self, name: str) -> Any:
        return dict(self.options).get(name)


@dataclass
class FakeGrpc:
    """Module-like: the channels the client made, in order."""

    channels: list[FakeChannel] = field(default_factory=list)

    def ssl_channel_credentials(
        self,
        root_certificates: bytes | None = None,
        private_key: bytes | None = None,
        certificate_chain: bytes | None = None,
    ) -> FakeCredentials:
        return FakeCredentials(root_certificates, private_key, certificate_chain)

    def insecure_channel(
        self, target: str, options: Any = None, compression: Any = None
    ) -> FakeChannel:
        channel = FakeChannel(target, None, list(options or ()))
        self.channels.append(channel)
        return channel

    def secure_channel(
        self,
        target: str,
        credentials: FakeCredentials,
        options: Any = None,
        compression: Any = None,
    ) -> FakeChannel:
        if not isinstance(credentials, FakeCredentials):
            raise TypeError(f"expected ChannelCredentials, got {type(credentials).__name__}")
        channel = FakeChannel(target, credentials, list(options or ()))
        self.channels.append(channel)
        return channel


def _issued_by(cert: x509.Certificate, bundle: bytes | None) -> bool:
    if not bundle:
        return False
    for ca in x509.load_pem_x509_certificates(bundle):
        try:
            cert.verify_directly_issued_by(ca)
            return True
        except (ValueError, TypeError, InvalidSignature):
            continue
    return False


def _names(cert: x509.Certificate) -> set[str]:
    try:
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    ips = {str(ip) for ip in alt.get_values_for_type(x509.IPAddress)}
    return {n.lower() for n in alt.get_values_for_type(x509.DNSName)} | ips


def _host(target: str) -> str:
    host = target.rpartition(":")[0]
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


@dataclass(frozen=True)
class ServerTls:
    """What a switch's BF-Runtime server presents, and whom it lets in."""

    cert: bytes
    key: bytes
    client_ca: bytes | None = None  # mutual TLS: clients need a cert it signed

    def refusal(self, channel: FakeChannel) -> str | None:
        """Why the handshake on `channel` fails, or None when it succeeds."""
        creds = channel.credentials
        if creds is None:
            return "Socket closed (a plaintext client at a TLS server)"
        server = x509.load_pem_x509_certificate(self.cert)
        if not _issued_by(server, creds.root_certificates):
            return "handshake failed: CERTIFICATE_VERIFY_FAILED (unknown CA)"
        name = channel.option(NAME_OVERRIDE) or _host(channel.target)
        if str(name).lower() not in _names(server):
            return f"handshake failed: peer name {name} is not in peer certificate"
        if self.client_ca is None:
            return None
        if creds.certificate_chain is None or creds.private_key is None:
            return "handshake failed: PEER_DID_NOT_RETURN_A_CERTIFICATE"
        client = x509.load_pem_x509_certificate(creds.certificate_chain)
        if not _issued_by(client, self.client_ca):
            return "handshake failed: TLSV1_ALERT_UNKNOWN_CA (client certificate)"
        key: Any = serialization.load_pem_private_key(creds.private_key, None)
        raw = serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        if key.public_key().public_bytes(*raw) != client.public_key().public_bytes(*raw):
            return "handshake failed: KEY_VALUES_MISMATCH (client key and certificate)"
        return None


def plaintext_refusal(channel: FakeChannel) -> str | None:
    """A server without TLS: a TLS client's ClientHello gets no answer it reads."""
    if channel.credentials is not None:
        return "handshake failed: WRONG_VERSION_NUMBER (a TLS client at a plaintext server)"
    return None
