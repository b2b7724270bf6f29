// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* RED (Floyd & Jacobson 1993) for a departure of a RED queue (aqm.p4
 * applies it on aqm_queue's mode): the block-mean average and red_level's
 * drop level against the random value; sets `chosen` (and `hard`, from
 * max_th up) for aqm.p4's verdict. Every object keeps the control-plane
 * name it had in SwitchEgress before the family (@name), which the
 * controller, the model and the vectors use. */
#ifndef TOFCC_AQM_RED_P4
#define TOFCC_AQM_RED_P4

control AqmRed(inout eg_md_t eg_md) {
    /* The stateful ALU has no shifter, so avg += (q - avg) w_q cannot be
     * applied in the one access a packet gets: the average is the mean of
     * the last complete block of 2^k packets instead (README). A packet
     * that finds the queue empty closes the block early, the packets the
     * block lacked counting as an empty queue: Floyd & Jacobson's idle-time
     * rule, and what lets a high average fall once RED's drops have
     * drained the queue (else it would wait for 2^k more packets). */
    @name(".SwitchEgress.red_block_packets")
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) red_block_packets;
    @name(".SwitchEgress.red_block_sum_cells")
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) red_block_sum_cells;
    @name(".SwitchEgress.red_avg_sum_cells")
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) red_avg_sum_cells;

    /* 1 for the block's last packet (index 2^k - 1, or one that found the
     * queue empty), which starts the next. */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(red_block_packets) red_block_count = {
        void apply(inout bit<32> n, out bit<1> end) {
            if (n >= eg_md.block_limit) {
                n = 0;
                end = 1;
            } else {
                n = n + 1;
                end = 0;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(red_block_sum_cells) red_sum_add = {
        void apply(inout bit<32> sum) {
            sum = sum + eg_md.queue.depth_cells;
        }
    };

    /* The block's last depth closes it: the full sum leaves, the next
     * block starts from 0. */
    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(red_block_sum_cells) red_sum_close = {
        void apply(inout bit<32> sum, out bit<32> closed) {
            closed = sum + eg_md.queue.depth_cells;
            sum = 0;
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(red_avg_sum_cells) red_avg_set = {
        void apply(inout bit<32> avg, out bit<32> now_avg) {
            avg = eg_md.block_sum_cells;
            now_avg = eg_md.block_sum_cells;
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(red_avg_sum_cells) red_avg_read = {
        void apply(inout bit<32> avg, out bit<32> now_avg) {
            now_avg = avg;
        }
    };

    /* Floyd & Jacobson's p_b as a step function of N x avg, written by the
     * controller (bfrt_controller/aqm/levels.py): no entry below min_th,
     * max_p (avg - min_th) / (max_th - min_th) between, and 32768 with
     * `hard` from max_th up (dropped even when ECN-capable, RFC 3168 6.1.2). */
    @name(".SwitchEgress.set_level")
    action set_level(bit<16> level, bit<1> hard) {
        eg_md.level = level;
        eg_md.hard = hard;
    }

    @name(".SwitchEgress.no_drop")
    action no_drop() {
        eg_md.level = 0;
        eg_md.hard = 0;
    }

    @name(".SwitchEgress.red_level")
    table red_level {
        key = {
            eg_md.curve         : exact;
            eg_md.avg_sum_cells : ternary;
        }
        actions = { set_level; no_drop; }
        default_action = no_drop();
        size = AQM_RED_LEVEL_ENTRIES;
    }

    /* random and level are both at most 32768, so the difference's bit 15
     * is its sign. */
    action red_draw() {
        eg_md.random_margin = eg_md.random - eg_md.level;
    }

    apply {
        /* One comparison in the stateful ALU: its input crossbar takes the
         * limit, not the depth beside it. */
        if (eg_md.queue.depth_cells == 0) {
            eg_md.block_limit = 0;
        } else {
            eg_md.block_limit = eg_md.block_last;
        }
        eg_md.block_end = red_block_count.execute(eg_md.slot);
        if (eg_md.block_end == 1) {
            eg_md.block_sum_cells = red_sum_close.execute(eg_md.slot);
            eg_md.avg_sum_cells = red_avg_set.execute(eg_md.slot);
        } else {
            red_sum_add.execute(eg_md.slot);
            eg_md.avg_sum_cells = red_avg_read.execute(eg_md.slot);
        }
        red_level.apply();
        red_draw();
        eg_md.chosen = eg_md.random_margin[15:15];
    }
}

#endif
