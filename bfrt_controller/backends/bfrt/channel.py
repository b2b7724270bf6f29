# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""TLS channels for the SDE's client, which makes only plaintext ones.

open-p4studio's `bfrt_grpc.client.ClientInterface` (1f97778f,
pkgsrc/bf-drivers/src/bf_rt/bfruntime_grpc_client/python/client.py) takes no
credentials and no channel: its `__init__(grpc_addr, client_id, device_id,
notifications=None, timeout=1, num_tries=5, perform_subscribe=True)` (line
405) makes its own with `grpc.insecure_channel(grpc_addr, options=[...])`
(line 436), through the `grpc` module it imported at the top (`import grpc`,
line 26), and subscribes on it before returning (lines 447-452). There is no
documented hook; subclassing would copy the constructor's stub, queue and
stream set-up.

The one name that constructor looks up at call time is the client module's
global `grpc`. While a ClientInterface is built, `secure_channels` puts a
stand-in there that forwards every attribute to grpc except
`insecure_channel`, which makes `grpc.secure_channel(addr,
grpc.ssl_channel_credentials(ca, key, cert), options)` with the client's own
options, plus `grpc.ssl_target_name_override` when the switch's certificate
names another host. The swap is held under a lock and undone when the
constructor returns, so the stream thread and every later call see grpc
itself (the stand-in forwards to it meanwhile, so a thread of another client
that reads `grpc.RpcError` in that window sees the same class).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from ...errors import SdeMissing
from ...tls import ChannelTls

# One ClientInterface built at a time while the module's grpc is swapped.
_SWAP = threading.Lock()
NAME_OVERRIDE = "grpc.ssl_target_name_override"


def secure_channel(
    grpc: Any,
    tls: ChannelTls,
    target: str,
    options: Sequence[tuple[str, Any]] | None = None,
    compression: Any = None,
) -> Any:
    """A TLS channel to `target`: the switch must present a certificate the
    CA signed for the host (or `tls.server_name`); with a client certificate,
    the switch can check ours (mutual TLS)."""
    credentials = grpc.ssl_channel_credentials(
        root_certificates=tls.ca, private_key=tls.key, certificate_chain=tls.cert
    )
    opts = list(options or ())
    if tls.server_name:
        opts.append((NAME_OVERRIDE, tls.server_name))
    return grpc.secure_channel(target, credentials, options=opts, compression=compression)


class _TlsGrpc:
    """The client module's `grpc` with `insecure_channel` making TLS ones."""

    def __init__(self, grpc: Any, tls: ChannelTls) -> None:
        self._grpc = grpc
        self._tls = tls

    def __getattr__(self, name: str) -> Any:
        return getattr(self._grpc, name)

    def insecure_channel(
        self, target: str, options: Sequence[tuple[str, Any]] | None = None, compression: Any = None
    ) -> Any:
        return secure_channel(self._grpc, self._tls, target, options, compression)


@contextlib.contextmanager
def secure_channels(client_module: Any, tls: ChannelTls | None) -> Iterator[None]:
    """Within: a ClientInterface of `client_module` connects over TLS."""
    if tls is None:
        yield
        return
    grpc = getattr(client_module, "grpc", None)
    if not callable(getattr(grpc, "insecure_channel", None)):
        raise SdeMissing(
            "this SDE's bfrt_grpc.client does not make its channel with "
            "grpc.insecure_channel (open-p4studio client.py line 436), so tofcc cannot give "
            "it TLS credentials: drop the target's `tls:` or use an SDE whose client does"
        )
    with _SWAP:
        client_module.grpc = _TlsGrpc(grpc, tls)
        try:
            yield
        finally:
            client_module.grpc = grpc
