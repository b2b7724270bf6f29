# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The HTTP server behind /metrics: no client can hold it, and it stops at once.

prometheus_client's own server started a thread per connection with no
timeout. The wsgiref server that replaced it served from a fixed pool of
workers, but its 5 s limit was per socket read, not per request: eight
clients each sending a byte every 4 s held every worker (so every scrape
timed out) for as long as they went on, a ninth blocked the accept loop, and
after SIGTERM the process waited for them (77 s in one run).

Here one I/O thread accepts every connection, reads each request (request
line, headers and any body) without blocking against one deadline counted
from its accept, and writes each response against a deadline of its own.
Only a request that has arrived whole reaches a worker, which runs the WSGI
app (prometheus_client's) into memory: a slow client costs a socket and a
small buffer, never a thread. A client address (an IPv6 /64 counts as one)
has at most `pending_per_client` requests still arriving past a short
grace (a burst of scrapes is let in whole); one more closes that address's
oldest, after a last read of each (a request that has arrived whole is
served, not dropped). So a scraper gets through beside any number of slow
clients, its own address's included; past `connections` in all, the oldest
request still arriving is closed for the new one. `shutdown()` closes every
connection rather than waiting for it.

With an SSL context (`tofcc run --web-config`, web_config.py) each accepted
connection is a TLS one: its handshake is driven by the same I/O thread,
without blocking, against the same deadline from its accept as the request,
so a client that stalls mid-handshake costs what a slow request costs.
"""

from __future__ import annotations

import contextlib
import errno
import io
import ipaddress
import queue
import re
import selectors
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast
from wsgiref.simple_server import WSGIRequestHandler

WSGIApp = Callable[..., Iterable[bytes]]


@dataclass(frozen=True)
class Limits:
    # A scrape is one small request: one not whole this long after its
    # connection was accepted is gone or hostile. Also the limit on writing
    # the response to a client that does not read it.
    request_timeout_s: float = 5.0
    workers: int = 4  # threads building responses
    backlog: int = 256  # the kernel's queue of connections not yet accepted
    pending_per_client: int = 4  # requests still arriving, per client address
    # A request follows its connect within milliseconds: one arriving for
    # less than this is part of a burst of scrapes, not yet a slow client.
    grace_s: float = 0.25
    connections: int = 256  # open connections in all (file descriptors)
    request_bytes: int = 16 * 1024  # request line, headers and body
    linger_s: float = 1.0  # reading what a client still sends after its response


# Why a connection is open: its request is arriving, a worker builds the
# response, the response is going out, or the server waits for the client's
# close (closing first with unread data would reset the connection, and the
# client could lose the response).
READING, SERVING, WRITING, LINGERING, CLOSED = (
    "reading",
    "serving",
    "writing",
    "lingering",
    "closed",
)
# Connections taken per wake-up: a flood of them still lets the loop read.
ACCEPTS_PER_POLL = 64
# How long accepting pauses when the process is out of file descriptors.
ACCEPT_BACKOFF_S = 0.1
_BLANK_LINE = re.compile(rb"\r?\n\r?\n")


@dataclass(eq=False)
class _Conn:
    sock: socket.socket
    peer: Any  # the address accept() gave
    client: str  # what the per-client limit counts by (client_key)
    accepted_s: float
    deadline_s: float
    state: str = READING
    data: bytearray = field(default_factory=bytearray)
    scanned: int = 0  # bytes already searched for the head's end
    need: int | None = None  # the whole request's length, once its head is in
    out: memoryview = field(default_factory=lambda: memoryview(b""))
    handshaking: bool = False  # a TLS connection whose handshake is not done


def _tls_pending(sock: socket.socket) -> bool:
    return isinstance(sock, ssl.SSLSocket) and sock.pending() > 0


def client_key(host: str) -> str:
    """The client a connection counts against: its IPv4 address (an
    IPv4-mapped IPv6 one too), or its IPv6 /64 (one host holds a whole /64)."""
    try:
        ip = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def status_response(status: str) -> bytes:
    """A response the I/O thread sends itself, for a request it refuses."""
    body = f"{status}\n".encode()
    head = (
        f"HTTP/1.0 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def body_length(head: bytes) -> int | str:
    """The body's length a request head declares, or the status refusing it."""
    lengths: set[bytes] = set()
    for line in head.split(b"\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"transfer-encoding":
            return "501 Not Implemented"  # a scrape has no body, let alone a chunked one
        if name == b"content-length":
            lengths.add(value.strip())
    if not lengths:
        return 0
    (length,) = lengths if len(lengths) == 1 else (b"",)
    if not length.isdigit():  # bytes.isdigit: ASCII digits only
        return "400 Bad Request"
    return int(length) if len(length) <= 12 else 1 << 40


@dataclass
class _Request:
    data: bytes
    response: bytes = b""


class _Handler(WSGIRequestHandler):
    """wsgiref's handling of one request (parse, the app, errors such as 414
    and 431) over a request already read whole, into a buffer that the I/O
    thread sends."""

    def setup(self) -> None:
        self.rfile = io.BytesIO(self.request.data)
        self.wfile = io.BytesIO()

    def finish(self) -> None:
        assert isinstance(self.wfile, io.BytesIO)
        self.request.response = self.wfile.getvalue()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a scrape every few seconds is not news


class ScrapeServer:
    """serve_forever() on a thread of its own; shutdown() then server_close()."""

    def __init__(
        self,
        address: tuple[str, int],
        family: socket.AddressFamily,
        app: WSGIApp,
        limits: Limits,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.limits = limits
        self.tls = tls
        self.application = app
        listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(address)
            listener.listen(limits.backlog)
            listener.setblocking(False)
            # Workers hand their responses back through `_done`, and wake the
            # loop with a byte on this pair.
            self._wake_r, self._wake_w = socket.socketpair()
        except OSError:
            listener.close()
            raise
        self._listener = listener
        self.server_address = listener.getsockname()[:2]
        self.server_port: int = self.server_address[1]
        self.server_name = address[0]
        self.base_environ = {
            "SERVER_NAME": address[0],
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PORT": str(self.server_port),
            "REMOTE_HOST": "",
            "CONTENT_LENGTH": "",
            "SCRIPT_NAME": "",
        }
        self._selector = selectors.DefaultSelector()
        self._selector.register(listener, selectors.EVENT_READ)
        self._accepting = True
        self._accept_again_s = 0.0
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._conns: set[_Conn] = set()
        self._pending: dict[str, list[_Conn]] = {}  # READING, per client, oldest first
        self._jobs: queue.SimpleQueue[tuple[_Conn, _Request] | None] = queue.SimpleQueue()
        self._done: deque[tuple[_Conn, bytes]] = deque()
        self._stop = threading.Event()
        self._running = threading.Event()
        self._stopped = threading.Event()

    # -- what wsgiref's handler asks of its server --------------------------------------
    def get_app(self) -> WSGIApp:
        return self.application

    def set_app(self, app: WSGIApp) -> None:
        self.application = app

    # -- life ---------------------------------------------------------------------------
    def serve_forever(self) -> None:
        for i in range(self.limits.workers):
            worker = threading.Thread(target=self._work, name=f"tofcc-metrics-{i}", daemon=True)
            worker.start()
        self._running.set()
        try:
            while not self._stop.is_set():
                self._poll()
        finally:
            for conn in list(self._conns):
                self._close(conn)
            for _ in range(self.limits.workers):
                self._jobs.put(None)
            self._stopped.set()

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Stop serving and close every connection, whatever its client does.
        The workers are daemon threads: one inside the app is left behind."""
        self._stop.set()
        self._wake()
        if self._running.is_set():
            self._stopped.wait(timeout_s)

    def server_close(self) -> None:
        if self._running.is_set() and not self._stopped.is_set():
            self.shutdown()
        for sock in (self._listener, self._wake_r, self._wake_w):
            sock.close()
        self._selector.close()

    # -- the I/O thread -----------------------------------------------------------------
    def _poll(self) -> None:
        for key, mask in self._selector.select(self._timeout(time.monotonic())):
            if key.fileobj is self._listener:
                self._accept()
            elif key.fileobj is self._wake_r:
                self._take_responses()
            elif mask & selectors.EVENT_WRITE:
                self._writable(key.data)
            else:
                self._readable(key.data)
        now = time.monotonic()
        for conn in list(self._conns):
            if conn.state != SERVING and now >= conn.deadline_s:
                self._close(conn)
        self._trim(now)
        if not self._accepting and now >= self._accept_again_s:
            self._selector.register(self._listener, selectors.EVENT_READ)
            self._accepting = True

    def _trim(self, now: float) -> None:
        """A burst from one address is let in whole (see _make_room); what
        of it is still arriving after the grace is cut to the address's share."""
        limit, settled = self.limits.pending_per_client, now - self.limits.grace_s
        for mine in [m for m in self._pending.values() if len(m) > limit]:
            old = [c for c in mine if c.accepted_s <= settled]
            self._close_each(old[: len(mine) - limit])

    def _timeout(self, now: float) -> float | None:
        due = [c.deadline_s for c in self._conns if c.state != SERVING]
        for mine in self._pending.values():
            if len(mine) > self.limits.pending_per_client:
                due.append(mine[0].accepted_s + self.limits.grace_s)
        if not self._accepting:
            due.append(self._accept_again_s)
        return max(0.0, min(due) - now) if due else None

    def _accept(self) -> None:
        for _ in range(ACCEPTS_PER_POLL):
            try:
                sock, peer = self._listener.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # The listener stays readable: without a pause, a busy loop.
                    self._selector.unregister(self._listener)
                    self._accepting = False
                    self._accept_again_s = time.monotonic() + ACCEPT_BACKOFF_S
                return  # ECONNABORTED and the like: that client is gone
            self._admit(sock, peer)

    def _admit(self, sock: socket.socket, peer: Any) -> None:
        sock.setblocking(False)
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            except (OSError, ValueError):
                sock.close()
                return
        now = time.monotonic()
        conn = _Conn(sock, peer, client_key(str(peer[0])), now, now + self.limits.request_timeout_s)
        conn.handshaking = self.tls is not None
        self._make_room(conn.client)
        if len(self._conns) >= self.limits.connections:
            sock.close()  # every connection is a request being answered: none to spare
            return
        self._conns.add(conn)
        self._pending.setdefault(conn.client, []).append(conn)
        self._selector.register(sock, selectors.EVENT_READ, conn)
        self._readable(conn)  # the request is often there with the connection

    def _make_room(self, client: str) -> None:
        """Room for one more connection from `client`: close its oldest
        requests still arriving beyond its limit, then the oldest of anyone's
        beyond the total. Each gets a last read first: a request that has
        arrived whole is served, not dropped."""
        limit = self.limits.pending_per_client
        if len(self._pending.get(client, ())) >= limit:
            self._read_each(self._pending[client])
            mine = self._pending.get(client, [])
            settled = time.monotonic() - self.limits.grace_s
            old = [c for c in mine if c.accepted_s <= settled]
            self._close_each(old[: max(0, len(mine) - limit + 1)])
        if len(self._conns) >= self.limits.connections:
            by_age = sorted(self._conns, key=lambda c: c.accepted_s)
            self._read_each([c for c in by_age if c.state == READING])
            arriving = [c for c in by_age if c.state == READING]
            self._close_each(arriving[: max(0, len(self._conns) - self.limits.connections + 1)])

    def _read_each(self, conns: list[_Conn]) -> None:
        for conn in list(conns):
            self._readable(conn)

    def _close_each(self, conns: list[_Conn]) -> None:
        for conn in list(conns):
            self._close(conn)

    def _readable(self, conn: _Conn) -> None:
        if conn.state == LINGERING:
            self._recv(conn, 65536)  # discarded: only the client's close matters
            return
        if conn.state == READING and conn.handshaking:
            self._handshake(conn)
        while conn.state == READING and not conn.handshaking:
            room = self.limits.request_bytes + 1 - len(conn.data)
            chunk = self._recv(conn, room)
            if chunk:
                conn.scanned = len(conn.data)
                conn.data += chunk
                self._check_request(conn)
            # TLS: what OpenSSL decrypted beyond this read is not on the
            # socket any more, so the selector would not report it.
            if not chunk or not _tls_pending(conn.sock):
                break

    def _handshake(self, conn: _Conn) -> None:
        """One step of a TLS handshake; the selector waits for what it needs next."""
        assert isinstance(conn.sock, ssl.SSLSocket)
        try:
            conn.sock.do_handshake()
        except ssl.SSLWantReadError:
            self._selector.modify(conn.sock, selectors.EVENT_READ, conn)
            return
        except ssl.SSLWantWriteError:
            self._selector.modify(conn.sock, selectors.EVENT_WRITE, conn)
            return
        except (OSError, ValueError):  # a refused certificate, plaintext HTTP, a reset
            self._close(conn)
            return
        conn.handshaking = False
        self._selector.modify(conn.sock, selectors.EVENT_READ, conn)

    def _recv(self, conn: _Conn, size: int) -> bytes:
        try:
            chunk = conn.sock.recv(size)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return b""
        except OSError:
            chunk = b""
        if not chunk:
            self._close(conn)  # the client closed, or the connection broke
        return chunk

    def _check_request(self, conn: _Conn) -> None:
        data, limit = conn.data, self.limits.request_bytes
        if conn.need is None:
            # A search from where the last one stopped: a client sending a
            # byte at a time must not cost a scan of the whole buffer each.
            m = _BLANK_LINE.search(data, max(0, conn.scanned - 3))
            if m is None:
                if len(data) > limit:
                    big = (
                        "431 Request Header Fields Too Large"
                        if b"\n" in data
                        else "414 URI Too Long"
                    )
                    self._send(conn, status_response(big))
                return
            body = body_length(bytes(data[: m.end()]))
            if isinstance(body, str):
                self._send(conn, status_response(body))
                return
            conn.need = m.end() + body
            if conn.need > limit:
                self._send(conn, status_response("413 Content Too Large"))
                return
        if len(data) >= conn.need:
            self._leave_pending(conn)
            conn.state = SERVING
            self._selector.unregister(conn.sock)  # more bytes from it are not read
            # Bytes after the request (a second, pipelined one) are not served.
            self._jobs.put((conn, _Request(bytes(data[: conn.need]))))

    def _send(self, conn: _Conn, response: bytes) -> None:
        self._leave_pending(conn)
        if conn.state == READING:
            self._selector.modify(conn.sock, selectors.EVENT_WRITE, conn)
        else:
            self._selector.register(conn.sock, selectors.EVENT_WRITE, conn)
        conn.state = WRITING
        conn.out = memoryview(response)
        conn.deadline_s = time.monotonic() + self.limits.request_timeout_s
        self._writable(conn)

    def _writable(self, conn: _Conn) -> None:
        if conn.state == READING and conn.handshaking:
            self._handshake(conn)
            if not conn.handshaking:
                self._readable(conn)
            return
        if conn.state != WRITING:
            return
        try:
            sent = conn.sock.send(conn.out)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except OSError:
            self._close(conn)
            return
        conn.out = conn.out[sent:]
        if conn.out:
            return
        if isinstance(conn.sock, ssl.SSLSocket):
            # close_notify, so the client sees the response end cleanly;
            # the reply to it is not waited for (nonblocking: want-read).
            with contextlib.suppress(OSError, ValueError):
                conn.sock.unwrap()
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(conn)
            return
        conn.state = LINGERING
        conn.deadline_s = time.monotonic() + self.limits.linger_s
        self._selector.modify(conn.sock, selectors.EVENT_READ, conn)

    def _take_responses(self) -> None:
        with contextlib.suppress(OSError):
            while self._wake_r.recv(4096):
                pass
        while self._done:
            conn, response = self._done.popleft()
            if conn.state == SERVING:  # not closed meanwhile
                self._send(conn, response)

    def _leave_pending(self, conn: _Conn) -> None:
        mine = self._pending.get(conn.client)
        if mine is not None and conn in mine:
            mine.remove(conn)
            if not mine:
                del self._pending[conn.client]

    def _close(self, conn: _Conn) -> None:
        if conn.state == CLOSED:
            return
        if conn.state != SERVING:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(conn.sock)
        self._leave_pending(conn)
        self._conns.discard(conn)
        conn.state = CLOSED
        conn.sock.close()

    # -- workers ------------------------------------------------------------------------
    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            conn, request = job
            self._done.append((conn, self._respond(conn, request)))
            self._wake()

    def _respond(self, conn: _Conn, request: _Request) -> bytes:
        try:
            _Handler(cast(Any, request), conn.peer, cast(Any, self))
        except Exception:
            request.response = b""
        return request.response or status_response("500 Internal Server Error")

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (a wake-up is pending) or closed
            self._wake_w.send(b"\0")
