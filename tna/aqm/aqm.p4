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
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"

#define AQM_PORTS 512
/* 256 queue slots: a register of 512 entries reads, to the tools that map
 * vector ports to device ports, as one entry per port. */
#define AQM_SLOTS 256
#define AQM_QUEUE_ENTRIES 512
/* Ternary entries: the controller expands each queue's ranges into
 * prefixes (tna/aqm/README.md gives the count per queue). */
#define AQM_RED_LEVEL_ENTRIES 4096
#define AQM_CODEL_DUE_ENTRIES 4096

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

    Counter<bit<32>, PortId_t>(AQM_PORTS, CounterType_t.PACKETS) aqm_drops;
    Counter<bit<32>, PortId_t>(AQM_PORTS, CounterType_t.PACKETS) aqm_marks;

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

    /* ---- RED ---------------------------------------------------------- */
    /* The stateful ALU has no shifter, so avg += (q - avg) w_q cannot be
     * applied in the one access a packet gets: the average is the mean of
     * the last complete block of 2^k packets instead (README). A packet
     * that finds the queue empty closes the block early, the packets the
     * block lacked counting as an empty queue: Floyd & Jacobson's idle-time
     * rule, and what lets a high average fall once RED's drops have
     * drained the queue (else it would wait for 2^k more packets). */
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) red_block_packets;
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) red_block_sum_cells;
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) red_avg_sum_cells;

    /* 1 for the block's last packet (index 2^k - 1, or one that found the
     * queue empty), which starts the next. */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(red_block_packets) red_block_count = {
        void apply(inout bit<32> n, out bit<1> end) {
            if (n >= eg_md.block_limit) {
                n = 0;
                end = 1;
            } else {
                n = n + 1;
                end = 0;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(red_block_sum_cells) red_sum_add = {
        void apply(inout bit<32> sum) {
            sum = sum + eg_md.queue.depth_cells;
        }
    };

    /* The block's last depth closes it: the full sum leaves, the next
     * block starts from 0. */
    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(red_block_sum_cells) red_sum_close = {
        void apply(inout bit<32> sum, out bit<32> closed) {
            closed = sum + eg_md.queue.depth_cells;
            sum = 0;
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(red_avg_sum_cells) red_avg_set = {
        void apply(inout bit<32> avg, out bit<32> now_avg) {
            avg = eg_md.block_sum_cells;
            now_avg = eg_md.block_sum_cells;
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(red_avg_sum_cells) red_avg_read = {
        void apply(inout bit<32> avg, out bit<32> now_avg) {
            now_avg = avg;
        }
    };

    /* Floyd & Jacobson's p_b as a step function of N x avg, written by the
     * controller (bfrt_controller/aqm/levels.py): no entry below min_th,
     * max_p (avg - min_th) / (max_th - min_th) between, and 32768 with
     * `hard` from max_th up (dropped even when ECN-capable, RFC 3168 6.1.2). */
    action set_level(bit<16> level, bit<1> hard) {
        eg_md.level = level;
        eg_md.hard = hard;
    }

    action no_drop() {
        eg_md.level = 0;
        eg_md.hard = 0;
    }

    table red_level {
        key = {
            eg_md.curve         : exact;
            eg_md.avg_sum_cells : ternary;
        }
        actions = { set_level; no_drop; }
        default_action = no_drop();
        size = AQM_RED_LEVEL_ENTRIES;
    }

    /* random and level are both at most 32768, so the difference's bit 15
     * is its sign. */
    action red_draw() {
        eg_md.random_margin = eg_md.random - eg_md.level;
    }

    /* ---- CoDel -------------------------------------------------------- */
    /* Times are the ingress clock's 64 ns ticks (32 bits, wraps every
     * 275 s); comparisons of two times use the sign of their difference,
     * so they hold across the wrap. 0 means "not set" in every register. */
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_first_above_ticks;
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_drop_start_ticks;
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_count;
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) codel_tail_next_ticks;

    action codel_times() {
        eg_md.target_margin_ns = eg_md.queue.sojourn_ns - eg_md.target_ns;
        eg_md.sojourn_ticks = eg_md.queue.sojourn_ns >> 6;
        eg_md.deadline_base_ticks = hdr.aqm_bridged.now_ticks + eg_md.interval_ticks;
        eg_md.tail_base_ticks = hdr.aqm_bridged.now_ticks + eg_md.tail_step_ticks;
    }

    action codel_dequeue_times() {
        eg_md.deq_ticks = hdr.aqm_bridged.now_ticks + eg_md.sojourn_ticks;
        eg_md.deadline_ticks = eg_md.deadline_base_ticks + eg_md.sojourn_ticks;
        eg_md.tail_next_ticks = eg_md.tail_base_ticks + eg_md.sojourn_ticks;
    }

    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_first_above_ticks) codel_below_target = {
        void apply(inout bit<32> first_above) {
            first_above = 0;
        }
    };

    /* RFC 8289 dodequeue: the first packet above target starts the
     * interval; ok_to_drop once a packet leaves at or after its end. */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_first_above_ticks) codel_above_target = {
        void apply(inout bit<32> first_above, out bit<1> ok) {
            if (first_above == 0) {
                first_above = eg_md.deadline_ticks;
                ok = 0;
            } else if (eg_md.deq_ticks - first_above < 0x80000000) {
                ok = 1;
            } else {
                ok = 0;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(codel_drop_start_ticks) codel_leave = {
        void apply(inout bit<32> start) {
            start = 0;
        }
    };

    /* The dropping state begins with this packet, or has lasted `elapsed`. */
    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(codel_drop_start_ticks) codel_dropping = {
        void apply(inout bit<32> start, out bit<32> elapsed) {
            if (start == 0) {
                start = eg_md.deq_ticks;
                elapsed = 0;
            } else {
                elapsed = eg_md.deq_ticks - start;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_count) codel_count_reset = {
        void apply(inout bit<32> count) {
            count = 0;
        }
    };

    /* One drop per packet while fewer than the due number were made: the
     * RFC's while loop, spread over the packets that leave. */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_count) codel_count_step = {
        void apply(inout bit<32> count, out bit<1> drop) {
            if (count < eg_md.due_count) {
                count = count + 1;
                drop = 1;
            } else {
                drop = 0;
            }
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_tail_next_ticks) codel_tail_reset = {
        void apply(inout bit<32> next) {
            next = 0;
        }
    };

    /* Beyond count_cap drops: one every tail step. */
    RegisterAction<bit<32>, aqm_slot_t, bit<1>>(codel_tail_next_ticks) codel_tail_step = {
        void apply(inout bit<32> next, out bit<1> drop) {
            if (next == 0 || eg_md.deq_ticks - next < 0x80000000) {
                next = eg_md.tail_next_ticks;
                drop = 1;
            } else {
                drop = 0;
            }
        }
    };

    /* RFC 8289's control law, summed: drops due after `elapsed` in the
     * dropping state (bfrt_controller/aqm/levels.py). No entry: none. */
    action set_due(bit<32> due_count, bit<1> tail) {
        eg_md.due_count = due_count;
        eg_md.tail = tail;
    }

    action no_due() {
        eg_md.due_count = 0;
        eg_md.tail = 0;
    }

    table codel_due {
        key = {
            eg_md.curve         : exact;
            eg_md.elapsed_ticks : ternary;
        }
        actions = { set_due; no_due; }
        default_action = no_due();
        size = AQM_CODEL_DUE_ENTRIES;
    }

    /* ---- the verdict --------------------------------------------------- */
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
            queue_hook.apply(eg_intr_md, eg_prsr_md, hdr.aqm_bridged.arrival_ns, eg_md.queue);
            random_hook.apply(eg_intr_md, eg_md.random);
            aqm_queue.apply();
            codel_times();
            if (eg_md.mode == AQM_MODE_RED) {
                /* One comparison in the stateful ALU: its input crossbar
                 * takes the limit, not the depth beside it. */
                if (eg_md.queue.depth_cells == 0) {
                    eg_md.block_limit = 0;
                } else {
                    eg_md.block_limit = eg_md.block_last;
                }
                eg_md.block_end = red_block_count.execute(eg_md.slot);
                if (eg_md.block_end == 1) {
                    eg_md.block_sum_cells = red_sum_close.execute(eg_md.slot);
                    eg_md.avg_sum_cells = red_avg_set.execute(eg_md.slot);
                } else {
                    red_sum_add.execute(eg_md.slot);
                    eg_md.avg_sum_cells = red_avg_read.execute(eg_md.slot);
                }
                red_level.apply();
                red_draw();
                if (eg_md.random_margin[15:15] == 1) {
                    /* The verdict here and below, on each branch: a flag
                     * both branches set and one test after them costs a
                     * stage of its own. */
                    if (eg_md.ecn == 1 && eg_md.hard == 0 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                    } else {
                        drop_packet();
                    }
                }
            } else if (eg_md.mode == AQM_MODE_CODEL) {
                codel_dequeue_times();
                if (eg_md.target_margin_ns[31:31] == 1) {
                    codel_below_target.execute(eg_md.slot);
                    eg_md.ok_to_drop = 0;
                } else {
                    eg_md.ok_to_drop = codel_above_target.execute(eg_md.slot);
                }
                if (eg_md.ok_to_drop == 0) {
                    codel_leave.execute(eg_md.slot);
                    codel_count_reset.execute(eg_md.slot);
                    codel_tail_reset.execute(eg_md.slot);
                } else {
                    eg_md.elapsed_ticks = codel_dropping.execute(eg_md.slot);
                    codel_due.apply();
                    if (eg_md.tail == 1) {
                        eg_md.codel_drop = codel_tail_step.execute(eg_md.slot);
                    } else {
                        eg_md.codel_drop = codel_count_step.execute(eg_md.slot);
                    }
                    /* CoDel has no hard drop: an ECT packet is marked. */
                    if (eg_md.codel_drop == 1) {
                        if (eg_md.ecn == 1 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                            mark_ce();
                        } else {
                            drop_packet();
                        }
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
