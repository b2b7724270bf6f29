#ifndef TOFCC_TEST_HOOKS_P4
#define TOFCC_TEST_HOOKS_P4

#include "arch.p4"
#include "headers.p4"

/* tofino-model does not build real queues, so queue-dependent logic reads
 * the queue through this control. With no entry installed the pipeline sees
 * the real enq_qdepth and deq_timedelta; a test installs an entry for an
 * egress port to make every packet leaving it see the injected values.
 * Production builds (-DTOFCC_NO_TEST_HOOKS) compile the table out. */
control QueueMetadataHook(in egress_intrinsic_metadata_t eg_intr_md, out queue_md_t queue) {
    action use_real() {
        queue.depth_cells = (bit<32>)eg_intr_md.enq_qdepth;
        queue.sojourn_ns = (bit<32>)eg_intr_md.deq_timedelta;
    }

#ifdef TOFCC_TEST_HOOKS
    action inject(bit<32> depth_cells, bit<32> sojourn_ns) {
        queue.depth_cells = depth_cells;
        queue.sojourn_ns = sojourn_ns;
    }

    table queue_md_override {
        key = { eg_intr_md.egress_port : exact; }
        actions = { use_real; inject; }
        default_action = use_real();
        size = 512;
    }

    apply { queue_md_override.apply(); }
#else
    apply { use_real(); }
#endif
}

#endif
