# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""sync.py and an app's static tables (PMQECN's drain tables: thousands of
entries that no live value moves): a one-shot command reads a sample of
them, not every entry, and still notices a switch that lost one."""

from __future__ import annotations

from collections.abc import Mapping

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.pmqecn import names as n
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import parse_config
from bfrt_controller.switch import EntryState
from bfrt_controller.sync import sync_with_switch
from bfrt_controller.validation import load_yaml
from hw_profiles import load_profile
from models.switch.core import Match


class CountingSwitch(ModelSwitch):
    def __init__(self) -> None:
        super().__init__("pmqecn", load_profile("tofino"))
        self.reads_by_table: dict[str, int] = {}

    def read_entry(
        self, table: str, key: Mapping[str, Match], priority: int = 0
    ) -> EntryState | None:
        self.reads_by_table[table] = self.reads_by_table.get(table, 0) + 1
        return super().read_entry(table, key, priority)


def _app() -> PmqecnApp:
    cfg = parse_config(load_yaml("bfrt_controller/defaults/pmqecn.yaml"))
    app = PmqecnApp(CountingSwitch(), cfg)
    app.push_all()
    return app


def test_static_tables_are_sampled_not_read_whole() -> None:
    app = _app()
    sw = app.switch
    assert isinstance(sw, CountingSwitch)
    static = app.static_tables()
    assert static == {n.VQ_LOG_ELAPSED, n.VQ_EXP_DRAIN}
    assert sum(1 for w in app.intended_writes() if getattr(w, "table", None) in static) > 8000
    report = sync_with_switch(app)
    assert report.missing == 0 and report.pushed == 0
    assert all(sw.reads_by_table.get(t, 0) <= 2 for t in static), sw.reads_by_table
    # Every entry that can carry a live value was read.
    assert sw.reads_by_table[n.ECN_THRESHOLD] >= len(app.config.classes)
    assert not any(getattr(w, "table", None) in static for w in app.dynamic_writes())


def test_a_switch_that_lost_a_static_table_gets_everything_again() -> None:
    app = _app()
    sw = app.switch
    assert isinstance(sw, CountingSwitch)
    sw.model.table(n.VQ_EXP_DRAIN).clear()
    report = sync_with_switch(app)
    assert report.missing >= 1
    assert report.pushed == len(app.intended_writes())
    assert len(sw.model.table(n.VQ_EXP_DRAIN).entries) > 5000
