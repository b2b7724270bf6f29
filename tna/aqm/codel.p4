// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_AQM_CODEL_P4
#define TOFCC_AQM_CODEL_P4

/* CoDel (RFC 8289) for a departure of a CoDel queue (aqm.p4 applies it on
 * aqm_queue's mode): RFC 8289's dodequeue from timestamps, the dropping
 * state, and the control law summed in codel_due; sets `chosen` for
 * aqm.p4's verdict. Every object keeps the control-plane name it had in
 * SwitchEgress before the family (@name), which the controller, the model
 * and the vectors use. */
control AqmCodel(inout eg_md_t eg_md, in bit<32> now_ticks) {
    /* Times are the ingress clock's 64 ns ticks (32 bits, wraps every
     * 275 s); comparisons of two times use the sign of their difference,
     * so they hold across the wrap. 0 means "not set" in every register. */
    @name(".SwitchEgress.codel_first_above_ticks")
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_first_above_ticks;
    @name(".SwitchEgress.codel_drop_start_ticks")
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_drop_start_ticks;
    @name(".SwitchEgress.codel_count")
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_count;
    @name(".SwitchEgress.codel_tail_next_ticks")
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_tail_next_ticks;

    action codel_times() {
        eg_md.target_margin_ns = eg_md.queue.sojourn_ns - eg_md.target_ns;
        eg_md.sojourn_ticks = eg_md.queue.sojourn_ns >> 6;
        eg_md.deadline_base_ticks = now_ticks + eg_md.interval_ticks;
        eg_md.tail_base_ticks = now_ticks + eg_md.tail_step_ticks;
    }

    action codel_dequeue_times() {
        eg_md.deq_ticks = now_ticks + eg_md.sojourn_ticks;
        eg_md.deadline_ticks = eg_md.deadline_base_ticks + eg_md.sojourn_ticks;
        eg_md.tail_next_ticks = eg_md.tail_base_ticks + eg_md.sojourn_ticks;
    }

    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_first_above_ticks) codel_below_target = {
        void apply(inout bit<32> first_above) {
            first_above = 0;
        }
    };

    /* RFC 8289 dodequeue: the first packet above target starts the
     * interval; ok_to_drop once a packet leaves at or after its end. */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_first_above_ticks) codel_above_target = {
        void apply(inout bit<32> first_above, out bit<1> ok) {
            if (first_above == 0) {
                first_above = eg_md.deadline_ticks;
                ok = 0;
            } else if (eg_md.deq_ticks - first_above < 0x80000000) {
                ok = 1;
            } else {
                ok = 0;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(codel_drop_start_ticks) codel_leave = {
        void apply(inout bit<32> start) {
            start = 0;
        }
    };

    /* The dropping state begins with this packet, or has lasted `elapsed`. */
    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(codel_drop_start_ticks) codel_dropping = {
        void apply(inout bit<32> start, out bit<32> elapsed) {
            if (start == 0) {
                start = eg_md.deq_ticks;
                elapsed = 0;
            } else {
                elapsed = eg_md.deq_ticks - start;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_count) codel_count_reset = {
        void apply(inout bit<32> count) {
            count = 0;
        }
    };

    /* One drop per packet while fewer than the due number were made: the
     * RFC's while loop, spread over the packets that leave. */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_count) codel_count_step = {
        void apply(inout bit<32> count, out bit<1> drop) {
            if (count < eg_md.due_count) {
                count = count + 1;
                drop = 1;
            } else {
                drop = 0;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_tail_next_ticks) codel_tail_reset = {
        void apply(inout bit<32> next) {
            next = 0;
        }
    };

    /* Beyond count_cap drops: one every tail step. */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_tail_next_ticks) codel_tail_step = {
        void apply(inout bit<32> next, out bit<1> drop) {
            if (next == 0 || eg_md.deq_ticks - next < 0x80000000) {
                next = eg_md.tail_next_ticks;
                drop = 1;
            } else {
                drop = 0;
            }
        }
    };

    /* RFC 8289's control law, summed: drops due after `elapsed` in the
     * dropping state (bfrt_controller/aqm/levels.py). No entry: none. */
    @name(".SwitchEgress.set_due")
    action set_due(bit<32> due_count, bit<1> tail) {
        eg_md.due_count = due_count;
        eg_md.tail = tail;
    }

    @name(".SwitchEgress.no_due")
    action no_due() {
        eg_md.due_count = 0;
        eg_md.tail = 0;
    }

    @name(".SwitchEgress.codel_due")
    table codel_due {
        key = {
            eg_md.curve         : exact;
            eg_md.elapsed_ticks : ternary;
        }
        actions = { set_due; no_due; }
        default_action = no_due();
        size = AQM_CODEL_DUE_ENTRIES;
    }

    apply {
        codel_times();
        codel_dequeue_times();
        if (eg_md.target_margin_ns[31:31] == 1) {
            codel_below_target.execute(eg_md.slot);
            eg_md.ok_to_drop = 0;
        } else {
            eg_md.ok_to_drop = codel_above_target.execute(eg_md.slot);
        }
        if (eg_md.ok_to_drop == 0) {
            codel_leave.execute(eg_md.slot);
            codel_count_reset.execute(eg_md.slot);
            codel_tail_reset.execute(eg_md.slot);
            eg_md.chosen = 0;
        } else {
            eg_md.elapsed_ticks = codel_dropping.execute(eg_md.slot);
            codel_due.apply();
            if (eg_md.tail == 1) {
                eg_md.chosen = codel_tail_step.execute(eg_md.slot);
            } else {
                eg_md.chosen = codel_count_step.execute(eg_md.slot);
            }
        }
    }
}

#endif
