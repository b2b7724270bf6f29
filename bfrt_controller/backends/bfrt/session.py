# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""One BF-Runtime session: connect, bind, RPCs, reads, and the client's key
and data objects. Every writer of this backend works through one."""

from __future__ import annotations

import contextlib
import functools
import queue
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from models import cycle_speedups

from ...errors import ControllerError, SwitchBusy, SwitchUnavailable
from ...tls import ChannelTls
from .channel import secure_channels
from .client import ALL_PIPES, CODE_NOT_FOUND, GONE_HINTS, busy_message, message

# Data objects a session keeps (cached_data): a few values each written to
# many cells; more distinct values than this are not worth keeping.
DATA_CACHE = 256


class Session:
    """A client of one program on one device.

    One writer per program: the server lets one client bind a program
    (bf_rt_server_mgr.cpp forwardingConfigBind: ALREADY_EXISTS for a second)
    and refuses a second subscription with a client id in use. A writer binds
    with its `client_id`; `read_only=True` opens an independent client
    (perform_subscribe=False) that binds nothing and names the program in
    each read, so `tofcc status` works while a controller holds the switch.
    With `tls`, the client's channel is a TLS one (channel.py).
    """

    def __init__(
        self,
        gc: Any,
        program: str,
        address: str,
        device_id: int,
        client_id: int,
        read_only: bool,
        tls: ChannelTls | None = None,
    ) -> None:
        self.gc = gc
        self.tls = tls
        self.program = program
        self.address = address
        self.device_id = device_id
        self.client_id = client_id
        self.read_only = read_only
        self.client: Any = None
        self.info: Any = None
        # The client's table objects and the keys of indexed cells, made once
        # per connection (cycle_speedups): a control cycle asked bfrt_info for
        # a table and built a key per cell it read or wrote.
        self._tables: dict[str, Any] = {}
        self._index_keys: dict[tuple[str, str, int], Any] = {}
        self._data: dict[Hashable, Any] = {}

    def connect(self) -> None:
        # A stale session would keep our client id taken on the server.
        self.close()
        try:
            with secure_channels(self.gc, self.tls):
                client = self.gc.ClientInterface(
                    self.address,
                    client_id=self.client_id,
                    device_id=self.device_id,
                    perform_subscribe=not self.read_only,
                )
        except SwitchUnavailable:
            raise
        except Exception as exc:
            # The server refuses a subscription whose client id is in use; the
            # client reports any failed subscription as RuntimeError.
            raise SwitchUnavailable(
                f"cannot subscribe to BF-Runtime at {self.address} (device {self.device_id}) "
                f"as client id {self.client_id}: {message(exc)} (another client may hold "
                f"this id: give a different --client-id){self._tls_hint()}"
            ) from exc
        try:
            info = client.bfrt_info_get(self.program)
            if not self.read_only:
                client.bind_pipeline_config(self.program)
        except Exception as exc:
            self._tear_down(client)
            code = getattr(getattr(exc, "grpc_error", None), "code", lambda: None)()
            if getattr(code, "name", None) == "ALREADY_EXISTS":
                raise SwitchBusy(busy_message(self.program, self.address, message(exc))) from exc
            raise SwitchUnavailable(
                f"BF-Runtime at {self.address} cannot bind program '{self.program}': "
                f"{message(exc)}{self._tls_hint()}"
            ) from exc
        self.client, self.info = client, info
        self._forget_objects()

    def _tls_hint(self) -> str:
        """A refused TLS handshake looks like any failed connect to gRPC's
        client: say that it may be one."""
        if self.tls is None:
            return ""
        mode = "mutual TLS" if self.tls.mutual else "TLS"
        name = self.tls.server_name or "the host"
        return (
            f"; over {mode}, so also check the target's tls: that the switch's certificate "
            f"chains to ca_file and names {name}"
            + (", and that the switch trusts cert_file's CA" if self.tls.mutual else "")
        )

    def _forget_objects(self) -> None:
        self._tables.clear()
        self._index_keys.clear()
        self._data.clear()

    def close(self) -> None:
        client, self.client, self.info = self.client, None, None
        self._forget_objects()
        if client is not None:
            self._tear_down(client)

    @staticmethod
    def _tear_down(client: Any) -> None:
        # The session may already be dead; there is nothing left to release then.
        # An independent client has no stream, only its channel.
        if getattr(client, "is_independent", False):
            with contextlib.suppress(Exception):
                client.channel.close()
            return
        with contextlib.suppress(Exception):
            client.tear_down_stream()

    def read_args(self) -> dict[str, Any]:
        # An independent client is not bound: every read names the program.
        return {"p4_name": self.program} if self.read_only else {}

    def bfrt(self) -> Any:
        if self.info is None:
            raise SwitchUnavailable(f"not connected to BF-Runtime at {self.address}; connect()")
        return self.info

    def table(self, name: str) -> Any:
        info = self.bfrt()
        if not cycle_speedups.ENABLED:
            return info.table_get(name)
        t = self._tables.get(name)
        if t is None:
            t = self._tables[name] = info.table_get(name)
        return t

    def index_key(self, table: str, field: str, index: int) -> Any:
        """The key of cell `index` of an indexed table (register, counter):
        made once per connection; the client only reads a key it is given."""
        if not cycle_speedups.ENABLED:
            return self.table(table).make_key([self.gc.KeyTuple(field, index)])
        at = (table, field, index)
        key = self._index_keys.get(at)
        if key is None:
            key = self.table(table).make_key([self.gc.KeyTuple(field, index)])
            self._index_keys[at] = key
        return key

    def target(self, pipe: int = ALL_PIPES) -> Any:
        return self.gc.Target(device_id=self.device_id, pipe_id=pipe)

    def _stream_died(self) -> bool:
        q = getattr(self.client, "exception_q", None)
        return isinstance(q, queue.Queue) and not q.empty()

    def _gone(self, exc: BaseException) -> bool:
        rpc = getattr(exc, "grpc_error", None)
        code = rpc.code() if rpc is not None and hasattr(rpc, "code") else None
        if getattr(code, "name", None) == "UNAVAILABLE":
            return True
        details = rpc.details() if rpc is not None and hasattr(rpc, "details") else ""
        text = f"{details} {exc}".lower()
        return any(h in text for h in GONE_HINTS) or self._stream_died()

    def rpc(self, fn: Callable[[], Any]) -> Any:
        """Run one RPC; a vanished switch becomes SwitchUnavailable."""
        try:
            return fn()
        except Exception as exc:
            if self._gone(exc):
                raise SwitchUnavailable(
                    f"lost BF-Runtime at {self.address}: {message(exc)}; reconnect"
                ) from exc
            raise

    @staticmethod
    def not_found(exc: BaseException) -> bool:
        subs = getattr(exc, "errors", None) or []
        if any(getattr(e, "canonical_code", None) == CODE_NOT_FOUND for _, e in subs):
            return True
        rpc = getattr(exc, "grpc_error", None)
        code = rpc.code() if rpc is not None and hasattr(rpc, "code") else None
        return getattr(code, "name", None) == "NOT_FOUND" or "not found" in str(exc).lower()

    def get(
        self,
        table: str,
        key: Any,
        pipe: int = ALL_PIPES,
        from_hw: bool = False,
        fields: Sequence[str] = (),
    ) -> Any:
        """The entry's data object, or None when the switch has no such entry.
        `fields` names the data fields wanted (all when empty): the server
        reads only those (client.py entry_get required_data)."""
        t = self.table(table)
        wanted: dict[str, Any] = {}
        if fields:
            wanted["required_data"] = t.make_data([self.gc.DataTuple(n) for n in fields], get=True)

        flags = {"from_hw": from_hw}
        return self._first_data(
            lambda: t.entry_get(self.target(pipe), [key], flags, **wanted, **self.read_args()),
            table,
            missing_is_none=True,
        )

    def get_default(self, table: str) -> Any:
        t = self.table(table)
        return self._first_data(
            lambda: t.default_entry_get(self.target(), **self.read_args()),
            f"the default of {table}",
        )

    def _first_data(
        self, items: Callable[[], Iterable[Any]], what: str, missing_is_none: bool = False
    ) -> Any:
        """The data of the first entry a read gives (None when it gives none
        or, with `missing_is_none`, when the switch has no such entry); any
        other failure a ControllerError naming `what`."""

        def read() -> Any:
            for item in items():
                return item[0]
            return None

        try:
            return self.rpc(read)
        except SwitchUnavailable:
            raise
        except Exception as exc:
            if missing_is_none and self.not_found(exc):
                return None
            raise ControllerError(f"reading {what} failed: {message(exc)}") from exc

    def cached_data(self, what: Hashable, make: Callable[[], Any]) -> Any:
        """A data object kept for the connection under `what`; at most
        DATA_CACHE of them (then the cache starts again)."""
        data = self._data.get(what)
        if data is None:
            if len(self._data) >= DATA_CACHE:
                self._data.clear()
            data = self._data[what] = make()
        return data

    # -- keys, data, calls -----------------------------------------------------
    def data_tuple(self, name: str, value: Any) -> Any:
        if isinstance(value, bool):
            return self.gc.DataTuple(name, bool_val=value)
        if isinstance(value, str):
            return self.gc.DataTuple(name, str_val=value)
        if isinstance(value, list | tuple):
            return self.gc.DataTuple(name, int_arr_val=[int(v) for v in value])
        return self.gc.DataTuple(name, int(value))

    def make_data(self, table: str, values: Mapping[str, Any], action: str | None) -> Any:
        t = self.table(table)
        return t.make_data([self.data_tuple(n, v) for n, v in values.items()], action)

    def make_key(self, table: str, **fields: Any) -> Any:
        return self.table(table).make_key([self.gc.KeyTuple(n, v) for n, v in fields.items()])

    def continue_on_error(self) -> Any:
        return self.gc.bfruntime_pb2.WriteRequest.CONTINUE_ON_ERROR

    def call_one(
        self, table: str, call: str, key: Any, data: Any = None, pipe: int = ALL_PIPES
    ) -> None:
        """One update on one entry, outside any transaction (ports, TM rows)."""
        t = self.table(table)
        atomic = self.continue_on_error()
        if call == "entry_del":
            self.rpc(functools.partial(t.entry_del, self.target(pipe), [key], atomicity=atomic))
            return
        fn = getattr(t, call)
        self.rpc(functools.partial(fn, self.target(pipe), [key], [data], atomicity=atomic))
