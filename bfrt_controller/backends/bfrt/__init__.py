# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BF-Runtime backend: a real switch or tofino-model, through the SDE's
bfrt_grpc client.

One session (session.py) and one writer per kind of switch resource, each
owning its checks, its writes, its snapshot and undo, and its reads:

- p4tables.py: the program's match-action tables, registers and counters;
- mirror.py: `$mirror.cfg`;
- tm.py: the TM's fixed port and queue rows (scheduling, shaping, PFC), and
  the settings a port add resets;
- ppg.py, pools.py: tm.ppg.cfg and the pools;
- ports.py: `$PORT` and its stat and name tables.

batch.py runs the tables, mirror sessions and TM rows as one all-or-nothing
batch; outside.py runs pools, PPGs and ports (no transaction) around it;
switch.py composes them behind the Switch interface; client.py finds the
SDE's client and holds what they share.
"""

from .client import (
    ALL_PIPES,
    MIRROR_TABLE,
    PORT_STAT_TABLE,
    PORT_STR_TABLE,
    PORT_TABLE,
    READ_BATCH,
    busy_message,
    load_bfrt_client,
    message,
    rpc_error_message,
    sde_python_paths,
    tm_priority_from_switch,
    tm_priority_to_switch,
)
from .switch import BfrtSwitch

# The name the SDE tests have used for an exception's text.
_message = message

__all__ = [
    "ALL_PIPES",
    "MIRROR_TABLE",
    "PORT_STAT_TABLE",
    "PORT_STR_TABLE",
    "PORT_TABLE",
    "READ_BATCH",
    "BfrtSwitch",
    "busy_message",
    "load_bfrt_client",
    "message",
    "rpc_error_message",
    "sde_python_paths",
    "tm_priority_from_switch",
    "tm_priority_to_switch",
]
