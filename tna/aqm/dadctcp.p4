// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_AQM_DADCTCP_P4
#define TOFCC_AQM_DADCTCP_P4

/* DA-DCTCP's slope (seed 004 Eqs. 4-6, tna/dadctcp/'s two-sample EWMA) on
 * the depth as the packet leaves: the margins to K1 and K2 and the average
 * slope s/2 + s_prev/4; SwitchEgress marks from K2, or from K1 while the
 * slope is not negative (a flag set here and tested there costs a stage). */
control AqmDadctcp(inout eg_md_t eg_md) {
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) dadctcp_last_depth;
    Register<bit<32>, aqm_slot_t>(AQM_SLOTS, 0) dadctcp_last_slope;

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(dadctcp_last_depth) depth_swap = {
        void apply(inout bit<32> depth, out bit<32> previous) {
            previous = depth;
            depth = eg_md.deq_depth_cells;
        }
    };

    RegisterAction<bit<32>, aqm_slot_t, bit<32>>(dadctcp_last_slope) slope_swap = {
        void apply(inout bit<32> slope, out bit<32> previous) {
            previous = slope;
            slope = eg_md.slope_cells;
        }
    };

    action take_slope() {
        eg_md.slope_cells = eg_md.deq_depth_cells - eg_md.prev_depth_cells;
        eg_md.k1_margin = eg_md.deq_depth_cells - eg_md.k1_cells;
        eg_md.k2_margin = eg_md.deq_depth_cells - eg_md.k2_cells;
    }

    action halve() {
        eg_md.half_slope = (bit<32>)(((int<32>)eg_md.slope_cells) >> 1);
        eg_md.quarter_prev_slope = (bit<32>)(((int<32>)eg_md.prev_slope_cells) >> 2);
    }

    action average() {
        eg_md.avg_slope = eg_md.half_slope + eg_md.quarter_prev_slope;
    }

    apply {
        eg_md.prev_depth_cells = depth_swap.execute(eg_md.slot);
        take_slope();
        eg_md.prev_slope_cells = slope_swap.execute(eg_md.slot);
        halve();
        average();
    }
}

#endif
