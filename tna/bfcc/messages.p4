// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* BFCC's switch-to-switch messages arriving in ingress (seed 001, 4.1,
 * 4.2.2): backpressure or a clear from a trusted port is recorded for the
 * port it came by, copied round the other pipes (bp_replicate), and
 * relayed to the named group's senders where the controller says so
 * (sender_notify); it is never forwarded. Included by bfcc.p4 after its
 * metadata. Every table, action and counter keeps the control-plane name it
 * had in SwitchIngress (@name), which the controller, the model and the
 * vectors use; the records (bp_state, bp_recorded_ns) are SwitchIngress's,
 * which the reaction point reads. */
#ifndef TOFCC_BFCC_MESSAGES_P4
#define TOFCC_BFCC_MESSAGES_P4

control BfccMessageIn(inout headers_t hdr, inout ig_md_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)
                     (Register<bit<16>, PortId_t> bp_state,
                      Register<bit<32>, PortId_t> bp_recorded_ns) {
    @name(".SwitchIngress.backpressure_received")
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) backpressure_received;

    RegisterAction<bit<16>, PortId_t, void>(bp_state) bp_state_write = {
        void apply(inout bit<16> state) {
            state = ig_md.bp_key;
        }
    };

    RegisterAction<bit<32>, PortId_t, void>(bp_recorded_ns) bp_recorded_write = {
        void apply(inout bit<32> recorded) {
            recorded = ig_md.now_ns;
        }
    };

    /* Sender reaction (seed 001 4.2.2, params.sender_reaction): a
     * backpressure or clear message about group g, accepted from a trusted
     * port, is relayed once to the host port g's senders sit behind, so
     * they can cut their rate as the switch does. The controller writes
     * one entry per (message type, group) for groups attached here: action
     * notify_senders with match_switch, consume with none. A miss (another
     * message type, a group not attached here) consumes the message too. */
    @name(".SwitchIngress.notify_senders")
    action notify_senders(PortId_t port, mac_addr_t src_mac, mac_addr_t dst_mac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
    }

    @name(".SwitchIngress.consume")
    action consume() {
        ig_dprsr_md.drop_ctl = 1;
    }

    @name(".SwitchIngress.sender_notify")
    table sender_notify {
        key = {
            hdr.feedback.msg_type : exact;
            hdr.feedback.class_id : exact;
        }
        actions = { notify_senders; consume; }
        default_action = consume();
        size = BFCC_SENDER_NOTIFY_ENTRIES;
    }

    /* Backpressure reaches every pipe the controller names: registers are
     * per pipe, and a sender's packets read bp_state in the ingress pipe of
     * the port they arrive on. On a reaction port, an original message is
     * also copied to the next pipe (ring order, as the controller writes
     * it), pipes_left pipes after that one; on a pipe's recirculation port
     * a copy from another pipe records the origin's state and goes on to
     * the next pipe while pipes remain. No entry: one pipe, no copies. */
    @name(".SwitchIngress.replicate")
    action replicate(MirrorId_t session, bit<8> pipes_left) {
        ig_md.replicate = 1;
        ig_md.replica_session = session;
        ig_md.replica_left = pipes_left;
    }

    @name(".SwitchIngress.relay_replica")
    action relay_replica(MirrorId_t session) {
        ig_md.replica = 1;
        ig_md.replica_session = session;
        ig_md.replica_left = hdr.feedback.flow_protocol - 1;
        ig_md.bp_port = hdr.feedback.flow_src_port;
    }

    @name(".SwitchIngress.bp_replicate")
    table bp_replicate {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { replicate; relay_replica; NoAction; }
        default_action = NoAction();
        size = TOFCC_PORTS;
    }

    action mirror_replica() {
        ig_dprsr_md.mirror_type = MIRROR_TYPE_BP_REPLICA;
        ig_md.mirror_pkt_type = PKT_TYPE_MIRROR_BP_REPLICA;
    }

    /* Switch-to-switch feedback is hop by hop: consumed here, or relayed
     * to the named group's senders (sender_notify), never forwarded toward
     * another switch; a copy from another pipe is consumed once recorded,
     * and relayed by the original only. */
    apply {
        bp_replicate.apply();
        if (ig_md.replica == 1) {
            consume();
            if (hdr.feedback.flow_protocol != 0) {
                mirror_replica();
            }
        } else {
            sender_notify.apply();
            if (ig_md.replicate == 1) {
                mirror_replica();
            }
        }
        if (hdr.feedback.msg_type == FEEDBACK_TYPE_BACKPRESSURE) {
            ig_md.bp_key = hdr.feedback.class_id[7:0] ++ hdr.feedback.degree;
            bp_state_write.execute(ig_md.bp_port[8:0]);
            bp_recorded_write.execute(ig_md.bp_port[8:0]);
            if (ig_md.replica == 0) {
                backpressure_received.count(ig_intr_md.ingress_port);
            }
        } else if (hdr.feedback.msg_type == FEEDBACK_TYPE_BACKPRESSURE_CLEAR) {
            ig_md.bp_key = 0;
            bp_state_write.execute(ig_md.bp_port[8:0]);
            if (ig_md.replica == 0) {
                backpressure_received.count(ig_intr_md.ingress_port);
            }
        }
    }
}

#endif
