// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_AQM_HOOKS_P4
#define TOFCC_AQM_HOOKS_P4

/* TimestampQueueHook (include/test_hooks.p4) with the depth as the packet
 * leaves too (deq_qdepth: DCTCP's and DA-DCTCP's step); same table and
 * actions, an injected depth standing for both. */
control AqmQueueHook(in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     in bit<32> arrival_ns, out queue_md_t queue,
                     out bit<32> deq_depth_cells) {
    action use_real() {
        queue.depth_cells = (bit<32>)eg_intr_md.enq_qdepth;
        deq_depth_cells = (bit<32>)eg_intr_md.deq_qdepth;
#ifdef TOFCC_TOFINO2
        queue.sojourn_ns = (bit<32>)eg_intr_md.deq_timedelta;
#else
        queue.sojourn_ns = eg_prsr_md.global_tstamp[31:0] - arrival_ns;
#endif
    }

#ifdef TOFCC_TEST_HOOKS
    action inject(bit<32> depth_cells, bit<32> sojourn_ns) {
        queue.depth_cells = depth_cells;
        deq_depth_cells = depth_cells;
        queue.sojourn_ns = sojourn_ns;
    }

    table queue_md_override {
        key = { eg_intr_md.egress_port : exact; }
        actions = { use_real; inject; }
        default_action = use_real();
        size = TOFCC_PORTS;
    }

    apply { queue_md_override.apply(); }
#else
    apply { use_real(); }
#endif
}

/* include/test_hooks.p4's RandomHook, drawing 15 bits directly (no mask
 * after the draw: the mask cost a stage of its own, and every table after
 * the hook in the apply block waits for it). Under p4testgen
 * (scripts/testgen.py defines TOFCC_P4TESTGEN) the draw is 16 bits masked,
 * the same uniform 15-bit value: its solver fails on a 15-bit random value
 * ("TaintedExpression(bit<15>): Unhandled node type"), and the stage the
 * mask costs does not matter there. */
control AqmRandomHook(in egress_intrinsic_metadata_t eg_intr_md, out bit<16> value) {
#ifdef TOFCC_P4TESTGEN
    Random<bit<16>>() rng;

    action draw() {
        value = rng.get() & 0x7FFF;
    }
#else
    Random<bit<15>>() rng;

    action draw() {
        value = (bit<16>)rng.get();
    }
#endif

#ifdef TOFCC_TEST_HOOKS
    action inject(bit<16> random_value) {
        value = random_value & 0x7FFF;
    }

    table random_override {
        key = { eg_intr_md.egress_port : exact; }
        actions = { inject; NoAction; }
        default_action = NoAction();
        size = TOFCC_PORTS;
    }

    apply {
        draw();
        random_override.apply();
    }
#else
    apply { draw(); }
#endif
}

#endif
