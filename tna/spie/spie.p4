// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* S-PIE (seed 002, sections 3.1-3.2, Eqs. 1-9, Algorithms 1-2): PIE's
 * proportional-integral drop probability plus a count-min sketch that,
 * when the queue is congested, drops the packets of the flows holding more
 * than their share. Plain PIE is the same program with the sketch off for
 * the port (mode PIE). tna/spie/README.md lists every departure from the
 * paper and why.
 *
 * Egress sees the delay, ingress decides the drop, and the two cannot
 * share a register, so:
 * Egress, per departing IPv4 data packet of an S-PIE port:
 *   del_cur is the packet's sojourn in 1024 ns units (ns >> 10);
 *   the first departure at least T_update after the last update is the
 *   PI step: del_old swaps in del_cur, p += alpha (del_cur - del_ref)
 *   + beta (del_cur - del_old), saturating in [0, 1] (p in 2^-32 units).
 *   alpha x d and beta x d are lookups: d's high byte (signed) and low
 *   byte each index a table the controller fills with alpha x value, so
 *   any alpha and beta work without a multiplier.
 *   That departure is mirrored, truncated to its Ethernet header, to the
 *   pipe's recirculation port carrying the slot, the new p, whether
 *   del_cur >= del_ref / 3 (Algorithm 2's congestion test) and the step's
 *   time (the departure's: arrival plus sojourn).
 * The copy leaves the recirculation port's egress as a state update
 * (Ethernet + feedback_h, msg_type SPIE_STATE, the port it left by as
 * the ring's start) and re-enters ingress, where it is accepted only on a
 * recirculation port: it writes p, the step's time and, if congested, the
 * time again in a second register for the slot, then goes on to the next
 * pipe's recirculation port, round every pipe the switch has, and is
 * dropped when the next stop would be where it started.
 * Ingress, per IPv4 data packet routed to an S-PIE port:
 *   the sketch: three rows of up to 4096 counters, CRC-16 (three
 *   polynomials) of the 5-tuple; every counter, the port's m_count and
 *   sum S start from zero in each epoch (ClearMemory every T_threshold,
 *   done lazily: a counter holds its epoch's start plus its count,
 *   capped at 2^16 - 1); counts are in units of 2^u packets (1 packet in
 *   2^u counted; the epoch and u from the fastest S-PIE port's speed);
 *   m_res = 1 + m_before, the row minimum before this packet's insertion;
 *   Eq. 9's weighted share G_threshold = sum m_k G_k / sum m_k
 *   = sum m_k^2 / m_count^2, and with S the sum of m_before over the
 *   epoch's packets, sum m_k^2 = 2 S + m_count, so
 *   G_k >= G_threshold <=> m_before m_count >= 2 S, tested on 4-bit
 *   fixed-point log2 lookups;
 *   if the last update is fresh and said congested, and the mode is
 *   S-PIE: a large flow's packet (beyond a rounding allowance) is
 *   dropped (Algorithm 2 lines 10-13 with the printed comparison
 *   corrected; with a configured probability, 1/2 by default) and any
 *   other admitted (lines 14-17); not congested, a
 *   packet is dropped with probability p (lines 4-6). Mode SPIE_PIE
 *   also applies p while congested; mode PIE applies p always.
 * Only admitted packets stay counted (Algorithm 2 lines 7-8, 16-17): the
 * rows, m_count and S count a packet before its verdict (a register is
 * read once, in a stage before the verdict it feeds), so an S-PIE
 * port's counted packet that is dropped is resubmitted instead, and its
 * second pass takes the count back out (the rows and m_count less one,
 * S less the row-0 count the first pass added, carried in the resubmit
 * digest with the first pass's epoch, the one the undo is for; a count
 * at the cap, or of another epoch by then, is left), then drops it.
 */
#include "../include/arch.p4"
#include "../include/size.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"

/* Modes: PIE (p for every packet); S-PIE, seed 002's Algorithm 2 (while
 * congested a large flow's packet is dropped and any other admitted; p
 * otherwise); S-PIE with PIE's p for every packet while congested too
 * (SPIE_PIE). Bit 1 set: the sketch judges. */
const bit<2> SPIE_MODE_NONE = 0;
const bit<2> SPIE_MODE_PIE = 1;
const bit<2> SPIE_MODE_SPIE = 2;
const bit<2> SPIE_MODE_SPIE_PIE = 3;
const class_id_t SPIE_BRIDGED_IDLE = 1;

typedef bit<8> spie_slot_t;
typedef bit<12> spie_column_t;

const bit<3> SPIE_RESUBMIT_UNDO = 1;

/* The resubmit digest of a dropped, counted packet: what its first pass
 * added to S, and the start of the epoch it was counted in (the second
 * pass comes a resubmission later, maybe in the next epoch, and must take
 * the count out of the epoch it went into). 8 bytes on Tofino, 16 on
 * Tofino2 (the chip's digest size). */
header spie_undo_h {
    bit<32> sum_added;
    bit<32> epoch_base;
#ifdef TOFCC_TOFINO2
    bit<64> pad;
#endif
}

struct ig_md_t {
    parsed_md_t   parsed;
    bool          forged;
    bit<1>        spoofed;
    bit<32>       now_ticks;
    bit<2>        mode;
    spie_slot_t   slot;
    bit<16>       column_mask;
    bit<32>       stale_before_ticks;  /* now - staleness limit */
    bit<32>       epoch_mask;          /* ~(2^k - 1) */
    bit<32>       epoch_base;          /* the epoch's start, in ticks */
    bit<32>       sample_mask;         /* 2^u - 1: count 1 packet in 2^u */
    bit<32>       sample_bits;         /* random & sample_mask: 0 <=> counted */
    bit<16>       hash0;
    bit<16>       hash1;
    bit<16>       hash2;
    bit<32>       row0;                /* the flow's count before this packet */
    bit<32>       row1;
    bit<32>       row2;
    bit<32>       row01;
    bit<32>       m_before;            /* m_res - 1: the row minimum */
    bit<32>       m_count_before;      /* m_count - 1 */
    bit<32>       sumsq;               /* S: m_before summed over the epoch */
    bit<16>       log_count;
    bit<16>       log_threshold;       /* log 2S - log m_count */
    bit<16>       large_margin;        /* 16 log2(m_before m_count / 2S) - allowance:
                                          bit 15 clear <=> large */
    spie_undo_h   undo;                /* the resubmit digest (second pass) */
    bit<1>        update_port;         /* arrived on a recirculation port */
    PortId_t      next_update_port;    /* the next pipe's recirculation port */
    bit<1>        fresh;               /* an update within the staleness limit */
    bit<1>        congested;           /* ... and it said del_cur >= del_ref/3 */
    bit<32>       prob;
    bit<32>       random;
    bit<32>       prob_margin;         /* random - p: bit 31 set <=> drop */
    bit<32>       large_drop;          /* q: a large flow's packet dropped with
                                          probability q (2^-31 units) */
    bit<32>       large_drop_margin;   /* random - q: bit 31 set <=> drop */
    bit<1>        drop;
}

struct eg_md_t {
    parsed_md_t   parsed;
    queue_md_t    queue;
    bit<1>        active;
    spie_slot_t   slot;
    MirrorId_t    session;
    bit<32>       del_ref_ns_shr10;
    bit<32>       congested_from_ns_shr10;  /* del_ref / 3 */
    bit<32>       due_before_ticks;          /* arrival - T_update */
    bit<32>       del_cur_ns_shr10;
    bit<32>       del_old_ns_shr10;
    bit<32>       sojourn_ticks;
    bit<32>       step_ticks;                /* the departure's time */
    bit<1>        tick;
    bit<32>       d_ref;                     /* del_cur - del_ref, signed */
    bit<32>       d_old;                     /* del_cur - del_old, signed */
    bit<32>       alpha_hi;
    bit<32>       alpha_lo;
    bit<32>       beta_hi;
    bit<32>       beta_lo;
    bit<32>       minus_alpha_hi;
    bit<32>       minus_alpha_lo;
    bit<32>       minus_beta_hi;
    bit<32>       minus_beta_lo;
    bit<32>       alpha_term;
    bit<32>       beta_term;
    bit<32>       minus_alpha_term;
    bit<32>       minus_beta_term;
    bit<32>       delta;
    bit<32>       minus_delta;
    bit<32>       congested_margin;          /* del_cur - del_ref/3 */
    bit<32>       prob;
    pkt_type_t    mirror_pkt_type;
    bit<8>        mirror_congested;
}

/* The controls SwitchIngress and SwitchEgress are composed of, one per
 * concern (tna/spie/README.md, "Files"). */
#include "state.p4"
#include "sketch.p4"
#include "verdict.p4"
#include "pi.p4"

/* A resubmitted packet (the second pass of a dropped, counted one) has the
 * resubmit digest where a first pass has the port metadata. */
parser SwitchIngressParser(packet_in pkt, out headers_t hdr, out ig_md_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    HeaderParser() header_parser;

    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_undo;
            default: parse_port_metadata;
        }
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_headers;
    }

    state parse_undo {
        pkt.extract(ig_md.undo);
#ifdef TOFCC_TOFINO2
        pkt.advance(64);  /* Tofino2 pads the digest to the port metadata's size */
#endif
        transition parse_headers;
    }

    state parse_headers {
        header_parser.apply(pkt, hdr, ig_md.parsed);
        transition accept;
    }
}

/* The chip's random number, 31 bits, or the value a test pins for packets
 * arriving on a port (tofino-model's draws cannot be predicted). */
control IngressRandomHook(in ingress_intrinsic_metadata_t ig_intr_md, out bit<32> value) {
    /* A 31-bit draw cast up, not a 32-bit one masked: the mask is a 32-bit
     * constant the compiler loads in a stage of its own, which put the
     * draw, and the sketch's sample behind it, one stage later. */
    Random<bit<31>>() rng;

    action draw() {
        value = (bit<32>)rng.get();
    }

#ifdef TOFCC_TEST_HOOKS
    action inject(bit<32> random_value) {
        value = (bit<32>)random_value[30:0];
    }

    table random_override {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { inject; NoAction; }
        default_action = NoAction();
        size = TOFCC_PORTS;
    }

    apply {
        draw();
        random_override.apply();
    }
#else
    apply { draw(); }
#endif
}

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
    IngressRandomHook() random_hook;
    SpieSketchIndex() sketch_index;
    SpieState() pie_state;
    SpieSketchRows() sketch_rows;
    SpieShareTest() share_test;
    SpieVerdict() verdict;

    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) rejected_updates;

    /* The clock is bits 37..6 of a 48-bit timestamp: no ALU moves it into
     * another field, the hash unit's crossbar does (an identity hash). The
     * bridged copy is also what the arithmetic on the clock uses, since it
     * is not tied to the timestamp's bit positions. */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) clock_to_header;

    /* The bridged header is filled here rather than in a table of its own:
     * left to itself bf-p4c placed that table late, and the routing table
     * (which rewrites the MACs this copies) had to wait for it. */
    action bridge_clock() {
        hdr.bridged.setValid();
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED;
        hdr.bridged.class_id = 0;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr;
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr;
        hdr.aqm_bridged.setValid();
        hdr.aqm_bridged.now_ticks = clock_to_header.get({ig_md.now_ticks});
        hdr.aqm_bridged.arrival_ns = ig_intr_md.ingress_mac_tstamp[31:0];
    }

    /* ---- state updates from egress (SpieState takes them in) --------- */
    /* update_ports runs for every packet and only says whether the port may
     * carry updates; the chain below drops an update and the writes after
     * it take it in. */
    action accept_update(PortId_t next_port) {
        ig_md.update_port = 1;
        ig_md.next_update_port = next_port;
    }

    action refuse_update() {
        ig_md.update_port = 0;
        ig_md.next_update_port = 0;
    }

    action drop_update() {
        ig_dprsr_md.drop_ctl = 1;
    }

    /* Every ingress pipe that feeds the port needs PIE's state, and the
     * step's copy re-enters only its own pipe: the update goes on round
     * the pipes' recirculation ports (a ring the controller sets up in
     * update_ports over the pipes the switch has) until the next stop is
     * the port it started from (flow_src_port, set in egress). */
    action pass_update() {
        ig_tm_md.ucast_egress_port = ig_md.next_update_port;
    }

    action reject_update() {
        ig_dprsr_md.drop_ctl = 1;
        rejected_updates.count(ig_intr_md.ingress_port);
    }

    /* Only the chip's recirculation ports carry an update: a neighbour
     * switch is trusted for backpressure, not to set this switch's p.
     * Each names the next pipe's recirculation port of the ring. */
    table update_ports {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { accept_update; refuse_update; }
        default_action = refuse_update();
        size = SPIE_UPDATE_PORT_ENTRIES;
    }

    /* ---- the port's mode ------------------------------------------------ */
    /* minus_stale_ticks: 2^32 - the staleness limit (action data can only
     * be added). */
    action set_spie(bit<8> slot, bit<2> mode, bit<32> minus_stale_ticks) {
        ig_md.slot = slot;
        ig_md.mode = mode;
        ig_md.stale_before_ticks = hdr.aqm_bridged.now_ticks + minus_stale_ticks;
    }

    action no_spie() {
        ig_md.mode = SPIE_MODE_NONE;
        ig_md.slot = 0;
        ig_md.stale_before_ticks = 0;
    }

    table spie_port {
        key = { ig_tm_md.ucast_egress_port : exact; }
        actions = { set_spie; no_spie; }
        default_action = no_spie();
        size = SPIE_SLOTS;
    }

    apply {
        clock.apply(ig_intr_md, ig_md.now_ticks);
        bridge_clock();
        random_hook.apply(ig_intr_md, ig_md.random);
        sketch_index.apply(hdr, ig_md);

        trust.apply(hdr, ig_intr_md, ig_dprsr_md, ig_md.forged);
        source_guard.apply(hdr, ig_intr_md, ig_md.spoofed);
        /* Steps that touch no state run for every packet, so each lands in
         * the first stage its inputs allow; each stateful step has its own
         * gate on `mode` rather than one nested block (Tofino runs one
         * next-table chain per gress: tna/README.md, "Stages"). */
        ig_md.mode = SPIE_MODE_NONE;
        update_ports.apply();
        if (ig_md.forged) {
            /* already dropped and counted by trust */
        } else if (hdr.feedback.isValid() &&
                   hdr.feedback.msg_type == FEEDBACK_TYPE_SPIE_STATE) {
            if (ig_md.update_port == 1 &&
                    ig_md.next_update_port == hdr.feedback.flow_src_port[8:0]) {
                drop_update();
            } else if (ig_md.update_port == 1) {
                pass_update();
            } else {
                reject_update();
            }
        } else if (ig_md.spoofed == 1) {
            ig_dprsr_md.drop_ctl = 1;
        } else {
            forward.apply(hdr, ig_tm_md, ig_dprsr_md);
            spie_port.apply();
        }
        pie_state.apply(hdr, ig_md);
        sketch_rows.apply(hdr, ig_md, ig_intr_md);
        share_test.apply(ig_md, ig_intr_md);
        verdict.apply(ig_md, ig_intr_md, ig_dprsr_md, ig_tm_md);
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resubmit;

    apply {
        /* The epoch's start goes into the digest here, not in the verdict's
         * actions: read there, it held the whole ingress chain back a stage
         * on Tofino (9 stages instead of 8). */
        if (ig_dprsr_md.resubmit_type == SPIE_RESUBMIT_UNDO) {
#ifdef TOFCC_TOFINO2
            resubmit.emit<spie_undo_h>({ig_md.undo.sum_added, ig_md.epoch_base, 64w0});
#else
            resubmit.emit<spie_undo_h>({ig_md.undo.sum_added, ig_md.epoch_base});
#endif
        }
        pkt.emit(hdr.bridged);
        pkt.emit(hdr.aqm_bridged);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.feedback);
    }
}

/* Egress sees a bridged packet or a PI step's copy (mirror header + the
 * Ethernet header the session kept). */
parser SwitchEgressParser(packet_in pkt, out headers_t hdr, out eg_md_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    HeaderParser() header_parser;

    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<pkt_type_t>()) {
            PKT_TYPE_MIRROR_SPIE: parse_update_copy;
            default: parse_bridged;
        }
    }

    state parse_bridged {
        pkt.extract(hdr.bridged);
        pkt.extract(hdr.aqm_bridged);
        header_parser.apply(pkt, hdr, eg_md.parsed);
        transition accept;
    }

    state parse_update_copy {
        pkt.extract(hdr.spie_mirror);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_md_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    TimestampQueueHook() queue_hook;
    SpiePiTerms() pi_terms;
    SpiePiProbability() pi_probability;

    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) pi_updates;

    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) last_update_ticks;
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) del_old;

    /* minus_t_update_ticks: 2^32 - T_update (action data can only be
     * added). */
    action set_pi(bit<8> slot, MirrorId_t session, bit<32> del_ref_ns_shr10,
                  bit<32> congested_from_ns_shr10, bit<32> minus_t_update_ticks) {
        eg_md.active = 1;
        eg_md.slot = slot;
        eg_md.session = session;
        eg_md.del_ref_ns_shr10 = del_ref_ns_shr10;
        eg_md.congested_from_ns_shr10 = congested_from_ns_shr10;
        eg_md.due_before_ticks = hdr.aqm_bridged.now_ticks + minus_t_update_ticks;
    }

    action no_pi() {
        eg_md.active = 0;
        eg_md.slot = 0;
        eg_md.session = 0;
        eg_md.del_ref_ns_shr10 = 0;
        eg_md.congested_from_ns_shr10 = 0;
        eg_md.due_before_ticks = 0;
    }

    table pi_port {
        key = { eg_intr_md.egress_port : exact; }
        actions = { set_pi; no_pi; }
        default_action = no_pi();
        size = SPIE_SLOTS;
    }

    action delay_now() {
        eg_md.del_cur_ns_shr10 = eg_md.queue.sojourn_ns >> 10;
        eg_md.sojourn_ticks = eg_md.queue.sojourn_ns >> 6;
    }

    /* The first departure that arrived at least T_update after the last
     * step's packet takes the next step (a queue departs in arrival order;
     * times compared by the sign of their difference). */
    RegisterAction<bit<32>, spie_slot_t, bit<1>>(last_update_ticks) tick_check = {
        void apply(inout bit<32> last, out bit<1> due) {
            if (eg_md.due_before_ticks - last < 0x80000000) {
                last = hdr.aqm_bridged.now_ticks;
                due = 1;
            } else {
                due = 0;
            }
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(del_old) del_old_swap = {
        void apply(inout bit<32> old, out bit<32> previous) {
            previous = old;
            old = eg_md.del_cur_ns_shr10;
        }
    };

    action differences() {
        /* The update is stamped with when the step was taken (this packet's
         * departure), not when its packet arrived: with a queue deeper than
         * the staleness limit every update would otherwise reach ingress
         * already stale, and the port lose its AQM. */
        eg_md.step_ticks = hdr.aqm_bridged.now_ticks + eg_md.sojourn_ticks;
        eg_md.d_ref = eg_md.del_cur_ns_shr10 - eg_md.del_ref_ns_shr10;
        eg_md.d_old = eg_md.del_cur_ns_shr10 - eg_md.del_old_ns_shr10;
        eg_md.congested_margin = eg_md.del_cur_ns_shr10 - eg_md.congested_from_ns_shr10;
    }

    action report(bit<8> congested) {
        eg_md.mirror_pkt_type = PKT_TYPE_MIRROR_SPIE;
        eg_md.mirror_congested = congested;
        eg_dprsr_md.mirror_type = MIRROR_TYPE_SPIE;
    }

    action build_update() {
        hdr.feedback.flow_src_port = (bit<16>)eg_intr_md.egress_port;  /* the ring's start */
        hdr.ethernet.dst_addr = 0;
        hdr.ethernet.src_addr = 0;
        hdr.ethernet.ether_type = ETHERTYPE_TOFCC_FEEDBACK;
        hdr.feedback.setValid();
        hdr.feedback.version = FEEDBACK_VERSION;
        hdr.feedback.msg_type = FEEDBACK_TYPE_SPIE_STATE;
        hdr.feedback.class_id = (class_id_t)hdr.spie_mirror.slot;
        hdr.feedback.queue_id = 0;
        hdr.feedback.degree = hdr.spie_mirror.congested;
        hdr.feedback.flow_protocol = 0;
        hdr.feedback.rate = hdr.spie_mirror.prob >> 1;  /* 2^-31 units */
        hdr.feedback.target_rate = hdr.spie_mirror.now_ticks;  /* the step's time */
        hdr.spie_mirror.setInvalid();
    }

    apply {
        eg_md.tick = 0;
        eg_md.active = 0;
        if (hdr.spie_mirror.isValid()) {
            build_update();
        } else if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
            queue_hook.apply(eg_intr_md, eg_prsr_md, hdr.aqm_bridged.arrival_ns, eg_md.queue);
            pi_port.apply();
        }
        /* Each step has its own gate on `tick` (tna/README.md, "Stages");
         * the lookups and sums touch no state and run for every packet. */
        if (eg_md.active == 1) {
            eg_md.tick = tick_check.execute(eg_md.slot);
        }
        delay_now();
        if (eg_md.tick == 1) {
            eg_md.del_old_ns_shr10 = del_old_swap.execute(eg_md.slot);
        }
        differences();
        pi_terms.apply(eg_md);
        pi_probability.apply(hdr, eg_md);
        if (eg_md.tick == 1 && eg_md.congested_margin[31:31] == 1) {
            report(0);
        } else if (eg_md.tick == 1) {
            report(1);
        }
        if (eg_md.tick == 1) {
            pi_updates.count(eg_intr_md.egress_port);
        }
    }
}

control SwitchEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    Mirror() mirror;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_SPIE) {
            mirror.emit<spie_mirror_h>(eg_md.session, {
                eg_md.mirror_pkt_type,
                eg_md.slot,
                eg_md.mirror_congested,
                8w0,
                eg_md.prob,
                eg_md.step_ticks});
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
