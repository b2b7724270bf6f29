// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* PMQECN's optional WRR over strict priority (seed 000, Fig. 4;
 * scheduling.mode p4_wrr): a virtual queue with a vq_weight entry spends
 * `weight` packets at each priority level before moving to the next, and
 * its packets take that level's queue. Included by pmqecn.p4 after its
 * metadata. Every table, action and register keeps the control-plane name
 * it had in SwitchIngress (@name), which the controller, the model and
 * the vectors use. */
#ifndef TOFCC_PMQECN_WRR_P4
#define TOFCC_PMQECN_WRR_P4

/* Each step is gated on its own (wrr_on), so the steps share stages with
 * the virtual queue's (SwitchIngress says why). */
control PmqecnWrr(inout ig_md_t ig_md, inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* Per virtual queue (Fig. 4): packets spent at the current level, and
     * the current level (0 = highest priority). */
    @name(".SwitchIngress.vq_used")
    Register<bit<16>, vq_slot_t>(PMQECN_VQS, 0) vq_used;
    @name(".SwitchIngress.vq_level")
    Register<bit<8>, vq_slot_t>(PMQECN_VQS, 0) vq_level;

    RegisterAction<bit<16>, vq_slot_t, bit<8>>(vq_used) vq_used_step = {
        void apply(inout bit<16> used, out bit<8> advance) {
            if (used >= ig_md.wrr_weight) {
                used = 1;
                advance = 1;
            } else {
                used = used + 1;
                advance = 0;
            }
        }
    };

    /* Moving past the lowest level starts the next round at the top, as the
     * paper's "this process continues". */
    RegisterAction<bit<8>, vq_slot_t, bit<8>>(vq_level) vq_level_step = {
        void apply(inout bit<8> level, out bit<8> new_level) {
            if (ig_md.wrr_advance == 1) {
                if (level >= ig_md.wrr_last_level) {
                    level = 0;
                } else {
                    level = level + 1;
                }
            }
            new_level = level;
        }
    };

    /* A virtual queue with an entry here is scheduled by the P4 WRR mapping;
     * without one its packets keep the queue chosen by classify (the TM's
     * own DWRR then does the weighting: the default). */
    @name(".SwitchIngress.wrr")
    action wrr(bit<16> weight, bit<8> last_level) {
        ig_md.wrr_on = 1;
        ig_md.wrr_weight = weight;
        ig_md.wrr_last_level = last_level;
    }

    @name(".SwitchIngress.vq_weight")
    table vq_weight {
        key = { ig_md.vq_id : exact; }
        actions = { wrr; NoAction; }
        default_action = NoAction();
        size = PMQECN_VQS;
    }

    @name(".SwitchIngress.set_priority_queue")
    action set_priority_queue(QueueId_t qid) {
        ig_tm_md.qid = qid;
        ig_md.fb_queue_id = (bit<8>)qid;
    }

    @name(".SwitchIngress.wrr_level_queue")
    table wrr_level_queue {
        key = { ig_md.wrr_level : exact; }
        actions = { set_priority_queue; NoAction; }
        default_action = NoAction();
        size = PMQECN_WRR_LEVELS;
    }

    apply {
        vq_weight.apply();
        if (ig_md.wrr_on == 1) {
            ig_md.wrr_advance = vq_used_step.execute(ig_md.vq_id);
        }
        if (ig_md.wrr_on == 1) {
            ig_md.wrr_level = vq_level_step.execute(ig_md.vq_id);
        }
        if (ig_md.wrr_on == 1) {
            wrr_level_queue.apply();
        }
    }
}

#endif
