// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* PMQECN's feedback gate, in ingress: a class over K_i whose source can be
 * sent feedback gets one copy of the arriving packet per feedback interval
 * (in each pipe), mirrored with the class's rates to become the feedback
 * packet in egress (FeedbackRebuild). Included by pmqecn.p4 after its
 * metadata. Every table, action and register keeps the control-plane name
 * it had in SwitchIngress (@name), which the controller, the model and the
 * vectors use. */
#ifndef TOFCC_PMQECN_FEEDBACK_GATE_P4
#define TOFCC_PMQECN_FEEDBACK_GATE_P4

/* Every packet of a class runs one action of its gate: the check when it
 * is over K_i and its source can be sent feedback (SwitchIngress's
 * feedback_session), otherwise the wait. The interval left to wait
 * (fb_wait_ticks) is PmqecnVirtualQueue's. */
control PmqecnFeedbackGate(in headers_t hdr, inout ig_md_t ig_md,
                           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    /* One feedback copy per class per feedback interval (in each pipe).
     * `quiet` is the time since the class's last feedback copy in this
     * pipe, as the sum of the gaps between its packets (vq_clock_step's
     * elapsed ticks), saturating: every packet of the class runs one of the
     * two actions, so no clock difference wraps and no second copy of the
     * clock is needed (the stateful ALU reads at most two PHV words).
     * `made` counts the copies let through (wrapping): the metrics compare
     * it with the copies egress rebuilt, the difference being copies lost
     * on the way (tna/pmqecn/README.md). */
    /* Quiet since ever at load: a class's first copy always goes out. */
    @name(".SwitchIngress.feedback_gate")
    Register<fb_gate_t, class_slot_t>(PMQECN_CLASSES, {0xFFFFFFFF, 0}) feedback_gate;

    /* Over K_i, with a session: a copy if the class has been quiet for the
     * interval (quiet + elapsed >= interval, as quiet >= interval - elapsed,
     * saturated at 0). The output is the mirror type itself. */
    RegisterAction<fb_gate_t, class_slot_t, MirrorType_t>(feedback_gate) feedback_gate_check = {
        void apply(inout fb_gate_t g, out MirrorType_t mirror_type) {
            if (g.quiet >= ig_md.fb_wait_ticks) {
                g.quiet = 0;
                g.made = g.made + 1;
                mirror_type = MIRROR_TYPE_FEEDBACK;
            } else {
                g.quiet = g.quiet |+| ig_md.vq_elapsed_ticks;
                mirror_type = 0;
            }
        }
    };

    RegisterAction<fb_gate_t, class_slot_t, void>(feedback_gate) feedback_gate_wait = {
        void apply(inout fb_gate_t g) {
            g.quiet = g.quiet |+| ig_md.vq_elapsed_ticks;
        }
    };

    @name(".SwitchIngress.set_rates")
    action set_rates(bit<32> rate, bit<32> target_rate) {
        ig_md.fb_rate = rate;
        ig_md.fb_target_rate = target_rate;
    }

    @name(".SwitchIngress.class_rates")
    table class_rates {
        key = { hdr.bridged.class_id : exact; }
        actions = { set_rates; }
        default_action = set_rates(0, 0);
        size = PMQECN_CLASSES;
    }

    apply {
        if (hdr.bridged.class_id != 0) {
            if (ig_md.k_minus_vq_bytes[31:31] == 1 && ig_md.parsed.ipv4_plain
                    && ig_md.fb_session_on == 1) {
                class_rates.apply();
                ig_dprsr_md.mirror_type =
                    feedback_gate_check.execute(hdr.bridged.class_id[9:0]);
            } else {
                feedback_gate_wait.execute(hdr.bridged.class_id[9:0]);
            }
        }
    }
}

#endif
