# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A fake of the SDE's `bfrt_grpc.client` module and of the switch behind it.

`FakeBfrtGrpc(program, profile)` is passed where BfrtSwitch would import
`bfrt_grpc.client`. Its P4 tables are read from the bf-rt.json the Tofino
compiler wrote for the program and chip (tests/doubles/compiled_tables.py,
tests/data/bfrt/), so table, key, action and field names, widths, sizes and
action scopes are the compiler's, not the model's; only initial default
actions and register initial values, which bf-rt.json does not carry, come
from the model. `$mirror.cfg`, `$PORT*` and the TM tables are the SDE's own
fixed tables, with the fields tofino-cc uses, each cited below.

It is faithful where the controller depends on it: unknown names fail on the
client side in make_key/make_data (KeyError/ValueError, as the real client);
values are checked by the "server" on write (INVALID_ARGUMENT naming the
field); one write call honours ROLLBACK_ON_ERROR; entry_get is a lazy
generator; registers read one value per pipe, counters the sum over pipes;
TM tables take a single-pipe target.

Read from open-p4studio (pkgsrc/bf-drivers) and modelled here:
- ROLLBACK_ON_ERROR is a pipe_mgr transaction (proto/bf_rt_server_impl.cpp
  Write: session->beginTransaction); `bf_mirror_session_set`/`_reset` return
  PIPE_TXN_NOT_SUPPORTED inside one (pipe_mgr/bf_pipe_mgr_mirror_buffer.c
  api_setup), which the server reports as UNIMPLEMENTED. TM tables do not
  take part in transactions: an aborted call leaves its applied TM updates.
- `$mirror.cfg` (bf_rt_mirror/bf_rt_mirror_table_impl.cpp): add on an existing
  session, modify or delete of an absent one are BF_INVALID_ARG; sid 0 is
  reserved (INVALID_ARGUMENT); a sid above the normal-session maximum is
  PIPE_OBJ_NOT_FOUND.
- `tm.queue.sched_cfg` `max_priority` is a string choice LOW, 0..7, HIGH
  (bf_rt_tm/bf_rt_tm_tf1.json); priority 0 reads back as "LOW"
  (bf_rt_tm_table_helper_sched.cpp prio_to_str). The client sends a DataTuple
  `val` through six.ensure_binary, so an int for a string field raises
  TypeError before anything is sent (bfruntime_grpc_client/python/client.py).
- `$PORT` (bf_rt_port/bf_rt_port_table_impl.cpp, bf_pm/bf_pm_intf.c; see
  bfrt_controller/ports.py): an add needs `$SPEED` and `$FEC`; a port that
  is not a front-panel MAC port, a speed on a lane count or channel the chip
  cannot take, or a FEC the speed refuses is INVALID_ARGUMENT; adding an
  added port succeeds without touching its speed, lanes or FEC and deleting
  a port not added succeeds (bf_pm_intf.c bf_pm_port_add_with_lanes and
  bf_pm_port_delete return BF_SUCCESS for both); reading a port not added is
  NOT_FOUND, and so (our reading of portMgrPortFecGet failing) is modifying
  one; a modify with `$SPEED` is checked against the port's current
  FEC; FEC reads back as the first alias in std::map order; `$PORT_UP` is
  read-only. Port changes are not in pipe_mgr's transaction: an aborted
  call keeps them, as with TM.
- Channels (fake_grpc.py): ClientInterface makes its own with the module's
  `grpc.insecure_channel` (client.py line 436) and takes no credentials
  (line 405); a switch given serve_tls() refuses a plaintext channel and any
  TLS one whose handshake would fail (CA, name, client certificate), one
  without refuses a TLS channel: a subscribe then fails as the real client's
  does (RuntimeError), an independent client's first RPC with UNAVAILABLE.
- Clients (proto/bf_rt_server_mgr.cpp): a second subscription with a client id
  in use fails; a second client binding a program another client owns gets
  ALREADY_EXISTS; an independent client (perform_subscribe=False) binds
  nothing and names the program in each read/write (p4_name).

- Read-only fields (`"read_only": true` in bf_rt_tm_tf1.json / tf2.json,
  e.g. tm.port.flowcontrol mode_rx) are refused on write. The switch skips
  them without an error (bf_rt_tm_table_impl_port.cpp tableSetEntry, lines
  271-279), which leaves a controller believing a write it never made.
- `$PORT_STAT` (bf_rt_port_table_impl.cpp BfRtPortStatTable::
  tableEntryGet_internal, line 1846): a read without from_hw answers from a
  shadow the port manager refreshes every 1000 ms (bf_pm.h line 28); here the
  shadow moves only when the test calls poll_port_stats(). The client's own
  default is from_hw=True (client.py entry_get).
- `$PORT_STR_INFO` resolves a front-panel name to a device port from the
  box's map (set_front_panel(); by default the model platform's, which
  hw_profiles/boards copies); a from_hw read of it is BF_NOT_SUPPORTED
  (tableEntryGet line 2597).
- A `$PORT` read of all fields fails when one sub-read does (`status |= sts`,
  tableEntryGet_internal from line 911; fail_port_field()); a read that asks
  for fields (required_data) reads only those.

What the SDE does after a call (issue 42; open-p4studio 1f97778f):
- a `$PORT` add of a port that was not added runs the TM's port add
  (traffic_mgr/common/tm_init.c tm_add_port, tm_port.c bf_tm_add_new_port):
  tm.port.flowcontrol mode_tx and mode_rx become NONE (tm_port.c lines
  953-956), the port shaper runs at the port rate with a 9216-byte burst
  (lines 910-950), and every queue's max rate is the port rate and its min
  rate 0 (hw_intf/tm_tofino_hw_intf.c lines 6425-6426, tm_tof2_hw_intf.c
  lines 9176-9177). Weights and priorities are kept;
- `$PORT_STAT` of a port that is not added is BF_INVALID_ARG (bf_pm/
  bf_pm_intf.c bf_pm_port_stat_direct_get line 10449);
- every queue's DWRR weight is 1023 at power-on (traffic_mgr/api/
  tm_api_sch.c line 64);
- TM reads of PFC limits and PPG hysteresis come from the registers, in
  8-cell units, only on an ASIC (common/tm_ctx.h line 260
  TM_IS_TARGET_ASIC, tm_ig_ppg.c line 296): `FakeBfrtGrpc(..., asic=False)`
  is tofino-model, which returns what was written;
- a pipe has 32 PPG hysteresis profiles (init/tm_tofino.h line 66, tm_tof2.h
  line 67); one more distinct value is BF_NO_SYS_RESOURCES
  (tm_tofino_hw_intf.c line 489), RESOURCE_EXHAUSTED here;
- a `$PORT` write whose sub-call fails (autonegotiation, PFC map, enable)
  is logged and reported as success (bf_rt/bf_rt_port/
  bf_rt_port_table_impl.cpp line 413): ignore_port_field().

Not modelled: ids, protobuf encoding,
annotations, idle timeouts, action profiles, learn/digest, most TM fields.
Stricter than a switch in one place: a MAT write must give every parameter
of its action.
"""

from __future__ import annotations

import copy
import enum
import queue
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from bfrt_controller.ports import (
    AN_CHOICES,
    DEFAULT_LANES,
    FEC_CHOICES,
    SPEED_CHOICES,
    canonical_fec,
    is_mac_port,
    mode_refusal,
)
from hw_profiles import HwProfile
from models.switch.registry import make_model
from tests.doubles.compiled_tables import (
    FieldSpec,
    KeySpec,
    TableSpec,
    p4_table_specs,
)
from tests.doubles.fake_grpc import FakeChannel, FakeGrpc, ServerTls, plaintext_refusal

ALL_PIPES = 0xFFFF
# bfruntime_pb2.WriteRequest.Atomicity
CONTINUE_ON_ERROR = 0
ROLLBACK_ON_ERROR = 1
# Power-on DWRR weight of every queue: open-p4studio 1f97778f
# traffic_mgr/api/tm_api_sch.c line 64 ("Default: Queue scheduling weights
# set to 1023"); the defaults tm_tofino_default.c line 756 and
# tm_tof2_default.c line 928 write. The model backend reports the same.
DEFAULT_DWRR_WEIGHT = 1023
# tm.queue.sched_cfg priorities as bf_rt_tm_tf1.json declares them.
TM_PRIORITY_CHOICES = ("LOW", "0", "1", "2", "3", "4", "5", "6", "7", "HIGH")
# Power-on scheduling of every queue: equal weights, lowest priority. The
# driver stores priorities as numbers and reads 0 back as "LOW".
DEFAULT_TM_QUEUE: dict[str, Any] = {
    "dwrr_weight": DEFAULT_DWRR_WEIGHT,
    "max_priority": 0,
    "max_rate_enable": False,
}
# Shaping tables (bf_rt_tm_tf1.json and tf2: the same names, types and
# choices). Power-on values are assumed, not read from the driver: with
# max_rate_enable false they shape nothing.
SHAPING_UNITS = ("PPS", "BPS")
SHAPING_PROVISIONING = ("UPPER", "LOWER", "MIN_ERROR")
DEFAULT_QUEUE_SHAPING: dict[str, Any] = {
    "unit": "BPS",
    "provisioning": "MIN_ERROR",
    "min_rate": 0,
    "min_burst_size": 0,
    "max_rate": 0,
    "max_burst_size": 0,
}
DEFAULT_PORT_SHAPING: dict[str, Any] = {
    "unit": "BPS",
    "provisioning": "MIN_ERROR",
    "max_rate": 0,
    "max_burst_size": 0,
}
DEFAULT_PORT_SCHED: dict[str, Any] = {"max_rate_enable": False}
# PFC tables (bf_rt_tm_tf1.json and tf2): tm.port.flowcontrol mode_tx
# (power-on "NONE": "Default is no pause or flow control"), read-only mode_rx
# (power-on "NONE" on Tofino, "PFC" on Tofino2, as each JSON's description
# says) and cos_to_icos (eight uint8, power-on the identity) and tm.queue.cfg
# (pfc_cos uint8, power-on 0; read-only mirror_drop_destination, power-on
# false but for the one mirror-drop queue per pipe, which is not modelled).
PFC_MODE_CHOICES = ("NONE", "PFC", "PAUSE")
IDENTITY_COS_TO_ICOS = list(range(8))
# The TM's iCoS count (bfTMPortIcosCntGet): cos_to_icos has this many items.
ICOS_COUNT = 8
DEFAULT_QUEUE_CFG: dict[str, Any] = {"mirror_drop_destination": False, "pfc_cos": 0}
# tm.queue.sched_cfg dwrr_weight: "Supported range [ 0.. 1023 ]" (tm_api_sch.c
# line 71); the driver writes a larger one to the register unchecked.
MAX_DWRR_WEIGHT = 1023
# What the TM keeps of PFC limits and PPG hysteresis (8-cell units; see
# bfrt_controller/switch.py as_hardware_holds for the SDE lines).
HW_UNIT_CELLS = 8
MIN_PPG_HYSTERESIS_CELLS = 32
# Distinct PPG (WAC) hysteresis values a pipe can hold: the offset profile
# table has 32 entries (traffic_mgr/init/tm_tofino.h line 66
# BF_TM_TOFINO_HYSTERESIS_PROFILES, tm_tof2.h line 67); one more distinct
# value fails with BF_NO_SYS_RESOURCES (hw_intf/tm_tofino_hw_intf.c line 489).
HYSTERESIS_PROFILES = 32
# A port add's TM settings (traffic_mgr/common/tm_port.c bf_tm_add_new_port):
# the port rate in kb/s by speed (lines 910-948; any other speed, 100G's),
# a 9216-byte burst (line 950), PFC generation and honouring off (lines
# 953-956); every queue's max rate the port rate and min rate 0
# (hw_intf/tm_tofino_hw_intf.c lines 6425-6426, tm_tof2_hw_intf.c lines 9176-9177).
PORT_RATE_KBPS = {
    "BF_SPEED_1G": 1_000_000,
    "BF_SPEED_10G": 10_000_000,
    "BF_SPEED_25G": 25_000_000,
    "BF_SPEED_40G": 40_000_000,
    "BF_SPEED_40G_R2": 40_000_000,
    "BF_SPEED_50G": 50_000_000,
    "BF_SPEED_50G_CONS": 50_000_000,
    "BF_SPEED_100G": 100_000_000,
    "BF_SPEED_400G": 400_000_000,
}
PORT_ADD_BURST_BYTES = 9216
# tm.ppg.cfg (bf_rt_tm_tf1.json, tf2 the same): PPGs 1..255 allocated per
# pipe by entry add, at most 128 a pipe; each for one dev_port of that pipe.
PPG_POOL_CHOICES = ("IG_APP_POOL_0", "IG_APP_POOL_1", "IG_APP_POOL_2", "IG_APP_POOL_3")
PPG_BAF_CHOICES = ("1.5%", "3%", "6%", "11%", "20%", "33%", "50%", "66%", "80%", "DISABLE")
PPGS_PER_PIPE = 128
# tm.pool.cfg's key choices and tm.pool.app_pfc's (ingress application
# pools only). Power-on sizes and limits are not known here: read as 0.
POOL_CFG_CHOICES = (
    *PPG_POOL_CHOICES,
    "EG_APP_POOL_0",
    "EG_APP_POOL_1",
    "EG_APP_POOL_2",
    "EG_APP_POOL_3",
    "IG_SKID_POOL",
    "IG_EG_NEGATIVE_MIRROR_POOL",
    "EG_PRE_FIFO",
    "IG_EG_GUARANTEED_MIN",
    "EG_UNICAST_CUT_THROUGH",
    "EG_MULTICAST_CUT_THROUGH",
)
POOL_PFC_CHOICES = PPG_POOL_CHOICES
# What an added PPG holds for the fields its add leaves out (assumed: no
# iCoS, nothing reserved, PFC off, the first pool, static).
DEFAULT_PPG: dict[str, Any] = {
    **{f"icos_{c}": False for c in range(8)},
    "guaranteed_cells": 0,
    "hysteresis_cells": 0,
    "pool_id": "IG_APP_POOL_0",
    "pool_max_cells": 0,
    "dynamic_baf": "DISABLE",
    "ppg_counter_id": 0,
    "pfc_enable": False,
    "pfc_skid_max_cells": 0,
}
# $PORT_STAT's received-pause time per priority (bf_rt_port_tf1.json).
RX_PAUSE_US_FIELDS = tuple(f"$ReceivePri{c}Pause1USCount" for c in range(8))
# And transmitted (tf1 line 1607, tf2 1595: $TransmitPri0Pause1USCount on).
TX_PAUSE_US_FIELDS = tuple(f"$TransmitPri{c}Pause1USCount" for c in range(8))
# tm.counter.queue / tm.counter.pool: the TM's per-queue and per-pool counters.
# Every row exists (supported_operations [], modify only); usage_cells is
# read_only, watermark_cells "clear_only" (only 0 may be written:
# bf_rt_tm_table_impl_counters.cpp lines 86-104, BF_INVALID_ARG otherwise).
TM_COUNTER_POOL_CHOICES = (
    "IG_APP_POOL_0",
    "IG_APP_POOL_1",
    "IG_APP_POOL_2",
    "IG_APP_POOL_3",
    "EG_APP_POOL_0",
    "EG_APP_POOL_1",
    "EG_APP_POOL_2",
    "EG_APP_POOL_3",
)
CLEAR_ONLY_FIELDS = ("watermark_cells",)
PPG_USAGE_FIELDS = (
    "guaranteed_min_usage_cells",
    "shared_pool_usage_cells",
    "skid_pool_usage_cells",
)
# Same limit the model enforces for `$max_pkt_len`.
MAX_MIRROR_PKT_LEN = 0x3FFF


class StatusCode(enum.Enum):
    """gRPC status codes, with the numbers google.rpc.Code gives them."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    RESOURCE_EXHAUSTED = 8
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14


@dataclass(frozen=True)
class Error:
    """One refused update of a batch (bfruntime_pb2.Error)."""

    canonical_code: int
    message: str


class FakeRpcError(Exception):
    """Stands for grpc.RpcError: a status code, details and per-update errors."""

    def __init__(
        self, code: StatusCode, details: str, errors: Sequence[tuple[int, Error]] = ()
    ) -> None:
        super().__init__(f"{code.name}: {details}")
        self._code = code
        self._details = details
        self.errors = list(errors)

    def code(self) -> StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class BfruntimeRpcException(Exception):
    def __init__(self, grpc_error: FakeRpcError) -> None:
        super().__init__()
        self.grpc_error = grpc_error
        self.errors: list[tuple[int, Error]] = []

    def grpc_error_get(self) -> FakeRpcError:
        return self.grpc_error

    def sub_errors_get(self) -> list[tuple[int, Error]]:
        return self.errors

    def __str__(self) -> str:
        # Exception() with no args, as in client.py: the text is empty.
        return ""


class BfruntimeReadWriteRpcException(BfruntimeRpcException):
    def __init__(self, grpc_error: FakeRpcError) -> None:
        super().__init__(grpc_error)
        # As with the real server, only an UNKNOWN status carries per-update errors.
        if grpc_error.code() is StatusCode.UNKNOWN:
            self.errors = list(grpc_error.errors)

    def __str__(self) -> str:
        # client.py's text: only the per-update errors, so a status without
        # them (NOT_FOUND, UNAVAILABLE, ...) prints as a bare "Error(s):".
        message = "Error(s):\n"
        for idx, e in self.errors:
            code = StatusCode(e.canonical_code).name
            message += f"\t* At index {idx}: {code}, '{e.message}'\n"
        return message


class _StatusOnly(BfruntimeRpcException):
    def __str__(self) -> str:
        # client.py prints the code and gRPC's debug string, not the details.
        code = self.grpc_error.code()
        return f"Error: StatusCode.{code.name} : {{grpc_status:{code.value}}}"


class BfruntimeForwardingRpcException(_StatusOnly):
    pass


class BfruntimeSubscribeRpcException(_StatusOnly):
    pass


class _Refused(Exception):
    """One update the fake switch refuses; becomes an Error of the batch."""

    def __init__(self, code: StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Target:
    def __init__(
        self,
        device_id: int = 0,
        pipe_id: int = ALL_PIPES,
        direction: int = 0xFF,
        prsr_id: int = 0xFF,
    ) -> None:
        self.device_id_ = device_id
        self.pipe_id_ = pipe_id
        self.direction_ = direction
        self.prsr_id_ = prsr_id


class KeyTuple:
    def __init__(
        self,
        name: str,
        value: Any = None,
        mask: Any = None,
        prefix_len: int | None = None,
        low: Any = None,
        high: Any = None,
        is_valid: bool | None = None,
    ) -> None:
        if mask is not None:
            match_type = "Ternary"
        elif prefix_len is not None:
            match_type = "LPM"
        elif low is not None and high is not None:
            match_type = "Range"
        elif is_valid is not None:
            match_type = "Optional"
        elif value is not None:
            match_type = "Exact"
        else:
            raise ValueError(f"KeyTuple {name}: no value given")
        self.name, self.value, self.mask, self.prefix_len = name, value, mask, prefix_len
        self.low, self.high, self.is_valid = low, high, is_valid
        self.match_type = match_type


class DataTuple:
    def __init__(
        self,
        name: str,
        val: Any = None,
        float_val: float | None = None,
        str_val: str | None = None,
        int_arr_val: list[int] | None = None,
        bool_arr_val: list[bool] | None = None,
        bool_val: bool | None = None,
        container_arr_val: Any = None,
        str_arr_val: list[str] | None = None,
    ) -> None:
        self.name, self.val, self.float_val, self.str_val = name, val, float_val, str_val
        self.int_arr_val, self.bool_arr_val, self.bool_val = int_arr_val, bool_arr_val, bool_val
        self.container_arr_val, self.str_arr_val = container_arr_val, str_arr_val

    def value(self) -> Any:
        for v in (self.val, self.str_val, self.bool_val, self.int_arr_val, self.float_val):
            if v is not None:
                return v
        return None


# ---- bfrt_info: what the switch declares ------------------------------------


# Where each fixed table's fields are declared: open-p4studio 1f97778f,
# pkgsrc/bf-drivers/src/bf_rt/<dir>/<file>, lines for tf1 / tf2 (table: field line).
# bf_rt_tm/bf_rt_tm_tf{1,2}.json:
#   tm.port.cfg 1132/1132: dev_port 1140/1140, pg_id 1162/1162, pg_port_nr 1175/1175,
#     egress_qid_queues 1214/1214
#   tm.queue.sched_cfg 2388/2492: pg_id 2396/2500, pg_queue 2408/2512, dwrr_weight 2479/2583,
#     max_priority 2465/2569, max_rate_enable 2452/2556
#   tm.queue.sched_shaping 2531/2680: unit 2568/2717, provisioning 2582/2731, max_rate 2622/2771,
#     max_burst_size 2635/2784, min_rate 2596/2745, min_burst_size 2609/2758
#   tm.port.sched_shaping 2765/2944: dev_port 2773/2952, unit 2795/2974, provisioning 2809/2988,
#     max_rate 2823/3002, max_burst_size 2836/3015
#   tm.port.sched_cfg 2674/2823: dev_port 2682/2831, max_rate_enable 2704/2853
#   tm.port.flowcontrol 1444/1431: dev_port 1452/1439, mode_tx 1474/1461, mode_rx 1488/1475,
#     cos_to_icos 1502/1489
#   tm.ppg.cfg 466/466: ppg_id 474/474, dev_port 488/488, pfc_enable 508/508, pfc_skid_max_cells
#     521/521, icos_0 543/543, guaranteed_cells 647/647, hysteresis_cells 660/660, pool_id 673/673,
#     pool_max_cells 689/689, dynamic_baf 702/702, ppg_counter_id 718/718
#   tm.pool.cfg 765/765: pool 773/773, size_cells 805/805
#   tm.pool.app_pfc 1050/1050: pool 1058/1058, cos 1075/1075, pfc_limit_cells 1093/1093
#   tm.queue.cfg 1857/1948: pg_id 1865/1956, pg_queue 1877/1968, mirror_drop_destination 1894/1985,
#     pfc_cos 1907/1998
# bf_rt_port/bf_rt_port_tf{1,2}.json:
#   $PORT 4/4: $DEV_PORT 11/11, $SPEED 32/32, $FEC 61/61, $AUTO_NEGOTIATION 117/117, $N_LANES
#     84/84, $PORT_ENABLE 98/98, $PORT_UP 433/434, $MEDIA_TYPE 277/278, $TIMESTAMP_1588_VALUE
#     525/513, $TX_PFC_EN_MAP 191/192, $RX_PFC_EN_MAP 205/206
#   tm.counter.queue 3077/3609: pg_id 3085/3617, pg_queue 3097/3629, drop_count_packets
#     3114/3646, usage_cells 3127/3659 (read_only), watermark_cells 3140/3672 (clear_only
#     3145/3677), supported_operations 3155/3687
#   tm.counter.pool 3185/3717: pool 3193/3725, usage_cells 3219/3751 (read_only),
#     watermark_cells 3232/3764 (clear_only 3237/3769), supported_operations 3247/3779
#   tm.counter.ppg 3790/4322: ppg_counter_id 3798/4330 ("For each user assigned ppg id, there
#     will be a counter id generated", line 3799/4331), drop_count_packets 3829/4361,
#     guaranteed_min_usage_cells 3842/4374, shared_pool_usage_cells 3855/4387,
#     skid_pool_usage_cells 3868/4400 (the three read_only), watermark_cells 3881/4413
#     (clear_only 3886/4418), supported_operations 3896/4428
#   $PORT_STAT 565/553: $DEV_PORT 572/560, $OctetsTransmittedTotal 1117/1105,
#     $TransmitPri0Pause1USCount 1607/1595, $ReceivePri0Pause1USCount 1719/1707
#   $PORT_STR_INFO 2054/2042: $PORT_NAME 2061/2049, $DEV_PORT 2082/2070
# bf_rt_mirror/bf_rt_mirror_tf{1,2}.json:
#   $mirror.cfg 4/4: $sid 11/11, $normal 83/96, $session_enable 93/106, $direction 106/223,
#     $ucast_egress_port 124/241, $ucast_egress_port_valid 137/254, $max_pkt_len 337/454,
#     $egress_port_queue 150/267, $ingress_cos 163/280
def build_specs(program: str, profile: HwProfile, production: bool = False) -> list[TableSpec]:
    """Every table the switch exposes: the program's from the compiler's
    bf-rt.json, the SDE's fixed tables with the fields cited above."""
    specs = p4_table_specs(program, profile.chip, production)
    # What bf-rt.json leaves out (see compiled_tables.py): the P4's initial
    # default actions and register initial values, from the model.
    model = make_model(program, profile)
    for s in specs:
        short = s.name.removeprefix("pipe.")
        if s.kind == "mat" and short in model.p4.tables:
            default = model.p4.tables[short].default
            s.initial_default = (default[0], dict(default[1]))
        elif s.kind == "register" and short in model.p4.registers:
            s.initial_value = model.p4.registers[short].initial
    specs.append(
        TableSpec(
            "$mirror.cfg",
            "mirror",
            {"$sid": KeySpec("$sid", 16, "Exact")},
            actions={
                "$normal": {
                    "$session_enable": FieldSpec("$session_enable", type="bool"),
                    "$direction": FieldSpec(
                        "$direction", type="str", choices=("INGRESS", "EGRESS", "BOTH")
                    ),
                    "$ucast_egress_port": FieldSpec("$ucast_egress_port", 32),
                    "$ucast_egress_port_valid": FieldSpec("$ucast_egress_port_valid", type="bool"),
                    "$max_pkt_len": FieldSpec("$max_pkt_len", 16),
                    "$egress_port_queue": FieldSpec("$egress_port_queue", 32, optional=True),
                    "$ingress_cos": FieldSpec("$ingress_cos", 32, optional=True),
                }
            },
        )
    )
    tf = "tf2" if profile.chip == "tofino2" else "tf1"
    specs.append(
        TableSpec(
            f"{tf}.tm.port.cfg",
            "tm_port",
            {"dev_port": KeySpec("dev_port", 32, "Exact")},
            fields={
                "pg_id": FieldSpec("pg_id", 8),
                "pg_port_nr": FieldSpec("pg_port_nr", 8),
                "egress_qid_queues": FieldSpec("egress_qid_queues", 8, "int_arr"),
            },
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.queue.sched_cfg",
            "tm_sched",
            {"pg_id": KeySpec("pg_id", 8, "Exact"), "pg_queue": KeySpec("pg_queue", 8, "Exact")},
            fields={
                "dwrr_weight": FieldSpec("dwrr_weight", 16),
                "max_priority": FieldSpec("max_priority", type="str", choices=TM_PRIORITY_CHOICES),
                "max_rate_enable": FieldSpec("max_rate_enable", type="bool"),
            },
            tm_defaults=DEFAULT_TM_QUEUE,
        )
    )
    shaping_common = {
        "unit": FieldSpec("unit", type="str", choices=SHAPING_UNITS),
        "provisioning": FieldSpec("provisioning", type="str", choices=SHAPING_PROVISIONING),
        "max_rate": FieldSpec("max_rate", 32),
        "max_burst_size": FieldSpec("max_burst_size", 32),
    }
    specs.append(
        TableSpec(
            f"{tf}.tm.queue.sched_shaping",
            "tm_sched",
            {"pg_id": KeySpec("pg_id", 8, "Exact"), "pg_queue": KeySpec("pg_queue", 8, "Exact")},
            fields={
                **shaping_common,
                "min_rate": FieldSpec("min_rate", 32),
                "min_burst_size": FieldSpec("min_burst_size", 32),
            },
            tm_defaults=DEFAULT_QUEUE_SHAPING,
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.port.sched_shaping",
            "tm_port_sched",
            {"dev_port": KeySpec("dev_port", 32, "Exact")},
            fields=dict(shaping_common),
            tm_defaults=DEFAULT_PORT_SHAPING,
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.port.flowcontrol",
            "tm_port_sched",
            {"dev_port": KeySpec("dev_port", 32, "Exact")},
            fields={
                "mode_tx": FieldSpec("mode_tx", type="str", choices=PFC_MODE_CHOICES),
                # bf_rt_tm_tf1.json line 1485, tf2.json line 1472: "read_only": true.
                "mode_rx": FieldSpec(
                    "mode_rx", type="str", choices=PFC_MODE_CHOICES, read_only=True
                ),
                "cos_to_icos": FieldSpec("cos_to_icos", 8, "int_arr"),
            },
            tm_defaults=default_port_flowcontrol(profile.chip),
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.ppg.cfg",
            "tm_ppg",
            {"ppg_id": KeySpec("ppg_id", 8, "Exact")},
            actions={
                "dev_port": {
                    "dev_port": FieldSpec("dev_port", 32),
                    "pfc_enable": FieldSpec("pfc_enable", type="bool"),
                    "pfc_skid_max_cells": FieldSpec("pfc_skid_max_cells", 32),
                }
            },
            fields={
                **{f"icos_{c}": FieldSpec(f"icos_{c}", type="bool") for c in range(8)},
                "guaranteed_cells": FieldSpec("guaranteed_cells", 32),
                "hysteresis_cells": FieldSpec("hysteresis_cells", 32),
                "pool_id": FieldSpec("pool_id", type="str", choices=PPG_POOL_CHOICES),
                "pool_max_cells": FieldSpec("pool_max_cells", 32),
                "dynamic_baf": FieldSpec("dynamic_baf", type="str", choices=PPG_BAF_CHOICES),
                "ppg_counter_id": FieldSpec("ppg_counter_id", 8, read_only=True),
            },
        )
    )
    # Device-wide rows that always exist: read and modified, never added.
    specs.append(
        TableSpec(
            f"{tf}.tm.pool.cfg",
            "tm_pool",
            {"pool": KeySpec("pool", 0, "Exact")},
            fields={"size_cells": FieldSpec("size_cells", 32)},
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.pool.app_pfc",
            "tm_pool",
            {"pool": KeySpec("pool", 0, "Exact"), "cos": KeySpec("cos", 3, "Exact")},
            fields={"pfc_limit_cells": FieldSpec("pfc_limit_cells", 32)},
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.queue.cfg",
            "tm_sched",
            {"pg_id": KeySpec("pg_id", 8, "Exact"), "pg_queue": KeySpec("pg_queue", 8, "Exact")},
            fields={
                "mirror_drop_destination": FieldSpec(
                    "mirror_drop_destination", type="bool", read_only=True
                ),
                "pfc_cos": FieldSpec("pfc_cos", 8),
            },
            tm_defaults=DEFAULT_QUEUE_CFG,
        )
    )
    specs.append(
        TableSpec(
            "$PORT_STAT",
            "port_stat",
            {"$DEV_PORT": KeySpec("$DEV_PORT", 32, "Exact")},
            fields={
                "$OctetsTransmittedTotal": FieldSpec("$OctetsTransmittedTotal", 64),
                **{n: FieldSpec(n, 64) for n in RX_PAUSE_US_FIELDS},
                **{n: FieldSpec(n, 64) for n in TX_PAUSE_US_FIELDS},
            },
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.counter.queue",
            "tm_counter",
            {"pg_id": KeySpec("pg_id", 8, "Exact"), "pg_queue": KeySpec("pg_queue", 8, "Exact")},
            fields={
                "drop_count_packets": FieldSpec("drop_count_packets", 64),
                "usage_cells": FieldSpec("usage_cells", 64, read_only=True),
                "watermark_cells": FieldSpec("watermark_cells", 64),
            },
            tm_defaults={"drop_count_packets": 0, "usage_cells": 0, "watermark_cells": 0},
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.counter.pool",
            "tm_counter",
            {"pool": KeySpec("pool", 0, "Exact")},
            fields={
                "usage_cells": FieldSpec("usage_cells", 64, read_only=True),
                "watermark_cells": FieldSpec("watermark_cells", 64),
            },
            tm_defaults={"usage_cells": 0, "watermark_cells": 0},
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.counter.ppg",
            "tm_counter",
            {"ppg_counter_id": KeySpec("ppg_counter_id", 8, "Exact")},
            fields={
                "ppg_id": FieldSpec("ppg_id", 8, read_only=True),
                "drop_count_packets": FieldSpec("drop_count_packets", 64),
                **{u: FieldSpec(u, 64, read_only=True) for u in PPG_USAGE_FIELDS},
                "watermark_cells": FieldSpec("watermark_cells", 64),
            },
            tm_defaults={
                "drop_count_packets": 0,
                **dict.fromkeys(PPG_USAGE_FIELDS, 0),
                "watermark_cells": 0,
            },
        )
    )
    specs.append(
        TableSpec(
            f"{tf}.tm.port.sched_cfg",
            "tm_port_sched",
            {"dev_port": KeySpec("dev_port", 32, "Exact")},
            fields={"max_rate_enable": FieldSpec("max_rate_enable", type="bool")},
            tm_defaults=DEFAULT_PORT_SCHED,
        )
    )
    specs.append(
        TableSpec(
            "$PORT",
            "port",
            {"$DEV_PORT": KeySpec("$DEV_PORT", 32, "Exact")},
            fields={
                "$SPEED": FieldSpec("$SPEED", type="str", choices=SPEED_CHOICES),
                "$FEC": FieldSpec("$FEC", type="str", choices=FEC_CHOICES),
                "$AUTO_NEGOTIATION": FieldSpec("$AUTO_NEGOTIATION", type="str", choices=AN_CHOICES),
                "$N_LANES": FieldSpec("$N_LANES", 32),
                "$PORT_ENABLE": FieldSpec("$PORT_ENABLE", type="bool"),
                "$PORT_UP": FieldSpec("$PORT_UP", type="bool", read_only=True),
                # Two of the fields whose sub-reads a whole-port read also makes
                # (bf_rt_port_tf1.json: read-only $MEDIA_TYPE, $TIMESTAMP_1588_VALUE).
                "$MEDIA_TYPE": FieldSpec("$MEDIA_TYPE", type="str", read_only=True),
                "$TIMESTAMP_1588_VALUE": FieldSpec("$TIMESTAMP_1588_VALUE", 64, read_only=True),
                # UINT32 bitmaps (bf_rt_port.json); the MAC has 8 priorities.
                "$TX_PFC_EN_MAP": FieldSpec("$TX_PFC_EN_MAP", 32),
                "$RX_PFC_EN_MAP": FieldSpec("$RX_PFC_EN_MAP", 32),
            },
            size=256,
        )
    )
    # bf_rt_dev/bf_rt_dev_tf1.json (tf2 the same): tf1.dev.device_configuration,
    # keyless, read-only num_pipes (line 38), read with a default-entry get
    # (bf_rt_dev_table_impl.cpp tableDefaultEntryGet line 177; num_pipes from
    # the port manager, line 193).
    specs.append(
        TableSpec(
            f"{tf}.dev.device_configuration",
            "dev_config",
            {},
            fields={"num_pipes": FieldSpec("num_pipes", 32, read_only=True)},
        )
    )
    specs.append(
        TableSpec(
            "$PORT_STR_INFO",
            "port_str",
            {"$PORT_NAME": KeySpec("$PORT_NAME", 0, "Exact")},
            fields={"$DEV_PORT": FieldSpec("$DEV_PORT", 32, read_only=True)},
        )
    )
    return specs


def default_port_flowcontrol(chip: str) -> dict[str, Any]:
    """tm.port.flowcontrol at power-on (the JSONs' descriptions: mode_rx
    "Default: ignore pause and PFC" on Tofino, "Default: PFC" on Tofino2)."""
    return {
        "mode_tx": "NONE",
        "mode_rx": "PFC" if chip == "tofino2" else "NONE",
        "cos_to_icos": list(IDENTITY_COS_TO_ICOS),
    }


def model_platform_front_panel(profile: HwProfile) -> dict[str, int]:
    """The front-panel map bf_switchd's model platform gives this chip
    (bf_model_pltfm_porting.c), as hw_profiles/boards holds it: "1/0" -> 28..."""
    from hw_profiles.boards import load_board

    board = load_board("tofino2-32d" if profile.chip == "tofino2" else "tofino-32q")
    return {
        f"{c}/{lane}": board.dev_ports[c - 1] + lane
        for c in range(1, len(board.dev_ports) + 1)
        for lane in range(board.lanes_per_connector)
    }


def pfc_map_taken(chip: str, values: Mapping[str, Any]) -> bool:
    """Whether a `$PORT` write changes the port's PFC maps, as
    bf_rt_port_table_impl.cpp and bf_port_flow_control_pfc_set decide:
    only with both maps given, and on Tofino2 only with the receive map
    0 or 0xFF (per-priority maps are refused). Either failure is only
    logged by the server: the write succeeds and the maps stay as they were."""
    if "$TX_PFC_EN_MAP" not in values or "$RX_PFC_EN_MAP" not in values:
        return False
    return not (chip == "tofino2" and values["$RX_PFC_EN_MAP"] not in (0, 0xFF))


def _short_names(full: str) -> list[str]:
    """A table answers to every dotted suffix of its name, as in the real client."""
    parts = full.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


# ---- the client-side objects -------------------------------------------------


class _Key:
    def __init__(self, table: FakeTable, fields: list[KeyTuple]) -> None:
        spec = table.spec
        self.table = table
        self.field_dict: dict[str, KeyTuple] = {}
        for f in fields:
            ks = spec.keys.get(f.name)
            if ks is None:
                raise KeyError(f"key field {f.name} does not exist in table {spec.name}")
            if f.match_type != ks.match:
                raise ValueError(
                    f"key field {f.name} of table {spec.name} is {ks.match}, not {f.match_type}"
                )
            self.field_dict[f.name] = f
        for name in spec.keys:
            if name not in self.field_dict:
                # The real client asserts here too.
                raise AssertionError(f"key field {name} of table {spec.name} is mandatory")

    def to_dict(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for n, f in self.field_dict.items():
            d: dict[str, Any] = {"value": f.value}
            if f.mask is not None:
                d["mask"] = f.mask
            if f.prefix_len is not None:
                d["prefix_len"] = f.prefix_len
            out[n] = d
        return out


class _Data:
    def __init__(
        self, table: FakeTable, fields: list[DataTuple], action_name: str | None, get: bool
    ) -> None:
        spec = table.spec
        if action_name is not None and action_name not in spec.actions:
            raise KeyError(f"action {action_name} does not exist in table {spec.name}")
        allowed = dict(spec.fields)
        if action_name is not None:
            allowed.update(spec.actions[action_name])
        self.field_dict: dict[str, DataTuple] = {}
        for f in fields:
            if f.name not in allowed:
                where = f"action {action_name}" if action_name else f"table {spec.name}"
                raise KeyError(f"data field {f.name} does not exist in {where}")
            if f.name in self.field_dict:
                raise KeyError(f"duplicate data field {f.name}")
            self.field_dict[f.name] = f
        self.action_name = action_name
        self.is_default_entry = False
        self.table = table

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {n: f.value() for n, f in self.field_dict.items()}
        out["action_name"] = self.action_name
        out["is_default_entry"] = self.is_default_entry
        return out


class _Answer(_Data):
    """A register or counter cell as a read returns it: the fields are the
    table's own (the switch built them), so unlike make_data's there is
    nothing to check. The same fields and to_dict() as any _Data, its
    DataTuples made only if asked for (a control cycle reads thousands of
    cells and asks each only for to_dict())."""

    def __init__(self, table: FakeTable, values: Mapping[str, int | list[int]]) -> None:
        self._values = values
        self._fields: dict[str, DataTuple] | None = None
        self.action_name = None
        self.is_default_entry = False
        self.table = table

    @property
    def field_dict(self) -> dict[str, DataTuple]:  # type: ignore[override]
        if self._fields is None:
            self._fields = {
                n: DataTuple(n, int_arr_val=list(v)) if isinstance(v, list) else DataTuple(n, v)
                for n, v in self._values.items()
            }
        return self._fields

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            n: list(v) if isinstance(v, list) else v for n, v in self._values.items()
        }
        out["action_name"] = None
        out["is_default_entry"] = False
        return out


class _TableInfo:
    def __init__(self, spec: TableSpec) -> None:
        self._spec = spec

    def name_get(self) -> str:
        return self._spec.name

    def key_field_name_list_get(self) -> list[str]:
        return list(self._spec.keys)

    def action_name_list_get(self) -> list[str]:
        return list(self._spec.actions)

    def data_field_name_list_get(self, action_name: str | None = None) -> list[str]:
        names = list(self._spec.fields)
        if action_name is not None:
            names += list(self._spec.actions[action_name])
        return names


class FakeTable:
    """bfrt_info.table_get(name): make_key/make_data are local, the rest are RPCs."""

    def __init__(self, spec: TableSpec, switch: FakeSwitch, client: FakeClient) -> None:
        self.spec = spec
        self.info = _TableInfo(spec)
        self._switch = switch
        self._client = client

    def make_key(self, key_field_list_in: list[KeyTuple]) -> _Key:
        return _Key(self, list(key_field_list_in))

    def make_data(
        self,
        data_field_list_in: list[DataTuple] | None = None,
        action_name: str | None = None,
        get: bool = False,
    ) -> _Data:
        return _Data(self, list(data_field_list_in or []), action_name, get)

    def _write(
        self, op: str, target: Target, keys: Any, datas: Any, atomicity: int, p4_name: str | None
    ) -> None:
        keys = list(keys) if keys else [None]
        datas = list(datas) if datas else [None] * len(keys)
        # A request often repeats one data object (a register cleared cell by
        # cell); each distinct one is checked once.
        for d in {id(d): d for d in datas if d is not None}.values():
            _encode_check(self.spec, d)
        self._switch.write(
            self._client,
            self.spec,
            target,
            op,
            list(zip(keys, datas, strict=True)),
            atomicity,
            p4_name,
        )

    def entry_add(
        self,
        target: Target,
        key_list: Any = None,
        data_list: Any = None,
        atomicity: int = 0,
        p4_name: str | None = None,
        **_: Any,
    ) -> None:
        self._write("INSERT", target, key_list, data_list, atomicity, p4_name)

    def entry_mod(
        self,
        target: Target,
        key_list: Any = None,
        data_list: Any = None,
        atomicity: int = 0,
        p4_name: str | None = None,
        **_: Any,
    ) -> None:
        self._write("MODIFY", target, key_list, data_list, atomicity, p4_name)

    def entry_add_or_mod(
        self,
        target: Target,
        key_list: Any = None,
        data_list: Any = None,
        atomicity: int = 0,
        p4_name: str | None = None,
        **_: Any,
    ) -> None:
        self._write("INSERT_OR_MODIFY", target, key_list, data_list, atomicity, p4_name)

    def entry_del(
        self,
        target: Target,
        key_list: Any = None,
        atomicity: int = 0,
        p4_name: str | None = None,
        **_: Any,
    ) -> None:
        self._write("DELETE", target, key_list, None, atomicity, p4_name)

    def default_entry_set(
        self, target: Target, data: _Data, p4_name: str | None = None, **_: Any
    ) -> None:
        _encode_check(self.spec, data)
        data.is_default_entry = True
        self._switch.write(
            self._client, self.spec, target, "DEFAULT_SET", [(None, data)], 0, p4_name
        )

    def default_entry_reset(self, target: Target, p4_name: str | None = None, **_: Any) -> None:
        self._switch.write(
            self._client, self.spec, target, "DEFAULT_RESET", [(None, None)], 0, p4_name
        )

    def entry_get(
        self,
        target: Target,
        key_list: Any = None,
        flags: Any = None,
        required_data: _Data | None = None,
        p4_name: str | None = None,
        **_: Any,
    ) -> Iterator[tuple[_Data, _Key | None]]:
        # client.py entry_get: flags={"from_hw": True} unless given.
        from_hw = True if flags is None else bool(flags.get("from_hw", False))
        wanted = None if required_data is None else list(required_data.field_dict)
        return self._switch.read(
            self._client, self, target, key_list, False, p4_name, from_hw=from_hw, fields=wanted
        )

    def default_entry_get(
        self, target: Target, flags: Any = None, p4_name: str | None = None, **_: Any
    ) -> Iterator[tuple[_Data, _Key | None]]:
        return self._switch.read(self._client, self, target, None, True, p4_name)


def _encode_check(spec: TableSpec, data: _Data) -> None:
    """What the real client's request building refuses (client.py
    _set_table_data): a `val` goes out as bytes through six.ensure_binary, which
    raises TypeError for an int - e.g. an int for a string field. (make_data
    has already turned the vals of integer fields into bytes.)"""
    for f in data.field_dict.values():
        if f.val is not None and not isinstance(f.val, bytes | bytearray | str):
            fs = spec.fields.get(f.name) or next(
                (a[f.name] for a in spec.actions.values() if f.name in a), None
            )
            if fs is not None and fs.type != "int":
                raise TypeError(f"not expecting type '{type(f.val)}'")


class FakeBfrtInfo:
    def __init__(self, switch: FakeSwitch, client: FakeClient, p4_name: str) -> None:
        self._switch = switch
        self._client = client
        self._p4_name = p4_name

    def p4_name_get(self) -> str:
        return self._p4_name

    def table_get(self, name: str) -> FakeTable:
        return FakeTable(self._switch.spec(name), self._switch, self._client)

    def table_name_list_get(self) -> list[str]:
        return [s.name for s in self._switch.specs]


class FakeClient:
    """ClientInterface: a subscribed session with the fake switch, or (with
    perform_subscribe=False) an independent client that binds nothing."""

    def __init__(
        self,
        switch: FakeSwitch,
        grpc_addr: str,
        client_id: int,
        device_id: int,
        perform_subscribe: bool = True,
        channel: FakeChannel | None = None,
    ) -> None:
        self.client_id = client_id
        self.device_id = device_id
        self.is_independent = not perform_subscribe
        # The real client's stream thread parks stream errors here.
        self.exception_q: queue.Queue[Exception] = queue.Queue()
        self._switch = switch
        self.channel = channel or FakeChannel(grpc_addr, None, [])
        if perform_subscribe:
            self.generation = switch.subscribe(self, grpc_addr, device_id)
        else:
            # No RPC yet: an independent client's channel connects on first use.
            if grpc_addr != switch.address:
                raise RuntimeError(f"no server at {grpc_addr}")
            self.generation = switch.generation

    @property
    def closed(self) -> bool:
        return self.channel.closed

    @closed.setter
    def closed(self, value: bool) -> None:
        self.channel.closed = value

    def bfrt_info_get(self, p4_name: str | None = None) -> FakeBfrtInfo:
        self._switch.check_alive(self, BfruntimeForwardingRpcException)
        if p4_name not in (None, self._switch.program):
            raise RuntimeError(f"no bfrt_info for program '{p4_name}' on this device")
        return FakeBfrtInfo(self._switch, self, self._switch.program)

    def bind_pipeline_config(self, p4_name: str) -> None:
        self._switch.check_alive(self, BfruntimeForwardingRpcException)
        if self.is_independent or self.client_id not in self._switch.clients:
            # forwardingConfigBind: BF_NOT_READY "Unknown client" -> UNAVAILABLE
            raise BfruntimeForwardingRpcException(
                FakeRpcError(StatusCode.UNAVAILABLE, f"Unknown client. Client_id:{self.client_id}")
            )
        if p4_name != self._switch.program:
            raise BfruntimeForwardingRpcException(
                FakeRpcError(StatusCode.NOT_FOUND, f"Failed to find BfRtInfo for program {p4_name}")
            )
        owner = self._switch.bound.get(p4_name)
        if owner is not None and owner != self.client_id:
            # bf_rt_server_mgr.cpp forwardingConfigBind: one client owns a program.
            raise BfruntimeForwardingRpcException(
                FakeRpcError(
                    StatusCode.ALREADY_EXISTS,
                    f"Client ID {self.client_id} trying to bind but Client ID {owner} "
                    "already owns this P4",
                )
            )
        self._switch.bound[p4_name] = self.client_id

    def tear_down_stream(self) -> None:
        if self.is_independent:
            # The real client joins a stream thread an independent client never started.
            raise AttributeError("'ClientInterface' object has no attribute 'stream_recv_thread'")
        self.closed = True
        self._switch.unsubscribe(self)


# ---- the switch ----------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One RPC the fake served: rpc is 'write' or 'read'; op is the update type."""

    rpc: str
    table: str
    op: str
    count: int
    atomicity: int
    pipe: int
    fields: tuple[str, ...] = ()  # data fields the write carried, over all its updates


@dataclass
class _Failure:
    table: str
    after: int
    code: StatusCode
    message: str


# The FakeSwitch method that applies a write to each kind of table.
_APPLY_BY_KIND = {
    "mat": "_apply_mat",
    "register": "_apply_register",
    "counter": "_apply_counter",
    "mirror": "_apply_mirror",
    "tm_sched": "_apply_tm_sched",
    "tm_port_sched": "_apply_tm_sched",
    "tm_ppg": "_apply_tm_ppg",
    "tm_pool": "_apply_tm_pool",
    "tm_counter": "_apply_tm_counter",
    "port_stat": "_apply_port_stat",
    "port": "_apply_port",
}


def _uint(what: str, value: Any, bits: int) -> int:
    if type(value) is int and 0 <= value < 1 << bits:
        return value
    if isinstance(value, bytearray | bytes):
        value = int.from_bytes(value, "big")
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Refused(StatusCode.INVALID_ARGUMENT, f"{what}: expected an integer, got {value!r}")
    if not 0 <= value < (1 << bits):
        raise _Refused(
            StatusCode.INVALID_ARGUMENT, f"{what}: value {value} does not fit in {bits} bits"
        )
    return value


def _priority_number(name: str) -> int:
    named = {"LOW": 0, "HIGH": 7}
    return named[name] if name in named else int(name)


def _priority_name(number: int) -> str:
    # std::map prio_to_str keeps the first of equal keys: 0 -> "LOW", 7 -> "7".
    return "LOW" if number == 0 else str(number)


class FakeSwitch:
    """State and checks of the device; FakeBfrtGrpc is its public face."""

    def __init__(
        self,
        program: str,
        profile: HwProfile,
        address: str,
        asic: bool = True,
        production: bool = False,
        pipes: int | None = None,
    ) -> None:
        self.program = program
        self.profile = profile
        # The board's pipes (a 32 x 100G Tofino has 2 of the chip's 4).
        self.pipes = profile.pipes if pipes is None else pipes
        self.address = address
        # An ASIC reads TM thresholds back as its registers hold them; the
        # SDE on tofino-model answers with what was written (tm_ctx.h line 260).
        self.asic = asic
        # `$PORT` fields whose set sub-call fails: the server logs it and
        # reports success (bf_rt_port_table_impl.cpp line 413).
        self.ignored_port_fields: set[str] = set()
        self.specs = build_specs(program, profile, production)
        self._by_name: dict[str, TableSpec] = {}
        ambiguous: set[str] = set()
        for s in self.specs:
            for n in _short_names(s.name):
                if n in self._by_name:
                    ambiguous.add(n)
                self._by_name[n] = s
        for n in ambiguous:
            del self._by_name[n]
        self.calls: list[Call] = []
        self.failures: list[_Failure] = []
        self.generation = 0
        self.is_down = False
        self.clients: dict[int, FakeClient] = {}
        # program name -> the client id that bound it (one owner per program)
        self.bound: dict[str, int] = {}
        # Ports whose link is down whatever their config (no cable, far end off).
        self.link_down: set[int] = set()
        # The box's own front-panel map ($PORT_STR_INFO) and the `$PORT`
        # fields whose sub-read fails on it.
        self.front_panel: dict[str, int] = model_platform_front_panel(profile)
        self.failing_port_fields: set[str] = set()
        self.state: dict[str, Any] = self.fresh_state()
        self._layouts: dict[str, list[tuple[str, int, int]]] = {}
        # `$PORT_STAT` as its shadow holds it (the last stats poll).
        self.port_stat_shadow: dict[Any, int] = {}
        self.last_read_from_hw = True
        # What the BF-Runtime server's port speaks: plaintext, or TLS (serve_tls).
        self.tls: ServerTls | None = None

    def spec(self, name: str) -> TableSpec:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"table {name} does not exist in bfrt_info") from None

    def fresh_state(self) -> dict[str, Any]:
        pipes = self.pipes
        state: dict[str, Any] = {}
        for s in self.specs:
            if s.kind == "mat":
                state[s.name] = {"entries": {}, "default": copy.deepcopy(s.initial_default)}
            elif s.kind == "register":
                state[s.name] = [[s.initial_value] * s.size for _ in range(pipes)]
            elif s.kind == "counter":
                state[s.name] = {
                    "$COUNTER_SPEC_PKTS": [[0] * s.size for _ in range(pipes)],
                    "$COUNTER_SPEC_BYTES": [[0] * s.size for _ in range(pipes)],
                }
            elif s.kind in (
                "mirror",
                "tm_sched",
                "tm_port_sched",
                "tm_ppg",
                "tm_pool",
                "tm_counter",
                "port_stat",
                "port",
                "port_str",
            ):
                state[s.name] = {}
        return state

    # -- sessions ------------------------------------------------------------
    def handshake_refusal(self, channel: FakeChannel) -> str | None:
        """Why a connection on `channel` fails its TLS handshake (fake_grpc.py)."""
        return plaintext_refusal(channel) if self.tls is None else self.tls.refusal(channel)

    def subscribe(self, client: FakeClient, grpc_addr: str, device_id: int) -> int:
        if self.is_down or grpc_addr != self.address:
            raise RuntimeError(f"failed to subscribe to server at {grpc_addr}")
        refused = self.handshake_refusal(client.channel)
        if refused is not None:
            # The client retries the subscribe, then gives up (client.py line 452).
            raise RuntimeError(f"Failed to subscribe to server at {grpc_addr} ({refused})")
        if device_id != 0:
            raise RuntimeError(f"no device {device_id} at {grpc_addr}")
        if client.client_id in self.clients:
            raise RuntimeError(f"client_id {client.client_id} is already subscribed")
        self.clients[client.client_id] = client
        return self.generation

    def unsubscribe(self, client: FakeClient) -> None:
        if self.clients.get(client.client_id) is client:
            del self.clients[client.client_id]
            self.bound = {p: c for p, c in self.bound.items() if c != client.client_id}

    def check_alive(
        self,
        client: FakeClient,
        exc_type: type[BfruntimeRpcException] = BfruntimeReadWriteRpcException,
    ) -> None:
        if client.closed:
            raise ValueError("cannot invoke RPC on closed channel")
        if client.is_independent:
            # An independent client has no session to lose: every RPC stands alone.
            if self.is_down:
                raise exc_type(
                    FakeRpcError(StatusCode.UNAVAILABLE, f"failed to connect to {self.address}")
                )
            refused = self.handshake_refusal(client.channel)
            if refused is not None:
                raise exc_type(
                    FakeRpcError(
                        StatusCode.UNAVAILABLE,
                        f"failed to connect to all addresses; last error: {refused}",
                    )
                )
            return
        if self.is_down:
            raise exc_type(
                FakeRpcError(StatusCode.UNAVAILABLE, f"failed to connect to {self.address}")
            )
        if client.generation != self.generation:
            raise exc_type(
                FakeRpcError(StatusCode.UNAVAILABLE, "connection reset by peer (device restarted)")
            )

    def check_program(self, client: FakeClient, p4_name: str | None) -> None:
        """Which program a read or write is for (bf_rt_server_impl.cpp Write/Read:
        an independent client, or any client naming p4_name, is looked up by
        name; a subscribed one by the program it bound)."""
        if client.is_independent or p4_name:
            if p4_name != self.program:
                raise BfruntimeReadWriteRpcException(
                    FakeRpcError(
                        StatusCode.NOT_FOUND, f"Unable to obtain BF_RT info for ({p4_name or ''})"
                    )
                )
            return
        if self.bound.get(self.program) != client.client_id:
            raise BfruntimeReadWriteRpcException(
                FakeRpcError(StatusCode.INTERNAL, "Error getting BfRtInfo: no bound program")
            )

    def restart(self) -> None:
        self.generation += 1
        self.state = self.fresh_state()
        self.port_stat_shadow = {}
        self.failures.clear()
        for c in self.clients.values():
            c.exception_q.put(
                BfruntimeSubscribeRpcException(
                    FakeRpcError(StatusCode.UNAVAILABLE, "stream closed by the device")
                )
            )
        self.clients.clear()
        self.bound.clear()

    # -- writes --------------------------------------------------------------
    def write(
        self,
        client: FakeClient,
        spec: TableSpec,
        target: Target,
        op: str,
        items: list[tuple[_Key | None, _Data | None]],
        atomicity: int,
        p4_name: str | None = None,
    ) -> None:
        self.check_alive(client)
        self.check_program(client, p4_name)
        sent = sorted({n for _, d in items if d is not None for n in d.field_dict})
        self.calls.append(
            Call("write", spec.name, op, len(items), atomicity, target.pipe_id_, tuple(sent))
        )
        in_txn = atomicity == ROLLBACK_ON_ERROR
        saved = self._saved(spec) if in_txn else None
        errors: list[tuple[int, Error]] = []
        for i, (key, data) in enumerate(items):
            try:
                self._check_pipe(spec, target)
                if in_txn and spec.kind == "mirror":
                    # bf_pipe_mgr_mirror_buffer.c api_setup: PIPE_TXN_NOT_SUPPORTED,
                    # which to_grpc_status maps to UNIMPLEMENTED.
                    raise _Refused(
                        StatusCode.UNIMPLEMENTED,
                        "mirror session APIs are not supported in a transaction "
                        "(PIPE_TXN_NOT_SUPPORTED)",
                    )
                self._maybe_fail(spec)
                self._refuse_read_only(spec, data)
                self._apply(spec, target, op, key, data)
            except _Refused as exc:
                errors.append((i, Error(exc.code.value, f"{spec.name}: {exc.message}")))
                if in_txn:
                    # abortTransaction undoes pipe_mgr state only: TM and port writes stay.
                    if not spec.kind.startswith("tm") and spec.kind != "port":
                        self.state[spec.name] = saved
                    break
        if errors:
            raise BfruntimeReadWriteRpcException(
                FakeRpcError(StatusCode.UNKNOWN, "write refused", errors)
            )

    def _saved(self, spec: TableSpec) -> Any:
        """The table's state as a failed transaction puts it back. Cells are
        ints and entries are replaced whole (_apply_mat), so copying the
        containers is copying the state: a deep copy of every cell of a
        register per call made the fake, not the controller, most of a
        control cycle's time (benchmarks/control_loop.py)."""
        st: Any = self.state.get(spec.name)
        if spec.kind == "register":
            return [list(cells) for cells in st]
        if spec.kind == "counter":
            return {name: [list(cells) for cells in per_pipe] for name, per_pipe in st.items()}
        if spec.kind == "mat":
            return {"entries": dict(st["entries"]), "default": st["default"]}
        return copy.deepcopy(st)

    @staticmethod
    def _refuse_read_only(spec: TableSpec, data: _Data | None) -> None:
        """A write carrying a read-only field. bf_rt_tm_table_impl_port.cpp
        tableSetEntry (lines 271-279) skips such a field with a debug log and
        reports success; refused here, so a controller that writes one
        learns it in the tests instead of never on the switch."""
        if data is None:
            return
        for name in data.field_dict:
            fs = spec.fields.get(name)
            if fs is not None and fs.read_only:
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT,
                    f"field {name} is read-only (the switch would skip it silently)",
                )

    def _check_pipe(self, spec: TableSpec, target: Target) -> None:
        pipe = target.pipe_id_
        if pipe != ALL_PIPES and not 0 <= pipe < self.pipes:
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"pipe {pipe} does not exist")
        if spec.kind in ("mat", "mirror") and pipe != ALL_PIPES:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "symmetric table: target all pipes")
        if spec.kind in ("tm_sched", "tm_port_sched", "tm_ppg") and pipe == ALL_PIPES:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "TM table: target one pipe")

    def _maybe_fail(self, spec: TableSpec) -> None:
        for f in self.failures:
            if f.table == spec.name:
                if f.after == 0:
                    self.failures.remove(f)
                    raise _Refused(f.code, f.message)
                f.after -= 1
                return

    def _apply(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        handler: Callable[[TableSpec, Target, str, _Key | None, _Data | None], None] = getattr(
            self, _APPLY_BY_KIND.get(spec.kind, "_unsupported")
        )
        handler(spec, target, op, key, data)

    def _unsupported(self, spec: TableSpec, target: Target, op: str, *_: Any) -> None:
        raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on this table")

    def _mat_key(self, spec: TableSpec, key: _Key) -> tuple[Any, ...]:
        ident: list[Any] = []
        for name, ks in spec.keys.items():
            f = key.field_dict[name]
            what = f"key field {name}"
            v = _uint(what, f.value, ks.bits)
            if ks.match == "Ternary":
                m = _uint(f"{what} mask", f.mask, ks.bits)
                ident.append((name, "t", v & m, m))
            elif ks.match == "LPM":
                plen = f.prefix_len
                if plen is None or not 0 <= plen <= ks.bits:
                    raise _Refused(StatusCode.INVALID_ARGUMENT, f"{what}: bad prefix_len {plen}")
                net = ((1 << plen) - 1) << (ks.bits - plen)
                ident.append((name, "l", v & net, plen))
            else:
                ident.append((name, "e", v))
        return tuple(ident)

    def _key_from_ident(self, table: FakeTable, ident: tuple[Any, ...]) -> _Key:
        tuples = []
        for name, kind, value, *extra in ident:
            if kind == "t":
                tuples.append(KeyTuple(name, value, mask=extra[0]))
            elif kind == "l":
                tuples.append(KeyTuple(name, value, prefix_len=extra[0]))
            else:
                tuples.append(KeyTuple(name, value))
        return _Key(table, tuples)

    def _action_data(self, spec: TableSpec, data: _Data | None) -> tuple[str, dict[str, Any]]:
        if data is None or data.action_name is None:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "an action is required")
        params = spec.actions[data.action_name]
        out: dict[str, Any] = {}
        for name, fs in params.items():
            t = data.field_dict.get(name)
            if t is None and fs.optional:
                out[name] = 0
                continue
            if t is None:
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT, f"action {data.action_name} needs field {name}"
                )
            out[name] = self._field_value(fs, t)
        return data.action_name, out

    def _field_value(self, fs: FieldSpec, t: DataTuple) -> Any:
        if fs.type == "bool":
            if not isinstance(t.bool_val, bool):
                raise _Refused(StatusCode.INVALID_ARGUMENT, f"field {fs.name}: expected bool_val")
            return t.bool_val
        if fs.type == "str":
            if t.str_val not in fs.choices:
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT,
                    f"field {fs.name}: {t.str_val!r} is not one of {', '.join(fs.choices)}",
                )
            return t.str_val
        if fs.type == "int_arr":
            if not isinstance(t.int_arr_val, list):
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT, f"field {fs.name}: expected int_arr_val"
                )
            return [_uint(f"field {fs.name}", v, fs.bits) for v in t.int_arr_val]
        return _uint(f"field {fs.name}", t.val, fs.bits)

    def _apply_mat(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        st = self.state[spec.name]
        entries: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = st["entries"]
        if op == "DEFAULT_SET":
            if spec.const_default:
                raise _Refused(StatusCode.INVALID_ARGUMENT, "the default action is const")
            default = self._action_data(spec, data)
            if default[0] in spec.table_only:
                raise _Refused(StatusCode.INVALID_ARGUMENT, f"action {default[0]} is @tableonly")
            st["default"] = default
            return
        if op == "DEFAULT_RESET":
            st["default"] = copy.deepcopy(spec.initial_default)
            return
        if key is None:
            if op != "DELETE":
                raise _Refused(StatusCode.INVALID_ARGUMENT, "a key is required")
            entries.clear()
            return
        ident = self._mat_key(spec, key)
        exists = ident in entries
        if op == "DELETE":
            if not exists:
                raise _Refused(StatusCode.NOT_FOUND, f"no entry for key {key.to_dict()}")
            del entries[ident]
            return
        action, params = self._action_data(spec, data)
        if action in spec.default_only:
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"action {action} is @defaultonly")
        if op == "INSERT" and exists:
            raise _Refused(StatusCode.ALREADY_EXISTS, f"entry exists for key {key.to_dict()}")
        if op == "MODIFY" and not exists:
            raise _Refused(StatusCode.NOT_FOUND, f"no entry for key {key.to_dict()}")
        if not exists and len(entries) >= spec.size:
            raise _Refused(StatusCode.RESOURCE_EXHAUSTED, f"table full ({spec.size} entries)")
        entries[ident] = (action, params)

    def _pipes(self, target: Target) -> Sequence[int]:
        if target.pipe_id_ == ALL_PIPES:
            return range(self.pipes)
        return (target.pipe_id_,)

    def _layout(self, spec: TableSpec) -> list[tuple[str, int, int]]:
        """(field, shift, mask) of each member of a register's packed cell,
        first field in the high half; worked out once per register (a control
        cycle reads thousands of cells)."""
        layout = self._layouts.get(spec.name)
        if layout is None:
            layout = []
            shift = sum(fs.bits for fs in spec.fields.values())
            for fs in spec.fields.values():
                shift -= fs.bits
                layout.append((fs.name, shift, (1 << fs.bits) - 1))
            self._layouts[spec.name] = layout
        return layout

    def _index(self, spec: TableSpec, key: _Key, name: str) -> int:
        index = _uint(name, key.field_dict[name].value, 32)
        if index >= spec.size:
            raise _Refused(StatusCode.OUT_OF_RANGE, f"{name} {index} outside 0..{spec.size - 1}")
        return index

    def _apply_register(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        values: list[list[int]] = self.state[spec.name]
        if op == "DELETE":
            # No key: the server calls tableClear (open-p4studio
            # bf_rt_server_impl.cpp:3304), which BfRtRegisterTable runs as
            # pipeStfulTableReset with no spec (bf_rt_p4_table_impl.cpp:7782-7791)
            # on the target's pipe(s): every cell back to the register's
            # initial value (pipe_mgr_stful_tbl_mgr.c:1686-1690, reset_table).
            for pipe in self._pipes(target):
                if key is None:
                    values[pipe] = [spec.initial_value] * spec.size
                else:
                    values[pipe][self._index(spec, key, "$REGISTER_INDEX")] = spec.initial_value
            return
        if key is None or data is None or op.startswith("DEFAULT"):
            raise _Refused(StatusCode.INVALID_ARGUMENT, "a register write needs key and data")
        index = self._index(spec, key, "$REGISTER_INDEX")
        value = 0
        # A struct register (a pair one RegisterAction updates) has one data
        # field per member, each mandatory in bf-rt.json; the cell is kept
        # packed, first field in the high half (the model's layout), so the
        # test helpers register()/set_register() see one number.
        for fs in spec.fields.values():
            t = data.field_dict.get(fs.name)
            if t is None:
                raise _Refused(StatusCode.INVALID_ARGUMENT, f"field {fs.name} is required")
            value = (value << fs.bits) | self._field_value(fs, t)
        for pipe in self._pipes(target):
            values[pipe][index] = value

    def _apply_counter(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        st = self.state[spec.name]
        if op == "DELETE" and key is None:
            for name in st:
                for pipe in self._pipes(target):
                    st[name][pipe] = [0] * spec.size
            return
        if key is None or data is None or op not in ("INSERT", "MODIFY", "INSERT_OR_MODIFY"):
            raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on counters")
        index = self._index(spec, key, "$COUNTER_INDEX")
        for name, t in data.field_dict.items():
            value = self._field_value(spec.fields[name], t)
            for pipe in self._pipes(target):
                st[name][pipe][index] = value

    def _apply_mirror(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        sessions: dict[int, tuple[str, dict[str, Any]]] = self.state[spec.name]
        if key is None:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "a $sid is required")
        sid = _uint("$sid", key.field_dict["$sid"].value, 16)
        p = self.profile
        # bf_rt_mirror_table_impl.cpp: add checks the session is absent, modify
        # and delete that it exists, each refusing with BF_INVALID_ARG.
        if op == "DELETE":
            if sid not in sessions:
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT, f"mirror session with id {sid} does not exist"
                )
            del sessions[sid]
            return
        if op not in ("INSERT", "MODIFY"):
            raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on $mirror.cfg")
        if op == "INSERT" and sid in sessions:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT, f"mirror session with id {sid} already exists"
            )
        if op == "MODIFY" and sid not in sessions:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT, f"mirror session with id {sid} does not exist"
            )
        # bf_pipe_mgr_mirror_buffer.c: sid 0 is reserved (PIPE_INVALID_ARG); above
        # the chip's normal-session maximum bf_mirror_session_set says
        # PIPE_OBJ_NOT_FOUND.
        if sid < p.mirror_session_min:
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"mirror session id {sid} is reserved")
        if sid > p.mirror_session_max:
            raise _Refused(
                StatusCode.NOT_FOUND,
                f"$sid {sid} above the normal-session maximum {p.mirror_session_max}",
            )
        action, fields = self._action_data(spec, data)
        if fields["$ucast_egress_port"] > p.max_port:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT, f"$ucast_egress_port {fields['$ucast_egress_port']}"
            )
        if fields["$max_pkt_len"] > MAX_MIRROR_PKT_LEN:
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"$max_pkt_len {fields['$max_pkt_len']}")
        # pipe_mgr_mirror_buffer.c validates the session: "Egress Port Queue"
        # above 31 (Tofino) / 127 (Tofino2), "ingress COS" above 7.
        if fields.get("$egress_port_queue", 0) > p.max_queue_id:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT, f"Egress Port Queue {fields['$egress_port_queue']}"
            )
        if fields.get("$ingress_cos", 0) > 7:
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"ingress COS {fields['$ingress_cos']}")
        sessions[sid] = (action, fields)

    # -- TM --------------------------------------------------------------------
    def _pool_row(self, spec: TableSpec, key: _Key) -> tuple[str, int | None]:
        """(pool, cos) of a tm.pool.cfg (cos None) or tm.pool.app_pfc key, as
        bf_rt_tm_table_impl_pool.cpp checks it: a pool outside the table's
        choices or a cos at or above the device's 8 PFC levels is BF_INVALID_ARG."""
        pool = key.field_dict["pool"].value
        pfc = "cos" in spec.keys
        choices = POOL_PFC_CHOICES if pfc else POOL_CFG_CHOICES
        if pool not in choices:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT, f"key value for field pool not valid: {pool!r}"
            )
        if not pfc:
            return pool, None
        cos = _uint("cos", key.field_dict["cos"].value, 8)
        if cos >= 8:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT, f"key value for field cos is not valid: {cos}"
            )
        return pool, cos

    def _apply_tm_pool(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        """tm.pool.cfg / tm.pool.app_pfc: only tableEntryMod is implemented;
        more cells than the buffer is TM_IS_THRES_INVALID (BF_INVALID_ARG)."""
        if op != "MODIFY":
            raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on {spec.name}")
        if key is None or data is None:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "a key and data are required")
        row = self._pool_row(spec, key)
        (name,) = spec.fields
        t = data.field_dict.get(name)
        if t is None:
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"field {name} is required")
        cells = self._field_value(spec.fields[name], t)
        if cells > self.profile.buffer_cells:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT,
                f"{name} {cells} above the buffer's {self.profile.buffer_cells} cells",
            )
        if name == "pfc_limit_cells" and self.asic:
            # The register holds 8-cell units (tm_tofino_hw_intf.c line 2957,
            # tm_tof2_hw_intf.c line 4540: `val >> 3`) and a read on an ASIC
            # returns it; tofino-model returns what was written.
            cells = cells // HW_UNIT_CELLS * HW_UNIT_CELLS
        self.state[spec.name][row] = cells

    def _counter_row(self, spec: TableSpec, target: Target, key: _Key) -> tuple[Any, ...]:
        """A tm.counter.queue row (pipe, pg_id, pg_queue; one pipe, as the
        queue tables) or a tm.counter.pool row (pool; device-wide)."""
        if "ppg_counter_id" in spec.keys:
            counter = _uint("ppg_counter_id", key.field_dict["ppg_counter_id"].value, 8)
            if target.pipe_id_ == ALL_PIPES:
                raise _Refused(StatusCode.INVALID_ARGUMENT, "target one pipe")
            # getPpgHdl_helper (bf_rt_tm_table_impl_counters.cpp line 2661): a
            # counter id no PPG of the pipe holds is an error.
            if self._ppg_of_counter(target.pipe_id_, counter) is None:
                raise _Refused(
                    StatusCode.NOT_FOUND, f"no PPG with ppg_counter_id {counter} in pipe"
                )
            return (target.pipe_id_, counter)
        if "pool" in spec.keys:
            pool = key.field_dict["pool"].value
            if pool not in TM_COUNTER_POOL_CHOICES:
                # BfRtTMCounterPoolTable::tableEntryMod_helper line 1152: BF_INVALID_ARG.
                raise _Refused(StatusCode.INVALID_ARGUMENT, f"invalid app pool name {pool!r}")
            return (pool,)
        if target.pipe_id_ == ALL_PIPES:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "TM table: target one pipe")
        return self._sched_key(target, key)

    def _ppg_of_counter(self, pipe: int, counter: int) -> int | None:
        tf = "tf2" if self.profile.chip == "tofino2" else "tf1"
        for (p, ppg_id), row in self.state[f"{tf}.tm.ppg.cfg"].items():
            if p == pipe and row["ppg_counter_id"] == counter:
                return int(ppg_id)
        return None

    def _apply_tm_counter(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        """tm.counter.*: tableEntryMod only; drop_count_packets takes any value
        (bfTmQDropCacheSet, line 761), watermark_cells only 0 (clear_only)."""
        if op != "MODIFY" or key is None or data is None:
            raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on {spec.name}")
        row = self._counter_row(spec, target, key)
        rows = self.state[spec.name]
        current = dict(rows.get(row, dict(spec.tm_defaults)))
        for name, t in data.field_dict.items():
            value = self._field_value(spec.fields[name], t)
            if name in CLEAR_ONLY_FIELDS and value != 0:
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT,
                    f"Error in setting value {value} for field {name}. This is a clear only field.",
                )
            # A cleared watermark takes the depth now again at once.
            depth = current.get("usage_cells", sum(current.get(u, 0) for u in PPG_USAGE_FIELDS))
            current[name] = depth if name == "watermark_cells" else value
        rows[row] = current

    def _apply_port_stat(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        """`$PORT_STAT` modify clears: every field given must be 0
        (BfRtPortStatTable::tableEntryMod, bf_rt_port_table_impl.cpp line
        1772: BF_INVALID_ARG otherwise); none given clears all (line 1798)."""
        if op != "MODIFY" or key is None:
            raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on {spec.name}")
        port = _uint("$DEV_PORT", key.field_dict["$DEV_PORT"].value, 32)
        self.port_cfg(port)
        fields = list(data.field_dict) if data is not None else []
        if data is not None and any(
            self._field_value(spec.fields[n], data.field_dict[n]) for n in fields
        ):
            raise _Refused(StatusCode.INVALID_ARGUMENT, "Error data cannot be non-zero value")
        st = self.state[spec.name]
        names = fields or list(spec.fields)
        if "$OctetsTransmittedTotal" in names:
            st.pop(port, None)
        for cos, name in enumerate(RX_PAUSE_US_FIELDS):
            if name in names:
                st.pop((port, cos), None)
        for cos, name in enumerate(TX_PAUSE_US_FIELDS):
            if name in names:
                st.pop((port, "tx", cos), None)

    @property
    def _pgs_per_pipe(self) -> int:
        return self.profile.ports_per_pipe // self.profile.ports_per_port_group

    def port_cfg(self, port: int) -> tuple[int, int, int, list[int]]:
        """(pipe, pg_id, pg_port_nr, egress_qid_queues) of a port, as after power-on:
        each port of a group owns min_queues_per_port consecutive queues of it."""
        p = self.profile
        pipe, local = port >> 7, port & 0x7F
        if not (0 <= port <= p.max_port and pipe < p.pipes and local < p.ports_per_pipe):
            raise _Refused(StatusCode.NOT_FOUND, f"dev_port {port} does not exist")
        pg_id, nr = divmod(local, p.ports_per_port_group)
        base = nr * p.min_queues_per_port
        return pipe, pg_id, nr, [base + q for q in range(p.min_queues_per_port)]

    def _sched_key(self, target: Target, key: _Key) -> tuple[int, int, int]:
        pg_id = _uint("pg_id", key.field_dict["pg_id"].value, 8)
        pg_queue = _uint("pg_queue", key.field_dict["pg_queue"].value, 8)
        if pg_id >= self._pgs_per_pipe or pg_queue >= self.profile.queues_per_port_group:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT, f"no queue pg_id {pg_id} pg_queue {pg_queue}"
            )
        return target.pipe_id_, pg_id, pg_queue

    def _port_sched_key(self, target: Target, key: _Key) -> tuple[int, int]:
        port = _uint("dev_port", key.field_dict["dev_port"].value, 32)
        pipe, *_ = self.port_cfg(port)
        if target.pipe_id_ != pipe:
            raise _Refused(
                StatusCode.INVALID_ARGUMENT, f"dev_port {port} is not in pipe {target.pipe_id_}"
            )
        return pipe, port

    def _tm_row_key(self, spec: TableSpec, target: Target, key: _Key) -> tuple[int, ...]:
        if spec.kind == "tm_port_sched":
            return self._port_sched_key(target, key)
        return self._sched_key(target, key)

    def _apply_tm_sched(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        # A fixed table: every queue (port) exists, so only MODIFY makes sense.
        if op != "MODIFY" or key is None or data is None:
            raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on {spec.name}")
        slot = self._tm_row_key(spec, target, key)
        rows = self.state[spec.name]
        current = dict(rows.get(slot, dict(spec.tm_defaults)))
        for name, t in data.field_dict.items():
            value = self._field_value(spec.fields[name], t)
            if name == "dwrr_weight" and value > MAX_DWRR_WEIGHT:
                # tm_api_sch.c line 71: "Supported range [ 0.. 1023 ]"; the
                # driver would write it to the register unchecked.
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT,
                    f"dwrr_weight {value} outside 0..{MAX_DWRR_WEIGHT}",
                )
            if name == "cos_to_icos":
                # bf_rt_tm_table_impl_port.cpp BfRtTMPortFlowCtrlTable::tableSetField:
                # exactly icos_cnt items (line 1563), each below it (line 1589).
                if len(value) != ICOS_COUNT:
                    raise _Refused(
                        StatusCode.INVALID_ARGUMENT,
                        f"cos_to_icos must have {ICOS_COUNT} items, got {len(value)}",
                    )
                bad = [i for i, v in enumerate(value) if v >= ICOS_COUNT]
                if bad:
                    raise _Refused(
                        StatusCode.INVALID_ARGUMENT,
                        f"invalid cos_to_icos[{bad[0]}]={value[bad[0]]}",
                    )
            # "LOW" is BF_TM_SCH_PRIO_0 and "HIGH" BF_TM_SCH_PRIO_7 (traffic_mgr_types.h).
            current[name] = _priority_number(value) if name == "max_priority" else value
        # Only rows off their power-on config are kept, so state compares by value.
        if current == dict(spec.tm_defaults):
            rows.pop(slot, None)
        else:
            rows[slot] = current

    def _apply_tm_ppg(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        """tm.ppg.cfg: add allocates (dev_port required, on the target's
        pipe), modify changes an allocated PPG (dev_port, if given, must be
        its own), delete frees it; an iCoS belongs to one PPG of a port."""
        if key is None:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "a ppg_id is required")
        ppg_id = _uint("ppg_id", key.field_dict["ppg_id"].value, 8)
        if ppg_id == 0:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "ppg_id 0 is the NULL id")
        pipe = target.pipe_id_
        ppgs: dict[tuple[int, int], dict[str, Any]] = self.state[spec.name]
        slot = (pipe, ppg_id)
        if op == "DELETE":
            if slot not in ppgs:
                raise _Refused(StatusCode.NOT_FOUND, f"no ppg {ppg_id} in pipe {pipe}")
            del ppgs[slot]
            return
        if op not in ("INSERT", "MODIFY") or data is None:
            raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on {spec.name}")
        if data.action_name not in (None, "dev_port"):
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"action {data.action_name} not supported")
        values: dict[str, Any] = {}
        for name, t in data.field_dict.items():
            fs = spec.fields.get(name) or spec.actions["dev_port"][name]
            values[name] = self._field_value(fs, t)
        if op == "INSERT":
            if slot in ppgs:
                raise _Refused(StatusCode.ALREADY_EXISTS, f"ppg {ppg_id} exists in pipe {pipe}")
            if "dev_port" not in values:
                raise _Refused(StatusCode.INVALID_ARGUMENT, "dev_port is required to add a PPG")
            if sum(1 for p, _ in ppgs if p == pipe) >= PPGS_PER_PIPE:
                raise _Refused(StatusCode.RESOURCE_EXHAUSTED, f"pipe {pipe}: no PPG left")
            current = dict(DEFAULT_PPG)
            # The SDE generates a counter id per PPG (tf1.json line 3799);
            # here the pipe's lowest free one.
            taken = {p["ppg_counter_id"] for (p_pipe, _), p in ppgs.items() if p_pipe == pipe}
            current["ppg_counter_id"] = min(set(range(PPGS_PER_PIPE)) - taken)
        else:
            if slot not in ppgs:
                raise _Refused(StatusCode.NOT_FOUND, f"no ppg {ppg_id} in pipe {pipe}")
            current = dict(ppgs[slot])
            if "dev_port" in values and values["dev_port"] != current["dev_port"]:
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT, f"ppg {ppg_id} is dev_port {current['dev_port']}"
                )
        current.update(values)
        # The hysteresis goes to an offset profile in 8-cell units, at least
        # 4 (tm_tofino_hw_intf.c lines 409-416, tm_tof2_hw_intf.c lines
        # 313-320), and a read returns that (line 627 / 572).
        hyst = current["hysteresis_cells"] // HW_UNIT_CELLS * HW_UNIT_CELLS
        held_hyst = max(hyst, MIN_PPG_HYSTERESIS_CELLS)
        profiles = {
            max(p["hysteresis_cells"] // HW_UNIT_CELLS * HW_UNIT_CELLS, MIN_PPG_HYSTERESIS_CELLS)
            for (p_pipe, p_id), p in ppgs.items()
            if p_pipe == pipe and p_id != ppg_id
        }
        if len(profiles | {held_hyst, MIN_PPG_HYSTERESIS_CELLS}) > HYSTERESIS_PROFILES:
            raise _Refused(
                StatusCode.RESOURCE_EXHAUSTED,
                f"pipe {pipe}: no free hysteresis profile ({HYSTERESIS_PROFILES} distinct "
                "values in use; BF_NO_SYS_RESOURCES)",
            )
        if self.asic:
            current["hysteresis_cells"] = held_hyst
        port = current["dev_port"]
        port_pipe, *_ = self.port_cfg(port)
        if port_pipe != pipe:
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"dev_port {port} is not in pipe {pipe}")
        mine = {c for c in range(8) if current[f"icos_{c}"]}
        for other_slot, other in ppgs.items():
            theirs = {c for c in range(8) if other[f"icos_{c}"]}
            if other_slot != slot and other["dev_port"] == port and mine & theirs:
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT,
                    f"dev_port {port}: an icos is in ppg {other_slot[1]} already",
                )
        ppgs[slot] = current

    # -- $PORT -------------------------------------------------------------------
    def _apply_port(
        self, spec: TableSpec, target: Target, op: str, key: _Key | None, data: _Data | None
    ) -> None:
        ports: dict[int, dict[str, Any]] = self.state[spec.name]
        port: dict[str, Any]
        if key is None:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "a $DEV_PORT is required")
        dev_port = _uint("$DEV_PORT", key.field_dict["$DEV_PORT"].value, 32)
        if not is_mac_port(self.profile, dev_port):
            raise _Refused(StatusCode.INVALID_ARGUMENT, f"dev_port {dev_port} is not a port")
        if op == "DELETE":
            ports.pop(dev_port, None)  # bf_pm_port_delete: BF_SUCCESS when not added
            return
        fresh = op in ("INSERT", "INSERT_OR_MODIFY") and dev_port not in ports
        if data is None:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "port data is required")
        values = {n: self._field_value(spec.fields[n], t) for n, t in data.field_dict.items()}
        if "$PORT_UP" in values:
            raise _Refused(StatusCode.INVALID_ARGUMENT, "$PORT_UP is read-only")
        if op == "INSERT_OR_MODIFY":
            op = "MODIFY" if dev_port in ports else "INSERT"
        if op == "INSERT":
            if "$SPEED" not in values or "$FEC" not in values:
                raise _Refused(StatusCode.INVALID_ARGUMENT, "a port add needs $SPEED and $FEC")
            if dev_port in ports:
                # bf_pm_port_add_with_lanes: "port already exists", BF_SUCCESS, mode
                # untouched; tableEntryAdd then applies the other fields.
                values = {
                    k: v for k, v in values.items() if k not in ("$SPEED", "$FEC", "$N_LANES")
                }
                port = dict(ports[dev_port])
            else:
                port = {
                    "$AUTO_NEGOTIATION": "PM_AN_DEFAULT",
                    "$PORT_ENABLE": False,
                    "$TX_PFC_EN_MAP": 0,
                    "$RX_PFC_EN_MAP": 0,
                }
        elif op == "MODIFY":
            if dev_port not in ports:
                raise _Refused(StatusCode.NOT_FOUND, f"dev_port {dev_port} is not added")
            port = dict(ports[dev_port])
        else:
            raise _Refused(StatusCode.UNIMPLEMENTED, f"{op} is not supported on $PORT")
        if "$SPEED" in values:
            speed = values["$SPEED"]
            lanes = values.get("$N_LANES") or DEFAULT_LANES.get(
                speed.removeprefix("BF_SPEED_").removesuffix("_NB").removesuffix("_NON_BREAKABLE"),
                0,
            )
            # A modify checks the new speed against the FEC the port has now.
            fec = values["$FEC"] if op == "INSERT" else port["$FEC"]
            refused = mode_refusal(self.profile, dev_port, speed, lanes, fec)
            if refused is not None:
                raise _Refused(StatusCode.INVALID_ARGUMENT, f"dev_port {dev_port}: {refused[1]}")
            port["$SPEED"], port["$N_LANES"] = speed, lanes
        if "$FEC" in values:
            refused = mode_refusal(
                self.profile, dev_port, port["$SPEED"], port["$N_LANES"], values["$FEC"]
            )
            if refused is not None:
                raise _Refused(StatusCode.INVALID_ARGUMENT, f"dev_port {dev_port}: {refused[1]}")
            port["$FEC"] = canonical_fec(values["$FEC"])
        # A failed sub-call is logged and the write still succeeds (line 413).
        for name in self.ignored_port_fields:
            values.pop(name, None)
        for name in ("$AUTO_NEGOTIATION", "$PORT_ENABLE"):
            if name in values:
                port[name] = values[name]
        if pfc_map_taken(self.profile.chip, values):
            port["$TX_PFC_EN_MAP"] = values["$TX_PFC_EN_MAP"]
            port["$RX_PFC_EN_MAP"] = values["$RX_PFC_EN_MAP"]
        ports[dev_port] = port
        if fresh:
            self._tm_port_added(dev_port, port["$SPEED"])

    def _tm_port_added(self, dev_port: int, speed: str) -> None:
        """What bf_tm_add_new_port does to the port's TM rows (PORT_RATE_KBPS)."""
        tf = "tf2" if self.profile.chip == "tofino2" else "tf1"
        rate = PORT_RATE_KBPS.get(speed, PORT_RATE_KBPS["BF_SPEED_100G"])
        pipe, pg_id, _, queues = self.port_cfg(dev_port)

        def set_row(table: str, key: tuple[int, ...], values: dict[str, Any]) -> None:
            spec = self.spec(f"{tf}.{table}")
            rows = self.state[spec.name]
            row = {**rows.get(key, dict(spec.tm_defaults)), **values}
            if row == dict(spec.tm_defaults):
                rows.pop(key, None)
            else:
                rows[key] = row

        set_row("tm.port.flowcontrol", (pipe, dev_port), {"mode_tx": "NONE", "mode_rx": "NONE"})
        set_row(
            "tm.port.sched_shaping",
            (pipe, dev_port),
            {"unit": "BPS", "max_rate": rate, "max_burst_size": PORT_ADD_BURST_BYTES},
        )
        for q in queues:
            set_row("tm.queue.sched_shaping", (pipe, pg_id, q), {"max_rate": rate, "min_rate": 0})

    def _read_port(self, table: FakeTable, key: _Key, fields: list[str] | None = None) -> _Data:
        dev_port = _uint("$DEV_PORT", key.field_dict["$DEV_PORT"].value, 32)
        port = self.state[table.spec.name].get(dev_port)
        if port is None:
            raise _Refused(StatusCode.NOT_FOUND, f"dev_port {dev_port} is not added")
        # tableEntryGet_internal reads every field when none is asked for,
        # and one failed sub-read fails the read (`status |= sts`).
        failing = sorted(self.failing_port_fields & set(fields or table.spec.fields))
        if failing:
            raise _Refused(StatusCode.UNKNOWN, f"dev_port {dev_port}: reading {failing[0]} failed")
        values = dict(port)
        values["$MEDIA_TYPE"] = "BF_MEDIA_TYPE_UNKNOWN"
        values["$TIMESTAMP_1588_VALUE"] = 0
        # std::map order: the first alias of the FEC's enum is what a read returns.
        values["$FEC"] = min(f for f in FEC_CHOICES if canonical_fec(f) == port["$FEC"])
        values["$PORT_UP"] = bool(port["$PORT_ENABLE"]) and dev_port not in self.link_down
        return self._data(table, values, None)

    # -- reads -----------------------------------------------------------------
    def read(
        self,
        client: FakeClient,
        table: FakeTable,
        target: Target,
        keys: Any,
        default: bool,
        p4_name: str | None = None,
        from_hw: bool = True,
        fields: list[str] | None = None,
    ) -> Iterator[tuple[_Data, _Key | None]]:
        # A generator: like the real client, the RPC only runs once iterated.
        self.check_alive(client)
        self.check_program(client, p4_name)
        spec = table.spec
        self.last_read_from_hw = from_hw
        self.calls.append(
            Call(
                "read",
                spec.name,
                "DEFAULT" if default else "GET",
                len(keys or []),
                0,
                target.pipe_id_,
            )
        )
        try:
            if spec.kind in ("tm_sched", "tm_port_sched") and target.pipe_id_ == ALL_PIPES:
                raise _Refused(StatusCode.INVALID_ARGUMENT, "TM table: target one pipe")
            results: list[tuple[_Data, _Key | None]]
            if default and spec.kind == "dev_config":
                data = self._data(table, {"num_pipes": self.pipes}, None)
                results = [(data, None)]
            elif default:
                if spec.kind != "mat":
                    raise _Refused(StatusCode.UNIMPLEMENTED, "no default entry")
                action, params = self.state[spec.name]["default"]
                data = self._data(table, params, action)
                data.is_default_entry = True
                results = [(data, None)]
            elif keys:
                if spec.kind in ("register", "counter"):
                    results = self._read_indexed(table, target, keys)
                else:
                    results = [(self._read_one(table, target, k, from_hw, fields), k) for k in keys]
                if fields:
                    # required_data: the server returns only the fields asked for.
                    for data, _ in results:
                        data.field_dict = {n: t for n, t in data.field_dict.items() if n in fields}
            elif spec.kind == "mat":
                results = [
                    (self._data(table, params, action), self._key_from_ident(table, ident))
                    for ident, (action, params) in self.state[spec.name]["entries"].items()
                ]
            else:
                raise _Refused(StatusCode.UNIMPLEMENTED, "read-all is not supported here")
        except _Refused as exc:
            raise BfruntimeReadWriteRpcException(
                FakeRpcError(
                    StatusCode.UNKNOWN, "read refused", [(0, Error(exc.code.value, exc.message))]
                )
            ) from None
        yield from results

    def _data(self, table: FakeTable, values: dict[str, Any], action: str | None) -> _Data:
        tuples = []
        for name, v in values.items():
            if isinstance(v, bool):
                tuples.append(DataTuple(name, bool_val=v))
            elif isinstance(v, str):
                tuples.append(DataTuple(name, str_val=v))
            elif isinstance(v, list):
                tuples.append(DataTuple(name, int_arr_val=list(v)))
            else:
                tuples.append(DataTuple(name, v))
        return _Data(table, tuples, action, get=True)

    def _read_indexed(
        self, table: FakeTable, target: Target, keys: list[_Key]
    ) -> list[tuple[_Data, _Key | None]]:
        """Register or counter cells, as _read_one reads each (same refusals,
        same answers), with what is the same for every key worked out once:
        a control cycle reads thousands of cells in one request."""
        spec = table.spec
        st: Any = self.state.get(spec.name)
        pipes = self._pipes(target)
        field = "$REGISTER_INDEX" if spec.kind == "register" else "$COUNTER_INDEX"
        out: list[tuple[_Data, _Key | None]] = []
        if spec.kind == "register":
            layout = self._layout(spec)
            rows = [st[p] for p in pipes]
            # One field of the cell's whole width: the cells as they are.
            whole = layout[0][0] if len(layout) == 1 and layout[0][1] == 0 else None
            for k in keys:
                index = self._index(spec, k, field)
                cells = [row[index] for row in rows]
                if whole is not None:
                    values = {whole: cells}
                else:
                    values = {name: [(c >> sh) & mask for c in cells] for name, sh, mask in layout}
                out.append((_Answer(table, values), k))
            return out
        # A counter read over all pipes comes back summed.
        per_field = [(n, [st[n][p] for p in pipes]) for n in spec.fields]
        for k in keys:
            index = self._index(spec, k, field)
            sums = {n: sum(row[index] for row in rows) for n, rows in per_field}
            out.append((_Answer(table, sums), k))
        return out

    def _read_one(
        self,
        table: FakeTable,
        target: Target,
        key: _Key,
        from_hw: bool = True,
        fields: list[str] | None = None,
    ) -> _Data:
        spec = table.spec
        st: Any = self.state.get(spec.name)
        if spec.kind == "mat":
            found = st["entries"].get(self._mat_key(spec, key))
            if found is None:
                raise _Refused(StatusCode.NOT_FOUND, f"{spec.name}: no entry for {key.to_dict()}")
            return self._data(table, found[1], found[0])
        if spec.kind in ("register", "counter"):
            return self._read_indexed(table, target, [key])[0][0]
        if spec.kind == "mirror":
            sid = _uint("$sid", key.field_dict["$sid"].value, 16)
            if sid not in st:
                raise _Refused(StatusCode.NOT_FOUND, f"$mirror.cfg: no session {sid}")
            action, session = st[sid]
            return self._data(table, session, action)
        if spec.kind == "port_stat":
            port = _uint("$DEV_PORT", key.field_dict["$DEV_PORT"].value, 32)
            self.port_cfg(port)  # NOT_FOUND for a port the device lacks
            if port not in self.state["$PORT"]:
                # bf_pm_intf.c bf_pm_port_stat_direct_get line 10449 (and the
                # shadow's bf_pm_port_all_stats_get): BF_INVALID_ARG.
                raise _Refused(StatusCode.INVALID_ARGUMENT, f"dev_port {port} is not added")
            # Without from_hw: the shadow of the last stats poll (bf_rt_port_table_impl.cpp
            # line 1846); with it: the MAC's counters now (line 1902).
            counts = st if from_hw else self.port_stat_shadow
            values = {"$OctetsTransmittedTotal": counts.get(port, 0)}
            for cos, name in enumerate(RX_PAUSE_US_FIELDS):
                values[name] = counts.get((port, cos), 0)
            for cos, name in enumerate(TX_PAUSE_US_FIELDS):
                values[name] = counts.get((port, "tx", cos), 0)
            return self._data(table, values, None)
        if spec.kind == "tm_counter":
            row = self._counter_row(spec, target, key)
            values = dict(st.get(row, dict(spec.tm_defaults)))
            if "ppg_counter_id" in spec.keys:
                values["ppg_id"] = self._ppg_of_counter(row[0], row[1])
            return self._data(table, values, None)
        if spec.kind == "port":
            return self._read_port(table, key, fields)
        if spec.kind == "port_str":
            if from_hw:
                # BfRtPortStrInfoTable::tableEntryGet line 2597: BF_NOT_SUPPORTED.
                raise _Refused(StatusCode.UNIMPLEMENTED, "Read from hardware not supported")
            name = key.field_dict["$PORT_NAME"].value
            if name not in self.front_panel:
                raise _Refused(StatusCode.INVALID_ARGUMENT, f"Error getting Port {name} dev_port")
            return self._data(table, {"$DEV_PORT": self.front_panel[name]}, None)
        if spec.kind == "tm_ppg":
            ppg_id = _uint("ppg_id", key.field_dict["ppg_id"].value, 8)
            held = st.get((target.pipe_id_, ppg_id))
            if held is None:
                raise _Refused(StatusCode.NOT_FOUND, f"no ppg {ppg_id} in pipe {target.pipe_id_}")
            return self._data(table, dict(held), "dev_port")
        if spec.kind == "tm_pool":
            row = self._pool_row(spec, key)
            (name,) = spec.fields
            return self._data(table, {name: st.get(row, 0)}, None)
        if spec.kind == "tm_port":
            port = _uint("dev_port", key.field_dict["dev_port"].value, 32)
            pipe, pg_id, nr, queues = self.port_cfg(port)
            if target.pipe_id_ not in (ALL_PIPES, pipe):
                raise _Refused(
                    StatusCode.INVALID_ARGUMENT, f"dev_port {port} is not in pipe {target.pipe_id_}"
                )
            values = {"pg_id": pg_id, "pg_port_nr": nr, "egress_qid_queues": queues}
            return self._data(table, values, None)
        slot = self._tm_row_key(spec, target, key)
        sched: dict[str, Any] = dict(st.get(slot, dict(spec.tm_defaults)))
        if "max_priority" in sched:
            # Stored as the driver's number; read back as prio_to_str names it.
            sched["max_priority"] = _priority_name(int(sched["max_priority"]))
        return self._data(table, sched, None)


class FakeBfrtGrpc:
    """Module-like stand-in for `bfrt_grpc.client`, plus test controls.

    Controls: fail_write(table, after) refuses a chosen update; restart() is a
    reboot (state wiped, old sessions get UNAVAILABLE until a new
    ClientInterface subscribes); down()/up() make the device unreachable for
    a while without losing state. `calls` lists every RPC served.
    """

    Target = Target
    KeyTuple = KeyTuple
    DataTuple = DataTuple
    BfruntimeRpcException = BfruntimeRpcException
    BfruntimeReadWriteRpcException = BfruntimeReadWriteRpcException
    BfruntimeForwardingRpcException = BfruntimeForwardingRpcException
    BfruntimeSubscribeRpcException = BfruntimeSubscribeRpcException
    bfruntime_pb2 = SimpleNamespace(
        WriteRequest=SimpleNamespace(
            CONTINUE_ON_ERROR=CONTINUE_ON_ERROR, ROLLBACK_ON_ERROR=ROLLBACK_ON_ERROR
        )
    )

    def __init__(
        self,
        program: str,
        profile: HwProfile,
        address: str = "localhost:50052",
        asic: bool = True,
        production: bool = False,
        pipes: int | None = None,
    ) -> None:
        """`asic`: a switch (TM reads rounded as the registers hold them) or
        tofino-model (TM reads return what was written). `production`: the
        program as built with --production (no test hooks compiled in). `pipes`:
        the board's pipe count (default the chip's)."""
        self.switch = FakeSwitch(program, profile, address, asic, production, pipes)
        # The module's `import grpc` (client.py line 26): what ClientInterface
        # makes its channel with, looked up when it is called.
        self.grpc: Any = FakeGrpc()

    def ClientInterface(  # named like the real module's class
        self,
        grpc_addr: str,
        client_id: int,
        device_id: int,
        notifications: Any = None,
        timeout: float = 1,
        num_tries: int = 5,
        perform_subscribe: bool = True,
    ) -> FakeClient:
        if not perform_subscribe and notifications:
            raise RuntimeError("Notifications should not be provided if subscribe not requested")
        gigabyte = 1024**3  # the options client.py line 436 gives
        channel = self.grpc.insecure_channel(
            grpc_addr,
            options=[
                ("grpc.max_send_message_length", gigabyte),
                ("grpc.max_receive_message_length", gigabyte),
                ("grpc.max_metadata_size", gigabyte),
            ],
        )
        return FakeClient(self.switch, grpc_addr, client_id, device_id, perform_subscribe, channel)

    # -- test controls ---------------------------------------------------------
    @property
    def calls(self) -> list[Call]:
        return self.switch.calls

    def writes(self) -> list[Call]:
        return [c for c in self.switch.calls if c.rpc == "write"]

    def fail_write(
        self,
        table: str,
        after: int = 0,
        code: str = "RESOURCE_EXHAUSTED",
        message: str = "injected failure",
    ) -> None:
        """Refuse the update to `table` that comes after `after` accepted ones (once)."""
        name = self.switch.spec(table).name
        self.switch.failures.append(_Failure(name, after, StatusCode[code], message))

    def restart(self) -> None:
        self.switch.restart()

    def serve_tls(self, cert: bytes, key: bytes, client_ca: bytes | None = None) -> None:
        """bf_switchd's gRPC server speaks TLS with this certificate and key;
        with `client_ca`, only to clients with a certificate it signed."""
        self.switch.tls = ServerTls(cert, key, client_ca)

    def down(self) -> None:
        self.switch.is_down = True

    def up(self) -> None:
        self.switch.is_down = False

    def snapshot(self) -> dict[str, Any]:
        """Everything a write can change, comparable with ==."""
        return copy.deepcopy(self.switch.state)

    def entries(self, table: str) -> dict[tuple[Any, ...], tuple[str, dict[str, Any]]]:
        return dict(self.switch.state[self.switch.spec(table).name]["entries"])

    def default_entry(self, table: str) -> tuple[str, dict[str, Any]]:
        return self.switch.state[self.switch.spec(table).name]["default"]

    def register(self, name: str, index: int) -> list[int]:
        """The register cell in every pipe."""
        return [pipe[index] for pipe in self.switch.state[self.switch.spec(name).name]]

    def set_register(self, name: str, index: int, value: int, pipe: int) -> None:
        """What the data plane of `pipe` does to a register cell."""
        self.switch.state[self.switch.spec(name).name][pipe][index] = value

    def count(self, counter: str, index: int, packets: int, nbytes: int, pipe: int = 0) -> None:
        """Traffic of `pipe` hitting a counter cell."""
        st = self.switch.state[self.switch.spec(counter).name]
        st["$COUNTER_SPEC_PKTS"][pipe][index] += packets
        st["$COUNTER_SPEC_BYTES"][pipe][index] += nbytes

    def mirror_sessions(self) -> dict[int, tuple[str, dict[str, Any]]]:
        return dict(self.switch.state["$mirror.cfg"])

    def port_queue(self, port: int, qid: int) -> tuple[int, int, int]:
        """(pipe, pg_id, pg_queue) the TM uses for queue `qid` of `port`."""
        pipe, pg_id, _, queues = self.switch.port_cfg(port)
        return pipe, pg_id, queues[qid]

    def tm_queue(self, pipe: int, pg_id: int, pg_queue: int) -> dict[str, Any]:
        """The queue's scheduling as the driver stores it (priority as a number)."""
        tf = "tf2" if self.switch.profile.chip == "tofino2" else "tf1"
        st = self.switch.state[f"{tf}.tm.queue.sched_cfg"]
        return dict(st.get((pipe, pg_id, pg_queue), dict(DEFAULT_TM_QUEUE)))

    def tm_row(self, table: str, pipe: int, *key: int) -> dict[str, Any]:
        """A fixed TM table's row as the driver stores it: `table` as in
        bf-rt.json without the chip prefix (tm.port.sched_shaping), keyed by
        (pg_id, pg_queue) or dev_port."""
        tf = "tf2" if self.switch.profile.chip == "tofino2" else "tf1"
        spec = self.switch.spec(f"{tf}.{table}")
        st = self.switch.state[spec.name]
        return dict(st.get((pipe, *key), dict(spec.tm_defaults)))

    def transmit(self, port: int, nbytes: int) -> None:
        """Traffic leaving `port` ($PORT_STAT's octet counter)."""
        st = self.switch.state["$PORT_STAT"]
        st[port] = st.get(port, 0) + nbytes

    def poll_port_stats(self) -> None:
        """The port manager's stats timer fires (every 1000 ms on a switch):
        `$PORT_STAT` reads without from_hw see the counters as of now."""
        self.switch.port_stat_shadow = dict(self.switch.state["$PORT_STAT"])

    def set_front_panel(self, names: Mapping[str, int]) -> None:
        """The box's own front-panel map (`$PORT_STR_INFO`): name -> dev_port."""
        self.switch.front_panel = dict(names)

    def ignore_port_field(self, name: str) -> None:
        """Setting `$PORT` field `name` fails in the port manager: the server
        logs it and reports the write done (bf_rt_port_table_impl.cpp
        tableEntryMod_internal, line 413), leaving the field as it was."""
        self.switch.ignored_port_fields.add(name)

    def fail_port_field(self, name: str) -> None:
        """Reading `$PORT` field `name` fails on the switch (a serdes or
        1588 sub-read): so does any `$PORT` read that includes it."""
        self.switch.failing_port_fields.add(name)

    def rx_paused(self, port: int, cos: int, us: int) -> None:
        """The link partner held CoS `cos` of `port` paused `us` more
        microseconds ($PORT_STAT $ReceivePri<cos>Pause1USCount)."""
        st = self.switch.state["$PORT_STAT"]
        st[(port, cos)] = st.get((port, cos), 0) + us

    def tx_paused(self, port: int, cos: int, us: int) -> None:
        """This switch held the partner's CoS `cos` paused `us` more
        microseconds ($PORT_STAT $TransmitPri<cos>Pause1USCount)."""
        st = self.switch.state["$PORT_STAT"]
        st[(port, "tx", cos)] = st.get((port, "tx", cos), 0) + us

    def congest(self, port: int, queue: int, usage_cells: int, drops: int = 0) -> None:
        """Traffic in the port's queue `queue` (its tm.counter.queue row): the
        depth now, the watermark at least that, `drops` more packets dropped."""
        pipe, pg_id, pg_queue = self.port_queue(port, queue)
        tf = "tf2" if self.switch.profile.chip == "tofino2" else "tf1"
        rows = self.switch.state[f"{tf}.tm.counter.queue"]
        row = rows.setdefault(
            (pipe, pg_id, pg_queue),
            {"drop_count_packets": 0, "usage_cells": 0, "watermark_cells": 0},
        )
        row["usage_cells"] = usage_cells
        row["watermark_cells"] = max(row["watermark_cells"], usage_cells)
        row["drop_count_packets"] += drops

    def fill_ppg(self, port: int, ppg_id: int, shared_cells: int, drops: int = 0) -> None:
        """Traffic held in a PPG's shared-pool share (its tm.counter.ppg row)."""
        tf = "tf2" if self.switch.profile.chip == "tofino2" else "tf1"
        pipe = port >> 7
        counter = self.switch.state[f"{tf}.tm.ppg.cfg"][(pipe, ppg_id)]["ppg_counter_id"]
        spec = self.switch.spec(f"{tf}.tm.counter.ppg")
        row = self.switch.state[spec.name].setdefault((pipe, counter), dict(spec.tm_defaults))
        row["shared_pool_usage_cells"] = shared_cells
        usage = sum(row[u] for u in PPG_USAGE_FIELDS)
        row["watermark_cells"] = max(row["watermark_cells"], usage)
        row["drop_count_packets"] += drops

    def fill_pool(self, pool: str, usage_cells: int) -> None:
        """A pool's tm.counter.pool row: usage now, watermark at least that."""
        tf = "tf2" if self.switch.profile.chip == "tofino2" else "tf1"
        row = self.switch.state[f"{tf}.tm.counter.pool"].setdefault(
            (pool,), {"usage_cells": 0, "watermark_cells": 0}
        )
        row["usage_cells"] = usage_cells
        row["watermark_cells"] = max(row["watermark_cells"], usage_cells)

    def ports(self) -> dict[int, dict[str, Any]]:
        """`$PORT` as the switch holds it: device port -> fields."""
        return copy.deepcopy(self.switch.state["$PORT"])

    def link(self, dev_port: int, up: bool) -> None:
        """The far end of a port comes up or goes away."""
        if up:
            self.switch.link_down.discard(dev_port)
        else:
            self.switch.link_down.add(dev_port)

    def tm_weight(self, pipe: int, pg_id: int, pg_queue: int) -> int:
        return int(self.tm_queue(pipe, pg_id, pg_queue)["dwrr_weight"])
