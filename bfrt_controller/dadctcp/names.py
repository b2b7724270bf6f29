# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Control-plane names of tna/dadctcp/dadctcp.p4 - nothing else lives here.

tests/controller/test_dadctcp_controller.py holds these to the reference
model, and scripts/build_p4.py holds the model to the compiler's bf-rt.json.
"""

from __future__ import annotations

from ..common import IPV4_LPM as IPV4_LPM
from ..common import SOURCE_BINDINGS as SOURCE_BINDINGS
from ..common import SPOOFED_SOURCE_DROPS as SPOOFED_SOURCE_DROPS
from ..common import TRUSTED_PORTS as TRUSTED_PORTS
from ..common import UNTRUSTED_FEEDBACK_DROPS as UNTRUSTED_FEEDBACK_DROPS

IG = "SwitchIngress"
EG = "SwitchEgress"

QUEUE_SELECT = f"{IG}.queue_select"
SET_QUEUE = f"{IG}.set_queue"
K_DSCP = "hdr.ipv4.dscp"

QUEUE_THRESHOLD = f"{EG}.queue_threshold"
SET_THRESHOLD = f"{EG}.set_threshold"
LAST_DEPTH = f"{EG}.last_depth"
LAST_SLOPE = f"{EG}.last_slope"
LAST_DEPARTURE = f"{EG}.last_departure"
CE_MARKED = f"{EG}.ce_marked"
NOT_ECT_DROPPED = f"{EG}.not_ect_dropped"

K_EGRESS_PORT = "eg_intr_md.egress_port"
K_EGRESS_QID = "eg_intr_md.egress_qid"

ALL_TABLES = (IPV4_LPM, TRUSTED_PORTS, SOURCE_BINDINGS, QUEUE_SELECT, QUEUE_THRESHOLD)
ALL_REGISTERS = (LAST_DEPTH, LAST_SLOPE, LAST_DEPARTURE)
ALL_COUNTERS = (CE_MARKED, NOT_ECT_DROPPED, UNTRUSTED_FEEDBACK_DROPS, SPOOFED_SOURCE_DROPS)
