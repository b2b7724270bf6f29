# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The AQM family's per-mechanism controls (tna/aqm/README.md, "The AQM
family"): RED, CoDel, the PI shared by PIE and DualPI2, and DA-DCTCP's
slope. Each class is one P4 control instantiated in SwitchEgress under the
name its `path` gives, holding that mechanism's registers and tables; the
decisions that need no state (DCTCP's step, the draws) are
`models/switch/aqm.py`'s.

Read it beside the P4: same tables, registers (widths), register actions
(one per register per packet) and order of decisions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .aqm_types import (
    AQM_CODEL_DUE_ENTRIES,
    AQM_PI_TERMS_ENTRIES,
    AQM_RED_LEVEL_ENTRIES,
    AQM_SLOTS,
    SIGN_32,
    U16_MASK,
    not_before,
)
from .common import U32_MASK
from .core import Action, KeyField, P4Objects, Register, Table
from .dadctcp import at_or_above, average_slope
from .headers import QueueMd

# p in 32 bits: 2^32 - 1 is probability 1.
PI_PROB_ONE = U32_MASK
# The drop level (0..32767, against the 15-bit random value) is p >> 17;
# DualPI2's coupled L4S level k p' (k = 2) is p >> 16.
PI_LEVEL_SHIFT = 17
PI_COUPLED_SHIFT = 16


@dataclass
class EgMd:
    """`struct eg_md_t` (tna/aqm/types.p4): the shared fields, then each
    mechanism's."""

    queue: QueueMd = field(default_factory=QueueMd)
    deq_depth_cells: int = 0  # the depth as the packet leaves (DCTCP, DA-DCTCP)
    random: int = 0  # 0..32767
    random2: int = 0  # DualPI2's second draw
    mode: int = 0
    slot: int = 0
    curve: int = 0
    ecn: int = 0
    hard: int = 0
    chosen: int = 0  # the mechanism's verdict: mark or drop this packet
    # RED
    block_last: int = 0
    block_limit: int = 0
    block_end: int = 0
    block_sum_cells: int = 0
    avg_sum_cells: int = 0
    level: int = 0
    random_margin: int = 0
    # CoDel
    target_ns: int = 0
    target_margin_ns: int = 0
    interval_ticks: int = 0
    tail_step_ticks: int = 0
    sojourn_ticks: int = 0
    deq_ticks: int = 0
    deadline_base_ticks: int = 0
    deadline_ticks: int = 0
    tail_base_ticks: int = 0
    tail_next_ticks: int = 0
    ok_to_drop: int = 0
    elapsed_ticks: int = 0
    due_count: int = 0
    tail: int = 0
    codel_drop: int = 0
    # PI (PIE, DualPI2)
    minus_t_update_ticks: int = 0
    due_before_ticks: int = 0
    pi_term: int = 0  # T(d) = (alpha + beta) d - alpha target, x 2^32
    pi_beta: int = 0  # B(d) = beta d, x 2^32
    tick: int = 0
    old_beta: int = 0
    delta: int = 0
    minus_delta: int = 0
    prob: int = 0
    mark_max_level: int = 0
    # DualPI2's L queue, DCTCP, DA-DCTCP
    step_ns: int = 0
    k1_cells: int = 0
    k2_cells: int = 0
    prev_depth_cells: int = 0
    slope_cells: int = 0
    prev_slope_cells: int = 0
    avg_slope: int = 0


class Red:
    """control AqmRed: the block-mean average and the drop curve (aqm.p4's
    RED, unchanged)."""

    def __init__(self, p4: P4Objects, path: str) -> None:
        self.red_block_packets = p4.register(Register(f"{path}.red_block_packets", 32, AQM_SLOTS))
        self.red_block_sum_cells = p4.register(
            Register(f"{path}.red_block_sum_cells", 32, AQM_SLOTS)
        )
        self.red_avg_sum_cells = p4.register(Register(f"{path}.red_avg_sum_cells", 32, AQM_SLOTS))
        self.set_level = Action(f"{path}.set_level", (("level", 16), ("hard", 1)))
        self.no_drop = Action(f"{path}.no_drop")
        self.red_level = p4.table(
            Table(
                f"{path}.red_level",
                [
                    KeyField("eg_md.curve", 8, "exact"),
                    KeyField("eg_md.avg_sum_cells", 32, "ternary"),
                ],
                [self.set_level, self.no_drop],
                (self.no_drop.name, {}),
                size=AQM_RED_LEVEL_ENTRIES,
            )
        )

    @staticmethod
    def block_limit(md: EgMd) -> int:
        """A packet that finds the queue empty closes the block early."""
        return 0 if md.queue.depth_cells == 0 else md.block_last

    def apply(self, md: EgMd) -> None:
        slot = md.slot
        md.block_limit = self.block_limit(md)
        n = self.red_block_packets.read(slot)
        if n >= md.block_limit:
            self.red_block_packets.write(slot, 0)
            md.block_end = 1
        else:
            self.red_block_packets.write(slot, (n + 1) & U32_MASK)
            md.block_end = 0
        s = self.red_block_sum_cells.read(slot)
        if md.block_end == 1:
            md.block_sum_cells = (s + md.queue.depth_cells) & U32_MASK
            self.red_block_sum_cells.write(slot, 0)
            self.red_avg_sum_cells.write(slot, md.block_sum_cells)
            md.avg_sum_cells = md.block_sum_cells
        else:
            self.red_block_sum_cells.write(slot, (s + md.queue.depth_cells) & U32_MASK)
            md.avg_sum_cells = self.red_avg_sum_cells.read(slot)
        r = self.red_level.lookup(
            {"eg_md.curve": md.curve, "eg_md.avg_sum_cells": md.avg_sum_cells}
        )
        if r.action == self.set_level.name:
            md.level = r.data["level"]
            md.hard = r.data["hard"]
        md.random_margin = (md.random - md.level) & U16_MASK
        md.chosen = md.random_margin >> 15


class Codel:
    """control AqmCodel: RFC 8289's dropping state, the control law summed
    (aqm.p4's CoDel, unchanged)."""

    def __init__(self, p4: P4Objects, path: str) -> None:
        def reg(name: str) -> Register:
            return p4.register(Register(f"{path}.{name}", 32, AQM_SLOTS))

        self.codel_first_above_ticks = reg("codel_first_above_ticks")
        self.codel_drop_start_ticks = reg("codel_drop_start_ticks")
        self.codel_count = reg("codel_count")
        self.codel_tail_next_ticks = reg("codel_tail_next_ticks")
        self.set_due = Action(f"{path}.set_due", (("due_count", 32), ("tail", 1)))
        self.no_due = Action(f"{path}.no_due")
        self.codel_due = p4.table(
            Table(
                f"{path}.codel_due",
                [
                    KeyField("eg_md.curve", 8, "exact"),
                    KeyField("eg_md.elapsed_ticks", 32, "ternary"),
                ],
                [self.set_due, self.no_due],
                (self.no_due.name, {}),
                size=AQM_CODEL_DUE_ENTRIES,
            )
        )

    def apply(self, md: EgMd, now_ticks: int) -> None:
        slot = md.slot
        md.deq_ticks = (now_ticks + md.sojourn_ticks) & U32_MASK
        md.deadline_ticks = (md.deadline_base_ticks + md.sojourn_ticks) & U32_MASK
        md.tail_next_ticks = (md.tail_base_ticks + md.sojourn_ticks) & U32_MASK
        if md.target_margin_ns >> 31 == 1:
            self.codel_first_above_ticks.write(slot, 0)
            md.ok_to_drop = 0
        else:
            first_above = self.codel_first_above_ticks.read(slot)
            if first_above == 0:
                self.codel_first_above_ticks.write(slot, md.deadline_ticks)
                md.ok_to_drop = 0
            else:
                md.ok_to_drop = int(not_before(md.deq_ticks, first_above))
        if md.ok_to_drop == 0:
            self.codel_drop_start_ticks.write(slot, 0)
            self.codel_count.write(slot, 0)
            self.codel_tail_next_ticks.write(slot, 0)
            return
        start = self.codel_drop_start_ticks.read(slot)
        if start == 0:
            self.codel_drop_start_ticks.write(slot, md.deq_ticks)
            md.elapsed_ticks = 0
        else:
            md.elapsed_ticks = (md.deq_ticks - start) & U32_MASK
        r = self.codel_due.lookup(
            {"eg_md.curve": md.curve, "eg_md.elapsed_ticks": md.elapsed_ticks}
        )
        if r.action == self.set_due.name:
            md.due_count = r.data["due_count"]
            md.tail = r.data["tail"]
        if md.tail == 1:
            nxt = self.codel_tail_next_ticks.read(slot)
            md.codel_drop = int(nxt == 0 or not_before(md.deq_ticks, nxt))
            if md.codel_drop:
                self.codel_tail_next_ticks.write(slot, md.tail_next_ticks)
        else:
            count = self.codel_count.read(slot)
            md.codel_drop = int(count < md.due_count)
            if md.codel_drop:
                self.codel_count.write(slot, (count + 1) & U32_MASK)
        md.chosen = md.codel_drop


class Pi:
    """control AqmPi: RFC 8033's PI step, shared by PIE and DualPI2 (whose
    base PI is the same step without PIE's auto-tuning).

    p += T(d) - B(d_old), T(d) = (alpha + beta) d - alpha target and
    B(d) = beta d tabled by the controller in steps of the sojourn
    (bfrt_controller/aqm/pi.py); `pi_old_beta` keeps B of the last step."""

    def __init__(self, p4: P4Objects, path: str) -> None:
        def reg(name: str) -> Register:
            return p4.register(Register(f"{path}.{name}", 32, AQM_SLOTS))

        self.pi_last_update_ticks = reg("pi_last_update_ticks")
        self.pi_old_beta = reg("pi_old_beta")
        self.pi_prob = reg("pi_prob")
        self.set_pi_terms = Action(f"{path}.set_pi_terms", (("term", 32), ("beta_term", 32)))
        self.pi_terms = p4.table(
            Table(
                f"{path}.pi_terms",
                [
                    KeyField("eg_md.curve", 8, "exact"),
                    KeyField("eg_md.queue.sojourn_ns", 32, "ternary"),
                ],
                [self.set_pi_terms],
                (self.set_pi_terms.name, {"term": 0, "beta_term": 0}),
                size=AQM_PI_TERMS_ENTRIES,
            )
        )

    def terms(self, md: EgMd) -> None:
        """pi_terms: T(d) and B(d) for this packet's sojourn."""
        r = self.pi_terms.lookup(
            {"eg_md.curve": md.curve, "eg_md.queue.sojourn_ns": md.queue.sojourn_ns}
        )
        md.pi_term = r.data["term"]
        md.pi_beta = r.data["beta_term"]

    def step(self, md: EgMd, now_ticks: int) -> None:
        """The classic (or PIE) queue's departure: a PI step on the first one
        after T_update, p read on the others; md.prob is p after it."""
        slot = md.slot
        self.terms(md)
        md.due_before_ticks = (now_ticks + md.minus_t_update_ticks) & U32_MASK
        # pi_tick: 0 is "never stepped" (a cleared slot steps at once).
        last = self.pi_last_update_ticks.read(slot)
        md.tick = int(last == 0 or (md.due_before_ticks - last) & U32_MASK < SIGN_32)
        if md.tick == 0:
            md.prob = self.pi_prob.read(slot)
            return
        self.pi_last_update_ticks.write(slot, now_ticks)
        # pi_old_swap: B(d) in, B(d_old) out.
        md.old_beta = self.pi_old_beta.read(slot)
        self.pi_old_beta.write(slot, md.pi_beta)
        md.delta = (md.pi_term - md.old_beta) & U32_MASK
        md.minus_delta = (md.old_beta - md.pi_term) & U32_MASK
        p = self.pi_prob.read(slot)
        # prob_down (p |-| -delta) or prob_up (p |+| delta): saturating.
        down = md.delta & SIGN_32
        p = max(p - md.minus_delta, 0) if down else min(p + md.delta, PI_PROB_ONE)
        self.pi_prob.write(slot, p)
        md.prob = p

    def read(self, md: EgMd) -> None:
        """DualPI2's L queue: p' at its pair's slot, as the classic queue left it."""
        md.prob = self.pi_prob.read(md.slot)


class Dadctcp:
    """control AqmDadctcp: seed 004's slope (dadctcp.p4's two-sample EWMA)
    on the dequeue depth."""

    def __init__(self, p4: P4Objects, path: str) -> None:
        self.dadctcp_last_depth = p4.register(Register(f"{path}.dadctcp_last_depth", 32, AQM_SLOTS))
        self.dadctcp_last_slope = p4.register(Register(f"{path}.dadctcp_last_slope", 32, AQM_SLOTS))

    def apply(self, md: EgMd) -> None:
        slot = md.slot
        depth = md.deq_depth_cells
        md.prev_depth_cells = self.dadctcp_last_depth.read(slot)
        self.dadctcp_last_depth.write(slot, depth)
        md.slope_cells = (depth - md.prev_depth_cells) & U32_MASK
        md.prev_slope_cells = self.dadctcp_last_slope.read(slot)
        self.dadctcp_last_slope.write(slot, md.slope_cells)
        md.avg_slope = average_slope(md.slope_cells, md.prev_slope_cells)
        md.chosen = int(
            at_or_above(depth, md.k2_cells)
            or (at_or_above(depth, md.k1_cells) and md.avg_slope & SIGN_32 == 0)
        )
