# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from models.vectors.format import VectorFormatError, load_vector_file, parse_vector_file

GOOD: dict[str, Any] = {
    "program": "pmqecn",
    "vectors": [
        {
            "name": "one",
            "description": "d",
            "steps": [
                {
                    "send": {
                        "port": 1,
                        "packet": {
                            "eth": {"dst": "00:00:00:00:00:01", "src": "00:00:00:00:00:02"},
                            "ipv4": {"src": "10.0.0.1", "dst": "10.0.0.2"},
                            "udp": {"sport": 1, "dport": 2},
                        },
                    },
                    "expect": [],
                }
            ],
        },
        {
            "name": "two",
            "description": "d",
            "setup": {
                "tables": [
                    {
                        "table": "SwitchIngress.forward.ipv4_lpm",
                        "key": {"hdr.ipv4.dst_addr": "10.0.0.0/8"},
                        "action": "SwitchIngress.forward.drop",
                    }
                ]
            },
            "steps": [
                {
                    "send": {"port": 1, "packet": {"hex": "00"}},
                    "expect": [],
                }
            ],
        },
    ],
}


def _error(mutate: Any) -> str:
    raw = copy.deepcopy(GOOD)
    mutate(raw)
    with pytest.raises(VectorFormatError) as exc:
        parse_vector_file(raw, "f.yaml")
    return str(exc.value)


def test_good_file_parses() -> None:
    vf = parse_vector_file(copy.deepcopy(GOOD), "f.yaml")
    key = vf.vectors[1].setup.tables[0].key["hdr.ipv4.dst_addr"]
    assert (key.value, key.prefix_len) == (0x0A000000, 8)


@pytest.mark.parametrize(
    ("mutate", "fragments"),
    [
        (
            lambda r: r["vectors"][1]["steps"][0]["send"].update(port=900),
            ["f.yaml", "vector 'two'", "steps.0.send.port"],
        ),
        (
            lambda r: r["vectors"][0]["steps"][0].update(expcet=[]),
            ["vector 'one'", "steps.0.expcet", "Extra inputs"],
        ),
        (
            lambda r: r["vectors"][0]["steps"][0]["send"]["packet"]["ipv4"].update(
                src="10.0.0.300"
            ),
            ["vector 'one'", "packet.ipv4.src"],
        ),
        (
            lambda r: r["vectors"][1]["setup"]["tables"][0]["key"].update(
                {"hdr.ipv4.dst_addr": "10.0.0.0/99"}
            ),
            ["vector 'two'", "setup.tables.0.key"],
        ),
        (lambda r: r["vectors"][0].pop("steps"), ["vector 'one'", "field steps"]),
        (lambda r: r["vectors"][1].update(name="one"), ["duplicate vector name 'one'"]),
        (lambda r: r["vectors"][0].update(name="Bad Name"), ["vector 'Bad Name'", "field name"]),
        (
            lambda r: r["vectors"][0]["steps"][0]["send"]["packet"].update(
                tcp={"sport": 1, "dport": 2}
            ),
            ["vector 'one'", "tcp and udp are exclusive"],
        ),
        (lambda r: r.pop("program"), ["f.yaml", "field program"]),
        (
            lambda r: r["vectors"][0]["steps"][0]["send"]["packet"].update(payload_len=2**40),
            ["vector 'one'", "packet.payload_len", "16384"],
        ),
        (
            lambda r: r["vectors"][0]["steps"][0]["send"]["packet"]["ipv4"].update(options="zz"),
            ["vector 'one'", "packet.ipv4.options", "not hex"],
        ),
        (
            lambda r: r["vectors"][0]["steps"][0]["send"]["packet"]["ipv4"].update(options="0101"),
            ["vector 'one'", "packet.ipv4.options", "4-byte words"],
        ),
        (
            lambda r: r["vectors"][0]["steps"][0]["send"]["packet"]["ipv4"].update(
                options="01" * 44
            ),
            ["vector 'one'", "packet.ipv4.options", "more than 40"],
        ),
        (
            lambda r: r["vectors"][0]["steps"][0]["send"]["packet"].update(payload="0g"),
            ["vector 'one'", "not hex"],
        ),
        (
            lambda r: r["vectors"][1]["steps"][0]["send"]["packet"].update(hex="00" * 20000),
            ["vector 'two'", "more than 16384"],
        ),
    ],
)
def test_malformed_names_file_vector_and_field(mutate: Any, fragments: list[str]) -> None:
    message = _error(mutate)
    for fragment in fragments:
        assert fragment in message, message


def test_invalid_yaml_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("program: [unclosed\n")
    with pytest.raises(VectorFormatError, match="not valid YAML"):
        load_vector_file(path)


def test_anchor_keys_are_ignored(tmp_path: Path) -> None:
    raw = copy.deepcopy(GOOD)
    raw["x-packets"] = [{"anything": 1}]
    path = tmp_path / "v.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert len(load_vector_file(path).vectors) == 2
