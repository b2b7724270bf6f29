// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_TEST_HOOKS_P4
#define TOFCC_TEST_HOOKS_P4

#include "arch.p4"
#include "headers.p4"
#include "size.p4"

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
        size = TOFCC_PORTS;
    }

    apply { queue_md_override.apply(); }
#else
    apply { use_real(); }
#endif
}

/* QueueMetadataHook with the depth the queue has when the packet leaves it
 * (deq_qdepth) instead of when it arrived (enq_qdepth), for a mechanism
 * whose paper samples the queue at dequeue (DA-DCTCP, seed 004 Eq. 4).
 * Same table and actions, so the vectors' queue injection works unchanged. */
control DequeueQueueHook(in egress_intrinsic_metadata_t eg_intr_md, out queue_md_t queue) {
    action use_real() {
        queue.depth_cells = (bit<32>)eg_intr_md.deq_qdepth;
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
        size = TOFCC_PORTS;
    }

    apply { queue_md_override.apply(); }
#else
    apply { use_real(); }
#endif
}

/* The queue's depth and sojourn time, or the values a test injects, for
 * mechanisms that need sojourns of milliseconds (CoDel's 5 ms target,
 * PIE's 15 ms reference). Tofino's deq_timedelta is 18 bits and saturates
 * near 262 us, so on Tofino the sojourn is the egress global
 * timestamp minus the arrival's MAC timestamp (their low 32 bits: exact
 * for any sojourn below 4.29 s); Tofino2's 32-bit deq_timedelta is used as
 * is. Same table and actions as tna/include/test_hooks.p4's
 * QueueMetadataHook, so the vectors' queue injection works unchanged. */
control TimestampQueueHook(in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     in bit<32> arrival_ns, out queue_md_t queue) {
    action use_real() {
        queue.depth_cells = (bit<32>)eg_intr_md.enq_qdepth;
#ifdef TOFCC_TOFINO2
        queue.sojourn_ns = (bit<32>)eg_intr_md.deq_timedelta;
#else
        queue.sojourn_ns = eg_prsr_md.global_tstamp[31:0] - arrival_ns;
#endif
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
        size = TOFCC_PORTS;
    }

    apply { queue_md_override.apply(); }
#else
    apply { use_real(); }
#endif
}

/* tofino-model's ingress timestamps are wall-clock, so time-dependent logic
 * reads the ingress clock through this control: a test installs
 * `inject(tstamp_ns)` for an ingress port and every packet arriving on it
 * sees that 48-bit timestamp. The clock is given in 64 ns ticks (bits 37..6
 * of the nanosecond timestamp), 32 bits wide, so it wraps after 275 s. */
control IngressClockHook(in ingress_intrinsic_metadata_t ig_intr_md, out bit<32> now_ticks) {
    action use_real() {
        now_ticks = ig_intr_md.ingress_mac_tstamp[37:6];
    }

#ifdef TOFCC_TEST_HOOKS
    action inject(bit<48> tstamp_ns) {
        now_ticks = tstamp_ns[37:6];
    }

    table ingress_tstamp_override {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { use_real; inject; }
        default_action = use_real();
        size = TOFCC_PORTS;
    }

    apply { ingress_tstamp_override.apply(); }
#else
    apply { use_real(); }
#endif
}

/* The chip's random number generator through a hook, so a vector can pin
 * the value a probabilistic decision draws: a test installs
 * `inject(value)` for an egress port and every packet leaving it sees that
 * value instead of a fresh draw. 15 bits (0..32767): a probability is a
 * level in 0..32768 and a packet is chosen when value < level, a
 * difference whose bit 15 is its sign (P4QCN, tna/p4qcn/README.md). */
control RandomHook(in egress_intrinsic_metadata_t eg_intr_md, out bit<16> value) {
    Random<bit<16>>() rng;

    /* A table's default action cannot draw a random number (the compiler
     * refuses it), so the draw comes first and an entry overrides it. */
    action draw() {
        value = rng.get() & 0x7FFF;
    }

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
