# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Control-plane names of tna/aqm/aqm.p4 - nothing else lives here.

tests/controller/test_aqm_controller.py holds these to the reference model.
"""

from __future__ import annotations

# Shared includes (forwarding.p4, trust.p4, source_guard.p4).
from ..common import IPV4_LPM as IPV4_LPM
from ..common import SOURCE_BINDINGS as SOURCE_BINDINGS
from ..common import SPOOFED_SOURCE_DROPS as SPOOFED_SOURCE_DROPS
from ..common import TRUSTED_PORTS as TRUSTED_PORTS
from ..common import UNTRUSTED_FEEDBACK_DROPS as UNTRUSTED_FEEDBACK_DROPS

IG = "SwitchIngress"
EG = "SwitchEgress"

AQM_QUEUE = f"{EG}.aqm_queue"
SET_RED = f"{EG}.set_red"
SET_CODEL = f"{EG}.set_codel"
SET_PIE = f"{EG}.set_pie"
SET_DCTCP = f"{EG}.set_dctcp"
SET_DADCTCP = f"{EG}.set_dadctcp"
SET_DUALPI2_C = f"{EG}.set_dualpi2_c"
SET_DUALPI2_L = f"{EG}.set_dualpi2_l"
NO_AQM = f"{EG}.no_aqm"
RED_LEVEL = f"{EG}.red_level"
SET_LEVEL = f"{EG}.set_level"
CODEL_DUE = f"{EG}.codel_due"
SET_DUE = f"{EG}.set_due"
AQM_DROPS = f"{EG}.aqm_drops"
AQM_MARKS = f"{EG}.aqm_marks"
RED_AVG_SUM_CELLS = f"{EG}.red_avg_sum_cells"
CODEL_COUNT = f"{EG}.codel_count"
CODEL_DROP_START_TICKS = f"{EG}.codel_drop_start_ticks"
# The PI shared by PIE and DualPI2 (SwitchEgress.pi), DA-DCTCP's slope.
PI_TERMS = f"{EG}.pi.pi_terms"
SET_PI_TERMS = f"{EG}.pi.set_pi_terms"
PI_PROB = f"{EG}.pi.pi_prob"
# DualPI2's classifier: ECT(1) and CE to the pair's L4S queue.
L4S_QUEUE = f"{IG}.l4s_queue"
SET_L4S_QUEUE = f"{IG}.set_l4s_queue"

# Every register a queue's slot indexes: a switch of mechanism zeroes them
# all, so the new one starts clean whatever ran in the slot before.
SLOT_REGISTERS = (
    f"{EG}.red_block_packets",
    f"{EG}.red_block_sum_cells",
    RED_AVG_SUM_CELLS,
    f"{EG}.codel_first_above_ticks",
    CODEL_DROP_START_TICKS,
    CODEL_COUNT,
    f"{EG}.codel_tail_next_ticks",
    f"{EG}.pi.pi_last_update_ticks",
    f"{EG}.pi.pi_old_beta",
    PI_PROB,
    f"{EG}.dadctcp.dadctcp_last_depth",
    f"{EG}.dadctcp.dadctcp_last_slope",
)
# The PI's, cleared again after the entry when a slot moves between PIE and
# DualPI2 (the old mechanism writes them until the entry changes).
PI_REGISTERS = SLOT_REGISTERS[7:10]

K_EGRESS_PORT = "eg_intr_md.egress_port"
K_EGRESS_QID = "eg_intr_md.egress_qid"
K_CURVE = "eg_md.curve"
K_AVG_SUM_CELLS = "eg_md.avg_sum_cells"
K_ELAPSED_TICKS = "eg_md.elapsed_ticks"
K_SOJOURN_NS = "eg_md.queue.sojourn_ns"
K_UCAST_EGRESS_PORT = "ig_tm_md.ucast_egress_port"
K_IPV4_ECN = "hdr.ipv4.ecn"

ALL_TABLES = (
    IPV4_LPM,
    TRUSTED_PORTS,
    SOURCE_BINDINGS,
    AQM_QUEUE,
    RED_LEVEL,
    CODEL_DUE,
    PI_TERMS,
    L4S_QUEUE,
)
ALL_REGISTERS = SLOT_REGISTERS
ALL_COUNTERS = (AQM_DROPS, AQM_MARKS, UNTRUSTED_FEEDBACK_DROPS, SPOOFED_SOURCE_DROPS)
