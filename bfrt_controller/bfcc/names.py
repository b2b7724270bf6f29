# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Control-plane names of tna/bfcc/bfcc.p4 - nothing else lives here.

tests/controller/test_bfcc_names.py holds these to the reference model, which
the model's own tests hold to the P4 source.
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


# Virtual queues (ingress).
SENDER_GROUP = f"{IG}.sender_group"
SET_GROUP = f"{IG}.set_group"

# Reaction point: admission (ingress) and rate reduction (egress).
REACTION_POINT = f"{IG}.reaction_point"
REACT = f"{IG}.react"
RATE_THRESHOLD = f"{EG}.rate_threshold"
SET_RATE_THRESHOLD = f"{EG}.set_rate_threshold"
NO_RATE_THRESHOLD = f"{EG}.no_rate_threshold"
BP_STATE = f"{IG}.bp_state"
BP_RECORDED_NS = f"{IG}.bp_recorded_ns"
RR_COUNT = f"{EG}.rr_count"
FAKE_DROPS = f"{IG}.fake_drops"
BACKPRESSURE_RECEIVED = f"{IG}.backpressure_received"
ADMITTED_BY_QID = f"{IG}.admitted_by_qid"
FLAGGED_DEPARTURES = f"{EG}.flagged_departures"
FAKES_SENT = f"{EG}.fakes_sent"
# Each reaction port's way back: its pipe's recirculation session and level.
RECIRCULATION = f"{EG}.recirculation"
RECIRCULATE = f"{EG}.recirculate"
NO_RECIRCULATION = f"{EG}.no_recirculation"
RECIRCULATION_DEPTH = f"{EG}.recirculation_depth"
RECIRCULATION_SKIPS = f"{EG}.recirculation_skips"
# Backpressure copied to every pipe the config uses.
BP_REPLICATE = f"{IG}.bp_replicate"
REPLICATE = f"{IG}.replicate"
RELAY_REPLICA = f"{IG}.relay_replica"

# Sender reaction: backpressure and clear relayed to the named group's senders.
SENDER_NOTIFY = f"{IG}.sender_notify"
NOTIFY_SENDERS = f"{IG}.notify_senders"
CONSUME = f"{IG}.consume"

# Congestion point (egress).
CONGESTION_POINT = f"{EG}.congestion_point"
MONITOR = f"{EG}.monitor"
BP_UPSTREAM = f"{EG}.bp_upstream"
TO_UPSTREAM = f"{EG}.to_upstream"
# Pairs (two 32-bit halves updated by one RegisterAction).
OCCUPANCY_WINDOW = f"{EG}.occupancy_window"
VQ_OCCUPANCY = f"{EG}.vq_occupancy"
CONGESTED_VQ = f"{EG}.congested_vq"
BP_LAST_SENT = f"{EG}.bp_last_sent"

# Key fields.
K_UCAST_EGRESS_PORT = "ig_tm_md.ucast_egress_port"
K_EGRESS_PORT = "eg_intr_md.egress_port"
K_BP_DEGREE = "hdr.bfcc_bridged.bp_degree"
K_BP_GROUP = "eg_md.bp_group"
K_FB_MSG_TYPE = "hdr.feedback.msg_type"
K_FB_CLASS_ID = "hdr.feedback.class_id"

# A backpressure copy keeps only its Ethernet header; egress rebuilds the rest.
BP_TRUNCATE_BYTES = 14

ALL_TABLES = (
    IPV4_LPM,
    TRUSTED_PORTS,
    SOURCE_BINDINGS,
    SENDER_GROUP,
    REACTION_POINT,
    RATE_THRESHOLD,
    RECIRCULATION,
    BP_REPLICATE,
    CONGESTION_POINT,
    BP_UPSTREAM,
    SENDER_NOTIFY,
)
ALL_ACTIONS = (
    ROUTE,
    TRUSTED,
    BOUND,
    SPOOFED_SOURCE,
    SET_GROUP,
    REACT,
    SET_RATE_THRESHOLD,
    NO_RATE_THRESHOLD,
    RECIRCULATE,
    NO_RECIRCULATION,
    REPLICATE,
    RELAY_REPLICA,
    MONITOR,
    TO_UPSTREAM,
    NOTIFY_SENDERS,
    CONSUME,
)
ALL_REGISTERS = (
    BP_STATE,
    BP_RECORDED_NS,
    RR_COUNT,
    RECIRCULATION_DEPTH,
    OCCUPANCY_WINDOW,
    VQ_OCCUPANCY,
    CONGESTED_VQ,
    BP_LAST_SENT,
)
ALL_COUNTERS = (
    UNTRUSTED_FEEDBACK_DROPS,
    SPOOFED_SOURCE_DROPS,
    FAKE_DROPS,
    BACKPRESSURE_RECEIVED,
    ADMITTED_BY_QID,
    FLAGGED_DEPARTURES,
    FAKES_SENT,
    RECIRCULATION_SKIPS,
)
ALL_KEYS = (
    K_DST_ADDR,
    K_SRC_ADDR,
    K_INGRESS_PORT,
    K_UCAST_EGRESS_PORT,
    K_EGRESS_PORT,
    K_BP_DEGREE,
    K_BP_GROUP,
    K_FB_MSG_TYPE,
    K_FB_CLASS_ID,
)
