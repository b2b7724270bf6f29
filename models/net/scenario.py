"""Scenario files: topology, traffic, schemes and the paper's figures to
compare against, validated before anything is simulated.

Every error names the field (``flows[2].dst``, ``schemes.dcqcn.kmin_packets``)
and the file, like the controller's configs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

SCENARIO_DIR = Path(__file__).parent / "scenarios"

_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kMG]?)bps\s*$")
_RATE_SCALE = {"": 1, "k": 1_000, "M": 1_000_000, "G": 1_000_000_000}

SchemeName = Literal["pmqecn", "bfcc", "dcqcn", "p4qcn", "tcn"]
SCHEMES: tuple[str, ...] = ("pmqecn", "bfcc", "dcqcn", "p4qcn", "tcn")


class ScenarioError(ValueError):
    def __init__(self, source: str, field: str, message: str) -> None:
        self.source, self.field = source, field
        super().__init__(f"{source}: {field}: {message}" if source else f"{field}: {message}")


def parse_rate(text: str) -> int:
    """'10Mbps' -> 10_000_000 (bits per second)."""
    m = _RATE.match(text)
    if not m:
        raise ValueError(f"not a rate like '10Mbps': {text!r}")
    bps = float(m.group(1)) * _RATE_SCALE[m.group(2)]
    if bps <= 0:
        raise ValueError(f"rate must be positive: {text!r}")
    return int(bps)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Rate = Annotated[str, Field(pattern=_RATE.pattern)]
Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*$")]


class Link(Strict):
    a: Name
    b: Name
    rate: Rate | None = None  # default: the scenario's link.rate
    delay_us: Annotated[float, Field(ge=0)] | None = None


class LinkDefaults(Strict):
    rate: Rate = "10Mbps"
    delay_us: Annotated[float, Field(ge=0)] = 10.0


class Flow(Strict):
    name: Name
    src: Name
    dst: Name
    start_s: Annotated[float, Field(ge=0)] = 0.0
    # None: until the end of the run.
    stop_s: Annotated[float, Field(gt=0)] | None = None
    # None: no fixed size (a long-lived flow); else FCT is measured.
    size_bytes: Annotated[int, Field(ge=1)] | None = None
    # IPv4 total length of each data packet.
    packet_bytes: Annotated[int, Field(ge=64, le=1500)] = 1000
    dscp: Annotated[int, Field(ge=0, le=63)] = 0
    # PMQECN traffic class (seed 000 Table 2): A loss, B delay, C both.
    qos: Literal["A", "B", "C"] = "C"
    # The application's offered rate as a fraction of its access link's rate
    # (so it follows a link-rate sweep): the most its sender ever sends.
    load: Annotated[float, Field(gt=0, le=1)] = 1.0


class Monitor(Strict):
    """An egress port whose queue is recorded: on `switch`, facing `toward`."""

    switch: Name
    toward: Name


class Dcqcn(Strict):
    # Seed 000 Table 3 / seed 001 §5.1.1: K_min = K_max = 11 packets.
    kmin_packets: Annotated[int, Field(ge=0)] = 11
    kmax_packets: Annotated[int, Field(ge=1)] = 11
    pmax: Annotated[float, Field(gt=0, le=1)] = 1.0
    g: Annotated[float, Field(gt=0, lt=1)] = 1 / 256
    cnp_interval_us: Annotated[float, Field(gt=0)] = 50.0
    rate_timer_us: Annotated[float, Field(gt=0)] = 55.0
    rai: Rate = "5Mbps"
    min_rate: Rate = "100kbps"

    @model_validator(mode="after")
    def _order(self) -> Dcqcn:
        if self.kmin_packets > self.kmax_packets:
            raise ValueError("kmin_packets must not exceed kmax_packets")
        return self


class Tcn(Strict):
    # Threshold = lam x base RTT (seed 000 Table 3: lambda = 0.17).
    lam: Annotated[float, Field(gt=0, le=1)] = 0.17
    # None: measured from the topology (propagation plus one MTU per hop, both ways).
    base_rtt_us: Annotated[float, Field(gt=0)] | None = None
    cnp_interval_us: Annotated[float, Field(gt=0)] = 50.0
    rate_timer_us: Annotated[float, Field(gt=0)] = 55.0
    rai: Rate = "5Mbps"
    min_rate: Rate = "100kbps"


class P4qcn(Strict):
    # Seed 001 §5.1.1: Q_min = Q_max = 11, N = 5 (us between feedback per flow).
    qmin_packets: Annotated[int, Field(ge=0)] = 11
    qmax_packets: Annotated[int, Field(ge=1)] = 11
    feedback_interval_us: Annotated[float, Field(gt=0)] = 5.0
    # QCN's RP timer; None: byte counter only, as P4QCN's paper describes.
    rate_timer_us: Annotated[float, Field(gt=0)] | None = None
    rai: Rate = "5Mbps"
    min_rate: Rate = "100kbps"

    @model_validator(mode="after")
    def _order(self) -> P4qcn:
        if self.qmin_packets > self.qmax_packets:
            raise ValueError("qmin_packets must not exceed qmax_packets")
        return self


class Pmqecn(Strict):
    # Initial K_i in packets before the first optimiser cycle (seed 000 Table 3: 11).
    threshold_packets: Annotated[int, Field(ge=1)] = 11
    weight: Annotated[int, Field(ge=1, le=255)] = 4
    # Controller cycle; 0 keeps the initial thresholds and weights.
    optimizer_interval_s: Annotated[float, Field(ge=0)] = 1.0
    # Host RP (seed 000 Algorithm 3): start rate, R_A and the fast-recovery
    # rounds. The baselines' sources start at line rate, as their NICs do:
    # DCQCN's and QCN's increase machinery is idle until the first notification.
    initial_rate: Rate = "1Mbps"
    ra: Rate = "5Mbps"
    rounds: Annotated[int, Field(ge=1)] = 5
    rp_timer_us: Annotated[float, Field(gt=0)] = 10_000.0


class Bfcc(Strict):
    # Seed 001 §5.1.1: threshold 15 packets, T_min = 80,000 and T_max =
    # 150,000 us of deq_timedelta on its 10 Mb/s links; the controller scales
    # T to each port's rate (same queued bytes) and reports what the chip
    # cannot measure.
    threshold_packets: Annotated[int, Field(ge=1)] = 15
    t_min_us: Annotated[int, Field(ge=0)] = 80_000
    t_max_us: Annotated[int, Field(ge=1)] = 150_000
    reference_rate_mbps: Annotated[int, Field(ge=1)] = 10
    window_packets: Annotated[int, Field(ge=1, le=255)] = 100
    refresh_ns: Annotated[int, Field(ge=0)] = 1_000_000
    expiry_ns: Annotated[int, Field(ge=0)] = 5_000_000


class Schemes(Strict):
    pmqecn: Pmqecn | None = None
    bfcc: Bfcc | None = None
    dcqcn: Dcqcn | None = None
    p4qcn: P4qcn | None = None
    tcn: Tcn | None = None

    def enabled(self) -> list[str]:
        return [n for n in SCHEMES if getattr(self, n) is not None]


Number = float
ClaimValue = Number | tuple[Number, Number]


class Claim(Strict):
    """A headline figure of the paper: `ours` changed `metric` by this many
    percent relative to each baseline (negative = lower), or a [low, high] range."""

    metric: str
    ours: SchemeName
    paper: dict[SchemeName, ClaimValue]
    source: str = ""


class Scenario(Strict):
    name: Name
    description: str = ""
    seed: Annotated[int, Field(ge=0)] = 1
    duration_s: Annotated[float, Field(gt=0, le=600)]
    chip: Literal["tofino", "tofino2"] = "tofino"
    # Shared buffer per egress port, in packets of the largest flow's size.
    buffer_packets: Annotated[int, Field(ge=1)] = 200
    link: LinkDefaults = LinkDefaults()
    hosts: Annotated[list[Name], Field(min_length=2)]
    switches: Annotated[list[Name], Field(min_length=1)]
    links: Annotated[list[Link], Field(min_length=1)]
    flows: Annotated[list[Flow], Field(min_length=1)]
    schemes: Schemes
    # Runs every scheme once per rate, every link set to it (seed 001's FCT sweep).
    link_rates: list[Rate] = []
    monitor: list[Monitor] = []
    # Throughput is binned at this interval; the first and last `trim` of the
    # run are left out of steady-state figures (seed 000 does the same).
    bin_s: Annotated[float, Field(gt=0)] = 1.0
    trim: Annotated[float, Field(ge=0, lt=0.5)] = 0.1
    claims: list[Claim] = []

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        _check_references(self)
        return self


def _check_references(s: Scenario) -> None:
    nodes: dict[str, str] = {}
    for kind, names in (("hosts", s.hosts), ("switches", s.switches)):
        for i, n in enumerate(names):
            if n in nodes:
                raise ValueError(f"{kind}[{i}]: '{n}' is already a node name")
            nodes[n] = kind
    pairs: set[frozenset[str]] = set()
    host_links: dict[str, int] = {}
    for i, link in enumerate(s.links):
        for end in ("a", "b"):
            n = getattr(link, end)
            if n not in nodes:
                raise ValueError(f"links[{i}].{end}: no host or switch '{n}'")
            if nodes[n] == "hosts":
                host_links[n] = host_links.get(n, 0) + 1
                if host_links[n] > 1:
                    raise ValueError(f"links[{i}].{end}: host '{n}' has a second link")
        if link.a == link.b:
            raise ValueError(f"links[{i}].b: a link joins two different nodes")
        if nodes[link.a] == nodes[link.b] == "hosts":
            raise ValueError(f"links[{i}].b: hosts connect to switches, not to each other")
        pair = frozenset((link.a, link.b))
        if pair in pairs:
            raise ValueError(f"links[{i}]: '{link.a}' and '{link.b}' are already linked")
        pairs.add(pair)
    for h in s.hosts:
        if h not in host_links:
            raise ValueError(f"hosts: '{h}' has no link")
    flow_names: set[str] = set()
    for i, f in enumerate(s.flows):
        for end in ("src", "dst"):
            n = getattr(f, end)
            if nodes.get(n) != "hosts":
                raise ValueError(f"flows[{i}].{end}: no host '{n}'")
        if f.src == f.dst:
            raise ValueError(f"flows[{i}].dst: a flow needs two different hosts")
        if f.name in flow_names:
            raise ValueError(f"flows[{i}].name: '{f.name}' repeats")
        flow_names.add(f.name)
        if f.stop_s is not None and f.stop_s <= f.start_s:
            raise ValueError(f"flows[{i}].stop_s: must be after start_s")
        if f.start_s >= s.duration_s:
            raise ValueError(f"flows[{i}].start_s: at or after the end of the run")
    for i, m in enumerate(s.monitor):
        if nodes.get(m.switch) != "switches":
            raise ValueError(f"monitor[{i}].switch: no switch '{m.switch}'")
        if frozenset((m.switch, m.toward)) not in pairs:
            raise ValueError(f"monitor[{i}].toward: '{m.switch}' has no link to '{m.toward}'")
    enabled = s.schemes.enabled()
    if not enabled:
        raise ValueError("schemes: name at least one scheme")
    for i, c in enumerate(s.claims):
        for scheme in (c.ours, *c.paper):
            if scheme not in enabled:
                raise ValueError(f"claims[{i}]: scheme '{scheme}' is not in schemes")


def _field_path(loc: tuple[object, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def parse_scenario(raw: object, source: str = "") -> Scenario:
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        path = _field_path(tuple(err["loc"]))
        # Cross-reference errors carry their own field path: "flows[2].dst: ..."
        if not path and ": " in msg:
            path, msg = msg.split(": ", 1)
        raise ScenarioError(source, path or "scenario", msg) from None


def load_scenario(ref: str | Path) -> Scenario:
    """A path to a YAML file, or the name of a bundled scenario."""
    path = Path(ref)
    if not path.exists() and not str(ref).endswith((".yaml", ".yml")):
        path = SCENARIO_DIR / f"{ref}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml")))
        raise ScenarioError(str(ref), "scenario", f"no such file or bundled scenario ({known})")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ScenarioError(str(path), "scenario", f"not valid YAML: {exc}") from None
    return parse_scenario(raw, str(path))


def bundled_scenarios() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml"))
