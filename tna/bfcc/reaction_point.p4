// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* BFCC's reaction point (seed 001, Algorithm 1 and Algorithm 2 lines
 * 15-19), for the ports facing a downstream BFCC switch: in ingress, a
 * packet to such a port reads the backpressure recorded for it, carries the
 * state and takes the high- or low-priority queue (BfccReactionIngress); in
 * egress, every RT(degree) flagged departures one leaves as a fake while
 * its original recirculates (BfccRateReduction). Included by bfcc.p4 after
 * its metadata. Every table, action, register and counter keeps the
 * control-plane name it had in SwitchIngress or SwitchEgress (@name),
 * which the controller, the model and the vectors use; the records
 * (bp_state, bp_recorded_ns) and the recirculation depth are the top
 * controls', which BfccMessageIn and SwitchEgress also write. */
#ifndef TOFCC_BFCC_REACTION_POINT_P4
#define TOFCC_BFCC_REACTION_POINT_P4

control BfccReactionIngress(inout headers_t hdr, inout ig_md_t ig_md,
                            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)
                           (Register<bit<16>, PortId_t> bp_state,
                            Register<bit<32>, PortId_t> bp_recorded_ns) {
    @name(".SwitchIngress.admitted_by_qid")
    Counter<bit<32>, qid_index_t>(BFCC_QIDS, CounterType_t.PACKETS) admitted_by_qid;

    RegisterAction<bit<16>, PortId_t, bit<16>>(bp_state) bp_state_read = {
        void apply(inout bit<16> state, out bit<16> key) {
            key = state;
        }
    };

    /* Expiry clears the record, so a port idle past the 32-bit timestamp
     * wrap cannot see an old record look fresh again. */
    RegisterAction<bit<16>, PortId_t, bit<16>>(bp_state) bp_state_expire = {
        void apply(inout bit<16> state, out bit<16> key) {
            state = 0;
            key = 0;
        }
    };

    RegisterAction<bit<32>, PortId_t, bit<32>>(bp_recorded_ns) bp_recorded_age = {
        void apply(inout bit<32> recorded, out bit<32> age) {
            age = ig_md.now_ns - recorded;
        }
    };

    /* Ports facing a downstream BFCC switch. bp_expiry_ns = 0: backpressure
     * holds until cleared. named_group_only = 1: only the named group's
     * packets carry the state (and are cut by fakes); 0 (the paper): every
     * packet to the port does. */
    @name(".SwitchIngress.react")
    action react(QueueId_t high_qid, QueueId_t low_qid, bit<32> bp_expiry_ns,
                 bit<1> named_group_only) {
        ig_md.high_qid = high_qid;
        ig_md.low_qid = low_qid;
        ig_md.bp_alive_max_ns = bp_expiry_ns - 1;
        ig_md.named_group_only = named_group_only;
    }

    @name(".SwitchIngress.reaction_point")
    table reaction_point {
        key = { ig_tm_md.ucast_egress_port : exact; }
        actions = { react; NoAction; }
        default_action = NoAction();
        size = TOFCC_PORTS;
    }

    /* age >= expiry <=> age |-| (expiry - 1) != 0, and never when expiry
     * is 0. In an action so the gateway tests an ALU result against 0. */
    action check_expiry() {
        ig_md.bp_overage_ns = ig_md.bp_age_ns |-| ig_md.bp_alive_max_ns;
    }

    action to_low_queue() {
        ig_tm_md.qid = ig_md.low_qid;
        hdr.bfcc_bridged.bp_degree = ig_md.bp_key[7:0];
    }

    action to_high_queue() {
        ig_tm_md.qid = ig_md.high_qid;
    }

    action to_high_queue_flagged() {
        ig_tm_md.qid = ig_md.high_qid;
        hdr.bfcc_bridged.bp_degree = ig_md.bp_key[7:0];
    }

    apply {
        if (reaction_point.apply().hit) {
            ig_md.bp_age_ns = bp_recorded_age.execute(ig_tm_md.ucast_egress_port);
            check_expiry();
            if (ig_md.bp_overage_ns != 0) {
                ig_md.bp_key = bp_state_expire.execute(ig_tm_md.ucast_egress_port);
            } else {
                ig_md.bp_key = bp_state_read.execute(ig_tm_md.ucast_egress_port);
            }
            /* Algorithm 1 (priorities as the prose says): while the
             * downstream switch reports congestion (degree and group
             * set), every packet to the port carries the state and
             * the named group takes the slowed low-priority queue. */
            if (ig_md.bp_key[7:0] != 0 && ig_md.bp_key[15:8] != 0) {
                if (ig_md.bp_key[15:8] == hdr.bridged.class_id[7:0]) {
                    to_low_queue();
                } else if (ig_md.named_group_only == 0) {
                    to_high_queue_flagged();
                } else {
                    to_high_queue();
                }
            } else {
                to_high_queue();
            }
            admitted_by_qid.count((qid_index_t)ig_tm_md.qid);
        }
    }
}

/* Reaction point first in the egress: a packet that leaves as a fake
 * carries the recirculation mirror, and a packet has only one mirror
 * (BfccCongestionPoint reports only from a departure that is no fake's). */
control BfccRateReduction(inout headers_t hdr, inout eg_md_t eg_md,
                          in egress_intrinsic_metadata_t eg_intr_md,
                          inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md)
                         (Register<bit<32>, recirc_slot_t> recirculation_depth) {
    @name(".SwitchEgress.flagged_departures")
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) flagged_departures;
    @name(".SwitchEgress.fakes_sent")
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) fakes_sent;
    /* Fakes not made because the pipe's recirculation was over its level:
     * the original left in the fake's slot. */
    @name(".SwitchEgress.recirculation_skips")
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) recirculation_skips;

    /* Real flagged packets sent on a port since its last fake. */
    @name(".SwitchEgress.rr_count")
    Register<bit<8>, PortId_t>(TOFCC_PORTS, 0) rr_count;

    RegisterAction<bit<8>, PortId_t, bit<1>>(rr_count) rr_count_step = {
        void apply(inout bit<8> sent, out bit<1> fake) {
            if (sent >= eg_md.rate_threshold_packets) {
                sent = 0;
                fake = 1;
            } else {
                sent = sent + 1;
                fake = 0;
            }
        }
    };

    /* RT per degree (controller defaults 9, 3, 1). No entry: no reduction. */
    @name(".SwitchEgress.set_rate_threshold")
    action set_rate_threshold(bit<8> rt_packets) {
        eg_md.rt_on = 1;
        eg_md.rate_threshold_packets = rt_packets;
    }

    @name(".SwitchEgress.no_rate_threshold")
    action no_rate_threshold() {
        eg_md.rt_on = 0;
    }

    @name(".SwitchEgress.rate_threshold")
    table rate_threshold {
        key = { hdr.bfcc_bridged.bp_degree : exact; }
        actions = { set_rate_threshold; no_rate_threshold; }
        default_action = no_rate_threshold();
        size = BFCC_DEGREES;
    }

    /* Per reaction port: the mirror session to its own pipe's recirculation
     * port, and that port's level: while the port's queue holds more than
     * level_cells, a fake's original leaves itself instead, so a full
     * recirculation port never drops one (issue 50, finding 3). No entry:
     * no fakes, since an original without a way back would be lost. */
    @name(".SwitchEgress.recirculate")
    action recirculate(MirrorId_t session, bit<32> level_cells) {
        eg_md.recirc_on = 1;
        eg_md.recirculation_session = session;
        eg_md.recirc_level_cells = level_cells;
    }

    @name(".SwitchEgress.no_recirculation")
    action no_recirculation() {
        eg_md.recirc_on = 0;
    }

    @name(".SwitchEgress.recirculation")
    table recirculation {
        key = { eg_intr_md.egress_port : exact; }
        actions = { recirculate; no_recirculation; }
        default_action = no_recirculation();
        size = TOFCC_PORTS;
    }

    RegisterAction<bit<32>, recirc_slot_t, bit<1>>(recirculation_depth) recirculation_room = {
        void apply(inout bit<32> depth, out bit<1> ok) {
            if (depth > eg_md.recirc_level_cells) {
                ok = 0;
            } else {
                ok = 1;
            }
        }
    };

    /* The original leaves as the fake; its egress mirror copy (the same
     * bytes) recirculates and is turned back into the real packet. */
    action make_fake() {
        hdr.ethernet.ether_type = ETHERTYPE_TOFCC_FAKE;
        eg_md.mirror_session = eg_md.recirculation_session;
        eg_md.mirror_pkt_type = PKT_TYPE_MIRROR_RECIRCULATE;
        eg_dprsr_md.mirror_type = MIRROR_TYPE_RECIRCULATE;
    }

    apply {
        rate_threshold.apply();
        recirculation.apply();
        if (eg_md.rt_on == 1 && eg_md.recirc_on == 1 && hdr.bfcc_bridged.bp_degree != 0) {
            flagged_departures.count(eg_intr_md.egress_port);
            eg_md.make_fake = rr_count_step.execute(eg_intr_md.egress_port);
        }
        if (eg_md.make_fake == 1) {
            eg_md.recirc_ok = recirculation_room.execute(0);
        }
        if (eg_md.make_fake == 1 && eg_md.recirc_ok == 1) {
            make_fake();
            fakes_sent.count(eg_intr_md.egress_port);
        } else if (eg_md.make_fake == 1) {
            recirculation_skips.count(eg_intr_md.egress_port);
        }
    }
}

#endif
