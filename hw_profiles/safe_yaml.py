# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The one YAML reader every tofino-cc file goes through.

PyYAML's safe loader keeps the last of two equal keys, so a second
`classes:` silently replaces the first; it raises RecursionError on deep
nesting, UnicodeDecodeError on binary files and bare ValueErrors (with a
traceback) on values it parses and then cannot build, such as `2001-02-30`
or `!!int abc`. Every loader (profiles, controller configs, deployments,
state, vectors, scenarios) must turn each of those into its own documented
error naming the file, so they all read through here and catch one exception
type, YamlFileError, whose message is one line naming the line in the file.

It is also the project's guard against hostile files, bounding the work a
file can cost, not only its bytes:
- a path that is not a regular file (/dev/zero, a FIFO) is refused before a
  byte is read, and a file over MAX_FILE_BYTES is refused;
- LibYAML (PyYAML's C parser) produces the events: PyYAML's pure-Python
  scanner alone takes a second per megabyte. Only if PyYAML was built without
  it does the pure-Python parser stand in, at that speed;
- the composer here counts nodes (MAX_NODES) and nesting (MAX_DEPTH) as the
  events arrive, so a 2 MB list of zeros or of `[]`s is refused after
  MAX_NODES events, not after building a million-node graph (a minute and
  gigabytes, before);
- aliases are bounded (count, and the size and depth of the tree they expand
  to) on the composed graph, before anything walks the expanded tree: a 1 KB
  "billion laughs" file otherwise cost seconds of CPU per level.

Values follow YAML 1.2's core schema, the rule the CLI uses:
- integers are plain decimal digits (vectors may also write 0x hex, YAML
  1.2's other integer form, for masks). YAML 1.1's 1:20 (80), 0x14, 0b101 and
  2_0 stay text, which every integer field then refuses by name. A leading
  zero (YAML 1.1's octal) and a number longer than MAX_NUMBER_CHARS (no field
  holds one; Python refuses to parse ints past 4,300 digits) are refused;
- booleans are true and false only (YAML 1.1's yes/no/on/off are text);
- an unquoted date or timestamp (`2001-12-14`) is refused: no field of this
  project is a date, YAML 1.2 has no timestamp type, and PyYAML's YAML 1.1
  reading turned impossible ones (`2001-02-30`) into a crash. Quote it if it
  is text;
- explicit tags: only !!str, !!int, !!float, !!bool and !!null on scalars
  and !!seq and !!map on collections, and the value under !!int, !!float,
  !!bool or !!null must be one the untagged rules above read as that type
  (!!float also takes an integer): `!!int 1:20`, `!!int ""` and
  `!!bool maybe` are refused, not read as 80, a crash and a crash. Any other
  tag (!!timestamp, !!binary, !!set, !!omap, !python/..., local tags) is
  refused where it stands.
"""

from __future__ import annotations

import gc
import os
import re
import stat
from pathlib import Path
from typing import Any, Protocol

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

# Far beyond any file this project writes (9 levels), far below Python's
# recursion limit.
MAX_DEPTH = 64
# Twice the largest file the project ships (generated vectors, 1.07 MB).
MAX_FILE_BYTES = 2 * 1024 * 1024
# Nodes (scalars, lists, mappings, aliases) in one file. The densest shipped
# file (generated SPIE vectors, 38,006 nodes in 1.03 MB) would hold ~77,000 at
# MAX_FILE_BYTES; this admits that and keeps the work bounded: composing and
# building 100,000 nodes takes ~0.2 s, and a hostile file is refused at the
# 100,001st, in ~0.15 s, however much of its 2 MiB is left.
MAX_NODES = 100_000
# Anchors are for sharing a few frames or a base config, not for building trees.
MAX_ALIASES = 1_000
# Nodes the aliases may add to the tree when expanded (what any later walk,
# pydantic's included, visits once per expansion).
MAX_ALIAS_EXPANSION_NODES = 100_000
# Characters in one number: a 128-bit mask in decimal is 39 digits.
MAX_NUMBER_CHARS = 100

_CORE = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (_CORE + t for t in ("str", "int", "float", "bool", "null"))
SEQ, MAP, _MERGE, _TIMESTAMP = (_CORE + t for t in ("seq", "map", "merge", "timestamp"))
_RULES = {
    INT: "plain decimal digits",
    FLOAT: "a decimal number such as 1.5, 2, .inf or .nan",
    BOOL: "true or false",
    NULL: "null, ~ or nothing",
}
_DECIMAL = r"[-+]?[0-9]+"
_HEX = r"[-+]?0x[0-9a-fA-F]+"


class YamlFileError(ValueError):
    """A file could not be read as YAML; the message names the file."""

    def __init__(self, path: str | Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.reason = message


def _shown_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag


# ---- values: YAML 1.2's core schema --------------------------------------------

_FLOAT = r"""[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN)"""
# PyYAML's (YAML 1.1) date pattern, so that what it would have read as a date
# is refused rather than quietly becoming text.
_DATE = r"""[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
     (?:[Tt]|[ \t]+)[0-9][0-9]?
     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?"""


class _Schema:
    """Which type an untagged plain scalar is: YAML 1.2's core schema, plus
    YAML 1.1's dates so the composer can refuse them by name. A lookup by the
    first character, as PyYAML's resolver does, without its per-call list
    building (which cost more than the rest of composing)."""

    def __init__(self, hex_ints: bool) -> None:
        self.hex_ints = hex_ints
        rules = [
            (BOOL, r"true|True|TRUE|false|False|FALSE", "tTfF"),
            (INT, f"{_DECIMAL}|{_HEX}" if hex_ints else _DECIMAL, "-+0123456789"),
            (FLOAT, _FLOAT, "-+0123456789."),
            (_MERGE, r"<<", "<"),
            (NULL, r"~|null|Null|NULL", "~nN"),
            (_TIMESTAMP, _DATE, "0123456789"),
        ]
        self.by_first: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
        for tag, rule, firsts in rules:
            pattern = re.compile(f"(?:{rule})\\Z", re.X)
            for first in firsts:
                self.by_first.setdefault(first, []).append((tag, pattern))

    def plain(self, value: str) -> str:
        """The tag of an untagged plain scalar."""
        if not value:
            return NULL
        for tag, pattern in self.by_first.get(value[0], ()):
            if pattern.match(value):
                return tag
        return STR


_SCHEMAS = {False: _Schema(False), True: _Schema(True)}


def _refuse(node: Node, message: str) -> ConstructorError:
    return ConstructorError(None, None, message, node.start_mark)


def _kind(node: Node) -> str:
    return "a list" if isinstance(node, SequenceNode) else "a mapping"


class _Builder:
    """Python values from a composed graph whose every tag the composer
    checked against the schema. PyYAML's SafeConstructor, which did this,
    cost three times as much per node for a dozen tags this project refuses.
    An aliased list or mapping is built once and shared, as PyYAML does."""

    def __init__(self, hex_ints: bool) -> None:
        self.hex_ints = hex_ints
        self.built: dict[int, Any] = {}
        self.scalars: dict[str, Any] = {
            STR: lambda node: node.value,
            _MERGE: lambda node: node.value,  # `<<` anywhere but as a key is text
            INT: self.integer,
            FLOAT: self.real,
            BOOL: lambda node: node.value in ("true", "True", "TRUE"),
            NULL: lambda node: None,
        }

    def value(self, node: Node) -> Any:
        if type(node) is ScalarNode:
            try:
                return self.scalars[node.tag](node)
            except (ValueError, OverflowError, TypeError, KeyError) as exc:
                # The composer admits only what the rules above build; this is
                # the net under it, so a value that still fails is named.
                raise _refuse(node, f"{_shown_tag(node.tag)} {node.value!r}: {exc}") from None
        key = id(node)
        if key in self.built:
            return self.built[key]
        if type(node) is SequenceNode:
            items: list[Any] = []
            self.built[key] = items
            items.extend(map(self.value, node.value))
            return items
        return self.mapping(node)

    def mapping(self, node: Node) -> dict[Any, Any]:
        own: dict[Any, Any] = {}
        self.built[id(node)] = own
        merged: dict[Any, Any] = {}
        first_line: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:  # `<<: *base`, then overriding a key of it
                self.merge(value_node, merged)
                continue
            key = self.value(key_node)
            try:
                line = first_line.get(key)
            except TypeError:
                raise _refuse(key_node, f"a key cannot be {_kind(key_node)}") from None
            if line is not None:
                raise _refuse(key_node, f"duplicate key {key!r} (first on line {line})")
            first_line[key] = key_node.start_mark.line + 1
            own[key] = self.value(value_node)
        if merged:
            # Merged keys first, this mapping's own after and winning, as PyYAML.
            items = {**merged, **own}
            own.clear()
            own.update(items)
        return own

    def merge(self, node: Node, into: dict[Any, Any]) -> None:
        """`<<: *a` or `<<: [*a, *b]`: the first mapping to give a key wins."""
        for source in node.value if isinstance(node, SequenceNode) else [node]:
            if not isinstance(source, MappingNode):
                raise _refuse(source, "`<<` merges a mapping or a list of mappings")
            for key, value in self.value(source).items():
                into.setdefault(key, value)

    def integer(self, node: ScalarNode) -> int:
        # The composer admitted only [-+]?[0-9]+ (and 0x hex in vectors).
        text: str = node.value
        if len(text) > MAX_NUMBER_CHARS:
            raise _too_long(node)
        if self.hex_ints and "x" in text:
            return int(text, 16)
        # YAML 1.1 reads 010 as 8 and 0009 as the string "0009" (which a lax
        # int field then takes as 9): in a vector or config a leading zero is a
        # slip, never an octal number, so both are refused.
        digits = text.lstrip("+-")
        if len(digits) > 1 and digits[0] == "0":
            raise _refuse(
                node,
                f"{text!r} has a leading zero (YAML 1.1 reads it as octal or as text):"
                " write the decimal number",
            )
        return int(text)

    def real(self, node: ScalarNode) -> float:
        # The composer admitted an integer (`!!float 2`) or _FLOAT.
        text: str = node.value
        if _SCHEMAS[self.hex_ints].plain(text) == INT:
            return float(self.integer(node))
        if len(text) > MAX_NUMBER_CHARS:
            raise _too_long(node)
        lowered = text.lower()
        if lowered.endswith(".nan"):
            return float("nan")
        if lowered.endswith(".inf"):
            return float("-inf") if text[0] == "-" else float("inf")
        return float(text)


def _too_long(node: ScalarNode) -> ConstructorError:
    return _refuse(node, f"a number of {len(node.value)} characters (at most {MAX_NUMBER_CHARS})")


# ---- composition: bounded as the events arrive ------------------------------------


# LibYAML's events carry its own Mark type, which the stubs of PyYAML's nodes
# and errors do not take, though both read only its line and column.
_Event = Any


class _Events(Protocol):
    def get_event(self) -> _Event: ...
    def dispose(self) -> None: ...


try:
    from yaml._yaml import CParser as _CParser
except ImportError:  # PyYAML built without LibYAML
    _CParser = None  # type: ignore[assignment, misc]


class _PyEvents(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's pure-Python parser, used only where LibYAML is missing."""

    def __init__(self, text: str) -> None:
        yaml.reader.Reader.__init__(self, text)  # type: ignore[no-untyped-call]
        yaml.scanner.Scanner.__init__(self)  # type: ignore[no-untyped-call]
        yaml.parser.Parser.__init__(self)  # type: ignore[no-untyped-call]


def _events(text: str) -> _Events:
    return _CParser(text) if _CParser is not None else _PyEvents(text)  # type: ignore[no-any-return]


def _composer_error(event: _Event, message: str) -> ComposerError:
    return ComposerError(None, None, message, event.start_mark)


class _Composer:
    """PyYAML's composer with the bounds checked per event, and each scalar's
    tag checked against the core schema where it stands. Each event is pulled
    once (get_event, no check_event): this loop is the cost of every file."""

    def __init__(self, events: _Events, schema: _Schema) -> None:
        self.get_event = events.get_event
        self.schema = schema
        self.plain = schema.plain
        self.nodes = 0
        self.aliases = 0
        self.depth = 0
        self.anchors: dict[str, Node] = {}

    def single_node(self) -> Node | None:
        self.get_event()  # stream start
        event = self.get_event()
        node = None
        if not isinstance(event, yaml.StreamEndEvent):  # a document start
            node = self.node(self.get_event())
            self.get_event()  # document end
            event = self.get_event()
        if not isinstance(event, yaml.StreamEndEvent):
            raise _composer_error(event, "a second document (---): a file holds one")
        return node

    def node(self, event: _Event) -> Node:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _composer_error(event, f"more than {MAX_NODES} values (keys, items and lists)")
        kind = type(event)
        if kind is yaml.ScalarEvent and event.tag is None and event.anchor is None:
            # Most nodes of any file: the short way, half the cost of scalar().
            tag = self.plain(event.value) if event.implicit[0] else STR
            if tag != _TIMESTAMP:
                return ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        if kind is yaml.AliasEvent:
            return self.alias(event)
        if event.anchor is not None and event.anchor in self.anchors:
            first = self.anchors[event.anchor].start_mark.line + 1
            raise _composer_error(
                event, f"anchor &{event.anchor} defined twice (first on line {first})"
            )
        if kind is yaml.ScalarEvent:
            return self.scalar(event)
        if kind is yaml.SequenceStartEvent:
            return self.sequence(event)
        return self.mapping(event)

    def alias(self, event: _Event) -> Node:
        self.aliases += 1
        if self.aliases > MAX_ALIASES:
            raise _composer_error(event, f"more than {MAX_ALIASES} aliases")
        if event.anchor not in self.anchors:
            raise _composer_error(event, f"alias *{event.anchor} has no anchor")
        return self.anchors[str(event.anchor)]

    def scalar(self, event: _Event) -> ScalarNode:
        tag = event.tag
        if tag is None:
            tag = self.plain(event.value) if event.implicit[0] else STR
            if tag == _TIMESTAMP:
                raise _composer_error(
                    event,
                    f"{event.value!r} reads as a date in YAML 1.1, and no field is a date:"
                    " quote it if it is text",
                )
        elif tag == "!":  # YAML's non-specific tag on a scalar: a string
            tag = STR
        else:
            self.check_scalar_tag(tag, event)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        if event.anchor is not None:
            self.anchors[event.anchor] = node
        return node

    def check_scalar_tag(self, tag: str, event: _Event) -> None:
        shown = _shown_tag(tag)
        if tag not in (STR, *_RULES):
            raise _composer_error(
                event, f"tag {shown} is not allowed (only !!str, !!int, !!float, !!bool, !!null)"
            )
        if tag == STR:
            return
        untagged = self.schema.plain(event.value)
        if untagged != tag and not (tag == FLOAT and untagged == INT):
            rule = _RULES[tag] + (" or 0x hex" if tag == INT and self.schema.hex_ints else "")
            raise _composer_error(event, f"{shown} {event.value!r} is not {rule} (YAML 1.2)")

    def enter(self, event: _Event, tag: str) -> None:
        if event.tag not in (None, "!", tag):
            raise _composer_error(
                event, f"tag {_shown_tag(event.tag)} is not allowed (only {_shown_tag(tag)} here)"
            )
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _composer_error(event, f"nesting deeper than {MAX_DEPTH} levels")

    def sequence(self, event: _Event) -> SequenceNode:
        self.enter(event, SEQ)
        node = SequenceNode(SEQ, [], event.start_mark, None, flow_style=event.flow_style)
        if event.anchor is not None:
            self.anchors[event.anchor] = node  # before the items, so *self is seen as recursive
        items: list[Node] = node.value
        get_event, compose = self.get_event, self.node
        while type(item := get_event()) is not yaml.SequenceEndEvent:
            items.append(compose(item))
        node.end_mark = item.end_mark
        self.depth -= 1
        return node

    def mapping(self, event: _Event) -> MappingNode:
        self.enter(event, MAP)
        node = MappingNode(MAP, [], event.start_mark, None, flow_style=event.flow_style)
        if event.anchor is not None:
            self.anchors[event.anchor] = node
        items: list[tuple[Node, Node]] = node.value
        get_event, compose = self.get_event, self.node
        while type(key := get_event()) is not yaml.MappingEndEvent:
            items.append((compose(key), compose(get_event())))
        node.end_mark = key.end_mark
        self.depth -= 1
        return node


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _shape_error(node: Node, message: str) -> ComposerError:
    return ComposerError(None, None, message, node.start_mark)


def _check_shape(root: Node) -> None:
    """Refuse a composed graph whose aliases expand to a tree too deep or too big.

    The graph shares a node each alias names, so a post-order over distinct
    nodes with each one's expanded size and height memoised costs the graph's
    size (at most MAX_NODES), never the tree's (a walk of the tree is what
    froze the daemon). Height counts collections, as the composer does.
    """
    size: dict[int, int] = {}  # id(node) -> nodes in its expanded tree
    height: dict[int, int] = {}
    distinct = 0
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            is_collection = not isinstance(node, ScalarNode)
            height[key] = is_collection + max((height[id(k)] for k in kids), default=0)
            if height[key] > MAX_DEPTH:
                raise _shape_error(node, f"aliases nest deeper than {MAX_DEPTH} levels")
            distinct += 1
            if size[key] - distinct > MAX_ALIAS_EXPANSION_NODES:
                raise _shape_error(
                    node, f"aliases expand to more than {MAX_ALIAS_EXPANSION_NODES} extra nodes"
                )
            continue
        if key in size:
            continue
        if key in on_path:
            raise _shape_error(node, "an alias refers to a node that contains it (recursive)")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in size)


# ---- errors: one line, naming the line --------------------------------------------


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""


def _describe(exc: yaml.YAMLError, text: str) -> str:
    """`exc` as one line naming the line; PyYAML's own text takes four and
    names "<unicode string>" instead of the file."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "not valid YAML"
        if problem == "exceeded maximum nesting depth":  # LibYAML's own limit, 1,000
            problem = f"nesting deeper than {MAX_DEPTH} levels"
        if exc.problem and exc.context:
            started = exc.context_mark.line + 1 if exc.context_mark is not None else None
            problem += f" ({exc.context} from line {started})" if started else f" ({exc.context})"
        syntax = isinstance(exc, (yaml.scanner.ScannerError, yaml.parser.ParserError))
        message = _where(mark) + ("not valid YAML: " if syntax else "") + problem
    elif isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1  # a position in characters
        column = exc.position - text.rfind("\n", 0, exc.position)
        character = exc.character
        shown = f"#x{character:04x}" if isinstance(character, int) else repr(character)
        message = f"line {line}, column {column}: not valid YAML: character {shown}: {exc.reason}"
    else:
        message = str(exc)
    return " ".join(message.splitlines())


def loads(text: str, source: str | Path = "<string>", hex_ints: bool = False) -> Any:
    """Parse one YAML document strictly; errors name `source`. `hex_ints`:
    0x... is an integer too (vectors' masks), as in YAML 1.2's core schema."""
    events: _Events | None = None
    # A graph of 100,000 nodes sets off the cycle collector's full passes over
    # everything it allocates; nothing here makes a cycle the collector would
    # have to free, so it waits until the file is read (this halves the time).
    # Process-wide, and restored as found: a thread reading meanwhile at most
    # delays a collection.
    collecting = gc.isenabled()
    gc.disable()
    try:
        events = _events(text)
        composer = _Composer(events, _SCHEMAS[hex_ints])
        node = composer.single_node()
        if node is None:
            return None
        if composer.aliases:
            _check_shape(node)
        return _Builder(hex_ints).value(node)
    except RecursionError:
        raise YamlFileError(source, f"not valid YAML: nesting deeper than {MAX_DEPTH}") from None
    except yaml.YAMLError as exc:
        raise YamlFileError(source, _describe(exc, text)) from None
    except (ValueError, OverflowError, TypeError) as exc:  # e.g. a lone surrogate
        raise YamlFileError(source, f"not valid YAML: {exc}") from None
    finally:
        if collecting:
            gc.enable()
        if events is not None:
            events.dispose()


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
