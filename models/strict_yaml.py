"""The one YAML reader every tofino-cc file goes through.

PyYAML's safe loader keeps the last of two equal keys, so a second
`classes:` silently replaces the first; it raises RecursionError on deep
nesting and UnicodeDecodeError on binary files. Every loader (profiles,
controller configs, state, vectors, scenarios) must turn each of those into
its own documented error naming the file, so they all read through here and
catch one exception type.
"""

from __future__ import annotations

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
