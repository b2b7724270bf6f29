# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The model target's state file: one command's read and write are one step,
a crash mid-write leaves the old state, and a state file that cannot be
read is an error naming it, never a silent fall-back to the default."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest
from click.testing import CliRunner

from bfrt_controller.cli import cli
from bfrt_controller.errors import ConfigError
from bfrt_controller.state import StateBusy, load_state, save_state, state_lock


def invoke(state: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--state", str(state), *args])
    return result.exit_code, result.output + (
        "" if result.exception is None else repr(result.exception)
    )


def _child(state: str, args: list[str], out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    code, text = invoke(Path(state), *args)
    out.put((args, code, text))


def test_twenty_concurrent_commands_keep_every_change_that_succeeded(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    assert invoke(state, "status", "--json")[0] == 0
    writers = [
        ["set-threshold", "voice=21"],
        ["set-threshold", "video=42"],
        ["set-threshold", "bulk=63"],
        ["set-weight", "voice=7"],
        ["set-weight", "video=8"],
        ["set-weight", "bulk=9"],
    ]
    readers = [["status", "--json"]] * 14
    ctx = multiprocessing.get_context("fork")  # the CLI is imported once, children are cheap
    out = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(str(state), a, out)) for a in writers + readers]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    for args, code, text in results:
        assert code == 0, (args, text)  # nobody lost the race: they queued on the lock
        if args[0] == "status":
            assert len([r for r in json.loads(text) if r["section"] == "classes"]) == 3
    code, text = invoke(state, "status", "--json")
    rows = {r["name"]: r for r in json.loads(text) if r["section"] == "classes"}
    assert [rows[n]["threshold_cells"] for n in ("voice", "video", "bulk")] == [21, 42, 63]
    assert [rows[n]["weight"] for n in ("voice", "video", "bulk")] == [7, 8, 9]
    assert not [p for p in state.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"program: pmqecn\nconfig: {a: 1\n", "not valid YAML"),
        (b"\xff\xfe\x00binary", "not UTF-8"),
        # The controller's words for an unknown key since pydantic checks the state (issue 46).
        (b"program: pmqecn\nconfig: {}\nlive: {}\nextra: 1\n", "unknown field extra"),
        (b"program: pmqecn\nprogram: bfcc\nconfig: {}\n", "duplicate key 'program'"),
        (b"- a list\n", "must be a mapping"),
        (b"program: 7\nconfig: {}\n", "program"),
        (b"program: pmqecn\nconfig: [1]\n", "config"),
        (b"config: {}\n", "program: Field required"),
        (b"program: pmqecn\nconfig: {}\nlive: 3\n", "live"),
        (b"program: pmqecn\nconfig: {}\nfront_panel: [1]\n", "front_panel"),
    ],
)
def test_a_corrupt_state_file_is_an_error_naming_it(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    state = tmp_path / "state.yaml"
    state.write_bytes(content)
    with pytest.raises(ConfigError, match=reason) as err:
        load_state(state)
    assert str(state) in str(err.value)
    code, out = invoke(state, "set-threshold", "voice=33")
    assert code != 0 and reason.split()[0] in out
    assert state.read_bytes() == content  # nothing written over it


def test_a_directory_as_state_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        load_state(tmp_path)


def test_an_unwritable_state_location_names_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")  # a file where the state directory should be: even root cannot
    with pytest.raises(ConfigError, match=r"not-a-dir/state.yaml.*cannot be written"):
        save_state(blocker / "state.yaml", "pmqecn", {}, {})


def test_save_replaces_atomically_and_leaves_no_temporary(tmp_path: Path) -> None:
    state = tmp_path / "s" / "state.yaml"
    save_state(state, "pmqecn", {"a": 1}, {"b": 2})
    save_state(state, "pmqecn", {"a": 3}, {})
    assert load_state(state) == {"program": "pmqecn", "config": {"a": 3}, "live": {}}
    assert sorted(p.name for p in state.parent.iterdir()) == ["state.yaml"]


def test_a_held_lock_makes_the_next_command_wait_then_give_up(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    with (
        state_lock(state),
        pytest.raises(StateBusy, match="held by another tofcc command"),
        state_lock(state, wait_s=0.1),
    ):
        pass
    with state_lock(state, wait_s=0.1):  # released when the holder is done
        pass


def _ten_class_config(path: Path) -> None:
    """The default config with ten classes: twenty fields (K_i, weight) to change."""
    import yaml

    from bfrt_controller.pmqecn.config import DEFAULT_CONFIG

    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    raw["virtual_queue"] = {"drain_mantissa_bits": 3}  # ten classes fit the drain table
    raw["classes"] = [
        {
            "name": f"c{i}",
            "id": i,
            "match": {"dscp": i},
            "priority": i,
            "vq": i,
            "queue": i - 1,
            "qos": "ABC"[i % 3],
            "threshold_cells": 10 * i,
            "weight": i,
        }
        for i in range(1, 11)
    ]
    path.write_text(yaml.safe_dump(raw))


def test_twenty_concurrent_tofcc_processes_changing_different_fields(tmp_path: Path) -> None:
    """Issue 13's acceptance: twenty real `tofcc --target model` processes at
    once, each changing its own field, leave a valid state holding every
    change whose command exited 0; one that did not must say why."""
    import os
    import subprocess
    import sys

    state = tmp_path / "state.yaml"
    config = tmp_path / "ten.yaml"
    _ten_class_config(config)
    assert invoke(state, "apply", str(config))[0] == 0
    changes = [("set-threshold", f"c{i}", 100 + i) for i in range(1, 11)]
    changes += [("set-weight", f"c{i}", 20 + i) for i in range(1, 11)]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    tofcc = (sys.executable, "-m", "bfrt_controller.cli")
    procs = [
        subprocess.Popen(
            [*tofcc, "--target", "model", "--state", str(state), command, f"{name}={value}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        for command, name, value in changes
    ]
    outcomes = [(p.wait(timeout=300), p.stdout.read() if p.stdout else "") for p in procs]

    code, text = invoke(state, "status", "--json")
    assert code == 0, text
    rows = {r["name"]: r for r in json.loads(text) if r["section"] == "classes"}
    assert len(rows) == 10  # the applied config, not a fall-back to the default
    landed = 0
    for (command, name, value), (rc, out) in zip(changes, outcomes, strict=True):
        field = "threshold_cells" if command == "set-threshold" else "weight"
        if rc == 0:
            assert rows[name][field] == value, (command, name, out)
            landed += 1
        else:  # a loser: the documented busy exit, a message, and nothing of it applied
            assert rc == StateBusy.exit_code and "held by another tofcc command" in out, out
            assert rows[name][field] != value
    assert landed == 20  # the lock queues them: none waits long enough to give up
    assert load_state(state) is not None
    assert not [p for p in state.parent.iterdir() if p.name.endswith(".tmp")]
