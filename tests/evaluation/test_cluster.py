# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`tofcc eval run --cluster ADDRESS`: the runs as tasks of a Dask cluster
(issue 48 deliverable 3), with the same bytes as the local run.

The comparison needs the `cluster` extra (Dask's distributed) and the ns3
wheel, and is skipped with the reason without either; the refusals need
neither."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from doubles.cli_run import out_of
from evaluation import cli as eval_cli

needs_dask = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason="Dask's distributed is not installed (pip install -e '.[cluster]')",
)
needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A local cluster of two single-threaded worker processes, as CI starts it."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


@needs_dask
@needs_ns3
def test_tcp_smoke_on_a_cluster_gives_the_local_run_s_metrics(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs (tcn, none), one on each worker: the metrics and results are
    the bytes of the local run's (every run is seeded by itself)."""
    local, remote = tmp_path / "local", tmp_path / "cluster"
    code, _, err = out_of(capsys, "eval", "run", "tcp-smoke", "--jobs", "1", "--out", str(local))
    assert code == 0, err
    code, _, err = out_of(
        capsys, "eval", "run", "tcp-smoke", "--cluster", scheduler, "--out", str(remote)
    )
    assert code == 0, err
    for name in ("metrics.csv", "results.json"):
        got = (remote / "tcp-smoke" / name).read_bytes()
        assert got == (local / "tcp-smoke" / name).read_bytes(), name
    rows = (remote / "tcp-smoke" / "metrics.csv").read_text().splitlines()
    assert [r.split(",")[1] for r in rows[1:]] == ["tcn", "none"]


def test_cluster_without_dask_exits_8_naming_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules: `import distributed` raises ImportError, as when
    # the extra is not installed.
    monkeypatch.setitem(sys.modules, "distributed", None)
    out = tmp_path / "out"
    code, _, err = out_of(
        capsys, "eval", "run", "tcp-smoke", "--cluster", "tcp://127.0.0.1:8786", "--out", str(out)
    )
    assert code == eval_cli.EXIT_NO_CLUSTER == 8
    assert "pip install 'tofino-cc[cluster]'" in err
    assert len(err.strip().splitlines()) == 1, err
    assert not out.exists(), "nothing run, nothing written"


@needs_dask
def test_cluster_that_does_not_answer_exits_8_naming_the_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    # A port nothing listens on: bound, never listened.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
        monkeypatch.setattr(eval_cli, "CONNECT_TIMEOUT_S", 2)
        out = tmp_path / "out"
        code, _, err = out_of(
            capsys, "eval", "run", "tcp-smoke", "--cluster", address, "--out", str(out)
        )
    assert code == 8
    assert address in err
    assert len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_cluster_with_jobs_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = out_of(
        capsys, "eval", "run", "tcp-smoke", "--cluster", "tcp://h:8786", "--jobs", "2",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 2
    assert "--jobs and --cluster" in err
