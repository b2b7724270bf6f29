// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* The AQM family (issue 51): per egress queue one of none, RED (Floyd &
 * Jacobson 1993), CoDel (RFC 8289), PIE (RFC 8033), DCTCP's step,
 * DA-DCTCP's slope (seed 004) and DualPI2 (RFC 9332), chosen by aqm_queue,
 * which the controller writes and switches live (config.p4). One control
 * per mechanism with state (red.p4, codel.p4, pi.p4, dadctcp.p4), composed
 * below with the stateless steps and the verdict; tna/aqm/README.md lists the design,
 * the stage plan and every departure from the papers and RFCs.
 */
#include "../include/arch.p4"
#include "../include/size.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"
#include "types.p4"
#include "hooks.p4"
#include "config.p4"
#include "red.p4"
#include "codel.p4"
#include "pi.p4"
#include "dadctcp.p4"

struct ig_md_t {
    parsed_md_t parsed;
    bool        forged;
    bit<1>      spoofed;          /* source outside its port's binding */
    bit<32>     now_ticks;
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

    /* DualPI2's classifier (RFC 9332 2.5.1.1): per pair, ECT(1) and CE to
     * the L4S queue, Not-ECT and ECT(0) to the classic one. No entry: the
     * queue as the route left it (0). */
    action set_l4s_queue(QueueId_t qid) {
        ig_tm_md.qid = qid;
    }

    table l4s_queue {
        key = {
            ig_tm_md.ucast_egress_port : exact;
            hdr.ipv4.ecn               : exact;
        }
        actions = { set_l4s_queue; NoAction; }
        default_action = NoAction();
        size = AQM_L4S_QUEUE_ENTRIES;
    }

    /* The clock is bits 37..6 of a 48-bit timestamp: no ALU moves it into
     * a header field, the hash unit's crossbar does (an identity hash). */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) clock_to_header;

    action bridge_clock() {
        hdr.aqm_bridged.setValid();
        hdr.aqm_bridged.now_ticks = clock_to_header.get({ig_md.now_ticks});
        hdr.aqm_bridged.arrival_ns = ig_intr_md.ingress_mac_tstamp[31:0];
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

        /* A forged or spoofed packet never reaches a queue whose average
         * or CoDel state it could move. */
        trust.apply(hdr, ig_intr_md, ig_dprsr_md, ig_md.forged);
        source_guard.apply(hdr, ig_intr_md, ig_md.spoofed);
        if (ig_md.forged) {
            /* already dropped and counted by trust */
        } else if (ig_md.spoofed == 1) {
            drop_spoofed();
        } else {
            forward.apply(hdr, ig_tm_md, ig_dprsr_md);
            if (hdr.ipv4.isValid()) {
                l4s_queue.apply();
            }
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.bridged);
        pkt.emit(hdr.aqm_bridged);
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
        pkt.extract(hdr.aqm_bridged);
        header_parser.apply(pkt, hdr, eg_md.parsed);
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_md_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    AqmQueueHook() queue_hook;
    AqmRandomHook() random_hook;
    AqmRandomHook() random2_hook;
    AqmRed() red;
    AqmCodel() codel;
    AqmPi() pi;
    AqmDadctcp() dadctcp;
    AqmQueueConfig() config;

    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) aqm_drops;
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) aqm_marks;

    /* ---- the stateless decisions: steps and draws ---------------------- */
    action dctcp_margin() {
        eg_md.k2_margin = eg_md.deq_depth_cells - eg_md.k2_cells;
    }

    action l_margins() {
        eg_md.step_margin_ns = eg_md.queue.sojourn_ns - eg_md.step_ns;
    }

    /* p >> 17 against the 15-bit random value: PIE's p, DualPI2's p' (the
     * classic queue draws twice: p'^2). */
    action pi_levels() {
        eg_md.level = (bit<16>)(eg_md.prob >> 17);
        eg_md.level_l = eg_md.prob >> 16;
    }

    action pi_draws() {
        eg_md.random_margin = eg_md.random - eg_md.level;
        eg_md.random2_margin = eg_md.random2 - eg_md.level;
        eg_md.mark_margin = eg_md.level - eg_md.mark_max_level;
    }

    /* k p' (k = 2): p >> 16 against the random value, in 32 bits (k p' may
     * pass 1). */
    action coupled_draw() {
        eg_md.coupled_margin = (bit<32>)eg_md.random - eg_md.level_l;
    }

    /* ---- the verdict ---------------------------------------------------- */
    action mark_ce() {
        hdr.ipv4.ecn = ECN_CE;
        aqm_marks.count(eg_intr_md.egress_port);
    }

    action drop_packet() {
        eg_dprsr_md.drop_ctl = 1;
        aqm_drops.count(eg_intr_md.egress_port);
    }

    apply {
        if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
            queue_hook.apply(eg_intr_md, eg_prsr_md, hdr.aqm_bridged.arrival_ns, eg_md.queue,
                             eg_md.deq_depth_cells);
            config.apply(eg_md, eg_intr_md, hdr.aqm_bridged.now_ticks);
            /* On Tofino a table is never placed before one that precedes it
             * in the apply block: the draws after the two stage-0 tables. */
            random_hook.apply(eg_intr_md, eg_md.random);
            random2_hook.apply(eg_intr_md, eg_md.random2);
            if (eg_md.mode == AQM_MODE_RED) {
                red.apply(eg_md);
                if (eg_md.chosen == 1) {
                    if (eg_md.ecn == 1 && eg_md.hard == 0 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                    } else {
                        drop_packet();
                    }
                }
            } else if (eg_md.mode == AQM_MODE_CODEL) {
                codel.apply(eg_md, hdr.aqm_bridged.now_ticks);
                if (eg_md.chosen == 1) {
                    if (eg_md.ecn == 1 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                    } else {
                        drop_packet();
                    }
                }
            } else if (eg_md.mode == AQM_MODE_DCTCP) {
                dctcp_margin();
                if (eg_md.k2_margin[31:31] == 0) {
                    if (eg_md.ecn == 1 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                    } else {
                        drop_packet();
                    }
                }
            } else if (eg_md.mode == AQM_MODE_DADCTCP) {
                dadctcp.apply(eg_md);
                if (eg_md.k2_margin[31:31] == 0
                        || (eg_md.k1_margin[31:31] == 0 && eg_md.avg_slope[31:31] == 0)) {
                    if (eg_md.ecn == 1 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                    } else {
                        drop_packet();
                    }
                }
            } else if (eg_md.mode != AQM_MODE_NONE) {
                /* PIE and DualPI2's pair: one PI, stepped by a PIE or
                 * classic departure, read by an L4S one. */
                pi.apply(eg_md, hdr.aqm_bridged.now_ticks, eg_md.tick);
                pi_levels();
                pi_draws();
                coupled_draw();
                l_margins();
                if (eg_md.mode == AQM_MODE_DUALPI2_L) {
                    if (eg_md.step_margin_ns[31:31] == 0 || eg_md.coupled_margin[31:31] == 1) {
                        /* L4S packets are marked; a Not-ECT one is dropped. */
                        if (hdr.ipv4.ecn != ECN_NOT_ECT) {
                            mark_ce();
                        } else {
                            drop_packet();
                        }
                    }
                } else if (eg_md.mode == AQM_MODE_PIE) {
                    /* RFC 8033 5.1: marked while p is below mark_max. */
                    if (eg_md.random_margin[15:15] == 1) {
                        if (eg_md.ecn == 1 && eg_md.mark_margin[15:15] == 1
                                && hdr.ipv4.ecn != ECN_NOT_ECT) {
                            mark_ce();
                        } else {
                            drop_packet();
                        }
                    }
                } else if (eg_md.random_margin[15:15] == 1
                        && eg_md.random2_margin[15:15] == 1) {
                    /* DualPI2's classic queue, p'^2: both draws below p';
                     * from p' = 1/2 (p_C = 1/4) dropped even when ECT. */
                    if (eg_md.ecn == 1 && eg_md.prob[31:31] == 0
                            && hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                    } else {
                        drop_packet();
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
