// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* BFCC's congestion point (seed 001, Algorithm 2 lines 1-13), in the egress
 * of a monitored port: the congestion degree from the queue's depth and
 * sojourn (BfccCongestionPoint), then the congested sender group, the
 * running best of the groups' occupancy in the current window, and the
 * backpressure message to that group's upstream switch when (group,
 * degree) changes or a refresh epoch begins, or a clear when congestion
 * ends (BfccCongestedGroup). Included by bfcc.p4 after its metadata. Every
 * table, action and register keeps the control-plane name it had in
 * SwitchEgress (@name), which the controller, the model and the vectors
 * use. */
#ifndef TOFCC_BFCC_CONGESTION_POINT_P4
#define TOFCC_BFCC_CONGESTION_POINT_P4

/* cp_state: CP_CONGESTED with its degree, CP_RECOVERED, or CP_IDLE (an
 * unmonitored port, a fake's slot). */
control BfccCongestionPoint(in headers_t hdr, inout eg_md_t eg_md,
                            in egress_intrinsic_metadata_t eg_intr_md,
                            in egress_intrinsic_metadata_from_parser_t eg_prsr_md) {
    /* Monitored egress ports and their controller-written thresholds, in
     * the chip's units (the controller converts the paper's packets and
     * microseconds). refresh_mask selects bits 24:19 of the ns clock: an
     * unchanged message is repeated at the first report of each new epoch
     * (0: never repeated). */
    @name(".SwitchEgress.monitor")
    action monitor(bit<4> cp_id, bit<32> congestion_threshold_cells, bit<32> t_min_ns,
                   bit<32> t_max_ns, bit<16> window_packets, bit<32> refresh_mask) {
        eg_md.cp_on = 1;
        eg_md.cp_id = cp_id;
        /* Here rather than in classify(): with the group in the low byte of
         * a 16-bit class_id, classify's stage had no room left for them. */
        eg_md.vq_index = cp_id ++ hdr.bridged.class_id[7:0];
        eg_md.vq_first_key = 16w0 ++ BFCC_KEY_FIRST_COUNT ++ hdr.bridged.class_id[7:0];
        eg_md.congestion_threshold_cells = congestion_threshold_cells;
        eg_md.t_min_ns = t_min_ns;
        eg_md.t_max_ns = t_max_ns;
        eg_md.window_packets = (bit<32>)window_packets;
        eg_md.bp_epoch_ns = eg_prsr_md.global_tstamp[31:0] & refresh_mask;
    }

    @name(".SwitchEgress.unmonitored")
    action unmonitored() {
        eg_md.cp_on = 0;
    }

    @name(".SwitchEgress.congestion_point")
    table congestion_point {
        key = { eg_intr_md.egress_port : exact; }
        actions = { monitor; unmonitored; }
        default_action = unmonitored();
        size = TOFCC_PORTS;
    }

    /* Threshold minus measure in the ALU, so the gateways below test one
     * bit (measure > threshold while both stay below 2^31). */
    action classify() {
        eg_md.depth_margin_cells = eg_md.congestion_threshold_cells - eg_md.queue.depth_cells;
        eg_md.t_min_margin_ns = eg_md.t_min_ns - eg_md.queue.sojourn_ns;
        eg_md.t_max_margin_ns = eg_md.t_max_ns - eg_md.queue.sojourn_ns;
    }

    action congested(bit<8> degree) {
        eg_md.cp_state = CP_CONGESTED;
        eg_md.degree = degree;
        eg_md.bp_degree = degree;
        eg_md.bp_msg_type = (bit<8>)FEEDBACK_TYPE_BACKPRESSURE;
    }

    action recovered() {
        eg_md.cp_state = CP_RECOVERED;
        eg_md.bp_degree = 0;
        eg_md.bp_msg_type = (bit<8>)FEEDBACK_TYPE_BACKPRESSURE_CLEAR;
        eg_md.bp_report = 1;
    }

    apply {
        congestion_point.apply();
        if (eg_md.cp_on == 1) {
            classify();
        }
        /* A departure in a fake's slot neither counts nor reports: its
         * real packet recirculates and counts when it departs, and the
         * fake's mirror is taken. (One whose original left itself,
         * recirculation being over its level, is not counted either:
         * the level's test ends a stage later than this gate.) */
        if (eg_md.cp_on == 1 && eg_md.make_fake == 0) {
            if (eg_md.depth_margin_cells[31:31] == 1) {
                if (eg_md.t_max_margin_ns[31:31] == 1) {
                    congested(BFCC_DEGREE_SEVERE);
                } else if (eg_md.t_min_margin_ns[31:31] == 1) {
                    congested(BFCC_DEGREE_MODERATE);
                } else {
                    congested(BFCC_DEGREE_MILD);
                }
            } else {
                recovered();
            }
        }
    }
}

/* From a congested departure of a grouped packet (or a recovery): the
 * group to name and whether a message goes upstream. */
control BfccCongestedGroup(in headers_t hdr, inout eg_md_t eg_md,
                           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    /* Windows: a window is window_packets congested departures, or ends
     * early at the first departure that sees no congestion. Per
     * (congestion point, group): the group's key and the window it belongs
     * to. Per congestion point: the best key of the window. Each pair is one
     * register entry, so one RegisterAction reads and updates both halves. */
    @name(".SwitchEgress.occupancy_window")
    Register<bfcc_window_t, cp_id_t>(BFCC_CONGESTION_POINTS) occupancy_window;
    @name(".SwitchEgress.vq_occupancy")
    Register<bfcc_tagged_key_t, vq_index_t>(BFCC_VQ_SLOTS) vq_occupancy;
    @name(".SwitchEgress.congested_vq")
    Register<bfcc_tagged_key_t, cp_id_t>(BFCC_CONGESTION_POINTS) congested_vq;
    /* Last message sent: group ++ refresh epoch ++ degree, 0 = clear. */
    @name(".SwitchEgress.bp_last_sent")
    Register<bit<16>, cp_id_t>(BFCC_CONGESTION_POINTS, 0) bp_last_sent;

    RegisterAction<bfcc_window_t, cp_id_t, bit<32>>(occupancy_window) occupancy_window_count = {
        void apply(inout bfcc_window_t w, out bit<32> window_id) {
            /* packets 0: never used since reset, i.e. closed, so the first
             * window is 1 and no register's initial window 0 looks current. */
            if (w.packets == 0 || w.packets >= eg_md.window_packets) {
                w.packets = 1;
                w.id = w.id + 1;
            } else {
                w.packets = w.packets + 1;
            }
            window_id = w.id;
        }
    };

    RegisterAction<bfcc_window_t, cp_id_t, void>(occupancy_window) occupancy_window_close = {
        void apply(inout bfcc_window_t w) {
            w.packets = BFCC_WINDOW_CLOSED;
        }
    };

    /* A key from an older window restarts at count 1. */
    RegisterAction<bfcc_tagged_key_t, vq_index_t, bit<32>>(vq_occupancy) vq_occupancy_step = {
        void apply(inout bfcc_tagged_key_t v, out bit<32> key) {
            if (v.window_id == eg_md.window_id) {
                v.key = v.key - BFCC_KEY_ONE_COUNT;
            } else {
                v.key = eg_md.vq_first_key;
            }
            v.window_id = eg_md.window_id;
            key = v.key;
        }
    };

    /* Running best (smallest key) of the window. The first departure of a
     * window overwrites the previous window's best, so a group that stopped
     * sending cannot hold it. */
    RegisterAction<bfcc_tagged_key_t, cp_id_t, bit<32>>(congested_vq) congested_vq_step = {
        void apply(inout bfcc_tagged_key_t b, out bit<32> best) {
            if (b.window_id != eg_md.window_id || eg_md.vq_key < b.key) {
                b.key = eg_md.vq_key;
            }
            b.window_id = eg_md.window_id;
            best = b.key;
        }
    };

    /* A clear names the group the last message named: the best key holds
     * it, since every update of the best also sends or records a message. */
    RegisterAction<bfcc_tagged_key_t, cp_id_t, bit<32>>(congested_vq) congested_vq_read = {
        void apply(inout bfcc_tagged_key_t b, out bit<32> best) {
            best = b.key;
        }
    };

    RegisterAction<bit<16>, cp_id_t, bit<16>>(bp_last_sent) bp_last_sent_swap = {
        void apply(inout bit<16> last, out bit<16> previous) {
            previous = last;
            last = eg_md.bp_key;
        }
    };

    action tag() {
        eg_md.bp_tag = eg_md.bp_epoch_ns[24:19] ++ eg_md.degree[1:0];
        eg_md.bp_report = 1;
    }

    action name_best() {
        eg_md.bp_group = eg_md.best_key[7:0];
        eg_md.bp_key = eg_md.best_key[7:0] ++ eg_md.bp_tag;
    }

    action name_last() {
        eg_md.bp_group = eg_md.best_key[7:0];
        eg_md.bp_key = 0;
    }

    /* Where a group's upstream switch is: one mirror session per upstream
     * port, truncating the copy to 14 bytes, and the MACs of that link. */
    @name(".SwitchEgress.to_upstream")
    action to_upstream(MirrorId_t session_id, mac_addr_t src_mac, mac_addr_t dst_mac) {
        eg_md.mirror_session = session_id;
        eg_md.mirror_pkt_type = PKT_TYPE_MIRROR_BACKPRESSURE;
        eg_md.bp_src_mac = src_mac;
        eg_md.bp_dst_mac = dst_mac;
        eg_dprsr_md.mirror_type = MIRROR_TYPE_BACKPRESSURE;
    }

    @name(".SwitchEgress.bp_upstream")
    table bp_upstream {
        key = { eg_md.bp_group : exact; }
        actions = { to_upstream; NoAction; }
        default_action = NoAction();
        size = BFCC_GROUPS;
    }

    apply {
        /* Ungrouped traffic neither counts nor names a group. */
        if (eg_md.cp_state == CP_CONGESTED && hdr.bridged.class_id != 0) {
            eg_md.window_id = occupancy_window_count.execute(eg_md.cp_id);
        } else if (eg_md.cp_state == CP_RECOVERED) {
            occupancy_window_close.execute(eg_md.cp_id);
        }
        if (eg_md.cp_state == CP_CONGESTED && hdr.bridged.class_id != 0) {
            eg_md.vq_key = vq_occupancy_step.execute(eg_md.vq_index);
            tag();
        }
        if (eg_md.cp_state == CP_CONGESTED && hdr.bridged.class_id != 0) {
            eg_md.best_key = congested_vq_step.execute(eg_md.cp_id);
        } else if (eg_md.cp_state == CP_RECOVERED) {
            eg_md.best_key = congested_vq_read.execute(eg_md.cp_id);
        }
        if (eg_md.cp_state == CP_CONGESTED && hdr.bridged.class_id != 0) {
            name_best();
        } else if (eg_md.cp_state == CP_RECOVERED) {
            name_last();
        }

        /* One message per change of (group, epoch, degree), and one
         * clear after the last backpressure. */
        if (eg_md.bp_report == 1) {
            eg_md.bp_prev_key = bp_last_sent_swap.execute(eg_md.cp_id);
        }
        if (eg_md.bp_report == 1 && eg_md.bp_prev_key != eg_md.bp_key) {
            bp_upstream.apply();
        }
    }
}

#endif
