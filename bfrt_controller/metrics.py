# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Prometheus exposition of a running tofcc daemon.

Values are what each switch's last cycle read back (its `status()` rows and
the daemon's own counts), so a scrape never touches a switch: a slow or dead
switch cannot stall the endpoint. Names follow Prometheus conventions: a
`tofcc_` prefix, base units as suffixes (`_bytes`, `_seconds`, `_ratio`;
`_packets_per_second` for a measured rate), `_total` on counters, one
`switch` label naming the fleet's target. A depth or threshold the chip
counts in cells is exported in bytes (cells x the chip's cell size: 80 B on
Tofino, 176 B on Tofino2), so two chips' series compare. Ports are labelled
as the operator names them (port_names.py): `port` the front-panel name
where the deployment's board knows it (else the device port), `dev_port`
the device port, on every series that has a port. Counters read from the
data plane restart from zero when their switch does, which `rate()` treats
as a counter reset.

Renamed in issue 52, no old name kept (deploy/README.md, "Metrics"):
class_ecn_threshold_cells -> class_ecn_threshold_bytes, dadctcp_k1_cells ->
dadctcp_k1_bytes, dadctcp_ecn_threshold_packets -> dadctcp_ecn_threshold_bytes,
bfcc_congestion_threshold_packets -> bfcc_congestion_threshold_bytes,
spie_drop_probability -> spie_drop_probability_ratio.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .audit import config_sha
from .errors import ConfigError
from .logs import log_event
from .port_names import name_ports, namer
from .ports import PORT_STATUS_SECTION
from .scrape_server import Limits, ScrapeServer
from .web_config import BasicAuth, WebConfig

if TYPE_CHECKING:
    from .fleet import Target
    from .service import Daemon

PREFIX = "tofcc_"
log = logging.getLogger("tofcc.metrics")


@dataclass(frozen=True)
class RowMetric:
    """A number of each status row of one section, as one metric family."""

    section: str
    key: str  # the row's field
    name: str  # without PREFIX; counters without `_total` (the client adds it)
    kind: str  # "counter" | "gauge"
    doc: str
    labels: tuple[tuple[str, str], ...]  # (label, row field)
    scale: float = 1.0
    # The value of a row whose field is None; None: no sample.
    absent: float | None = None
    # The field counts the chip's cells: exported x its cell size, in bytes.
    per_cell: bool = False


_CLASS = (("class", "name"), ("queue", "queue"))
_PORT = (("port", "port"), ("dev_port", "dev_port"))
_QUEUE = (*_PORT, ("queue", "queue"))
_COS = (*_PORT, ("cos", "cos"))
ROW_METRICS: tuple[RowMetric, ...] = (
    # PMQECN, per class (the paper's symbols in the help text).
    RowMetric("classes", "packets", "class_packets", "counter", "Packets classified.", _CLASS),
    RowMetric("classes", "bytes", "class_bytes", "counter", "Bytes classified.", _CLASS),
    RowMetric(
        "classes",
        "rate_pps",
        "class_arrival_rate_packets_per_second",
        "gauge",
        "lambda_i: the class's measured arrival rate.",
        _CLASS,
    ),
    RowMetric(
        "classes",
        "target_rate_pps",
        "class_target_rate_packets_per_second",
        "gauge",
        "lambda_i*: the rate the optimiser tells the class's senders to use.",
        _CLASS,
    ),
    RowMetric(
        "classes",
        "sojourn_ns",
        "class_sojourn_seconds",
        "gauge",
        "W_i: the class's mean queue sojourn over the last interval.",
        _CLASS,
        1e-9,
    ),
    RowMetric(
        "classes",
        "threshold_cells",
        "class_ecn_threshold_bytes",
        "gauge",
        "K_i: the class's ECN marking threshold (threshold_cells x the chip's cell size).",
        _CLASS,
        per_cell=True,
    ),
    RowMetric(
        "classes", "weight", "class_weight", "gauge", "The class's scheduling weight.", _CLASS
    ),
    RowMetric(
        "classes",
        "feedback_copies",
        "class_feedback_copies",
        "counter",
        "Feedback packets rebuilt in egress from the class's mirror copies.",
        _CLASS,
    ),
    RowMetric(
        "classes",
        "feedback_lost",
        "class_feedback_copies_lost",
        "gauge",
        "Feedback copies the class's ingress gates made that never reached egress (mirror"
        " buffer or session queue drops), since the switch started.",
        _CLASS,
    ),
    # Shared port guards (both programs).
    RowMetric(
        "ports",
        "forged_drops",
        "port_untrusted_feedback_drops",
        "counter",
        "Feedback packets from an untrusted port, dropped.",
        _PORT,
    ),
    RowMetric(
        "ports",
        "spoofed_drops",
        "port_spoofed_source_drops",
        "counter",
        "Packets whose source address the port is not bound to, dropped.",
        _PORT,
    ),
    RowMetric(
        "ports", "fake_drops", "port_fake_drops", "counter", "BFCC fake packets dropped.", _PORT
    ),
    # BFCC.
    RowMetric(
        "congestion points",
        "signalled_degree",
        "bfcc_signalled_degree",
        "gauge",
        "The congestion degree the congestion point signals upstream.",
        _PORT,
        absent=0.0,  # nothing signalled (register clear): degree 0
    ),
    RowMetric(
        "congestion points",
        "threshold_cells",
        "bfcc_congestion_threshold_bytes",
        "gauge",
        "The congestion point's queue threshold as the switch compares it "
        "(threshold_packets in cells, x the chip's cell size).",
        _PORT,
        per_cell=True,
    ),
    RowMetric(
        "reaction points",
        "slowed_degree",
        "bfcc_slowed_degree",
        "gauge",
        "The congestion degree the reaction point is slowing its group for.",
        _PORT,
        absent=0.0,  # nothing signalled (register clear): degree 0
    ),
    RowMetric(
        "reaction points",
        "backpressure_received",
        "bfcc_backpressure_messages",
        "counter",
        "Backpressure messages received.",
        _PORT,
    ),
    RowMetric(
        "reaction points",
        "flagged_departures",
        "bfcc_flagged_departures",
        "counter",
        "Departures flagged for slowing.",
        _PORT,
    ),
    RowMetric(
        "reaction points", "fakes_sent", "bfcc_fakes_sent", "counter", "Fake packets sent.", _PORT
    ),
    # P4QCN's PFC watchdog (pfc_watchdog.py), per port.
    RowMetric(
        "pfc watchdog",
        "rx_paused_us",
        "pfc_rx_paused_seconds",
        "counter",
        "Time the neighbour held the lossless CoS paused ($ReceivePri<cos>Pause1USCount).",
        _COS,
        1e-6,
    ),
    RowMetric(
        "pfc watchdog",
        "storm",
        "pfc_storm",
        "gauge",
        "1 while the watchdog sees the port in a PFC pause storm.",
        _COS,
    ),
    RowMetric(
        "pfc watchdog",
        "storms",
        "pfc_storms",
        "counter",
        "PFC pause storms detected.",
        _COS,
    ),
    # The TM's own counters (buffer_view.py): queues the program's config
    # names, its PFC pool and PPGs; each port's pause time per priority.
    RowMetric(
        "buffer queues",
        "depth_bytes",
        "queue_depth_bytes",
        "gauge",
        "The queue's depth in the traffic manager (tm.counter.queue usage_cells).",
        _QUEUE,
    ),
    RowMetric(
        "buffer queues",
        "watermark_bytes",
        "queue_watermark_bytes",
        "gauge",
        "The queue's high-water mark since the last clear (tm.counter.queue watermark_cells).",
        _QUEUE,
    ),
    RowMetric(
        "buffer queues",
        "drops",
        "queue_drops",
        "counter",
        "Packets the traffic manager dropped at the queue for want of buffer, not the "
        "program's AQM drops (tm.counter.queue drop_count_packets).",
        _QUEUE,
    ),
    RowMetric(
        "buffer ppgs",
        "depth_bytes",
        "ppg_usage_bytes",
        "gauge",
        "The PPG's buffer use (tm.counter.ppg usages).",
        (*_PORT, ("ppg", "ppg")),
    ),
    RowMetric(
        "buffer ppgs",
        "watermark_bytes",
        "ppg_watermark_bytes",
        "gauge",
        "The PPG's high-water mark since the last clear.",
        (*_PORT, ("ppg", "ppg")),
    ),
    RowMetric(
        "buffer ppgs",
        "drops",
        "ppg_drops",
        "counter",
        "Packets dropped at the PPG (tm.counter.ppg drop_count_packets).",
        (*_PORT, ("ppg", "ppg")),
    ),
    RowMetric(
        "buffer pools",
        "depth_bytes",
        "pool_usage_bytes",
        "gauge",
        "The application pool's use (tm.counter.pool usage_cells).",
        (("pool", "pool"),),
    ),
    RowMetric(
        "buffer pools",
        "watermark_bytes",
        "pool_watermark_bytes",
        "gauge",
        "The application pool's high-water mark since the last clear.",
        (("pool", "pool"),),
    ),
    RowMetric(
        "pfc pauses",
        "rx_pause_us",
        "port_pfc_rx_pause_seconds",
        "counter",
        "Time the neighbour held the priority paused ($ReceivePri<cos>Pause1USCount).",
        _COS,
        1e-6,
    ),
    RowMetric(
        "pfc pauses",
        "tx_pause_us",
        "port_pfc_tx_pause_seconds",
        "counter",
        "Time this switch held the neighbour's priority paused ($TransmitPri<cos>Pause1USCount).",
        _COS,
        1e-6,
    ),
    # S-PIE / PIE, per port.
    RowMetric(
        "ports (S-PIE)",
        "p",
        "spie_drop_probability_ratio",
        "gauge",
        "PIE's drop probability p on the port (0..1).",
        _PORT,
    ),
    RowMetric(
        "ports (S-PIE)",
        "large_drops",
        "spie_large_flow_drops",
        "counter",
        "Packets of flows over their share (the sketch's test) dropped.",
        _PORT,
    ),
    RowMetric(
        "ports (S-PIE)",
        "random_drops",
        "spie_random_drops",
        "counter",
        "Packets dropped by PIE's random early drop.",
        _PORT,
    ),
    RowMetric(
        "ports (S-PIE)",
        "pi_updates",
        "spie_pi_updates",
        "counter",
        "PIE's PI steps (one per T_update).",
        _PORT,
    ),
    # P4QCN congestion points, per queue (its PFC is the watchdog's, above).
    RowMetric(
        "congestion points",
        "feedback_sent",
        "p4qcn_feedback_messages",
        "counter",
        "QCN feedback messages sent to reaction points.",
        _QUEUE,
    ),
    RowMetric(
        "congestion points",
        "feedback_suppressed",
        "p4qcn_feedback_suppressed",
        "counter",
        "Feedback the congestion point chose not to send.",
        _QUEUE,
    ),
    RowMetric(
        "congestion points",
        "ce_marked",
        "p4qcn_ce_marked",
        "counter",
        "Packets CE-marked at the congestion point.",
        _QUEUE,
    ),
    # DA-DCTCP, per queue (section "queues" also holds AQM's rows: other keys).
    RowMetric(
        "queues",
        "k_cells",
        "dadctcp_ecn_threshold_bytes",
        "gauge",
        "K: the queue's marking threshold (Algorithm 2 moves it; k_packets of packet_bytes, "
        "in cells, x the chip's cell size).",
        _QUEUE,
        per_cell=True,
    ),
    RowMetric(
        "queues",
        "k1_cells",
        "dadctcp_k1_bytes",
        "gauge",
        "K1: the queue depth from which a growing queue (the slope) marks.",
        _QUEUE,
        per_cell=True,
    ),
    RowMetric(
        "queues",
        "ce_marked",
        "dadctcp_ce_marked",
        "counter",
        "Packets CE-marked (slope marks between K1 and K2, and all above K2).",
        _QUEUE,
    ),
    RowMetric(
        "queues",
        "not_ect_dropped",
        "dadctcp_not_ect_drops",
        "counter",
        "Packets that were not ECN-capable and were dropped instead of marked.",
        _QUEUE,
    ),
    # The AQM family, per queue (the mode label names its mechanism).
    RowMetric(
        "queues",
        "drops",
        "aqm_drops",
        "counter",
        "Packets the queue's AQM (its mode: RED, CoDel, PIE, DCTCP, DA-DCTCP, DualPI2) dropped.",
        (*_QUEUE, ("mode", "mode")),
    ),
    RowMetric(
        "queues",
        "marks",
        "aqm_ce_marks",
        "counter",
        "Packets the queue's AQM (its mode) CE-marked.",
        (*_QUEUE, ("mode", "mode")),
    ),
    # Front-panel ports (the $PORT table).
    RowMetric(
        PORT_STATUS_SECTION,
        "up",
        "front_panel_port_up",
        "gauge",
        "1 when the port's link is up ($PORT_UP).",
        (("port", "name"), ("dev_port", "dev_port")),
    ),
)

StatFn = Callable[["Target"], float]
TARGET_METRICS: tuple[tuple[str, str, str, StatFn], ...] = (
    ("switch_connected", "gauge", "1 while the switch's session is up.", lambda t: t.connected),
    ("cycles", "counter", "Control cycles completed.", lambda t: t.stats.cycles),
    ("cycle_errors", "counter", "Cycles that failed.", lambda t: t.stats.cycle_errors),
    (
        "write_failures",
        "counter",
        "Batches the switch refused (each rolled back).",
        lambda t: t.stats.write_failures,
    ),
    ("reconnects", "counter", "Sessions re-established.", lambda t: t.reconnects),
    (
        "switch_restarts_detected",
        "counter",
        "Times the switch had lost the program's state and was re-pushed.",
        lambda t: t.restarts_detected,
    ),
    (
        "connect_failures",
        "counter",
        "Attempts to reach the switch that failed.",
        lambda t: t.stats.connect_failures,
    ),
    ("changes_written", "counter", "Values the cycles changed.", lambda t: t.stats.changes_written),
    (
        "cycle_duration_seconds",
        "gauge",
        "How long the last cycle took, read-back included.",
        lambda t: t.stats.last_cycle_s,
    ),
    (
        "cycle_interval_seconds",
        "gauge",
        "The cycle period the switch is run at (alert when a cycle takes longer).",
        lambda t: t.resolved.interval_s,
    ),
)


def _value(v: object) -> float | None:
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, int | float):
        return float(v)
    return None


class DaemonCollector(Collector):
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    def collect(self) -> Iterator[Metric]:
        d = self.daemon
        with d.lock:
            targets = list(d.targets.values())
            # Ports as the operator names them (port_names.py), on every series.
            rows = {
                t.name: name_ports(t.rows, namer(t.app.board, t.app.dev_ports)) for t in targets
            }
            cell_bytes = {t.name: t.resolved.profile.cell_bytes for t in targets}
            ok, failed, metrics_kept = d.reloads_ok, d.reloads_failed, d.reloads_metrics_kept
        info = GaugeMetricFamily(
            PREFIX + "target_info",
            "1 per switch: the program it runs, its chip and the sha256 (12 hex) of its config.",
            labels=["switch", "program", "chip", "config_sha"],
        )
        for t in targets:
            spec, chip, cfg = t.resolved.spec, t.resolved.profile.chip, t.resolved.config
            info.add_metric([t.name, spec.program, chip, config_sha(cfg)], 1.0)
        yield info
        for name, kind, doc, fn in TARGET_METRICS:
            fam = _family(name, kind, doc, ["switch"])
            for t in targets:
                fam.add_metric([t.name], float(fn(t)))
            yield fam
        for m in ROW_METRICS:
            labels = ["switch", *(label for label, _ in m.labels)]
            fam = _family(m.name, m.kind, m.doc, labels)
            for switch, trows in rows.items():
                scale = m.scale * (cell_bytes[switch] if m.per_cell else 1)
                for r in trows:
                    if r.get("section") != m.section or m.key not in r:
                        continue
                    v = _value(r[m.key])
                    if v is None and r[m.key] is None:
                        v = m.absent
                    if v is None:
                        continue
                    fam.add_metric([switch, *(str(r.get(k)) for _, k in m.labels)], v * scale)
            yield fam
        reloads = CounterMetricFamily(
            PREFIX + "config_reloads", "Config reloads, by result.", labels=["result"]
        )
        reloads.add_metric(["ok"], ok)
        reloads.add_metric(["refused"], failed)
        # Applied to the switches, but the changed `metrics:` section was not.
        reloads.add_metric(["metrics_not_applied"], metrics_kept)
        yield reloads


def _family(
    name: str, kind: str, doc: str, labels: list[str]
) -> CounterMetricFamily | GaugeMetricFamily:
    if kind == "counter":
        return CounterMetricFamily(PREFIX + name, doc, labels=labels)
    return GaugeMetricFamily(PREFIX + name, doc, labels=labels)


def registry_for(daemon: Daemon) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DaemonCollector(daemon))
    return registry


# A scrape is one small request: one not whole (request line, headers and
# body) this long after its connection was accepted is dropped; the same
# bound on writing the response to a client that does not read it.
REQUEST_TIMEOUT_S = 5.0
# Threads that build responses. A slow client holds none: requests are read
# and responses written by the server's one I/O thread (scrape_server.py).
WORKERS = 4
LISTEN_BACKLOG = 256
# Requests still arriving from one client address (an IPv6 /64): one more
# closes that address's oldest, so its slow clients cannot lock out a scrape.
MAX_PENDING_PER_CLIENT = 4
# Open connections in all, below the process's file descriptor limit.
MAX_CONNECTIONS = 256


def _warn_exposed(address: str, web: WebConfig | None) -> None:
    """What a scraper on the network could do: read without auth, or see a
    password go by in the clear."""
    if web is not None and web.users and web.tls is None:
        log_event(
            log,
            "metrics-basic-auth-in-clear",
            logging.WARNING,
            web_config=web.source,
            why="basic_auth_users without tls_server_config: passwords cross the network in clear",
        )
    checked = web is not None and (
        bool(web.users) or (web.tls is not None and web.tls.verify_mode == ssl.CERT_REQUIRED)
    )
    if not checked and not ipaddress.ip_address(address).is_loopback:
        log_event(
            log,
            "metrics-unauthenticated",
            logging.WARNING,
            address=address,
            why="served beyond this host to any client: give tofcc run --web-config "
            "with basic_auth_users or client certificates",
        )


def serve(
    daemon: Daemon,
    address: str,
    port: int,
    field: str = "metrics",
    web: WebConfig | None = None,
) -> ScrapeServer:
    """Serve /metrics on a thread; port 0 takes a free one (server.server_port).
    `shutdown()` then `server_close()` stop it, closing every connection.
    `web` (--web-config): TLS, and basic auth in front of the app.

    A bind that fails (the port in use, an address not on this machine) is a
    ConfigError naming `field`: exit 2, not a traceback."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    limits = Limits(
        request_timeout_s=REQUEST_TIMEOUT_S,
        workers=WORKERS,
        backlog=LISTEN_BACKLOG,
        pending_per_client=MAX_PENDING_PER_CLIENT,
        connections=MAX_CONNECTIONS,
    )
    _warn_exposed(address, web)
    app = make_wsgi_app(registry_for(daemon))
    if web is not None and web.users:
        app = BasicAuth(app, web.users)
    tls = web.tls if web is not None else None
    try:
        server = ScrapeServer((address, port), family, app, limits, tls)
    except OSError as exc:
        raise ConfigError(
            field, f"cannot serve metrics on {address}:{port}: {exc.strerror or exc}"
        ) from None
    thread = threading.Thread(target=server.serve_forever, name="tofcc-metrics", daemon=True)
    thread.start()
    return server


def start(
    daemon: Daemon, deploy_file: Path, port_option: int | None, web: WebConfig | None
) -> ScrapeServer:
    """`tofcc run`'s endpoint: the deployment's `metrics:` (--metrics-port
    overriding its port), with `web` (--web-config) TLS and auth."""
    spec = daemon.config.metrics
    if spec is None and port_option is None:
        raise ConfigError(
            "--web-config", f"{deploy_file} serves no /metrics: add `metrics:` or --metrics-port"
        )
    address = spec.address if spec is not None else "127.0.0.1"
    port = port_option if port_option is not None else spec.port if spec else 0
    field = "--metrics-port" if port_option is not None else f"{deploy_file}: metrics"
    server = serve(daemon, address, port, field, web)
    scheme = web.scheme if web is not None else "http"
    host = f"[{address}]" if ":" in address else address
    log_event(log, "metrics", url=f"{scheme}://{host}:{server.server_port}/metrics")
    return server
