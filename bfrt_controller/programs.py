"""Every mechanism the controller can run, found by its program name.

`tofcc --program NAME` looks the program up here: its config schema, its
embedded default config, its app, and how `status` shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from .common import PORT_GUARD_COLUMNS, PORTS_SECTION
from .errors import ConfigError
from .switch import Switch
from .validation import load_yaml


class App(Protocol):
    """What the CLI and the supervisor need of a mechanism's app."""

    switch: Switch
    config: Any

    def push_all(self) -> None: ...

    def intended_writes(self) -> list[Any]: ...

    def dynamic_writes(self) -> list[Any]: ...

    def static_tables(self) -> frozenset[str]: ...

    def status(self) -> list[dict[str, object]]: ...

    def live_state(self) -> dict[str, Any]:
        """Run-time changes on top of the config (for the model target's state file)."""
        ...

    def restore_live(self, state: dict[str, Any], source: str = "live") -> None:
        """Take the saved run-time changes; ConfigError naming `source`'s field if corrupt."""
        ...


@dataclass(frozen=True)
class Program:
    name: str
    default_config: Path
    parse_config: Callable[[object, str], BaseModel]
    make_app: Callable[[Switch, Any], App]
    status_columns: tuple[tuple[str, str], ...]  # (heading, row key)
    # Programs whose status mixes kinds of rows: one table per section, for
    # the rows whose "section" is its title. Empty: one table of status_columns.
    status_sections: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    def load_config(self, path: Path) -> Any:
        return self.parse_config(load_yaml(path), str(path))


def _pmqecn() -> Program:
    from .pmqecn.app import CLASSES, PmqecnApp
    from .pmqecn.config import DEFAULT_CONFIG, parse_config

    return Program(
        "pmqecn",
        DEFAULT_CONFIG,
        parse_config,
        PmqecnApp,
        (),
        (
            (
                CLASSES,
                (
                    ("class", "name"),
                    ("id", "id"),
                    ("qos", "qos"),
                    ("queue", "queue"),
                    ("K cells", "threshold_cells"),
                    ("weight", "weight"),
                    ("lambda pps", "rate_pps"),
                    ("lambda* pps", "target_rate_pps"),
                    ("W ns", "sojourn_ns"),
                    ("packets", "packets"),
                ),
            ),
            (PORTS_SECTION, PORT_GUARD_COLUMNS),
        ),
    )


def _bfcc() -> Program:
    from .bfcc import app
    from .bfcc.config import DEFAULT_CONFIG, parse_config

    return Program(
        "bfcc",
        DEFAULT_CONFIG,
        parse_config,
        app.BfccApp,
        (),
        (
            (
                app.CONGESTION_POINTS,
                (
                    ("port", "port"),
                    ("cp", "cp_id"),
                    ("Mb/s", "rate_mbps"),
                    ("K packets", "threshold_packets"),
                    ("K cells", "threshold_cells"),
                    ("T_min ns", "t_min_ns"),
                    ("T_max ns", "t_max_ns"),
                    ("saturated", "saturated"),
                    ("window packets", "window_packets"),
                    ("refresh ns", "refresh_ns"),
                    ("signalled group", "signalled_group"),
                    ("degree", "signalled_degree"),
                ),
            ),
            (
                app.REACTION_POINTS,
                (
                    ("port", "port"),
                    ("high qid", "high_qid"),
                    ("low qid", "low_qid"),
                    ("expiry ns", "expiry_ns"),
                    ("named group only", "named_group_only"),
                    ("slowed group", "slowed_group"),
                    ("degree", "slowed_degree"),
                    ("bp received", "backpressure_received"),
                    ("flagged", "flagged_departures"),
                    ("fakes", "fakes_sent"),
                    ("shaped kb/s", "shaped_kbps"),
                ),
            ),
            (
                app.RATE_THRESHOLDS,
                (
                    ("degree", "degree"),
                    ("RT packets", "rt_packets"),
                    ("recirc session", "recirculation_session"),
                    ("recirc port", "recirculation_port"),
                ),
            ),
            (
                app.GROUPS,
                (
                    ("group", "group"),
                    ("senders", "senders"),
                    ("upstream port", "upstream_port"),
                    ("session", "mirror_session"),
                    ("notify port", "notify_port"),
                ),
            ),
            (app.PORTS, (*PORT_GUARD_COLUMNS, ("fake drops", "fake_drops"))),
        ),
    )


def _p4qcn() -> Program:
    from .p4qcn import app
    from .p4qcn.config import DEFAULT_CONFIG, parse_config
    from .pfc_watchdog import WATCHDOG_SECTION

    return Program(
        "p4qcn",
        DEFAULT_CONFIG,
        parse_config,
        app.P4qcnApp,
        (),
        (
            (
                app.QUEUES,
                (
                    ("port", "port"),
                    ("queue", "queue"),
                    ("mode", "mode"),
                    ("Q_min cells", "q_min_cells"),
                    ("Q_max cells", "q_max_cells"),
                    ("N ticks", "interval_ticks"),
                    ("entries", "entries"),
                    ("chosen", "chosen"),
                    ("feedback", "feedback_sent"),
                    ("suppressed", "feedback_suppressed"),
                    ("CE marked", "ce_marked"),
                ),
            ),
            (
                app.CLASSES,
                (
                    ("DSCP", "dscp"),
                    ("queue", "queue"),
                    ("iCoS", "icos"),
                    ("lossless", "lossless"),
                ),
            ),
            (PORTS_SECTION, PORT_GUARD_COLUMNS),
            (
                WATCHDOG_SECTION,
                (
                    ("port", "port"),
                    ("CoS", "cos"),
                    ("storm", "storm"),
                    ("storms", "storms"),
                    ("paused us", "rx_paused_us"),
                    ("honouring", "honouring"),
                ),
            ),
        ),
    )


def _dadctcp() -> Program:
    from .dadctcp import app
    from .dadctcp.config import DEFAULT_CONFIG, parse_config

    return Program(
        "dadctcp",
        DEFAULT_CONFIG,
        parse_config,
        app.DadctcpApp,
        (),
        (
            (
                app.QUEUES,
                (
                    ("port", "port"),
                    ("queue", "queue"),
                    ("mode", "mode"),
                    ("K packets", "k_packets"),
                    ("K_port packets", "k_port_packets"),
                    ("K1 cells", "k1_cells"),
                    ("K2 cells", "k2_cells"),
                    ("depth cells", "depth_cells"),
                    ("CE marked", "ce_marked"),
                    ("not-ECT drops", "not_ect_dropped"),
                ),
            ),
            (PORTS_SECTION, PORT_GUARD_COLUMNS),
        ),
    )


def _aqm() -> Program:
    from .aqm import app
    from .aqm.config import DEFAULT_CONFIG, parse_config

    return Program(
        "aqm",
        DEFAULT_CONFIG,
        parse_config,
        app.AqmApp,
        (),
        (
            (
                app.QUEUES,
                (
                    ("port", "port"),
                    ("queue", "queue"),
                    ("mode", "mode"),
                    ("ECN", "ecn"),
                    ("entries", "entries"),
                    ("drops", "drops"),
                    ("CE marks", "marks"),
                ),
            ),
            (PORTS_SECTION, PORT_GUARD_COLUMNS),
        ),
    )


def _spie() -> Program:
    from .spie import app
    from .spie.config import DEFAULT_CONFIG, parse_config

    return Program(
        "spie",
        DEFAULT_CONFIG,
        parse_config,
        app.SpieApp,
        (),
        (
            (
                app.PORTS + " (S-PIE)",
                (
                    ("port", "port"),
                    ("mode", "mode"),
                    ("entries", "entries"),
                    ("p", "p"),
                    ("PI steps", "pi_updates"),
                    ("large-flow drops", "large_drops"),
                    ("random drops", "random_drops"),
                ),
            ),
            (PORTS_SECTION, PORT_GUARD_COLUMNS),
        ),
    )


PROGRAMS: dict[str, Callable[[], Program]] = {
    "pmqecn": _pmqecn,
    "bfcc": _bfcc,
    "p4qcn": _p4qcn,
    "dadctcp": _dadctcp,
    "aqm": _aqm,
    "spie": _spie,
}


def get_program(name: str) -> Program:
    try:
        return PROGRAMS[name]()
    except KeyError:
        raise ConfigError(
            "--program", f"unknown program {name!r} (known: {', '.join(PROGRAMS)})"
        ) from None
