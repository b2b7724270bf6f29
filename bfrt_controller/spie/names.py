# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Control-plane names of tna/spie/spie.p4 - nothing else lives here.

tests/test_compiled_schema.py holds these to the compiler's bf-rt.json.
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

UPDATE_PORTS = f"{IG}.update_ports"
ACCEPT_UPDATE = f"{IG}.accept_update"
SPIE_PORT = f"{IG}.spie_port"
SET_SPIE = f"{IG}.set_spie"
SKETCH_CONFIG = f"{IG}.sketch_config"
SET_SKETCH = f"{IG}.set_sketch"
LOG_RES = f"{IG}.log_res"
SET_LOG_RES = f"{IG}.set_log_res"
LOG_COUNT = f"{IG}.log_count"
SET_LOG_COUNT = f"{IG}.set_log_count"
LOG_SUMSQ = f"{IG}.log_sumsq"
SET_LOG_SUMSQ = f"{IG}.set_log_sumsq"
LARGE_FLOW_DROPS = f"{IG}.large_flow_drops"
RANDOM_DROPS = f"{IG}.random_drops"
REJECTED_UPDATES = f"{IG}.rejected_updates"
PROB = f"{IG}.prob"

PI_PORT = f"{EG}.pi_port"
SET_PI = f"{EG}.set_pi"
ALPHA_HI = f"{EG}.alpha_hi"
ALPHA_LO = f"{EG}.alpha_lo"
BETA_HI = f"{EG}.beta_hi"
BETA_LO = f"{EG}.beta_lo"
SET_TERM = {t: f"{EG}.set_{t.rsplit('.', 1)[1]}" for t in (ALPHA_HI, ALPHA_LO, BETA_HI, BETA_LO)}
PI_PROB = f"{EG}.pi_prob"
PI_UPDATES = f"{EG}.pi_updates"

K_INGRESS_PORT = "ig_intr_md.ingress_port"
K_UCAST_EGRESS_PORT = "ig_tm_md.ucast_egress_port"
K_EGRESS_PORT = "eg_intr_md.egress_port"
K_D_REF = "eg_md.d_ref"
K_D_OLD = "eg_md.d_old"
K_M_BEFORE = "ig_md.m_before"
K_M_COUNT_BEFORE = "ig_md.m_count_before"
K_SUMSQ = "ig_md.sumsq"

ALL_TABLES = (
    IPV4_LPM,
    TRUSTED_PORTS,
    SOURCE_BINDINGS,
    UPDATE_PORTS,
    SPIE_PORT,
    SKETCH_CONFIG,
    LOG_RES,
    LOG_COUNT,
    LOG_SUMSQ,
    PI_PORT,
    ALPHA_HI,
    ALPHA_LO,
    BETA_HI,
    BETA_LO,
)
ALL_REGISTERS = (PROB, PI_PROB)
ALL_COUNTERS = (
    LARGE_FLOW_DROPS,
    RANDOM_DROPS,
    REJECTED_UPDATES,
    PI_UPDATES,
    UNTRUSTED_FEEDBACK_DROPS,
    SPOOFED_SOURCE_DROPS,
)
