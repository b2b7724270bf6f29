// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* DA-DCTCP's switch side: slope-aware ECN marking per egress queue (seed
 * 004, section 3.1, Eqs. 4-6), with plain DCTCP marking (q > K) as a mode
 * of the same program. tna/dadctcp/README.md lists every departure from the
 * paper and why.
 *
 * Ingress: trust, source binding and routing (the shared includes), and
 *          the egress queue from the DSCP (queue_select; no entry: queue 0),
 *          so a port's queues, each with its own K, carry traffic classes.
 * Egress, per departing IPv4 data packet of a monitored queue
 * (egress port, queue), with q the queue depth in cells as the packet
 * leaves (deq_qdepth: section 3.1 takes the slope "when the packet is out
 * of the queue"):
 *   queue_threshold gives the queue's register slot, K1 and K2 in cells
 *   and whether the slope counts (0: DCTCP mode, whose controller writes
 *   K2 = K + 1 so that "q >= K2" is DCTCP's "q > K");
 *   last_depth swaps q in and returns the previous departure's depth, so
 *   the slope sample s = q - q_prev is one departure's depth change;
 *   last_departure keeps the time of the slot's latest departure, so the
 *   controller's Algorithm 2 can tell a queue that went idle (no recent
 *   departure) from one that holds q;
 *   last_slope swaps s in and returns the previous sample s_prev;
 *   the slope's EWMA with delta = 1/2 is taken over the last two samples,
 *   s/2 + s_prev/4 (arithmetic shifts);
 *   an ECT packet is marked CE when q >= K2, or when K1 <= q < K2 and the
 *   EWMA is >= 0 (with the slope on). A packet that would be marked but is
 *   not ECN-capable is left alone, or dropped where the controller says so.
 */
#include "../include/arch.p4"
#include "../include/size.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"

typedef bit<10> queue_slot_t;

struct ig_md_t {
    parsed_md_t parsed;
    bool        forged;
    bit<1>      spoofed;          /* source outside its port's binding */
}

struct eg_md_t {
    parsed_md_t  parsed;
    queue_md_t   queue;
    bit<1>       monitored;
    queue_slot_t slot;
    bit<32>      k1_cells;
    bit<32>      k2_cells;
    bit<1>       use_slope;
    bit<1>       drop_not_ect;
    bit<32>      now_ticks;         /* global_tstamp[37:6]: 64 ns ticks */
    bit<32>      prev_depth_cells;
    bit<32>      slope_cells;       /* s = q - q_prev, two's complement */
    bit<32>      prev_slope_cells;
    bit<32>      half_slope;        /* s >> 1, arithmetic */
    bit<32>      quarter_prev;      /* s_prev >> 2, arithmetic */
    bit<32>      avg_slope;         /* s/2 + s_prev/4: bit 31 set <=> < 0 */
    bit<32>      k1_margin;         /* q - K1: bit 31 clear <=> q >= K1 */
    bit<32>      k2_margin;         /* q - K2: bit 31 clear <=> q >= K2 */
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

    action drop_spoofed() {
        ig_dprsr_md.drop_ctl = 1;
    }

    /* Traffic classes to egress queues, written by the controller. */
    action set_queue(QueueId_t qid) {
        ig_tm_md.qid = qid;
    }

    table queue_select {
        key = { hdr.ipv4.dscp : exact; }
        actions = { set_queue; NoAction; }
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

        /* A host port cannot send the project's feedback packets (trust)
         * or another host's source address (source binding). */
        trust.apply(hdr, ig_intr_md, ig_dprsr_md, ig_md.forged);
        source_guard.apply(hdr, ig_intr_md, ig_md.spoofed);
        if (ig_md.forged) {
            /* already dropped and counted by trust */
        } else if (ig_md.spoofed == 1) {
            drop_spoofed();
        } else {
            forward.apply(hdr, ig_tm_md, ig_dprsr_md);
            if (hdr.ipv4.isValid()) {
                queue_select.apply();
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
    HeaderParser() header_parser;

    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridged);
        header_parser.apply(pkt, hdr, eg_md.parsed);
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_md_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    DequeueQueueHook() queue_hook;

    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) ce_marked;
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) not_ect_dropped;

    /* Per queue slot: the depth the slot's previous departure saw, and the
     * slope sample it made. A slot never used holds 0 (an empty queue). */
    Register<bit<32>, queue_slot_t>(DADCTCP_QUEUE_SLOTS, 0) last_depth;
    Register<bit<32>, queue_slot_t>(DADCTCP_QUEUE_SLOTS, 0) last_slope;
    /* Per queue slot: when its latest departure left, in 64 ns ticks (wraps
     * after 275 s). Read only by the controller: a queue whose stamp is old
     * holds nothing, whatever last_depth says (README, "Controller"). */
    Register<bit<32>, queue_slot_t>(DADCTCP_QUEUE_SLOTS, 0) last_departure;

    RegisterAction<bit<32>, queue_slot_t, bit<32>>(last_depth) depth_swap = {
        void apply(inout bit<32> depth, out bit<32> previous) {
            previous = depth;
            depth = eg_md.queue.depth_cells;
        }
    };

    RegisterAction<bit<32>, queue_slot_t, bit<32>>(last_departure) stamp_departure = {
        void apply(inout bit<32> stamp) {
            stamp = eg_md.now_ticks;
        }
    };

    RegisterAction<bit<32>, queue_slot_t, bit<32>>(last_slope) slope_swap = {
        void apply(inout bit<32> slope, out bit<32> previous) {
            previous = slope;
            slope = eg_md.slope_cells;
        }
    };

    /* Written by the controller (bfrt_controller: K in packets converted
     * to cells). No entry: the queue is not monitored. */
    action set_threshold(bit<10> slot, bit<32> k1_cells, bit<32> k2_cells,
                         bit<1> use_slope, bit<1> drop_not_ect) {
        eg_md.monitored = 1;
        eg_md.slot = slot;
        eg_md.k1_cells = k1_cells;
        eg_md.k2_cells = k2_cells;
        eg_md.use_slope = use_slope;
        eg_md.drop_not_ect = drop_not_ect;
        eg_md.now_ticks = eg_prsr_md.global_tstamp[37:6];
    }

    action not_monitored() {
        eg_md.monitored = 0;
    }

    /* The queue is a ternary key the controller always writes in full
     * (a full mask: one queue per entry, as an exact key would be):
     * p4testgen's Tofino target treats egress_qid as a value outside its
     * control and gives up on a table with such an exact key, leaving the
     * marking unexplored; a ternary key it matches with mask 0 (issue 32).
     * 1024 entries of 14 (Tofino2: 16) bits are two TCAM units; the
     * table's place in the egress does not change. */
    table queue_threshold {
        key = {
            eg_intr_md.egress_port : exact;
            eg_intr_md.egress_qid  : ternary;
        }
        actions = { set_threshold; not_monitored; }
        default_action = not_monitored();
        size = DADCTCP_QUEUE_SLOTS;
    }

    /* Differences in actions, so each gateway tests one bit of an ALU
     * result (tna/README.md, "Gateway conditions"): depths are 19 bits and
     * thresholds below 2^31, so bit 31 is the sign. */
    action take_slope() {
        eg_md.slope_cells = eg_md.queue.depth_cells - eg_md.prev_depth_cells;
        eg_md.k1_margin = eg_md.queue.depth_cells - eg_md.k1_cells;
        eg_md.k2_margin = eg_md.queue.depth_cells - eg_md.k2_cells;
    }

    action halve() {
        eg_md.half_slope = (bit<32>)(((int<32>)eg_md.slope_cells) >> 1);
        eg_md.quarter_prev = (bit<32>)(((int<32>)eg_md.prev_slope_cells) >> 2);
    }

    action average() {
        eg_md.avg_slope = eg_md.half_slope + eg_md.quarter_prev;
    }

    action mark() {
        hdr.ipv4.ecn = ECN_CE;
        ce_marked.count(eg_intr_md.egress_port);
    }

    action drop_not_ect() {
        eg_dprsr_md.drop_ctl = 1;
        not_ect_dropped.count(eg_intr_md.egress_port);
    }

    apply {
        if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
            queue_hook.apply(eg_intr_md, eg_md.queue);
            queue_threshold.apply();
            if (eg_md.monitored == 1) {
                eg_md.prev_depth_cells = depth_swap.execute(eg_md.slot);
                stamp_departure.execute(eg_md.slot);
                take_slope();
                eg_md.prev_slope_cells = slope_swap.execute(eg_md.slot);
                halve();
                average();
                if (eg_md.k2_margin[31:31] == 0
                        || (eg_md.use_slope == 1 && eg_md.k1_margin[31:31] == 0
                            && eg_md.avg_slope[31:31] == 0)) {
                    if (hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark();
                    } else if (eg_md.drop_not_ect == 1) {
                        drop_not_ect();
                    }
                }
            }
        }
    }
}

control SwitchEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
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
