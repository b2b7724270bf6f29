/* BFCC: switch-to-switch backpressure (seed 001, sections 3.2, 4.1, 4.2,
 * Algorithms 1-2). One program plays both roles; which ports play which
 * role is decided by the controller's tables. tna/bfcc/README.md explains
 * the choices below and what they cost.
 *
 * Congestion point (egress of a monitored port, table congestion_point):
 *   depth > CONGESTION_THRESHOLD -> degree from the sojourn time:
 *     sojourn <= T_min: 1 (mild); T_min < sojourn <= T_max: 2 (moderate);
 *     sojourn > T_max: 3 (severe).
 *   Occupancy per sender group = the group's departures from congested
 *   queues within the current window (window_pkts congested departures);
 *   the congested group is the running maximum of (occupancy, group).
 *   A backpressure message (feedback_h over Ethernet) goes to that group's
 *   upstream switch when (group, degree) differs from the last one sent, or
 *   the last one is refresh_ns old; a clear message when congestion ends.
 * Reaction point (ingress/egress of a port facing a downstream switch,
 * table reaction_point):
 *   backpressure from trusted ports records (group, degree, time) per port;
 *   packets of the named group go to the low-priority queue, everything
 *   else to the high-priority queue; after every RT(degree) real packets of
 *   the group one leaves as a fake while the real one recirculates.
 */
#include "../include/arch.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/test_hooks.p4"

#define BFCC_PORTS 512
#define BFCC_GROUPS 256
#define BFCC_CONGESTION_POINTS 16
#define BFCC_VQ_SLOTS 4096
#define BFCC_QIDS 128

const bit<8> BFCC_DEGREE_MILD = 1;
const bit<8> BFCC_DEGREE_MODERATE = 2;
const bit<8> BFCC_DEGREE_SEVERE = 3;
/* Written into occupancy_window_pkts by a non-congested departure: no window
 * is longer (window_pkts is 8 bits), so the next congested departure opens a
 * new window. */
const bit<8> BFCC_WINDOW_CLOSED = 0xff;

typedef bit<4>  cp_id_t;
typedef bit<12> vq_index_t;   /* cp_id ++ group */
typedef bit<7>  qid_index_t;  /* QueueId_t of either chip */

struct ig_md_t {
    parsed_md_t parsed;
    bool        forged;
    bit<32>     now_ns;
    bit<16>     bp_key;        /* group ++ degree; 0 = no backpressure */
    QueueId_t   high_qid;
    QueueId_t   low_qid;
    bit<32>     bp_expiry_ns;
    bit<32>     bp_age_ns;
    bit<32>     bp_life_left_ns;
    bit<1>      bp_expired;
}

struct eg_md_t {
    parsed_md_t parsed;
    queue_md_t  queue;
    bit<32>     now_ns;
    /* reaction point */
    bit<8>      rate_threshold;
    MirrorId_t  recirculation_session;
    bit<1>      make_fake;
    /* congestion point */
    cp_id_t     cp_id;
    bit<32>     congestion_threshold_cells;
    bit<32>     t_min_ns;
    bit<32>     t_max_ns;
    bit<8>      window_pkts;
    bit<32>     refresh_ns;
    bit<32>     depth_over_cells;
    bit<32>     sojourn_over_min_ns;
    bit<32>     sojourn_over_max_ns;
    bit<8>      degree;
    bit<1>      new_window;
    bit<16>     window_id;
    vq_index_t  vq_index;
    bit<1>      vq_same_window;
    bit<8>      vq_count;
    bit<16>     vq_key;         /* count ++ ~group: larger wins, ties to the lower id */
    bit<16>     max_key;
    bit<1>      bp_report;
    class_id_t  bp_group;
    bit<16>     bp_key;
    bit<16>     bp_last_key;
    bit<32>     refresh_at_ns;
    bit<1>      bp_send;
    bit<8>      bp_msg_type;
    bit<8>      bp_degree;
    /* mirror header fields */
    MirrorId_t  mirror_session;
    pkt_type_t  mirror_pkt_type;
    mac_addr_t  bp_src_mac;
    mac_addr_t  bp_dst_mac;
}

parser SwitchIngressParser(packet_in pkt, out headers_t hdr, out ig_md_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    IngressPrefixParser() prefix_parser;
    HeaderParser() header_parser;

    state start {
        prefix_parser.apply(pkt, ig_intr_md);
        header_parser.apply(pkt, hdr, ig_md.parsed);
        transition accept;
    }
}

control SwitchIngress(inout headers_t hdr, inout ig_md_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    FeedbackTrust() trust;
    Ipv4Forward() forward;

    Counter<bit<32>, PortId_t>(BFCC_PORTS, CounterType_t.PACKETS) fake_drops;
    Counter<bit<32>, PortId_t>(BFCC_PORTS, CounterType_t.PACKETS) backpressure_received;
    Counter<bit<32>, qid_index_t>(BFCC_QIDS, CounterType_t.PACKETS) admitted_by_qid;

    /* What the downstream switch on each port last said: group ++ degree
     * (0 after a clear or once expired), and when it said it. */
    Register<bit<16>, PortId_t>(BFCC_PORTS, 0) bp_state;
    Register<bit<32>, PortId_t>(BFCC_PORTS, 0) bp_recorded_ns;

    RegisterAction<bit<16>, PortId_t, void>(bp_state) bp_state_write = {
        void apply(inout bit<16> state) {
            state = ig_md.bp_key;
        }
    };

    /* Expiry clears the record, so a port idle past the 32-bit timestamp
     * wrap cannot see an old record look fresh again. */
    RegisterAction<bit<16>, PortId_t, bit<16>>(bp_state) bp_state_read = {
        void apply(inout bit<16> state, out bit<16> key) {
            if (ig_md.bp_expired == 1) {
                state = 0;
            }
            key = state;
        }
    };

    RegisterAction<bit<32>, PortId_t, void>(bp_recorded_ns) bp_recorded_write = {
        void apply(inout bit<32> recorded) {
            recorded = ig_md.now_ns;
        }
    };

    RegisterAction<bit<32>, PortId_t, bit<32>>(bp_recorded_ns) bp_recorded_age = {
        void apply(inout bit<32> recorded, out bit<32> age) {
            age = ig_md.now_ns - recorded;
        }
    };

    /* Virtual queue module: every sender belongs to one group (0 = none),
     * the same division on every switch. */
    action set_group(class_id_t group) {
        hdr.bridged.class_id = group;
    }

    table sender_group {
        key = { hdr.ipv4.src_addr : lpm; }
        actions = { set_group; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    /* Ports facing a downstream BFCC switch. bp_expiry_ns = 0: backpressure
     * holds until cleared. */
    action react(QueueId_t high_qid, QueueId_t low_qid, bit<32> bp_expiry_ns) {
        ig_md.high_qid = high_qid;
        ig_md.low_qid = low_qid;
        ig_md.bp_expiry_ns = bp_expiry_ns;
    }

    table reaction_point {
        key = { ig_tm_md.ucast_egress_port : exact; }
        actions = { react; NoAction; }
        default_action = NoAction();
        size = BFCC_PORTS;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    apply {
        hdr.bridged.setValid();
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED;
        hdr.bridged.class_id = 0;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr;
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr;
        hdr.bfcc_bridged.setValid();
        hdr.bfcc_bridged.bp_degree = 0;
        ig_md.now_ns = ig_intr_md.ingress_mac_tstamp[31:0];
        ig_md.bp_expired = 0;

        trust.apply(hdr, ig_intr_md, ig_dprsr_md, ig_md.forged);
        if (ig_md.forged) {
            /* already dropped and counted by trust */
        } else if (hdr.ethernet.ether_type == ETHERTYPE_TOFCC_FAKE) {
            /* A fake has done its job by taking a slot on the link. */
            drop();
            fake_drops.count(ig_intr_md.ingress_port);
        } else if (hdr.feedback.isValid() && !hdr.ipv4.isValid()) {
            /* Switch-to-switch feedback is hop by hop: consumed here. */
            drop();
            if (hdr.feedback.msg_type == FEEDBACK_TYPE_BACKPRESSURE) {
                ig_md.bp_key = hdr.feedback.class_id ++ hdr.feedback.degree;
                bp_state_write.execute(ig_intr_md.ingress_port);
                bp_recorded_write.execute(ig_intr_md.ingress_port);
                backpressure_received.count(ig_intr_md.ingress_port);
            } else if (hdr.feedback.msg_type == FEEDBACK_TYPE_BACKPRESSURE_CLEAR) {
                ig_md.bp_key = 0;
                bp_state_write.execute(ig_intr_md.ingress_port);
                backpressure_received.count(ig_intr_md.ingress_port);
            }
        } else {
            forward.apply(hdr, ig_tm_md, ig_dprsr_md);
            if (hdr.ipv4.isValid() && !hdr.feedback.isValid() && ig_dprsr_md.drop_ctl == 0) {
                sender_group.apply();
                /* Admission control (Algorithm 1, as the prose says): the
                 * named group to the slowed low-priority queue. */
                if (reaction_point.apply().hit) {
                    ig_md.bp_age_ns = bp_recorded_age.execute(ig_tm_md.ucast_egress_port);
                    /* age >= expiry as a saturating difference tested
                     * against 0, which a gateway compares cheaply. */
                    ig_md.bp_life_left_ns = ig_md.bp_expiry_ns |-| ig_md.bp_age_ns;
                    if (ig_md.bp_expiry_ns != 0 && ig_md.bp_life_left_ns == 0) {
                        ig_md.bp_expired = 1;
                    }
                    ig_md.bp_key = bp_state_read.execute(ig_tm_md.ucast_egress_port);
                    if (hdr.bridged.class_id != 0 && ig_md.bp_key[7:0] != 0
                            && ig_md.bp_key[15:8] == hdr.bridged.class_id) {
                        ig_tm_md.qid = ig_md.low_qid;
                        hdr.bfcc_bridged.bp_degree = ig_md.bp_key[7:0];
                    } else {
                        ig_tm_md.qid = ig_md.high_qid;
                    }
                    admitted_by_qid.count((qid_index_t)ig_tm_md.qid);
                }
            }
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.bridged);
        pkt.emit(hdr.bfcc_bridged);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.feedback);
    }
}

/* Egress sees a bridged packet, a backpressure copy (mirror header + the
 * Ethernet header the session kept) or a copy bound for recirculation
 * (mirror header + the whole fake, whose IPv4 header is put right). */
parser SwitchEgressParser(packet_in pkt, out headers_t hdr, out eg_md_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    HeaderParser() header_parser;

    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<pkt_type_t>()) {
            PKT_TYPE_MIRROR_BACKPRESSURE: parse_backpressure_copy;
            PKT_TYPE_MIRROR_RECIRCULATE: parse_recirculate_copy;
            default: parse_bridged;
        }
    }

    state parse_bridged {
        pkt.extract(hdr.bridged);
        pkt.extract(hdr.bfcc_bridged);
        header_parser.apply(pkt, hdr, eg_md.parsed);
        transition accept;
    }

    state parse_backpressure_copy {
        pkt.extract(hdr.bp_mirror);
        pkt.extract(hdr.ethernet);
        transition accept;
    }

    state parse_recirculate_copy {
        pkt.extract(hdr.recirc_mirror);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_md_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    QueueMetadataHook() queue_hook;

    Counter<bit<32>, PortId_t>(BFCC_PORTS, CounterType_t.PACKETS) flagged_departures;
    Counter<bit<32>, PortId_t>(BFCC_PORTS, CounterType_t.PACKETS) fakes_sent;

    /* ---- reaction point: rate reduction (Algorithm 2, lines 15-19) ---- */

    /* Real packets of the flagged group sent on a port since its last fake. */
    Register<bit<8>, PortId_t>(BFCC_PORTS, 0) rr_count;

    RegisterAction<bit<8>, PortId_t, bit<1>>(rr_count) rr_count_step = {
        void apply(inout bit<8> sent, out bit<1> fake) {
            if (sent >= eg_md.rate_threshold) {
                sent = 0;
                fake = 1;
            } else {
                sent = sent + 1;
                fake = 0;
            }
        }
    };

    /* RT per degree (controller defaults 9, 3, 1) and the mirror session
     * whose port is a recirculation port. No entry: no reduction. */
    action set_rate_threshold(bit<8> packets, MirrorId_t recirculation_session) {
        eg_md.rate_threshold = packets;
        eg_md.recirculation_session = recirculation_session;
    }

    table rate_threshold {
        key = { hdr.bfcc_bridged.bp_degree : exact; }
        actions = { set_rate_threshold; NoAction; }
        default_action = NoAction();
        size = 4;
    }

    /* The original leaves as the fake; its egress mirror copy (the same
     * bytes) recirculates and is turned back into the real packet. */
    action make_fake() {
        hdr.ethernet.ether_type = ETHERTYPE_TOFCC_FAKE;
        eg_md.mirror_session = eg_md.recirculation_session;
        eg_md.mirror_pkt_type = PKT_TYPE_MIRROR_RECIRCULATE;
        eg_dprsr_md.mirror_type = MIRROR_TYPE_RECIRCULATE;
    }

    /* The copy goes through ingress again, which routes it again: undo this
     * pass's TTL decrement so the real packet leaves with one hop's worth. */
    action restore_real() {
        hdr.ethernet.ether_type = ETHERTYPE_IPV4;
        hdr.ipv4.ttl = hdr.ipv4.ttl + 1;
    }

    /* ---- congestion point (Algorithm 2, lines 1-13) ---- */

    /* Windows: a window is window_pkts congested departures, or ends early
     * at the first departure that sees no congestion. */
    Register<bit<8>, cp_id_t>(BFCC_CONGESTION_POINTS, 0) occupancy_window_pkts;
    Register<bit<16>, cp_id_t>(BFCC_CONGESTION_POINTS, 0) occupancy_window;
    /* Per (congestion point, group): window the count belongs to, count. */
    Register<bit<16>, vq_index_t>(BFCC_VQ_SLOTS, 0) vq_window;
    Register<bit<8>, vq_index_t>(BFCC_VQ_SLOTS, 0) vq_departures;
    /* Running maximum of count ++ ~group within the window. */
    Register<bit<16>, cp_id_t>(BFCC_CONGESTION_POINTS, 0) congested_vq;
    /* Last message sent (group ++ degree, 0 = clear) and when to repeat it. */
    Register<bit<16>, cp_id_t>(BFCC_CONGESTION_POINTS, 0) bp_last_sent;
    Register<bit<32>, cp_id_t>(BFCC_CONGESTION_POINTS, 0) bp_refresh_at_ns;

    RegisterAction<bit<8>, cp_id_t, bit<1>>(occupancy_window_pkts) occupancy_window_pkts_count = {
        void apply(inout bit<8> pkts, out bit<1> new_window) {
            if (pkts >= eg_md.window_pkts) {
                pkts = 1;
                new_window = 1;
            } else {
                pkts = pkts + 1;
                new_window = 0;
            }
        }
    };

    RegisterAction<bit<8>, cp_id_t, void>(occupancy_window_pkts) occupancy_window_pkts_close = {
        void apply(inout bit<8> pkts) {
            pkts = BFCC_WINDOW_CLOSED;
        }
    };

    RegisterAction<bit<16>, cp_id_t, bit<16>>(occupancy_window) occupancy_window_step = {
        void apply(inout bit<16> window_id, out bit<16> current) {
            if (eg_md.new_window == 1) {
                window_id = window_id + 1;
            }
            current = window_id;
        }
    };

    RegisterAction<bit<16>, vq_index_t, bit<1>>(vq_window) vq_window_swap = {
        void apply(inout bit<16> window_id, out bit<1> same) {
            if (window_id == eg_md.window_id) {
                same = 1;
            } else {
                same = 0;
            }
            window_id = eg_md.window_id;
        }
    };

    RegisterAction<bit<8>, vq_index_t, bit<8>>(vq_departures) vq_departures_step = {
        void apply(inout bit<8> count, out bit<8> new_count) {
            if (eg_md.vq_same_window == 1) {
                count = count |+| 1;
            } else {
                count = 1;
            }
            new_count = count;
        }
    };

    /* The first departure of a window overwrites the previous window's
     * maximum, so a group that stopped sending cannot hold it. */
    RegisterAction<bit<16>, cp_id_t, bit<16>>(congested_vq) congested_vq_step = {
        void apply(inout bit<16> best, out bit<16> result) {
            if (eg_md.new_window == 1 || eg_md.vq_key > best) {
                best = eg_md.vq_key;
            }
            result = best;
        }
    };

    RegisterAction<bit<16>, cp_id_t, bit<16>>(bp_last_sent) bp_last_sent_swap = {
        void apply(inout bit<16> last, out bit<16> previous) {
            previous = last;
            last = eg_md.bp_key;
        }
    };

    RegisterAction<bit<32>, cp_id_t, void>(bp_refresh_at_ns) bp_refresh_restart = {
        void apply(inout bit<32> at) {
            at = eg_md.refresh_at_ns;
        }
    };

    /* Due once now - at is below 2^31 (wrap-safe for refresh_ns < 2^31). */
    RegisterAction<bit<32>, cp_id_t, bit<1>>(bp_refresh_at_ns) bp_refresh_check = {
        void apply(inout bit<32> at, out bit<1> due) {
            if (eg_md.now_ns - at < 0x80000000) {
                at = eg_md.refresh_at_ns;
                due = 1;
            } else {
                due = 0;
            }
        }
    };

    /* Monitored egress ports and their controller-written thresholds.
     * refresh_ns = 0: an unchanged message is never repeated. */
    action monitor(bit<4> cp_id, bit<32> congestion_threshold_cells, bit<32> t_min_ns,
                   bit<32> t_max_ns, bit<8> window_pkts, bit<32> refresh_ns) {
        eg_md.cp_id = cp_id;
        eg_md.congestion_threshold_cells = congestion_threshold_cells;
        eg_md.t_min_ns = t_min_ns;
        eg_md.t_max_ns = t_max_ns;
        eg_md.window_pkts = window_pkts;
        eg_md.refresh_ns = refresh_ns;
    }

    table congestion_point {
        key = { eg_intr_md.egress_port : exact; }
        actions = { monitor; NoAction; }
        default_action = NoAction();
        size = BFCC_PORTS;
    }

    /* Where a group's upstream switch is: one mirror session per upstream
     * port, truncating the copy to 14 bytes, and the MACs of that link. */
    action to_upstream(MirrorId_t session_id, mac_addr_t src_mac, mac_addr_t dst_mac) {
        eg_md.mirror_session = session_id;
        eg_md.mirror_pkt_type = PKT_TYPE_MIRROR_BACKPRESSURE;
        eg_md.bp_src_mac = src_mac;
        eg_md.bp_dst_mac = dst_mac;
        eg_dprsr_md.mirror_type = MIRROR_TYPE_BACKPRESSURE;
    }

    table bp_upstream {
        key = { eg_md.bp_group : exact; }
        actions = { to_upstream; NoAction; }
        default_action = NoAction();
        size = BFCC_GROUPS;
    }

    action build_backpressure() {
        hdr.ethernet.dst_addr = hdr.bp_mirror.dst_mac;
        hdr.ethernet.src_addr = hdr.bp_mirror.src_mac;
        hdr.ethernet.ether_type = ETHERTYPE_TOFCC_FEEDBACK;
        hdr.feedback.setValid();
        hdr.feedback.version = FEEDBACK_VERSION;
        hdr.feedback.msg_type = hdr.bp_mirror.msg_type[3:0];
        hdr.feedback.class_id = hdr.bp_mirror.group;
        hdr.feedback.queue_id = 0;
        hdr.feedback.degree = hdr.bp_mirror.degree;
        hdr.feedback.flow_protocol = 0;
        hdr.feedback.reserved = 0;
        hdr.feedback.flow_src_port = 0;
        hdr.feedback.rate = 0;
        hdr.feedback.target_rate = 0;
    }

    apply {
        eg_md.now_ns = eg_prsr_md.global_tstamp[31:0];
        eg_md.make_fake = 0;
        eg_md.bp_report = 0;
        eg_md.bp_send = 0;

        if (hdr.bp_mirror.isValid()) {
            build_backpressure();
        } else if (hdr.recirc_mirror.isValid()) {
            restore_real();
        } else if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
            /* Reaction point first: a packet that leaves as a fake carries
             * the recirculation mirror, and a packet has only one mirror. */
            if (hdr.bfcc_bridged.bp_degree != 0) {
                if (rate_threshold.apply().hit) {
                    flagged_departures.count(eg_intr_md.egress_port);
                    eg_md.make_fake = rr_count_step.execute(eg_intr_md.egress_port);
                    if (eg_md.make_fake == 1) {
                        make_fake();
                        fakes_sent.count(eg_intr_md.egress_port);
                    }
                }
            }

            if (congestion_point.apply().hit) {
                queue_hook.apply(eg_intr_md, eg_md.queue);
                eg_md.depth_over_cells = eg_md.queue.depth_cells |-| eg_md.congestion_threshold_cells;
                eg_md.sojourn_over_min_ns = eg_md.queue.sojourn_ns |-| eg_md.t_min_ns;
                eg_md.sojourn_over_max_ns = eg_md.queue.sojourn_ns |-| eg_md.t_max_ns;
                eg_md.refresh_at_ns = eg_md.now_ns + eg_md.refresh_ns;
                if (eg_md.depth_over_cells != 0) {
                    if (eg_md.sojourn_over_max_ns != 0) {
                        eg_md.degree = BFCC_DEGREE_SEVERE;
                    } else if (eg_md.sojourn_over_min_ns != 0) {
                        eg_md.degree = BFCC_DEGREE_MODERATE;
                    } else {
                        eg_md.degree = BFCC_DEGREE_MILD;
                    }
                    /* Ungrouped traffic neither counts nor names a group. */
                    if (hdr.bridged.class_id != 0) {
                        eg_md.new_window = occupancy_window_pkts_count.execute(eg_md.cp_id);
                        eg_md.window_id = occupancy_window_step.execute(eg_md.cp_id);
                        eg_md.vq_index = eg_md.cp_id ++ hdr.bridged.class_id;
                        eg_md.vq_same_window = vq_window_swap.execute(eg_md.vq_index);
                        eg_md.vq_count = vq_departures_step.execute(eg_md.vq_index);
                        eg_md.vq_key = eg_md.vq_count ++ ~hdr.bridged.class_id;
                        eg_md.max_key = congested_vq_step.execute(eg_md.cp_id);
                        eg_md.bp_group = ~eg_md.max_key[7:0];
                        eg_md.bp_key = eg_md.bp_group ++ eg_md.degree;
                        eg_md.bp_report = 1;
                    }
                } else {
                    occupancy_window_pkts_close.execute(eg_md.cp_id);
                    eg_md.bp_key = 0;
                    eg_md.bp_report = 1;
                }

                /* A fake's mirror is taken; the next packet reports. */
                if (eg_md.bp_report == 1 && eg_md.make_fake == 0) {
                    eg_md.bp_last_key = bp_last_sent_swap.execute(eg_md.cp_id);
                    if (eg_md.bp_key != 0) {
                        eg_md.bp_msg_type = (bit<8>)FEEDBACK_TYPE_BACKPRESSURE;
                        eg_md.bp_degree = eg_md.degree;
                        if (eg_md.bp_last_key != eg_md.bp_key) {
                            bp_refresh_restart.execute(eg_md.cp_id);
                            eg_md.bp_send = 1;
                        } else if (eg_md.refresh_ns != 0) {
                            eg_md.bp_send = bp_refresh_check.execute(eg_md.cp_id);
                        }
                    } else if (eg_md.bp_last_key != 0) {
                        eg_md.bp_group = eg_md.bp_last_key[15:8];
                        eg_md.bp_msg_type = (bit<8>)FEEDBACK_TYPE_BACKPRESSURE_CLEAR;
                        eg_md.bp_degree = 0;
                        eg_md.bp_send = 1;
                    }
                    if (eg_md.bp_send == 1) {
                        bp_upstream.apply();
                    }
                }
            }
        }
    }
}

control SwitchEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    Mirror() mirror;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_BACKPRESSURE) {
            mirror.emit<bp_mirror_h>(eg_md.mirror_session, {
                eg_md.mirror_pkt_type,
                eg_md.bp_msg_type,
                eg_md.bp_group,
                eg_md.bp_degree,
                eg_md.bp_src_mac,
                eg_md.bp_dst_mac});
        } else if (eg_dprsr_md.mirror_type == MIRROR_TYPE_RECIRCULATE) {
            mirror.emit<recirc_mirror_h>(eg_md.mirror_session, {eg_md.mirror_pkt_type});
        }
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
            hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
            hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
            hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.feedback);
    }
}

Pipeline(SwitchIngressParser(), SwitchIngress(), SwitchIngressDeparser(),
         SwitchEgressParser(), SwitchEgress(), SwitchEgressDeparser()) pipe;

Switch(pipe) main;
