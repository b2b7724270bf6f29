# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The deployment file: which switches the service drives, each with its
program, that program's config and the front-panel ports to bring up.

    metrics: {address: 127.0.0.1, port: 9464}
    audit_log: /var/log/tofcc/audit.log    # optional (audit.py)
    targets:
      - name: leaf1
        target: grpc://10.0.0.1:50052
        tls: {ca_file: ca.pem, cert_file: tofcc.pem, key_file: tofcc.key}  # optional
        program: pmqecn
        config: pmqecn.yaml
        front_panel:
          board: tofino-32q
          ports:
            - {port: 1/0, speed: 100G, fec: rs}

The whole file is validated before anything is sent (each error names its
field: `targets[1].config: classes[0].queue`, `targets[0].front_panel.ports[2].fec`).
"""

from __future__ import annotations

import ipaddress
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from hw_profiles import HwProfile, load_profile
from hw_profiles.boards import BoardProfile

from . import units
from .common import Strict, cycle_interval, repeated_name
from .errors import ConfigError
from .logs import log_event
from .ports import PortsConfig, check_ports
from .programs import PROGRAMS, Program, get_program
from .targets import SwitchIdentity, switch_identity
from .tls import CERTIFICATE, PRIVATE_KEY, ChannelTls, read_pem, resolve_path
from .validation import load_yaml, parse_model

log = logging.getLogger("tofcc.service")

DEFAULT_INTERVAL_S = 1.0
# What targets.open_switch takes (ASCII digits: int() would also take "５").
_GRPC = re.compile(r"(?:grpc|tofino-model)://[^\s/]+:([0-9]{1,5})")


class MetricsSpec(Strict):
    # Loopback unless the deployment says otherwise: the endpoint has TLS and
    # auth only with `tofcc run --web-config` (web_config.py).
    address: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 9464  # 0: any free port

    @field_validator("address")
    @classmethod
    def _ip(cls, value: str) -> str:
        # An IP literal: a name would resolve at bind time, after the switches
        # were pushed, and may resolve to an address not on this machine.
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise ValueError(f"expected an IP address such as 127.0.0.1, got {value!r}") from None
        return value


class TlsSpec(Strict):
    """TLS to a BF-Runtime switch, as P4Runtime and Stratum clients take it:
    the CA its certificate chains to and, for mutual TLS, this client's
    certificate and key. Paths relative to the deployment file."""

    ca_file: Annotated[str, Field(min_length=1)]
    cert_file: Annotated[str, Field(min_length=1)] | None = None
    key_file: Annotated[str, Field(min_length=1)] | None = None
    # The name the switch's certificate must carry, when not HOST itself.
    server_name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$")] | None = None

    @model_validator(mode="after")
    def _pair(self) -> TlsSpec:
        if (self.cert_file is None) != (self.key_file is None):
            given, missing = (
                ("cert_file", "key_file") if self.key_file is None else ("key_file", "cert_file")
            )
            raise ValueError(f"{given} without {missing}: mutual TLS needs both")
        return self


class TargetSpec(Strict):
    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")]
    target: str = "model"  # 'model' or grpc://HOST:PORT
    tls: TlsSpec | None = None
    program: str
    # The program's config: a path (relative to the deployment file) or inline.
    config: str | dict[str, Any] | None = None
    client_id: Annotated[int, Field(ge=0, le=0xFFFFFFFF)] = 0
    interval_s: Annotated[float, cycle_interval(86_400)] | None = None
    front_panel: PortsConfig | None = None


class ServiceConfig(Strict):
    metrics: MetricsSpec | None = None
    # Where each write's audit line goes (audit.py); relative to this file.
    audit_log: Annotated[str, Field(min_length=1)] | None = None
    targets: Annotated[list[TargetSpec], Field(min_length=1)]
    # A front-panel port that is neither trusted nor source-bound forwards any
    # source address (tna/include/source_guard.p4): a warning, or with this,
    # a refusal of the file.
    strict_source_guard: bool = False

    @model_validator(mode="after")
    def _unique(self) -> ServiceConfig:
        # The name labels the switch's metrics and log lines: one per switch.
        seen: dict[str, int] = {}
        for i, t in enumerate(self.targets):
            if t.name in seen:
                raise ValueError(
                    f"targets[{i}].name {t.name!r} repeats targets[{seen[t.name]}].name"
                )
            seen[t.name] = i
        # `Leaf1` beside `leaf1`: two switches a dashboard cannot tell apart.
        same = repeated_name([t.name for t in self.targets])
        if same is not None:
            i, j = same
            raise ValueError(
                f"targets[{j}].name {self.targets[j].name!r} repeats targets[{i}].name "
                f"{self.targets[i].name!r} up to case: names must differ in more than case"
            )
        return self


@dataclass(frozen=True)
class ResolvedTarget:
    """A target with everything checked: its program, parsed config, chip and board."""

    spec: TargetSpec
    program: Program
    config: Any
    profile: HwProfile
    board: BoardProfile | None
    # Front-panel device ports brought up with no source binding and not trusted.
    unguarded_ports: tuple[int, ...] = ()
    tls: ChannelTls | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def interval_s(self) -> float:
        if self.spec.interval_s is not None:
            return self.spec.interval_s
        optimizer = getattr(self.config, "optimizer", None)
        return float(getattr(optimizer, "interval_s", DEFAULT_INTERVAL_S))

    def endpoint(self) -> tuple[str, str, int, str, str]:
        """What the target's session depends on: another value needs a new one
        (a rotated certificate too: the channel was made with the old one)."""
        tls = self.tls.fingerprint() if self.tls is not None else ""
        return (self.spec.target, self.spec.program, self.spec.client_id, self.profile.chip, tls)


def is_service_config(raw: object) -> bool:
    return isinstance(raw, dict) and "targets" in raw


def resolve(raw: object, source: str, base: Path) -> tuple[ServiceConfig, list[ResolvedTarget]]:
    """Validate a whole deployment file; ConfigError names the first bad field."""
    cfg = parse_model(ServiceConfig, raw, source)
    out: list[ResolvedTarget] = []
    for i, spec in enumerate(cfg.targets):
        at = f"{source}: targets[{i}]"
        if spec.program not in PROGRAMS:
            raise ConfigError(
                f"{at}.program", f"unknown program {spec.program!r} (known: {', '.join(PROGRAMS)})"
            )
        program = get_program(spec.program)
        with units.within(f"targets[{i}].config"):
            config = _target_config(program, spec, base, at)
        profile = load_profile(config.chip)
        board = None
        unguarded: tuple[int, ...] = ()
        if spec.front_panel is not None:
            board = check_ports(spec.front_panel, profile, f"{at}.front_panel")
            config = with_port_speeds(config, spec.front_panel, board, at)
            check_pfc_priorities(config, spec.front_panel, board, profile, at)
            check_polled_ports(config, spec.front_panel, board, at)
            unguarded = _unguarded(spec.front_panel, board, config)
            if unguarded and cfg.strict_source_guard:
                raise ConfigError(
                    f"{at}.front_panel",
                    f"device port(s) {', '.join(map(str, unguarded))} would forward any source: "
                    "give each a source_bindings entry or list it in trusted_ports "
                    "(strict_source_guard is on)",
                )
        m = _GRPC.fullmatch(spec.target)
        if spec.target != "model" and (m is None or not 1 <= int(m.group(1)) <= 65535):
            raise ConfigError(
                f"{at}.target",
                "expected 'model', grpc://HOST:PORT or tofino-model://HOST:PORT with PORT "
                f"1..65535, got {spec.target!r}",
            )
        tls = None if spec.tls is None else load_channel_tls(spec, base, f"{at}.tls")
        out.append(ResolvedTarget(spec, program, config, profile, board, unguarded, tls))
    _one_writer_per_switch(out, source)
    return cfg, out


def _target_config(program: Program, spec: TargetSpec, base: Path, at: str) -> Any:
    """The target's program config: its file, inline, or the program's default."""
    if spec.config is None:
        return program.load_config(program.default_config)
    if isinstance(spec.config, str):
        path = Path(spec.config)
        path = path if path.is_absolute() else base / path
        try:
            return program.load_config(path)
        except ConfigError as exc:
            raise ConfigError(f"{at}.config: {exc.field}", exc.reason) from None
    try:
        return program.parse_config(spec.config, "")
    except ConfigError as exc:
        raise ConfigError(f"{at}.config.{exc.field}", exc.reason) from None


def audit_log_path(cfg: ServiceConfig, base: Path) -> Path | None:
    """The deployment's `audit_log:`, relative to the file's directory."""
    return None if cfg.audit_log is None else resolve_path(cfg.audit_log, base)


def load_channel_tls(spec: TargetSpec, base: Path, at: str) -> ChannelTls:
    """The target's `tls:` files, read now: one that is missing, unreadable or
    not PEM is exit 2 naming its field, before any switch is contacted."""
    assert spec.tls is not None
    if spec.target == "model":
        raise ConfigError(
            at, "is for grpc:// and tofino-model:// targets: the model has no channel"
        )
    t = spec.tls
    ca = read_pem(resolve_path(t.ca_file, base), f"{at}.ca_file", CERTIFICATE)
    cert = key = None
    if t.cert_file is not None and t.key_file is not None:
        cert = read_pem(resolve_path(t.cert_file, base), f"{at}.cert_file", CERTIFICATE)
        key = read_pem(resolve_path(t.key_file, base), f"{at}.key_file", PRIVATE_KEY)
    return ChannelTls(ca, cert, key, t.server_name)


def with_port_speeds(config: Any, ports: PortsConfig, board: BoardProfile, at: str) -> Any:
    """A program whose config takes its ports' speeds (S-PIE sizes its
    sketch by them) gets each front-panel port's speed where it gives none,
    so an operator states a speed once, in the front panel."""
    fill = getattr(config, "with_port_speeds", None)
    if fill is None:
        return config
    speeds = {board.dev_port(p.port): float(p.speed.removesuffix("G")) for p in ports.ports}
    try:
        return fill(speeds)
    except ConfigError as exc:
        raise ConfigError(f"{at}.config.{exc.field}", exc.reason) from None


def _one_writer_per_switch(targets: list[ResolvedTarget], source: str) -> None:
    """One writer per program on a switch: two targets binding the same
    program on one switch would lock each other out. A switch is its
    address and port as resolved (targets.switch_identity), not the text:
    `127.0.0.1`, `localhost`, `127.1` and `[::ffff:127.0.0.1]` are one."""
    seen: list[tuple[int, SwitchIdentity]] = []
    for i, t in enumerate(targets):
        if t.spec.target == "model":
            continue
        ident = switch_identity(t.spec.target)
        for j, other in seen:
            if targets[j].spec.program == t.spec.program and ident.same_switch(other):
                raise ConfigError(
                    f"{source}: targets[{i}].target",
                    f"{t.spec.program} on {t.spec.target} is already targets[{j}] "
                    f"({targets[j].spec.target}): {ident.shared_with(other)}",
                )
        seen.append((i, ident))


def check_pfc_priorities(
    config: Any, ports: PortsConfig, board: BoardProfile, profile: HwProfile, at: str
) -> None:
    """A program's TM PFC against its ports' MAC maps: each PFC port the
    front panel lists must have the lossless CoS in its `pfc_priorities`
    (the MAC sends and honours only those: `$TX_PFC_EN_MAP` /
    `$RX_PFC_EN_MAP`), and on Tofino1 not the CoS queues move to while
    ignoring pauses, so the MAC drops pauses on it (Tofino2's MAC takes
    0 or 0xFF only, bf_port_if.c line 965: there the fabric must pause
    nothing on that CoS)."""
    pfc = getattr(config, "pfc", None)
    if pfc is None:
        return
    by_dev_port = {board.dev_port(p.port): i for i, p in enumerate(ports.ports)}
    for port in pfc.ports:
        i = by_dev_port.get(port)
        if i is None:
            continue
        fp = ports.ports[i]
        where = f"{at}.front_panel.ports[{i}].pfc_priorities"
        if pfc.cos not in fp.pfc_priorities:
            raise ConfigError(
                where,
                f"{fp.port} (device port {port}) carries the config's PFC on CoS {pfc.cos} "
                f"but its MAC enables PFC on {sorted(fp.pfc_priorities) or 'no priority'}: "
                f"it would neither send nor honour pauses on CoS {pfc.cos}",
            )
        ignore = getattr(pfc, "ignore_cos", None)
        if profile.chip == "tofino" and ignore in fp.pfc_priorities:
            raise ConfigError(
                where,
                f"{fp.port} (device port {port}) honours pauses on CoS {ignore}, where the "
                "lossless queues go while pauses are ignored (pfc.ignore_cos): leave it out "
                "of pfc_priorities so the MAC drops pauses on it",
            )


def polled_ports(config: Any) -> dict[int, str]:
    """Device ports whose `$PORT_STAT` counters the program's loops read,
    with the field that names each: the PFC watchdog's ports (pause time)
    and BFCC's reaction points (bytes sent, for shaping)."""
    out: dict[int, str] = {}
    pfc = getattr(config, "pfc", None)
    for i, port in enumerate(getattr(pfc, "ports", None) or ()):
        out.setdefault(port, f"pfc.ports[{i}]")
    for i, rp in enumerate(getattr(config, "reaction_points", None) or ()):
        out.setdefault(rp.port, f"reaction_points[{i}].port")
    return out


def check_polled_ports(config: Any, ports: PortsConfig, board: BoardProfile, at: str) -> None:
    """Every port a loop polls must be one the front panel adds: the SDE
    refuses `$PORT_STAT` on a port that is not added (open-p4studio
    bf_pm_intf.c bf_pm_port_stat_direct_get line 10449, BF_INVALID_ARG), so
    the watchdog or the shaper would fail every cycle."""
    added = {board.dev_port(p.port) for p in ports.ports}
    for port, name in polled_ports(config).items():
        if port not in added:
            raise ConfigError(
                f"{at}.config.{name}",
                f"device port {port} is not in front_panel: the switch refuses its "
                "counters until it is added (add it to front_panel.ports)",
            )


def _unguarded(ports: PortsConfig, board: BoardProfile, config: Any) -> tuple[int, ...]:
    guarded = set(getattr(config, "trusted_ports", ())) | {
        b.port for b in getattr(config, "source_bindings", ())
    }
    return tuple(sorted({board.dev_port(p.port) for p in ports.ports} - guarded))


def warn_unguarded(targets: list[ResolvedTarget], source: str) -> None:
    """One warning per switch whose front panel brings up ports that forward
    any source (the program's source guard checks only bound ports)."""
    for i, t in enumerate(targets):
        if t.unguarded_ports:
            log_event(
                log,
                "source-guard-unbound",
                level=logging.WARNING,
                file=source,
                field=f"targets[{i}].front_panel",
                switch=t.name,
                dev_ports=",".join(map(str, t.unguarded_ports)),
                why="neither trusted nor source-bound: forwards any source "
                "(bind them, or strict_source_guard: true to refuse)",
            )


def load_service_config(path: Path) -> tuple[ServiceConfig, list[ResolvedTarget]]:
    cfg, targets = resolve(load_yaml(path), str(path), path.parent)
    warn_unguarded(targets, str(path))
    return cfg, targets
