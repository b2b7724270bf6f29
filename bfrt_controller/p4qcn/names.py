# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Control-plane names of tna/p4qcn/p4qcn.p4 - nothing else lives here.

tests/controller/test_p4qcn_controller.py holds these to the reference
model, and scripts/build_p4.py holds the model to the compiler's bf-rt.json.
"""

from __future__ import annotations

# Shared includes (forwarding.p4, trust.p4, source_guard.p4): one definition
# for every program, re-exported so each program's names stay in one module.
from ..common import IPV4_LPM as IPV4_LPM
from ..common import SOURCE_BINDINGS as SOURCE_BINDINGS
from ..common import SPOOFED_SOURCE_DROPS as SPOOFED_SOURCE_DROPS
from ..common import TRUSTED_PORTS as TRUSTED_PORTS
from ..common import UNTRUSTED_FEEDBACK_DROPS as UNTRUSTED_FEEDBACK_DROPS

IG = "SwitchIngress"
EG = "SwitchEgress"

# DSCP to egress queue and ingress CoS (ingress).
TRAFFIC_CLASS = f"{IG}.traffic_class"
SET_CLASS = f"{IG}.set_class"

# Eq. 1 and the feedback it sends (egress).
FEEDBACK_PROBABILITY = f"{EG}.feedback_probability"
SET_LEVEL = f"{EG}.set_level"
FEEDBACK_SESSION = f"{EG}.feedback_session"
SET_FEEDBACK_SESSION = f"{EG}.set_feedback_session"
FB_LAST_TICK = f"{EG}.fb_last_tick"
CHOSEN = f"{EG}.chosen"
FEEDBACK_SENT = f"{EG}.feedback_sent"
FEEDBACK_SUPPRESSED = f"{EG}.feedback_suppressed"
CE_MARKED = f"{EG}.ce_marked"

# Key fields.
K_EGRESS_PORT = "eg_intr_md.egress_port"
K_EGRESS_QID = "eg_intr_md.egress_qid"
K_DEPTH_CELLS = "eg_md.queue.depth_cells"
K_BRIDGED_INGRESS_PORT = "hdr.bridged.ingress_port"
K_DSCP = "hdr.ipv4.dscp"

# A feedback copy is cut to Ethernet + IPv4 before egress rebuilds it.
FEEDBACK_TRUNCATE_BYTES = 14 + 20

ALL_TABLES = (
    IPV4_LPM,
    TRUSTED_PORTS,
    SOURCE_BINDINGS,
    TRAFFIC_CLASS,
    FEEDBACK_PROBABILITY,
    FEEDBACK_SESSION,
)
ALL_REGISTERS = (FB_LAST_TICK,)
ALL_COUNTERS = (
    CHOSEN,
    FEEDBACK_SENT,
    FEEDBACK_SUPPRESSED,
    CE_MARKED,
    UNTRUSTED_FEEDBACK_DROPS,
    SPOOFED_SOURCE_DROPS,
)
