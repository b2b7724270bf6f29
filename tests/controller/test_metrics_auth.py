# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 52, Deliver 4: TLS and basic auth for /metrics, from an exporter
web config (`tofcc run --web-config FILE`, web_config.py)."""

from __future__ import annotations

import base64
import contextlib
import http.client
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bcrypt
import pytest
import yaml

from bfrt_controller.cli import run as tofcc
from bfrt_controller.metrics import serve
from bfrt_controller.scrape_server import ScrapeServer
from bfrt_controller.service import Daemon
from bfrt_controller.web_config import load_web_config
from doubles.certs import Authority
from tests.controller.test_service import Clock, pmqecn_target, recording_factory, write_deploy

# Cost 4, bcrypt's least: the test checks the scheme, not the cost.
HASH = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()


def web_config(path: Path, **doc: Any) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@contextlib.contextmanager
def endpoint(tmp_path: Path, web: Path | None) -> Iterator[ScrapeServer]:
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target())
    d = Daemon(deploy, recording_factory({}), Clock())
    d.step()
    server = serve(d, "127.0.0.1", 0, web=load_web_config(web) if web else None)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def get(url: str, auth: tuple[str, str] | None = None, context: Any = None) -> tuple[int, Any, str]:
    req = urllib.request.Request(url)
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=10, context=context) as resp:
            return resp.status, resp.headers, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


def test_basic_auth_refuses_a_scrape_without_credentials(tmp_path: Path) -> None:
    web = web_config(tmp_path / "web.yaml", basic_auth_users={"prometheus": HASH})
    with endpoint(tmp_path, web) as server:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        status, headers, body = get(url)
        assert status == 401 and "tofcc_" not in body
        assert headers["WWW-Authenticate"].startswith("Basic ")
        for wrong in (("prometheus", "guess"), ("someone", "s3cret"), ("prometheus", "x" * 80)):
            assert get(url, wrong)[0] == 401
        status, _, body = get(url, ("prometheus", "s3cret"))
        assert status == 200 and "tofcc_target_info" in body
        assert get(url, ("prometheus", "s3cret"))[0] == 200  # again, from the cache


def test_tls_serves_a_scraper_that_trusts_the_certificate(tmp_path: Path) -> None:
    ca = Authority()
    ca.issue("127.0.0.1", "localhost").write(tmp_path, "metrics")
    web = web_config(
        tmp_path / "web.yaml",
        tls_server_config={"cert_file": "metrics.pem", "key_file": "metrics.key"},
        basic_auth_users={"prometheus": HASH},
    )
    trusting = ssl.create_default_context(cadata=ca.pem.decode())
    with endpoint(tmp_path, web) as server:
        url = f"https://127.0.0.1:{server.server_port}/metrics"
        status, _, body = get(url, ("prometheus", "s3cret"), trusting)
        assert status == 200 and "tofcc_target_info" in body
        assert get(url, None, trusting)[0] == 401
        # A client that does not trust it fails the handshake.
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            get(url, ("prometheus", "s3cret"), ssl.create_default_context())
        # Plain HTTP to the TLS port gets no metrics.
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=10)
        with pytest.raises((http.client.HTTPException, OSError)):
            conn.request("GET", "/metrics")
            conn.getresponse().read()
        conn.close()


def test_client_certificates_when_the_web_config_asks_for_them(tmp_path: Path) -> None:
    server_ca, client_ca = Authority("server CA"), Authority("scrapers CA")
    server_ca.issue("127.0.0.1").write(tmp_path, "metrics")
    (tmp_path / "scrapers-ca.pem").write_bytes(client_ca.pem)
    cert, key = client_ca.issue("prometheus", client=True).write(tmp_path, "prometheus")
    web = web_config(
        tmp_path / "web.yaml",
        tls_server_config={
            "cert_file": "metrics.pem",
            "key_file": "metrics.key",
            "client_ca_file": "scrapers-ca.pem",
            "client_auth_type": "RequireAndVerifyClientCert",
        },
    )
    anonymous = ssl.create_default_context(cadata=server_ca.pem.decode())
    known = ssl.create_default_context(cadata=server_ca.pem.decode())
    known.load_cert_chain(cert, key)
    with endpoint(tmp_path, web) as server:
        url = f"https://127.0.0.1:{server.server_port}/metrics"
        assert get(url, None, known)[0] == 200
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            get(url, None, anonymous)


def test_a_stalled_handshake_does_not_hold_a_scrape(tmp_path: Path) -> None:
    ca = Authority()
    ca.issue("127.0.0.1").write(tmp_path, "metrics")
    web = web_config(
        tmp_path / "web.yaml",
        tls_server_config={"cert_file": "metrics.pem", "key_file": "metrics.key"},
    )
    trusting = ssl.create_default_context(cadata=ca.pem.decode())
    with endpoint(tmp_path, web) as server:
        # Connections that never send a ClientHello, and one that stops halfway.
        idle = [socket.create_connection(("127.0.0.1", server.server_port)) for _ in range(8)]
        half = socket.create_connection(("127.0.0.1", server.server_port))
        half.sendall(b"\x16\x03\x01\x02\x00\x01")  # the start of a ClientHello record
        try:
            status, _, body = get(f"https://127.0.0.1:{server.server_port}/metrics", None, trusting)
            assert status == 200 and "tofcc_" in body
        finally:
            for s in (*idle, half):
                s.close()


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"tls_server_config": {"cert_file": "missing.pem", "key_file": "m.key"}}, "cert_file"),
        ({"tls_server_config": {"cert_file": "m.pem", "key_file": "other.key"}}, "key_file"),
        ({"tls_server_config": {"cert_file": "m.pem", "key_file": "m.pem"}}, "key_file"),
        (
            {
                "tls_server_config": {
                    "cert_file": "m.pem",
                    "key_file": "m.key",
                    "client_auth_type": "RequireAndVerifyClientCert",
                }
            },
            "client_auth_type",
        ),
        ({"basic_auth_users": {"prometheus": "s3cret"}}, "basic_auth_users"),
        ({"basic_auth_users": {"a:b": HASH}}, "basic_auth_users"),
        ({"tls_server_config": {"cert_file": "m.pem"}}, "tls_server_config.key_file"),
        ({"http_server_config": {"http2": True}}, "http_server_config"),
    ],
)
def test_a_bad_web_config_is_exit_2_naming_the_field_before_any_push(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: dict[str, Any], field: str
) -> None:
    ca = Authority()
    ca.issue("127.0.0.1").write(tmp_path, "m")
    ca.issue("127.0.0.1").write(tmp_path, "other")  # a key of another certificate
    web = web_config(tmp_path / "web.yaml", **doc)
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target(), metrics={"port": 0})
    code = tofcc(["run", "--config", str(deploy), "--web-config", str(web), "--cycles", "1"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{web}: " in err and field in err, err
    assert "event=connected" not in err  # nothing pushed


def test_run_serves_metrics_over_tls_with_the_web_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ca = Authority()
    ca.issue("127.0.0.1").write(tmp_path, "m")
    web = web_config(
        tmp_path / "web.yaml",
        tls_server_config={"cert_file": "m.pem", "key_file": "m.key"},
        basic_auth_users={"prometheus": HASH},
    )
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target(), metrics={"port": 0})
    assert tofcc(["run", "--config", str(deploy), "--web-config", str(web), "--cycles", "1"]) == 0
    assert "event=metrics url=https://127.0.0.1:" in capsys.readouterr().err


def test_a_web_config_without_an_endpoint_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    web = web_config(tmp_path / "web.yaml", basic_auth_users={"prometheus": HASH})
    deploy = write_deploy(tmp_path / "d.yaml", pmqecn_target())
    assert tofcc(["run", "--config", str(deploy), "--web-config", str(web), "--cycles", "1"]) == 2
    err = capsys.readouterr().err
    assert "--web-config: " in err and "serves no /metrics" in err
