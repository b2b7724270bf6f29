/* PMQECN: multi-queue, multi-class ECN marking with switch-made feedback
 * (seed 000, "Design", Algorithm 1, Fig. 4).
 *
 * Ingress: classify (class, virtual queue, queue) -> count per class ->
 *          WRR over strict priority: a virtual queue spends `weight` packets
 *          at each priority level before moving one level down.
 * Egress:  accumulate sojourn per class -> if queue depth > K_class, mirror
 *          the packet back to its ingress port, where the copy becomes a
 *          feedback packet (ECN=11, lambda_i, lambda_i*) to the source.
 * The controller reads the class counters and sojourn accumulators, solves
 * the M/M/1/N model and writes K_i, weights and lambda_i* (models/optimize).
 */
#include "../include/arch.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/test_hooks.p4"

#define PMQECN_CLASSES 256
#define PMQECN_VQS 256

struct ig_md_t {
    parsed_md_t parsed;
    bool        forged;
    vq_id_t     vq_id;
    bit<16>     wrr_weight;
    bit<8>      wrr_last_level;
    bit<8>      wrr_advance;
    bit<8>      wrr_level;
}

struct eg_md_t {
    parsed_md_t parsed;
    queue_md_t  queue;
    bit<32>     threshold_cells;
    bit<32>     depth_over_cells;
    bit<1>      mark_original;
    MirrorId_t  mirror_session;
    pkt_type_t  fb_pkt_type;
    bit<8>      fb_queue_id;
    bit<32>     fb_rate;
    bit<32>     fb_target_rate;
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

    /* lambda_i comes from these: the controller samples them each interval. */
    Counter<bit<32>, class_id_t>(PMQECN_CLASSES, CounterType_t.PACKETS_AND_BYTES) class_counters;

    /* WRR emulation state per virtual queue (Fig. 4): packets spent at the
     * current level, and the current level (0 = highest priority). */
    Register<bit<16>, vq_id_t>(PMQECN_VQS, 0) vq_used;
    Register<bit<8>, vq_id_t>(PMQECN_VQS, 0) vq_level;

    RegisterAction<bit<16>, vq_id_t, bit<8>>(vq_used) vq_used_step = {
        void apply(inout bit<16> used, out bit<8> advance) {
            if (used >= ig_md.wrr_weight) {
                used = 1;
                advance = 1;
            } else {
                used = used + 1;
                advance = 0;
            }
        }
    };

    /* Moving past the lowest level starts the next round at the top, as the
     * paper's "this process continues". */
    RegisterAction<bit<8>, vq_id_t, bit<8>>(vq_level) vq_level_step = {
        void apply(inout bit<8> level, out bit<8> new_level) {
            if (ig_md.wrr_advance == 1) {
                if (level >= ig_md.wrr_last_level) {
                    level = 0;
                } else {
                    level = level + 1;
                }
            }
            new_level = level;
        }
    };

    action set_class(class_id_t class_id, vq_id_t vq_id, QueueId_t qid) {
        hdr.bridged.class_id = class_id;
        ig_md.vq_id = vq_id;
        ig_tm_md.qid = qid;
    }

    action unclassified() {
        hdr.bridged.class_id = 0;
        ig_md.vq_id = 0;
    }

    table classify {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.dscp     : ternary;
            hdr.ipv4.protocol : ternary;
        }
        actions = { set_class; unclassified; }
        default_action = unclassified();
        size = 1024;
    }

    /* A virtual queue with an entry here is scheduled by the P4 WRR mapping;
     * without one its packets keep the queue chosen by classify (the TM's
     * own DWRR then does the weighting). */
    action wrr(bit<16> weight, bit<8> last_level) {
        ig_md.wrr_weight = weight;
        ig_md.wrr_last_level = last_level;
    }

    table vq_weight {
        key = { ig_md.vq_id : exact; }
        actions = { wrr; NoAction; }
        default_action = NoAction();
        size = PMQECN_VQS;
    }

    action set_priority_queue(QueueId_t qid) {
        ig_tm_md.qid = qid;
    }

    table wrr_level_queue {
        key = { ig_md.wrr_level : exact; }
        actions = { set_priority_queue; NoAction; }
        default_action = NoAction();
        size = 32;
    }

    apply {
        hdr.bridged.setValid();
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED;
        hdr.bridged.class_id = 0;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr;
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr;

        trust.apply(hdr, ig_intr_md, ig_dprsr_md, ig_md.forged);
        if (!ig_md.forged) {
            forward.apply(hdr, ig_tm_md, ig_dprsr_md);
            if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
                classify.apply();
                class_counters.count(hdr.bridged.class_id);
                if (vq_weight.apply().hit) {
                    ig_md.wrr_advance = vq_used_step.execute(ig_md.vq_id);
                    ig_md.wrr_level = vq_level_step.execute(ig_md.vq_id);
                    wrr_level_queue.apply();
                }
            }
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.bridged);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.feedback);
    }
}

parser SwitchEgressParser(packet_in pkt, out headers_t hdr, out eg_md_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    EgressPrefixParser() prefix_parser;

    state start {
        prefix_parser.apply(pkt, hdr, eg_md.parsed, eg_intr_md);
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_md_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    QueueMetadataHook() queue_hook;

    /* W_i comes from these: sum of sojourn times and packets, saturating so a
     * slow controller reads a pinned value rather than a wrapped one. */
    Register<bit<32>, class_id_t>(PMQECN_CLASSES, 0) sojourn_sum_ns;
    Register<bit<32>, class_id_t>(PMQECN_CLASSES, 0) sojourn_pkts;

    RegisterAction<bit<32>, class_id_t, void>(sojourn_sum_ns) sojourn_sum_add = {
        void apply(inout bit<32> value) {
            value = value |+| eg_md.queue.sojourn_ns;
        }
    };

    RegisterAction<bit<32>, class_id_t, void>(sojourn_pkts) sojourn_pkts_add = {
        void apply(inout bit<32> value) {
            value = value |+| 1;
        }
    };

    action set_threshold(bit<32> threshold_cells, bit<1> mark_original) {
        eg_md.threshold_cells = threshold_cells;
        eg_md.mark_original = mark_original;
    }

    action no_threshold() {
        eg_md.threshold_cells = 0xffffffff;
        eg_md.mark_original = 0;
    }

    table ecn_threshold {
        key = { hdr.bridged.class_id : exact; }
        actions = { set_threshold; no_threshold; }
        default_action = no_threshold();
        size = PMQECN_CLASSES;
    }

    action set_rates(bit<32> rate, bit<32> target_rate) {
        eg_md.fb_rate = rate;
        eg_md.fb_target_rate = target_rate;
    }

    table class_rates {
        key = { hdr.bridged.class_id : exact; }
        actions = { set_rates; }
        default_action = set_rates(0, 0);
        size = PMQECN_CLASSES;
    }

    /* Feedback leaves through the port the packet came in on: that is
     * where its source is. One mirror session per such port. */
    action set_feedback_session(MirrorId_t session_id) {
        eg_md.mirror_session = session_id;
        eg_md.fb_pkt_type = PKT_TYPE_MIRROR_FEEDBACK;
        eg_dprsr_md.mirror_type = MIRROR_TYPE_FEEDBACK;
    }

    table feedback_session {
        key = { hdr.bridged.ingress_port : exact; }
        actions = { set_feedback_session; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    action mark_ce() {
        hdr.ipv4.ecn = ECN_CE;
    }

    action build_feedback() {
        hdr.ethernet.dst_addr = hdr.fb_mirror.orig_src_mac;
        hdr.ethernet.src_addr = hdr.fb_mirror.orig_dst_mac;
        ipv4_addr_t source = hdr.ipv4.src_addr;
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = source;
        hdr.ipv4.ecn = ECN_CE;
        hdr.ipv4.total_len = FEEDBACK_IPV4_TOTAL_LEN;
        hdr.ipv4.identification = 0;
        hdr.ipv4.flags = 0;
        hdr.ipv4.frag_offset = 0;
        hdr.ipv4.ttl = FEEDBACK_TTL;
        hdr.ipv4.protocol = IP_PROTO_UDP;
        hdr.udp.setValid();
        hdr.udp.src_port = hdr.fb_mirror.flow_dst_port;
        hdr.udp.dst_port = UDP_PORT_TOFCC_FEEDBACK;
        hdr.udp.length = FEEDBACK_UDP_LEN;
        hdr.udp.checksum = 0;
        hdr.feedback.setValid();
        hdr.feedback.version = FEEDBACK_VERSION;
        hdr.feedback.msg_type = FEEDBACK_TYPE_PMQECN_RATE;
        hdr.feedback.class_id = hdr.fb_mirror.class_id;
        hdr.feedback.queue_id = hdr.fb_mirror.queue_id;
        hdr.feedback.degree = 0;
        hdr.feedback.flow_protocol = hdr.fb_mirror.flow_protocol;
        hdr.feedback.reserved = 0;
        hdr.feedback.flow_src_port = hdr.fb_mirror.flow_src_port;
        hdr.feedback.rate = hdr.fb_mirror.rate;
        hdr.feedback.target_rate = hdr.fb_mirror.target_rate;
    }

    apply {
        if (hdr.fb_mirror.isValid()) {
            build_feedback();
        } else if (hdr.bridged.class_id != 0 && !hdr.feedback.isValid()) {
            queue_hook.apply(eg_intr_md, eg_md.queue);
            sojourn_sum_add.execute(hdr.bridged.class_id);
            sojourn_pkts_add.execute(hdr.bridged.class_id);
            ecn_threshold.apply();
            eg_md.depth_over_cells = eg_md.queue.depth_cells |-| eg_md.threshold_cells;
            if (eg_md.depth_over_cells != 0) {
                if (eg_md.mark_original == 1 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                    mark_ce();
                }
                if (eg_md.parsed.ipv4_plain) {
                    eg_md.fb_queue_id = (bit<8>)eg_intr_md.egress_qid;
                    class_rates.apply();
                    feedback_session.apply();
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
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_FEEDBACK) {
            mirror.emit<fb_mirror_h>(eg_md.mirror_session, {
                eg_md.fb_pkt_type,
                hdr.bridged.class_id,
                eg_md.fb_queue_id,
                hdr.ipv4.protocol,
                eg_md.parsed.l4_src_port,
                eg_md.parsed.l4_dst_port,
                eg_md.fb_rate,
                eg_md.fb_target_rate,
                hdr.bridged.orig_src_mac,
                hdr.bridged.orig_dst_mac});
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
