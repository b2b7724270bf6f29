# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Blocks of docs/evaluation.md and README.md generated from evaluation/results.

A generated block sits between two HTML comments (invisible once rendered);
its opening comment says what it shows, and everything up to `<!-- /eval -->`
is rewritten from the committed results (evaluation/results_store.py):

    <!-- eval:table bfcc-dc
    schemes: bfcc, bfcc-match, none
    label: 25Gbps = 25 Gb/s
    col: scheme | @scheme
    col: link | @variant
    col: queue S3 | {queue_mean_packets:,.1f} / {queue_max_packets:,.0f}
    col: FCT mean (ms) | fct_mean_ms | ,.1f | else not measured
    col: vs none | vs(none, fct_mean_ms) | +.1f %
    -->
    (the table)
    <!-- /eval -->

    <!-- eval:claims pmqecn-s1 -->(the claims table)<!-- /eval -->
    ... S3's queue <!-- eval:value bfcc-dc bfcc/25Gbps |
    vs(none, queue_mean_packets) | +.0f -->-85<!-- /eval --> % ...
    <!-- eval:runtimes -->(scenario, runs, CPU seconds)<!-- /eval -->
    <!-- eval:cpu pmqecn-s1 -->62<!-- /eval -->,
    <!-- eval:cpu-max -->`spie-s1` (278 s)<!-- /eval -->
    <!-- eval:speed benchmarks/results/eval_speed.json -->(eval_speed.py's
    runs, evaluation/speed_results.py)<!-- /eval -->

Table lines: `schemes:`, `variants:` (which rows, in that order; default
all, in metrics.csv's order), `order: scheme` (scheme-major; default one
variant after another), `rows: scheme/variant, ...` (explicit rows),
`seed: N` (default: the mean over a repeated scenario's seeds), `label:
NAME = TEXT` (how @scheme/@variant print a name), and `col: HEADER | CELL
[| FORMAT] [| else TEXT]`. A cell is `@scheme`, `@variant`, `@seed`, an
expression, or a template with `{EXPRESSION:SPEC}` parts.

Expressions: a field (a metrics.csv column, or a detail.csv key such as
`queues.s1->s3.mean_packets`, `flows.group1.fct_ms`,
`repeats.victim.mean_vs_none_pct`; `*` in a name gives every match), numbers,
`+ - * /` (spaced: names may hold `-` and `/`), `( )` and functions:
`vs(RUN, e)` e's change against RUN's in % (RUN: `scheme` at this row's
variant and seed, or `scheme/variant`, or another scenario's run as
`scenario:scheme/variant`, where an empty scheme or variant is this row's),
`at(RUN, e)` e at RUN, `pct(a, b)`
= 100 (a - b) / b, `sum mean min max count abs`.

FORMAT: a Python format spec and literal text after it (`+.1f %`); for a
value over several runs (`RUN` of an inline value with `*` or commas:
`bfcc/*`, `bfcc,none/10Mbps`) a first word `range` (low-high, "to" when
negative), `min`, `max` or `mean`. A missing figure prints `—`, or the
`else TEXT` given after the format (a PFC counter a run never bumped is
absent, so `| .0f | else 0`). An inline value may not start a line (Markdown would then
take the whole line as raw HTML).
"""

from __future__ import annotations

import fnmatch
import math
import re
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import speed_results
from .results_store import RESULTS_DIR, ResultsError, RunKey, ScenarioResults, Value, load

REPO = Path(__file__).resolve().parent.parent
DOCS = (REPO / "docs" / "evaluation.md", REPO / "README.md")
# Not after a backtick: a comment quoted in `code` (as this page's syntax
# is, where it explains itself) is not a block.
BLOCK = re.compile(
    r"(?<!`)<!-- eval:(?P<kind>[a-z-]+)(?P<spec>.*?)-->(?P<body>.*?)(?<!`)<!-- /eval -->",
    re.DOTALL,
)
MISSING = "—"

V = Value | list[Value]


class DocsError(Exception):
    """A block naming what the results do not have, or written wrong: one line."""


# ------------------------------------------------------------ expressions

TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|(?P<name>[A-Za-z_*][^\s(),]*)"
    r"|(?P<op>[-+*/(),]))"
)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise DocsError(f"cannot read expression {text!r} at {text[pos:]!r}")
        out.append(m.group(m.lastgroup or "op"))
        pos = m.end()
    return out


@dataclass
class Ctx:
    res: ScenarioResults
    key: RunKey
    # Another scenario's results, for a run named `scenario:scheme/variant`.
    load: Callable[[str], ScenarioResults] | None = None

    def other(self, ref: str) -> Ctx:
        """The run `ref` names: `scheme`, `scheme/variant`, or with
        `scenario:` before it another scenario's (scheme and variant left
        empty: this row's)."""
        res = self.res
        if ":" in ref:
            name, _, ref = ref.partition(":")
            if self.load is None:
                raise DocsError(f"{name}: no other scenario's results here")
            res = self.load(name)
        scheme, _, variant = ref.partition("/")
        key = (scheme or self.key[0], variant if _ else self.key[1], self.key[2])
        if key[0] not in res.schemes:
            raise DocsError(f"no scheme {key[0]!r} in {res.name}'s results")
        if key[1] not in res.variants:
            raise DocsError(f"no variant {key[1]!r} in {res.name}'s results")
        return Ctx(res, key, self.load)

    def field(self, name: str) -> V:
        vals = self.res.runs.get(self.key, {})
        if "*" in name:
            names = [f for f in sorted(self.res.fields) if fnmatch.fnmatchcase(f, name)]
            if not names:
                raise DocsError(f"no field matches {name!r} in {self.res.name}'s results")
            return [vals.get(n) for n in names]
        if name not in self.res.fields:
            raise DocsError(f"no field {name!r} in {self.res.name}'s results")
        return vals.get(name)


def _num(v: V) -> Value:
    if isinstance(v, list):
        raise DocsError("a list of values where one is needed (aggregate it: sum, mean, ...)")
    return v


def _arith(op: str, a: V, b: V) -> Value:
    x, y = _num(a), _num(b)
    if x is None or y is None:
        return None
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    return None if y == 0 else x / y


def pct_change(a: Value, b: Value) -> Value:
    if a is None or b is None or b == 0:
        return None
    return 100.0 * (a - b) / b


def _flat(args: Sequence[V]) -> list[Value]:
    out: list[Value] = []
    for a in args:
        out += a if isinstance(a, list) else [a]
    return out


def _agg(fn: Callable[[list[float]], float]) -> Callable[[Sequence[V]], Value]:
    def apply(args: Sequence[V]) -> Value:
        xs = _flat(args)
        if not xs or any(x is None for x in xs):
            return None
        return fn([x for x in xs if x is not None])

    return apply


AGGREGATES: dict[str, Callable[[Sequence[V]], Value]] = {
    "sum": _agg(math.fsum),
    "mean": _agg(statistics.fmean),
    "min": _agg(min),
    "max": _agg(max),
    "count": lambda args: float(len(_flat(args))),
    "abs": _agg(lambda xs: abs(xs[0])),
}


Expr = Callable[[Ctx], V]


def _binary_op(op: str, a: Expr, b: Expr) -> Expr:
    return lambda c: _arith(op, a(c), b(c))


class _Parser:
    """Compiles an expression to a function of the run it is evaluated at.
    expr := term (('+'|'-') term)*; term := unary (('*'|'/') unary)*;
    unary := '-' unary | atom; atom := number | name | name(args) | (expr)."""

    def __init__(self, text: str) -> None:
        self.text, self.toks, self.i = text, _tokens(text), 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise DocsError(f"expression {self.text!r}: expected {want or 'more'}")
        self.i += 1
        return tok

    def parse(self) -> Expr:
        e = self.expr()
        if self.peek() is not None:
            raise DocsError(f"expression {self.text!r}: unexpected {self.peek()!r}")
        return e

    def _binary(self, ops: tuple[str, str], operand: Callable[[], Expr]) -> Expr:
        e = operand()
        while self.peek() in ops:
            op = self.take()
            e = _binary_op(op, e, operand())
        return e

    def expr(self) -> Expr:
        return self._binary(("+", "-"), self.term)

    def term(self) -> Expr:
        return self._binary(("*", "/"), self.unary)

    def unary(self) -> Expr:
        if self.peek() == "-":
            self.take()
            inner = self.unary()
            return lambda c: _arith("*", -1.0, inner(c))
        return self.atom()

    def atom(self) -> Expr:
        tok = self.take()
        if tok == "(":
            e = self.expr()
            self.take(")")
            return e
        if tok[0].isdigit():
            num = float(tok)
            return lambda c: num
        if self.peek() == "(":
            return self.call(tok)
        return lambda c: c.field(tok)

    def call(self, name: str) -> Expr:
        self.take("(")
        if name in ("vs", "at"):
            ref = self.take()
            self.take(",")
            inner = self.expr()
            self.take(")")
            if name == "at":
                return lambda c: inner(c.other(ref))
            return lambda c: pct_change(_num(inner(c)), _num(inner(c.other(ref))))
        args = [self.expr()]
        while self.peek() == ",":
            self.take()
            args.append(self.expr())
        self.take(")")
        if name == "pct":
            if len(args) != 2:
                raise DocsError(f"expression {self.text!r}: pct takes two values")
            a, b = args
            return lambda c: pct_change(_num(a(c)), _num(b(c)))
        if name not in AGGREGATES:
            raise DocsError(f"expression {self.text!r}: no function {name!r}")
        fn = AGGREGATES[name]
        return lambda c: fn([a(c) for a in args])


def evaluate(
    text: str,
    res: ScenarioResults,
    key: RunKey,
    load: Callable[[str], ScenarioResults] | None = None,
) -> V:
    return _Parser(text).parse()(Ctx(res, key, load))


# ------------------------------------------------------------ formatting


def _spec_and_suffix(fmt: str) -> tuple[str, str]:
    spec, _, rest = fmt.strip().partition(" ")
    return spec, (" " + rest if rest else "")


def format_value(v: Value, fmt: str, na: str = MISSING) -> str:
    if v is None or math.isnan(v):
        return na
    spec, suffix = _spec_and_suffix(fmt or ",.1f")
    try:
        text = format(v, spec)
    except ValueError as exc:
        raise DocsError(f"format {fmt!r}: {exc}") from exc
    if text.startswith("-") and not re.search(r"[1-9]", text):
        text = ("+" if spec.startswith("+") else "") + text[1:]  # -0.0: a sign that says nothing
    return text + suffix


def format_many(vals: list[Value], fmt: str, na: str = MISSING) -> str:
    how, _, rest = fmt.strip().partition(" ")
    if how in ("min", "max", "mean"):
        return format_value(AGGREGATES[how]([vals]), rest, na)
    if how != "range":
        raise DocsError(f"several values need range, min, max or mean in the format, not {fmt!r}")
    if any(v is None for v in vals):
        return na
    known = sorted((v for v in vals if v is not None), key=abs)
    spec, suffix = _spec_and_suffix(rest)
    lo, hi = format_value(known[0], spec), format_value(known[-1], spec)
    if lo == hi:
        return lo + suffix
    sep = " to " if known[0] < 0 or known[-1] < 0 else "-"
    return f"{lo}{sep}{hi}{suffix}"


SPEC = re.compile(r"[<>^=]?[-+ ]?#?0?\d*[,_]?(\.\d+)?[a-zA-Z%]?")


def render_template(
    text: str,
    res: ScenarioResults,
    key: RunKey,
    na: str,
    load: Callable[[str], ScenarioResults] | None = None,
) -> str:
    missing = False

    def one(m: re.Match[str]) -> str:
        nonlocal missing
        expr, _, spec = m.group(1).rpartition(":")
        if not expr or not SPEC.fullmatch(spec):  # a colon of `scenario:run`, not a spec
            expr, spec = m.group(1), ""
        v = _num(evaluate(expr, res, key, load))
        if v is None:
            missing = True
        return format_value(v, spec or ",.1f")

    out = re.sub(r"\{([^{}]*)\}", one, text)
    if missing:
        return na if "{" not in na else render_template(na, res, key, MISSING, load)
    return out


# ------------------------------------------------------------ blocks


@dataclass
class Column:
    header: str
    cell: str
    fmt: str = ""
    na: str = MISSING


@dataclass
class TableSpec:
    scenario: str
    schemes: list[str] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    order: str = "variant"
    seed: int | None = None
    labels: dict[str, str] = field(default_factory=dict)
    cols: list[Column] = field(default_factory=list)


def _split_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _column(text: str) -> Column:
    parts = [p.strip() for p in text.split("|")]
    if len(parts) < 2:
        raise DocsError(f"col {text!r}: needs HEADER | CELL")
    col = Column(parts[0], parts[1])
    for p in parts[2:]:
        if p.startswith("else "):
            col.na = p[5:].strip()
        else:
            col.fmt = p
    return col


def parse_table(spec: str) -> TableSpec:
    lines = [ln.strip() for ln in spec.strip().splitlines() if ln.strip()]
    if not lines:
        raise DocsError("table names no scenario")
    t = TableSpec(lines[0])
    for ln in lines[1:]:
        key, sep, value = ln.partition(":")
        if not sep:
            raise DocsError(f"table {t.scenario}: line {ln!r} is not KEY: VALUE")
        value = value.strip()
        if key == "schemes":
            t.schemes = _split_list(value)
        elif key == "variants":
            t.variants = _split_list(value)
        elif key == "rows":
            t.rows = _split_list(value)
        elif key == "order":
            t.order = value
        elif key == "seed":
            t.seed = int(value)
        elif key == "label":
            name, _, text = value.partition("=")
            t.labels[name.strip()] = text.strip()
        elif key == "col":
            t.cols.append(_column(value))
        else:
            raise DocsError(f"table {t.scenario}: unknown line {key!r}")
    if not t.cols:
        raise DocsError(f"table {t.scenario}: no col lines")
    return t


def _check_names(res: ScenarioResults, schemes: list[str], variants: list[str]) -> None:
    for s in schemes:
        if s not in res.schemes:
            raise DocsError(f"no scheme {s!r} in {res.name}'s results ({', '.join(res.schemes)})")
    for v in variants:
        if v not in res.variants:
            raise DocsError(f"no variant {v!r} in {res.name}'s results ({', '.join(res.variants)})")


def _parse_ref(ref: str, res: ScenarioResults, seed: int | None) -> list[RunKey]:
    scheme_part, _, rest = ref.partition("/")
    variant_part, _, seed_part = rest.partition("@")
    if "@" in scheme_part:
        scheme_part, _, seed_part = scheme_part.partition("@")
    schemes = res.schemes if scheme_part == "*" else _split_list(scheme_part)
    if variant_part in ("", "*"):
        variants = res.variants if variant_part == "*" or len(res.variants) == 1 else []
        if not variants:
            raise DocsError(f"{ref!r}: say which variant ({', '.join(res.variants)})")
    else:
        variants = _split_list(variant_part)
    _check_names(res, schemes, variants)
    s = int(seed_part) if seed_part else seed
    if s is not None and s not in res.seeds:
        raise DocsError(f"no seed {s} in {res.name}'s results")
    keys = [(sc, v, s) for v in variants for sc in schemes]
    return [k for k in keys if k in res.runs] or keys


def _table_keys(t: TableSpec, res: ScenarioResults) -> list[RunKey]:
    if t.rows:
        return [k for ref in t.rows for k in _parse_ref(ref, res, t.seed)]
    schemes, variants = t.schemes or res.schemes, t.variants or res.variants
    _check_names(res, schemes, variants)
    if t.seed is not None and t.seed not in res.seeds:
        raise DocsError(f"no seed {t.seed} in {res.name}'s results")
    if t.order == "scheme":
        keys = [(s, v, t.seed) for s in schemes for v in variants]
    else:
        keys = [(s, v, t.seed) for v in variants for s in schemes]
    return [k for k in keys if k in res.runs]


def _cell(
    c: Column, res: ScenarioResults, key: RunKey, labels: dict[str, str], results: Results
) -> str:
    if c.cell in ("@scheme", "@variant", "@seed"):
        raw = {"@scheme": key[0], "@variant": key[1], "@seed": str(key[2] or "")}[c.cell]
        return labels.get(raw, raw or MISSING)
    if "{" in c.cell:
        return render_template(c.cell, res, key, c.na, results.get)
    v = _num(evaluate(c.cell, res, key, results.get))
    if v is None and "{" in c.na:  # the else text may quote other figures
        return render_template(c.na, res, key, MISSING, results.get)
    return format_value(v, c.fmt, c.na)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


class Results:
    """Each scenario's results, loaded once per run of the script."""

    def __init__(self, root: Path = RESULTS_DIR) -> None:
        self.root = root
        self._cache: dict[str, ScenarioResults] = {}

    def get(self, name: str) -> ScenarioResults:
        if name not in self._cache:
            try:
                self._cache[name] = load(name, self.root)
            except ResultsError as exc:
                raise DocsError(str(exc)) from exc
        return self._cache[name]

    def names(self) -> list[str]:
        return sorted(p.parent.name for p in self.root.glob("*/metrics.csv"))


def render_table(spec: str, results: Results) -> str:
    t = parse_table(spec)
    res = results.get(t.scenario)
    keys = _table_keys(t, res)
    rows = [[_cell(c, res, k, t.labels, results) for c in t.cols] for k in keys]
    return markdown_table([c.header for c in t.cols], rows)


def _paper_text(text: str) -> str:
    nums = [float(x) for x in text.split()]
    if len(nums) == 2:
        return f"{nums[0]:+g} … {nums[1]:+g} %"
    return f"{nums[0]:+g} %" if nums else MISSING


def _pct_text(text: str) -> str:
    v = None if text == "" else float(text)
    return format_value(v, "+.1f %")


def render_claims(spec: str, results: Results) -> str:
    words = spec.split()
    if not words:
        raise DocsError("claims names no scenario")
    res = results.get(words[0])
    opts = dict(w.partition("=")[::2] for w in words[1:])
    rows = res.claims
    if "variants" in opts:
        rows = [r for r in rows if r["variant"] in _split_list(opts["variants"])]
    if "seed" in opts:
        rows = [r for r in rows if r["seed"] == opts["seed"]]
    if not rows:
        raise DocsError(f"no claims in {res.name}'s results for {spec.strip()!r}")
    with_variant = any(r["variant"] for r in rows) and len(res.variants) > 1
    header = ["claim", *(["variant"] if with_variant else []), "paper", "measured"]
    header += ["ours vs none", "baseline vs none", "verdict"]
    out = []
    for r in rows:
        cells = [f"{r['metric']} {r['ours']} vs {r['baseline']}"]
        cells += [r["variant"] or MISSING] if with_variant else []
        cells += [_paper_text(r["paper"]), _pct_text(r["measured"])]
        cells += [_pct_text(r["ours_vs_none"]), _pct_text(r["baseline_vs_none"]), r["verdict"]]
        out.append(cells)
    return markdown_table(header, out)


def render_value(spec: str, results: Results) -> str:
    head, *parts = [p.strip() for p in spec.split("|")]
    words = head.split()
    if len(words) != 2 or not parts:
        raise DocsError(
            f"value {spec.strip()!r}: needs SCENARIO RUN | EXPRESSION [| FORMAT] [| else TEXT]"
        )
    res = results.get(words[0])
    keys = _parse_ref(words[1], res, None)
    fmt = next((p for p in parts[1:] if not p.startswith("else ")), "")
    na = next((p[5:].strip() for p in parts[1:] if p.startswith("else ")), MISSING)
    vals = [_num(evaluate(parts[0], res, k, results.get)) for k in keys]
    if len(vals) == 1 and not fmt.startswith(("range", "min ", "max ", "mean ")):
        return format_value(vals[0], fmt, na)
    return format_many(vals, fmt, na)


def _cpu(res: ScenarioResults) -> float:
    if not res.timing:
        raise DocsError(f"no timing.json in {res.path}")
    return math.fsum(res.timing.values())


def render_runtimes(spec: str, results: Results) -> str:
    rows = []
    for name in results.names():
        res = results.get(name)
        rows.append([f"`{name}`", str(len(res.timing)), f"{_cpu(res):,.0f}"])
    return markdown_table(["scenario", "runs", "time (s)"], rows)


def render_cpu(spec: str, results: Results) -> str:
    words = spec.split()
    if not words:
        raise DocsError("cpu names no scenario")
    return format_value(_cpu(results.get(words[0])), words[1] if len(words) > 1 else ",.0f")


def render_cpu_max(spec: str, results: Results) -> str:
    names = results.names()
    if not names:
        raise DocsError(f"no results in {results.root}")
    top = max(names, key=lambda n: _cpu(results.get(n)))
    return f"`{top}` ({_cpu(results.get(top)):,.0f} s)"


def _benchmark_block(render: Callable[[str], str]) -> Callable[[str, Results], str]:
    """A block of a speed benchmark's runs (evaluation/speed_results.py),
    its errors as the docs' own."""

    def block(spec: str, results: Results) -> str:
        try:
            return render(spec)
        except speed_results.SpeedResultsError as exc:
            raise DocsError(str(exc)) from None

    return block


RENDER: dict[str, tuple[Callable[[str, Results], str], bool]] = {
    # kind: (renderer, whether the block is a table on lines of its own)
    "table": (render_table, True),
    "claims": (render_claims, True),
    "runtimes": (render_runtimes, True),
    "value": (render_value, False),
    "cpu": (render_cpu, False),
    "cpu-max": (render_cpu_max, False),
    "speed": (_benchmark_block(speed_results.render_file), True),
    "cycles": (_benchmark_block(speed_results.render_cycle_file), True),
    "cycle-paths": (_benchmark_block(speed_results.render_paths_file), True),
}


@dataclass
class Block:
    kind: str
    spec: str
    line: int
    body: str
    generated: str

    @property
    def name(self) -> str:
        first = self.spec.strip().splitlines()[0] if self.spec.strip() else ""
        return f"eval:{self.kind} {first}".strip()


def blocks(text: str, results: Results, path: Path) -> Iterator[Block]:
    for m in BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        kind, spec = m.group("kind"), m.group("spec")
        where = f"{path}:{line}: eval:{kind} {spec.strip().splitlines()[0] if spec.strip() else ''}"
        if kind not in RENDER:
            raise DocsError(f"{where.strip()}: no such block kind ({', '.join(RENDER)})")
        render, is_table = RENDER[kind]
        if not is_table and (m.start() == 0 or text[m.start() - 1] == "\n"):
            raise DocsError(f"{where.strip()}: an inline value may not start a line")
        try:
            out = render(spec, results)
        except DocsError as exc:
            raise DocsError(f"{where.strip()}: {exc}") from exc
        if is_table:
            # A table in a list item is indented as its opening comment is.
            start = text.rfind("\n", 0, m.start()) + 1
            indent = text[start : m.start()] if not text[start : m.start()].strip() else ""
            out = "\n\n" + "\n".join(indent + ln for ln in out.splitlines()) + "\n\n" + indent
        yield Block(kind, spec, line, m.group("body"), out)


def regenerate(text: str, results: Results, path: Path) -> tuple[str, list[Block]]:
    """The text with every block rewritten, and the blocks that changed."""
    found = list(blocks(text, results, path))
    changed = [b for b in found if b.body != b.generated]
    pieces, last = [], 0
    for m, b in zip(BLOCK.finditer(text), found, strict=True):
        pieces += [text[last : m.start("body")], b.generated]
        last = m.end("body")
    return "".join(pieces) + text[last:], changed


def first_difference(old: str, new: str) -> tuple[int, str, str]:
    a, b = old.strip("\n").splitlines(), new.strip("\n").splitlines()
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "(nothing)"
        y = b[i] if i < len(b) else "(nothing)"
        if x != y:
            return i + 1, x, y
    return 0, "", ""
