// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* The AQM family's modes and egress metadata (tna/aqm/README.md, "The AQM
 * family"); its sizes are in include/size.p4. */
#ifndef TOFCC_AQM_TYPES_P4
#define TOFCC_AQM_TYPES_P4

const bit<3> AQM_MODE_NONE = 0;
const bit<3> AQM_MODE_RED = 1;
const bit<3> AQM_MODE_CODEL = 2;
const bit<3> AQM_MODE_PIE = 3;
const bit<3> AQM_MODE_DCTCP = 4;
const bit<3> AQM_MODE_DADCTCP = 5;
const bit<3> AQM_MODE_DUALPI2_C = 6;
const bit<3> AQM_MODE_DUALPI2_L = 7;

typedef bit<8> aqm_slot_t;

struct eg_md_t {
    parsed_md_t parsed;
    queue_md_t  queue;
    bit<32>     deq_depth_cells;  /* as the packet leaves (DCTCP, DA-DCTCP) */
    bit<16>     random;           /* 0..32767 */
    bit<16>     random2;          /* DualPI2's second draw */
    bit<3>      mode;
    aqm_slot_t  slot;
    bit<8>      curve;
    bit<1>      ecn;
    bit<1>      hard;
    bit<1>      chosen;
    /* RED */
    bit<32>     block_last;
    bit<32>     block_limit;
    bit<1>      block_end;
    bit<32>     block_sum_cells;
    bit<32>     avg_sum_cells;
    bit<16>     level;
    bit<16>     random_margin;
    /* CoDel */
    bit<32>     target_ns;
    bit<32>     target_margin_ns;
    bit<32>     interval_ticks;
    bit<32>     tail_step_ticks;
    bit<32>     sojourn_ticks;
    bit<32>     deq_ticks;
    bit<32>     deadline_base_ticks;
    bit<32>     deadline_ticks;
    bit<32>     tail_base_ticks;
    bit<32>     tail_next_ticks;
    bit<1>      ok_to_drop;
    bit<32>     elapsed_ticks;
    bit<32>     due_count;
    bit<1>      tail;
    bit<1>      codel_drop;
    /* PI (PIE, DualPI2) */
    bit<32>     minus_t_update_ticks;
    bit<32>     due_before_ticks;
    bit<32>     qdelay_units;     /* sojourn_ns >> 12 */
    bit<32>     term_hi;
    bit<32>     term_lo;
    bit<32>     beta_hi;
    bit<32>     beta_lo;
    bit<32>     pi_term;
    bit<32>     pi_beta;
    bit<1>      tick;
    bit<32>     old_beta;
    bit<32>     delta;
    bit<32>     minus_delta;
    bit<32>     prob;
    bit<16>     mark_max_level;
    bit<32>     level_l;          /* p >> 16: DualPI2's k p' (k = 2) */
    bit<16>     mark_margin;      /* level - mark_max: bit 15 clear <=> hard */
    bit<16>     random2_margin;
    bit<32>     coupled_margin;   /* random - (p >> 16): bit 31 set <=> mark */
    /* DualPI2's L queue, DCTCP, DA-DCTCP */
    bit<32>     step_ns;
    bit<32>     step_margin_ns;   /* sojourn - step: bit 31 clear <=> at step */
    bit<32>     k1_cells;
    bit<32>     k2_cells;
    bit<32>     k1_margin;
    bit<32>     k2_margin;
    bit<32>     prev_depth_cells;
    bit<32>     slope_cells;
    bit<32>     prev_slope_cells;
    bit<32>     half_slope;
    bit<32>     quarter_prev_slope;
    bit<32>     avg_slope;
}

#endif
