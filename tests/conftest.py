# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import gc
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings
from quick_subset import QUICK

from bfrt_controller.backends.bfrt import BfrtSwitch
from doubles import FakeBfrtGrpc
from hw_profiles import HwProfile

REPO = Path(__file__).resolve().parents[1]

# Property-based tests (tests/test_properties_*.py). "ci", the default, is
# bounded and derandomised so the suite stays fast and a failure reproduces;
# "long" is the fuzzing run: TOFCC_HYPOTHESIS_PROFILE=long pytest
# tests/test_properties_*.py (or --hypothesis-profile=long).
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long", max_examples=4000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("TOFCC_HYPOTHESIS_PROFILE", "ci"))


@pytest.hookimpl(tryfirst=True)  # before -m picks the marked tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`pytest -m quick`: the files tests/quick_subset.py names."""
    for item in items:
        if _repo_path(item.path) in QUICK:
            item.add_marker(pytest.mark.quick)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With `-m quick` the other test files are not imported at all: their
    collection (ns-3, matplotlib, the solvers) was a third of the subset's
    CPU time, on every worker."""
    if config.option.markexpr != "quick" or not collection_path.name.startswith("test_"):
        return None
    rel = _repo_path(collection_path)
    return True if collection_path.suffix == ".py" and rel not in QUICK else None


def _repo_path(path: Path) -> str | None:
    return path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else None


@pytest.fixture(scope="session")
def build_p4() -> ModuleType:
    """scripts/build_p4.py as a module (it is a script, not in a package)."""
    spec = importlib.util.spec_from_file_location("build_p4", REPO / "scripts" / "build_p4.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_p4"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def python_model() -> Iterator[None]:
    """The models run every packet in Python: for the tests that break a
    Python model on purpose (a compiled core, models/switch/native, would
    run the unbroken logic; tests/test_native_cores.py holds the cores to
    the models)."""
    from models import speedups

    with speedups.native_disabled():
        yield


@pytest.fixture
def fake(profile: HwProfile) -> FakeBfrtGrpc:
    """The fake BF-Runtime client serving PMQECN on the test module's `profile`."""
    return FakeBfrtGrpc("pmqecn", profile)


@pytest.fixture
def sw(fake: FakeBfrtGrpc, profile: HwProfile) -> BfrtSwitch:
    """A BF-Runtime switch connected to `fake`."""
    s = BfrtSwitch("pmqecn", profile, client_module=fake)
    s.connect()
    return s


@pytest.fixture(autouse=True)
def _heap_unfrozen() -> Iterator[None]:
    """A daemon a test leaves open has frozen the heap (service.settle_heap);
    the next test must not inherit that."""
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _private_state_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test's tofcc state (the model target's files, deployments'
    `target-NAME.yaml`, run locks) in a directory of its own: a test that
    applies a deployment must never write the user's ~/.local/state, nor see
    what an earlier test left there; nor does a TOFCC_* variable of the
    shell running the suite choose its program or target. A test may set its own."""
    state = tmp_path_factory.mktemp("xdg-state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    # Audit lines (audit.py) stay in the test's state directory; the syslog
    # copy goes to a socket that is not there (so stderr), never the machine's.
    monkeypatch.setenv("TOFCC_SYSLOG_SOCKET", str(state / "no-syslog"))
    for name in ("TOFCC_PROGRAM", "TOFCC_TARGET", "TOFCC_AUDIT_LOG", "LOGS_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
