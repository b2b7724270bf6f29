# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 52, Deliver 4: TLS and mutual TLS to BF-Runtime switches.

The deployment names certificate files per target (`tls:`), read and checked
before anything is sent; the SDE's client, which makes only plaintext
channels, is given a TLS one (backends/bfrt/channel.py). On the fake, whose
switch refuses what a TLS server refuses; and, with grpcio, a real handshake."""

from __future__ import annotations

import copy
from concurrent import futures
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller.backends.bfrt import client as bfrt_client
from bfrt_controller.backends.bfrt.channel import secure_channel, secure_channels
from bfrt_controller.cli import run as tofcc
from bfrt_controller.deployment import load_service_config
from bfrt_controller.errors import SdeMissing, SwitchUnavailable
from bfrt_controller.fleet import default_switch_factory
from bfrt_controller.service import Daemon
from bfrt_controller.tls import ChannelTls
from doubles import FakeBfrtGrpc
from doubles.certs import Authority
from hw_profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
PMQECN = ROOT / "examples" / "pmqecn-tm-dwrr.yaml"
ECN = "SwitchIngress.ecn_threshold"


class Pki:
    """A switch CA and certificate, a client CA and tofcc's certificate, on disk."""

    def __init__(self, directory: Path, switch_names: tuple[str, ...] = ("leaf1",)) -> None:
        self.dir = directory
        self.switch_ca, self.client_ca = Authority("switch CA"), Authority("operators CA")
        self.switch = self.switch_ca.issue(*switch_names)
        self.client = self.client_ca.issue("tofcc", client=True)
        (directory / "switch-ca.pem").write_bytes(self.switch_ca.pem)
        self.client.write(directory, "tofcc")


def deployment(path: Path, tls: dict[str, Any] | None, target: str = "grpc://leaf1:50052") -> Path:
    spec: dict[str, Any] = {
        "name": "leaf1",
        "target": target,
        "program": "pmqecn",
        "config": yaml.safe_load(PMQECN.read_text()),
    }
    if tls is not None:
        spec["tls"] = copy.deepcopy(tls)
    path.write_text(yaml.safe_dump({"targets": [spec]}, sort_keys=False))
    return path


MUTUAL = {"ca_file": "switch-ca.pem", "cert_file": "tofcc.pem", "key_file": "tofcc.key"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeBfrtGrpc:
    """The SDE client a grpc:// target loads (targets.open_switch): the fake."""
    f = FakeBfrtGrpc("pmqecn", load_profile("tofino"), address="leaf1:50052")
    monkeypatch.setattr(bfrt_client, "load_bfrt_client", lambda: f)
    return f


def connect(deploy: Path) -> Any:
    """The target's switch as the daemon opens it (fleet.default_switch_factory)."""
    _, (target,) = load_service_config(deploy)
    sw = default_switch_factory(target)
    sw.connect()
    return sw


def test_a_mutual_tls_target_connects_and_writes_over_tls(
    tmp_path: Path, fake: FakeBfrtGrpc
) -> None:
    pki = Pki(tmp_path)
    fake.serve_tls(pki.switch.cert, pki.switch.key, client_ca=pki.client_ca.pem)
    deploy = deployment(tmp_path / "d.yaml", MUTUAL)
    assert tofcc(["apply", str(deploy)]) == 0
    assert fake.entries(ECN)  # written
    channel = fake.grpc.channels[-1]
    assert channel.target == "leaf1:50052"
    creds = channel.credentials
    assert creds is not None and creds.root_certificates == pki.switch_ca.pem
    assert creds.certificate_chain == pki.client.cert and creds.private_key == pki.client.key
    # The client's own channel options are kept (client.py line 436).
    assert channel.option("grpc.max_send_message_length") == 1024**3
    # `status` reads through an independent client: over TLS too.
    assert tofcc(["--config", str(deploy), "status", "--json"]) == 0
    assert fake.grpc.channels[-1].credentials == creds
    # The client module's own grpc is back after each connect.
    assert type(fake.grpc).__name__ == "FakeGrpc"


@pytest.mark.parametrize(
    ("tls", "why"),
    [
        (None, "plaintext client at a TLS server"),  # no tls: in the deployment
        ({"ca_file": "switch-ca.pem"}, "PEER_DID_NOT_RETURN_A_CERTIFICATE"),
        ({**MUTUAL, "ca_file": "other-ca.pem"}, "unknown CA"),
        ({**MUTUAL, "cert_file": "stranger.pem", "key_file": "stranger.key"}, "UNKNOWN_CA"),
    ],
)
def test_a_switch_requiring_mutual_tls_refuses_other_clients(
    tmp_path: Path, fake: FakeBfrtGrpc, tls: dict[str, str] | None, why: str
) -> None:
    pki = Pki(tmp_path)
    (tmp_path / "other-ca.pem").write_bytes(Authority("other CA").pem)
    Authority("another operators CA").issue("tofcc", client=True).write(tmp_path, "stranger")
    fake.serve_tls(pki.switch.cert, pki.switch.key, client_ca=pki.client_ca.pem)
    with pytest.raises(SwitchUnavailable) as exc:
        connect(deployment(tmp_path / "d.yaml", tls))
    assert why in str(exc.value)
    if tls is not None:  # the error says TLS may be why
        assert "ca_file" in str(exc.value)
    assert fake.switch.clients == {}


def test_a_tls_client_is_refused_by_a_plaintext_switch(tmp_path: Path, fake: FakeBfrtGrpc) -> None:
    Pki(tmp_path)
    with pytest.raises(SwitchUnavailable, match="WRONG_VERSION_NUMBER"):
        connect(deployment(tmp_path / "d.yaml", {"ca_file": "switch-ca.pem"}))


def test_server_name_checks_a_certificate_for_another_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A switch reached by address whose certificate names it leaf1.example."""
    fake = FakeBfrtGrpc("pmqecn", load_profile("tofino"), address="10.0.0.1:50052")
    monkeypatch.setattr(bfrt_client, "load_bfrt_client", lambda: fake)
    pki = Pki(tmp_path, ("leaf1.example",))
    fake.serve_tls(pki.switch.cert, pki.switch.key)
    plain = {"ca_file": "switch-ca.pem"}
    with pytest.raises(SwitchUnavailable, match=r"peer name 10\.0\.0\.1"):
        connect(deployment(tmp_path / "d.yaml", plain, "grpc://10.0.0.1:50052"))
    named = {**plain, "server_name": "leaf1.example"}
    sw = connect(deployment(tmp_path / "d.yaml", named, "grpc://10.0.0.1:50052"))
    assert fake.grpc.channels[-1].option("grpc.ssl_target_name_override") == "leaf1.example"
    sw.close()


def test_a_reload_with_a_rotated_certificate_opens_a_new_session(
    tmp_path: Path, fake: FakeBfrtGrpc
) -> None:
    pki = Pki(tmp_path)
    fake.serve_tls(pki.switch.cert, pki.switch.key, client_ca=pki.client_ca.pem)
    deploy = deployment(tmp_path / "d.yaml", MUTUAL)
    d = Daemon(deploy)
    d.step()
    assert d.targets["leaf1"].connected
    pki.client_ca.issue("tofcc", client=True).write(tmp_path, "tofcc")  # renewed
    assert d.reload()
    d.step()
    assert fake.grpc.channels[-1].credentials.certificate_chain != pki.client.cert
    assert d.targets["leaf1"].connected
    d.close()


@pytest.mark.parametrize(
    ("tls", "field"),
    [
        ({"ca_file": "missing.pem"}, "targets[0].tls.ca_file"),
        ({"ca_file": "."}, "targets[0].tls.ca_file"),  # a directory: unreadable
        ({"ca_file": "tofcc.key"}, "targets[0].tls.ca_file"),  # not a certificate
        ({**MUTUAL, "key_file": "tofcc.pem"}, "targets[0].tls.key_file"),  # not a key
        ({**MUTUAL, "cert_file": "nope.pem"}, "targets[0].tls.cert_file"),
        ({"ca_file": "switch-ca.pem", "cert_file": "tofcc.pem"}, "cert_file without key_file"),
        ({"ca_file": "switch-ca.pem", "ca": "x"}, "targets[0].tls"),
    ],
)
def test_bad_tls_files_are_exit_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tls: dict[str, str], field: str
) -> None:
    Pki(tmp_path)
    deploy = deployment(tmp_path / "d.yaml", tls)
    assert tofcc(["check", "--config", str(deploy)]) == 2
    err = capsys.readouterr().err
    assert field in err and len(err.strip().splitlines()) == 1, err


def test_tls_on_the_model_target_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Pki(tmp_path)
    deploy = deployment(tmp_path / "d.yaml", {"ca_file": "switch-ca.pem"}, "model")
    assert tofcc(["check", "--config", str(deploy)]) == 2
    assert "targets[0].tls: is for grpc://" in capsys.readouterr().err


def test_the_client_takes_no_credentials_as_the_sdes_refuses_them(fake: FakeBfrtGrpc) -> None:
    # open-p4studio client.py line 405: grpc_addr, client_id, device_id,
    # notifications, timeout, num_tries, perform_subscribe; nothing else.
    with pytest.raises(TypeError):
        fake.ClientInterface("leaf1:50052", client_id=0, device_id=0, credentials=object())  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        fake.ClientInterface("leaf1:50052", client_id=0, device_id=0, channel=object())  # type: ignore[call-arg]


def test_the_swap_is_undone_when_the_client_fails() -> None:
    class Grpc:
        def insecure_channel(self, target: str, options: Any = None) -> None:
            raise AssertionError("not while swapped")

    class Module:
        grpc = Grpc()

    original = Module.grpc
    with pytest.raises(RuntimeError), secure_channels(Module, ChannelTls(b"ca")):
        assert Module.grpc is not original
        raise RuntimeError("subscribe failed")
    assert Module.grpc is original


def test_a_client_module_without_insecure_channel_cannot_take_tls() -> None:
    class Module:  # an SDE whose client makes its channel some other way
        pass

    with (
        pytest.raises(SdeMissing, match=r"client\.py line 436"),
        secure_channels(Module, ChannelTls(b"ca")),
    ):
        pass


# ---- a real TLS handshake (grpcio) ------------------------------------------------------


def _serve(grpc: Any, pki: Pki, mutual: bool) -> tuple[Any, int]:
    def ping(request: bytes, context: Any) -> bytes:
        return b"pong:" + request

    handler = grpc.method_handlers_generic_handler(
        "t.T", {"Ping": grpc.unary_unary_rpc_method_handler(ping)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    creds = grpc.ssl_server_credentials(
        [(pki.switch.key, pki.switch.cert)],
        root_certificates=pki.client_ca.pem if mutual else None,
        require_client_auth=mutual,
    )
    port = server.add_secure_port("127.0.0.1:0", creds)
    server.start()
    return server, port


def _ping(grpc: Any, tls: ChannelTls, port: int) -> bytes:
    channel = secure_channel(grpc, tls, f"127.0.0.1:{port}")
    try:
        call = channel.unary_unary("/t.T/Ping")
        result: bytes = call(b"x", timeout=20)
        return result
    finally:
        channel.close()


def test_the_channel_speaks_mutual_tls_to_a_real_grpc_server(tmp_path: Path) -> None:
    grpc = pytest.importorskip("grpc")
    pki = Pki(tmp_path, ("leaf1.example",))
    server, port = _serve(grpc, pki, mutual=True)
    try:
        mutual = ChannelTls(pki.switch_ca.pem, pki.client.cert, pki.client.key, "leaf1.example")
        assert _ping(grpc, mutual, port) == b"pong:x"
        for refused in (
            ChannelTls(pki.switch_ca.pem, server_name="leaf1.example"),  # no client cert
            ChannelTls(Authority().pem, pki.client.cert, pki.client.key, "leaf1.example"),
            ChannelTls(pki.switch_ca.pem, pki.client.cert, pki.client.key),  # name 127.0.0.1
        ):
            with pytest.raises(grpc.RpcError) as exc:
                _ping(grpc, refused, port)
            assert exc.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        server.stop(None)


def test_secure_channels_gives_the_clients_insecure_channel_tls(tmp_path: Path) -> None:
    """What ClientInterface.__init__ does (client.py line 436), under the swap."""
    grpc = pytest.importorskip("grpc")

    class ClientModule:  # the SDE's bfrt_grpc.client, as far as its channel goes
        pass

    ClientModule.grpc = grpc  # type: ignore[attr-defined]
    pki = Pki(tmp_path)
    server, port = _serve(grpc, pki, mutual=False)
    try:
        with secure_channels(ClientModule, ChannelTls(pki.switch_ca.pem, server_name="leaf1")):
            channel = ClientModule.grpc.insecure_channel(  # type: ignore[attr-defined]
                f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 1024**3)]
            )
        assert ClientModule.grpc is grpc  # type: ignore[attr-defined]
        assert channel.unary_unary("/t.T/Ping")(b"y", timeout=20) == b"pong:y"
        channel.close()
    finally:
        server.stop(None)
