// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* PIE's PI step in egress (spie.p4's header comment): the two
 * terms alpha (del_cur - del_ref) and beta (del_cur - del_old) by lookup
 * (SpiePiTerms), and p moved by their sum, saturating in [0, 1]
 * (SpiePiProbability). SwitchEgress decides when a step is due and
 * mirrors its result to ingress. Included by spie.p4 after its metadata.
 * Every table, action and register keeps the control-plane name it had in
 * SwitchEgress (@name), which the controller, the model and the vectors
 * use. */
#ifndef TOFCC_SPIE_PI_P4
#define TOFCC_SPIE_PI_P4

/* delta = alpha d_ref + beta d_old, and -delta beside it. The lookups and
 * sums touch no state and run for every packet (tna/README.md, "Stages"). */
control SpiePiTerms(inout eg_md_t eg_md) {
    /* alpha x d and beta x d in 2^-32 units of probability, from d's
     * signed high byte (d[31:8] in -128..127, or a catch-all that
     * saturates) and its low byte; entries from
     * bfrt_controller/spie/tables.py (term_entries). */
    @name(".SwitchEgress.set_alpha_hi")
    action set_alpha_hi(bit<32> term, bit<32> minus_term) {
        eg_md.alpha_hi = term;
        eg_md.minus_alpha_hi = minus_term;
    }

    @name(".SwitchEgress.set_alpha_lo")
    action set_alpha_lo(bit<32> term, bit<32> minus_term) {
        eg_md.alpha_lo = term;
        eg_md.minus_alpha_lo = minus_term;
    }

    @name(".SwitchEgress.set_beta_hi")
    action set_beta_hi(bit<32> term, bit<32> minus_term) {
        eg_md.beta_hi = term;
        eg_md.minus_beta_hi = minus_term;
    }

    @name(".SwitchEgress.set_beta_lo")
    action set_beta_lo(bit<32> term, bit<32> minus_term) {
        eg_md.beta_lo = term;
        eg_md.minus_beta_lo = minus_term;
    }

    @name(".SwitchEgress.alpha_hi")
    table alpha_hi {
        key = { eg_md.d_ref : ternary; }
        actions = { set_alpha_hi; }
        default_action = set_alpha_hi(0, 0);
        size = SPIE_TERM_ENTRIES;
    }

    @name(".SwitchEgress.alpha_lo")
    table alpha_lo {
        key = { eg_md.d_ref : ternary; }
        actions = { set_alpha_lo; }
        default_action = set_alpha_lo(0, 0);
        size = SPIE_TERM_ENTRIES;
    }

    @name(".SwitchEgress.beta_hi")
    table beta_hi {
        key = { eg_md.d_old : ternary; }
        actions = { set_beta_hi; }
        default_action = set_beta_hi(0, 0);
        size = SPIE_TERM_ENTRIES;
    }

    @name(".SwitchEgress.beta_lo")
    table beta_lo {
        key = { eg_md.d_old : ternary; }
        actions = { set_beta_lo; }
        default_action = set_beta_lo(0, 0);
        size = SPIE_TERM_ENTRIES;
    }

    /* Each entry also holds its term negated, so -delta is summed beside
     * delta instead of taking a stage to negate it. */
    action sum_terms() {
        eg_md.alpha_term = eg_md.alpha_hi + eg_md.alpha_lo;
        eg_md.beta_term = eg_md.beta_hi + eg_md.beta_lo;
        eg_md.minus_alpha_term = eg_md.minus_alpha_hi + eg_md.minus_alpha_lo;
        eg_md.minus_beta_term = eg_md.minus_beta_hi + eg_md.minus_beta_lo;
    }

    action sum_delta() {
        eg_md.delta = eg_md.alpha_term + eg_md.beta_term;
        eg_md.minus_delta = eg_md.minus_alpha_term + eg_md.minus_beta_term;
    }

    apply {
        alpha_hi.apply();
        alpha_lo.apply();
        beta_hi.apply();
        beta_lo.apply();
        sum_terms();
        sum_delta();
    }
}

/* A due step moves p by delta (restarting from 0 after an idle spell);
 * eg_md.prob is p after the step. */
control SpiePiProbability(in headers_t hdr, inout eg_md_t eg_md) {
    @name(".SwitchEgress.pi_prob")
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) pi_prob;

    /* p in [0, 2^32 - 1]: the stateful ALU's saturating add and subtract
     * keep it there. */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(pi_prob) prob_up = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = p |+| eg_md.delta;
            after = p;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(pi_prob) prob_down = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = p |-| eg_md.minus_delta;
            after = p;
        }
    };

    /* The first step after an idle spell (ingress saw no update for the
     * staleness limit) starts from p = 0, as ingress has been treating
     * the port, rather than from the p before the queue emptied. */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(pi_prob) prob_restart_up = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = eg_md.delta;
            after = eg_md.delta;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(pi_prob) prob_restart_down = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = 0;
            after = 0;
        }
    };

    apply {
        if (eg_md.tick == 1 && hdr.bridged.class_id == SPIE_BRIDGED_IDLE &&
                eg_md.delta[31:31] == 1) {
            eg_md.prob = prob_restart_down.execute(eg_md.slot);
        } else if (eg_md.tick == 1 && hdr.bridged.class_id == SPIE_BRIDGED_IDLE) {
            eg_md.prob = prob_restart_up.execute(eg_md.slot);
        } else if (eg_md.tick == 1 && eg_md.delta[31:31] == 1) {
            eg_md.prob = prob_down.execute(eg_md.slot);
        } else if (eg_md.tick == 1) {
            eg_md.prob = prob_up.execute(eg_md.slot);
        }
    }
}

#endif
