# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The reference model behind the Switch interface: tofcc without an SDE."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from hw_profiles import HwProfile
from models import cycle_speedups, speedups
from models.switch.core import EntryRefused, Match, MirrorSession, P4ModelError
from models.switch.registry import make_model
from models.switch.tna import TnaProgram

from ..errors import WriteError
from ..ports import AN_CHOICES, FEC_CHOICES, SPEED_CHOICES, mode_refusal
from ..switch import (
    IDENTITY_COS_TO_ICOS,
    MAX_CELLS,
    MAX_DWRR_WEIGHT,
    MAX_PFC_COS,
    MAX_PPG_ID,
    MAX_PPGS_PER_PIPE,
    MAX_SHAPING_BURST_BYTES,
    MAX_SHAPING_KBPS,
    MAX_TM_PRIORITY,
    MIN_PFC_COS,
    MIN_PPG_ID,
    PFC_LEVELS,
    POOL_CFG_CHOICES,
    PPG_POOLS,
    BufferCounters,
    EntryState,
    EntryWrite,
    MirrorSessionWrite,
    PauseDirection,
    PortState,
    PortWrite,
    RegisterClear,
    RegisterWrite,
    Switch,
    TmPfcWrite,
    TmPoolWrite,
    TmPpgWrite,
    TmQueueWrite,
    TmShapingWrite,
    Write,
    as_hardware_holds,
    hw_pfc_limit_cells,
    hysteresis_profile_refusal,
)
from .model_buffer import ModelBufferCounters

# Every queue's DWRR weight at power-on: open-p4studio 1f97778f
# traffic_mgr/api/tm_api_sch.c line 64 ("Default: Queue scheduling weights
# set to 1023"), written by tm_tofino_default.c line 756 / tm_tof2_default.c line 928.
POWER_ON_DWRR_WEIGHT = 1023


class _TmSaved(NamedTuple):
    shaping: dict[tuple[int, int | None], tuple[int, int]]
    flowcontrol: dict[int, tuple[str, tuple[int, ...]]]
    pfc_cos: dict[tuple[int, int], int]
    ppgs: dict[tuple[int, int], TmPpgWrite]
    pools: dict[tuple[str, int | None], int]
    ports: dict[int, PortState]


class ModelSwitch(ModelBufferCounters, Switch):
    """The reference model as a switch. `pipes`: how many pipes it runs (1, 2
    or 4, as the chip and board have; models/switch/tna.py): registers and
    counters per pipe, read as BfrtSwitch reads them (a register summed over
    the pipes unless a pipe is named, read_register_pipes every pipe's value,
    counters summed) and written to every pipe."""

    def __init__(self, program: str, profile: HwProfile, pipes: int = 1) -> None:
        super().__init__(program, profile)
        self.model: TnaProgram = make_model(program, profile, pipes)
        self.tm_weights: dict[tuple[int, int], int] = {}
        self.tm_priorities: dict[tuple[int, int], int] = {}
        # Shaped ports (queue None) and queues: (max_rate_kbps, max_burst_bytes).
        self.tm_shaping: dict[tuple[int, int | None], tuple[int, int]] = {}
        # PFC: each port's (mode_tx, cos_to_icos) and each queue's pfc_cos, as
        # tm.port.flowcontrol and tm.queue.cfg hold them (absent: power-on,
        # "NONE", the identity map and CoS 0); microseconds each (port, CoS) was
        # held paused by the link partner ($PORT_STAT), counted by whoever
        # runs the packets.
        self.tm_flowcontrol: dict[int, tuple[str, tuple[int, ...]]] = {}
        self.tm_pfc_cos: dict[tuple[int, int], int] = {}
        self.port_rx_pause_us: dict[tuple[int, int], int] = {}
        # And the pauses this switch sent ($TransmitPri<cos>Pause1USCount).
        self.port_tx_pause_us: dict[tuple[int, int], int] = {}
        # The TM's counters (switch.BufferCounters; tm.counter.queue by (port,
        # queue), tm.counter.ppg by (port, ppg_id), tm.counter.pool by pool):
        # the model has no buffer, so whoever runs the packets sets them
        # (congest()), as it counts port_rx_pause_us.
        self.tm_queue_counters: dict[tuple[int, int], BufferCounters] = {}
        self.tm_ppg_counters: dict[tuple[int, int], BufferCounters] = {}
        self.tm_pool_counters: dict[str, BufferCounters] = {}
        # tm.ppg.cfg: allocated PPGs by (pipe, ppg_id).
        self.tm_ppgs: dict[tuple[int, int], TmPpgWrite] = {}
        # tm.pool.cfg sizes (pool, None) and tm.pool.app_pfc limits (pool,
        # icos), as written; absent: as powered on, which the model does not
        # know (read back as None and 0).
        self.tm_pools: dict[tuple[str, int | None], int] = {}
        # Bytes each port has sent: the model has no wire, so whoever runs the
        # packets (the ns-3 harness) counts them here.
        self.port_tx_bytes: dict[int, int] = {}
        # `$PORT`: ports added, as the switch holds them; a port's link comes up
        # when it is enabled (`link_down` holds it down, as an unplugged cable).
        self.ports: dict[int, PortState] = {}
        self.link_down: set[int] = set()
        self.restarts = 0

    def connect(self) -> None:
        """The model is always there."""

    def restart(self) -> None:
        """What a switch reboot does: every table, register and session is gone."""
        self.model.reset()
        self.tm_weights.clear()
        self.tm_priorities.clear()
        self.tm_shaping.clear()
        self.tm_flowcontrol.clear()
        self.tm_pfc_cos.clear()
        self.tm_ppgs.clear()
        self.tm_pools.clear()
        self.port_tx_bytes.clear()
        self.port_rx_pause_us.clear()
        self.port_tx_pause_us.clear()
        self.tm_queue_counters.clear()
        self.tm_ppg_counters.clear()
        self.tm_pool_counters.clear()
        self.ports.clear()
        self.restarts += 1

    def _apply(self, w: Write) -> None:
        m = self.model
        if isinstance(w, EntryWrite):
            table = m.table(w.table)
            if w.op == "default":
                table.set_default(w.action or "", dict(w.data))
            elif w.op == "delete":
                table.delete(dict(w.key), w.priority)
            elif w.op == "insert":
                table.add(dict(w.key), w.action or "", dict(w.data), w.priority)
            elif w.op == "modify":
                table.modify(dict(w.key), w.action or "", dict(w.data), w.priority)
            else:
                # The table copies what it keeps (a push is thousands of these).
                table.add_or_modify(w.key, w.action or "", w.data, w.priority)
        elif isinstance(w, RegisterWrite):
            m.register(w.register).write_all(w.index, w.value)
        elif isinstance(w, RegisterClear):
            m.register(w.register).clear()
        elif isinstance(w, MirrorSessionWrite):
            if w.delete:
                m.mirror_session_delete(w.sid)
            else:
                m.mirror_session_add(
                    MirrorSession(
                        w.sid,
                        w.port,
                        direction=w.direction,
                        max_pkt_len=w.max_pkt_len,
                        queue=w.queue,
                        icos=w.icos,
                    )
                )
        elif isinstance(w, PortWrite):
            self._apply_port(w)
        elif isinstance(w, TmQueueWrite):
            if not 0 <= w.port <= self.profile.max_port:
                raise P4ModelError(f"tm.queue.sched_cfg: port {w.port} invalid")
            if not 0 <= w.queue <= self.profile.max_queue_id:
                raise P4ModelError(f"tm.queue.sched_cfg: queue {w.queue} invalid")
            if not w.fields():
                raise P4ModelError("tm.queue.sched_cfg: the write sets no field")
            if w.dwrr_weight is not None:
                if not 1 <= w.dwrr_weight <= MAX_DWRR_WEIGHT:
                    raise P4ModelError(f"tm.queue.sched_cfg: dwrr_weight {w.dwrr_weight} invalid")
                self.tm_weights[(w.port, w.queue)] = w.dwrr_weight
            if w.max_priority is not None:
                if not 0 <= w.max_priority <= MAX_TM_PRIORITY:
                    raise P4ModelError(f"tm.queue.sched_cfg: max_priority {w.max_priority} invalid")
                self.tm_priorities[(w.port, w.queue)] = w.max_priority
        elif isinstance(w, TmShapingWrite):
            check_shaping(w, self.profile.max_port, self.profile.max_queue_id)
            if w.max_rate_kbps is None:
                self.tm_shaping.pop((w.port, w.queue), None)
            else:
                self.tm_shaping[(w.port, w.queue)] = (w.max_rate_kbps, w.max_burst_bytes)
        elif isinstance(w, TmPpgWrite):
            self._apply_ppg(w)
        elif isinstance(w, TmPoolWrite):
            check_pool(w, self.profile.buffer_cells)
            if w.size_cells is not None:
                self.tm_pools[(w.pool, None)] = w.size_cells
            # The TM keeps PFC limits in 8-cell units (switch.as_hardware_holds).
            for icos, cells in w.pfc_limit_cells:
                self.tm_pools[(w.pool, icos)] = hw_pfc_limit_cells(cells)
        elif isinstance(w, TmPfcWrite):
            check_pfc(w, self.profile.max_port, self.profile.min_queues_per_port - 1)
            self.tm_flowcontrol[w.port] = (w.mode_tx, w.cos_to_icos)
            for q in w.queues:
                self.tm_pfc_cos[(w.port, q)] = w.pfc_cos

    def _apply_ppg(self, w: TmPpgWrite) -> None:
        """tm.ppg.cfg as the SDE keeps it: PPGs allocated per pipe, at most
        128 a pipe, each for one port; an iCoS in one PPG of a port."""
        check_ppg(w, self.profile.max_port)
        slot = (w.port >> 7, w.ppg_id)
        held = self.tm_ppgs.get(slot)
        if w.delete:
            if held is None:
                raise P4ModelError(f"tm.ppg.cfg: no ppg {w.ppg_id} in pipe {slot[0]}")
            del self.tm_ppgs[slot]
            return
        if held is not None and held.port != w.port:
            raise P4ModelError(f"tm.ppg.cfg: ppg {w.ppg_id} belongs to dev_port {held.port}")
        if held is None and sum(1 for p, _ in self.tm_ppgs if p == slot[0]) >= MAX_PPGS_PER_PIPE:
            raise P4ModelError(f"tm.ppg.cfg: pipe {slot[0]} has {MAX_PPGS_PER_PIPE} PPGs already")
        for other_slot, other in self.tm_ppgs.items():
            if other_slot != slot and other.port == w.port and set(other.icos) & set(w.icos):
                raise P4ModelError(
                    f"tm.ppg.cfg: dev_port {w.port} icos already in ppg {other.ppg_id}"
                )
        others = [p for (pipe, i), p in self.tm_ppgs.items() if pipe == slot[0] and i != w.ppg_id]
        refused = hysteresis_profile_refusal(others, w)
        if refused is not None:
            raise P4ModelError(f"tm.ppg.cfg: {refused}")
        # Kept as the TM keeps it: hysteresis in 8-cell units (switch.as_hardware_holds).
        held_now = as_hardware_holds(w)
        assert isinstance(held_now, TmPpgWrite)
        self.tm_ppgs[slot] = held_now

    def read_tm_pool(self, pool: str) -> TmPoolWrite:
        if pool not in POOL_CFG_CHOICES:
            raise P4ModelError(f"tm.pool.cfg: pool {pool!r} invalid")
        limits = (
            tuple((c, self.tm_pools.get((pool, c), 0)) for c in range(PFC_LEVELS))
            if pool in PPG_POOLS
            else ()
        )
        return TmPoolWrite(pool, self.tm_pools.get((pool, None)), limits)

    def read_tm_ppg(self, port: int, ppg_id: int) -> TmPpgWrite | None:
        if isinstance(port, bool) or not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"tm.ppg.cfg: dev_port {port} invalid")
        held = self.tm_ppgs.get((port >> 7, ppg_id))
        return held if held is not None and held.port == port else None

    def _apply_port(self, w: PortWrite) -> None:
        """What the `$PORT` table refuses, the model refuses (ports.py)."""
        if w.delete:
            # bf_pm_port_delete: deleting a port that is not added succeeds.
            self.ports.pop(w.dev_port, None)
            return
        for name, value, choices in (
            ("$SPEED", w.speed, SPEED_CHOICES),
            ("$FEC", w.fec, FEC_CHOICES),
            ("$AUTO_NEGOTIATION", w.autoneg, AN_CHOICES),
        ):
            if value not in choices:
                raise P4ModelError(f"$PORT: {name} {value!r} is not one of {', '.join(choices)}")
        refused = mode_refusal(self.profile, w.dev_port, w.speed, w.lanes, w.fec)
        if refused is not None:
            raise P4ModelError(f"$PORT {w.dev_port}: {refused[1]}")
        up = w.enable and w.dev_port not in self.link_down
        held = self.ports.get(w.dev_port)
        if self.profile.chip == "tofino2" and w.pfc_map not in (0, 0xFF):
            # bf_port_flow_control_pfc_set refuses it and the server only logs
            # that: the port keeps the maps it had, and BfrtSwitch, reading the
            # port back after the write, refuses the batch. So does the model.
            kept = held.pfc_map if held is not None else 0
            raise P4ModelError(
                f"$PORT {w.dev_port}: the switch reported the write done but reads back "
                f"PFC map 0x{kept:02x} (a sub-call failed; the port manager only logs it)"
            )
        if held is None:
            self._port_added(w.dev_port)
        # A port the switch had and replaces (a mode change) gets its TM
        # settings back from BfrtSwitch (backends/bfrt/ports.py): unchanged here.
        self.ports[w.dev_port] = PortState(
            w.speed, w.fec, w.autoneg, w.lanes, w.enable, up, w.pfc_map
        )

    def _port_added(self, dev_port: int) -> None:
        """What a port add does to the TM (backends/bfrt/tm.py
        PORT_ADD_RESETS): PFC generation off; shapers left on run at the
        port's rate, which shapes nothing."""
        self.tm_flowcontrol.pop(dev_port, None)
        for at in [at for at in self.tm_shaping if at[0] == dev_port]:
            del self.tm_shaping[at]

    def read_port(self, dev_port: int) -> PortState | None:
        return self.ports.get(dev_port)

    def read_mirror_session(self, sid: int) -> MirrorSessionWrite | None:
        s = self.model.mirror_sessions.get(sid)
        if s is None:
            return None
        return MirrorSessionWrite(
            sid, s.egress_port, s.max_pkt_len, s.direction, queue=s.queue, icos=s.icos
        )

    def write(self, writes: Sequence[Write]) -> None:
        if not speedups.ENABLED:
            self._write_reference(writes)
            return
        # An undo log of what each write is about to change, instead of a copy
        # of the whole switch per batch: a controller cycle writes a few
        # entries of a switch holding thousands of register cells.
        undo: list[Callable[[], None]] = []
        saved_tables: set[str] = set()
        weights, priorities = dict(self.tm_weights), dict(self.tm_priorities)
        tm = self._tm_saved()
        cells = cycle_speedups.ENABLED
        i = 0
        while i < len(writes):
            w = writes[i]
            try:
                if type(w) is EntryWrite and w.op == "upsert":
                    i = _upsert_run(self.model, writes, i, undo, saved_tables)
                    continue
                if cells and type(w) is RegisterWrite:
                    # A cycle clears a thousand cells: the cell's undo and
                    # its write without the generic dispatch of each.
                    register = self.model.register(w.register)
                    old = register.read_pipes(w.index)
                    register.write_all(w.index, w.value)
                    undo.append(functools.partial(register.put_pipes, w.index, old))
                else:
                    remember(self.model, w, undo, saved_tables)
                    self._apply(w)
            except P4ModelError as exc:
                if isinstance(exc, EntryRefused):
                    i, w = exc.index, writes[exc.index]
                for step in reversed(undo):
                    step()
                # In place: the simulated pipeline holds these dicts.
                self.tm_weights.clear()
                self.tm_weights.update(weights)
                self.tm_priorities.clear()
                self.tm_priorities.update(priorities)
                self._tm_restore(tm)
                raise WriteError(i, w.describe(), str(exc)) from None
            i += 1

    def _write_reference(self, writes: Sequence[Write]) -> None:
        """The original rollback: a deep copy of the whole switch per batch."""
        saved = (self.model.snapshot(), dict(self.tm_weights), dict(self.tm_priorities))
        tm = self._tm_saved()
        for i, w in enumerate(writes):
            try:
                self._apply(w)
            except P4ModelError as exc:
                self.model.restore(saved[0])
                self.tm_weights, self.tm_priorities = saved[1], saved[2]
                self._tm_restore(tm)
                raise WriteError(i, w.describe(), str(exc)) from None

    def _tm_saved(self) -> _TmSaved:
        """What both rollbacks restore besides the P4 state and the queue
        weights: the TM's shaping, PFC and pools, and the ports."""
        return _TmSaved(
            dict(self.tm_shaping),
            dict(self.tm_flowcontrol),
            dict(self.tm_pfc_cos),
            dict(self.tm_ppgs),
            dict(self.tm_pools),
            dict(self.ports),
        )

    def _tm_restore(self, saved: _TmSaved) -> None:
        # In place: the simulated pipeline holds this dict.
        self.tm_shaping.clear()
        self.tm_shaping.update(saved.shaping)
        self.tm_flowcontrol, self.tm_pfc_cos = saved.flowcontrol, saved.pfc_cos
        self.tm_ppgs, self.tm_pools, self.ports = saved.ppgs, saved.pools, saved.ports

    def pipe_count(self) -> int:
        return self.model.pipes

    def read_register_pipes(self, name: str, index: int) -> list[int]:
        """The cell's value in every pipe, in pipe order."""
        return self.model.register(name).read_pipes(index)

    def read_register(self, name: str, index: int, pipe: int | None = None) -> int:
        """The sum over the pipes, or `pipe`'s value (BfrtSwitch.read_register)."""
        register = self.model.register(name)
        if pipe is not None:
            return register.read_pipe(pipe, index)
        if register.pipes == 1:
            return register.read(index)
        return sum(register.read_pipes(index))

    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        return self.model.counter(name).read(index)

    def read_registers(self, name: str, indices: Sequence[int]) -> list[int]:
        # One lookup of the register for all cells; each index is still checked.
        register = self.model.register(name)
        if register.pipes == 1:
            return [register.read(i) for i in indices]
        return [sum(register.read_pipes(i)) for i in indices]

    def read_counters(self, name: str, indices: Sequence[int]) -> list[tuple[int, int]]:
        counter = self.model.counter(name)
        return [counter.read(i) for i in indices]

    def read_entry(
        self, table: str, key: Mapping[str, Match], priority: int = 0
    ) -> EntryState | None:
        t = self.model.table(table)
        nkey = t._normalise_key(dict(key))
        for e in t.entries:
            if e.key == nkey and (not t.needs_priority or e.priority == priority):
                return EntryState(e.action, dict(e.data))
        return None

    def read_tm_weight(self, port: int, queue: int) -> int:
        return self.tm_weights.get((port, queue), POWER_ON_DWRR_WEIGHT)

    def read_tm_priority(self, port: int, queue: int) -> int:
        return self.tm_priorities.get((port, queue), 0)

    def read_tm_shaping(self, port: int, queue: int | None = None) -> int | None:
        got = self.tm_shaping.get((port, queue))
        return None if got is None else got[0]

    def read_port_tx_bytes(self, port: int) -> int:
        if isinstance(port, bool) or not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"$PORT_STAT: $DEV_PORT {port} invalid")
        return self.port_tx_bytes.get(port, 0)

    def read_tm_pfc(self, port: int, queue: int) -> tuple[str, tuple[int, ...], int]:
        if isinstance(port, bool) or not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"tm.port.flowcontrol: dev_port {port} invalid")
        if isinstance(queue, bool) or not 0 <= queue < self.profile.min_queues_per_port:
            raise P4ModelError(f"tm.queue.cfg: dev_port {port} has no queue {queue}")
        tx, cos_to_icos = self.tm_flowcontrol.get(port, ("NONE", IDENTITY_COS_TO_ICOS))
        return tx, cos_to_icos, self.tm_pfc_cos.get((port, queue), 0)

    def read_port_rx_pause_us(self, port: int, cos: int) -> int:
        if isinstance(port, bool) or not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"$PORT_STAT: $DEV_PORT {port} invalid")
        if isinstance(cos, bool) or not 0 <= cos <= MAX_PFC_COS:
            raise P4ModelError(f"$PORT_STAT: no $ReceivePri{cos}Pause1USCount")
        return self.port_rx_pause_us.get((port, cos), 0)

    def read_port_pause_us(self, port: int, cos: int, direction: PauseDirection) -> int:
        if direction == "rx":
            return self.read_port_rx_pause_us(port, cos)
        if isinstance(port, bool) or not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"$PORT_STAT: $DEV_PORT {port} invalid")
        if isinstance(cos, bool) or not 0 <= cos <= MAX_PFC_COS:
            raise P4ModelError(f"$PORT_STAT: no $TransmitPri{cos}Pause1USCount")
        return self.port_tx_pause_us.get((port, cos), 0)


def check_shaping(w: TmShapingWrite, max_port: int, max_queue_id: int) -> None:
    """What the SDE's shaping tables refuse (both backends check the same):
    a port or queue the chip lacks, a rate or burst outside uint32. A rate of
    0 kb/s is refused here (the SDE does not say it refuses it; a shaper
    that stops the port is never what BFCC means)."""
    table = "tm.port.sched_shaping" if w.queue is None else "tm.queue.sched_shaping"
    if isinstance(w.port, bool) or not 0 <= w.port <= max_port:
        raise P4ModelError(f"{table}: port {w.port} invalid")
    if w.queue is not None and (isinstance(w.queue, bool) or not 0 <= w.queue <= max_queue_id):
        raise P4ModelError(f"{table}: queue {w.queue} invalid")
    if w.max_rate_kbps is not None and (
        isinstance(w.max_rate_kbps, bool) or not 1 <= w.max_rate_kbps <= MAX_SHAPING_KBPS
    ):
        raise P4ModelError(f"{table}: max_rate {w.max_rate_kbps} kb/s invalid")
    if isinstance(w.max_burst_bytes, bool) or not 1 <= w.max_burst_bytes <= MAX_SHAPING_BURST_BYTES:
        raise P4ModelError(f"{table}: max_burst_size {w.max_burst_bytes} invalid")


def check_pfc(w: TmPfcWrite, max_port: int, max_queue: int) -> None:
    """What the SDE's PFC tables refuse (both backends check the same): a
    port the chip lacks, a queue the port lacks (tm.port.cfg), a CoS outside
    the 802.1Qbb priorities. A lossless CoS of 0 is refused here: every
    ordinary queue honours CoS 0 (tm.queue.cfg pfc_cos power-on 0,
    tm_api_queue.c line 678), so its pauses would stop them all; and the CoS
    the queues move to while ignoring pauses must not be the lossless one."""
    if isinstance(w.port, bool) or not 0 <= w.port <= max_port:
        raise P4ModelError(f"tm.port.flowcontrol: dev_port {w.port} invalid")
    if isinstance(w.cos, bool) or not MIN_PFC_COS <= w.cos <= MAX_PFC_COS:
        raise P4ModelError(
            f"tm.queue.cfg: pfc_cos {w.cos} invalid "
            f"(a lossless CoS is {MIN_PFC_COS}..{MAX_PFC_COS})"
        )
    if isinstance(w.ignore_cos, bool) or not 0 <= w.ignore_cos <= MAX_PFC_COS:
        raise P4ModelError(f"tm.queue.cfg: pfc_cos {w.ignore_cos} (ignore_cos) invalid")
    if w.ignore_cos == w.cos:
        raise P4ModelError(
            f"tm.queue.cfg: ignore_cos {w.ignore_cos} is the lossless CoS: "
            "the queues would still obey its pauses"
        )
    for q in w.queues:
        if isinstance(q, bool) or not 0 <= q <= max_queue:
            raise P4ModelError(f"tm.queue.cfg: dev_port {w.port} has no queue {q}")
    if len(set(w.queues)) != len(w.queues):
        raise P4ModelError(f"tm.queue.cfg: dev_port {w.port}: a queue is named twice")


def check_pool(w: TmPoolWrite, buffer_cells: int) -> None:
    """What tm.pool.cfg and tm.pool.app_pfc refuse (both backends check
    the same): a pool outside the JSON's choices; more cells than the
    chip's buffer (traffic_mgr TM_IS_THRES_INVALID: cells > total_cells);
    a PFC limit on an egress or special pool (bf_tm_pool_pfc_limit_set:
    BF_INVALID_ARG for the egress direction, app_pfc's key lists the four
    ingress pools) or for an iCoS outside 0..7; a write that sets nothing."""
    if w.pool not in POOL_CFG_CHOICES:
        choices = ", ".join(POOL_CFG_CHOICES)
        raise P4ModelError(f"tm.pool.cfg: pool {w.pool!r} is not one of {choices}")
    if w.size_cells is None and not w.pfc_limit_cells:
        raise P4ModelError(f"tm.pool.cfg: the write to {w.pool} sets nothing")
    if w.size_cells is not None and (
        isinstance(w.size_cells, bool) or not 0 <= w.size_cells <= buffer_cells
    ):
        raise P4ModelError(
            f"tm.pool.cfg: size_cells {w.size_cells} of {w.pool} invalid "
            f"(0..{buffer_cells}, the buffer)"
        )
    if w.pfc_limit_cells and w.pool not in PPG_POOLS:
        raise P4ModelError(
            f"tm.pool.app_pfc: pool {w.pool!r} has no PFC limits (only {', '.join(PPG_POOLS)})"
        )
    seen: set[int] = set()
    for icos, cells in w.pfc_limit_cells:
        if isinstance(icos, bool) or not 0 <= icos < PFC_LEVELS:
            raise P4ModelError(f"tm.pool.app_pfc: cos {icos} invalid (0..{PFC_LEVELS - 1})")
        if icos in seen:
            raise P4ModelError(f"tm.pool.app_pfc: cos {icos} of {w.pool} named twice")
        seen.add(icos)
        if isinstance(cells, bool) or not 0 <= cells <= buffer_cells:
            raise P4ModelError(
                f"tm.pool.app_pfc: pfc_limit_cells {cells} invalid (0..{buffer_cells}, the buffer)"
            )


def check_ppg(w: TmPpgWrite, max_port: int) -> None:
    """What tm.ppg.cfg refuses (both backends check the same): a ppg_id
    outside 1..255, a port the chip lacks, an iCoS outside 0..7 or named
    twice, cells beyond uint32, a pool outside the JSON's choices, xon
    above xoff (hysteresis_cells would be negative), a PPG for no iCoS."""
    t = "tm.ppg.cfg"
    if isinstance(w.ppg_id, bool) or not MIN_PPG_ID <= w.ppg_id <= MAX_PPG_ID:
        raise P4ModelError(f"{t}: ppg_id {w.ppg_id} invalid ({MIN_PPG_ID}..{MAX_PPG_ID})")
    if isinstance(w.port, bool) or not 0 <= w.port <= max_port:
        raise P4ModelError(f"{t}: dev_port {w.port} invalid")
    if w.delete:
        return
    if not w.icos:
        raise P4ModelError(f"{t}: ppg {w.ppg_id} names no icos")
    for c in w.icos:
        if isinstance(c, bool) or not 0 <= c <= 7:
            raise P4ModelError(f"{t}: icos_{c} invalid (0..7)")
    if len(set(w.icos)) != len(w.icos):
        raise P4ModelError(f"{t}: ppg {w.ppg_id} names an icos twice")
    for name in ("xoff_cells", "xon_cells", "headroom_cells"):
        v = getattr(w, name)
        if isinstance(v, bool) or not 0 <= v <= MAX_CELLS:
            raise P4ModelError(f"{t}: {name} {v} invalid")
    if w.xon_cells > w.xoff_cells:
        raise P4ModelError(f"{t}: xon_cells {w.xon_cells} above xoff_cells {w.xoff_cells}")
    if w.pool not in PPG_POOLS:
        raise P4ModelError(f"{t}: pool_id {w.pool!r} is not one of {', '.join(PPG_POOLS)}")


def _upsert_run(
    m: TnaProgram,
    writes: Sequence[Write],
    start: int,
    undo: list[Callable[[], None]],
    saved_tables: set[str],
) -> int:
    """Write the upserts into one table in a row from `start` (a push is
    thousands) as one call, the table saved once as for one; the index
    after them. A refusal's EntryRefused names its index in `writes`."""
    table = writes[start].table  # type: ignore[union-attr]
    end = start + 1
    while end < len(writes) and _same_upserts(writes[end], table):
        end += 1
    remember(m, writes[start], undo, saved_tables)
    try:
        m.table(table).upsert_many(writes[start:end])  # type: ignore[arg-type]
    except EntryRefused as exc:
        exc.index += start
        raise
    return end


def _same_upserts(w: Write, table: str) -> bool:
    return type(w) is EntryWrite and w.op == "upsert" and w.table == table


def remember(
    m: TnaProgram, w: Write, undo: list[Callable[[], None]], saved_tables: set[str]
) -> None:
    """Append to `undo` how to put back what `w` may change."""
    if isinstance(w, EntryWrite):
        if w.table in saved_tables:
            return
        table = m.table(w.table)
        # Entries are replaced, never changed in place, so a shallow copy
        # of the list and the default is the table's whole state.
        entries, default = list(table.entries), table.default

        def put_table_back() -> None:
            table.entries, table.default = entries, default

        undo.append(put_table_back)
        saved_tables.add(w.table)
    elif isinstance(w, RegisterWrite):
        register = m.register(w.register)
        try:
            old = register.read_pipes(w.index)
        except P4ModelError:
            return  # the write is refused before it changes anything
        index = w.index

        def put_cell_back() -> None:
            register.put_pipes(index, old)

        undo.append(put_cell_back)
    elif isinstance(w, RegisterClear):
        try:
            cleared = m.register(w.register)
        except P4ModelError:
            return
        undo.append(functools.partial(cleared.restore_copies, cleared.copies()))
    elif isinstance(w, MirrorSessionWrite):
        sessions = m.mirror_sessions
        sid, before = w.sid, sessions.get(w.sid)

        def put_session_back() -> None:
            if before is None:
                sessions.pop(sid, None)
            else:
                sessions[sid] = before

        undo.append(put_session_back)
