"""Every YAML file the project reads goes through tofcc_common.safe_yaml, so each
loader reports these inputs as its own error naming the file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bfrt_controller.errors import ConfigError
from bfrt_controller.validation import load_yaml
from evaluation.scenario import ScenarioError, load_scenario
from hw_profiles import ProfileError, load_profile_file
from models.vectors.format import VectorFormatError, load_vector_file
from tofcc_common import safe_yaml

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
    assert safe_yaml.loads("[0, -0, 10, 0x1f, 1_000, 0.5, '0009', 00:00:00:00:05:fe]") == [
        0,
        0,
        10,
        31,
        1000,
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
