# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Changes an operator can take back (issue 52, Deliver 3): `save` writes the
running values (tuned ones included) as a config that diffs to nothing,
`checkpoint`/`rollback`, `apply --confirm-within` that reverts unless
`confirm` comes in time, and `diff` rows that name config fields."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import yaml

from bfrt_controller import confirm as pending
from bfrt_controller import snapshots
from bfrt_controller.backends.bfrt import BfrtSwitch
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.common import IPV4_LPM, K_DST_ADDR, lpm
from bfrt_controller.dadctcp import names as dn
from bfrt_controller.dadctcp.app import DadctcpApp
from bfrt_controller.dadctcp.config import DEFAULT_CONFIG as DADCTCP_DEFAULT
from bfrt_controller.dadctcp.config import parse_config as parse_dadctcp
from bfrt_controller.errors import ConfigError
from bfrt_controller.pmqecn.app import PmqecnApp
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG as PMQECN_DEFAULT
from bfrt_controller.pmqecn.config import parse_config as parse_pmqecn
from bfrt_controller.pmqecn.demo import FLOWS, inject_depth
from bfrt_controller.running import field_changes
from bfrt_controller.state import default_state_path, load_state, save_state
from bfrt_controller.switch import Write
from doubles import FakeBfrtGrpc
from doubles.cli_run import out_of
from hw_profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pmqecn-tm-dwrr.yaml"
Capsys = pytest.CaptureFixture[str]


@pytest.fixture(autouse=True)
def _own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TOFCC_PROGRAM", raising=False)
    monkeypatch.delenv("TOFCC_TARGET", raising=False)


def ok(capsys: Capsys, *args: str) -> str:
    code, out, err = out_of(capsys, *args)
    assert code == 0, out + err
    return out


def classes(capsys: Capsys, *args: str) -> dict[str, dict[str, object]]:
    rows = json.loads(ok(capsys, *args, "status", "--json"))
    return {str(r["name"]): r for r in rows if r.get("section") == "classes"}


def thresholds(capsys: Capsys, *args: str) -> dict[str, object]:
    return {name: r["threshold_cells"] for name, r in classes(capsys, *args).items()}


def edited(tmp_path: Path, name: str, old: str, new: str, source: Path = EXAMPLE) -> Path:
    text = source.read_text()
    assert old in text
    out = tmp_path / name
    out.write_text(text.replace(old, new, 1))
    return out


# ---- save ----------------------------------------------------------------------------


def optimised_pmqecn_state() -> dict[str, object]:
    """PMQECN's default config after one optimise cycle on the model with
    traffic, saved as `optimize --once` saves it (Context.save)."""
    cfg = parse_pmqecn(yaml.safe_load(PMQECN_DEFAULT.read_text()))
    sw = ModelSwitch("pmqecn", load_profile("tofino"))
    app = PmqecnApp(sw, cfg)
    app.push_all()
    app.sample(0.0)
    for name, count in (("voice", 30), ("video", 50), ("bulk", 35)):
        inject_depth(sw, 0, 4000)
        data = bytes(FLOWS[name].packet())
        for _ in range(count):
            sw.model.send(FLOWS[name].port, data)
    assert app.optimize_once(1e-4)
    save_state(
        default_state_path("pmqecn"),
        "pmqecn",
        cfg.model_dump(mode="json"),
        app.live_state(),
    )
    return app.live_state()


def test_save_after_the_optimiser_moved_thresholds_diffs_to_nothing(
    tmp_path: Path, capsys: Capsys
) -> None:
    live = optimised_pmqecn_state()
    default = {
        c.name: c.threshold_cells
        for c in parse_pmqecn(yaml.safe_load(PMQECN_DEFAULT.read_text())).classes
    }
    moved = thresholds(capsys)
    assert moved != default  # the optimiser moved them
    assert all(v["rate_pps"] > 0 for v in live.values())  # type: ignore[index]
    saved = tmp_path / "running.yaml"
    ok(capsys, "save", str(saved))
    assert out_of(capsys, "diff", "--config", str(saved), "--exit-code")[0] == 0
    # The file is a config like any other: apply takes it, and keeps what
    # the switch measured (no config field holds lambda_i).
    assert yaml.safe_load(saved.read_text())["classes"][0]["threshold_cells"] == moved["voice"]
    ok(capsys, "apply", str(saved))
    assert thresholds(capsys) == moved
    state = load_state(default_state_path("pmqecn"))
    assert state is not None and state["live"] == live


_STAMPS = itertools.count(1_000_000, 1_000_000)


def test_save_after_algorithm_2_moved_k_diffs_to_nothing(tmp_path: Path, capsys: Capsys) -> None:
    cfg = parse_dadctcp(yaml.safe_load(DADCTCP_DEFAULT.read_text()))
    app = DadctcpApp(ModelSwitch("dadctcp", load_profile("tofino")), cfg)
    app.push_all()
    model = app.switch.model  # type: ignore[attr-defined]
    stamp = next(_STAMPS)
    for q, depth in enumerate([60, 30, 0, 0]):
        model.register(dn.LAST_DEPTH).write(app.slot[(4, q)], depth * 19)
        if depth:
            model.register(dn.LAST_DEPARTURE).write(app.slot[(4, q)], stamp)
    assert app.reallocate_once()
    save_state(
        default_state_path("dadctcp"), "dadctcp", cfg.model_dump(mode="json"), app.live_state()
    )
    saved = tmp_path / "dadctcp.yaml"
    ok(capsys, "--program", "dadctcp", "save", str(saved))
    ks = [q["k_packets"] for q in yaml.safe_load(saved.read_text())["ports"][0]["queues"]]
    assert ks == [app.k_packets[(4, q)] for q in range(4)] and ks != [20, 20, 20, 20]
    assert out_of(capsys, "diff", "--config", str(saved), "--exit-code")[0] == 0
    assert out_of(capsys, "diff", "--config", str(DADCTCP_DEFAULT), "--exit-code")[0] == 1


@pytest.mark.parametrize(
    ("program", "change"),
    [
        ("bfcc", ("set", "threshold_packets=20", "t_min_us=70000")),
        ("p4qcn", ("set", "q_min_cells=150", "q_max_cells=300")),
        ("dadctcp", ("set", "mode=dctcp", "k_port_packets=60")),
        ("aqm", ("set", "max_p=0.1")),
        ("spie", ("set", "alpha_per_s=0.25", "columns=2048")),
    ],
)
def test_every_programs_run_time_settings_save_as_its_config(
    tmp_path: Path, capsys: Capsys, program: str, change: tuple[str, ...]
) -> None:
    ok(capsys, "--program", program, *change)
    saved = tmp_path / f"{program}.yaml"
    ok(capsys, "--program", program, "save", str(saved))
    assert out_of(capsys, "diff", "--config", str(saved), "--exit-code")[0] == 0
    default = ROOT / "bfrt_controller" / "defaults" / f"{program}.yaml"
    code, out, _ = out_of(capsys, "diff", "--config", str(default), "--json", "--exit-code")
    assert code == 1
    fields = json.loads(out)["model"]["fields"]
    assert fields and all(f["change"] == "change" for f in fields)


def test_save_of_a_deployment_writes_a_deployment_that_diffs_to_nothing(
    tmp_path: Path, capsys: Capsys
) -> None:
    d = tmp_path / "deploy"
    d.mkdir()
    shutil.copy(ROOT / "deploy" / "model.yaml", d / "model.yaml")
    shutil.copy(EXAMPLE, d / "pmqecn-tm-dwrr.yaml")
    deploy = d / "model.yaml"
    ok(capsys, "apply", str(deploy))
    ok(capsys, "--config", str(deploy), "set-threshold", "voice=31")
    saved = tmp_path / "saved-deploy.yaml"
    ok(capsys, "save", "--config", str(deploy), str(saved))
    doc = yaml.safe_load(saved.read_text())
    (target,) = doc["targets"]
    assert target["name"] == "model-pmqecn" and isinstance(target["config"], dict)
    assert target["config"]["classes"][0]["threshold_cells"] == 31
    assert out_of(capsys, "diff", "--config", str(saved), "--exit-code")[0] == 0
    assert out_of(capsys, "diff", "--config", str(deploy), "--exit-code")[0] == 1


def test_save_of_a_switch_that_runs_nothing_is_refused(tmp_path: Path, capsys: Capsys) -> None:
    code, _, err = out_of(capsys, "save", str(tmp_path / "x.yaml"))
    assert code == 2 and "holds nothing yet" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.yaml").exists()


# ---- diff names config fields ---------------------------------------------------------


def test_diff_rows_name_config_fields_and_raw_names_entries(capsys: Capsys) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    ok(capsys, "set-threshold", "voice=33")
    code, out, _ = out_of(capsys, "diff", "--config", str(EXAMPLE), "--exit-code")
    assert code == 1
    row = next(line for line in out.splitlines() if "voice.threshold_cells" in line)
    assert row.split("│")[1:5] == [
        " change ",
        " voice.threshold_cells ",
        " 33           ",
        " 20           ",
    ]
    assert "SwitchIngress.ecn_threshold" not in out
    code, out, _ = out_of(capsys, "diff", "--config", str(EXAMPLE), "--raw", "--exit-code")
    assert code == 1
    assert "SwitchIngress.ecn_threshold" in out and "threshold_bytes=2640" in out
    assert "voice.threshold_cells" not in out
    doc = json.loads(ok(capsys, "diff", "--config", str(EXAMPLE), "--json"))["model"]
    assert doc["fields"] == [
        {"change": "change", "field": "voice.threshold_cells", "current": "33", "intended": "20"}
    ]
    # K_i is in the class's entry of each of the four ingress pipes (issue 50).
    assert doc["changes"] == 4 and doc["differences"][0]["table"] == "SwitchIngress.ecn_threshold"


def test_diff_names_fields_of_list_items_by_their_key(tmp_path: Path, capsys: Capsys) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    moved = edited(
        tmp_path,
        "g.yaml",
        "- prefix: 10.0.1.0/24\n  port: 1\n",
        "- prefix: 10.0.1.0/24\n  port: 2\n",
    )
    doc = json.loads(ok(capsys, "diff", "--config", str(moved), "--json"))["model"]
    assert doc["fields"] == [
        {"change": "change", "field": "routes[10.0.1.0/24].port", "current": "1", "intended": "2"}
    ]


def test_field_changes_of_added_and_removed_items() -> None:
    old = {"queues": [{"port": 4, "queue": 0, "k": 1}, {"port": 4, "queue": 1, "k": 2}], "x": [5]}
    new = {
        "queues": [{"port": 4, "queue": 1, "k": 3}, {"port": 5, "queue": 0, "k": 1}],
        "x": [5, 6],
    }
    got = [(f.change, f.field, f.current, f.intended) for f in field_changes(old, new)]
    assert got == [
        ("remove", "queues[4/0]", '{"port": 4, "queue": 0, "k": 1}', "-"),
        ("change", "queues[4/1].k", "2", "3"),
        ("add", "queues[5/0]", "-", '{"port": 5, "queue": 0, "k": 1}'),
        ("change", "x", "[5]", "[5, 6]"),
    ]


# ---- checkpoint and rollback ----------------------------------------------------------


def test_rollback_writes_the_checkpoint_back(tmp_path: Path, capsys: Capsys) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    ok(capsys, "set-threshold", "voice=25")
    ok(capsys, "checkpoint", "good")
    before = classes(capsys)
    ok(capsys, "set-threshold", "voice=70", "bulk=90")
    ok(capsys, "set-weight", "bulk=5")
    ok(
        capsys,
        "apply",
        str(edited(tmp_path, "g.yaml", "threshold_cells: 40", "threshold_cells: 41")),
    )
    assert classes(capsys) != before
    assert "good" in ok(capsys, "checkpoint", "--list").split()
    assert "back to checkpoint good" in ok(capsys, "rollback", "good")
    assert classes(capsys) == before
    saved = load_state(default_state_path("pmqecn"))
    assert saved is not None and saved["config"]["classes"][1]["threshold_cells"] == 40


def test_rollback_of_an_unknown_checkpoint_exits_2_naming_it(capsys: Capsys) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    ok(capsys, "checkpoint", "one")
    code, _, err = out_of(capsys, "rollback", "two")
    assert code == 2
    assert err.strip().splitlines() == [
        "error: checkpoint two: no such checkpoint of pmqecn on model (it has one)"
    ]
    code, _, err = out_of(capsys, "checkpoint", "../etc")
    assert code == 2 and "checkpoint '../etc'" in err


def test_rollback_on_a_bfrt_switch_is_one_batch_removing_what_came_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a BF-Runtime switch the checkpoint is the config it runs with the
    values read back; the rollback removes what a later config added, in
    the same batch as the rest."""
    profile = load_profile("tofino")
    fake = FakeBfrtGrpc("pmqecn", profile)
    batches: list[int] = []

    def opened(
        _target: str,
        program: str,
        prof: object,
        client_id: int = 0,
        read_only: bool = False,
        tls: object = None,
    ) -> BfrtSwitch:
        sw = BfrtSwitch(program, prof, client_module=fake, read_only=read_only)  # type: ignore[arg-type]
        real_write = sw.write

        def write(writes: Sequence[Write]) -> None:
            batches.append(len(writes))
            real_write(writes)

        sw.write = write  # type: ignore[method-assign]
        return sw

    monkeypatch.setattr(snapshots, "open_switch", opened)
    raw = yaml.safe_load(EXAMPLE.read_text())
    cfg = parse_pmqecn(raw)
    first = opened("grpc://s:1", "pmqecn", profile)
    first.connect()
    app = PmqecnApp(first, cfg)
    app.push_all()
    app.set_thresholds({1: 27})
    unit = snapshots.Unit("grpc://s:1", "pmqecn")
    base = snapshots.config_snapshot("pmqecn", cfg, None)
    snap = snapshots.capture(unit, base)
    assert snap.live["1"]["threshold_cells"] == 27  # read back, not the config's 20
    # A later config: one more route, one moved, another threshold.
    raw2 = yaml.safe_load(EXAMPLE.read_text())
    raw2["routes"].append(
        {
            "prefix": "10.9.0.0/16",
            "port": 1,
            "src_mac": "02:00:00:00:00:01",
            "dst_mac": "00:00:00:00:01:01",
        }
    )
    raw2["classes"][0]["threshold_cells"] = 50
    raw2["routes"][0]["port"] = 2  # 10.0.1.0/24 moved
    cfg2 = parse_pmqecn(raw2)
    app2 = PmqecnApp(first, cfg2)
    app2.push_all()
    extra = {K_DST_ADDR: lpm("10.9.0.0/16")}
    assert first.read_entry(IPV4_LPM, extra) is not None
    # The switch no longer runs the first config: taking it as one is refused.
    with pytest.raises(ConfigError, match="does not run the config given"):
        snapshots.capture(unit, base)
    first.close()  # one writer per program: the rollback's session is the writer now
    batches.clear()
    snapshots.restore(unit, snap, "checkpoint c", snapshots.config_snapshot("pmqecn", cfg2, None))
    assert len(batches) == 1  # one batch: all of it or none
    reader = opened("grpc://s:1", "pmqecn", profile, read_only=True)
    reader.connect()
    assert reader.read_entry(IPV4_LPM, extra) is None
    moved = reader.read_entry(IPV4_LPM, {K_DST_ADDR: lpm("10.0.1.0/24")})
    assert moved is not None and moved.data["port"] == 1
    assert snapshots.capture(unit, base).live["1"]["threshold_cells"] == 27


# ---- apply --confirm-within -----------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = time.time()

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    """The confirm window's clock, moved by hand; and no timer process: a
    test runs the timer's loop itself (confirm.wait_and_revert)."""
    c = Clock()
    monkeypatch.setattr(pending, "now", c)

    def no_timer(_record: pending.Pending, _lock_fd: int) -> int:
        return 0

    monkeypatch.setattr(pending, "spawn_timer", no_timer)
    yield c


def the_record() -> Path:
    (record,) = [p for p in (pending.confirm_dir()).glob("*.yaml")]
    return record


def test_apply_confirm_within_without_confirm_reverts_at_the_deadline(
    tmp_path: Path, capsys: Capsys, clock: Clock
) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    ok(capsys, "set-weight", "bulk=3")
    before = classes(capsys)
    g = edited(tmp_path, "g.yaml", "threshold_cells: 20", "threshold_cells: 44")
    out = ok(capsys, "apply", "--confirm-within", "2", str(g))
    assert "unless `tofcc confirm`" in out
    assert classes(capsys)["voice"]["threshold_cells"] == 44
    record = the_record()
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        # Nothing reverts before the deadline.
        assert classes(capsys)["voice"]["threshold_cells"] == 44
        clock.sleep(s)

    assert pending.wait_and_revert(record, sleep) == "reverted"
    assert 2.0 <= sum(slept) < 2.0 + pending.POLL_S
    assert classes(capsys) == before
    assert out_of(capsys, "diff", "--config", str(EXAMPLE), "--exit-code")[0] == 1  # bulk=3 kept
    code, _, err = out_of(capsys, "confirm")
    assert code == 2 and "too late" in err and "reverted" in err


def test_confirm_in_time_keeps_the_apply(tmp_path: Path, capsys: Capsys, clock: Clock) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    g = edited(tmp_path, "g.yaml", "threshold_cells: 20", "threshold_cells: 44")
    ok(capsys, "apply", "--confirm-within", "60", str(g))
    record = the_record()
    clock.sleep(59)
    assert "confirmed the apply of" in ok(capsys, "confirm")
    clock.sleep(10)
    assert pending.wait_and_revert(record, clock.sleep) == "confirmed"
    assert classes(capsys)["voice"]["threshold_cells"] == 44
    code, _, err = out_of(capsys, "confirm")
    assert code == 2 and "no apply waits for a confirm" in err


def test_a_lost_timer_is_caught_up_by_the_next_command(
    tmp_path: Path, capsys: Capsys, clock: Clock
) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    g = edited(tmp_path, "g.yaml", "threshold_cells: 20", "threshold_cells: 44")
    ok(capsys, "apply", "--confirm-within", "2", str(g))
    clock.sleep(3)  # the timer (never started here) is gone: its lock is free
    code, _, err = out_of(capsys, "confirm")
    assert code == 2 and "too late" in err
    assert classes(capsys)["voice"]["threshold_cells"] == 20


def test_one_pending_apply_per_switch_and_a_refused_apply_leaves_none(
    tmp_path: Path, capsys: Capsys, clock: Clock
) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    bad = edited(tmp_path, "bad.yaml", "threshold_cells: 20", "threshold_cells: -1")
    code, _, err = out_of(capsys, "apply", "--confirm-within", "5", str(bad))
    assert code == 2 and "threshold_cells" in err
    assert not list(pending.confirm_dir().glob("*.yaml"))
    g = edited(tmp_path, "g.yaml", "threshold_cells: 20", "threshold_cells: 44")
    ok(capsys, "apply", "--confirm-within", "5", str(g))
    code, _, err = out_of(capsys, "apply", "--confirm-within", "5", str(EXAMPLE))
    assert code == 2 and "waits for `tofcc confirm`" in err
    assert classes(capsys)["voice"]["threshold_cells"] == 44


def test_a_deployment_applied_with_confirm_within_reverts_each_switch(
    tmp_path: Path, capsys: Capsys, clock: Clock
) -> None:
    d = tmp_path / "deploy"
    d.mkdir()
    shutil.copy(ROOT / "deploy" / "model.yaml", d / "model.yaml")
    shutil.copy(EXAMPLE, d / "pmqecn-tm-dwrr.yaml")
    deploy = d / "model.yaml"
    ok(capsys, "apply", str(deploy))
    (d / "pmqecn-tm-dwrr.yaml").write_text(
        EXAMPLE.read_text().replace("threshold_cells: 20", "threshold_cells: 44", 1)
    )
    ok(capsys, "apply", "--confirm-within", "2", str(deploy))
    assert classes(capsys, "--config", str(deploy))["voice"]["threshold_cells"] == 44
    assert pending.wait_and_revert(the_record(), clock.sleep) == "reverted"
    assert classes(capsys, "--config", str(deploy))["voice"]["threshold_cells"] == 20


def test_the_revert_outlives_the_cli_process(tmp_path: Path, capsys: Capsys) -> None:
    """The acceptance as an operator meets it: `tofcc apply --confirm-within
    2 G` in a process of its own, which exits; 2 s later, with no confirm,
    the switch is as before (the timer it left behind reverted it)."""
    ok(capsys, "apply", str(EXAMPLE))
    g = edited(tmp_path, "g.yaml", "threshold_cells: 20", "threshold_cells: 44")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "bfrt_controller.cli", "apply", "--confirm-within", "2", str(g)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert classes(capsys)["voice"]["threshold_cells"] == 44
    record = the_record()
    for _ in range(600):  # the revert, however slow the machine (never before the deadline)
        p = pending.read_record(record)
        if p is not None and p.status == pending.REVERTED:
            break
        time.sleep(0.1)
    assert p is not None and p.status == pending.REVERTED, p
    assert p.finished is not None and p.finished >= p.deadline
    assert classes(capsys)["voice"]["threshold_cells"] == 20


# ---- every write leaves one audit line (issue 52, Deliver 4) ---------------------------


def audit_lines() -> list[dict[str, object]]:
    path = Path(os.environ["XDG_STATE_HOME"]) / "tofcc" / "audit.log"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_a_rollback_leaves_one_audit_line(capsys: Capsys) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    ok(capsys, "checkpoint", "good")
    ok(capsys, "set-threshold", "voice=70")
    ok(capsys, "rollback", "good")
    assert [x["action"] for x in audit_lines()] == ["apply", "set-threshold", "rollback"]
    line = audit_lines()[-1]
    assert (line["result"], line["checkpoint"], line["switch"]) == ("ok", "good", "model")
    assert str(line["command"]).endswith("rollback good")


def test_an_unconfirmed_apply_reverted_leaves_one_line_per_switch(
    tmp_path: Path, capsys: Capsys, clock: Clock
) -> None:
    ok(capsys, "apply", str(EXAMPLE))
    g = edited(tmp_path, "g.yaml", "threshold_cells: 20", "threshold_cells: 44")
    ok(capsys, "apply", "--confirm-within", "2", str(g))
    assert pending.wait_and_revert(the_record(), clock.sleep) == "reverted"
    actions = [x["action"] for x in audit_lines()]
    assert actions == ["apply", "apply", "confirm-revert"]
    revert = audit_lines()[-1]
    # It names the apply it undoes, and goes where that apply's line went.
    assert revert["result"] == "ok" and "--confirm-within 2" in str(revert["command"])
    assert revert["program"] == "pmqecn" and revert["config_sha"] == audit_lines()[0]["config_sha"]
