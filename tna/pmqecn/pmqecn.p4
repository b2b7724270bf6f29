// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* PMQECN: multi-queue, multi-class ECN marking with switch-made feedback
 * (seed 000, "Design", Algorithm 1, Fig. 4).
 *
 * Ingress: classify (class, virtual queue, queue) -> count per class ->
 *          the class's register virtual queue (one per pipe): it grows by
 *          each arriving frame and drains at the pipe's share of the class's
 *          service rate over the time since the class's last packet -> if
 *          it exceeds the pipe's share of K_i, mirror the arriving packet
 *          (ingress-to-egress) to its ingress port, at most once per class
 *          per feedback interval, where the copy becomes a feedback packet
 *          (ECN=11, lambda_i, lambda_i*) to the source before the packet
 *          itself has waited in any queue.
 *          Optional: the paper's Fig. 4 WRR over strict priority.
 * Egress:  accumulate sojourn per class (W_i) into the half the epoch
 *          names; count and rebuild feedback copies.
 * The controller reads the class counters, per-pipe arrivals and sojourn
 * accumulators, solves the M/M/1/N model and writes K_i, weights, drain rates
 * (as logs) and lambda_i* (models/optimize), each split over the pipes by
 * their share of the class's arrivals. tna/pmqecn/README.md lists what is
 * approximated.
 */
#include "../include/arch.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"
#include "../include/feedback.p4"

#define PMQECN_CLASSES 1024
#define PMQECN_VQS 1024
/* ecn_threshold: one entry per class and ingress pipe (4 on every chip). */
#define PMQECN_THRESHOLD_ENTRIES 4096
/* The sojourn accumulators: two halves of PMQECN_CLASSES (epoch ++ class). */
#define PMQECN_SOJOURN_CELLS 2048
/* A class or virtual queue indexes 1024-cell registers, so its id is 10 bits
 * where it is written (classify's action) and where it is used as an index
 * (a slice of the bridged 16-bit class_id, which BFCC shares): no value can
 * address past a register, whatever the control plane or a bridged header
 * holds.  p4testgen otherwise picks 16-bit ids and sets cells that do not
 * exist. */
typedef bit<10> class_slot_t;
typedef bit<10> vq_slot_t;
/* The sojourn accumulators' cells: the epoch the controller last set, then
 * the class (tna/pmqecn/README.md, "Reading W_i without losing a departure"). */
typedef bit<11> sojourn_slot_t;

/* The two halves of a class's feedback gate: the 64 ns ticks since it last
 * let a feedback copy through (saturating), and how many it has let through
 * (wrapping). */
struct fb_gate_t {
    bit<32> quiet;
    bit<32> made;
}
/* The virtual queues' drain tables, shared by every class (tna/pmqecn/README.md,
 * "Virtual queue"): log2 of the elapsed ticks (3327 ternary entries at the
 * controller's default 8-bit mantissa) and 2^(log sum) bytes (5632 exact). */
#define PMQECN_LOG_ENTRIES 4096
#define PMQECN_EXP_ENTRIES 8192

/* A virtual queue stops growing here (1 GiB less 16 KiB), so every length,
 * threshold and drain stays below 2^31 and the sign-bit test is exact. */
const bit<32> VQ_CAP_BYTES = 0x3FFFC000;
/* K_i of a class without an ecn_threshold entry: above any length. */
const bit<32> VQ_NO_THRESHOLD = 0x7FFFFFFF;

struct ig_md_t {
    parsed_md_t parsed;
    bool        forged;
    bit<1>      spoofed;            /* source outside its port's binding */
    vq_slot_t   vq_id;
    bit<1>      wrr_on;             /* vq_weight hit */
    bit<16>     wrr_weight;
    bit<8>      wrr_last_level;
    bit<8>      wrr_advance;
    bit<8>      wrr_level;
    bit<32>     now_ticks;
    bit<32>     frame_bytes;
    bit<32>     vq_elapsed_ticks;
    bit<16>     vq_rate_log2_q7;    /* the class's drain rate, log domain */
    bit<16>     vq_log_drain_q7;    /* + log2 of the elapsed ticks */
    bit<32>     threshold_bytes;    /* K_i */
    bit<32>     vq_shrink_bytes;    /* drain - frame: negative when it grows */
    bit<32>     vq_len_bytes;       /* the length this packet leaves */
    bit<32>     k_minus_vq_bytes;   /* K_i - length: negative when over */
    bit<1>      mark_original;
    bit<32>     fb_interval_ticks;  /* the class's least gap between feedback */
    bit<32>     fb_wait_ticks;      /* that gap less this packet's elapsed, at least 0 */
    bit<1>      fb_session_on;      /* the ingress port has a feedback session */
    MirrorId_t  mirror_session;
    pkt_type_t  fb_pkt_type;
    bit<8>      fb_queue_id;
    bit<32>     fb_rate;
    bit<32>     fb_target_rate;
}

struct eg_md_t {
    parsed_md_t parsed;
    queue_md_t  queue;
    bit<32>     sojourn_sample_mask;  /* 2^k - 1: one departure in 2^k is summed */
    bit<32>     sojourn_seen;         /* departures before this one, then & mask */
    bit<1>      sojourn_epoch;        /* which half of the accumulators is summed */
}

parser SwitchIngressParser(packet_in pkt, out headers_t hdr, out ig_md_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    IngressPrefixParser() prefix_parser;
    HeaderParser() header_parser;

    state start {
        prefix_parser.apply(pkt, ig_intr_md);
        header_parser.apply(pkt, hdr, ig_md.parsed);
        transition accept;
    }
}

/* trust writes `forged` and source_guard `spoofed` in stage 0: each in a
 * container of its own, or the second check costs a stage (tna/README.md,
 * "Stages"). */
@pa_solitary("ingress", "ig_md.spoofed")
/* drop_spoofed writes drop_ctl in stage 1, where classify writes qid: packed
 * in one container (as the compiler chose) they cost two stages. */
@pa_solitary("ingress", "ig_intr_md_for_dprsr.drop_ctl")
control SwitchIngress(inout headers_t hdr, inout ig_md_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    FeedbackTrust() trust;
    SourceGuard() source_guard;
    Ipv4Forward() forward;
    IngressClockHook() clock;

    /* lambda_i comes from these: the controller samples them each interval. */
    Counter<bit<32>, class_slot_t>(PMQECN_CLASSES, CounterType_t.PACKETS_AND_BYTES) class_counters;

    /* ---- WRR emulation (optional, scheduling.mode p4_wrr) -------------
     * Per virtual queue (Fig. 4): packets spent at the current level, and
     * the current level (0 = highest priority). */
    Register<bit<16>, vq_slot_t>(PMQECN_VQS, 0) vq_used;
    Register<bit<8>, vq_slot_t>(PMQECN_VQS, 0) vq_level;

    RegisterAction<bit<16>, vq_slot_t, bit<8>>(vq_used) vq_used_step = {
        void apply(inout bit<16> used, out bit<8> advance) {
            if (used >= ig_md.wrr_weight) {
                used = 1;
                advance = 1;
            } else {
                used = used + 1;
                advance = 0;
            }
        }
    };

    /* Moving past the lowest level starts the next round at the top, as the
     * paper's "this process continues". */
    RegisterAction<bit<8>, vq_slot_t, bit<8>>(vq_level) vq_level_step = {
        void apply(inout bit<8> level, out bit<8> new_level) {
            if (ig_md.wrr_advance == 1) {
                if (level >= ig_md.wrr_last_level) {
                    level = 0;
                } else {
                    level = level + 1;
                }
            }
            new_level = level;
        }
    };

    /* ---- the class's virtual queue ----------------------------------
     * vq_last_tick: the clock (64 ns ticks) at the class's last packet;
     * vq_bytes: the class's virtual-queue length in bytes of Ethernet frame
     * (14-byte header + IPv4 total length, no FCS). */
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) vq_last_tick;
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) vq_bytes;

    RegisterAction<bit<32>, class_slot_t, bit<32>>(vq_last_tick) vq_clock_step = {
        void apply(inout bit<32> last, out bit<32> elapsed) {
            elapsed = ig_md.now_ticks - last;
            last = ig_md.now_ticks;
        }
    };

    /* The frame is added and the drain taken in one step: the length is
     * max(q + frame - drain, 0). Two register actions on the one PHV
     * operand drain - frame, one per sign; a packet runs one of them. When
     * the frame exceeds the drain, q - (drain - frame) wraps to
     * q + (frame - drain), and the cap keeps it below 2^31. */
    RegisterAction<bit<32>, class_slot_t, bit<32>>(vq_bytes) vq_grow = {
        void apply(inout bit<32> q, out bit<32> len) {
            if (q < VQ_CAP_BYTES) {
                q = q - ig_md.vq_shrink_bytes;
            }
            len = q;
        }
    };

    RegisterAction<bit<32>, class_slot_t, bit<32>>(vq_bytes) vq_shrink = {
        void apply(inout bit<32> q, out bit<32> len) {
            q = q |-| ig_md.vq_shrink_bytes;
            len = q;
        }
    };

    /* The class's arrivals in this pipe (packets, wrapping): the controller
     * reads every pipe's cell and gives each pipe its share of the class's
     * drain and K_i (bfrt_controller/pmqecn/pipes.py). class_counters, read
     * summed over the pipes, cannot say which pipe a packet came in by. */
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) class_arrivals;

    RegisterAction<bit<32>, class_slot_t, void>(class_arrivals) class_arrivals_add = {
        void apply(inout bit<32> value) {
            value = value + 1;
        }
    };

    /* One feedback copy per class per feedback interval (in each pipe).
     * `quiet` is the time since the class's last feedback copy in this
     * pipe, as the sum of the gaps between its packets (vq_clock_step's
     * elapsed ticks), saturating: every packet of the class runs one of the
     * two actions, so no clock difference wraps and no second copy of the
     * clock is needed (the stateful ALU reads at most two PHV words).
     * `made` counts the copies let through (wrapping): the metrics compare
     * it with the copies egress rebuilt, the difference being copies lost
     * on the way (tna/pmqecn/README.md). */
    /* Quiet since ever at load: a class's first copy always goes out. */
    Register<fb_gate_t, class_slot_t>(PMQECN_CLASSES, {0xFFFFFFFF, 0}) feedback_gate;

    /* Over K_i, with a session: a copy if the class has been quiet for the
     * interval (quiet + elapsed >= interval, as quiet >= interval - elapsed,
     * saturated at 0). The output is the mirror type itself. */
    RegisterAction<fb_gate_t, class_slot_t, MirrorType_t>(feedback_gate) feedback_gate_check = {
        void apply(inout fb_gate_t g, out MirrorType_t mirror_type) {
            if (g.quiet >= ig_md.fb_wait_ticks) {
                g.quiet = 0;
                g.made = g.made + 1;
                mirror_type = MIRROR_TYPE_FEEDBACK;
            } else {
                g.quiet = g.quiet |+| ig_md.vq_elapsed_ticks;
                mirror_type = 0;
            }
        }
    };

    RegisterAction<fb_gate_t, class_slot_t, void>(feedback_gate) feedback_gate_wait = {
        void apply(inout fb_gate_t g) {
            g.quiet = g.quiet |+| ig_md.vq_elapsed_ticks;
        }
    };

    action set_class(class_slot_t class_id, vq_slot_t vq_id, QueueId_t qid) {
        hdr.bridged.class_id = (class_id_t)class_id;
        ig_md.vq_id = vq_id;
        ig_tm_md.qid = qid;
        ig_md.fb_queue_id = (bit<8>)qid;
    }

    action unclassified() {
        hdr.bridged.class_id = 0;
        ig_md.vq_id = 0;
    }

    table classify {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.dscp     : ternary;
            hdr.ipv4.protocol : ternary;
        }
        actions = { set_class; unclassified; }
        default_action = unclassified();
        size = 1024;
    }

    /* A virtual queue with an entry here is scheduled by the P4 WRR mapping;
     * without one its packets keep the queue chosen by classify (the TM's
     * own DWRR then does the weighting: the default). */
    action wrr(bit<16> weight, bit<8> last_level) {
        ig_md.wrr_on = 1;
        ig_md.wrr_weight = weight;
        ig_md.wrr_last_level = last_level;
    }

    table vq_weight {
        key = { ig_md.vq_id : exact; }
        actions = { wrr; NoAction; }
        default_action = NoAction();
        size = PMQECN_VQS;
    }

    action set_priority_queue(QueueId_t qid) {
        ig_tm_md.qid = qid;
        ig_md.fb_queue_id = (bit<8>)qid;
    }

    table wrr_level_queue {
        key = { ig_md.wrr_level : exact; }
        actions = { set_priority_queue; NoAction; }
        default_action = NoAction();
        size = 32;
    }

    /* K_i in bytes of virtual queue; mark_original also CE-marks an ECT
     * original (tna/pmqecn/README.md). */
    /* K_i and the class's drain rate as 128 x (log2 of bytes per tick +
     * 32), from the controller (bfrt_controller/pmqecn/drain.py), each this
     * pipe's share of the class's (the pipe is in the key: a class whose
     * senders span pipes has a virtual queue in each); and the least gap
     * between the class's feedback copies (0: every marked packet). */
    action set_threshold(bit<32> threshold_bytes, bit<1> mark_original,
                         bit<16> rate_log2_q7, bit<32> feedback_interval_ticks) {
        ig_md.threshold_bytes = threshold_bytes;
        ig_md.mark_original = mark_original;
        ig_md.vq_rate_log2_q7 = rate_log2_q7;
        ig_md.fb_interval_ticks = feedback_interval_ticks;
    }

    /* No K_i and no drain: a log rate of 0 keeps every sum below the first
     * vq_exp_drain entry. */
    action no_threshold() {
        ig_md.threshold_bytes = VQ_NO_THRESHOLD;
        ig_md.mark_original = 0;
        ig_md.vq_rate_log2_q7 = 0;
        ig_md.fb_interval_ticks = 0;
    }

    table ecn_threshold {
        key = {
            hdr.bridged.class_id : exact;
            ig_intr_md.ingress_port[8:7] : exact @name("ingress_pipe");
        }
        actions = { set_threshold; no_threshold; }
        default_action = no_threshold();
        size = PMQECN_THRESHOLD_ENTRIES;
    }

    /* The drain, rate x elapsed time, without a multiply: log2 of the
     * elapsed ticks (one ternary entry per leading bit and mantissa, the
     * same for every class) plus the class's log rate, then 2^sum from an
     * exact table. Every step rounds down (tna/pmqecn/README.md gives the bound).
     * No entry (0 ticks): a sum of 0, which drains nothing. */
    action log_elapsed(bit<16> log_elapsed_q7) {
        ig_md.vq_log_drain_q7 = log_elapsed_q7 + ig_md.vq_rate_log2_q7;
    }

    action no_elapsed() {
        ig_md.vq_log_drain_q7 = 0;
    }

    table vq_log_elapsed {
        key = { ig_md.vq_elapsed_ticks : ternary; }
        actions = { log_elapsed; no_elapsed; }
        default_action = no_elapsed();
        size = PMQECN_LOG_ENTRIES;
    }

    action drain(bit<32> drain_bytes) {
        /* Action data may only be the first operand of a subtraction
         * (tna/README.md, compiler idioms), so frame - drain is not
         * computed here; its sign is this difference's, negated. */
        ig_md.vq_shrink_bytes = drain_bytes - ig_md.frame_bytes;
    }

    table vq_exp_drain {
        key = { ig_md.vq_log_drain_q7 : exact; }
        actions = { drain; }
        default_action = drain(0);
        size = PMQECN_EXP_ENTRIES;
    }

    action set_rates(bit<32> rate, bit<32> target_rate) {
        ig_md.fb_rate = rate;
        ig_md.fb_target_rate = target_rate;
    }

    table class_rates {
        key = { hdr.bridged.class_id : exact; }
        actions = { set_rates; }
        default_action = set_rates(0, 0);
        size = PMQECN_CLASSES;
    }

    /* Feedback leaves through the port the packet came in on: that is
     * where its source is. One mirror session per such port. Looked up for
     * every packet, early, so the feedback gate (which sets the mirror
     * type) needs nothing after it. */
    action set_feedback_session(MirrorId_t session_id) {
        ig_md.mirror_session = session_id;
        ig_md.fb_pkt_type = PKT_TYPE_MIRROR_FEEDBACK;
        ig_md.fb_session_on = 1;
    }

    action no_feedback_session() {
        ig_md.fb_session_on = 0;
    }

    table feedback_session {
        key = { hdr.bridged.ingress_port : exact; }
        actions = { set_feedback_session; no_feedback_session; }
        default_action = no_feedback_session();
        size = 512;
    }

    action feedback_wait() {
        ig_md.fb_wait_ticks = ig_md.fb_interval_ticks |-| ig_md.vq_elapsed_ticks;
    }

    /* The frame in a 32-bit field, in two steps: an ALU operation's sources
     * sit in containers of its destination's size, so `(bit<32>)total_len +
     * 14` in one action does not compile; the widening move alone does
     * (p4c-barefoot 9.13.4, 9/3 stages on Tofino). (An identity Hash did
     * the widening before: p4testgen cannot evaluate a Hash, so every path
     * through the virtual queue was unknown to it, ptf_tests/README.md.) */
    action ip_length() {
        ig_md.frame_bytes = (bit<32>)hdr.ipv4.total_len;
    }

    action frame_size() {
        ig_md.frame_bytes = ig_md.frame_bytes + 14;
    }

    /* In an action, so the gateway below tests one bit of an ALU result
     * (a difference computed just before an `if` would be folded into it). */
    action compare_threshold() {
        ig_md.k_minus_vq_bytes = ig_md.threshold_bytes - ig_md.vq_len_bytes;
    }

    /* Counted by source_guard, dropped here: one small step in stage 1, on
     * a branch exclusive with forwarding's own drops (include/source_guard.p4
     * says why the guard does not drop). */
    action drop_spoofed() {
        ig_dprsr_md.drop_ctl = 1;
    }

    action mark_ce() {
        hdr.ipv4.ecn = ECN_CE;
    }

    apply {
        hdr.bridged.setValid();
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED;
        hdr.bridged.class_id = 0;
        ig_md.wrr_on = 0;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr;
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr;
        clock.apply(ig_intr_md, ig_md.now_ticks);
        ip_length();
        frame_size();

        /* Both checks look at the packet as it arrived, side by side in
         * stage 0; a forged or spoofed packet is counted there, dropped
         * here and reaches no class counter, virtual queue or feedback. */
        trust.apply(hdr, ig_intr_md, ig_dprsr_md, ig_md.forged);
        source_guard.apply(hdr, ig_intr_md, ig_md.spoofed);
        if (ig_md.forged) {
            /* already dropped and counted by trust */
        } else if (ig_md.spoofed == 1) {
            drop_spoofed();
        } else {
            forward.apply(hdr, ig_tm_md, ig_dprsr_md);
            if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
                classify.apply();
                class_counters.count(hdr.bridged.class_id[9:0]);
                feedback_session.apply();
                /* Two independent chains follow: the class's virtual queue
                 * and the optional WRR. Each step is gated on its own
                 * rather than inside one `if` per chain, because Tofino
                 * runs one next-table chain per gress: a block spanning
                 * several stages cannot interleave with its sibling, and
                 * the two chains one after the other did not fit
                 * (tna/README.md, "Stages"). */
                vq_weight.apply();
                if (hdr.bridged.class_id != 0) {
                    ig_md.vq_elapsed_ticks = vq_clock_step.execute(hdr.bridged.class_id[9:0]);
                    class_arrivals_add.execute(hdr.bridged.class_id[9:0]);
                    ecn_threshold.apply();
                }
                if (ig_md.wrr_on == 1) {
                    ig_md.wrr_advance = vq_used_step.execute(ig_md.vq_id);
                }
                if (hdr.bridged.class_id != 0) {
                    vq_log_elapsed.apply();
                    feedback_wait();
                }
                if (ig_md.wrr_on == 1) {
                    ig_md.wrr_level = vq_level_step.execute(ig_md.vq_id);
                }
                if (hdr.bridged.class_id != 0) {
                    vq_exp_drain.apply();
                }
                if (hdr.bridged.class_id != 0) {
                    /* One of two register actions on vq_bytes, so one
                     * read-modify-write per packet: the frame exceeds the
                     * drain (the sign bit of drain - frame) or it does not. */
                    if (ig_md.vq_shrink_bytes[31:31] == 1) {
                        ig_md.vq_len_bytes = vq_grow.execute(hdr.bridged.class_id[9:0]);
                    } else {
                        ig_md.vq_len_bytes = vq_shrink.execute(hdr.bridged.class_id[9:0]);
                    }
                }
                if (ig_md.wrr_on == 1) {
                    wrr_level_queue.apply();
                }
                compare_threshold();
                /* Over K_i: the length exceeds K_i (the paper's
                 * Q_length > K_i); both are below 2^31. Class 0 has no
                 * virtual queue (its difference above is not used). */
                if (hdr.bridged.class_id != 0 && ig_md.k_minus_vq_bytes[31:31] == 1) {
                    if (ig_md.mark_original == 1 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                    }
                }
                /* Every packet of a class runs one action of its feedback
                 * gate: the check when it is over K_i and its source can be
                 * sent feedback, otherwise the wait. */
                if (hdr.bridged.class_id != 0) {
                    if (ig_md.k_minus_vq_bytes[31:31] == 1 && ig_md.parsed.ipv4_plain
                            && ig_md.fb_session_on == 1) {
                        class_rates.apply();
                        ig_dprsr_md.mirror_type =
                            feedback_gate_check.execute(hdr.bridged.class_id[9:0]);
                    } else {
                        feedback_gate_wait.execute(hdr.bridged.class_id[9:0]);
                    }
                }
            }
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;

    apply {
        /* An ingress mirror copies the packet as it arrived, behind this
         * header; the session truncates it to Ethernet + IPv4. */
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_FEEDBACK) {
            mirror.emit<fb_mirror_h>(ig_md.mirror_session, {
                ig_md.fb_pkt_type,
                hdr.bridged.class_id,
                ig_md.fb_queue_id,
                hdr.ipv4.protocol,
                ig_md.parsed.l4_src_port,
                ig_md.parsed.l4_dst_port,
                ig_md.fb_rate,
                ig_md.fb_target_rate,
                hdr.bridged.orig_src_mac,
                hdr.bridged.orig_dst_mac});
        }
        pkt.emit(hdr.bridged);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.feedback);
    }
}

parser SwitchEgressParser(packet_in pkt, out headers_t hdr, out eg_md_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    EgressPrefixParser() prefix_parser;

    state start {
        prefix_parser.apply(pkt, hdr, eg_md.parsed, eg_intr_md);
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_md_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    QueueMetadataHook() queue_hook;

    /* W_i comes from these: the departures of each class, and the sum of
     * the sojourn times of one departure in 2^k (the first of every 2^k,
     * counted from the controller's last clear), both saturating.  Summing
     * every departure pins 32 bits of nanoseconds as soon as a class holds a
     * few packets on average over the interval (Little: the sum is the
     * queue's packet-seconds); the controller picks k per class from what the
     * last interval summed (bfrt_controller/pmqecn/sampling.py), so the sum
     * stays in range at any rate while a slow class is summed whole.
     * Two halves, cell epoch ++ class: departures are summed into the half
     * sojourn_epoch names, so the controller flips the epoch and then reads
     * and clears the other half, which nothing writes any more - no
     * departure falls between a read and its clear. */
    Register<bit<32>, sojourn_slot_t>(PMQECN_SOJOURN_CELLS, 0) sojourn_sum_ns;
    Register<bit<32>, sojourn_slot_t>(PMQECN_SOJOURN_CELLS, 0) sojourn_pkts;

    RegisterAction<bit<32>, sojourn_slot_t, void>(sojourn_sum_ns) sojourn_sum_add = {
        void apply(inout bit<32> value) {
            value = value |+| eg_md.queue.sojourn_ns;
        }
    };

    RegisterAction<bit<32>, sojourn_slot_t, bit<32>>(sojourn_pkts) sojourn_pkts_add = {
        void apply(inout bit<32> value, out bit<32> seen) {
            seen = value;
            value = value |+| 1;
        }
    };

    action set_sojourn_sampling(bit<32> sample_mask) {
        eg_md.sojourn_sample_mask = sample_mask;
    }

    /* Without an entry every departure is summed (k = 0). */
    table sojourn_sampling {
        key = { hdr.bridged.class_id : exact; }
        actions = { set_sojourn_sampling; }
        default_action = set_sojourn_sampling(0);
        size = PMQECN_CLASSES;
    }

    action sojourn_sample_bits() {
        eg_md.sojourn_seen = eg_md.sojourn_seen & eg_md.sojourn_sample_mask;
    }

    action set_sojourn_epoch(bit<1> epoch) {
        eg_md.sojourn_epoch = epoch;
    }

    /* No key: the default action is the switch's one epoch bit. */
    table sojourn_epoch {
        actions = { set_sojourn_epoch; }
        default_action = set_sojourn_epoch(0);
        size = 1;
    }

    /* Feedback copies that reached egress, per class: beside the copies the
     * ingress gates let through (feedback_gate's `made`), the difference is
     * what the mirror buffer or the session port's queue dropped. */
    Counter<bit<32>, class_slot_t>(PMQECN_CLASSES, CounterType_t.PACKETS) feedback_rebuilt;

    FeedbackRebuild(FEEDBACK_TYPE_PMQECN_RATE) rebuild_feedback;

    apply {
        if (hdr.fb_mirror.isValid()) {
            feedback_rebuilt.count(hdr.fb_mirror.class_id[9:0]);
            rebuild_feedback.apply(hdr);
        } else if (hdr.bridged.class_id != 0 && !hdr.feedback.isValid()) {
            queue_hook.apply(eg_intr_md, eg_md.queue);
            sojourn_epoch.apply();
            sojourn_sampling.apply();
            eg_md.sojourn_seen = sojourn_pkts_add.execute(
                eg_md.sojourn_epoch ++ hdr.bridged.class_id[9:0]);
            sojourn_sample_bits();
            if (eg_md.sojourn_seen == 0) {
                sojourn_sum_add.execute(eg_md.sojourn_epoch ++ hdr.bridged.class_id[9:0]);
            }
        }
    }
}

control SwitchEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
            hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
            hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
            hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.feedback);
    }
}

Pipeline(SwitchIngressParser(), SwitchIngress(), SwitchIngressDeparser(),
         SwitchEgressParser(), SwitchEgress(), SwitchEgressDeparser()) pipe;

Switch(pipe) main;
