# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""deploy/grafana/: the dashboard and alert rules name only metrics the
daemon exports, with every program running on the model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families
from test_service import Clock, recording_factory, write_deploy

from bfrt_controller.metrics import config_sha, registry_for
from bfrt_controller.service import Daemon
from tofcc_common.registry import PROGRAMS, get

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
METRIC = re.compile(r"\btofcc_[a-z0-9_]+")


def exported(tmp_path: Path) -> tuple[set[str], str]:
    """Every series name (and family name) the daemon's /metrics has with one
    switch per program on the model, each on its default config."""
    from prometheus_client.exposition import generate_latest

    targets: list[dict[str, Any]] = [
        {"name": f"sw-{p}", "target": "model", "program": p} for p in PROGRAMS
    ]
    # P4QCN with PFC on, so its watchdog's series exist too.
    p4qcn = yaml.safe_load(get("p4qcn").default_config.read_text())
    # The lossless class: DSCP 26 on queue 1 at iCoS 3, paused on CoS 3.
    p4qcn["traffic_classes"] = [{"dscp": 26, "queue": 1, "icos": 3}]
    p4qcn["pfc"] = {
        "cos": 3,
        "icos": [3],
        "queues": [1],
        "ports": [4, 5],
        "xoff_cells": 182,
        "headroom_cells": 52,
    }
    next(t for t in targets if t["program"] == "p4qcn")["config"] = p4qcn
    d = Daemon(write_deploy(tmp_path / "d.yaml", *targets), recording_factory({}), Clock())
    d.step()
    text = generate_latest(registry_for(d)).decode()
    names: set[str] = set()
    for fam in text_string_to_metric_families(text):
        # A family the endpoint declares (HELP/TYPE) but holds no sample of
        # yet (the model has no pause counters) is still exported.
        names.add(fam.name + ("_total" if fam.type == "counter" else ""))
        names.add(fam.name)
        names.update(s.name for s in fam.samples)
    return names, text


def exprs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k in ("expr", "query") and isinstance(v, str)] + [
            e for v in node.values() for e in exprs(v)
        ]
    if isinstance(node, list):
        return [e for v in node for e in exprs(v)]
    return []


def test_every_metric_the_dashboard_and_alerts_use_is_exported(tmp_path: Path) -> None:
    dashboard = json.loads((GRAFANA / "tofcc-dashboard.json").read_text())
    rules = yaml.safe_load((GRAFANA / "tofcc-alerts.yaml").read_text())
    alert_exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    alerts = {r["alert"] for g in rules["groups"] for r in g["rules"]}
    assert {
        "TofccSwitchUnreachable",
        "TofccWriteFailures",
        "TofccCycleOverInterval",
        "TofccPfcStorm",
    } <= alerts
    used = {m for e in [*exprs(dashboard), *alert_exprs] for m in METRIC.findall(e)}
    names, _ = exported(tmp_path)
    assert used - names == set()
    # Every program has its own series on the dashboard.
    for needed in (
        "tofcc_class_ecn_threshold_bytes",
        "tofcc_bfcc_signalled_degree",
        "tofcc_spie_drop_probability_ratio",
        "tofcc_p4qcn_feedback_messages_total",
        "tofcc_pfc_storm",
        "tofcc_dadctcp_ecn_threshold_bytes",
        "tofcc_aqm_drops_total",
        "tofcc_target_info",
    ):
        assert needed in used


def test_every_program_exports_its_own_series_and_target_info(tmp_path: Path) -> None:
    _, text = exported(tmp_path)
    for series in (
        "tofcc_spie_drop_probability_ratio",
        "tofcc_spie_large_flow_drops_total",
        "tofcc_spie_random_drops_total",
        "tofcc_p4qcn_feedback_messages_total",
        "tofcc_pfc_storm",
        "tofcc_dadctcp_ecn_threshold_bytes",
        "tofcc_dadctcp_ce_marked_total",
        "tofcc_aqm_drops_total",
        "tofcc_aqm_ce_marks_total",
        "tofcc_cycle_interval_seconds",
    ):
        assert re.search(rf"^{series}\{{", text, re.M), series
    for p in PROGRAMS:
        assert re.search(
            r'^tofcc_target_info\{chip="tofino",config_sha="[0-9a-f]{12}",'
            rf'program="{p}",switch="sw-{p}"\}} 1\.0$',
            text,
            re.M,
        ), p


def test_config_sha_follows_the_config() -> None:
    assert config_sha({"a": 1}) == config_sha({"a": 1}) != config_sha({"a": 2})
