# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 44 items 6, 7, 8 and 11's minors: a floor on every controller cycle
and data-plane time, class names an operator can type and tell apart
(`set-threshold` by name only), one switch however its address is written,
no leading zeros in `set`, and a DA-DCTCP state file holding only what the
app writes.

Each refusal is checked the way an operator meets it: exit 2 from the CLI's
entry point, one line on stderr naming the file and the field, no traceback,
and the model target's state file byte for byte what it was.
"""

from __future__ import annotations

import copy
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller import targets as targets_module
from bfrt_controller.backends.model import ModelSwitch
from bfrt_controller.cli import run
from bfrt_controller.common import MIN_CYCLE_INTERVAL_S
from bfrt_controller.dadctcp.app import DadctcpApp
from bfrt_controller.dadctcp.config import DEFAULT_CONFIG as DADCTCP_DEFAULT
from bfrt_controller.dadctcp.config import load_config as load_dadctcp
from bfrt_controller.errors import ConfigError
from bfrt_controller.set_args import parse_number, parse_queues
from bfrt_controller.targets import switch_identity
from hw_profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
DEFAULTS = ROOT / "bfrt_controller" / "defaults"
EXAMPLES = ROOT / "examples"
Raw = dict[str, Any]


def default(program: str) -> Raw:
    raw: Raw = yaml.safe_load((DEFAULTS / f"{program}.yaml").read_text())
    return raw


def check(
    path: Path, capsys: pytest.CaptureFixture[str], *, code: int = 2, names: tuple[str, ...] = ()
) -> str:
    """`tofcc check --config path`: its exit code and, on a refusal, one
    line on stderr naming the file and every one of `names`."""
    got = run(["check", "--config", str(path)])
    err = capsys.readouterr().err
    assert got == code, err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, err
        assert path.name in err, err
        for name in names:
            assert name in err, (name, err)
    return err


def write(path: Path, raw: Raw) -> Path:
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


# ---- item 6: a floor on time -------------------------------------------------------


@dataclass(frozen=True)
class TimeCase:
    id: str
    program: str
    mutate: Callable[[Raw], object]
    field: str


def _codel(raw: Raw, **changes: float) -> None:
    next(q for q in raw["queues"] if q["mode"] == "codel").update(changes)


TOO_SHORT = [
    # The reproduction: PMQECN's cycle at a nanosecond passed `check`.
    TimeCase(
        "pmqecn-cycle-1ns",
        "pmqecn",
        lambda r: r["optimizer"].update(interval_s=1.0e-9),
        "optimizer.interval_s",
    ),
    TimeCase(
        "pmqecn-cycle-9ms",
        "pmqecn",
        lambda r: r["optimizer"].update(interval_s=0.009),
        "optimizer.interval_s",
    ),
    TimeCase(
        "pmqecn-cycle-denormal",
        "pmqecn",
        lambda r: r["optimizer"].update(interval_s=5e-324),
        "optimizer.interval_s",
    ),
    TimeCase("dadctcp-cycle-1ns", "dadctcp", lambda r: r.update(interval_s=1e-9), "interval_s"),
    # Data-plane times: below one tick (64 ns) they were written as one tick.
    TimeCase("dadctcp-idle-age", "dadctcp", lambda r: r.update(idle_age_us=1e-9), "idle_age_us"),
    TimeCase("codel-target", "aqm", lambda r: _codel(r, target_us=1e-9), "target_us"),
    TimeCase("codel-interval", "aqm", lambda r: _codel(r, interval_us=0.01), "interval_us"),
    TimeCase(
        "spie-t-update", "spie", lambda r: r["pie"].update(t_update_us=1e-9), "pie.t_update_us"
    ),
    TimeCase("spie-del-ref", "spie", lambda r: r["pie"].update(del_ref_us=0.1), "pie.del_ref_us"),
    TimeCase(
        "p4qcn-feedback-interval",
        "p4qcn",
        lambda r: r["queues"][0].update(feedback_interval_us=1e-9),
        "feedback_interval_us",
    ),
]


@pytest.mark.parametrize("case", TOO_SHORT, ids=lambda c: c.id)
def test_a_time_below_its_floor_is_refused_at_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: TimeCase
) -> None:
    raw = default(case.program)
    case.mutate(raw)
    check(write(tmp_path / "c.yaml", raw), capsys, names=(case.field,))


def test_the_floor_itself_is_a_valid_cycle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = default("pmqecn")
    raw["optimizer"]["interval_s"] = MIN_CYCLE_INTERVAL_S
    check(write(tmp_path / "c.yaml", raw), capsys, code=0)
    raw = default("dadctcp")
    raw["interval_s"] = MIN_CYCLE_INTERVAL_S
    check(write(tmp_path / "d.yaml", raw), capsys, code=0)


def _target(name: str, target: str = "model", program: str = "pmqecn", **kw: Any) -> Raw:
    return {"name": name, "target": target, "program": program, "config": default(program), **kw}


def test_a_deployment_cycle_below_the_floor_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "deploy.yaml", {"targets": [_target("s1", interval_s=1.0e-9)]})
    check(path, capsys, names=("targets[0].interval_s",))


@pytest.mark.parametrize(
    "args",
    [
        # The reproduction: exited 0 after one cycle at 1e-300 s.
        ("optimize", "--interval", "1e-300", "--count", "1"),
        ("optimize", "--interval", "0.001", "--count", "1"),
        ("--program", "bfcc", "shape", "--interval", "1e-300", "--count", "1"),
    ],
    ids=["optimize-1e-300", "optimize-1ms", "bfcc-shape-1e-300"],
)
def test_a_command_line_interval_below_the_floor_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    state = tmp_path / "s.yaml"
    program = args[1] if args[0] == "--program" else "pmqecn"
    assert run(["--program", program, "--state", str(state), "status"]) == 0
    before = state.read_bytes() if state.exists() else None
    capsys.readouterr()
    assert run(["--state", str(state), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--interval" in err and "0.01" in err, err
    assert (state.read_bytes() if state.exists() else None) == before


# ---- item 7: names an operator can type and tell apart -----------------------------


def _rename(*names: str) -> Callable[[Raw], None]:
    def mutate(raw: Raw) -> None:
        for c, name in zip(raw["classes"], names, strict=False):
            c["name"] = name

    return mutate


BAD_NAMES = [
    # The reproduction: "3" (id 1), "vоice" with a Cyrillic о (id 2), "voice" (id 3).
    ("reproduction", ("3", "v\u043eice", "voice"), "classes[0].name"),
    ("cyrillic-o", ("voice", "v\u043eice", "bulk"), "U+043E"),
    ("all-digits", ("voice", "video", "42"), "classes[2].name"),
    ("case-only", ("Voice", "video", "voice"), "classes[2].name"),
    ("case-only-upper", ("bulk", "BULK", "x"), "classes[1].name"),
    ("space", ("vo ice", "video", "bulk"), "classes[0].name"),
    ("zero-width-joiner", ("voi\u200dce", "video", "bulk"), "U+200D"),
    ("option-like", ("-voice", "video", "bulk"), "classes[0].name"),
    ("leading-digit", ("1voice", "video", "bulk"), "classes[0].name"),
    ("empty", ("", "video", "bulk"), "classes[0].name"),
    ("too-long", ("v" * 65, "video", "bulk"), "classes[0].name"),
    ("markup", ("[/x]", "video", "bulk"), "classes[0].name"),
    ("fullwidth", ("\uff56oice", "video", "bulk"), "U+FF56"),
]


@pytest.mark.parametrize(
    ("names", "field"), [c[1:] for c in BAD_NAMES], ids=[c[0] for c in BAD_NAMES]
)
def test_a_class_name_an_operator_cannot_type_or_tell_apart_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], names: tuple[str, ...], field: str
) -> None:
    raw = default("pmqecn")
    _rename(*names)(raw)
    check(write(tmp_path / "c.yaml", raw), capsys, names=(field,))


@pytest.mark.parametrize("names", [("voice", "video_2", "bulk-x"), ("_a", "B", "c9")])
def test_identifier_names_are_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], names: tuple[str, ...]
) -> None:
    raw = default("pmqecn")
    _rename(*names)(raw)
    check(write(tmp_path / "c.yaml", raw), capsys, code=0)


def test_deployment_target_names_must_differ_beyond_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "deploy.yaml", {"targets": [_target("Leaf1"), _target("leaf1")]})
    check(path, capsys, names=("targets[1].name", "Leaf1"))


@pytest.mark.parametrize("key", ["3", "1", "0003", "Voice", " voice", "voice "])
def test_set_threshold_takes_class_names_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    """`3=99` retuned the class with id 3 (bulk), whatever was named "3"."""
    state = tmp_path / "s.yaml"
    assert run(["--state", str(state), "set-threshold", "voice=21"]) == 0
    before = state.read_bytes()
    capsys.readouterr()
    assert run(["--state", str(state), "set-threshold", f"{key}=99"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "set-threshold" in err, err
    assert "voice, video, bulk" in err, err  # the names it takes
    assert state.read_bytes() == before
    assert run(["--state", str(state), "set-weight", f"{key}=5"]) == 2
    assert state.read_bytes() == before


def test_set_threshold_by_name_still_retunes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s.yaml"
    assert run(["--state", str(state), "set-threshold", "bulk=70", "voice=22"]) == 0
    capsys.readouterr()
    assert run(["--state", str(state), "status", "--json"]) == 0
    rows = yaml.safe_load(capsys.readouterr().out)
    k = {r["name"]: r["threshold_cells"] for r in rows if r.get("section") == "classes"}
    assert (k["voice"], k["bulk"]) == (22, 70)


# ---- item 8: one switch, however its address is written ---------------------------

SAME_SWITCH = [
    ("127.0.0.1", "localhost"),
    ("127.0.0.1", "127.1"),
    ("127.0.0.1", "[::ffff:127.0.0.1]"),
    ("127.0.0.1", "0x7f000001"),
    ("127.0.0.1", "2130706433"),
    ("[::1]", "[0:0:0:0:0:0:0:1]"),
    ("localhost", "LOCALHOST."),
    ("sw.invalid", "SW.invalid."),  # never resolves: compared by its text, case aside
]


@pytest.mark.parametrize(("a", "b"), SAME_SWITCH)
def test_one_switch_written_two_ways_is_refused_naming_both_targets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], a: str, b: str
) -> None:
    deploy = {"targets": [_target("s1", f"grpc://{a}:50052"), _target("s2", f"grpc://{b}:50052")]}
    err = check(write(tmp_path / "deploy.yaml", deploy), capsys, names=("targets[1].target",))
    assert "targets[0]" in err and a in err and b in err, err


def test_the_reproductions_four_spellings_of_one_switch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hosts = ["127.0.0.1", "localhost", "127.1", "[::ffff:127.0.0.1]"]
    deploy = {"targets": [_target(f"s{i}", f"grpc://{h}:50052") for i, h in enumerate(hosts)]}
    check(write(tmp_path / "deploy.yaml", deploy), capsys, names=("targets[1].target",))


DISTINCT = [
    ("127.0.0.1:50052", "127.0.0.2:50052"),
    ("127.0.0.1:50052", "127.0.0.1:50053"),
    # Different addresses, however alike: a host may serve one and not the other.
    ("127.0.0.1:50052", "[::1]:50052"),
    ("10.0.0.1:50052", "[::ffff:10.0.0.2]:50052"),
]


@pytest.mark.parametrize(("a", "b"), DISTINCT)
def test_distinct_switches_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], a: str, b: str
) -> None:
    deploy = {"targets": [_target("s1", f"grpc://{a}"), _target("s2", f"grpc://{b}")]}
    check(write(tmp_path / "deploy.yaml", deploy), capsys, code=0)


def test_two_programs_on_one_switch_stay_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One writer per *program* (BF-Runtime binds a program to a client)."""
    deploy = {
        "targets": [
            _target("s1", "grpc://127.0.0.1:50052"),
            _target("s2", "grpc://localhost:50052", program="spie"),
        ]
    }
    check(write(tmp_path / "deploy.yaml", deploy), capsys, code=0)


def test_a_name_resolving_to_several_addresses_is_one_switch_with_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fake(host: str, *args: object, **kw: object) -> list[tuple[Any, ...]]:
        if host != "leaf1.example":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.1", 0)),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::ffff:10.0.0.9", 0, 0, 0)),
        ]

    monkeypatch.setattr(targets_module.socket, "getaddrinfo", fake)
    leaf = switch_identity("grpc://leaf1.example:50052")
    assert leaf.same_switch(switch_identity("grpc://10.0.0.1:50052"))
    assert leaf.same_switch(switch_identity("grpc://10.0.0.9:50052"))
    assert not leaf.same_switch(switch_identity("grpc://10.0.0.2:50052"))
    assert not leaf.same_switch(switch_identity("grpc://10.0.0.1:50053"))
    # tofino-model:// is BF-Runtime too: the same bf_switchd at that address.
    model = switch_identity("tofino-model://127.0.0.1:50052")
    assert model.same_switch(switch_identity("grpc://[::ffff:127.0.0.1]:50052"))
    # Not resolvable here: only its own spelling (case aside) is the same switch.
    other = switch_identity("grpc://leaf2.example:50052")
    assert other.same_switch(switch_identity("grpc://LEAF2.example.:50052"))
    assert not other.same_switch(leaf)


# ---- item 11's minors: leading zeros, DA-DCTCP's state ------------------------------


@pytest.mark.parametrize("text", ["000000000001.5", "01.5", "00", "007", "00.5"])
def test_a_set_number_with_a_leading_zero_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="alpha_per_s"):
        parse_number("alpha_per_s", text)


@pytest.mark.parametrize("text", ["0", "0.5", "1.5", "10", "100.25"])
def test_a_plain_set_number_is_taken(text: str) -> None:
    assert parse_number("x", text) == float(text)


@pytest.mark.parametrize("text", ["0003/0000", "03/0", "3/00", "00/0"])
def test_a_queue_with_a_leading_zero_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--queue"):
        parse_queues((text,))


def test_a_plain_queue_is_taken() -> None:
    assert parse_queues(("0/0", "3/0", "10/31")) == [(0, 0), (3, 0), (10, 31)]


@pytest.mark.parametrize(
    "args",
    [
        ("--program", "spie", "set", "alpha_per_s=000000000001.5"),
        ("--program", "aqm", "set", "max_p=0.1", "--queue", "0003/0000"),
        ("--program", "p4qcn", "set", "q_min_cells=11", "--queue", "0003/0000"),
    ],
    ids=["spie-alpha", "aqm-queue", "p4qcn-queue"],
)
def test_leading_zeros_on_the_command_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    state = tmp_path / "s.yaml"
    assert run(["--program", args[1], "--state", str(state), "status"]) == 0
    before = state.read_bytes() if state.exists() else None
    capsys.readouterr()
    assert run(["--state", str(state), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "leading zero" in err, err
    assert (state.read_bytes() if state.exists() else None) == before


def _dadctcp_app() -> DadctcpApp:
    return DadctcpApp(ModelSwitch("dadctcp", load_profile("tofino")), load_dadctcp(DADCTCP_DEFAULT))


def _spoil_port(key: str, value: object) -> Callable[[Raw], None]:
    return lambda live: live["ports"]["4"].update({key: value})


def _rekey_port(new: object) -> Callable[[Raw], None]:
    return lambda live: live.update(ports={new: live["ports"]["4"]})


def _spoil_queues(mutate: Callable[[Raw], object]) -> Callable[[Raw], None]:
    return lambda live: mutate(live["ports"]["4"]["k_packets"])


BAD_DADCTCP_LIVE = [
    ("unknown-top-key", lambda live: live.update(extra=1), "live.extra"),
    ("unknown-port-key", _spoil_port("weight", 3), "live.ports.4.weight"),
    ("port-with-space", _rekey_port(" 4"), "live.ports. 4"),
    ("port-leading-zero", _rekey_port("04"), "live.ports.04"),
    ("port-plus", _rekey_port("+4"), "live.ports.+4"),
    ("k-port-as-string", _spoil_port("k_port_packets", "80"), "live.ports.4.k_port_packets"),
    (
        "k-as-string",
        _spoil_queues(lambda ks: ks.update({"0": "20"})),
        "live.ports.4.k_packets.0",
    ),
    (
        "queue-with-space",
        _spoil_queues(lambda ks: ks.update({" 1": ks.pop("1")})),
        "live.ports.4.k_packets. 1",
    ),
    (
        "queue-twice",
        _spoil_queues(lambda ks: ks.update({1: ks["1"]})),
        "live.ports.4.k_packets",
    ),
]


@pytest.mark.parametrize(
    ("spoil", "field"), [c[1:] for c in BAD_DADCTCP_LIVE], ids=[c[0] for c in BAD_DADCTCP_LIVE]
)
def test_dadctcp_state_holds_only_what_the_app_writes(
    spoil: Callable[[Raw], None], field: str
) -> None:
    app = _dadctcp_app()
    good = app.live_state()
    bad = copy.deepcopy(good)
    spoil(bad)
    with pytest.raises(ConfigError) as exc:
        app.restore_live(bad)
    assert exc.value.field == field or exc.value.field.startswith(field), exc.value
    assert app.live_state() == good  # nothing half-restored
    app.restore_live(good)
    assert app.live_state() == good


def test_a_dadctcp_state_file_with_a_string_count_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reproduction through the CLI: "18" was taken as 18."""
    state = tmp_path / "s.yaml"
    base = ["--program", "dadctcp", "--state", str(state)]
    assert run([*base, "set", "k_port_packets=72", "--port", "4"]) == 0
    saved = yaml.safe_load(state.read_text())
    saved["live"]["ports"]["4"]["k_packets"]["0"] = "18"
    state.write_text(yaml.safe_dump(saved, sort_keys=False))
    before = state.read_bytes()
    capsys.readouterr()
    assert run([*base, "set", "drop_not_ect=true"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "k_packets" in err and "Traceback" not in err, err
    assert state.read_bytes() == before


# ---- the evaluation's simulated controllers keep their own pace -------------------


@pytest.mark.parametrize(
    ("scenario", "scheme", "app_name", "interval"),
    [
        ("pmqecn-dc", "pmqecn", "PmqecnApp", lambda cfg: cfg.optimizer.interval_s),
        ("dadctcp-dc", "dadctcp", "DadctcpApp", lambda cfg: cfg.interval_s),
    ],
)
def test_a_simulated_controller_runs_at_the_scenarios_interval(
    monkeypatch: pytest.MonkeyPatch,
    scenario: str,
    scheme: str,
    app_name: str,
    interval: Callable[[Any], float],
) -> None:
    """The floor spares a real switch's CPU; a simulated clock reads a model
    switch in no time, so pmqecn-dc's 2 ms and dadctcp-dc's 1 ms cycles stay."""
    from evaluation import schemes
    from evaluation.scenario import load_scenario
    from evaluation.topology import Topology

    s = load_scenario(scenario)
    base = getattr(schemes, app_name)
    configs: list[Any] = []

    class Recording(base):  # type: ignore[misc, valid-type]
        def __init__(self, switch: Any, config: Any) -> None:
            configs.append(config)
            super().__init__(switch, config)

    monkeypatch.setattr(schemes, app_name, Recording)
    setup = schemes.switch_setup(Topology(s), s.switches[0], scheme, load_profile(s.chip), 0)
    assert configs and interval(configs[0]) < MIN_CYCLE_INTERVAL_S
    assert interval(configs[0]) == pytest.approx(setup.interval_s)
