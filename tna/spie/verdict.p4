// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* S-PIE's verdict in ingress, Algorithm 2 (spie.p4's header comment): from
 * the mode, PIE's state (SpieState) and the share test (SpieShareTest) a
 * packet is admitted, dropped, or, counted by the sketch, resubmitted so
 * that its second pass takes its count back out. Included by spie.p4 after
 * its metadata. The counters keep the control-plane names they had in
 * SwitchIngress (@name), which the controller and the model use. */
#ifndef TOFCC_SPIE_VERDICT_P4
#define TOFCC_SPIE_VERDICT_P4

control SpieVerdict(inout ig_md_t ig_md, in ingress_intrinsic_metadata_t ig_intr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    in ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @name(".SwitchIngress.large_flow_drops")
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) large_flow_drops;
    @name(".SwitchIngress.random_drops")
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) random_drops;

    /* Both below 2^31: bit 31 set <=> random < p, drop. */
    action random_margin() {
        ig_md.prob_margin = ig_md.random - ig_md.prob;
        ig_md.large_drop_margin = ig_md.random - ig_md.large_drop;
    }

    action drop_large() {
        ig_dprsr_md.drop_ctl = 1;
        large_flow_drops.count(ig_tm_md.ucast_egress_port);
    }

    action drop_random() {
        ig_dprsr_md.drop_ctl = 1;
        random_drops.count(ig_tm_md.ucast_egress_port);
    }

    /* A counted packet of an S-PIE port is not admitted: counted as dropped
     * now, resubmitted so that its second pass takes its count back out
     * (it is not forwarded: a resubmitted packet goes back to the parser). */
    action undo_large() {
        ig_dprsr_md.resubmit_type = SPIE_RESUBMIT_UNDO;
        ig_md.undo.sum_added = ig_md.row0;
        large_flow_drops.count(ig_tm_md.ucast_egress_port);
    }

    action undo_random() {
        ig_dprsr_md.resubmit_type = SPIE_RESUBMIT_UNDO;
        ig_md.undo.sum_added = ig_md.row0;
        random_drops.count(ig_tm_md.ucast_egress_port);
    }

    /* The second pass: its count is out again, and it was never admitted. */
    action drop_undone() {
        ig_dprsr_md.drop_ctl = 1;
    }

    apply {
        random_margin();
        /* Algorithm 2: congested (del_cur >= del_ref/3, from a fresh
         * update), a large flow's packet is dropped (lines 10-13; with
         * probability large_drop, README departure 13) and, in
         * S-PIE mode, any other admitted (lines 14-17); not congested, PIE's
         * p (lines 4-8). In SPIE_PIE mode p applies while congested too
         * (README departure 12). A dropped packet that was counted (the
         * sketch's modes) goes round once more to be uncounted: the counts
         * are of admitted packets, so a large flow is dropped only until
         * the others' admissions raise the threshold past its count. */
        if (ig_intr_md.resubmit_flag == 1) {
            drop_undone();
        } else if (ig_md.mode[1:1] == 1 && ig_md.congested == 1 &&
                ig_md.large_margin[15:15] == 0 && ig_md.large_drop_margin[31:31] == 1) {
            if (ig_md.sample_bits == 0) {
                undo_large();
            } else {
                drop_large();
            }
        } else if (ig_md.mode == SPIE_MODE_SPIE && ig_md.congested == 1) {
            /* a small flow while congested: admitted */
        } else if (ig_md.mode != SPIE_MODE_NONE && ig_md.fresh == 1 &&
                   ig_md.prob_margin[31:31] == 1) {
            if (ig_md.mode[1:1] == 1 && ig_md.sample_bits == 0) {
                undo_random();
            } else {
                drop_random();
            }
        }
    }
}

#endif
