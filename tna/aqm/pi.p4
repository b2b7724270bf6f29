// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_AQM_PI_P4
#define TOFCC_AQM_PI_P4

/* RFC 8033's PI step, shared by PIE and DualPI2 (tna/aqm/README.md, "PIE
 * and DualPI2's PI on Tofino"): p += T(d) - B(d_old), T(d) = (alpha + beta)
 * d - alpha target and B(d) = beta d as the sums of a high-byte and a
 * low-byte lookup (bfrt_controller/aqm/pi.py); pi_old_beta keeps B of the
 * last step. The classic (or PIE) queue steps on its first departure after
 * T_update (`step` 1); DualPI2's L queue reads p at its pair's slot. */
control AqmPi(inout eg_md_t eg_md, in bit<32> now_ticks, in bit<1> step) {
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) pi_last_update_ticks;
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) pi_old_beta;
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) pi_prob;

    action set_pi_terms(bit<32> term, bit<32> beta_term) {
        eg_md.pi_term = term;
        eg_md.pi_beta = beta_term;
    }

    table pi_terms {
        key = {
            eg_md.curve        : exact;
            eg_md.queue.sojourn_ns : ternary;
        }
        actions = { set_pi_terms; }
        default_action = set_pi_terms(0, 0);
        size = AQM_PI_TERMS_ENTRIES;
    }

    action deltas() {
        eg_md.delta = eg_md.pi_term - eg_md.old_beta;
        eg_md.minus_delta = eg_md.old_beta - eg_md.pi_term;
    }

    /* 0 is "never stepped": a cleared slot steps at once, wherever the
     * clock is (a sign test alone would wait up to half its wrap). */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(pi_last_update_ticks) pi_tick = {
        void apply(inout bit<32> last, out bit<1> tick) {
            if (last == 0 || eg_md.due_before_ticks - last < 0x80000000) {
                last = now_ticks;
                tick = 1;
            } else {
                tick = 0;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(pi_old_beta) pi_old_swap = {
        void apply(inout bit<32> old, out bit<32> previous) {
            previous = old;
            old = eg_md.pi_beta;
        }
    };

    /* p in [0, 2^32 - 1]: the stateful ALU's saturating add and subtract
     * keep it there. */
    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(pi_prob) prob_up = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = p |+| eg_md.delta;
            after = p;
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(pi_prob) prob_down = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = p |-| eg_md.minus_delta;
            after = p;
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(pi_prob) prob_read = {
        void apply(inout bit<32> p, out bit<32> after) {
            after = p;
        }
    };

    apply {
        if (step == 1) {
            pi_terms.apply();
            eg_md.tick = pi_tick.execute(eg_md.slot);
            if (eg_md.tick == 1) {
                eg_md.old_beta = pi_old_swap.execute(eg_md.slot);
                deltas();
            }
        }
        /* One access to p per packet: stepped, or read as it is. */
        if (eg_md.tick == 0) {
            eg_md.prob = prob_read.execute(eg_md.slot);
        } else if (eg_md.delta[31:31] == 1) {
            eg_md.prob = prob_down.execute(eg_md.slot);
        } else {
            eg_md.prob = prob_up.execute(eg_md.slot);
        }
    }
}

#endif
