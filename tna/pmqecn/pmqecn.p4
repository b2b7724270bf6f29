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
#include "../include/size.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"
#include "../include/feedback.p4"

/* A class or virtual queue indexes 1024-cell registers, so its id is 10 bits
 * where it is written (classify's action) and where it is used as an index
 * (a slice of the bridged 16-bit class_id, which BFCC shares): no value can
 * address past a register, whatever the control plane or a bridged header
 * holds.  p4testgen otherwise picks 16-bit ids and sets cells that do not
 * exist. */
typedef bit<10> class_slot_t;
typedef bit<10> vq_slot_t;

/* The two halves of a class's feedback gate: the 64 ns ticks since it last
 * let a feedback copy through (saturating), and how many it has let through
 * (wrapping). */
struct fb_gate_t {
    bit<32> quiet;
    bit<32> made;
}
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

/* The controls SwitchIngress is composed of, one per concern
 * (tna/pmqecn/README.md, "Files"). */
#include "virtual_queue.p4"
#include "wrr.p4"
#include "feedback_gate.p4"

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
    PmqecnVirtualQueue() virtual_queue;
    PmqecnWrr() wrr;
    PmqecnFeedbackGate() feedback_gate;

    /* lambda_i comes from these: the controller samples them each interval. */
    Counter<bit<32>, class_slot_t>(PMQECN_CLASSES, CounterType_t.PACKETS_AND_BYTES) class_counters;

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
        size = PMQECN_CLASSIFY_ENTRIES;
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
        size = TOFCC_PORTS;
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
                 * (tna/README.md, "Stages"). A sub-control's gated steps
                 * stay siblings once it is inlined. */
                virtual_queue.apply(hdr, ig_md, ig_intr_md);
                wrr.apply(ig_md, ig_tm_md);
                /* Over K_i: the length exceeds K_i (the paper's
                 * Q_length > K_i); both are below 2^31. Class 0 has no
                 * virtual queue (its difference above is not used). */
                if (hdr.bridged.class_id != 0 && ig_md.k_minus_vq_bytes[31:31] == 1) {
                    if (ig_md.mark_original == 1 && hdr.ipv4.ecn != ECN_NOT_ECT) {
                        mark_ce();
                    }
                }
                feedback_gate.apply(hdr, ig_md, ig_dprsr_md);
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
     * Two halves, each its own pair of registers, so the controller clears a half
     * with one request (BF-Runtime's delete with no key: tableClear)
     * rather than one write per cell: departures are summed into the half
     * sojourn_epoch names, so the controller clears the other half, flips
     * the epoch to it and then reads the half just left, which nothing
     * writes any more - no departure falls between a read and its clear. */
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) sojourn_sum_ns_0;
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) sojourn_pkts_0;
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) sojourn_sum_ns_1;
    Register<bit<32>, class_slot_t>(PMQECN_CLASSES, 0) sojourn_pkts_1;

    RegisterAction<bit<32>, class_slot_t, void>(sojourn_sum_ns_0) sojourn_sum_add_0 = {
        void apply(inout bit<32> value) {
            value = value |+| eg_md.queue.sojourn_ns;
        }
    };

    RegisterAction<bit<32>, class_slot_t, bit<32>>(sojourn_pkts_0) sojourn_pkts_add_0 = {
        void apply(inout bit<32> value, out bit<32> seen) {
            seen = value;
            value = value |+| 1;
        }
    };

    RegisterAction<bit<32>, class_slot_t, void>(sojourn_sum_ns_1) sojourn_sum_add_1 = {
        void apply(inout bit<32> value) {
            value = value |+| eg_md.queue.sojourn_ns;
        }
    };

    RegisterAction<bit<32>, class_slot_t, bit<32>>(sojourn_pkts_1) sojourn_pkts_add_1 = {
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
            if (eg_md.sojourn_epoch == 0) {
                eg_md.sojourn_seen = sojourn_pkts_add_0.execute(hdr.bridged.class_id[9:0]);
            } else {
                eg_md.sojourn_seen = sojourn_pkts_add_1.execute(hdr.bridged.class_id[9:0]);
            }
            sojourn_sample_bits();
            if (eg_md.sojourn_seen == 0) {
                if (eg_md.sojourn_epoch == 0) {
                    sojourn_sum_add_0.execute(hdr.bridged.class_id[9:0]);
                } else {
                    sojourn_sum_add_1.execute(hdr.bridged.class_id[9:0]);
                }
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
