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
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"

#define SPIE_PORTS 512
#define SPIE_SLOTS 256
#define SPIE_SKETCH_COLUMNS 4096
#define SPIE_LOG_ENTRIES 512
#define SPIE_TERM_ENTRIES 272

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
        size = 512;
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

    Counter<bit<32>, PortId_t>(SPIE_PORTS, CounterType_t.PACKETS) large_flow_drops;
    Counter<bit<32>, PortId_t>(SPIE_PORTS, CounterType_t.PACKETS) random_drops;
    Counter<bit<32>, PortId_t>(SPIE_PORTS, CounterType_t.PACKETS) rejected_updates;

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

    /* ---- state updates from egress ----------------------------------- */
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) prob;
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) state;
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) congested;

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
        size = 16;
    }

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(prob) prob_write = {
        void apply(inout bit<32> p) {
            p = hdr.feedback.rate;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(prob) prob_read = {
        void apply(inout bit<32> p, out bit<32> now_p) {
            now_p = p;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(state) state_write = {
        void apply(inout bit<32> s) {
            s = hdr.feedback.target_rate;
        }
    };

    /* The update's time when it said congested, else 0. */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(congested) congested_set = {
        void apply(inout bit<32> c) {
            c = hdr.feedback.target_rate;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(congested) congested_clear = {
        void apply(inout bit<32> c) {
            c = 0;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<1>>(congested) congested_read = {
        void apply(inout bit<32> c, out bit<1> yes) {
            if (c == 0) {
                yes = 0;
            } else if (ig_md.stale_before_ticks - c < 0x80000000) {
                yes = 0;
            } else {
                yes = 1;
            }
        }
    };

    /* An update older than the staleness limit is not fresh: no update
     * came because nothing departed, so the queue was empty. */
    RegisterAction<bit<32>, spie_slot_t, bit<1>>(state) state_read = {
        void apply(inout bit<32> s, out bit<1> fresh) {
            if (ig_md.stale_before_ticks - s < 0x80000000) {
                fresh = 0;
            } else {
                fresh = 1;
            }
        }
    };

    /* ---- configuration -------------------------------------------------- */
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

    /* T_threshold = 2^k ticks of 64 ns, 16 <= k <= 24 (the controller sets
     * the default action's mask, ~(2^k - 1)): the epoch starts at the clock
     * with its low k bits cleared, and a counter holds that start plus its
     * count. The counts are in units of 2^u packets: a packet is counted
     * when the low u bits of its random value are 0 (sample_mask 2^u - 1,
     * u from the port rate, bfrt_controller/spie/config.py), so that a
     * line-rate epoch stays below the counters' cap and S below 2^32. A
     * packet of a flow judged large is dropped with probability large_drop
     * (2^-31 units; 2^31: always, Algorithm 2 line 13; the controller's
     * default is 1/2, README departure 13). */
    action set_sketch(bit<32> epoch_mask, bit<16> column_mask, bit<32> sample_mask,
                      bit<32> large_drop) {
        ig_md.epoch_mask = epoch_mask;
        ig_md.column_mask = column_mask;
        ig_md.sample_mask = sample_mask;
        ig_md.large_drop = large_drop;
    }

    action draw_sample() {
        ig_md.sample_bits = ig_md.random & ig_md.sample_mask;
    }

    action epoch_start() {
        ig_md.epoch_base = hdr.aqm_bridged.now_ticks & ig_md.epoch_mask;
    }



    table sketch_config {
        actions = { set_sketch; }
        default_action = set_sketch(0xFF000000, 0x0FFF, 0, 0x80000000);
        size = 1;
    }

    /* ---- the sketch ----------------------------------------------------- */
    CRCPolynomial<bit<16>>(16w0x8005, true, false, false, 16w0x0000, 16w0x0000) poly0;
    CRCPolynomial<bit<16>>(16w0x1021, true, false, false, 16w0x0000, 16w0x0000) poly1;
    CRCPolynomial<bit<16>>(16w0x3D65, true, false, false, 16w0x0000, 16w0x0000) poly2;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, poly0) hasher0;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, poly1) hasher1;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, poly2) hasher2;

    /* One action per hash: an action gets 32 bits of hash output. */
    action hash_row0() {
        ig_md.hash0 = hasher0.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                   ig_md.parsed.l4_src_port, ig_md.parsed.l4_dst_port});
    }

    action hash_row1() {
        ig_md.hash1 = hasher1.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                   ig_md.parsed.l4_src_port, ig_md.parsed.l4_dst_port});
    }

    action hash_row2() {
        ig_md.hash2 = hasher2.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                   ig_md.parsed.l4_src_port, ig_md.parsed.l4_dst_port});
    }

    action mask_columns() {
        ig_md.hash0 = ig_md.hash0 & ig_md.column_mask;
        ig_md.hash1 = ig_md.hash1 & ig_md.column_mask;
        ig_md.hash2 = ig_md.hash2 & ig_md.column_mask;
    }

    Register<bit<32>, spie_column_t>(SPIE_SKETCH_COLUMNS, 0) sketch_row0;
    Register<bit<32>, spie_column_t>(SPIE_SKETCH_COLUMNS, 0) sketch_row1;
    Register<bit<32>, spie_column_t>(SPIE_SKETCH_COLUMNS, 0) sketch_row2;
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) m_count;
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) sumsq;

    /* A counter 2^16 or more above the epoch's start, or below it, holds
     * another epoch's count: it restarts at this packet (counted, so a
     * flow seen this epoch counts at least 1). A count stops at
     * SPIE_COUNT_CAP (2^16 - 1 < 2^k): it can never reach the next
     * epoch's start, so an earlier epoch's counter is never read as this
     * one's, and the window needs no more than the cap (with 2^24 a
     * counter untouched for 2^32 ticks read as its old count plus a
     * multiple of 2^16 for up to 256 epochs). Out: the count before this
     * packet. _insert counts the packet, _read (a packet the sample skips)
     * only reads, or restarts, _undo (the second pass of a counted packet
     * that was dropped) takes the count back out of the first pass's epoch
     * (the digest's, not the clock's: the epoch may have turned between the
     * passes; a second input rather than a choice of epoch_base, which
     * held the chain back a stage): a counter of another epoch by then is
     * left alone, and so is one at the cap, whose first pass may not have
     * added (a saturated count never drifts down). */
#define SPIE_COUNT_CAP 0x0000FFFF
#define SPIE_EPOCH_WINDOW 0x00010000
#define SPIE_TAGGED_INSERT(reg, name) \
    RegisterAction<bit<32>, spie_column_t, bit<32>>(reg) name = { \
        void apply(inout bit<32> c, out bit<32> before) { \
            if (c - ig_md.epoch_base >= SPIE_EPOCH_WINDOW) { \
                before = 0; \
                c = ig_md.epoch_base + 1; \
            } else if (c - ig_md.epoch_base < SPIE_COUNT_CAP) { \
                before = c - ig_md.epoch_base; \
                c = c + 1; \
            } else { \
                before = c - ig_md.epoch_base; \
            } \
        } \
    }
#define SPIE_TAGGED_READ(reg, name) \
    RegisterAction<bit<32>, spie_column_t, bit<32>>(reg) name = { \
        void apply(inout bit<32> c, out bit<32> before) { \
            if (c - ig_md.epoch_base >= SPIE_EPOCH_WINDOW) { \
                before = 0; \
                c = ig_md.epoch_base + 1; \
            } else { \
                before = c - ig_md.epoch_base; \
            } \
        } \
    }
#define SPIE_TAGGED_UNDO(reg, name) \
    RegisterAction<bit<32>, spie_column_t, bit<32>>(reg) name = { \
        void apply(inout bit<32> c) { \
            if (c - ig_md.undo.epoch_base < SPIE_COUNT_CAP) { \
                c = c - 1; \
            } \
        } \
    }
    SPIE_TAGGED_INSERT(sketch_row0, row0_insert);
    SPIE_TAGGED_INSERT(sketch_row1, row1_insert);
    SPIE_TAGGED_INSERT(sketch_row2, row2_insert);
    SPIE_TAGGED_READ(sketch_row0, row0_read);
    SPIE_TAGGED_READ(sketch_row1, row1_read);
    SPIE_TAGGED_READ(sketch_row2, row2_read);
    SPIE_TAGGED_UNDO(sketch_row0, row0_undo);
    SPIE_TAGGED_UNDO(sketch_row1, row1_undo);
    SPIE_TAGGED_UNDO(sketch_row2, row2_undo);

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(m_count) m_count_insert = {
        void apply(inout bit<32> c, out bit<32> before) {
            if (c - ig_md.epoch_base >= SPIE_EPOCH_WINDOW) {
                before = 0;
                c = ig_md.epoch_base + 1;
            } else if (c - ig_md.epoch_base < SPIE_COUNT_CAP) {
                before = c - ig_md.epoch_base;
                c = c + 1;
            } else {
                before = c - ig_md.epoch_base;
            }
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(m_count) m_count_read = {
        void apply(inout bit<32> c, out bit<32> before) {
            if (c - ig_md.epoch_base >= SPIE_EPOCH_WINDOW) {
                before = 0;
                c = ig_md.epoch_base + 1;
            } else {
                before = c - ig_md.epoch_base;
            }
        }
    };

    /* Out: the count as the undo found it; below the cap, the undo took
     * one off, and S's undo follows it (sumsq_undo). */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(m_count) m_count_undo = {
        void apply(inout bit<32> c, out bit<32> before) {
            before = c - ig_md.undo.epoch_base;
            if (c - ig_md.undo.epoch_base < SPIE_COUNT_CAP) {
                c = c - 1;
            }
        }
    };

    /* S = the sum over the epoch's packets of the count row 0 had before
     * each = sum_k m_k (m_k - 1) / 2 for row 0's counts, so Eq. 9's sum of
     * squares is 2 S + m_count, and G_k >= G_threshold, i.e.
     * m_res m_count >= sum m_k^2, is m_before m_count >= 2 S. Row 0 rather
     * than the row minimum so that S does not wait for the minimum (two
     * stages); collisions can only raise it. The slot's first packet of an
     * epoch restarts the sum. Out: S before this packet, S_b; the test is
     * the same for a counted packet and one the sample skips (as if it
     * were counted): m_before (m_count_b + 1) >= 2 (S_b + m_before), i.e.
     * m_before (m_count_b - 1) >= 2 S_b, with m_count_b = m_count_before.
     * Only counted packets add (counts are in
     * units of 2^u packets), and only while m_count counts: at its cap,
     * which only arrivals above the port's line rate (several ports into
     * one) reach, S stops with it, so the two keep their ratio; the add
     * also saturates (tna/spie/README.md, "Sized for the ports it
     * guards"). */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(sumsq) sumsq_add = {
        void apply(inout bit<32> s, out bit<32> before) {
            before = s;
            if (ig_md.m_count_before == 0) {
                s = ig_md.row0;
            } else if (ig_md.m_count_before < SPIE_COUNT_CAP) {
                s = s |+| ig_md.row0;
            }
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(sumsq) sumsq_read = {
        void apply(inout bit<32> s, out bit<32> before) {
            before = s;
            if (ig_md.m_count_before == 0) {
                s = 0;
            }
        }
    };

    /* The second pass of a dropped, counted packet: less what its first pass
     * added (ig_md.row0 holds the digest's sum_added then, so the register
     * keeps its two PHV inputs), when m_count's undo took its count out
     * (the first pass's epoch, below the cap: m_count_before is what
     * m_count_undo found), so S and m_count are undone together. */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(sumsq) sumsq_undo = {
        void apply(inout bit<32> s) {
            if (ig_md.m_count_before < SPIE_COUNT_CAP) {
                s = s |-| ig_md.row0;
            }
        }
    };

    action undo_amount() {
        ig_md.row0 = ig_md.undo.sum_added;
    }

    action take_min01() {
        ig_md.row01 = min(ig_md.row0, ig_md.row1);
    }

    action take_min() {
        ig_md.m_before = min(ig_md.row01, ig_md.row2);
    }

    /* 16 x log2, rounded down to a sixteenth from the leading one and the
     * four bits after it (bfrt_controller/spie/tables.py): of m_before, of
     * m_count_before - 1 and of 2 S_b. m_before = 0 (the flow's first
     * packet this epoch) has no entry and m_before below 16 gets -1024,
     * as m_count_before 0 (no entry) and 1 do in log_count: either is
     * never large. */
    /* The log_sumsq and log_res actions also take the difference, each
     * saving the stage a separate subtraction would cost. log_sumsq's
     * entries hold 16 log2(2 S_b) plus the margin a flow must exceed the
     * weighted average by (a strict excess beyond the three logs'
     * rounding: bfrt_controller/spie/tables.py), so the flow is large
     * exactly when the result is not negative. Logs are in -1024..532:
     * the margin's bit 15 is its sign, and the verdict. */
    action set_log_count(bit<16> log16) { ig_md.log_count = log16; }
    action set_log_sumsq(bit<16> log16) { ig_md.log_threshold = log16 - ig_md.log_count; }
    action set_log_res(bit<16> log16) { ig_md.large_margin = log16 - ig_md.log_threshold; }

    table log_res {
        key = { ig_md.m_before : ternary; }
        actions = { set_log_res; }
        default_action = set_log_res(0xFC00);
        size = SPIE_LOG_ENTRIES;
    }

    table log_count {
        key = { ig_md.m_count_before : ternary; }
        actions = { set_log_count; }
        default_action = set_log_count(0xFC00);
        size = SPIE_LOG_ENTRIES;
    }

    table log_sumsq {
        key = { ig_md.sumsq : ternary; }
        actions = { set_log_sumsq; }
        default_action = set_log_sumsq(0);
        size = SPIE_LOG_ENTRIES;
    }

    /* Both below 2^31: bit 31 set <=> random < p, drop. */
    action random_margin() {
        ig_md.prob_margin = ig_md.random - ig_md.prob;
        ig_md.large_drop_margin = ig_md.random - ig_md.large_drop;
    }

    action drop_large() {
        ig_dprsr_md.drop_ctl = 1;
        large_flow_drops.count(ig_tm_md.ucast_egress_port);
    }

    action drop_random() {
        ig_dprsr_md.drop_ctl = 1;
        random_drops.count(ig_tm_md.ucast_egress_port);
    }

    /* A counted packet of an S-PIE port is not admitted: counted as dropped
     * now, resubmitted so that its second pass takes its count back out
     * (it is not forwarded: a resubmitted packet goes back to the parser). */
    action undo_large() {
        ig_dprsr_md.resubmit_type = SPIE_RESUBMIT_UNDO;
        ig_md.undo.sum_added = ig_md.row0;
        large_flow_drops.count(ig_tm_md.ucast_egress_port);
    }

    action undo_random() {
        ig_dprsr_md.resubmit_type = SPIE_RESUBMIT_UNDO;
        ig_md.undo.sum_added = ig_md.row0;
        random_drops.count(ig_tm_md.ucast_egress_port);
    }

    /* The second pass: its count is out again, and it was never admitted. */
    action drop_undone() {
        ig_dprsr_md.drop_ctl = 1;
    }

    /* No update for the staleness limit: the queue was empty, so the PI
     * step this packet may take in egress restarts p from 0, the p ingress
     * already applies (bridged in class_id, which S-PIE does not use). */
    action mark_idle() {
        hdr.bridged.class_id = SPIE_BRIDGED_IDLE;
    }

    apply {
        clock.apply(ig_intr_md, ig_md.now_ticks);
        bridge_clock();
        sketch_config.apply();
        hash_row0();
        hash_row1();
        hash_row2();
        epoch_start();
        mask_columns();
        random_hook.apply(ig_intr_md, ig_md.random);
        draw_sample();

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
        /* The update's writes sit outside the chain above: bf-p4c on Tofino
         * places the rest of a chain it has started before the tables beside
         * it, and these writes must share stage 3 with the reads (one
         * register, one stage). Inside the chain they held the random hook
         * and the epoch back a stage, and the verdict with them: 10 ingress
         * stages on Tofino instead of 9 (tna/spie/README.md, "Stages"). */
        if (!ig_md.forged && hdr.feedback.isValid() &&
                hdr.feedback.msg_type == FEEDBACK_TYPE_SPIE_STATE && ig_md.update_port == 1) {
            prob_write.execute(hdr.feedback.class_id[7:0]);
            state_write.execute(hdr.feedback.class_id[7:0]);
            if (hdr.feedback.degree == 1) {
                congested_set.execute(hdr.feedback.class_id[7:0]);
            } else {
                congested_clear.execute(hdr.feedback.class_id[7:0]);
            }
        }
        if (ig_md.mode != SPIE_MODE_NONE) {
            ig_md.prob = prob_read.execute(ig_md.slot);
            ig_md.fresh = state_read.execute(ig_md.slot);
            ig_md.congested = congested_read.execute(ig_md.slot);
        }
        /* Every routed IPv4 packet is counted in the sketch (its gate needs
         * nothing from spie_port, which saves a stage): a flow to a port
         * without S-PIE only shares counters with S-PIE flows through
         * collisions, as any other flow does. A second pass (resubmitted:
         * the packet was counted, then dropped) takes its count back out;
         * it hashes to the same columns and routes to the same slot. */
        if (ig_intr_md.resubmit_flag == 1) {
            row0_undo.execute((spie_column_t)ig_md.hash0);
            row1_undo.execute((spie_column_t)ig_md.hash1);
            row2_undo.execute((spie_column_t)ig_md.hash2);
            undo_amount();
        } else if (!ig_md.forged && ig_md.spoofed == 0 && hdr.ipv4.isValid() &&
                ig_md.sample_bits == 0) {
            ig_md.row0 = row0_insert.execute((spie_column_t)ig_md.hash0);
            ig_md.row1 = row1_insert.execute((spie_column_t)ig_md.hash1);
            ig_md.row2 = row2_insert.execute((spie_column_t)ig_md.hash2);
        } else if (!ig_md.forged && ig_md.spoofed == 0 && hdr.ipv4.isValid()) {
            ig_md.row0 = row0_read.execute((spie_column_t)ig_md.hash0);
            ig_md.row1 = row1_read.execute((spie_column_t)ig_md.hash1);
            ig_md.row2 = row2_read.execute((spie_column_t)ig_md.hash2);
        }
        if (ig_md.mode != SPIE_MODE_NONE && ig_md.fresh == 0) {
            mark_idle();
        }
        if (ig_intr_md.resubmit_flag == 1 && ig_md.mode != SPIE_MODE_NONE) {
            ig_md.m_count_before = m_count_undo.execute(ig_md.slot);
        } else if (ig_md.mode != SPIE_MODE_NONE && ig_md.sample_bits == 0) {
            ig_md.m_count_before = m_count_insert.execute(ig_md.slot);
        } else if (ig_md.mode != SPIE_MODE_NONE) {
            ig_md.m_count_before = m_count_read.execute(ig_md.slot);
        }
        if (ig_intr_md.resubmit_flag == 1 && ig_md.mode != SPIE_MODE_NONE) {
            sumsq_undo.execute(ig_md.slot);
        } else if (ig_md.mode != SPIE_MODE_NONE && ig_md.sample_bits == 0) {
            ig_md.sumsq = sumsq_add.execute(ig_md.slot);
        } else if (ig_md.mode != SPIE_MODE_NONE) {
            ig_md.sumsq = sumsq_read.execute(ig_md.slot);
        }
        random_margin();
        take_min01();
        take_min();
        log_count.apply();
        log_sumsq.apply();
        log_res.apply();
        /* Algorithm 2: congested (del_cur >= del_ref/3, from a fresh
         * update), a large flow's packet is dropped (lines 10-13; with
         * probability large_drop, README departure 13) and, in
         * S-PIE mode, any other admitted (lines 14-17); not congested, PIE's
         * p (lines 4-8). In SPIE_PIE mode p applies while congested too
         * (README departure 12). A dropped packet that was counted (the
         * sketch's modes) goes round once more to be uncounted: the counts
         * are of admitted packets, so a large flow is dropped only until
         * the others' admissions raise the threshold past its count. */
        if (ig_intr_md.resubmit_flag == 1) {
            drop_undone();
        } else if (ig_md.mode[1:1] == 1 && ig_md.congested == 1 &&
                ig_md.large_margin[15:15] == 0 && ig_md.large_drop_margin[31:31] == 1) {
            if (ig_md.sample_bits == 0) {
                undo_large();
            } else {
                drop_large();
            }
        } else if (ig_md.mode == SPIE_MODE_SPIE && ig_md.congested == 1) {
            /* a small flow while congested: admitted */
        } else if (ig_md.mode != SPIE_MODE_NONE && ig_md.fresh == 1 &&
                   ig_md.prob_margin[31:31] == 1) {
            if (ig_md.mode[1:1] == 1 && ig_md.sample_bits == 0) {
                undo_random();
            } else {
                drop_random();
            }
        }
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

    Counter<bit<32>, PortId_t>(SPIE_PORTS, CounterType_t.PACKETS) pi_updates;

    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) last_update_ticks;
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) del_old;
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) pi_prob;

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

    /* alpha x d and beta x d in 2^-32 units of probability, from d's
     * signed high byte (d[31:8] in -128..127, or a catch-all that
     * saturates) and its low byte; entries from
     * bfrt_controller/spie/terms.py. */
    action set_alpha_hi(bit<32> term, bit<32> minus_term) {
        eg_md.alpha_hi = term;
        eg_md.minus_alpha_hi = minus_term;
    }

    action set_alpha_lo(bit<32> term, bit<32> minus_term) {
        eg_md.alpha_lo = term;
        eg_md.minus_alpha_lo = minus_term;
    }

    action set_beta_hi(bit<32> term, bit<32> minus_term) {
        eg_md.beta_hi = term;
        eg_md.minus_beta_hi = minus_term;
    }

    action set_beta_lo(bit<32> term, bit<32> minus_term) {
        eg_md.beta_lo = term;
        eg_md.minus_beta_lo = minus_term;
    }


    table alpha_hi {
        key = { eg_md.d_ref : ternary; }
        actions = { set_alpha_hi; }
        default_action = set_alpha_hi(0, 0);
        size = SPIE_TERM_ENTRIES;
    }

    table alpha_lo {
        key = { eg_md.d_ref : ternary; }
        actions = { set_alpha_lo; }
        default_action = set_alpha_lo(0, 0);
        size = SPIE_TERM_ENTRIES;
    }

    table beta_hi {
        key = { eg_md.d_old : ternary; }
        actions = { set_beta_hi; }
        default_action = set_beta_hi(0, 0);
        size = SPIE_TERM_ENTRIES;
    }

    table beta_lo {
        key = { eg_md.d_old : ternary; }
        actions = { set_beta_lo; }
        default_action = set_beta_lo(0, 0);
        size = SPIE_TERM_ENTRIES;
    }

    /* Each entry also holds its term negated, so -delta is summed beside
     * delta instead of taking a stage to negate it. */
    action sum_terms() {
        eg_md.alpha_term = eg_md.alpha_hi + eg_md.alpha_lo;
        eg_md.beta_term = eg_md.beta_hi + eg_md.beta_lo;
        eg_md.minus_alpha_term = eg_md.minus_alpha_hi + eg_md.minus_alpha_lo;
        eg_md.minus_beta_term = eg_md.minus_beta_hi + eg_md.minus_beta_lo;
    }

    action sum_delta() {
        eg_md.delta = eg_md.alpha_term + eg_md.beta_term;
        eg_md.minus_delta = eg_md.minus_alpha_term + eg_md.minus_beta_term;
    }

    /* p in [0, 2^32 - 1]: the stateful ALU's saturating add and subtract
     * keep it there. */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(pi_prob) prob_up = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = p |+| eg_md.delta;
            after = p;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(pi_prob) prob_down = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = p |-| eg_md.minus_delta;
            after = p;
        }
    };

    /* The first step after an idle spell (ingress saw no update for the
     * staleness limit) starts from p = 0, as ingress has been treating
     * the port, rather than from the p before the queue emptied. */
    RegisterAction<bit<32>, spie_slot_t, bit<32>>(pi_prob) prob_restart_up = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = eg_md.delta;
            after = eg_md.delta;
        }
    };

    RegisterAction<bit<32>, spie_slot_t, bit<32>>(pi_prob) prob_restart_down = {
        void apply(inout bit<32> p, out bit<32> after) {
            p = 0;
            after = 0;
        }
    };

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
        alpha_hi.apply();
        alpha_lo.apply();
        beta_hi.apply();
        beta_lo.apply();
        sum_terms();
        sum_delta();
        if (eg_md.tick == 1 && hdr.bridged.class_id == SPIE_BRIDGED_IDLE &&
                eg_md.delta[31:31] == 1) {
            eg_md.prob = prob_restart_down.execute(eg_md.slot);
        } else if (eg_md.tick == 1 && hdr.bridged.class_id == SPIE_BRIDGED_IDLE) {
            eg_md.prob = prob_restart_up.execute(eg_md.slot);
        } else if (eg_md.tick == 1 && eg_md.delta[31:31] == 1) {
            eg_md.prob = prob_down.execute(eg_md.slot);
        } else if (eg_md.tick == 1) {
            eg_md.prob = prob_up.execute(eg_md.slot);
        }
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
