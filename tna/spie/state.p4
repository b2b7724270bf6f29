// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* PIE's state in ingress (spie.p4's header comment): each pipe's copy of
 * the port's p, the time of its last update and, if that update said
 * congested, the time again; written by the state updates egress sends
 * round the pipes, read by the port's packets. Included by spie.p4 after
 * its metadata. The registers keep the control-plane names they had in
 * SwitchIngress (@name), which the controller, the model and the vectors
 * use. */
#ifndef TOFCC_SPIE_STATE_P4
#define TOFCC_SPIE_STATE_P4

/* An update accepted on a recirculation port (SwitchIngress's
 * update_ports) is taken in; a packet to an S-PIE/PIE port reads p,
 * whether the state is fresh and whether it is congested. */
control SpieState(inout headers_t hdr, inout ig_md_t ig_md) {
    @name(".SwitchIngress.prob")
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) prob;
    @name(".SwitchIngress.state")
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) state;
    @name(".SwitchIngress.congested")
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) congested;

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(prob) prob_write = {
        void apply(inout bit<32> p) {
            p = hdr.feedback.rate;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(prob) prob_read = {
        void apply(inout bit<32> p, out bit<32> now_p) {
            now_p = p;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(state) state_write = {
        void apply(inout bit<32> s) {
            s = hdr.feedback.target_rate;
        }
    };

    /* The update's time when it said congested, else 0. */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(congested) congested_set = {
        void apply(inout bit<32> c) {
            c = hdr.feedback.target_rate;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(congested) congested_clear = {
        void apply(inout bit<32> c) {
            c = 0;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<1>>(congested) congested_read = {
        void apply(inout bit<32> c, out bit<1> yes) {
            if (c == 0) {
                yes = 0;
            } else if (ig_md.stale_before_ticks - c < 0x80000000) {
                yes = 0;
            } else {
                yes = 1;
            }
        }
    };

    /* An update older than the staleness limit is not fresh: no update
     * came because nothing departed, so the queue was empty. */
    RegisterAction<bit<32>, spie_slot_t, bit<1>>(state) state_read = {
        void apply(inout bit<32> s, out bit<1> fresh) {
            if (ig_md.stale_before_ticks - s < 0x80000000) {
                fresh = 0;
            } else {
                fresh = 1;
            }
        }
    };

    /* No update for the staleness limit: the queue was empty, so the PI
     * step this packet may take in egress restarts p from 0, the p ingress
     * already applies (bridged in class_id, which S-PIE does not use). */
    action mark_idle() {
        hdr.bridged.class_id = SPIE_BRIDGED_IDLE;
    }

    apply {
        /* The update's writes sit outside SwitchIngress's if/else chain
         * (this control is applied after it): bf-p4c on Tofino places the
         * rest of a chain it has started before the tables beside it, and
         * these writes must share a stage with the reads (one register, one
         * stage). Inside the chain they held the random hook and the epoch
         * back a stage, and the verdict with them: 10 ingress stages on
         * Tofino instead of 9 (tna/spie/README.md, "Stages"). */
        if (!ig_md.forged && hdr.feedback.isValid() &&
                hdr.feedback.msg_type == FEEDBACK_TYPE_SPIE_STATE && ig_md.update_port == 1) {
            prob_write.execute(hdr.feedback.class_id[7:0]);
            state_write.execute(hdr.feedback.class_id[7:0]);
            if (hdr.feedback.degree == 1) {
                congested_set.execute(hdr.feedback.class_id[7:0]);
            } else {
                congested_clear.execute(hdr.feedback.class_id[7:0]);
            }
        }
        if (ig_md.mode != SPIE_MODE_NONE) {
            ig_md.prob = prob_read.execute(ig_md.slot);
            ig_md.fresh = state_read.execute(ig_md.slot);
            ig_md.congested = congested_read.execute(ig_md.slot);
        }
        if (ig_md.mode != SPIE_MODE_NONE && ig_md.fresh == 0) {
            mark_idle();
        }
    }
}

#endif
