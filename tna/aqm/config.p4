// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* aqm_queue: the mechanism a queue runs and its settings, written by the
 * controller (bfrt_controller/aqm/batch.py switches a queue in one batch).
 * Every object keeps the control-plane name it has under SwitchEgress
 * (@name), which the controller, the model and the vectors use. */
#ifndef TOFCC_AQM_CONFIG_P4
#define TOFCC_AQM_CONFIG_P4

control AqmQueueConfig(inout eg_md_t eg_md, in egress_intrinsic_metadata_t eg_intr_md,
                       in bit<32> now_ticks) {
    @name(".SwitchEgress.set_red")
    action set_red(bit<8> slot, bit<8> curve, bit<1> ecn, bit<32> block_last) {
        eg_md.mode = AQM_MODE_RED;
        eg_md.slot = slot;
        eg_md.curve = curve;
        eg_md.ecn = ecn;
        eg_md.block_last = block_last;
    }

    @name(".SwitchEgress.set_codel")
    action set_codel(bit<8> slot, bit<8> curve, bit<1> ecn, bit<32> target_ns,
                     bit<32> interval_ticks, bit<32> tail_step_ticks) {
        eg_md.mode = AQM_MODE_CODEL;
        eg_md.slot = slot;
        eg_md.curve = curve;
        eg_md.ecn = ecn;
        eg_md.target_ns = target_ns;
        eg_md.interval_ticks = interval_ticks;
        eg_md.tail_step_ticks = tail_step_ticks;
    }

    /* The step is due when the last one is older than T_update: now -
     * T_update, compared with the slot's last step in pi_tick. */
    @name(".SwitchEgress.set_pie")
    action set_pie(bit<8> slot, bit<8> curve, bit<1> ecn, bit<32> minus_t_update_ticks,
                   bit<16> mark_max_level) {
        eg_md.mode = AQM_MODE_PIE;
        eg_md.slot = slot;
        eg_md.curve = curve;
        eg_md.ecn = ecn;
        eg_md.due_before_ticks = now_ticks + minus_t_update_ticks;
        eg_md.mark_max_level = mark_max_level;
        eg_md.tick = 1;
    }

    @name(".SwitchEgress.set_dctcp")
    action set_dctcp(bit<1> ecn, bit<32> k_cells) {
        eg_md.mode = AQM_MODE_DCTCP;
        eg_md.ecn = ecn;
        eg_md.k2_cells = k_cells;
    }

    @name(".SwitchEgress.set_dadctcp")
    action set_dadctcp(bit<8> slot, bit<1> ecn, bit<32> k1_cells, bit<32> k2_cells) {
        eg_md.mode = AQM_MODE_DADCTCP;
        eg_md.slot = slot;
        eg_md.ecn = ecn;
        eg_md.k1_cells = k1_cells;
        eg_md.k2_cells = k2_cells;
    }

    @name(".SwitchEgress.set_dualpi2_c")
    action set_dualpi2_c(bit<8> slot, bit<8> curve, bit<1> ecn, bit<32> minus_t_update_ticks) {
        eg_md.mode = AQM_MODE_DUALPI2_C;
        eg_md.slot = slot;
        eg_md.curve = curve;
        eg_md.ecn = ecn;
        eg_md.due_before_ticks = now_ticks + minus_t_update_ticks;
        eg_md.tick = 1;
    }

    /* The L queue reads its pair's p (the classic queue's slot) and never
     * steps it. */
    @name(".SwitchEgress.set_dualpi2_l")
    action set_dualpi2_l(bit<8> slot, bit<32> step_ns) {
        eg_md.mode = AQM_MODE_DUALPI2_L;
        eg_md.slot = slot;
        eg_md.step_ns = step_ns;
        eg_md.tick = 0;
    }

    @name(".SwitchEgress.no_aqm")
    action no_aqm() {
        eg_md.mode = AQM_MODE_NONE;
    }

    /* The queue is a ternary key the controller always writes in full (a
     * full mask: p4testgen's Tofino target gives up on an exact key on
     * egress_qid, issue 32). */
    @name(".SwitchEgress.aqm_queue")
    table aqm_queue {
        key = {
            eg_intr_md.egress_port : exact;
            eg_intr_md.egress_qid  : ternary;
        }
        actions = {
            set_red; set_codel; set_pie; set_dctcp; set_dadctcp; set_dualpi2_c;
            set_dualpi2_l; no_aqm;
        }
        default_action = no_aqm();
        size = AQM_QUEUE_ENTRIES;
    }

    apply {
        aqm_queue.apply();
    }
}

#endif
