#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""docs/evaluation.md's and README.md's results, generated from evaluation/results.

    scripts/eval_docs.py --import DIR [SCENARIO ...]   # copy an `eval run --out DIR`
    scripts/eval_docs.py                               # rewrite every generated block
    scripts/eval_docs.py --check                       # CI: does every block match?

After a rerun:

    tofcc eval run S --out X && scripts/eval_docs.py --import X && scripts/eval_docs.py

`--import` copies, for each finished scenario under DIR, only what the docs
need into evaluation/results/<scenario>/ (evaluation/results_store.py says
which files), with the commit the run was made at (`--commit`, default this
checkout's) and the command. The blocks (`<!-- eval:... -->` ... `<!-- /eval
-->`) and their syntax are described in evaluation/docs_tables.py.

Exit status: 0 done (--check: every block matches), 1 --check found a block
that differs (the file, the block and its first differing line are printed),
2 a block names a scenario, scheme or field with no results, or bad input
(one line; nothing written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.docs_tables import (
    DOCS,
    REPO,
    DocsError,
    Results,
    first_difference,
    regenerate,
)
from evaluation.results_store import RESULTS_DIR, ResultsError, checkout_commit, import_run

EXIT_DIFFERS = 1
EXIT_BAD = 2


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def do_import(args: argparse.Namespace) -> int:
    done, skipped = import_run(
        args.import_dir,
        args.results,
        commit=args.commit or checkout_commit(),
        command=args.command,
        only=args.scenarios,
    )
    for name in done:
        print(f"imported {name} into {_shown(args.results / name)}")
    for name in skipped:
        print(f"skipped {name}: its run has not finished (no metrics, timing or results)")
    return 0


def do_docs(args: argparse.Namespace) -> int:
    results = Results(args.results)
    updated: dict[Path, str] = {}
    differs = 0
    for path in args.docs:
        text = path.read_text()
        new, changed = regenerate(text, results, Path(_shown(path)))
        for b in changed:
            n, old_line, new_line = first_difference(b.body, b.generated)
            differs += 1
            if args.check:
                print(f"{_shown(path)}:{b.line}: {b.name} differs from {_shown(args.results)}")
                print(f"  line {n} of the block, committed: {old_line}")
                print(f"  generated from the results:      {new_line}")
        if new != text:
            updated[path] = new
    if args.check:
        if differs:
            print(f"{differs} block(s) differ: run scripts/eval_docs.py to regenerate them")
            return EXIT_DIFFERS
        return 0
    for path, new in updated.items():  # only once every block has rendered
        path.write_text(new)
        print(f"rewrote {_shown(path)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--import", dest="import_dir", type=Path, metavar="DIR")
    ap.add_argument("scenarios", nargs="*", help="with --import: only these scenarios")
    ap.add_argument("--check", action="store_true", help="exit 1 if a block differs")
    ap.add_argument("--commit", help="with --import: the commit the run was made at")
    ap.add_argument(
        "--command",
        default="tofcc eval run {scenario}",
        help="with --import: the command that made the run ({scenario} is replaced)",
    )
    ap.add_argument("--results", type=Path, default=RESULTS_DIR, help=argparse.SUPPRESS)
    ap.add_argument("--docs", type=Path, nargs="+", default=list(DOCS), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.scenarios and args.import_dir is None:
        ap.error("scenarios are named only with --import")
    try:
        if args.import_dir is not None:
            return do_import(args)
        return do_docs(args)
    except (DocsError, ResultsError, OSError) as exc:
        print(f"eval_docs: {exc}", file=sys.stderr)
        return EXIT_BAD


if __name__ == "__main__":
    sys.exit(main())
