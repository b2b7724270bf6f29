// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* Every table, register and counter size of tofino-cc, in one place: the
 * shared includes' first, then each program's. Each can be overridden on
 * the compiler's command line (P4FLAGS=-DIPV4_LPM_ENTRIES=16384
 * scripts/build_p4.py), e.g. to trade one table's memory for another's.
 *
 * The reference models (models/switch/) and the controller are written for
 * these defaults, and tests/test_p4_model_parity.py reads them from here: a
 * build with another register or counter size is one the models do not
 * describe. A size marked "= the index type" is the range of the type that
 * indexes it (class_slot_t, spie_slot_t, ...): change the two together, or
 * an index addresses cells that do not exist (or cells nothing reaches).
 *
 * Left out on purpose: a keyless table's `size = 1` (its one default
 * action is its configuration) and BFCC's one-cell recirculation_depth
 * (one per pipe: registers are per pipe). */
#ifndef TOFCC_SIZE_P4
#define TOFCC_SIZE_P4

/* ---- shared -------------------------------------------------------------
 * One entry per port id (PortId_t is 9 bits on both chips): every per-port
 * counter and every table keyed on a port alone. */
#ifndef TOFCC_PORTS
#define TOFCC_PORTS 512
#endif
/* forwarding.p4: IPv4 routes. */
#ifndef IPV4_LPM_ENTRIES
#define IPV4_LPM_ENTRIES 4096
#endif
/* source_guard.p4: bound prefixes, one per (host port, prefix), with the /0
 * under each bound port. */
#ifndef SOURCE_BINDING_ENTRIES
#define SOURCE_BINDING_ENTRIES 1024
#endif
/* A table keyed on the 6-bit DSCP alone (DA-DCTCP's queue_select, P4QCN's
 * traffic_class). */
#ifndef DSCP_ENTRIES
#define DSCP_ENTRIES 64
#endif

/* ---- aqm ------------------------------------------------------------------
 * 256 queue slots (= aqm_slot_t): a register of 512 entries reads, to the
 * tools that map vector ports to device ports, as one entry per port. */
#ifndef AQM_SLOTS
#define AQM_SLOTS 256
#endif
#ifndef AQM_QUEUE_ENTRIES
#define AQM_QUEUE_ENTRIES 512
#endif
/* Ternary entries: the controller expands each queue's ranges into
 * prefixes (tna/aqm/README.md gives the count per queue). */
#ifndef AQM_RED_LEVEL_ENTRIES
#define AQM_RED_LEVEL_ENTRIES 4096
#endif
#ifndef AQM_CODEL_DUE_ENTRIES
#define AQM_CODEL_DUE_ENTRIES 4096
#endif
/* pi_terms: ternary on the sojourn, per PI curve (bfrt_controller/aqm/pi.py
 * gives the count per curve). */
#ifndef AQM_PI_TERMS_ENTRIES
#define AQM_PI_TERMS_ENTRIES 4096
#endif
/* l4s_queue: one entry per DualPI2 pair and ECN codepoint (4 a pair). */
#ifndef AQM_L4S_QUEUE_ENTRIES
#define AQM_L4S_QUEUE_ENTRIES 2048
#endif

/* ---- bfcc ----------------------------------------------------------------- */
/* Sender groups: 8 bits (group_t), the low byte of the shared class_id_t. */
#ifndef BFCC_GROUPS
#define BFCC_GROUPS 256
#endif
/* = cp_id_t (4 bits). */
#ifndef BFCC_CONGESTION_POINTS
#define BFCC_CONGESTION_POINTS 16
#endif
/* = vq_index_t: BFCC_CONGESTION_POINTS x BFCC_GROUPS. */
#ifndef BFCC_VQ_SLOTS
#define BFCC_VQ_SLOTS 4096
#endif
/* = qid_index_t: QueueId_t of either chip. */
#ifndef BFCC_QIDS
#define BFCC_QIDS 128
#endif
/* (backpressure, clear) x group */
#ifndef BFCC_SENDER_NOTIFY_ENTRIES
#define BFCC_SENDER_NOTIFY_ENTRIES 512
#endif
/* Source prefixes naming a sender group. */
#ifndef BFCC_SENDER_GROUP_ENTRIES
#define BFCC_SENDER_GROUP_ENTRIES 1024
#endif
/* One RT per congestion degree (2 bits). */
#ifndef BFCC_DEGREES
#define BFCC_DEGREES 4
#endif

/* ---- dadctcp -------------------------------------------------------------- */
#ifndef DADCTCP_QUEUE_SLOTS
#define DADCTCP_QUEUE_SLOTS 1024
#endif

/* ---- p4qcn ---------------------------------------------------------------- */
#ifndef P4QCN_FLOW_SLOTS
#define P4QCN_FLOW_SLOTS 4096
#endif
/* Ternary entries: the controller expands each queue's depth ranges into
 * prefixes (tna/p4qcn/README.md gives the count per queue). */
#ifndef P4QCN_PROBABILITY_ENTRIES
#define P4QCN_PROBABILITY_ENTRIES 4096
#endif

/* ---- pmqecn --------------------------------------------------------------- */
/* = class_slot_t and vq_slot_t (10 bits). */
#ifndef PMQECN_CLASSES
#define PMQECN_CLASSES 1024
#endif
#ifndef PMQECN_VQS
#define PMQECN_VQS 1024
#endif
/* classify's ternary entries (source, destination, DSCP, protocol). */
#ifndef PMQECN_CLASSIFY_ENTRIES
#define PMQECN_CLASSIFY_ENTRIES 1024
#endif
/* ecn_threshold: one entry per class and ingress pipe (4 on every chip). */
#ifndef PMQECN_THRESHOLD_ENTRIES
#define PMQECN_THRESHOLD_ENTRIES 4096
#endif
/* The virtual queues' drain tables, shared by every class (tna/pmqecn/README.md,
 * "Virtual queue"): log2 of the elapsed ticks (3327 ternary entries at the
 * controller's default 8-bit mantissa) and 2^(log sum) bytes (5632 exact). */
#ifndef PMQECN_LOG_ENTRIES
#define PMQECN_LOG_ENTRIES 4096
#endif
#ifndef PMQECN_EXP_ENTRIES
#define PMQECN_EXP_ENTRIES 8192
#endif
/* WRR priority levels (Fig. 4): level -> strict-priority queue. */
#ifndef PMQECN_WRR_LEVELS
#define PMQECN_WRR_LEVELS 32
#endif

/* ---- spie ----------------------------------------------------------------- */
/* = spie_slot_t (8 bits): S-PIE/PIE ports. */
#ifndef SPIE_SLOTS
#define SPIE_SLOTS 256
#endif
/* = spie_column_t (12 bits): each sketch row's counters. */
#ifndef SPIE_SKETCH_COLUMNS
#define SPIE_SKETCH_COLUMNS 4096
#endif
#ifndef SPIE_LOG_ENTRIES
#define SPIE_LOG_ENTRIES 512
#endif
#ifndef SPIE_TERM_ENTRIES
#define SPIE_TERM_ENTRIES 272
#endif
/* The recirculation ports that may carry a state update (one per pipe). */
#ifndef SPIE_UPDATE_PORT_ENTRIES
#define SPIE_UPDATE_PORT_ENTRIES 16
#endif

#endif
