# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every YAML file the project reads goes through hw_profiles.safe_yaml, so each
loader reports these inputs as its own error naming the file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bfrt_controller.errors import ConfigError
from bfrt_controller.validation import load_yaml
from evaluation.scenario import ScenarioError, load_scenario
from hw_profiles import ProfileError, load_profile_file, safe_yaml
from models.vectors.format import VectorFormatError, load_vector_file
from tests.yaml_work import counted

BAD: list[tuple[bytes, str]] = [
    (b"a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first on line 1)"),
    (b"outer:\n  x: 1\n  x: 2\n", "duplicate key 'x'"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
    (b"[" * 50_000 + b"]" * 50_000, "nesting deeper than"),
    (b"a: [1, 2\n", "not valid YAML"),
    # YAML 1.1 would read these as 8 and as the text "0009" (an int field
    # then takes 9): a port number written with a leading zero is a slip.
    (b"sport: 010\n", "'010' has a leading zero"),
    (b"udp: {sport: 0009}\n", "'0009' has a leading zero"),
    (b"n: -007\n", "'-007' has a leading zero"),
]


@pytest.mark.parametrize(("content", "reason"), BAD)
def test_strict_loader_refuses_with_the_file_named(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(content)
    with pytest.raises(safe_yaml.YamlFileError, match=re.escape(reason)) as err:
        safe_yaml.load_file(path)
    assert str(err.value).startswith(str(path))


def test_directories_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(safe_yaml.YamlFileError, match="is a directory"):
        safe_yaml.load_file(tmp_path)
    with pytest.raises(safe_yaml.YamlFileError, match="no such file"):
        safe_yaml.load_file(tmp_path / "absent.yaml")


def test_ordinary_documents_still_load() -> None:
    assert safe_yaml.loads("a: 1\nb: [x, {c: 2}]\n") == {"a": 1, "b": ["x", {"c": 2}]}
    assert safe_yaml.loads("") is None
    # Hex and digit groups are text (YAML 1.2's decimals, the CLI's rule): an
    # integer field refuses them by name.
    assert safe_yaml.loads("[0, -0, 10, 0x1f, 1_000, 0.5, '0009', 00:00:00:00:05:fe]") == [
        0,
        0,
        10,
        "0x1f",
        "1_000",
        0.5,
        "0009",
        "00:00:00:00:05:fe",
    ]
    assert safe_yaml.loads("- {a: 1}\n- {a: 1}\n") == [{"a": 1}, {"a": 1}]  # equal items ok
    merged = safe_yaml.loads("base: &b {x: 1, y: 2}\nuse: {<<: *b, y: 3}\n")
    assert merged["use"] == {"x": 1, "y": 3}  # a merge's override is not a duplicate


@pytest.mark.parametrize(
    ("loader", "error"),
    [
        (load_yaml, ConfigError),
        (load_profile_file, ProfileError),
        (load_vector_file, VectorFormatError),
        (load_scenario, ScenarioError),
    ],
)
@pytest.mark.parametrize(("content", "reason"), BAD[:3])
def test_every_loader_turns_them_into_its_own_error(
    tmp_path: Path, loader: object, error: type[Exception], content: bytes, reason: str
) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(content)
    with pytest.raises(error, match=reason.split(" (")[0]) as err:
        loader(path)  # type: ignore[operator]
    assert str(path) in str(err.value)


# ---- issue 37: hostile files ------------------------------------------------------


def _bomb(levels: int) -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_anything_walks_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with (
        counted(monkeypatch) as work,
        pytest.raises(safe_yaml.YamlFileError, match=r"bomb\.yaml: .*alias"),
    ):
        safe_yaml.loads(_bomb(9), "bomb.yaml")
    assert work.built == 0  # 9**10 values, had anything expanded them


def test_aliases_that_share_a_little_are_still_read() -> None:
    data = safe_yaml.loads("base: &b {x: 1}\nuse: [*b, *b]\nmerged: {<<: *b, y: 2}\n")
    assert data["use"] == [{"x": 1}, {"x": 1}] and data["merged"] == {"x": 1, "y": 2}


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(safe_yaml.YamlFileError, match="recursive"):
        safe_yaml.loads("a: &a [1, *a]\n", "r.yaml")


@pytest.mark.parametrize("text", ["1:20", "0x14", "0o17", "0b101", "2_0", "1_000.5", "+0x1"])
def test_yaml_1_1_numbers_are_text_for_a_number_field_to_refuse(text: str) -> None:
    """YAML 1.1 read 1:20 as 80 and 0x14 as 20; the CLI takes neither."""
    assert safe_yaml.loads(f"a: {text}\n") == {"a": text}


@pytest.mark.parametrize(
    ("text", "value"), [("20", 20), ("-3", -3), ("0", 0), ("1.5", 1.5), (".inf", float("inf"))]
)
def test_decimal_numbers_are_numbers(text: str, value: object) -> None:
    assert safe_yaml.loads(f"a: {text}\n") == {"a": value}


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_is_refused_before_a_byte_is_read(path: str) -> None:
    with pytest.raises(safe_yaml.YamlFileError, match=f"{path}: is not a regular file"):
        safe_yaml.load_file(path)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    with pytest.raises(safe_yaml.YamlFileError, match=r"pipe\.yaml: is not a regular file"):
        safe_yaml.load_file(fifo)


def test_a_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"- 1\n" * (safe_yaml.MAX_FILE_BYTES // 4 + 1))
    with pytest.raises(safe_yaml.YamlFileError, match=r"big\.yaml: larger than"):
        safe_yaml.load_file(big)


def test_a_path_with_a_nul_byte_is_a_yaml_file_error() -> None:
    with pytest.raises(safe_yaml.YamlFileError, match="NUL"):
        safe_yaml.load_file("bad\0name.yaml")


def test_vectors_may_write_masks_in_hex_and_nothing_else_may() -> None:
    assert safe_yaml.loads("m: 0xFFFFFFC0\n", hex_ints=True) == {"m": 0xFFFFFFC0}
    assert safe_yaml.loads("m: 0xFFFFFFC0\n") == {"m": "0xFFFFFFC0"}
    assert safe_yaml.loads("m: 1:20\n", hex_ints=True) == {"m": "1:20"}
