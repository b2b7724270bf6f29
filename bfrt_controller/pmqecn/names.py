# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Control-plane names of tna/pmqecn/pmqecn.p4 - nothing else lives here.

tests/controller/test_names.py holds these to the reference model, and
scripts/build_p4.py holds the model to the compiler's bf-rt.json.
"""

from __future__ import annotations

# Shared includes (forwarding.p4, trust.p4, source_guard.p4): one definition
# for every program, re-exported so each program's names stay in one module.
from ..common import BOUND as BOUND
from ..common import IPV4_LPM as IPV4_LPM
from ..common import K_DST_ADDR as K_DST_ADDR
from ..common import K_INGRESS_PORT as K_INGRESS_PORT
from ..common import K_SRC_ADDR as K_SRC_ADDR
from ..common import ROUTE as ROUTE
from ..common import SOURCE_BINDINGS as SOURCE_BINDINGS
from ..common import SPOOFED_SOURCE as SPOOFED_SOURCE
from ..common import SPOOFED_SOURCE_DROPS as SPOOFED_SOURCE_DROPS
from ..common import TRUSTED as TRUSTED
from ..common import TRUSTED_PORTS as TRUSTED_PORTS
from ..common import UNTRUSTED_FEEDBACK_DROPS as UNTRUSTED_FEEDBACK_DROPS

IG = "SwitchIngress"
EG = "SwitchEgress"


# Classification and WRR emulation (ingress).
CLASSIFY = f"{IG}.classify"
SET_CLASS = f"{IG}.set_class"
CLASS_COUNTERS = f"{IG}.class_counters"
VQ_WEIGHT = f"{IG}.vq_weight"
WRR = f"{IG}.wrr"
WRR_LEVEL_QUEUE = f"{IG}.wrr_level_queue"
SET_PRIORITY_QUEUE = f"{IG}.set_priority_queue"
VQ_USED = f"{IG}.vq_used"
VQ_LEVEL = f"{IG}.vq_level"

# The class's virtual queue, arrival-time marking and feedback (ingress).
ECN_THRESHOLD = f"{IG}.ecn_threshold"
SET_THRESHOLD = f"{IG}.set_threshold"
VQ_LOG_ELAPSED = f"{IG}.vq_log_elapsed"
LOG_ELAPSED = f"{IG}.log_elapsed"
VQ_EXP_DRAIN = f"{IG}.vq_exp_drain"
DRAIN = f"{IG}.drain"
CLASS_RATES = f"{IG}.class_rates"
SET_RATES = f"{IG}.set_rates"
FEEDBACK_SESSION = f"{IG}.feedback_session"
SET_FEEDBACK_SESSION = f"{IG}.set_feedback_session"
VQ_BYTES = f"{IG}.vq_bytes"
VQ_LAST_TICK = f"{IG}.vq_last_tick"
# Per pipe: the class's arrivals (each pipe's share of its drain, pipes.py)
# and its feedback gate (quiet time, copies let through).
CLASS_ARRIVALS = f"{IG}.class_arrivals"
FEEDBACK_GATE = f"{IG}.feedback_gate"

# W_i (egress).
# Each half's (sum, departures) registers, by epoch (models/switch/pmqecn.py).
SOJOURN_SUM_NS = (f"{EG}.sojourn_sum_ns_0", f"{EG}.sojourn_sum_ns_1")
SOJOURN_PKTS = (f"{EG}.sojourn_pkts_0", f"{EG}.sojourn_pkts_1")
SOJOURN_SAMPLING = f"{EG}.sojourn_sampling"
SET_SOJOURN_SAMPLING = f"{EG}.set_sojourn_sampling"
SOJOURN_EPOCH = f"{EG}.sojourn_epoch"
SET_SOJOURN_EPOCH = f"{EG}.set_sojourn_epoch"
# Feedback copies that reached egress, per class.
FEEDBACK_REBUILT = f"{EG}.feedback_rebuilt"

# Test hooks (absent from production builds).
QUEUE_MD_OVERRIDE = f"{EG}.queue_hook.queue_md_override"
INGRESS_TSTAMP_OVERRIDE = f"{IG}.clock.ingress_tstamp_override"

# Key fields.
K_DSCP = "hdr.ipv4.dscp"
K_PROTOCOL = "hdr.ipv4.protocol"
K_VQ_ID = "ig_md.vq_id"
K_WRR_LEVEL = "ig_md.wrr_level"
K_CLASS_ID = "hdr.bridged.class_id"
K_INGRESS_PIPE = "ingress_pipe"  # ig_intr_md.ingress_port[8:7]
K_BRIDGED_INGRESS_PORT = "hdr.bridged.ingress_port"
K_ELAPSED_TICKS = "ig_md.vq_elapsed_ticks"
K_LOG_DRAIN = "ig_md.vq_log_drain_q7"

# A feedback copy is cut to Ethernet + IPv4 before egress rebuilds it.
FEEDBACK_TRUNCATE_BYTES = 14 + 20

ALL_TABLES = (
    IPV4_LPM,
    TRUSTED_PORTS,
    SOURCE_BINDINGS,
    CLASSIFY,
    VQ_WEIGHT,
    WRR_LEVEL_QUEUE,
    ECN_THRESHOLD,
    VQ_LOG_ELAPSED,
    VQ_EXP_DRAIN,
    CLASS_RATES,
    FEEDBACK_SESSION,
    SOJOURN_SAMPLING,
    SOJOURN_EPOCH,
)
ALL_REGISTERS = (
    VQ_USED,
    VQ_LEVEL,
    VQ_BYTES,
    VQ_LAST_TICK,
    CLASS_ARRIVALS,
    FEEDBACK_GATE,
    *SOJOURN_SUM_NS,
    *SOJOURN_PKTS,
)
ALL_COUNTERS = (CLASS_COUNTERS, FEEDBACK_REBUILT, UNTRUSTED_FEEDBACK_DROPS, SPOOFED_SOURCE_DROPS)
