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

EG = "SwitchEgress"

AQM_QUEUE = f"{EG}.aqm_queue"
SET_RED = f"{EG}.set_red"
SET_CODEL = f"{EG}.set_codel"
RED_LEVEL = f"{EG}.red_level"
SET_LEVEL = f"{EG}.set_level"
CODEL_DUE = f"{EG}.codel_due"
SET_DUE = f"{EG}.set_due"
AQM_DROPS = f"{EG}.aqm_drops"
AQM_MARKS = f"{EG}.aqm_marks"
RED_AVG_SUM_CELLS = f"{EG}.red_avg_sum_cells"
CODEL_COUNT = f"{EG}.codel_count"
CODEL_DROP_START_TICKS = f"{EG}.codel_drop_start_ticks"

K_EGRESS_PORT = "eg_intr_md.egress_port"
K_EGRESS_QID = "eg_intr_md.egress_qid"
K_CURVE = "eg_md.curve"
K_AVG_SUM_CELLS = "eg_md.avg_sum_cells"
K_ELAPSED_TICKS = "eg_md.elapsed_ticks"

ALL_TABLES = (IPV4_LPM, TRUSTED_PORTS, SOURCE_BINDINGS, AQM_QUEUE, RED_LEVEL, CODEL_DUE)
ALL_REGISTERS = (RED_AVG_SUM_CELLS, CODEL_COUNT, CODEL_DROP_START_TICKS)
ALL_COUNTERS = (AQM_DROPS, AQM_MARKS, UNTRUSTED_FEEDBACK_DROPS, SPOOFED_SOURCE_DROPS)
