// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* S-PIE's count-min sketch and Eq. 9's share test, in ingress (spie.p4's
 * header comment gives the algorithm, tna/spie/README.md "The sketch and
 * Eq. 9 without division" the reasoning): where a packet counts
 * (SpieSketchIndex), the rows' counts and their minimum (SpieSketchRows),
 * and m_count, S and the log lookups whose sign is the share test
 * (SpieShareTest). Included by spie.p4 after its metadata. Every table,
 * action, register and hash keeps the control-plane name it had in
 * SwitchIngress (@name), which the controller, the model and the vectors
 * use. */
#ifndef TOFCC_SPIE_SKETCH_P4
#define TOFCC_SPIE_SKETCH_P4

/* A count (a row's counter, m_count) stops at SPIE_COUNT_CAP; a counter
 * SPIE_EPOCH_WINDOW or more from the epoch's start holds another epoch's
 * count (SpieSketchRows says why the two fit). */
#define SPIE_COUNT_CAP 0x0000FFFF
#define SPIE_EPOCH_WINDOW 0x00010000

/* The columns of the packet's flow in the three rows, the epoch's start
 * and whether the sample counts the packet. */
control SpieSketchIndex(in headers_t hdr, inout ig_md_t ig_md) {
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
    @name(".SwitchIngress.set_sketch")
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

    @name(".SwitchIngress.sketch_config")
    table sketch_config {
        actions = { set_sketch; }
        default_action = set_sketch(0xFF000000, 0x0FFF, 0, 0x80000000);
        size = 1;
    }

    CRCPolynomial<bit<16>>(16w0x8005, true, false, false, 16w0x0000, 16w0x0000) poly0;
    CRCPolynomial<bit<16>>(16w0x1021, true, false, false, 16w0x0000, 16w0x0000) poly1;
    CRCPolynomial<bit<16>>(16w0x3D65, true, false, false, 16w0x0000, 16w0x0000) poly2;
    @name(".SwitchIngress.hasher0")
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, poly0) hasher0;
    @name(".SwitchIngress.hasher1")
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, poly1) hasher1;
    @name(".SwitchIngress.hasher2")
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

    apply {
        sketch_config.apply();
        hash_row0();
        hash_row1();
        hash_row2();
        epoch_start();
        mask_columns();
        draw_sample();
    }
}

/* The rows: each counts the packet (the sample's), reads (any other routed
 * packet) or takes a second pass's count back out, and their minimum is
 * m_before. */
control SpieSketchRows(in headers_t hdr, inout ig_md_t ig_md,
                       in ingress_intrinsic_metadata_t ig_intr_md) {
    @name(".SwitchIngress.sketch_row0")
    Register<bit<32>, spie_column_t>(SPIE_SKETCH_COLUMNS, 0) sketch_row0;
    @name(".SwitchIngress.sketch_row1")
    Register<bit<32>, spie_column_t>(SPIE_SKETCH_COLUMNS, 0) sketch_row1;
    @name(".SwitchIngress.sketch_row2")
    Register<bit<32>, spie_column_t>(SPIE_SKETCH_COLUMNS, 0) sketch_row2;

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

    action undo_amount() {
        ig_md.row0 = ig_md.undo.sum_added;
    }

    action take_min01() {
        ig_md.row01 = min(ig_md.row0, ig_md.row1);
    }

    action take_min() {
        ig_md.m_before = min(ig_md.row01, ig_md.row2);
    }

    apply {
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
        take_min01();
        take_min();
    }
}

/* The port's m_count and S (counted, read or undone as the rows are), and
 * the share test on their logs: large_margin's bit 15 clear <=> large. */
control SpieShareTest(inout ig_md_t ig_md, in ingress_intrinsic_metadata_t ig_intr_md) {
    @name(".SwitchIngress.m_count")
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) m_count;
    @name(".SwitchIngress.sumsq")
    Register<bit<32>, spie_slot_t>(SPIE_SLOTS, 0) sumsq;

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
    @name(".SwitchIngress.set_log_count")
    action set_log_count(bit<16> log16) { ig_md.log_count = log16; }
    @name(".SwitchIngress.set_log_sumsq")
    action set_log_sumsq(bit<16> log16) { ig_md.log_threshold = log16 - ig_md.log_count; }
    @name(".SwitchIngress.set_log_res")
    action set_log_res(bit<16> log16) { ig_md.large_margin = log16 - ig_md.log_threshold; }

    @name(".SwitchIngress.log_res")
    table log_res {
        key = { ig_md.m_before : ternary; }
        actions = { set_log_res; }
        default_action = set_log_res(0xFC00);
        size = SPIE_LOG_ENTRIES;
    }

    @name(".SwitchIngress.log_count")
    table log_count {
        key = { ig_md.m_count_before : ternary; }
        actions = { set_log_count; }
        default_action = set_log_count(0xFC00);
        size = SPIE_LOG_ENTRIES;
    }

    @name(".SwitchIngress.log_sumsq")
    table log_sumsq {
        key = { ig_md.sumsq : ternary; }
        actions = { set_log_sumsq; }
        default_action = set_log_sumsq(0);
        size = SPIE_LOG_ENTRIES;
    }

    apply {
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
        log_count.apply();
        log_sumsq.apply();
        log_res.apply();
    }
}

#endif
