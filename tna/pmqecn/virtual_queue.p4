// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* PMQECN's virtual queue per class, in ingress (seed 000, Algorithm 1;
 * tna/pmqecn/README.md, "Virtual queue"): the class's register queue grows
 * by each arriving frame and drains at the pipe's share of the class's
 * service rate over the time since its last packet, and is compared with
 * the pipe's share of K_i. Included by pmqecn.p4 after its metadata. Every
 * table, action and register keeps the control-plane name it had in
 * SwitchIngress (@name), which the controller, the model and the vectors
 * use. */
#ifndef TOFCC_PMQECN_VIRTUAL_QUEUE_P4
#define TOFCC_PMQECN_VIRTUAL_QUEUE_P4

/* For a classified packet (class_id != 0): its elapsed ticks
 * (vq_elapsed_ticks), the length it leaves (vq_len_bytes), K_i less
 * that length (k_minus_vq_bytes, negative when over) and the feedback
 * gate's wait (fb_wait_ticks). Each step is gated
 * on its own, so the steps share stages with the WRR's (SwitchIngress says
 * why). */
control PmqecnVirtualQueue(in headers_t hdr, inout ig_md_t ig_md,
                           in ingress_intrinsic_metadata_t ig_intr_md) {
    /* vq_last_tick: the clock (64 ns ticks) at the class's last packet;
     * vq_bytes: the class's virtual-queue length in bytes of Ethernet frame
     * (14-byte header + IPv4 total length, no FCS). */
    @name(".SwitchIngress.vq_last_tick")
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) vq_last_tick;
    @name(".SwitchIngress.vq_bytes")
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) vq_bytes;

    RegisterAction<bit<32>, class_slot_t, bit<32>>(vq_last_tick) vq_clock_step = {
        void apply(inout bit<32> last, out bit<32> elapsed) {
            elapsed = ig_md.now_ticks - last;
            last = ig_md.now_ticks;
        }
    };

    /* The frame is added and the drain taken in one step: the length is
     * max(q + frame - drain, 0). Two register actions on the one PHV
     * operand drain - frame, one per sign; a packet runs one of them. When
     * the frame exceeds the drain, q - (drain - frame) wraps to
     * q + (frame - drain), and the cap keeps it below 2^31. */
    RegisterAction<bit<32>, class_slot_t, bit<32>>(vq_bytes) vq_grow = {
        void apply(inout bit<32> q, out bit<32> len) {
            if (q < VQ_CAP_BYTES) {
                q = q - ig_md.vq_shrink_bytes;
            }
            len = q;
        }
    };

    RegisterAction<bit<32>, class_slot_t, bit<32>>(vq_bytes) vq_shrink = {
        void apply(inout bit<32> q, out bit<32> len) {
            q = q |-| ig_md.vq_shrink_bytes;
            len = q;
        }
    };

    /* The class's arrivals in this pipe (packets, wrapping): the controller
     * reads every pipe's cell and gives each pipe its share of the class's
     * drain and K_i (bfrt_controller/pmqecn/pipes.py). class_counters, read
     * summed over the pipes, cannot say which pipe a packet came in by. */
    @name(".SwitchIngress.class_arrivals")
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) class_arrivals;

    RegisterAction<bit<32>, class_slot_t, void>(class_arrivals) class_arrivals_add = {
        void apply(inout bit<32> value) {
            value = value + 1;
        }
    };

    /* K_i in bytes of virtual queue; mark_original also CE-marks an ECT
     * original (tna/pmqecn/README.md). */
    /* K_i and the class's drain rate as 128 x (log2 of bytes per tick +
     * 32), from the controller (bfrt_controller/pmqecn/drain.py), each this
     * pipe's share of the class's (the pipe is in the key: a class whose
     * senders span pipes has a virtual queue in each); and the least gap
     * between the class's feedback copies (0: every marked packet). */
    @name(".SwitchIngress.set_threshold")
    action set_threshold(bit<32> threshold_bytes, bit<1> mark_original,
                         bit<16> rate_log2_q7, bit<32> feedback_interval_ticks) {
        ig_md.threshold_bytes = threshold_bytes;
        ig_md.mark_original = mark_original;
        ig_md.vq_rate_log2_q7 = rate_log2_q7;
        ig_md.fb_interval_ticks = feedback_interval_ticks;
    }

    /* No K_i and no drain: a log rate of 0 keeps every sum below the first
     * vq_exp_drain entry. */
    @name(".SwitchIngress.no_threshold")
    action no_threshold() {
        ig_md.threshold_bytes = VQ_NO_THRESHOLD;
        ig_md.mark_original = 0;
        ig_md.vq_rate_log2_q7 = 0;
        ig_md.fb_interval_ticks = 0;
    }

    @name(".SwitchIngress.ecn_threshold")
    table ecn_threshold {
        key = {
            hdr.bridged.class_id : exact;
            ig_intr_md.ingress_port[8:7] : exact @name("ingress_pipe");
        }
        actions = { set_threshold; no_threshold; }
        default_action = no_threshold();
        size = PMQECN_THRESHOLD_ENTRIES;
    }

    /* The drain, rate x elapsed time, without a multiply: log2 of the
     * elapsed ticks (one ternary entry per leading bit and mantissa, the
     * same for every class) plus the class's log rate, then 2^sum from an
     * exact table. Every step rounds down (tna/pmqecn/README.md gives the bound).
     * No entry (0 ticks): a sum of 0, which drains nothing. */
    @name(".SwitchIngress.log_elapsed")
    action log_elapsed(bit<16> log_elapsed_q7) {
        ig_md.vq_log_drain_q7 = log_elapsed_q7 + ig_md.vq_rate_log2_q7;
    }

    @name(".SwitchIngress.no_elapsed")
    action no_elapsed() {
        ig_md.vq_log_drain_q7 = 0;
    }

    @name(".SwitchIngress.vq_log_elapsed")
    table vq_log_elapsed {
        key = { ig_md.vq_elapsed_ticks : ternary; }
        actions = { log_elapsed; no_elapsed; }
        default_action = no_elapsed();
        size = PMQECN_LOG_ENTRIES;
    }

    @name(".SwitchIngress.drain")
    action drain(bit<32> drain_bytes) {
        /* Action data may only be the first operand of a subtraction
         * (tna/README.md, compiler idioms), so frame - drain is not
         * computed here; its sign is this difference's, negated. */
        ig_md.vq_shrink_bytes = drain_bytes - ig_md.frame_bytes;
    }

    @name(".SwitchIngress.vq_exp_drain")
    table vq_exp_drain {
        key = { ig_md.vq_log_drain_q7 : exact; }
        actions = { drain; }
        default_action = drain(0);
        size = PMQECN_EXP_ENTRIES;
    }

    /* The feedback gate's input (PmqecnFeedbackGate): the class's least gap
     * between feedback copies less this packet's elapsed ticks. Taken here,
     * beside the lookup of the same elapsed time: in the gate's control it
     * took a PHV container more. */
    action feedback_wait() {
        ig_md.fb_wait_ticks = ig_md.fb_interval_ticks |-| ig_md.vq_elapsed_ticks;
    }

    /* In an action, so the gateway below tests one bit of an ALU result
     * (a difference computed just before an `if` would be folded into it). */
    action compare_threshold() {
        ig_md.k_minus_vq_bytes = ig_md.threshold_bytes - ig_md.vq_len_bytes;
    }

    apply {
        if (hdr.bridged.class_id != 0) {
            ig_md.vq_elapsed_ticks = vq_clock_step.execute(hdr.bridged.class_id[9:0]);
            class_arrivals_add.execute(hdr.bridged.class_id[9:0]);
            ecn_threshold.apply();
        }
        if (hdr.bridged.class_id != 0) {
            vq_log_elapsed.apply();
            feedback_wait();
        }
        if (hdr.bridged.class_id != 0) {
            vq_exp_drain.apply();
        }
        if (hdr.bridged.class_id != 0) {
            /* One of two register actions on vq_bytes, so one
             * read-modify-write per packet: the frame exceeds the
             * drain (the sign bit of drain - frame) or it does not. */
            if (ig_md.vq_shrink_bytes[31:31] == 1) {
                ig_md.vq_len_bytes = vq_grow.execute(hdr.bridged.class_id[9:0]);
            } else {
                ig_md.vq_len_bytes = vq_shrink.execute(hdr.bridged.class_id[9:0]);
            }
        }
        compare_threshold();
    }
}

#endif
