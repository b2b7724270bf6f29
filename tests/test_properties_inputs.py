# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Property-based tests of every input path (issue 13): the YAML reader, the
config, profile, vector and scenario loaders, and tofcc's own parsers.

A loader given anything - random text, a real file with one value replaced
by something of another type, a key dropped or added - returns a valid
object or raises its one documented error naming the file; nothing else.
What a loader accepts, the switch accepts too (a config that validates
never comes back from the model as "switch refused").

Bounded by the hypothesis profile in tests/conftest.py ("ci"; "long" fuzzes).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.cli import run
from bfrt_controller.errors import ConfigError, ControllerError
from bfrt_controller.programs import get_program
from bfrt_controller.set_args import parse_signed_int
from bfrt_controller.targets import open_switch
from evaluation.scenario import SCENARIO_DIR, Scenario, ScenarioError, parse_scenario
from evaluation.schemes import check_buildable
from hw_profiles import PROFILE_DIR, HwProfile, ProfileError, load_profile, parse_profile, safe_yaml
from models.vectors.format import (
    DEFAULT_VECTOR_ROOT,
    VectorFile,
    VectorFormatError,
    parse_vector_file,
)
from models.vectors.packets import build_scapy
from tofcc_common import registry

# Values of every YAML type, including the ones that slipped through before:
# booleans for integers, nan/inf/1e308, huge integers, strings of digits.
nasty = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**32, 2**40, 68, 64, 511, 512]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([float("nan"), float("inf"), 1e308, 0.5]),
    st.text(max_size=8),
    st.sampled_from(["20", "true", "0x10", "10.0.0.0/8", "1Mbps", "0bps", ""]),
    st.lists(st.integers(-5, 600), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _nudged(value: Any) -> st.SearchStrategy[Any]:
    """Another value of `value`'s own type, near it or at an edge."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        edges = [0, 1, -1, 2 * value, value + 1, value - 1, 2**31, 2**32, 512, 68, 64]
        return st.one_of(st.integers(-2, max(600, 2 * value)), st.sampled_from(edges))
    if isinstance(value, float):
        return st.floats(min_value=-1.0, max_value=max(2.0, 4 * value))
    if isinstance(value, list) and value:
        return st.sampled_from(
            [value[:-1], value + value[-1:], list(reversed(value)), [value[0]] * 2]
        )
    return st.just(value)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a YAML tree a value sits (dict keys, list indexes)."""
    out = []
    if isinstance(node, dict):
        items: Any = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return out
    for key, child in items:
        out.append((*prefix, key))
        out += _paths(child, (*prefix, key))
    return out


@st.composite
def mutations(draw: st.DrawFn, raw: Any) -> Any:
    """`raw` with one to three values replaced, removed or joined by a stranger."""
    doc = copy.deepcopy(raw)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        kind = draw(st.sampled_from(["nudge", "nudge", "replace", "remove", "add"]))
        if kind == "nudge":  # a value of the same type: reaches the cross-field checks
            parent[path[-1]] = draw(_nudged(parent[path[-1]]))
        elif kind == "replace":
            parent[path[-1]] = draw(nasty)
        elif kind == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["bogus", "x", "id", "port", 7]))] = draw(nasty)
        else:
            parent.append(draw(nasty))
    return doc


def _raw(path: Path, hex_ints: bool = False) -> Any:
    return safe_yaml.load_file(path, hex_ints)


# --- the YAML reader ---------------------------------------------------------


@given(text=st.text(max_size=200))
def test_yaml_reader_raises_only_its_own_error(text: str) -> None:
    try:
        safe_yaml.loads(text, "t.yaml")
    except safe_yaml.YamlFileError as exc:
        assert "t.yaml" in str(exc)


@given(
    data=st.one_of(
        st.binary(max_size=200),
        st.sampled_from([b"a: [" * 100, b"a: 1\na: 2\n", b"\xff\xfe", b"{" * 70 + b"}" * 70]),
    )
)
def test_yaml_reader_on_bytes(data: bytes, tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.getbasetemp() / "bytes.yaml"
    path.write_bytes(data)
    try:
        safe_yaml.load_file(path)
    except safe_yaml.YamlFileError as exc:
        assert "bytes.yaml" in str(exc)


# --- controller configs ------------------------------------------------------

# Every program the project ships (issue 37: dadctcp and spie had no case).
PROGRAMS = tuple(registry.PROGRAMS)


@functools.cache
def _configs() -> dict[str, Any]:
    # Read when the test runs, not at import: a registry entry whose config
    # is not written yet fails this test, not the collection of the module.
    return {name: _raw(get_program(name).default_config) for name in PROGRAMS}


def _config_cases() -> st.SearchStrategy[tuple[str, Any]]:
    return st.deferred(
        lambda: st.sampled_from(sorted(_configs())).flatmap(
            lambda name: st.tuples(st.just(name), mutations(_configs()[name]))
        )
    )


@given(case=_config_cases())
def test_config_loader_accepts_or_names_the_file(case: tuple[str, Any]) -> None:
    name, raw = case
    program = get_program(name)
    try:
        cfg = program.parse_config(raw, "cfg.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("cfg.yaml: "), str(exc)
        event("refused")
        return
    event("accepted")
    # Accepted: it survives the state file's round trip ...
    assert program.parse_config(cfg.model_dump(mode="json"), "state") == cfg
    # ... and the switch takes all of it (no "switch refused" after validation).
    switch = ModelSwitch(name, load_profile(cfg.chip))
    program.make_app(switch, cfg).push_all()


# --- hardware profiles -------------------------------------------------------

PROFILES = {chip: _raw(PROFILE_DIR / f"{chip}.yaml") for chip in ("tofino", "tofino2")}


@given(raw=st.sampled_from(sorted(PROFILES)).flatmap(lambda c: mutations(PROFILES[c])))
def test_profile_loader_accepts_or_names_the_file(raw: Any) -> None:
    try:
        profile = parse_profile(raw, "p.yaml")
    except ProfileError as exc:
        assert str(exc).startswith("p.yaml: "), str(exc)
        event("refused")
        return
    event("accepted")
    assert isinstance(profile, HwProfile)
    # What the code derives from a profile works for any accepted one.
    assert profile.max_port >= max(profile.recirculation_ports)
    assert profile.front_panel_port(0) <= profile.max_port
    assert profile.bytes_to_cells(1500) >= 1


# --- vectors -----------------------------------------------------------------


def _first_vector_files() -> dict[str, Path]:
    """One file of each program's vectors (of those that have one)."""
    out = {}
    for name in PROGRAMS:
        files = sorted((DEFAULT_VECTOR_ROOT / name).glob("*.yaml"))
        if files:
            out[name] = files[0]
    return out


VECTORS = {name: _raw(path) for name, path in _first_vector_files().items()}


def test_vectors_of_every_program_are_fuzzed() -> None:
    assert set(VECTORS) == set(PROGRAMS)


@given(raw=st.sampled_from(sorted(VECTORS)).flatmap(lambda n: mutations(VECTORS[n])))
def test_vector_loader_accepts_or_names_the_file(raw: Any) -> None:
    try:
        vf = parse_vector_file(raw, "v.yaml")
    except VectorFormatError as exc:
        assert str(exc).startswith("v.yaml: "), str(exc)
        event("refused")
        return
    event("accepted")
    assert isinstance(vf, VectorFile)
    for vector in vf.vectors[:2]:  # an accepted packet can be built
        for step in vector.steps:
            if step.send is not None:
                bytes(build_scapy(step.send.packet))


# --- scenarios ---------------------------------------------------------------

SCENARIO = _raw(SCENARIO_DIR / "bfcc-smoke.yaml")


@given(raw=mutations(SCENARIO))
def test_scenario_loader_accepts_or_names_the_file(raw: Any) -> None:
    try:
        s = parse_scenario(raw, "s.yaml")
    except ScenarioError as exc:
        assert str(exc).startswith("s.yaml: "), str(exc)
        event("refused")
        return
    event("accepted")
    assert isinstance(s, Scenario)
    # `eval check` builds every scheme: refused there by name, or buildable.
    try:
        check_buildable(s, "s.yaml")
    except ScenarioError as exc:
        assert str(exc).startswith("s.yaml: schemes."), str(exc)
        event("refused by a scheme")


# --- tofcc's parsers ---------------------------------------------------------


@given(text=st.one_of(st.text(max_size=25), st.integers(-(2**80), 2**80).map(str)))
def test_integer_arguments_are_ascii_decimals_or_an_error_naming_the_field(text: str) -> None:
    # Canonical decimals only: no "-0", no leading zero (a lost digit or sign).
    canonical = re.fullmatch(r"0|-?[1-9][0-9]*", text) is not None and len(text) <= 20
    try:
        value = parse_signed_int("set-threshold voice", text)
    except ConfigError as exc:
        assert exc.field == "set-threshold voice"
        assert not canonical
        return
    assert canonical and value == int(text)


@given(target=st.one_of(st.text(max_size=30), st.text(max_size=20).map("grpc://".__add__)))
def test_target_is_model_or_a_grpc_address(target: str) -> None:
    try:
        switch = open_switch(target, "pmqecn", load_profile("tofino"))
    except ConfigError as exc:
        assert exc.field == "--target"
        return
    except ControllerError:  # the SDE's client is missing: the address itself was fine
        switch = None
    if target != "model":
        m = re.fullmatch(r"grpc://(.+):([0-9]{1,5})", target)
        assert m is not None and 1 <= int(m.group(2)) <= 65535, target
    assert switch is None or switch.program == "pmqecn"


def _run_quietly(args: list[str]) -> tuple[int, str]:
    """tofcc's exit code and what it printed (capsys is per test, not per example)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = run(args)
    return code, out.getvalue()


CLASS_KEYS = st.one_of(
    st.sampled_from(["voice", "video", "bulk", "1", "2", "3", "0", "4", "nope", "", "²", "[/x]"]),
    st.text(max_size=5),
)
VALUES = st.one_of(
    st.integers(-5, 600_000).map(str),
    st.sampled_from(
        ["true", "1.5", "nan", "inf", "1e3", "", " 5", "0x10", "٣", str(2**64), "-0", "[/x]"]
    ),
    st.text(max_size=4),
)
PAIRS = st.lists(
    st.tuples(CLASS_KEYS, VALUES).map(lambda kv: f"{kv[0]}={kv[1]}"), min_size=1, max_size=3
)


@pytest.fixture(scope="module")
def saved_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state = tmp_path_factory.mktemp("props") / "state.yaml"
    assert run(["--state", str(state), "set-threshold", "voice=33"]) == 0
    return state


# Each example is a whole tofcc command on the model (~0.25 s): fewer of them.
@settings(max_examples=max(10, settings.default.max_examples // 3))
@given(command=st.sampled_from(["set-threshold", "set-weight"]), pairs=PAIRS)
def test_cli_pairs_are_applied_whole_or_refused_whole(
    command: str, pairs: list[str], saved_state: Path
) -> None:
    before = saved_state.read_bytes()
    code, out = _run_quietly(["--state", str(saved_state), command, *pairs])
    assert code in (0, 2), out
    event(f"exit {code}")
    if code == 2:
        assert saved_state.read_bytes() == before  # nothing half-applied
        assert "error:" in out
    else:
        saved_state.write_bytes(before)  # the next example starts from the same state


BFCC_NAMES = st.one_of(
    st.sampled_from(
        [
            *("threshold_packets", "t_min_us", "t_max_us", "rt1_packets", "refresh_ns"),
            *("expiry_ns", "named_group_only", "window_packets", "threshold_cells", "t_min"),
            *("bogus", ""),
        ]
    ),
    st.text(max_size=5),
)


@pytest.fixture(scope="module")
def bfcc_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state = tmp_path_factory.mktemp("props-bfcc") / "state.yaml"
    assert run(["--state", str(state), "--program", "bfcc", "set", "rt1_packets=8"]) == 0
    return state


@given(
    pairs=st.lists(
        st.tuples(BFCC_NAMES, VALUES).map(lambda kv: f"{kv[0]}={kv[1]}"), min_size=1, max_size=3
    )
)
def test_bfcc_set_is_applied_whole_or_refused_whole(pairs: list[str], bfcc_state: Path) -> None:
    before = bfcc_state.read_bytes()
    code, out = _run_quietly(["--state", str(bfcc_state), "--program", "bfcc", "set", *pairs])
    assert code in (0, 2), out
    event(f"exit {code}")
    if code == 2:
        assert bfcc_state.read_bytes() == before
    else:
        bfcc_state.write_bytes(before)


# --- `tofcc set` of every program that has one, with its options ---------------

SET_NAMES = {
    "bfcc": ["rt1_packets", "t_min_us", "threshold_packets", "reduction"],
    "p4qcn": ["q_min_cells", "q_max_cells", "feedback_interval_us", "mode"],
    "dadctcp": ["mode", "k_port_packets", "drop_not_ect"],
    "aqm": ["min_th_cells", "max_th_cells", "max_p", "w_q_shift", "target_us", "ecn"],
    "spie": ["alpha_per_s", "stale_after_us", "t_update_us", "columns"],
}
OPTIONS = st.lists(
    st.sampled_from(
        [("--queue", "3/0"), ("--queue", "4/0"), ("--queue", "x"), ("--port", "4"), ("--port", "")]
    ),
    max_size=2,
)


@pytest.fixture(scope="module")
def set_states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A state file per program holding one change, as a user would have."""
    first = {
        "bfcc": "rt1_packets=8",
        "p4qcn": "q_max_cells=300",
        "dadctcp": "k_port_packets=90",
        "aqm": "max_p=0.1",
        "spie": "alpha_per_s=0.2",
    }
    out = {}
    for program in SET_NAMES:
        state = tmp_path_factory.mktemp(f"props-{program}") / "state.yaml"
        code, text = _run_quietly(
            ["--state", str(state), "--program", program, "set", first[program]]
        )
        assert code == 0, text
        out[program] = state
    return out


@settings(max_examples=max(10, settings.default.max_examples // 3))
@given(
    program=st.sampled_from(sorted(SET_NAMES)),
    data=st.data(),
)
def test_every_programs_set_is_applied_whole_or_refused_whole(
    program: str, data: st.DataObject, set_states: dict[str, Path]
) -> None:
    names = st.one_of(st.sampled_from(SET_NAMES[program]), st.text(max_size=4))
    pairs = data.draw(
        st.lists(
            st.tuples(names, VALUES).map(lambda kv: f"{kv[0]}={kv[1]}"), min_size=1, max_size=3
        )
    )
    options = [part for option in data.draw(OPTIONS) for part in option]
    state = set_states[program]
    before = state.read_bytes() if state.exists() else None
    code, out = _run_quietly(["--state", str(state), "--program", program, "set", *options, *pairs])
    assert code in (0, 2), out
    assert "Traceback" not in out
    event(f"{program} exit {code}")
    after = state.read_bytes() if state.exists() else None
    if code == 2:
        assert after == before, out  # nothing half-applied
        assert "error:" in out
    elif before is None:
        state.unlink()
    else:
        state.write_bytes(before)
