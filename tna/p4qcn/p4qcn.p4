// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* P4QCN: the QCN congestion point for IP networks (seed 003, sections
 * 3.1.1 and 3.2, Eq. 1). tna/p4qcn/README.md lists every departure from
 * the paper and why.
 *
 * Ingress: trust, source binding and routing (the shared includes); the
 *          ingress clock is bridged to egress; traffic_class (DSCP) picks
 *          the egress queue and the ingress CoS, so the TM can count a
 *          lossless class in its own PPG and pause only that class.
 * Egress, per departing IPv4 data packet of a monitored queue
 * (egress port, queue):
 *   feedback_probability (ternary on the queue depth in cells, filled by
 *   the controller from Q_min, Q_max and alpha) gives a level in 0..32768:
 *     depth <= Q_min: no entry, level 0 (never);
 *     Q_min < depth < Q_max: level = round(32768 alpha (depth - Q_min));
 *     depth >= Q_max: level 32768 (always).
 *   The packet is chosen when the 15-bit random value is below the level
 *   (no multiply at line rate: the table holds the products).
 *   Two-point mode: a chosen packet becomes feedback to its own source
 *   (egress mirror to the port it came in on, rebuilt as the project's
 *   feedback header, type QCN, with ECN = 11) unless that flow (source and
 *   destination address, CRC-16 into 4096 slots) already had feedback in
 *   the last feedback_interval_ticks.
 *   Three-point mode: a chosen ECN-capable packet is marked CE; the
 *   receiver's notification point sends the notification.
 */
#include "../include/arch.p4"
#include "../include/size.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"
#include "../include/feedback.p4"

/* A level of 32768 chooses every packet: the random value is below 32768. */
const bit<16> P4QCN_LEVEL_ALWAYS = 0x8000;

typedef bit<12> flow_slot_t;

struct ig_md_t {
    parsed_md_t parsed;
    bool        forged;
    bit<1>      spoofed;          /* source outside its port's binding */
    bit<32>     now_ticks;
}

struct eg_md_t {
    parsed_md_t parsed;
    queue_md_t  queue;
    bit<16>     random;           /* 0..32767 */
    bit<16>     level;            /* 0..32768: P(feedback) * 32768 */
    bit<16>     random_margin;    /* random - level: bit 15 set <=> chosen */
    bit<1>      three_point;
    bit<32>     interval_ticks;   /* feedback_interval_ticks of the queue */
    bit<32>     window_start_ticks; /* now - interval_ticks */
    bit<16>     flow_hash;
    bit<1>      send_feedback;    /* fb_gap_check's verdict */
    /* mirror header fields */
    MirrorId_t  mirror_session;
    pkt_type_t  mirror_pkt_type;
    bit<8>      fb_queue_id;
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

/* trust writes `forged` and source_guard `spoofed` in stage 0: each in a
 * container of its own, or the second check costs a stage (tna/README.md,
 * "Stages"). */
@pa_solitary("ingress", "ig_md.spoofed")
control SwitchIngress(inout headers_t hdr, inout ig_md_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    FeedbackTrust() trust;
    SourceGuard() source_guard;
    Ipv4Forward() forward;
    IngressClockHook() clock;

    action drop_spoofed() {
        ig_dprsr_md.drop_ctl = 1;
    }

    /* The clock is bits 37..6 of a 48-bit timestamp: no ALU moves it into
     * a header field, the hash unit's crossbar does (an identity hash). */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) clock_to_header;

    action bridge_clock() {
        hdr.p4qcn_bridged.setValid();
        hdr.p4qcn_bridged.now_ticks = clock_to_header.get({ig_md.now_ticks});
    }

    /* Unlisted DSCPs stay in queue 0 at iCoS 0. The iCoS decides which
     * PPG (tm.ppg.cfg) counts the packet, so only a listed class can be
     * made lossless, and feedback (its iCoS and queue come from the mirror
     * session) need not wait behind the pause it reports. */
    action set_class(QueueId_t qid, bit<3> icos) {
        ig_tm_md.qid = qid;
        ig_tm_md.ingress_cos = icos;
    }

    table traffic_class {
        key = { hdr.ipv4.dscp : exact; }
        actions = { set_class; NoAction; }
        default_action = NoAction();
        size = DSCP_ENTRIES;
    }

    apply {
        hdr.bridged.setValid();
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED;
        hdr.bridged.class_id = 0;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr;
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr;
        clock.apply(ig_intr_md, ig_md.now_ticks);
        bridge_clock();

        /* Side by side in stage 0: a forged or spoofed packet is counted
         * there, dropped here, and never reaches a queue it could make
         * feedback for. */
        trust.apply(hdr, ig_intr_md, ig_dprsr_md, ig_md.forged);
        source_guard.apply(hdr, ig_intr_md, ig_md.spoofed);
        if (ig_md.forged) {
            /* already dropped and counted by trust */
        } else if (ig_md.spoofed == 1) {
            drop_spoofed();
        } else {
            forward.apply(hdr, ig_tm_md, ig_dprsr_md);
            if (hdr.ipv4.isValid()) {
                traffic_class.apply();
            }
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.bridged);
        pkt.emit(hdr.p4qcn_bridged);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.feedback);
    }
}

/* Egress sees a bridged packet or a feedback copy (mirror header + the
 * Ethernet and IPv4 headers the session kept). */
parser SwitchEgressParser(packet_in pkt, out headers_t hdr, out eg_md_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    HeaderParser() header_parser;

    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<pkt_type_t>()) {
            PKT_TYPE_MIRROR_FEEDBACK: parse_feedback_copy;
            default: parse_bridged;
        }
    }

    state parse_bridged {
        pkt.extract(hdr.bridged);
        pkt.extract(hdr.p4qcn_bridged);
        header_parser.apply(pkt, hdr, eg_md.parsed);
        transition accept;
    }

    state parse_feedback_copy {
        pkt.extract(hdr.fb_mirror);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        eg_md.parsed.l4_src_port = 0;
        eg_md.parsed.l4_dst_port = 0;
        eg_md.parsed.ipv4_plain = true;
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_md_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    QueueMetadataHook() queue_hook;
    RandomHook() random_hook;

    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) chosen;
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) feedback_sent;
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) feedback_suppressed;
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) ce_marked;

    /* When each flow slot last sent feedback, in the ingress clock's 64 ns
     * ticks. Two flows whose hashes share a slot share one interval: the
     * second is suppressed while the first's interval runs (never an extra
     * feedback). A slot never used holds 0. */
    Register<bit<32>, flow_slot_t>(P4QCN_FLOW_SLOTS, 0) fb_last_tick;

    /* The flow had feedback within the interval when its slot's time lies
     * in (now - interval, now]: two comparisons of the slot with one PHV
     * field each (the stateful ALU compares the register with at most one
     * PHV operand), so the window start is computed before, in an action.
     * Times are 32-bit ticks that wrap every 275 s: a slot idle for a
     * multiple of 275 s, give or take less than one interval, is
     * suppressed once; during the first interval after each wrap of the
     * clock the window wraps too, both comparisons cannot hold and the
     * flow is not limited (one extra feedback at most). */
    RegisterAction<bit<32>, flow_slot_t, bit<1>>(fb_last_tick) fb_gap_check = {
        void apply(inout bit<32> last, out bit<1> send) {
            if (last > eg_md.window_start_ticks && last <= hdr.p4qcn_bridged.now_ticks) {
                send = 0;
            } else {
                last = hdr.p4qcn_bridged.now_ticks;
                send = 1;
            }
        }
    };

    /* Flows are source/destination address pairs, as the paper defines
     * them; CRC-16 (poly 0x8005 reflected, init 0: bf-utils' crc_16). */
    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_hasher;

    action hash_flow() {
        eg_md.flow_hash = flow_hasher.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
    }

    /* Eq. 1 as a step function of the depth, written by the controller
     * (bfrt_controller/p4qcn/config.py). No entry: the queue is not
     * monitored, or the depth is at or below Q_min. */
    action set_level(bit<16> level, bit<1> three_point, bit<32> feedback_interval_ticks) {
        eg_md.level = level;
        eg_md.three_point = three_point;
        eg_md.interval_ticks = feedback_interval_ticks;
    }

    action no_feedback() {
        eg_md.level = 0;
        eg_md.three_point = 0;
        eg_md.interval_ticks = 0;
    }

    /* The queue is ternary like the depth, and the controller writes it
     * in full (a full mask): p4testgen's Tofino target treats egress_qid
     * as a value outside its control and gives up on a table with such an
     * exact key; a ternary key it matches with mask 0 (issue 32). The
     * table is ternary either way, so this costs nothing. */
    table feedback_probability {
        key = {
            eg_intr_md.egress_port  : exact;
            eg_intr_md.egress_qid   : ternary;
            eg_md.queue.depth_cells : ternary;
        }
        actions = { set_level; no_feedback; }
        default_action = no_feedback();
        size = P4QCN_PROBABILITY_ENTRIES;
    }

    /* In an action, so the gateway below tests one bit of an ALU result:
     * random and level are both at most 32768, so the difference's bit 15
     * is its sign. */
    action draw() {
        eg_md.random_margin = eg_md.random - eg_md.level;
        eg_md.window_start_ticks = hdr.p4qcn_bridged.now_ticks - eg_md.interval_ticks;
    }

    action mark_ce() {
        hdr.ipv4.ecn = ECN_CE;
    }

    /* Feedback leaves through the port the packet came in on: that is
     * where its source is. One mirror session per such port, truncating the
     * copy to Ethernet + IPv4 (34 bytes). */
    action set_feedback_session(MirrorId_t session_id) {
        eg_md.mirror_session = session_id;
        eg_md.mirror_pkt_type = PKT_TYPE_MIRROR_FEEDBACK;
        eg_md.fb_queue_id = (bit<8>)eg_intr_md.egress_qid;
        eg_dprsr_md.mirror_type = MIRROR_TYPE_FEEDBACK;
    }

    table feedback_session {
        key = { hdr.bridged.ingress_port : exact; }
        actions = { set_feedback_session; NoAction; }
        default_action = NoAction();
        size = TOFCC_PORTS;
    }

    FeedbackRebuild(FEEDBACK_TYPE_QCN) rebuild_feedback;

    apply {
        eg_md.send_feedback = 0;
        if (hdr.fb_mirror.isValid()) {
            rebuild_feedback.apply(hdr);
        } else if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
            queue_hook.apply(eg_intr_md, eg_md.queue);
            random_hook.apply(eg_intr_md, eg_md.random);
            hash_flow();
            feedback_probability.apply();
            draw();
            if (eg_md.random_margin[15:15] == 1) {
                chosen.count(eg_intr_md.egress_port);
                if (eg_md.three_point == 1) {
                    /* The receiver's notification point reacts to CE; a
                     * packet that is not ECN-capable cannot carry it. */
                    if (hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                        ce_marked.count(eg_intr_md.egress_port);
                    }
                } else if (eg_md.parsed.ipv4_plain) {
                    eg_md.send_feedback = fb_gap_check.execute(eg_md.flow_hash[11:0]);
                }
            }
            if (eg_md.send_feedback == 1) {
                feedback_session.apply();
                feedback_sent.count(eg_intr_md.egress_port);
            } else if (eg_md.random_margin[15:15] == 1 && eg_md.three_point == 0
                       && eg_md.parsed.ipv4_plain) {
                feedback_suppressed.count(eg_intr_md.egress_port);
            }
        }
    }
}

control SwitchEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    Mirror() mirror;

    apply {
        /* The copy is the packet as it leaves (routed), behind this header;
         * the session truncates it to Ethernet + IPv4 and sends it to the
         * port the packet came in on. */
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_FEEDBACK) {
            mirror.emit<fb_mirror_h>(eg_md.mirror_session, {
                eg_md.mirror_pkt_type,
                hdr.bridged.class_id,
                eg_md.fb_queue_id,
                hdr.ipv4.protocol,
                eg_md.parsed.l4_src_port,
                eg_md.parsed.l4_dst_port,
                32w0,
                32w0,
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
