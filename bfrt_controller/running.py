# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The running values of a program as a config, and configs compared field by field.

An app holds its config plus what changed at run time (`live_state()`: what
an operator set, what PMQECN's optimiser or DA-DCTCP's Algorithm 2 tuned).
`running_config` folds those values back into the config's own fields, so
`tofcc save` can write a file that `apply` takes and that diffs to nothing;
`field_changes` says which config fields two configs differ in, so `diff`
names `voice.threshold_cells` rather than a table entry.

Some live values are measurements, not settings (PMQECN's lambda_i, echoed
to senders, and W_i): no config field holds them, and an apply keeps what
the switch measured (`keep_measurements`) instead of writing zero over it
until the next cycle.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel

from .programs import App, get_program
from .switch import Switch
from .sync import adopt_held_values

# Per program, the fields of each live_state() item that are measured rather
# than set: an apply and a rollback keep the switch's, and a config has no
# field for them.
MEASURED: dict[str, tuple[str, ...]] = {"pmqecn": ("rate_pps", "sojourn_ns")}


def _pmqecn(app: Any) -> BaseModel:
    cfg = app.config
    classes = [
        c.model_copy(
            update={
                "threshold_cells": app.live[c.id].threshold_cells,
                "weight": app.live[c.id].weight,
                "target_rate_pps": app.live[c.id].target_rate_pps,
            }
        )
        for c in cfg.classes
    ]
    return cfg.model_copy(update={"classes": classes})  # type: ignore[no-any-return]


def _dadctcp(app: Any) -> BaseModel:
    cfg = app.config
    ports = [
        p.model_copy(
            update={
                "k_port_packets": app.k_port[p.port],
                "drop_not_ect": app.drop_not_ect[p.port],
                "queues": [
                    q.model_copy(update={"k_packets": app.k_packets[(p.port, q.queue)]})
                    for q in p.queues
                ],
            }
        )
        for p in cfg.ports
    ]
    return cfg.model_copy(update={"mode": app.mode, "ports": ports})  # type: ignore[no-any-return]


def _p4qcn(app: Any) -> BaseModel:
    cfg = app.config
    update: dict[str, Any] = {"queues": [app.effective(q) for q in cfg.queues]}
    if cfg.pfc is not None and cfg.pfc.watchdog is not None:
        # `set watchdog=off` as the config's own switch.
        watchdog = cfg.pfc.watchdog.model_copy(update={"enabled": app.watchdog_on})
        update["pfc"] = cfg.pfc.model_copy(update={"watchdog": watchdog})
    return cfg.model_copy(update=update)  # type: ignore[no-any-return]


def _bfcc(app: Any) -> BaseModel:
    return app.config.model_copy(update={"params": app.params})  # type: ignore[no-any-return]


def _effective(app: Any) -> BaseModel:
    """A program whose run-time changes are applied to its config as they
    are made (AQM, S-PIE: `effective`), or that has none (its config)."""
    effective = getattr(app, "effective", None)
    return effective if isinstance(effective, BaseModel) else app.config  # type: ignore[no-any-return]


# The programs whose run-time values live outside their config object, each
# folded back into its config's fields; every other program is _effective.
FOLDS: dict[str, Callable[[Any], BaseModel]] = {
    "pmqecn": _pmqecn,
    "dadctcp": _dadctcp,
    "p4qcn": _p4qcn,
    "bfcc": _bfcc,
}


def running_config(program: str, app: App) -> Any:
    """`app`'s config with its run-time values in their config fields,
    validated as a file is (what `apply` would say of it)."""
    raw = FOLDS.get(program, _effective)(app).model_dump(mode="json")
    return get_program(program).parse_config(raw, "the running values")


def keep_measurements(program: str, app: App, held: dict[str, Any] | None) -> None:
    """Give `app` (about to be written) the measurements in `held` (the
    live_state() of what the switch runs), for the items both have: a class
    the new config adds has none yet, one it drops has none to keep."""
    fields = MEASURED.get(program)
    if not fields or not held:
        return
    live = app.live_state()
    changed = False
    for key, item in live.items():
        was = held.get(key)
        if not isinstance(item, dict) or not isinstance(was, dict):
            continue
        for name in fields:
            if name in was and item.get(name) != was[name]:
                item[name] = was[name]
                changed = True
    if changed:
        app.restore_live(live)


def measurements_held(program: str, switch: Switch, config: Any) -> dict[str, Any] | None:
    """What a BF-Runtime switch holds of the program's measurements, read
    back as the live state of `config` (None: the program measures nothing)."""
    if program not in MEASURED:
        return None
    probe = get_program(program).make_app(switch, config)
    adopt_held_values(probe)
    return probe.live_state()


def unsaved_values(program: str, running: App, from_config: App) -> list[str]:
    """The live values of `running` that its config (running_config) cannot
    say, as dotted paths (none today: P4QCN's watchdog switched off is its
    config's `pfc.watchdog.enabled`)."""
    measured = set(MEASURED.get(program, ()))
    held = dict(_leaves(running.live_state()))
    saved = dict(_leaves(from_config.live_state()))
    return [
        path
        for path in sorted(held.keys() | saved.keys())
        if path.rsplit(".", 1)[-1] not in measured and held.get(path) != saved.get(path)
    ]


def _leaves(tree: object, path: str = "") -> Iterator[tuple[str, object]]:
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    else:
        yield path, tree


# ---- configs compared field by field -----------------------------------------------


@dataclass(frozen=True)
class FieldChange:
    change: str  # add | change | remove
    field: str  # voice.threshold_cells, queues[4/1].q_max_cells, routes[10.0.1.0/24].port
    current: str  # what the switch runs ("-" when it has no such field)
    intended: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


# What names an item of a list of mappings, best first: the first of these
# every item has and no two share (else its index).
_ITEM_KEYS: tuple[tuple[str, ...], ...] = (
    ("name",),
    ("port", "queue"),
    ("id",),
    ("port",),
    ("prefix",),
    ("dscp",),
    ("queue",),
    ("pool",),
)


def _item_key(*lists: list[Any]) -> Callable[[int, dict[str, Any]], str]:
    """How the items of `lists` (one list as two configs hold it) are named."""

    def named_by(fields: tuple[str, ...]) -> Callable[[int, dict[str, Any]], str]:
        return lambda _i, item: "/".join(str(item[f]) for f in fields)

    for fields in _ITEM_KEYS:
        key = named_by(fields)
        if all(all(f in item for f in fields) for items in lists for item in items) and all(
            len({key(i, x) for i, x in enumerate(items)}) == len(items) for items in lists
        ):
            return key
    return lambda i, _item: str(i)


def show(value: object) -> str:
    """A config value as YAML would read it (true, [5, 6], {a: 1})."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(", ", ": "))
    return str(value)


def _item_path(path: str, key: str, named: bool) -> str:
    # A named item (a PMQECN class) is what an operator types: `voice`.
    if named and "." not in path and "[" not in path:
        return key
    return f"{path}[{key}]"


def _compare_keyed(
    old: dict[Any, Any], new: dict[Any, Any], where: Callable[[Any], str], out: list[FieldChange]
) -> None:
    """Each key of either side, the old side's first: removed, added, or
    compared value by value; `where` names a key's place."""
    for k in [*old, *(k for k in new if k not in old)]:
        sub = where(k)
        if k not in new:
            out.append(FieldChange("remove", sub, show(old[k]), "-"))
        elif k not in old:
            out.append(FieldChange("add", sub, "-", show(new[k])))
        else:
            _compare(old[k], new[k], sub, out)


def _compare(old: object, new: object, path: str, out: list[FieldChange]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        _compare_keyed(old, new, lambda k: f"{path}.{k}" if path else str(k), out)
        return
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and (old or new)
        and all(isinstance(x, dict) for x in [*old, *new])
    ):
        key = _item_key(old, new)
        named = all("name" in x for x in [*old, *new])
        before = {key(i, x): x for i, x in enumerate(old)}
        after = {key(i, x): x for i, x in enumerate(new)}
        _compare_keyed(before, after, lambda k: _item_path(path, k, named), out)
        return
    if old != new:
        out.append(FieldChange("change", path, show(old), show(new)))


def field_changes(current: object, intended: object) -> list[FieldChange]:
    """Where `intended` (JSON-like: a config's model_dump) differs from
    `current`, field by field."""
    out: list[FieldChange] = []
    _compare(current, intended, "", out)
    return out
