# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 13's acceptance table: malformed `tofcc --target model` inputs.

Each case runs the CLI's real entry point (`run`, what `main` exits with)
and asserts the documented exit code, that the message names the bad field
or file, that no traceback escaped, and that the model target's state file
is byte for byte what it was before the command.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bfrt_controller.bfcc.config import DEFAULT_CONFIG as BFCC_DEFAULT
from bfrt_controller.cli import run
from bfrt_controller.pmqecn.config import DEFAULT_CONFIG as PMQECN_DEFAULT
from bfrt_controller.programs import get_program
from tofcc_common import registry

Raw = dict[str, Any]


def _pmqecn() -> Raw:
    raw: Raw = yaml.safe_load(PMQECN_DEFAULT.read_text())
    return raw


def _bfcc() -> Raw:
    raw: Raw = yaml.safe_load(BFCC_DEFAULT.read_text())
    return raw


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    code: int
    names: tuple[str, ...]  # every one must appear in the message
    program: str = "pmqecn"
    # A file written to tmp/<name> before the run; "{tmp}" in args is the directory.
    # FIFO (below) as the content makes a named pipe.
    files: tuple[tuple[str, bytes], ...] = ()
    state: bytes | None = None  # replaces the state file's content first


FIFO = b"<fifo>"


def cfg(mutate: Callable[[Raw], object], base: Callable[[], Raw] = _pmqecn) -> bytes:
    raw = base()
    mutate(raw)
    return yaml.safe_dump(raw, sort_keys=False).encode()


def text_cfg(old: str, new: str, base: Path = PMQECN_DEFAULT) -> bytes:
    text = base.read_text()
    assert old in text, old
    return text.replace(old, new, 1).encode()


def apply_case(
    id: str, content: bytes, names: tuple[str, ...], program: str = "pmqecn", code: int = 2
) -> Case:
    prog = ("--program", program) if program != "pmqecn" else ()
    return Case(
        id,
        (*prog, "apply", "{tmp}/c.yaml"),
        code,
        ("c.yaml", *names),  # the file and the field
        program,
        files=(("c.yaml", content),),
    )


def set_param(id: str, *pairs: str, names: tuple[str, ...]) -> Case:
    return Case(id, ("--program", "bfcc", "set", *pairs), 2, names, "bfcc")


def cls(i: int, **changes: object) -> Callable[[Raw], None]:
    return lambda r: r["classes"][i].update(changes)


def scenario(mutate: Callable[[Raw], object]) -> bytes:
    from evaluation.scenario import SCENARIO_DIR

    raw: Raw = yaml.safe_load((SCENARIO_DIR / "bfcc-smoke.yaml").read_text())
    mutate(raw)
    return yaml.safe_dump(raw, sort_keys=False).encode()


def eval_check(id: str, content: bytes, names: tuple[str, ...]) -> Case:
    return Case(id, ("eval", "check", "{tmp}/s.yaml"), 2, names, files=(("s.yaml", content),))


GOOD_LIVE = {"threshold_cells": 20, "weight": 6, "target_rate_pps": 300000}


def pmqecn_state(live: dict[Any, Any], mutate: Callable[[Raw], object] = lambda r: None) -> bytes:
    """A state file whose config and live classes are valid but for `live`/`mutate`."""
    config = _pmqecn()
    mutate(config)
    return yaml.safe_dump({"program": "pmqecn", "config": config, "live": live}).encode()


def bfcc_state(params: dict[str, Any]) -> bytes:
    config = _bfcc()
    live = {"params": dict(config["params"], **params)}
    return yaml.safe_dump({"program": "bfcc", "config": config, "live": live}).encode()


def state_case(id: str, content: bytes, names: tuple[str, ...], program: str = "pmqecn") -> Case:
    prog = ("--program", program) if program != "pmqecn" else ()
    return Case(id, (*prog, "status"), 2, ("state file", *names), program, state=content)


DEEP = b"a: " + b"[" * 50_000 + b"]" * 50_000 + b"\n"

CASES = [
    # --- global options
    Case("target-port-too-big", ("--target", "grpc://host:99999", "status"), 2, ("--target",)),
    Case("target-port-zero", ("--target", "grpc://host:0", "status"), 2, ("--target",)),
    Case("target-no-host", ("--target", "grpc://:50052", "status"), 2, ("--target",)),
    Case("target-port-word", ("--target", "grpc://host:abc", "status"), 2, ("--target",)),
    Case("target-port-unicode", ("--target", "grpc://host:５００５２", "status"), 2, ("--target",)),
    Case("target-scheme", ("--target", "tcp://host:50052", "status"), 2, ("--target",)),
    Case("target-empty", ("--target", "", "status"), 2, ("--target",)),
    Case("program-unknown", ("--program", "nope", "status"), 2, ("--program",)),
    Case("client-id-negative", ("--client-id", "-1", "status"), 2, ("--client-id",)),
    Case("client-id-word", ("--client-id", "one", "status"), 2, ("--client-id",)),
    Case("client-id-huge", ("--client-id", str(2**40), "status"), 2, ("--client-id",)),
    Case("config-missing", ("--config", "{tmp}/none.yaml", "status"), 2, ("none.yaml",)),
    Case("config-directory", ("--config", "{tmp}", "status"), 2, ("directory",)),
    # --- set-threshold / set-weight
    Case("threshold-no-equals", ("set-threshold", "voice"), 2, ("set-threshold", "voice")),
    Case("threshold-no-class", ("set-threshold", "=5"), 2, ("set-threshold",)),
    Case("threshold-unknown-class", ("set-threshold", "nope=5"), 2, ("nope",)),
    Case("threshold-class-zero", ("set-threshold", "0=5"), 2, ("'0'",)),
    Case("threshold-superscript", ("set-threshold", "²=5"), 2, ("set-threshold", "²")),
    Case("threshold-arabic-digit", ("set-threshold", "voice=٣"), 2, ("set-threshold voice",)),
    Case("threshold-bool", ("set-threshold", "voice=true"), 2, ("set-threshold voice",)),
    Case("threshold-float", ("set-threshold", "voice=1.5"), 2, ("set-threshold voice",)),
    Case("threshold-exp", ("set-threshold", "voice=1e3"), 2, ("set-threshold voice",)),
    Case("threshold-nan", ("set-threshold", "voice=nan"), 2, ("set-threshold voice",)),
    Case("threshold-empty", ("set-threshold", "voice="), 2, ("set-threshold voice",)),
    Case("threshold-negative", ("set-threshold", "voice=-4"), 2, ("threshold_cells",)),
    Case("threshold-too-deep", ("set-threshold", "bulk=9999999"), 2, ("threshold_cells",)),
    Case("threshold-2-40", ("set-threshold", f"voice={2**40}"), 2, ("threshold_cells",)),
    Case("threshold-twice", ("set-threshold", "voice=5", "voice=6"), 2, ("voice", "twice")),
    Case("threshold-on-bfcc", ("--program", "bfcc", "set-threshold", "voice=5"), 2, ("--program",)),
    Case("weight-zero", ("set-weight", "voice=0"), 2, ("weight",)),
    Case("weight-too-big", ("set-weight", "voice=65536"), 2, ("weight",)),
    Case("weight-inf", ("set-weight", "voice=inf"), 2, ("set-weight voice",)),
    Case("weight-hex", ("set-weight", "voice=0x10"), 2, ("set-weight voice",)),
    # --- optimize
    Case("interval-nan", ("optimize", "--interval", "nan"), 2, ("--interval",)),
    Case("interval-inf", ("optimize", "--interval", "inf"), 2, ("--interval",)),
    Case("interval-minus-inf", ("optimize", "--interval", "-inf"), 2, ("--interval",)),
    Case("interval-1e308", ("optimize", "--interval", "1e308"), 2, ("--interval",)),
    Case("interval-zero", ("optimize", "--interval", "0"), 2, ("--interval",)),
    Case("interval-word", ("optimize", "--interval", "soon"), 2, ("--interval",)),
    Case("count-negative", ("optimize", "--interval", "1", "--count", "-1"), 2, ("--count",)),
    Case("count-without-interval", ("optimize", "--count", "3"), 2, ("--count",)),
    Case("optimize-on-bfcc", ("--program", "bfcc", "optimize", "--once"), 2, ("--program",)),
    # --- BFCC set
    set_param("set-no-equals", "t_min_us", names=("set", "t_min_us")),
    set_param("set-unknown", "nonsense=1", names=("nonsense",)),
    set_param(
        "set-wrong-unit", "threshold_cells=15", names=("threshold_cells", "threshold_packets")
    ),
    set_param("set-nan", "t_min_us=nan", names=("t_min_us",)),
    set_param("set-bool", "threshold_packets=true", names=("threshold_packets",)),
    set_param("set-zero", "threshold_packets=0", names=("threshold_packets",)),
    set_param("set-huge", f"threshold_packets={2**40}", names=("threshold_packets",)),
    set_param("set-inverted", "t_min_us=200000", names=("t_min_us",)),
    set_param("set-rt-u8", "rt1_packets=256", names=("rt1_packets",)),
    set_param("set-flag-2", "named_group_only=2", names=("named_group_only",)),
    set_param("set-refresh-short", "refresh_ns=5", names=("refresh_ns",)),
    set_param("set-twice", "rt1_packets=3", "rt1_packets=4", names=("rt1_packets", "twice")),
    Case("set-on-pmqecn", ("set", "rt1_packets=3"), 2, ("--program",)),
    # --- apply: files that are not YAML configs
    apply_case("apply-binary", b"\xff\xfe\x00\x01binary", ("c.yaml", "UTF-8")),
    apply_case("apply-deep", DEEP, ("c.yaml", "nesting")),
    apply_case("apply-empty", b"", ("c.yaml",)),
    apply_case("apply-list", b"- 1\n- 2\n", ("c.yaml",)),
    apply_case("apply-dup-key", text_cfg("classes:\n", "classes: []\nclasses:\n"), ("classes",)),
    Case("apply-directory", ("apply", "{tmp}"), 2, ("directory",)),
    Case("apply-missing", ("apply", "{tmp}/absent.yaml"), 2, ("absent.yaml",)),
    # --- apply: PMQECN fields
    apply_case("threshold-cells-true", cfg(cls(0, threshold_cells=True)), ("threshold_cells",)),
    apply_case("threshold-cells-str", cfg(cls(0, threshold_cells="20")), ("threshold_cells",)),
    apply_case("threshold-cells-float", cfg(cls(0, threshold_cells=20.0)), ("threshold_cells",)),
    apply_case("class-id-zero", cfg(cls(1, id=0)), ("classes[1].id",)),
    apply_case("class-name-empty", cfg(cls(1, name="")), ("classes[1].name",)),
    apply_case("class-vq-1024", cfg(cls(1, vq=1024)), ("classes[1].vq",)),
    apply_case("class-queue-40", cfg(cls(2, queue=40)), ("classes[2].queue",)),
    apply_case("class-dscp-64", cfg(cls(0, match={"dscp": 64})), ("classes[0].match.dscp",)),
    apply_case(
        "class-src-host-bits", cfg(cls(0, match={"src": "10.0.1.1/24"})), ("classes[0].match.src",)
    ),
    apply_case("class-mark-int", cfg(cls(2, mark_original=1)), ("classes[2].mark_original",)),
    apply_case(
        "objective-nan", cfg(cls(0, objective_weights=[float("nan"), 1])), ("objective_weights",)
    ),
    apply_case("classes-none", cfg(lambda r: r.update(classes=[])), ("classes",)),
    apply_case("unknown-key", cfg(lambda r: r.update(clases=[])), ("clases",)),
    apply_case("chip-unknown", cfg(lambda r: r.update(chip="tofino3")), ("chip",)),
    # --program named: the file is checked against it (without it, the
    # file's own `program:` decides; test_operator_cli.py).
    Case(
        "program-mismatch",
        ("--program", "pmqecn", "apply", "{tmp}/c.yaml"),
        2,
        ("c.yaml", "program"),
        "pmqecn",
        files=(("c.yaml", BFCC_DEFAULT.read_bytes()),),
    ),
    apply_case(
        "interval-s-inf",
        cfg(lambda r: r["optimizer"].update(interval_s=float("inf"))),
        ("optimizer.interval_s",),
    ),
    apply_case(
        "interval-s-1e308",
        cfg(lambda r: r["optimizer"].update(interval_s=1e308)),
        ("optimizer.interval_s",),
    ),
    apply_case(
        "service-rate-nan",
        cfg(lambda r: r["optimizer"].update(service_rate_pps=float("nan"))),
        ("optimizer.service_rate_pps",),
    ),
    apply_case(
        "service-rate-1e308",
        cfg(lambda r: r["optimizer"].update(service_rate_pps=1e308)),
        ("optimizer.service_rate_pps",),
    ),
    apply_case(
        "capacity-bool",
        cfg(lambda r: r["optimizer"].update(capacity_packets=True)),
        ("optimizer.capacity_packets",),
    ),
    apply_case(
        "trusted-duplicate", cfg(lambda r: r.update(trusted_ports=[5, 5])), ("trusted_ports[1]",)
    ),
    apply_case(
        "trusted-negative", cfg(lambda r: r.update(trusted_ports=[-1])), ("trusted_ports[0]",)
    ),
    apply_case(
        "route-prefix-duplicate",
        cfg(lambda r: r["routes"].append(dict(r["routes"][0], port=6))),
        ("routes[5].prefix",),
    ),
    apply_case(
        "route-to-recirculation",
        cfg(lambda r: r["routes"][0].update(port=68)),
        ("routes[0].port", "recirculation"),
    ),
    apply_case(
        "route-to-cpu", cfg(lambda r: r["routes"][0].update(port=64)), ("routes[0].port", "CPU")
    ),
    apply_case(
        "route-port-nonexistent",
        cfg(lambda r: r["routes"][0].update(port=100)),
        ("routes[0].port", "does not exist"),
    ),
    apply_case(
        "route-bad-mac",
        cfg(lambda r: r["routes"][0].update(dst_mac="00:00:00:00:01")),
        ("routes[0].dst_mac",),
    ),
    apply_case(
        "ports-duplicate",
        cfg(lambda r: r["ports"].append({"port": 1, "feedback_session": 14})),
        ("ports[3].port",),
    ),
    apply_case(
        "feedback-session-shared",
        cfg(lambda r: r["ports"][1].update(feedback_session=11)),
        ("ports[1].feedback_session",),
    ),
    apply_case(
        "feedback-session-range",
        cfg(lambda r: r["ports"][0].update(feedback_session=1016)),
        ("ports[0].feedback_session",),
    ),
    apply_case(
        "egress-port-recirculation",
        cfg(lambda r: r["scheduling"].update(egress_ports=[196])),
        ("scheduling.egress_ports[0]",),
    ),
    apply_case(
        "level-queue-negative",
        cfg(lambda r: r["scheduling"].update(level_queues=[-1])),
        ("scheduling.level_queues[0]",),
    ),
    # --- apply: BFCC fields
    apply_case(
        "bfcc-inverted-t",
        cfg(lambda r: r["params"].update(t_min_us=200000), _bfcc),
        ("params.t_min_us",),
        "bfcc",
    ),
    apply_case(
        "bfcc-trusted-duplicate",
        cfg(lambda r: r.update(trusted_ports=[1, 3, 1]), _bfcc),
        ("trusted_ports",),
        "bfcc",
    ),
    apply_case(
        "bfcc-threshold-bool",
        cfg(lambda r: r["params"].update(threshold_packets=True), _bfcc),
        ("params.threshold_packets",),
        "bfcc",
    ),
    # --- a corrupt state file: an error naming it, never "no state"
    Case("state-bad-yaml", ("status",), 2, ("state",), state=b"program: pmqecn\nconfig: {a: 1\n"),
    Case(
        "state-unknown-key",
        ("status",),
        2,
        ("state", "extra"),
        state=b"program: pmqecn\nconfig: {}\nlive: {}\nextra: 1\n",
    ),
    state_case("state-live-class-word", pmqecn_state({"x": GOOD_LIVE}), ("live.x",)),
    state_case("state-live-class-int-key", pmqecn_state({9: GOOD_LIVE}), ("live.9",)),
    state_case("state-live-class-unknown", pmqecn_state({"9": GOOD_LIVE}), ("live.9",)),
    state_case(
        "state-live-negative",
        pmqecn_state({"1": dict(GOOD_LIVE, threshold_cells=-1)}),
        ("live.1", "threshold_cells"),
    ),
    state_case(
        "state-live-too-deep",
        pmqecn_state({"1": dict(GOOD_LIVE, threshold_cells=9_999_999)}),
        ("live.1.threshold_cells",),
    ),
    state_case(
        "state-live-weight-bool",
        pmqecn_state({"1": dict(GOOD_LIVE, weight=True)}),
        ("live.1", "weight"),
    ),
    state_case(
        "state-live-sojourn-nan",
        pmqecn_state({"1": dict(GOOD_LIVE, sojourn_ns=float("nan"))}),
        ("live.1", "sojourn_ns"),
    ),
    state_case(
        "state-live-extra-field",
        pmqecn_state({"1": dict(GOOD_LIVE, bogus=1)}),
        ("live.1", "bogus"),
    ),
    state_case("state-live-not-mapping", pmqecn_state({"1": [1, 2]}), ("live.1",)),
    state_case(
        "state-config-bool",
        pmqecn_state({}, cls(0, threshold_cells=True)),
        ("classes[0].threshold_cells",),
    ),
    state_case(
        "state-bfcc-inverted",
        bfcc_state({"t_min_us": 200_000}),
        ("live.params.t_min_us",),
        "bfcc",
    ),
    state_case(
        "state-bfcc-param-float",
        bfcc_state({"rt1_packets": 2.5}),
        ("live.params", "rt1_packets"),
        "bfcc",
    ),
    Case("state-directory", ("--state", "{tmp}/state", "status"), 2, ("directory",)),
    Case("state-binary", ("status",), 2, ("state file", "UTF-8"), state=b"\x00\xff\xfebinary"),
    # --- scenarios through `tofcc eval check`
    eval_check(
        "scenario-rate-0",
        scenario(lambda r: r.update(link={"rate": "0bps"})),
        ("link.rate",),
    ),
    eval_check(
        "scenario-rate-half",
        scenario(lambda r: r.update(link={"rate": "0.5bps"})),
        ("link.rate",),
    ),
    eval_check(
        "scenario-delay-inf",
        scenario(lambda r: r.update(link={"delay_us": float("inf")})),
        ("link.delay_us",),
    ),
    eval_check(
        "scenario-delay-1e308",
        scenario(lambda r: r.update(link={"delay_us": 1e308})),
        ("link.delay_us",),
    ),
    Case(
        "eval-out-not-a-directory",
        ("eval", "run", "bfcc-smoke", "--scheme", "none", "--out", "{tmp}/s.yaml/x"),
        2,
        ("--out",),
        files=(("s.yaml", b"a file, not a directory"),),
    ),
    Case(
        "eval-unknown-scheme", ("eval", "run", "bfcc-smoke", "--scheme", "bogus"), 2, ("--scheme",)
    ),
    Case("eval-unknown-scenario", ("eval", "check", "no-such-scenario"), 2, ("no-such-scenario",)),
    eval_check(
        "scenario-bfcc-inverted",
        scenario(lambda r: r["schemes"].update(bfcc={"t_min_us": 9, "t_max_us": 5})),
        ("schemes.bfcc", "t_min_us"),
    ),
    eval_check("scenario-binary", b"\x00\xffnot text", ("s.yaml", "UTF-8")),
    eval_check("scenario-deep", DEEP, ("s.yaml", "nesting")),
    eval_check(
        "scenario-dup-key",
        scenario(lambda r: None).replace(b"\nflows:", b"\nflows: []\nflows:", 1),
        ("s.yaml", "duplicate key 'flows'"),
    ),
    Case("scenario-directory", ("eval", "check", "{tmp}"), 2, ("directory",)),
    # Valid as a scenario, refused by the controller that `eval run` configures:
    # `eval check` builds every scheme's switches, so it is refused there.
    eval_check(
        "scenario-bfcc-threshold-unreachable",
        scenario(lambda r: r["schemes"].update(bfcc={"threshold_packets": 10**9})),
        ("s.yaml", "schemes.bfcc", "threshold_packets"),
    ),
    eval_check(
        "scenario-bfcc-t-max-u32",
        scenario(lambda r: r["schemes"].update(bfcc={"t_max_us": 2**40})),
        ("s.yaml", "schemes.bfcc", "t_max_us"),
    ),
    eval_check("scenario-seed-bool", scenario(lambda r: r.update(seed=True)), ("seed",)),
]


# The programs' `set` pairs a user's state file holds (below: SETTABLE_EXAMPLE,
# another change of the same parameter).
FIRST_SET = {
    "bfcc": "rt1_packets=8",
    "p4qcn": "q_max_cells=300",
    "dadctcp": "k_port_packets=90",
    "aqm": "max_p=0.1",
    "spie": "alpha_per_s=0.2",
}


def good_state_args(program: str) -> tuple[str, ...]:
    """The tofcc arguments that leave `program`'s state file holding one
    change, as a user would have it: PMQECN's set-threshold, the program's
    `set`; a program with neither here (one added since) applies its default."""
    if program == "pmqecn":
        return ("set-threshold", "voice=33")
    if program in FIRST_SET:
        return ("--program", program, "set", FIRST_SET[program])
    return ("--program", program, "apply", str(get_program(program).default_config))


# ---- issue 37 -------------------------------------------------------------------


def _default(program: str) -> Raw:
    raw: Raw = yaml.safe_load(get_program(program).default_config.read_text())
    return raw


def prog_set(program: str, id: str, *args: str, names: tuple[str, ...]) -> Case:
    return Case(f"{program}-{id}", ("--program", program, "set", *args), 2, names, program)


def prog_apply(program: str, id: str, content: bytes, names: tuple[str, ...]) -> Case:
    return apply_case(f"{program}-{id}", content, names, program)


def yaml_int(program: str, path: str, text: str) -> bytes:
    """The program's default config with one integer written as `text`."""
    raw = _default(program)
    *parents, last = path.split(".")
    node: Any = raw
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[last] = "@@"
    return yaml.safe_dump(raw, sort_keys=False).replace("'@@'", text).encode()


def bomb(levels: int) -> bytes:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return ("\n".join(lines) + "\n").encode()


def deploy(targets: list[Raw], **extra: Any) -> bytes:
    return yaml.safe_dump({"targets": targets, **extra}, sort_keys=False).encode()


def deploy_case(id: str, content: bytes, names: tuple[str, ...]) -> Case:
    return Case(
        f"deploy-{id}",
        ("apply", "{tmp}/d.yaml"),
        2,
        ("d.yaml", *names),
        files=(("d.yaml", content),),
    )


def model_target(program: str = "pmqecn", **kw: Any) -> Raw:
    return {"name": "s1", "target": "model", "program": program, **kw}


# Every program whose config is there (the cases are built at import; one
# without its config yet fails test_enough_cases, not the collection).
EVERY = tuple(p for p, s in registry.PROGRAMS.items() if registry.importable(s.config))
SETTABLE_EXAMPLE = {
    "bfcc": "rt1_packets=9",
    "p4qcn": "q_max_cells=250",
    "dadctcp": "k_port_packets=70",
    "aqm": "max_p=0.2",
    "spie": "alpha_per_s=0.3",
}

CASES += [
    # 1. another program's state file is never overwritten
    *(
        Case(
            f"clobber-{owner}-state-by-{other}",
            ("--program", other, "set", SETTABLE_EXAMPLE[other]),
            2,
            ("state file", "program", owner),
            owner,
        )
        for owner, other in (
            ("pmqecn", "bfcc"),
            ("bfcc", "aqm"),
            ("aqm", "spie"),
            ("spie", "p4qcn"),
            ("p4qcn", "dadctcp"),
            ("dadctcp", "bfcc"),
        )
    ),
    Case(
        "clobber-by-apply-of-another-program",
        ("--program", "bfcc", "apply", "{tmp}/c.yaml"),
        2,
        ("state file", "program", "pmqecn"),
        files=(("c.yaml", BFCC_DEFAULT.read_bytes()),),
    ),
    Case(
        "clobber-by-set-threshold",
        ("set-threshold", "voice=5"),
        2,
        ("state file", "program"),
        "bfcc",
        state=None,
    ),
    state_case(
        "state-program-unknown",
        pmqecn_state({}).replace(b"program: pmqecn", b"program: nosuch"),
        ("program", "nosuch"),
    ),
    # 2. text with rich markup is text: exit 2 naming it, never a MarkupError (exit 1)
    Case("markup-threshold-class", ("set-threshold", "[/x]=30"), 2, ("[/x]",)),
    Case("markup-threshold-value", ("set-threshold", "voice=[/x]"), 2, ("[/x]",)),
    *(prog_set(p, "markup-name", "[/x]=1", names=("[/x]",)) for p in SETTABLE_EXAMPLE),
    *(
        prog_set(p, "markup-value", f"{SETTABLE_EXAMPLE[p].split('=')[0]}=[/x]", names=("[/x]",))
        for p in SETTABLE_EXAMPLE
    ),
    Case("markup-path-kept", ("apply", "{tmp}/[prod]/missing.yaml"), 2, ("[prod]/missing.yaml",)),
    # 5. files that are not regular, too big, or an alias bomb
    Case("apply-dev-zero", ("apply", "/dev/zero"), 2, ("/dev/zero", "regular file")),
    Case("apply-dev-urandom", ("apply", "/dev/urandom"), 2, ("/dev/urandom", "regular file")),
    Case(
        "apply-fifo",
        ("apply", "{tmp}/p.yaml"),
        2,
        ("p.yaml", "regular file"),
        files=(("p.yaml", FIFO),),
    ),
    Case(
        "config-fifo",
        ("--config", "{tmp}/p.yaml", "status"),
        2,
        ("p.yaml",),
        files=(("p.yaml", FIFO),),
    ),
    apply_case("apply-huge", b"- 1\n" * 1_500_000, ("larger than",)),
    apply_case("apply-alias-bomb", bomb(9), ("alias",)),
    apply_case("apply-alias-recursive", b"a: &a [*a]\n", ("alias",)),
    # 7. options a program's `set` does not take are refused, naming them
    prog_set("p4qcn", "port", "--port", "3", "q_max_cells=250", names=("--port",)),
    prog_set("aqm", "port", "--port", "3", "max_p=0.2", names=("--port",)),
    prog_set("dadctcp", "queue", "--queue", "4/0", "mode=dctcp", names=("--queue",)),
    prog_set("spie", "port", "--port", "3", "alpha_per_s=0.3", names=("--port",)),
    prog_set("spie", "queue", "--queue", "3/0", "alpha_per_s=0.3", names=("--queue",)),
    prog_set("bfcc", "port", "--port", "3", "rt1_packets=9", names=("--port",)),
    prog_set("bfcc", "queue", "--queue", "3/0", "rt1_packets=9", names=("--queue",)),
    # 8. bounds
    prog_set("aqm", "max-th-2-32", f"max_th_cells={2**32}", names=("max_th_cells",)),
    prog_set("aqm", "max-th-over-queue", "max_th_cells=1000000", names=("max_th_cells",)),
    prog_set("aqm", "max-p-tiny", "max_p=0.000000000001", names=("max_p",)),
    prog_apply(
        "aqm",
        "apply-max-th-over-queue",
        cfg(lambda r: r["queues"][0].update(max_th_cells=1_000_000), lambda: _default("aqm")),
        ("queues[0].max_th_cells",),
    ),
    prog_apply(
        "aqm",
        "apply-max-p-tiny",
        cfg(lambda r: r["queues"][0].update(max_p=1e-12), lambda: _default("aqm")),
        ("queues[0].max_p",),
    ),
    apply_case("class-priority-2-70", cfg(cls(0, priority=2**70)), ("classes[0].priority",)),
    apply_case("class-priority-2-32", cfg(cls(0, priority=2**32)), ("classes[0].priority",)),
    prog_set("spie", "stale-before-update", "stale_after_us=1000", names=("stale_after_us",)),
    prog_apply(
        "spie",
        "apply-stale-before-update",
        cfg(lambda r: r["pie"].update(stale_after_us=1000), lambda: _default("spie")),
        ("pie", "stale_after_us"),
    ),
    state_case(
        "state-live-weight-missing",
        pmqecn_state({"1": {"threshold_cells": 20, "target_rate_pps": 300000}}),
        ("live.1", "weight"),
    ),
    Case("threshold-minus-zero", ("set-threshold", "voice=-0"), 2, ("set-threshold voice",)),
    Case("threshold-leading-zero", ("set-threshold", "voice=020"), 2, ("set-threshold voice",)),
    prog_set("bfcc", "minus-zero", "rt1_packets=-0", names=("rt1_packets",)),
    # YAML 1.1 numbers the CLI refuses are refused in files too
    apply_case(
        "yaml-sexagesimal",
        text_cfg("threshold_cells: 20", "threshold_cells: 1:20"),
        ("classes[0].threshold_cells",),
    ),
    apply_case(
        "yaml-hex",
        text_cfg("threshold_cells: 20", "threshold_cells: 0x14"),
        ("classes[0].threshold_cells",),
    ),
    apply_case(
        "yaml-underscore",
        text_cfg("threshold_cells: 20", "threshold_cells: 2_0"),
        ("classes[0].threshold_cells",),
    ),
    prog_apply(
        "p4qcn",
        "yaml-hex",
        yaml_int("p4qcn", "queues.0.q_max_cells", "0xD1"),
        ("queues[0].q_max_cells",),
    ),
    prog_apply(
        "dadctcp",
        "yaml-sexagesimal",
        yaml_int("dadctcp", "ports.0.k_port_packets", "1:20"),
        ("ports[0].k_port_packets",),
    ),
    prog_apply(
        "aqm",
        "yaml-underscore",
        yaml_int("aqm", "queues.0.max_th_cells", "2_85"),
        ("queues[0].max_th_cells",),
    ),
    prog_apply(
        "spie", "yaml-hex", yaml_int("spie", "sketch.columns", "0x400"), ("sketch.columns",)
    ),
    prog_apply(
        "bfcc",
        "yaml-sexagesimal",
        yaml_int("bfcc", "params.rt1_packets", "1:9"),
        ("params.rt1_packets",),
    ),
    # 9. exit codes and messages
    Case("set-empty-name", ("--program", "spie", "set", "="), 2, ("set", "'='"), "spie"),
    Case("bfcc-set-empty-name", ("--program", "bfcc", "set", "=5"), 2, ("set", "'=5'"), "bfcc"),
    Case(
        "state-under-a-file",
        ("--state", "{tmp}/f/x", "set-threshold", "voice=5"),
        2,
        ("f is a file",),
        files=(("f", b"a file"),),
    ),
    Case(
        "status-state-under-a-file",
        ("--state", "{tmp}/f/x", "status"),
        2,
        ("f is a file",),
        files=(("f", b"a file"),),
    ),
    # every program: a corrupt state file, a bad config, a bad pair
    *(
        state_case(
            f"{p}-state-config-list",
            yaml.safe_dump({"program": p, "config": [1], "live": {}}).encode(),
            ("config",),
            p,
        )
        for p in EVERY
    ),
    *(
        prog_apply(
            p, "unknown-key", cfg(lambda r: r.update(bogus=1), lambda p=p: _default(p)), ("bogus",)
        )
        for p in EVERY
        if p != "pmqecn"
    ),
    *(prog_set(p, "unknown-name", "bogus=1", names=("bogus",)) for p in SETTABLE_EXAMPLE),
    # deployment files
    deploy_case(
        "metrics-address",
        deploy([model_target()], metrics={"address": "my host"}),
        ("metrics.address",),
    ),
    deploy_case(
        "metrics-port-hex",
        deploy([model_target()]).replace(b"targets:", b"metrics: {port: 0x14}\ntargets:"),
        ("metrics.port",),
    ),
    deploy_case(
        "target-config-dev-zero",
        deploy([model_target(config="/dev/zero")]),
        ("targets[0].config", "/dev/zero"),
    ),
    Case(
        "deploy-target-config-bomb",
        ("apply", "{tmp}/d.yaml"),
        2,
        ("d.yaml", "targets[0].config", "b.yaml", "alias"),
        files=(("d.yaml", deploy([model_target(config="b.yaml")])), ("b.yaml", bomb(9))),
    ),
    *(
        deploy_case(
            f"{p}-inline-bad",
            deploy([model_target(p, config={**_default(p), "bogus": 1})]),
            ("targets[0].config", "bogus"),
        )
        for p in EVERY
    ),
    deploy_case("alias-bomb", bomb(9) + b"targets: *l9\n", ("alias",)),
    deploy_case(
        "target-interval-sexagesimal",
        deploy([model_target()]).replace(
            b"program: pmqecn", b"program: pmqecn\n  interval_s: 1:20"
        ),
        ("targets[0].interval_s",),
    ),
]


@pytest.fixture(scope="module")
def good_states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A state file per program holding one change, as a user would have."""
    out = {}
    for program in EVERY:
        state = tmp_path_factory.mktemp(program) / "state.yaml"
        assert run(["--state", str(state), *good_state_args(program)]) == 0
        out[program] = state.read_bytes()
    return out


def test_enough_cases() -> None:
    assert len(CASES) >= 60
    # Every program has its own cases (issue 37: p4qcn, dadctcp, aqm and spie had none).
    assert {c.program for c in CASES} == set(registry.PROGRAMS)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_input(
    case: Case, tmp_path: Path, good_states: dict[str, bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state" / "model.yaml"
    state.parent.mkdir()
    before = case.state if case.state is not None else good_states[case.program]
    state.write_bytes(before)
    for name, content in case.files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        if content == FIFO:
            os.mkfifo(tmp_path / name)
        else:
            (tmp_path / name).write_bytes(content)
    args = [a.replace("{tmp}", str(tmp_path)) for a in case.args]
    capsys.readouterr()

    code = run(["--state", str(state), *args])

    captured = capsys.readouterr()
    message = " ".join((captured.out + captured.err).split())
    assert code == case.code, message
    assert "Traceback" not in message
    for name in case.names:
        assert name in message, f"{name!r} not in {message!r}"
    assert state.read_bytes() == before
    assert sorted(p.name for p in state.parent.iterdir()) in (
        ["model.yaml"],
        ["model.yaml", "model.yaml.lock"],
    )


def test_a_broken_installed_profile_is_a_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import hw_profiles

    broken = tmp_path / "tofino.yaml"
    broken.write_text("chip: tofino\npipes: 2\n")
    monkeypatch.setattr(hw_profiles, "PROFILE_DIR", tmp_path)
    hw_profiles.load_profile.cache_clear()
    try:
        code = run(["--state", str(tmp_path / "s.yaml"), "status"])
    finally:
        hw_profiles.load_profile.cache_clear()
    out = capsys.readouterr().err  # errors go to stderr (issue 37)
    assert code == 1 and "hardware profile" in out and "tofino.yaml" in out, out
    assert not (tmp_path / "s.yaml").exists()
