"""The one YAML reader every tofino-cc file goes through.

PyYAML's safe loader keeps the last of two equal keys, so a second
`classes:` silently replaces the first; it raises RecursionError on deep
nesting and UnicodeDecodeError on binary files. Every loader (profiles,
controller configs, state, vectors, scenarios) must turn each of those into
its own documented error naming the file, so they all read through here and
catch one exception type.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

# Far beyond any file this project writes, far below Python's recursion limit.
MAX_DEPTH = 64


class YamlFileError(ValueError):
    """A file could not be read as YAML; the message names the file."""

    def __init__(self, path: str | Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.reason = message


class _StrictLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base` then overriding a key is what merges are for
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            try:
                duplicate = key in seen
            except TypeError:  # unhashable key: SafeLoader reports it below
                continue
            if duplicate:
                first = seen[key].start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first on line {first})",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        # YAML 1.1 reads 010 as 8 and 0009 as the string "0009" (which a lax
        # int field then takes as 9): in a vector or config a leading zero is a
        # slip, never an octal number, so both are refused.
        text = str(node.value).replace("_", "").lstrip("+-")
        if len(text) > 1 and text[0] == "0" and text[1].isdigit():
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{node.value!r} has a leading zero (YAML 1.1 reads it as octal or as text):"
                " write the decimal number",
                node.start_mark,
            )
        return super().construct_yaml_int(node)  # type: ignore[no-untyped-call, no-any-return]


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)
# Digits with a leading zero that are not valid octal ("0009") resolve as
# text in YAML 1.1; route them through the int constructor so they are
# refused like "010" rather than read as a string.
_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?0[0-9_]+$"), list("-+0")
)


def _check_depth(node: yaml.Node) -> None:
    stack: list[tuple[yaml.Node, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise yaml.YAMLError(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(current, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in current.value)
        elif isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))


def loads(text: str, source: str | Path = "<string>") -> Any:
    """Parse one YAML document strictly; errors name `source`."""
    try:
        loader = _StrictLoader(text)
        try:
            node = loader.get_single_node()  # type: ignore[no-untyped-call]
            if node is None:
                return None
            _check_depth(node)
            return loader.construct_document(node)  # type: ignore[no-untyped-call]
        finally:
            loader.dispose()  # type: ignore[no-untyped-call]
    except RecursionError:
        raise YamlFileError(source, f"not valid YAML: nesting deeper than {MAX_DEPTH}") from None
    except yaml.YAMLError as exc:
        raise YamlFileError(source, f"not valid YAML: {exc}") from None


def load_file(path: str | Path) -> Any:
    """Read and parse `path`; every way it can fail is a YamlFileError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise YamlFileError(path, "no such file") from None
    except IsADirectoryError:
        raise YamlFileError(path, "is a directory, not a file") from None
    except OSError as exc:
        raise YamlFileError(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlFileError(path, f"not UTF-8 text (byte {exc.start})") from None
    return loads(text, path)
