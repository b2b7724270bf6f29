# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The SDE's Python client, how to find it, and the names and value forms
BF-Runtime uses: what every writer of this backend shares."""

from __future__ import annotations

import contextlib
import glob
import importlib
import os
import sys
from collections.abc import Mapping
from typing import Any

from models.switch.core import P4ModelError

from ...errors import ControllerError, SdeMissing
from ...switch import MAX_TM_PRIORITY

ALL_PIPES = 0xFFFF

MIRROR_TABLE = "$mirror.cfg"
PORT_STAT_TABLE = "$PORT_STAT"
PORT_TABLE = "$PORT"
PORT_STR_TABLE = "$PORT_STR_INFO"
# The `$PORT` fields read_port uses, the only ones it asks for.
PORT_FIELDS = (
    "$SPEED",
    "$FEC",
    "$AUTO_NEGOTIATION",
    "$N_LANES",
    "$PORT_ENABLE",
    "$PORT_UP",
    "$TX_PFC_EN_MAP",
    "$RX_PFC_EN_MAP",
)
# The model's limit for $max_pkt_len, so both backends refuse the same sessions.
MAX_MIRROR_PKT_LEN = 0x3FFF
MATCH_PRIORITY_BITS = 32
# google.rpc.Code.NOT_FOUND, as carried in per-update errors.
CODE_NOT_FOUND = 5
# Keys per read request when a cycle reads many cells of one table. At least
# the largest register or counter of any program (4096 cells: BFCC's
# vq_occupancy, S-PIE's sketch rows), so a cycle's read of one register is one
# request, whatever it reads (DA-DCTCP's 1024 queue slots in 4 pipes were four
# requests a cycle at 512; issue 50). Well inside gRPC's 4 MB message limit: a
# cell answers in well under 100 bytes per pipe, 4096 x 4 pipes under 2 MB.
READ_BATCH = 4096
# Text of gRPC errors that mean the switch, not the request, is the problem.
GONE_HINTS = (
    "connection reset",
    "socket closed",
    "stream removed",
    "closed channel",
    "failed to connect",
)
MIRROR_FIELDS = (
    "$direction",
    "$session_enable",
    "$ucast_egress_port",
    "$ucast_egress_port_valid",
    "$max_pkt_len",
    "$egress_port_queue",
    "$ingress_cos",
)


def sde_python_paths(sde_install: str) -> list[str]:
    """The directories an SDE install puts on the path for `bfrt_grpc.client`,
    first first, as open-p4studio 1f97778f's run_p4_tests.sh does (lines
    248-255): `lib/python3.X/site-packages/tofino` (bfrt_grpc as a package),
    `site-packages` itself, `site-packages/tofino/bfrt_grpc` (its generated
    protobuf modules import each other top-level), and ahead of them the
    third-party packages p4studio installed (grpcio, protobuf, googleapis'
    google.rpc), in `$SDE_INSTALL/$SDE_DEPENDENCIES/lib/python3.X/site-packages`
    with SDE_DEPENDENCIES read from `share/environment` (cmake/sdepythonpath.py
    get_sde_python_dependencies; CMakeLists.txt line 34 writes it, "." unless
    p4studio was given a dependencies directory). python3.X is this
    interpreter's: the SDE's C extensions only load in the Python they were
    built for."""
    lib = f"lib/python{sys.version_info.major}.{sys.version_info.minor}"
    site = os.path.join(sde_install, lib, "site-packages")
    deps = "."
    env_file = os.path.join(sde_install, "share", "environment")
    with contextlib.suppress(OSError), open(env_file, encoding="utf-8") as f:
        for line in f:
            name, _, value = line.strip().partition("=")
            if name == "SDE_DEPENDENCIES" and value:
                deps = value
    dep_site = os.path.normpath(os.path.join(sde_install, deps, lib, "site-packages"))
    tofino = os.path.join(site, "tofino")
    paths = [dep_site, tofino, site, os.path.join(tofino, "bfrt_grpc")]
    out: list[str] = []
    for path in paths:
        if path not in out:
            out.append(path)
    return out


def load_bfrt_client() -> Any:
    """Import the SDE's `bfrt_grpc.client`, from $SDE_INSTALL when it is set
    (with the paths sde_python_paths gives, as the SDE's own scripts do)."""
    sde = os.environ.get("SDE_INSTALL")
    if sde:
        for path in reversed(sde_python_paths(sde)):
            if os.path.isdir(path):
                if path in sys.path:
                    sys.path.remove(path)
                sys.path.insert(0, path)
    try:
        return importlib.import_module("bfrt_grpc.client")
    # An SDE built for another Python or protobuf fails with more than ImportError.
    except Exception as exc:
        if sde:
            built = sorted(
                os.path.basename(os.path.dirname(p))
                for p in glob.glob(os.path.join(sde, "lib", "python3*", "site-packages"))
            )
            where = (
                f"$SDE_INSTALL={sde} has no usable "
                f"{os.path.relpath(sde_python_paths(sde)[2], sde)}/tofino/bfrt_grpc"
                f" (it has Python packages for {', '.join(built) or 'no Python'}; this is "
                f"python{sys.version_info.major}.{sys.version_info.minor})"
            )
        else:
            where = "$SDE_INSTALL is not set"
        raise SdeMissing(
            f"the BF-Runtime backend needs the SDE's Python client bfrt_grpc.client "
            f"({type(exc).__name__}: {exc}); {where}. Install the Intel P4 Studio SDE "
            "(open-p4studio) and set SDE_INSTALL to its install directory, or use the "
            "model backend"
        ) from exc


def uint_error(what: str, value: Any, bits: int) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{what}: expected an integer, got {value!r}"
    if not 0 <= value < (1 << bits):
        return f"{what}: value {value} does not fit in {bits} bits"
    return None


def require_uint(what: str, value: Any, bits: int) -> None:
    err = uint_error(what, value, bits)
    if err:
        raise P4ModelError(err)


def message(exc: BaseException) -> str:
    # str(KeyError) quotes its argument; the argument is the message.
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    subs = getattr(exc, "errors", None) or []
    if subs:
        return "; ".join(
            f"update {i}: {getattr(e, 'message', '') or e}" for i, e in subs if e is not None
        )
    # The client's exceptions print only per-update errors (or gRPC's debug
    # string): without them, the status code and details are the message.
    rpc = getattr(exc, "grpc_error", None)
    if rpc is not None and hasattr(rpc, "code"):
        code = rpc.code()
        details = rpc.details() if hasattr(rpc, "details") else ""
        return f"{getattr(code, 'name', code)}: {details}" if details else str(code)
    return str(exc) or type(exc).__name__


def rpc_error_message(exc: BaseException) -> str:
    """A client exception as text: per-update errors, else the gRPC status."""
    return message(exc)


# tm.queue.sched_cfg max_priority is a string choice: "LOW", "0".."7", "HIGH"
# (open-p4studio bf_rt_tm/bf_rt_tm_tf1.json); 0 reads back as "LOW" and "HIGH"
# is 7 (bf_rt_tm_table_helper_sched.cpp, traffic_mgr_types.h).
_TM_PRIORITY_NAMES = {"LOW": 0, "HIGH": MAX_TM_PRIORITY}


def tm_priority_to_switch(priority: int) -> str:
    return str(priority)


def tm_priority_from_switch(value: Any) -> int:
    text = str(value)
    if text in _TM_PRIORITY_NAMES:
        return _TM_PRIORITY_NAMES[text]
    try:
        return int(text)
    except ValueError:
        raise ControllerError(f"tm.queue.sched_cfg: unknown max_priority {value!r}") from None


def tm_to_switch(fields: Mapping[str, int]) -> dict[str, Any]:
    return {f: tm_priority_to_switch(v) if f == "max_priority" else v for f, v in fields.items()}


def tm_from_switch(name: str, value: Any) -> Any:
    if name == "max_priority":
        return tm_priority_from_switch(value)
    # Shaping's unit/provisioning are strings and max_rate_enable a bool: kept
    # as the switch gave them, so undo writes them back in the same type.
    if isinstance(value, bool | str):
        return value
    # A repeated field (tm.port.flowcontrol cos_to_icos) is written back as a list.
    if isinstance(value, list | tuple):
        return [int(v) for v in value]
    return int(value)


# Shaping as BFCC writes it (open-p4studio bf_rt_tm_tf1.json, tf2 the same):
# tm.{port,queue}.sched_shaping take unit "BPS" (max_rate in kb/s, burst in
# bytes) and provisioning "LOWER" (the hardware rate at most the one asked,
# so a cut is never shallower); tm.{port,queue}.sched_cfg max_rate_enable
# turns the shaper on and off. Verified: table, key and field names, types
# and string choices in the JSON; the kb/s unit in traffic_mgr_sch_intf.h.
# Assumed: that the server takes a max_rate above the port's speed (then the
# shaper does nothing), and accepts a rate of 1 kb/s; BFCC never asks for 0
# (check_shaping refuses it on both backends).
SHAPING_UNIT = "BPS"
SHAPING_PROVISIONING = "LOWER"


def busy_message(program: str, address: str, why: str) -> str:
    """Who holds the program and what to do instead: BF-Runtime does not name
    the other client, but on a managed switch it is the tofcc daemon."""
    return (
        f"program '{program}' at {address} is bound by another client ({why}). "
        "One writer per program: if it is the tofcc daemon (`tofcc run`, systemd unit "
        "tofcc), retune through it: edit its deployment's config (PMQECN: set "
        "threshold_cells and `pin: true` so the optimiser keeps it), preview with "
        "`tofcc diff --config /etc/tofcc/fleet.yaml`, apply with `systemctl reload tofcc` "
        "(deploy/README.md, 'Retuning under the daemon'). Reading works beside it: "
        "tofcc status, tofcc diff"
    )
