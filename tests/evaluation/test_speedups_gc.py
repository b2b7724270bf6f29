# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""run_one's frozen heap (issue 48, models/speedups.py): the objects alive
before a run are left out of the collector's passes during it and given
back after, on the fast path only, and a heap the caller froze stays
frozen. (That a run's results do not change is test_speedups_ns3.py's: it
runs scenarios on both paths.)"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from evaluation.simulate import YOUNG_OBJECTS, frozen_heap
from models import speedups


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_fast_path_freezes_the_heap_for_the_run_only() -> None:
    before = gc.get_threshold()
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        # Young objects collected in fewer passes, the older generations as set.
        assert gc.get_threshold() == (YOUNG_OBJECTS, *before[1:])
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_a_failed_run_gives_the_thresholds_back() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("an event failed")
    assert gc.get_threshold() == before


def test_the_heap_is_given_back_when_the_run_fails() -> None:
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("an event failed")
    assert gc.get_freeze_count() == 0


def test_the_reference_path_leaves_the_collector_alone() -> None:
    before = gc.get_threshold()
    with speedups.disabled(), frozen_heap():
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == before


def test_a_heap_the_caller_froze_stays_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither frozen again nor given back. (Counting the frozen objects
    cannot show it: a frozen object whose last reference goes is freed at
    once, so the count may fall while other threads run.)"""
    gc.freeze()
    calls: list[str] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    with frozen_heap():
        pass
    assert calls == []
    assert gc.get_freeze_count() > 0


def test_garbage_among_the_frozen_objects_is_collected_after_the_run() -> None:
    """A cycle alive when the run starts (frozen) and dropped during it is
    not collected while frozen, and is once the run has given it back."""

    class Node:
        other: object

    a, b = Node(), Node()
    a.other, b.other = b, a
    ref = weakref.ref(a)
    with frozen_heap():
        del a, b
        gc.collect()
        assert ref() is not None
    gc.collect()
    assert ref() is None
