"""The one YAML reader every tofino-cc file goes through.

PyYAML's safe loader keeps the last of two equal keys, so a second
`classes:` silently replaces the first; it raises RecursionError on deep
nesting and UnicodeDecodeError on binary files. Every loader (profiles,
controller configs, state, vectors, scenarios) must turn each of those into
its own documented error naming the file, so they all read through here and
catch one exception type.

It is also the project's guard against hostile files: a path that is not a
regular file (/dev/zero, a FIFO) is refused before a byte is read, a file
over MAX_FILE_BYTES is refused, and aliases are bounded (count, and the size
and depth of the tree they expand to) on the composed graph, before anything
walks the expanded tree: a 1 KB "billion laughs" file otherwise cost seconds
of CPU per level. Scalars follow YAML 1.2's core schema for integers, the
rule the CLI uses (plain decimal digits): YAML 1.1's 1:20 (80), 0x14 and
2_0 stay text, which every integer field then refuses by name.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

# Far beyond any file this project writes, far below Python's recursion limit.
MAX_DEPTH = 64
# Ten times the largest file the project ships (vectors, ~100 KB): a size
# where parsing still takes well under a second.
MAX_FILE_BYTES = 2 * 1024 * 1024
# Anchors are for sharing a few frames or a base config, not for building trees.
MAX_ALIASES = 1_000
# Nodes the aliases may add to the tree when expanded (what any later walk,
# pydantic's included, visits once per expansion).
MAX_ALIAS_EXPANSION_NODES = 100_000


class YamlFileError(ValueError):
    """A file could not be read as YAML; the message names the file."""

    def __init__(self, path: str | Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.reason = message


class _StrictLoader(yaml.SafeLoader):
    aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):  # type: ignore[no-untyped-call]
            self.aliases += 1
        return super().compose_node(parent, index)

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
# YAML 1.2 core numbers only. YAML 1.1 (PyYAML's default) also reads 1:20 as
# 80, 0x14 as 20, 0b101, 2_0 and 1_000.5 as numbers; the CLI takes none of
# them, so neither do files: they resolve as text and a number field refuses
# them, naming itself.
_StrictLoader.yaml_implicit_resolvers = {
    first: [
        (tag, rx)
        for tag, rx in resolvers
        if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789")
)
_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


class _HexLoader(_StrictLoader):
    """Test vectors: masks and register images are bit patterns, which YAML
    1.2's core schema writes in hex (0xFFFFFFC0). Still no 1:20, 0b or 2_0."""

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = str(node.value)
        if re.fullmatch(r"[-+]?0x[0-9a-fA-F]+", text):
            return int(text, 16)
        return super().construct_yaml_int(node)


_HexLoader.add_constructor("tag:yaml.org,2002:int", _HexLoader.construct_yaml_int)
_HexLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?0x[0-9a-fA-F]+$"), list("-+0")
)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_shape(root: yaml.Node, aliases: int) -> None:
    """Refuse a composed graph whose expanded tree is too deep or too big.

    The graph shares a node each alias names, so a post-order over distinct
    nodes with each one's expanded size and height memoised costs the graph's
    size, never the tree's (a walk of the tree is what froze the daemon).
    """
    if aliases > MAX_ALIASES:
        raise yaml.YAMLError(f"more than {MAX_ALIASES} aliases")
    size: dict[int, int] = {}  # id(node) -> nodes in its expanded tree
    height: dict[int, int] = {}
    distinct = 0
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            height[key] = 1 + max((height[id(k)] for k in kids), default=0)
            if height[key] > MAX_DEPTH:
                raise yaml.YAMLError(f"nesting deeper than {MAX_DEPTH} levels")
            distinct += 1
            if size[key] - distinct > MAX_ALIAS_EXPANSION_NODES:
                raise yaml.YAMLError(
                    f"aliases expand to more than {MAX_ALIAS_EXPANSION_NODES} extra nodes"
                )
            continue
        if key in size:
            continue
        if key in on_path:
            raise yaml.YAMLError("an alias refers to a node that contains it (recursive)")
        if len(on_path) >= MAX_DEPTH:
            raise yaml.YAMLError(f"nesting deeper than {MAX_DEPTH} levels")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in size)


def loads(text: str, source: str | Path = "<string>", hex_ints: bool = False) -> Any:
    """Parse one YAML document strictly; errors name `source`. `hex_ints`:
    0x... is an integer too (vectors' masks), as in YAML 1.2's core schema."""
    try:
        loader = (_HexLoader if hex_ints else _StrictLoader)(text)
        try:
            node = loader.get_single_node()  # type: ignore[no-untyped-call]
            if node is None:
                return None
            _check_shape(node, loader.aliases)
            return loader.construct_document(node)  # type: ignore[no-untyped-call]
        finally:
            loader.dispose()  # type: ignore[no-untyped-call]
    except RecursionError:
        raise YamlFileError(source, f"not valid YAML: nesting deeper than {MAX_DEPTH}") from None
    except yaml.YAMLError as exc:
        raise YamlFileError(source, f"not valid YAML: {exc}") from None


def load_file(path: str | Path, hex_ints: bool = False) -> Any:
    """Read and parse `path`; every way it can fail is a YamlFileError."""
    shown = str(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not hang; the mode
        # check below refuses it (and devices) before any read.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise YamlFileError(shown, "no such file") from None
    except IsADirectoryError:
        raise YamlFileError(shown, "is a directory, not a file") from None
    except ValueError:  # an embedded NUL byte
        raise YamlFileError(shown.replace("\0", "\\0"), "not a valid path (NUL byte)") from None
    except OSError as exc:
        raise YamlFileError(shown, f"cannot be read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise YamlFileError(shown, "is a directory, not a file")
        if not stat.S_ISREG(mode):
            raise YamlFileError(shown, "is not a regular file (a device, FIFO or socket)")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise YamlFileError(shown, f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise YamlFileError(shown, f"larger than {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlFileError(shown, f"not UTF-8 text (byte {exc.start})") from None
    return loads(text, shown, hex_ints)
