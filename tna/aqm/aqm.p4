// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* AQM baselines on Tofino: RED (Floyd & Jacobson 1993) and CoDel
 * (RFC 8289), the mechanisms seed 002 compares S-PIE with, one program with
 * the mechanism chosen per egress queue. tna/aqm/README.md lists every
 * departure from the two papers and why.
 *
 * Ingress: trust, source binding and routing (the shared includes); the
 *          ingress clock and the arrival timestamp are bridged to egress.
 * Egress, per departing IPv4 data packet: aqm_queue (egress port, queue)
 * names the queue's slot in the registers, its mechanism, ECN mode and
 * curve (the red_level or codel_due entries it reads: queues with the same
 * settings share one curve, so the tables do not grow with the queues).
 *   RED:   the average queue is the mean depth of the last complete block
 *          of 2^k packets (kept as the block's sum, N x avg); red_level
 *          (ternary on that sum, written by the controller from min_th,
 *          max_th and max_p) gives a level in 0..32768 and the packet is
 *          dropped (or CE-marked) when the 15-bit random value is below it.
 *   CoDel: sojourn below target clears first_above_time; above it for an
 *          interval enters the dropping state. In that state the k-th drop
 *          (k >= 1) is due interval x S(k-1) after the state began,
 *          S(m) = sum_{i=1..m} 1/sqrt(i) (RFC 8289's control law, summed):
 *          codel_due (ternary on the elapsed time, written by the
 *          controller) gives the number of drops due, and a packet is
 *          dropped while fewer have been made. After count_cap drops the
 *          spacing stays interval/sqrt(count_cap).
 */
#include "../include/arch.p4"
#include "../include/size.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"

const bit<2> AQM_MODE_NONE = 0;
const bit<2> AQM_MODE_RED = 1;
const bit<2> AQM_MODE_CODEL = 2;

typedef bit<8> aqm_slot_t;

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
    bit<2>      mode;
    aqm_slot_t  slot;
    bit<8>      curve;            /* the queue's red_level / codel_due entries */
    bit<1>      ecn;              /* mark ECT packets CE instead of dropping */
    bit<1>      hard;             /* drop even an ECT packet */
    /* RED */
    bit<32>     block_last;       /* 2^k - 1: the block's last packet index */
    bit<32>     block_limit;      /* block_last, or 0 when the queue was empty */
    bit<1>      block_end;
    bit<32>     block_sum_cells;  /* sum of the block just closed */
    bit<32>     avg_sum_cells;    /* N x avg */
    bit<16>     level;            /* 0..32768: P(drop) x 32768 */
    bit<16>     random_margin;    /* random - level: bit 15 set <=> drop */
    /* CoDel */
    bit<32>     target_ns;
    bit<32>     target_margin_ns; /* sojourn - target: bit 31 set <=> below */
    bit<32>     interval_ticks;
    bit<32>     tail_step_ticks;
    bit<32>     sojourn_ticks;
    bit<32>     deq_ticks;        /* arrival + sojourn: when it leaves */
    bit<32>     deadline_base_ticks;  /* arrival + interval */
    bit<32>     deadline_ticks;       /* deq + interval */
    bit<32>     tail_base_ticks;      /* arrival + tail step */
    bit<32>     tail_next_ticks;      /* deq + tail step */
    bit<1>      ok_to_drop;
    bit<32>     elapsed_ticks;    /* since the dropping state began */
    bit<32>     due_count;
    bit<1>      tail;
    bit<1>      codel_drop;
}

#include "red.p4"
#include "codel.p4"

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
    TimestampQueueHook() queue_hook;
    RandomHook() random_hook;

    /* RED's and CoDel's verdicts count here. */
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) aqm_drops;
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) aqm_marks;
    AqmRed(aqm_drops, aqm_marks) red;
    AqmCodel(aqm_drops, aqm_marks) codel;

    /* ---- configuration ---------------------------------------------- */
    action set_red(bit<8> slot, bit<8> curve, bit<1> ecn, bit<32> block_last) {
        eg_md.mode = AQM_MODE_RED;
        eg_md.slot = slot;
        eg_md.curve = curve;
        eg_md.ecn = ecn;
        eg_md.block_last = block_last;
        eg_md.target_ns = 0;
        eg_md.interval_ticks = 0;
        eg_md.tail_step_ticks = 0;
    }

    action set_codel(bit<8> slot, bit<8> curve, bit<1> ecn, bit<32> target_ns,
                     bit<32> interval_ticks, bit<32> tail_step_ticks) {
        eg_md.mode = AQM_MODE_CODEL;
        eg_md.slot = slot;
        eg_md.curve = curve;
        eg_md.ecn = ecn;
        eg_md.block_last = 0;
        eg_md.target_ns = target_ns;
        eg_md.interval_ticks = interval_ticks;
        eg_md.tail_step_ticks = tail_step_ticks;
    }

    action no_aqm() {
        eg_md.mode = AQM_MODE_NONE;
        eg_md.slot = 0;
        eg_md.curve = 0;
        eg_md.ecn = 0;
        eg_md.block_last = 0;
        eg_md.target_ns = 0;
        eg_md.interval_ticks = 0;
        eg_md.tail_step_ticks = 0;
    }

    /* The queue is a ternary key the controller always writes in full
     * (a full mask: one queue per entry, as an exact key would be):
     * p4testgen's Tofino target treats egress_qid as a value outside its
     * control and gives up on a table with such an exact key, leaving all
     * of RED and CoDel unexplored; a ternary key it matches with mask 0
     * (issue 32). 512 entries of 14 (Tofino2: 16) bits are one TCAM unit;
     * the table's place in the egress does not change. */
    table aqm_queue {
        key = {
            eg_intr_md.egress_port : exact;
            eg_intr_md.egress_qid  : ternary;
        }
        actions = { set_red; set_codel; no_aqm; }
        default_action = no_aqm();
        size = AQM_QUEUE_ENTRIES;
    }

    /* CoDel's times, for every packet rather than on CoDel's branch
     * (codel.p4): they need only aqm_queue's entry. */
    action codel_times() {
        eg_md.target_margin_ns = eg_md.queue.sojourn_ns - eg_md.target_ns;
        eg_md.sojourn_ticks = eg_md.queue.sojourn_ns >> 6;
        eg_md.deadline_base_ticks = hdr.aqm_bridged.now_ticks + eg_md.interval_ticks;
        eg_md.tail_base_ticks = hdr.aqm_bridged.now_ticks + eg_md.tail_step_ticks;
    }

    apply {
        if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
            queue_hook.apply(eg_intr_md, eg_prsr_md, hdr.aqm_bridged.arrival_ns, eg_md.queue);
            random_hook.apply(eg_intr_md, eg_md.random);
            aqm_queue.apply();
            codel_times();
            if (eg_md.mode == AQM_MODE_RED) {
                red.apply(hdr, eg_md, eg_intr_md, eg_dprsr_md);
            } else if (eg_md.mode == AQM_MODE_CODEL) {
                codel.apply(hdr, eg_md, eg_intr_md, eg_dprsr_md);
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
