# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The model switch's TM buffer counters (tm.counter.queue, tm.counter.ppg,
tm.counter.pool as BF-Runtime reads them): what traffic leaves there, read
and cleared as on the fake and a switch."""

from __future__ import annotations

from collections.abc import Sequence

from hw_profiles import HwProfile
from models.switch.core import P4ModelError

from ..switch import TM_COUNTER_POOLS, BufferCounters, ClearWhat, TmPpgWrite


class ModelBufferCounters:
    """ModelSwitch's counter rows and their reads; it owns the dicts."""

    profile: HwProfile
    tm_queue_counters: dict[tuple[int, int], BufferCounters]
    tm_ppg_counters: dict[tuple[int, int], BufferCounters]
    tm_pool_counters: dict[str, BufferCounters]
    port_rx_pause_us: dict[tuple[int, int], int]
    port_tx_pause_us: dict[tuple[int, int], int]

    def read_tm_ppg(self, port: int, ppg_id: int) -> TmPpgWrite | None:
        raise NotImplementedError

    def congest(self, port: int, queue: int, usage_cells: int, drops: int = 0) -> BufferCounters:
        """What traffic does to a queue's tm.counter.queue row: the depth
        now, the watermark at least that, `drops` more packets dropped."""
        held = self.tm_queue_counters.get((port, queue), BufferCounters(0, 0, 0))
        now = BufferCounters(
            usage_cells,
            max(held.watermark_cells, usage_cells),
            (held.drop_packets or 0) + drops,
        )
        self.tm_queue_counters[(port, queue)] = now
        return now

    def read_tm_queue_counters(self, port: int, queue: int) -> BufferCounters:
        if isinstance(port, bool) or not 0 <= port <= self.profile.max_port:
            raise P4ModelError(f"tm.counter.queue: dev_port {port} invalid")
        if isinstance(queue, bool) or not 0 <= queue < self.profile.min_queues_per_port:
            raise P4ModelError(f"tm.counter.queue: dev_port {port} has no queue {queue}")
        return self.tm_queue_counters.get((port, queue), BufferCounters(0, 0, 0))

    def read_tm_ppg_counters(self, port: int, ppg_id: int) -> BufferCounters:
        if self.read_tm_ppg(port, ppg_id) is None:
            raise P4ModelError(f"tm.counter.ppg: no ppg {ppg_id} on dev_port {port}")
        return self.tm_ppg_counters.get((port, ppg_id), BufferCounters(0, 0, 0))

    def read_tm_pool_counters(self, pool: str) -> BufferCounters:
        if pool not in TM_COUNTER_POOLS:
            raise P4ModelError(f"tm.counter.pool: pool {pool!r} invalid")
        return self.tm_pool_counters.get(pool, BufferCounters(0, 0))

    def clear_tm_counters(
        self, what: ClearWhat, ports: Sequence[int], ppgs: Sequence[tuple[int, int]] = ()
    ) -> None:
        """As the SDE clears them (switch.clear_tm_counters): drops and
        watermarks to 0, the watermark back to the depth now."""
        if what in ("queues", "all"):
            for at, c in list(self.tm_queue_counters.items()):
                if at[0] in ports:
                    self.tm_queue_counters[at] = BufferCounters(c.usage_cells, c.usage_cells, 0)
            for at, c in list(self.tm_ppg_counters.items()):
                if at in ppgs:
                    self.tm_ppg_counters[at] = BufferCounters(c.usage_cells, c.usage_cells, 0)
            for pool, c in list(self.tm_pool_counters.items()):
                self.tm_pool_counters[pool] = BufferCounters(c.usage_cells, c.usage_cells)
        if what in ("pfc", "all"):
            for counts in (self.port_rx_pause_us, self.port_tx_pause_us):
                for at in [at for at in counts if at[0] in ports]:
                    counts[at] = 0
