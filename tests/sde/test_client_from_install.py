# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Issue 34 item 3: `--target grpc://` imports the SDE's client from an
install tree the way open-p4studio's run_p4_tests.sh (lines 248-255) and
bin/sdepythonpath.py set the path. client.py imports `grpc` and
`google.rpc` (bfruntime_grpc_client/python/client.py lines 26 and 44-45),
which p4studio installs (grpcio 1.60.0, protobuf 4.23.4,
p4studio/dependencies/dependencies.yaml lines 290-291) into
`$SDE_INSTALL/$SDE_DEPENDENCIES/lib/python3.X/site-packages`. The tree here
has that shape with stand-ins that say where they were imported from; the
import runs in a fresh interpreter, as `tofcc` would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PY = f"python{sys.version_info.major}.{sys.version_info.minor}"

CLIENT = """\
import grpc
import bfrt_grpc.bfruntime_pb2_grpc as bfruntime_pb2_grpc
from bfrt_grpc.bfruntime_pb2_grpc import bfruntime__pb2 as bfruntime_pb2
from . import info_parse
import google.rpc.status_pb2 as status_pb2
import google.rpc.code_pb2 as code_pb2

# Only the SDE's stand-ins carry these: a grpc from elsewhere fails the import.
WHERE = {"grpc": grpc.FROM_SDE, "status_pb2": status_pb2.FROM_SDE}
"""


def write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def install_tree(root: Path, dependencies: str | None) -> Path:
    """$SDE_INSTALL as p4studio leaves it: the SDE's own Python packages under
    lib/python3.X/site-packages, third-party ones under SDE_DEPENDENCIES."""
    sde = root / "install"
    site = sde / "lib" / PY / "site-packages"
    bfrt = site / "tofino" / "bfrt_grpc"
    write(bfrt / "__init__.py")
    write(bfrt / "client.py", CLIENT)
    write(bfrt / "info_parse.py")
    # Generated protobuf modules import each other top-level (grpc_tools' style).
    write(bfrt / "bfruntime_pb2_grpc.py", "import bfruntime_pb2 as bfruntime__pb2\n")
    write(bfrt / "bfruntime_pb2.py")
    deps_site = site if dependencies is None else sde / dependencies / "lib" / PY / "site-packages"
    write(deps_site / "grpc" / "__init__.py", "FROM_SDE = __file__\n")
    # google is a namespace package (no __init__.py), as protobuf installs it.
    write(deps_site / "google" / "rpc" / "__init__.py")
    write(deps_site / "google" / "rpc" / "status_pb2.py", "FROM_SDE = __file__\n")
    write(deps_site / "google" / "rpc" / "code_pb2.py")
    write(sde / "share" / "environment", f"SDE_DEPENDENCIES={dependencies or '.'}\n")
    return sde


def load_in_fresh_python(sde: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import json\n"
        "from bfrt_controller.backends.bfrt import load_bfrt_client\n"
        "print(json.dumps(load_bfrt_client().WHERE))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SDE_INSTALL")}
    env["SDE_INSTALL"] = str(sde)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("dependencies", [None, "deps"])
def test_client_imports_grpc_and_google_rpc_from_the_install(
    tmp_path: Path, dependencies: str | None
) -> None:
    sde = install_tree(tmp_path, dependencies)
    proc = load_in_fresh_python(sde)
    assert proc.returncode == 0, proc.stderr[-2000:]
    where = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(where["grpc"]).is_relative_to(sde)
    assert Path(where["status_pb2"]).is_relative_to(sde)


def test_an_install_for_another_python_says_so(tmp_path: Path) -> None:
    sde = install_tree(tmp_path, None)
    (sde / "lib" / PY).rename(sde / "lib" / "python3.0")
    proc = load_in_fresh_python(sde)
    assert proc.returncode != 0
    assert "python3.0" in proc.stderr and PY in proc.stderr
