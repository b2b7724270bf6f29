# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The one interface every tofino-cc app uses to talk to a switch.

Two backends implement it: BF-Runtime (a real switch or tofino-model) and
the reference model. A batch of writes is all-or-nothing on both: if any
write is refused, the ones before it are undone and WriteError names the
refused one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, TypeVar

from hw_profiles import HwProfile
from models.switch.core import Match

EntryOp = Literal["insert", "modify", "upsert", "delete", "default"]


@dataclass(frozen=True)
class EntryWrite:
    """One match-action entry operation, by P4 names."""

    table: str
    key: Mapping[str, Match] = field(default_factory=dict)
    action: str | None = None
    data: Mapping[str, int] = field(default_factory=dict)
    priority: int = 0
    op: EntryOp = "upsert"

    def describe(self) -> str:
        return f"{self.op} {self.table} {dict((k, v.value) for k, v in self.key.items())}"


@dataclass(frozen=True)
class RegisterWrite:
    register: str
    index: int
    value: int

    def describe(self) -> str:
        return f"{self.register}[{self.index}] = {self.value}"


@dataclass(frozen=True)
class RegisterClear:
    """Every cell of a register, in every pipe, back to its initial value,
    in one request: BF-Runtime's delete with no key, which bf_rt runs as
    tableClear (pipe_mgr's stateful table reset). Undoing one means writing
    every cell back, so a batch rolls a clear back only when a later call of
    the same batch is refused; a clear that is the batch's last call is
    undone by the switch itself, as a register write is."""

    register: str

    def describe(self) -> str:
        return f"clear {self.register}"


@dataclass(frozen=True)
class MirrorSessionWrite:
    """A `$mirror.cfg` `$normal` session: copies go to `port`'s queue
    `queue` ($egress_port_queue) at ingress CoS `icos` ($ingress_cos), 0 and
    0 unless given (the SDE's defaults)."""

    sid: int
    port: int
    max_pkt_len: int = 0
    direction: Literal["INGRESS", "EGRESS", "BOTH"] = "EGRESS"
    delete: bool = False
    queue: int = 0
    icos: int = 0

    def describe(self) -> str:
        if self.delete:
            return f"delete mirror session {self.sid} -> port {self.port}"
        cls = f" queue {self.queue} icos {self.icos}" if self.queue or self.icos else ""
        return f"mirror session {self.sid} -> port {self.port}{cls}"


# Fields of tm.queue.sched_cfg a TmQueueWrite may set.
TM_QUEUE_FIELDS = ("dwrr_weight", "max_priority")
MAX_TM_PRIORITY = 7  # eight strict-priority levels; higher is served first
# tm.queue.sched_cfg dwrr_weight is a uint16 in bf_rt_tm_tf1.json, but the
# driver takes 0..1023 (tm_api_sch.c line 71, bf_tm_sched_q_dwrr_weight_set:
# "Supported range [ 0.. 1023 ]"; the value goes to the register unchecked,
# tm_sch.c bf_tm_sch_set_q_dwrr_wt), so a larger weight is refused here.
MAX_DWRR_WEIGHT = 1023


@dataclass(frozen=True)
class TmQueueWrite:
    """Traffic-manager scheduling of (port, queue) - tm.queue.sched_cfg. Fields
    left None are not touched."""

    port: int
    queue: int
    dwrr_weight: int | None = None
    max_priority: int | None = None

    def fields(self) -> dict[str, int]:
        return {f: v for f in TM_QUEUE_FIELDS if (v := getattr(self, f)) is not None}

    def describe(self) -> str:
        sets = ", ".join(f"{k} = {v}" for k, v in self.fields().items())
        return f"tm port {self.port} queue {self.queue}: {sets}"


# tm.port.sched_shaping / tm.queue.sched_shaping: max_rate and max_burst_size
# are uint32, in kb/s and bytes with unit "BPS" (open-p4studio
# bf_rt_tm_tf1.json; bf_tm_sched_q_shaping_rate_set in traffic_mgr_sch_intf.h:
# "Shaper value in pps or kbps", burst "in packets or bytes").
MAX_SHAPING_KBPS = 0xFFFFFFFF
MAX_SHAPING_BURST_BYTES = 0xFFFFFFFF
# A shaper's bucket: a few MTU-sized frames, so it shapes a rate without
# holding back a single packet.
DEFAULT_SHAPING_BURST_BYTES = 9216


@dataclass(frozen=True)
class TmShapingWrite:
    """Max-rate shaping of a port's traffic in the TM: the whole port (queue
    None: tm.port.sched_shaping, enabled by tm.port.sched_cfg max_rate_enable)
    or one queue (tm.queue.sched_shaping, tm.queue.sched_cfg max_rate_enable).
    max_rate_kbps None turns the shaper off (the port's own rate again)."""

    port: int
    queue: int | None = None
    max_rate_kbps: int | None = None
    max_burst_bytes: int = DEFAULT_SHAPING_BURST_BYTES

    def describe(self) -> str:
        where = f"tm port {self.port}" + ("" if self.queue is None else f" queue {self.queue}")
        if self.max_rate_kbps is None:
            return f"{where}: shaping off"
        return f"{where}: max_rate {self.max_rate_kbps} kb/s, burst {self.max_burst_bytes} B"


# PFC (802.1Qbb) in the TM, as open-p4studio 1f97778f's bf_rt_tm_tf1.json and
# tf2.json declare it (pkgsrc/bf-drivers/src/bf_rt/bf_rt_tm/):
# - tm.port.flowcontrol (key dev_port): mode_tx ("NONE", "PFC", "PAUSE":
#   send PFC for the port's PPGs or not) and cos_to_icos, a repeated uint8 of
#   eight items, "Array index is CoS and array value is iCoS"
#   (traffic_mgr_port_intf.h line 264, bf_tm_port_pfc_cos_mapping_set): a PPG's pause
#   goes out on every CoS whose item is one of the PPG's iCoS
#   (tm_tofino_hw_intf.c line 5252 / tm_tof2_hw_intf.c line 8249 *_port_set_pfc_cos_map). Its
#   mode_rx is "read_only": true (tf1.json line 1485, tf2.json line 1472):
#   bf_rt_tm_table_impl_port.cpp tableSetEntry skips it without an error
#   (lines 271-279), and the driver call under it is a no-op on both chips
#   (tm_tofino_hw_intf.c bf_tm_tofino_port_set_flowcontrol_rx line 5236,
#   tm_tof2_hw_intf.c line 8216). Nothing here writes it.
# - tm.queue.cfg (key pg_id, pg_queue) pfc_cos: the CoS whose received pauses
#   stop the queue. 0 is CoS 0, not "off": "By default, all queues use
#   mapping CoS zero" (tm_api_queue.c line 678, bf_tm_q_pfc_cos_mapping_set).
# So a queue stops honouring a lossless class's pauses only by moving to a
# CoS no neighbour pauses (TmPfcWrite.ignore_cos), which on Tofino1 the MAC
# can also be told to ignore ($RX_PFC_EN_MAP without that bit); Tofino2's
# MAC takes receive maps 0 or 0xFF only (bf_port_if.c
# bf_port_flow_control_pfc_set line 965), so there it relies on the fabric
# pausing nothing on that CoS.
PFC_MODES = ("NONE", "PFC", "PAUSE")
# A lossless class is never on CoS 0: every ordinary queue is (power-on
# pfc_cos 0), so pauses on it would stop them all.
MIN_PFC_COS, MAX_PFC_COS = 1, 7
# tm.port.flowcontrol cos_to_icos as the controller writes it: CoS c <-> iCoS
# c, the SDE's default ("stright mapping iCoS = CoS"), so a PPG of iCoS [c]
# pauses CoS c; the lossless class's iCoS must therefore be its CoS
# (p4qcn/config.py checks it).
IDENTITY_COS_TO_ICOS: tuple[int, ...] = tuple(range(8))
# Where queues go while they ignore pauses: CoS 0, beside every ordinary queue.
DEFAULT_IGNORE_COS = 0


@dataclass(frozen=True)
class TmPfcWrite:
    """Priority flow control of one port in the TM: `generate` sends PFC
    for the port's lossless PPG (tm.port.flowcontrol mode_tx "PFC", else
    "NONE", with cos_to_icos the identity); `honour` stops `queues` when the
    link partner pauses CoS `cos` (tm.queue.cfg pfc_cos = cos); not
    honouring moves them to `ignore_cos`, a CoS no neighbour pauses. The
    watchdog turns `honour` off to break a pause storm and back on to restore."""

    port: int
    cos: int
    queues: tuple[int, ...] = ()
    generate: bool = True
    honour: bool = True
    ignore_cos: int = DEFAULT_IGNORE_COS

    def describe(self) -> str:
        qs = ",".join(str(q) for q in self.queues) or "none"
        obeys = "honour" if self.honour else f"ignore (queues on CoS {self.ignore_cos})"
        return (
            f"tm port {self.port} PFC cos {self.cos}: "
            f"{'generate' if self.generate else 'no generate'}, {obeys} on queues {qs}"
        )

    @property
    def mode_tx(self) -> str:
        return "PFC" if self.generate else "NONE"

    @property
    def cos_to_icos(self) -> tuple[int, ...]:
        return IDENTITY_COS_TO_ICOS

    @property
    def pfc_cos(self) -> int:
        return self.cos if self.honour else self.ignore_cos


# tm.ppg.cfg (bf_rt_tm_tf1.json, tf2 the same): key ppg_id "(1..255) ...
# chosen by the application when it adds a new entry ... (up to 128 items
# per pipe)"; action dev_port (dev_port, pfc_enable, pfc_skid_max_cells);
# fields icos_0..icos_7 (bool), guaranteed_cells, hysteresis_cells,
# pool_max_cells (uint32), pool_id and dynamic_baf (string choices).
PPG_POOLS = ("IG_APP_POOL_0", "IG_APP_POOL_1", "IG_APP_POOL_2", "IG_APP_POOL_3")
PPG_BAF_CHOICES = ("1.5%", "3%", "6%", "11%", "20%", "33%", "50%", "66%", "80%", "DISABLE")
MIN_PPG_ID, MAX_PPG_ID = 1, 255
MAX_PPGS_PER_PIPE = 128
MAX_CELLS = 0xFFFFFFFF


@dataclass(frozen=True)
class TmPpgWrite:
    """A port's lossless priority group (tm.ppg.cfg), the ingress side that
    generates PFC: the port's packets of iCoS `icos` are counted in the PPG;
    once they hold `xoff_cells` of its application pool (pool_max_cells,
    static: dynamic_baf "DISABLE", nothing guaranteed) the TM pauses the
    neighbour; it resumes `xoff_cells - xon_cells` lower (hysteresis_cells);
    `headroom_cells` (pfc_skid_max_cells) hold what is in flight meanwhile.
    `delete` frees the PPG (its iCoS go back to the port's default PPG)."""

    ppg_id: int
    port: int
    icos: tuple[int, ...] = ()
    xoff_cells: int = 0
    xon_cells: int = 0
    headroom_cells: int = 0
    pool: str = PPG_POOLS[0]
    delete: bool = False

    def describe(self) -> str:
        if self.delete:
            return f"delete tm ppg {self.ppg_id} of port {self.port}"
        return (
            f"tm ppg {self.ppg_id} port {self.port} icos {','.join(map(str, self.icos))}: "
            f"xoff {self.xoff_cells}, xon {self.xon_cells}, headroom {self.headroom_cells} "
            f"cells in {self.pool}"
        )

    def fields(self) -> dict[str, object]:
        """The write's tm.ppg.cfg data fields (action dev_port's and the rest)."""
        out: dict[str, object] = {f"icos_{c}": c in self.icos for c in range(8)}
        out.update(
            {
                "guaranteed_cells": 0,
                "hysteresis_cells": self.xoff_cells - self.xon_cells,
                "pool_id": self.pool,
                "pool_max_cells": self.xoff_cells,
                "dynamic_baf": "DISABLE",
            }
        )
        return out

    def action_fields(self) -> dict[str, object]:
        return {
            "dev_port": self.port,
            "pfc_enable": True,
            "pfc_skid_max_cells": self.headroom_cells,
        }


# tm.pool.cfg (key pool, data size_cells) and tm.pool.app_pfc (keys pool,
# cos; data pfc_limit_cells "When the PPG usage hits this limit, PFC is
# triggered") in bf_rt_tm_tf1.json / tf2.json: both keyless of entries of
# their own, only modified (bf_rt_tm_table_impl_pool.cpp has tableEntryMod
# and tableEntryGet, no add); app_pfc takes the four ingress pools only and
# a cos below the device's PFC levels (8).
POOL_CFG_CHOICES = (
    *PPG_POOLS,
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
PFC_LEVELS = 8


@dataclass(frozen=True)
class TmPoolWrite:
    """A TM buffer pool: its size (tm.pool.cfg size_cells; None leaves it)
    and, for an ingress application pool, the PFC limit of each iCoS
    (tm.pool.app_pfc pfc_limit_cells), as (icos, cells) pairs."""

    pool: str
    size_cells: int | None = None
    pfc_limit_cells: tuple[tuple[int, int], ...] = ()

    def describe(self) -> str:
        parts = [] if self.size_cells is None else [f"size {self.size_cells} cells"]
        parts += [f"PFC limit icos {c}: {cells} cells" for c, cells in self.pfc_limit_cells]
        return f"tm pool {self.pool}: {', '.join(parts) or 'nothing'}"


# What the TM keeps of a pool's PFC limit and a PPG's hysteresis, which a
# read returns (on the ASIC the read is of the register, tm_ig_pools.c
# bf_tm_ig_spool_get_pfc_limit line 340 via tm_api_read.c line 2795;
# tm_api_read.c line 2216 for the hysteresis, tm_tofino_hw_intf.c line 627):
# - tm.pool.app_pfc pfc_limit_cells in 8-cell units, rounded down
#   (tm_tofino_hw_intf.c bf_tm_tofino_ig_spool_set_pfc_limit line 2957,
#   tm_tof2_hw_intf.c line 4540: `val >> 3`);
# - tm.ppg.cfg hysteresis_cells in 8-cell units, rounded down, at least 4
#   units (tm_tofino_hw_intf.c bf_tm_tofino_populate_wac_offset_profile
#   lines 409-416, tm_tof2_hw_intf.c lines 313-320; BF_TM_*_WAC_POR_HYSTERESIS
#   is 4 in tm_tofino.h / tm_tof2.h).
HW_UNIT_CELLS = 8
MIN_PPG_HYSTERESIS_CELLS = 4 * HW_UNIT_CELLS
# Distinct PPG hysteresis values one pipe holds: its WAC offset-profile table
# has 32 entries (tm_tofino.h line 66 BF_TM_TOFINO_HYSTERESIS_PROFILES,
# tm_tof2.h line 67), the power-on value among them; one more distinct value
# is BF_NO_SYS_RESOURCES (tm_tofino_hw_intf.c line 489).
HYSTERESIS_PROFILES = 32


def hw_pfc_limit_cells(cells: int) -> int:
    return cells // HW_UNIT_CELLS * HW_UNIT_CELLS


def hw_hysteresis_cells(cells: int) -> int:
    return max(cells // HW_UNIT_CELLS * HW_UNIT_CELLS, MIN_PPG_HYSTERESIS_CELLS)


def hysteresis_profile_refusal(held: Iterable[TmPpgWrite], w: TmPpgWrite) -> str | None:
    """Why `w` finds no hysteresis profile in its pipe beside `held` (the
    pipe's other PPGs), or None."""
    values = {hw_hysteresis_cells(p.xoff_cells - p.xon_cells) for p in held}
    values |= {hw_hysteresis_cells(w.xoff_cells - w.xon_cells), MIN_PPG_HYSTERESIS_CELLS}
    if len(values) <= HYSTERESIS_PROFILES:
        return None
    return (
        f"pipe {w.port >> 7}: no free hysteresis profile ({HYSTERESIS_PROFILES} distinct "
        "xoff - xon values a pipe, the power-on one among them)"
    )


def as_hardware_holds(w: TmPpgWrite | TmPoolWrite) -> TmPpgWrite | TmPoolWrite:
    """`w` as a read after writing it returns: what a diff compares with."""
    if isinstance(w, TmPoolWrite):
        limits = tuple((c, hw_pfc_limit_cells(cells)) for c, cells in w.pfc_limit_cells)
        return replace(w, pfc_limit_cells=limits)
    if w.delete:
        return w
    return replace(w, xon_cells=w.xoff_cells - hw_hysteresis_cells(w.xoff_cells - w.xon_cells))


_Held = TypeVar("_Held", TmPpgWrite, TmPoolWrite)


@dataclass(frozen=True)
class PortWrite:
    """A front-panel port in BF-Runtime's `$PORT` table: added (or changed) with
    this speed, FEC, autonegotiation policy and lane count, and enabled or not.
    Values are the table's own choice strings (ports.py turns a config's
    `100G`/`rs`/`default` into them). `delete` removes the port."""

    dev_port: int
    speed: str = "BF_SPEED_NONE"
    fec: str = "BF_FEC_TYP_NONE"
    autoneg: str = "PM_AN_DEFAULT"
    lanes: int = 0
    enable: bool = True
    delete: bool = False
    # Priorities (bit p = priority p) whose 802.1Qbb pause frames the MAC
    # sends and honours: `$TX_PFC_EN_MAP` and `$RX_PFC_EN_MAP` (0: PFC off,
    # the port's state after an add). The TM side is TmPfcWrite/TmPpgWrite.
    pfc_map: int = 0

    def describe(self) -> str:
        if self.delete:
            return f"delete $PORT {self.dev_port}"
        pfc = f" PFC map 0x{self.pfc_map:02x}" if self.pfc_map else ""
        return (
            f"$PORT {self.dev_port}: {self.speed} x{self.lanes} {self.fec} {self.autoneg} "
            f"{'enabled' if self.enable else 'disabled'}{pfc}"
        )


@dataclass(frozen=True)
class PortState:
    """A port as the switch holds it; `up` is the operational (link) state."""

    speed: str
    fec: str
    autoneg: str
    lanes: int
    enable: bool
    up: bool
    pfc_map: int = 0

    def matches(self, w: PortWrite) -> bool:
        return (self.speed, self.fec, self.autoneg, self.lanes, self.enable, self.pfc_map) == (
            w.speed,
            w.fec,
            w.autoneg,
            w.lanes,
            w.enable,
            w.pfc_map,
        )


# The TM's counters (open-p4studio 1f97778f bf_rt_tm_tf1.json / tf2.json;
# every table "supported_operations": [], read and modified only):
# - tm.counter.queue (tf1 line 3077, tf2 3609; key pg_id, pg_queue):
#   drop_count_packets, usage_cells (read_only: the depth now) and
#   watermark_cells ("clear_only": written only with 0);
# - tm.counter.pool (tf1 3185, tf2 3717; key pool, the eight app pools):
#   usage_cells (read_only), watermark_cells (clear_only);
# - tm.counter.ppg (tf1 3790, tf2 4322; key ppg_counter_id, tm.ppg.cfg's):
#   drop_count_packets, the three usages, watermark_cells (clear_only).
# A clear is an entry_mod writing 0 to drop_count_packets and
# watermark_cells (bf_rt_tm_table_impl_counters.cpp
# BfRtTMCounterQueueTable::tableEntryMod_helper line 692: the drop count is
# set, a watermark of 0 clears it, any other value is BF_INVALID_ARG,
# lines 86-104); usage is the live depth and cannot be cleared.
TM_COUNTER_POOLS = (*PPG_POOLS, "EG_APP_POOL_0", "EG_APP_POOL_1", "EG_APP_POOL_2", "EG_APP_POOL_3")
ClearWhat = Literal["queues", "pfc", "all"]
PauseDirection = Literal["rx", "tx"]


@dataclass(frozen=True)
class BufferCounters:
    """One TM counter row: the depth now (usage), its high-water mark since
    the last clear (watermark) in cells, and packets dropped for want of
    buffer (None where the table has no drop count: pools)."""

    usage_cells: int
    watermark_cells: int
    drop_packets: int | None = None


Write = (
    EntryWrite
    | RegisterWrite
    | RegisterClear
    | MirrorSessionWrite
    | TmQueueWrite
    | TmShapingWrite
    | TmPfcWrite
    | TmPpgWrite
    | TmPoolWrite
    | PortWrite
)


@dataclass(frozen=True)
class EntryState:
    action: str
    data: dict[str, int]


class Switch(ABC):
    """A switch running one tofino-cc program."""

    # Whether a TM read returns the value as the hardware keeps it (PFC limits
    # and PPG hysteresis in 8-cell units) or as written. The SDE rounds only
    # on an ASIC: its reads go to the registers when TM_IS_TARGET_ASIC
    # (open-p4studio traffic_mgr/common/tm_ctx.h line 260; tm_ig_ppg.c
    # bf_tm_ppg_get_ppg_hyst line 296, tm_ig_pools.c line 352), and
    # tofino-model answers from the driver's copy of what was written.
    rounds_tm_reads: bool = True

    def __init__(self, program: str, profile: HwProfile) -> None:
        self.program = program
        self.profile = profile

    def holds(self, w: _Held) -> _Held:
        """`w` as a read of it returns after it is written, on this target."""
        if not self.rounds_tm_reads:
            return w
        held = as_hardware_holds(w)
        assert isinstance(held, type(w))
        return held

    @abstractmethod
    def connect(self) -> None:
        """(Re)establish the session; raise SwitchUnavailable if it cannot."""

    @abstractmethod
    def pipe_count(self) -> int:
        """The pipes this switch has (a board may have fewer than its chip:
        a 32 x 100G Tofino runs 2 of 4): programs that hand state from pipe
        to pipe must not send it to a pipe that is not there."""

    def close(self) -> None:  # noqa: B027 - optional for backends without sessions
        """Release the session."""

    @abstractmethod
    def write(self, writes: Sequence[Write]) -> None:
        """Apply every write or none (WriteError names the refused one)."""

    @abstractmethod
    def read_register(self, name: str, index: int) -> int: ...

    @abstractmethod
    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        """(packets, bytes)."""

    def read_register_pipes(self, name: str, index: int) -> list[int]:
        """The cell's value in every pipe, in pipe order. A backend that runs
        several pipes overrides this; one that does not holds one value."""
        return [self.read_register(name, index)]

    def read_registers(self, name: str, indices: Sequence[int]) -> list[int]:
        """Several cells of one register, in `indices`' order. A backend that
        can read many entries in one request overrides this: a control cycle
        reads every class's cells, and one round trip per cell would be the
        cycle's largest cost on a real switch."""
        return [self.read_register(name, i) for i in indices]

    def read_counters(self, name: str, indices: Sequence[int]) -> list[tuple[int, int]]:
        """(packets, bytes) of several cells of one counter, in `indices`' order."""
        return [self.read_counter(name, i) for i in indices]

    def read_registers_pipes(self, name: str, indices: Sequence[int]) -> list[list[int]]:
        """Every pipe's value of several cells, in `indices`' order: what a
        control cycle needs when the pipes' copies mean different things
        (PMQECN's per-pipe arrivals). A backend that reads many entries in one
        request overrides this, as read_registers."""
        return [self.read_register_pipes(name, i) for i in indices]

    @abstractmethod
    def read_entry(
        self, table: str, key: Mapping[str, Match], priority: int = 0
    ) -> EntryState | None:
        """The entry's action and data, or None when there is no such entry."""

    @abstractmethod
    def read_tm_weight(self, port: int, queue: int) -> int: ...

    @abstractmethod
    def read_tm_priority(self, port: int, queue: int) -> int: ...

    @abstractmethod
    def read_tm_shaping(self, port: int, queue: int | None = None) -> int | None:
        """The shaper's max rate in kb/s on the port (queue None) or queue;
        None when it is off."""

    def read_tm_pfc(self, port: int, queue: int) -> tuple[str, tuple[int, ...], int]:
        """(mode_tx, cos_to_icos) of the port's tm.port.flowcontrol and the
        queue's tm.queue.cfg pfc_cos."""
        raise NotImplementedError(f"{type(self).__name__} has no PFC tables")

    def read_tm_ppg(self, port: int, ppg_id: int) -> TmPpgWrite | None:
        """The PPG `ppg_id` of the port's pipe as the switch holds it (None:
        not allocated)."""
        raise NotImplementedError(f"{type(self).__name__} has no PPG table")

    def read_tm_pool(self, pool: str) -> TmPoolWrite:
        """The pool's size and its eight per-iCoS PFC limits (the latter
        only for an ingress application pool) as the switch holds them."""
        raise NotImplementedError(f"{type(self).__name__} has no pool tables")

    def read_port_rx_pause_us(self, port: int, cos: int) -> int:
        """Microseconds the link partner has held CoS `cos` of the port
        paused since power-on (`$PORT_STAT` `$ReceivePri<cos>Pause1USCount`)."""
        raise NotImplementedError(f"{type(self).__name__} has no pause counters")

    def read_port_pause_us(self, port: int, cos: int, direction: PauseDirection) -> int:
        """Microseconds CoS `cos` of the port was paused since the last clear:
        by the link partner (rx, `$ReceivePri<cos>Pause1USCount`) or by this
        switch's pauses to it (tx, `$TransmitPri<cos>Pause1USCount`)."""
        if direction == "rx":
            return self.read_port_rx_pause_us(port, cos)
        raise NotImplementedError(f"{type(self).__name__} has no transmit pause counters")

    def read_tm_queue_counters(self, port: int, queue: int) -> BufferCounters:
        """tm.counter.queue of the port's queue."""
        raise NotImplementedError(f"{type(self).__name__} has no TM queue counters")

    def read_tm_ppg_counters(self, port: int, ppg_id: int) -> BufferCounters:
        """tm.counter.ppg of the port's PPG (usage: the three usages summed)."""
        raise NotImplementedError(f"{type(self).__name__} has no TM PPG counters")

    def read_tm_pool_counters(self, pool: str) -> BufferCounters:
        """tm.counter.pool of an application pool."""
        raise NotImplementedError(f"{type(self).__name__} has no TM pool counters")

    def clear_tm_counters(
        self, what: ClearWhat, ports: Sequence[int], ppgs: Sequence[tuple[int, int]] = ()
    ) -> None:
        """Clear what the SDE lets a client clear: with `queues` (or `all`)
        every queue's drops and watermark on `ports`, the pools' and `ppgs`'
        watermarks and drops; with `pfc` (or `all`) the ports' sixteen pause
        counters. Depths (usage) are live and stay."""
        raise NotImplementedError(f"{type(self).__name__} cannot clear counters")

    @abstractmethod
    def read_port_tx_bytes(self, port: int) -> int:
        """Bytes the port has transmitted since power-on (BF-Runtime
        `$PORT_STAT` `$OctetsTransmittedTotal`)."""

    def read_port(self, dev_port: int) -> PortState | None:
        """The `$PORT` entry of a device port; None when the port is not added."""
        raise NotImplementedError(f"{type(self).__name__} has no port table")

    def read_mirror_session(self, sid: int) -> MirrorSessionWrite | None:
        """The `$mirror.cfg` session `sid` as the switch holds it; None when absent."""
        raise NotImplementedError(f"{type(self).__name__} does not read mirror sessions")

    def front_panel_port(self, name: str) -> int | None:
        """The device port the switch itself gives a front-panel name ("1/0");
        None on a backend without a port map of its own (the board file is
        then the map)."""
        return None

    @property
    def description(self) -> str:
        return f"{type(self).__name__}({self.program} on {self.profile.chip})"
