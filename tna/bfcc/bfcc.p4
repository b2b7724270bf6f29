// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* BFCC: switch-to-switch backpressure (seed 001, sections 3.2, 4.1, 4.2,
 * Algorithms 1-2). One program plays both roles; which ports play which
 * role is decided by the controller's tables. tna/bfcc/README.md explains
 * the choices below, what they cost, and the stage-by-stage dependency
 * chain that keeps each gress within 9 of Tofino's 12 MAU stages.
 *
 * Congestion point (egress of a monitored port, table congestion_point):
 *   depth > congestion_threshold_cells -> degree from the sojourn time:
 *     sojourn <= T_min: 1 (mild); T_min < sojourn <= T_max: 2 (moderate);
 *     sojourn > T_max: 3 (severe).
 *   Occupancy per sender group = the group's departures from the congested
 *   queue within the current window (window_packets congested departures);
 *   the congested group is the running best of (occupancy, group).
 *   A backpressure message (feedback_h over Ethernet) goes to that group's
 *   upstream switch when (group, degree) differs from the last one sent, or
 *   a new refresh epoch began; a clear message when congestion ends.
 * Reaction point (ingress/egress of a port facing a downstream switch,
 * table reaction_point):
 *   backpressure from trusted ports records (group, degree, time) per port;
 *   while it is active every packet to that port carries the state (port-wide,
 *   Algorithm 1 line 2) and is subject to the fake-packet cut; packets of the
 *   named group go to the low-priority queue, everything else to the
 *   high-priority queue; after every RT(degree) real flagged packets one
 *   leaves as a fake while the real one recirculates through its pipe's
 *   recirculation port, unless that port is over its level (table
 *   recirculation): then the original leaves itself, counted in
 *   recirculation_skips. named_group_only = 1 flags only the named group's
 *   packets. Backpressure is recorded in the reaction port's ingress pipe
 *   and copied to every other pipe the controller names (bp_replicate), so
 *   senders on any pipe see it.
 * Sender reaction (table sender_notify): a message accepted from a trusted
 *   port is relayed to the host port behind which the named group's senders
 *   sit, when the controller says so (sender_reaction: match_switch).
 */
#include "../include/arch.p4"
#include "../include/size.p4"
#include "../include/headers.p4"
#include "../include/parsers.p4"
#include "../include/forwarding.p4"
#include "../include/trust.p4"
#include "../include/source_guard.p4"
#include "../include/test_hooks.p4"

const bit<8> BFCC_DEGREE_MILD = 1;
const bit<8> BFCC_DEGREE_MODERATE = 2;
const bit<8> BFCC_DEGREE_SEVERE = 3;
/* Written into occupancy_window.packets by a non-congested departure: no
 * window is longer (window_packets is 8 bits), so the next congested
 * departure opens a new window. */
const bit<32> BFCC_WINDOW_CLOSED = 0xff;
/* A group's first departure in a window: occupancy key ~1 ++ group. Keys
 * are ~count ++ group, so the smallest key is the largest count, ties to
 * the lower group id, and the group is the key's low byte. */
const bit<8> BFCC_KEY_FIRST_COUNT = 0xfe;
const bit<32> BFCC_KEY_ONE_COUNT = 0x100;
/* Backpressure copied from the reaction port's ingress pipe to every other
 * pipe the controller names (tna/bfcc/README.md, "Pipes"): an
 * ingress-to-egress mirror to the next pipe's recirculation port, whose
 * egress writes the origin into the message and sends it round to that
 * pipe's ingress. Types of our own: only BFCC's parsers read them. */
const pkt_type_t PKT_TYPE_MIRROR_BP_REPLICA = 6;
const MirrorType_t MIRROR_TYPE_BP_REPLICA = 6;

typedef bit<4>  cp_id_t;
/* Sender groups: 8 bits, the low byte of the shared class_id_t. */
typedef bit<8>  group_t;
typedef bit<12> vq_index_t;   /* cp_id ++ group */
typedef bit<7>  qid_index_t;  /* QueueId_t of either chip */
typedef bit<1>  recirc_slot_t; /* a pipe's one recirculation_depth entry */

/* Two 32-bit halves of one register entry, updated by one RegisterAction.
 * The control plane sees them as <register>.<member>; the model packs them
 * as first member << 32 | second member. The window number is the tags'
 * epoch: at 32 bits a stale tag aliases the current window only after 2^32
 * windows (29 s of minimum-size packets at 100 Gb/s), where 16 bits wrapped
 * in 440 us. */
struct bfcc_window_t {
    bit<32> id;        /* window number */
    bit<32> packets;   /* congested departures in it, BFCC_WINDOW_CLOSED = closed */
}

struct bfcc_tagged_key_t {
    bit<32> window_id; /* window the key belongs to */
    bit<32> key;       /* ~count ++ group in the low 16 bits */
}

/* In front of a backpressure (or clear) message copied to another pipe,
 * 4 bytes. Egress writes both fields into the message (feedback_h's
 * flow_src_port and flow_protocol, unused by backpressure) so the next
 * pipe's ingress knows whose record it is and how far the copy still goes. */
header bp_replica_mirror_h {
    pkt_type_t pkt_type;
    bit<16>    origin_port;   /* the reaction port the message arrived on */
    bit<8>     pipes_left;    /* pipes still to reach after this copy's */
}

struct ig_md_t {
    parsed_md_t parsed;
    bool        forged;
    bit<1>      spoofed;          /* source outside its port's binding */
    bit<32>     now_ns;
    bit<16>     bp_key;           /* group ++ degree; 0 = no backpressure */
    QueueId_t   high_qid;
    QueueId_t   low_qid;
    bit<1>      named_group_only;
    /* bp_expiry_ns - 1: the oldest age still alive (2^32 - 1 when expiry
     * is 0, i.e. never), so "expired" is one saturating difference != 0. */
    bit<32>     bp_alive_max_ns;
    bit<32>     bp_age_ns;
    bit<32>     bp_overage_ns;
    /* A message's record: the port it arrived on, or for a copy from
     * another pipe the port the original arrived on. */
    bit<16>     bp_port;
    bit<1>      replicate;        /* an original to copy to the next pipe */
    bit<1>      replica;          /* a copy from another pipe */
    MirrorId_t  replica_session;  /* the next pipe's recirculation session */
    bit<8>      replica_left;     /* pipes after the one the copy goes to */
    pkt_type_t  mirror_pkt_type;
}

/* What the congestion point decided for this departure. */
const bit<2> CP_IDLE = 0;
const bit<2> CP_CONGESTED = 1;
const bit<2> CP_RECOVERED = 2;

struct eg_md_t {
    parsed_md_t parsed;
    queue_md_t  queue;
    /* reaction point */
    bit<8>      rate_threshold_packets;
    MirrorId_t  recirculation_session;
    bit<1>      make_fake;        /* rr_count says: this slot is a fake's */
    bit<1>      rt_on;            /* rate_threshold hit */
    bit<1>      recirc_on;        /* recirculation hit */
    bit<32>     recirc_level_cells;
    /* 1: the pipe's recirculation queue is within its level, so a fake's
     * original may recirculate; 0: it leaves itself. */
    bit<1>      recirc_ok;
    queue_md_t  recirc_queue;     /* the recirculation port's, as a copy leaves it */
    bp_replica_mirror_h bp_replica;
    /* congestion point */
    bit<1>      cp_on;            /* congestion_point hit */
    bit<2>      cp_state;         /* CP_IDLE, CP_CONGESTED or CP_RECOVERED */
    cp_id_t     cp_id;
    bit<32>     congestion_threshold_cells;
    bit<32>     t_min_ns;
    bit<32>     t_max_ns;
    bit<32>     window_packets;
    bit<32>     bp_epoch_ns;      /* global_tstamp & refresh_mask */
    /* threshold - measure: bit 31 set <=> measure > threshold (both < 2^31) */
    bit<32>     depth_margin_cells;
    bit<32>     t_min_margin_ns;
    bit<32>     t_max_margin_ns;
    bit<8>      degree;
    bit<32>     window_id;
    vq_index_t  vq_index;
    bit<32>     vq_first_key;
    bit<32>     vq_key;
    bit<32>     best_key;
    bit<8>      bp_tag;           /* refresh epoch (6 bits) ++ degree (2 bits) */
    bit<1>      bp_report;
    group_t     bp_group;
    bit<16>     bp_key;           /* group ++ bp_tag; 0 = clear */
    bit<16>     bp_prev_key;
    bit<8>      bp_msg_type;
    bit<8>      bp_degree;
    /* mirror header fields */
    MirrorId_t  mirror_session;
    pkt_type_t  mirror_pkt_type;
    mac_addr_t  bp_src_mac;
    mac_addr_t  bp_dst_mac;
}

/* The controls SwitchIngress and SwitchEgress are composed of, one per
 * concern (tna/bfcc/README.md, "Files"). */
#include "messages.p4"
#include "reaction_point.p4"
#include "congestion_point.p4"

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
control SwitchIngress(inout headers_t hdr, inout ig_md_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    FeedbackTrust() trust;
    SourceGuard() source_guard;
    Ipv4Forward() forward;

    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) fake_drops;

    /* What the downstream switch on each port last said: group ++ degree
     * (0 after a clear or once expired), and when it said it. Messages
     * write them (BfccMessageIn), the reaction point reads them
     * (BfccReactionIngress). */
    Register<bit<16>, PortId_t>(TOFCC_PORTS, 0) bp_state;
    Register<bit<32>, PortId_t>(TOFCC_PORTS, 0) bp_recorded_ns;
    BfccMessageIn(bp_state, bp_recorded_ns) message_in;
    BfccReactionIngress(bp_state, bp_recorded_ns) reaction;

    /* Virtual queue module: every sender belongs to one group (0 = none),
     * the same division on every switch. */
    action set_group(group_t group) {
        hdr.bridged.class_id = (class_id_t)group;
    }

    table sender_group {
        key = { hdr.ipv4.src_addr : lpm; }
        actions = { set_group; NoAction; }
        default_action = NoAction();
        size = BFCC_SENDER_GROUP_ENTRIES;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    apply {
        hdr.bridged.setValid();
        hdr.bridged.pkt_type = PKT_TYPE_BRIDGED;
        hdr.bridged.class_id = 0;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.orig_src_mac = hdr.ethernet.src_addr;
        hdr.bridged.orig_dst_mac = hdr.ethernet.dst_addr;
        hdr.bfcc_bridged.setValid();
        hdr.bfcc_bridged.bp_degree = 0;
        /* The parser's global timestamp: defined for every packet, a
         * recirculated original's included, where the MAC timestamp of a
         * recirculation port is not documented. Messages and data packets
         * read the same clock, so ages are exact. */
        ig_md.now_ns = ig_prsr_md.global_tstamp[31:0];
        ig_md.bp_port = (bit<16>)ig_intr_md.ingress_port;
        ig_md.replicate = 0;
        ig_md.replica = 0;

        /* Side by side in stage 0: a forged or spoofed packet is counted
         * there and dropped here, before it can name a sender group or
         * touch bp_state. */
        trust.apply(hdr, ig_intr_md, ig_dprsr_md, ig_md.forged);
        source_guard.apply(hdr, ig_intr_md, ig_md.spoofed);
        if (ig_md.forged) {
            /* already dropped and counted by trust */
        } else if (ig_md.spoofed == 1) {
            /* counted by source_guard; dropped on this branch, exclusive
             * with forwarding's drops (include/source_guard.p4) */
            drop();
        } else if (hdr.ethernet.ether_type == ETHERTYPE_TOFCC_FAKE) {
            /* A fake has done its job by taking a slot on the link. */
            drop();
            fake_drops.count(ig_intr_md.ingress_port);
        } else if (hdr.feedback.isValid() && !hdr.ipv4.isValid()) {
            message_in.apply(hdr, ig_md, ig_intr_md, ig_dprsr_md, ig_tm_md);
        } else {
            forward.apply(hdr, ig_tm_md, ig_dprsr_md);
            if (hdr.ipv4.isValid() && !hdr.feedback.isValid() && ig_dprsr_md.drop_ctl == 0) {
                sender_group.apply();
                reaction.apply(hdr, ig_md, ig_tm_md);
            }
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;

    apply {
        /* The copy is the message as it arrived, behind this header. */
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_BP_REPLICA) {
            mirror.emit<bp_replica_mirror_h>(ig_md.replica_session, {
                ig_md.mirror_pkt_type,
                ig_md.bp_port,
                ig_md.replica_left});
        }
        pkt.emit(hdr.bridged);
        pkt.emit(hdr.bfcc_bridged);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.feedback);
    }
}

/* Egress sees a bridged packet, a backpressure copy (mirror header + the
 * Ethernet header the session kept), a copy bound for recirculation
 * (mirror header + the whole fake, whose IPv4 header is put right) or a
 * message copied to another pipe (mirror header + the message). */
parser SwitchEgressParser(packet_in pkt, out headers_t hdr, out eg_md_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    HeaderParser() header_parser;

    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<pkt_type_t>()) {
            PKT_TYPE_MIRROR_BACKPRESSURE: parse_backpressure_copy;
            PKT_TYPE_MIRROR_RECIRCULATE: parse_recirculate_copy;
            PKT_TYPE_MIRROR_BP_REPLICA: parse_replica_copy;
            default: parse_bridged;
        }
    }

    state parse_bridged {
        pkt.extract(hdr.bridged);
        pkt.extract(hdr.bfcc_bridged);
        header_parser.apply(pkt, hdr, eg_md.parsed);
        transition accept;
    }

    state parse_backpressure_copy {
        pkt.extract(hdr.bp_mirror);
        pkt.extract(hdr.ethernet);
        transition accept;
    }

    state parse_recirculate_copy {
        pkt.extract(hdr.recirc_mirror);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        transition accept;
    }

    state parse_replica_copy {
        pkt.extract(eg_md.bp_replica);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.feedback);
        transition accept;
    }
}

/* Flags and action data written in stage 0 by different tables: each in a
 * container of its own, since two tables cannot write one container in the
 * same stage (packed together, they cost a stage). */
@pa_solitary("egress", "eg_md.rt_on")
@pa_solitary("egress", "eg_md.cp_on")
@pa_solitary("egress", "eg_md.recirculation_session")
@pa_solitary("egress", "eg_md.rate_threshold_packets")
@pa_solitary("egress", "eg_md.recirc_on")
/* The recirculation depth written whole into recirculation_depth: left to
 * itself, Tofino2's production build reads deq_qdepth straight into the
 * stateful ALU, which its input crossbar cannot take. */
@pa_solitary("egress", "eg_md.recirc_queue.depth_cells")
control SwitchEgress(inout headers_t hdr, inout eg_md_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    QueueMetadataHook() queue_hook;
    /* The recirculation port's queue as a recirculating original leaves it
     * (deq_qdepth; a test injects it for the recirculation port). */
    DequeueQueueHook() recirc_queue_hook;

    /* The depth of the pipe's recirculation queue behind the last original
     * that left it (deq_qdepth: the last one out of a draining queue writes
     * what is left, so a queue that emptied reads empty again). One entry:
     * registers are per pipe, as is the recirculation port. */
    Register<bit<32>, recirc_slot_t>(1, 0) recirculation_depth;
    BfccRateReduction(recirculation_depth) rate_reduction;
    BfccCongestionPoint() congestion;
    BfccCongestedGroup() congested_group;

    RegisterAction<bit<32>, recirc_slot_t, void>(recirculation_depth) recirculation_depth_write = {
        void apply(inout bit<32> depth) {
            depth = eg_md.recirc_queue.depth_cells;
        }
    };

    /* The copy goes through ingress again, which routes it again: undo this
     * pass's TTL decrement so the real packet leaves with one hop's worth. */
    action restore_real() {
        hdr.ethernet.ether_type = ETHERTYPE_IPV4;
        hdr.ipv4.ttl = hdr.ipv4.ttl + 1;
    }

    action build_backpressure() {
        hdr.ethernet.dst_addr = hdr.bp_mirror.dst_mac;
        hdr.ethernet.src_addr = hdr.bp_mirror.src_mac;
        hdr.ethernet.ether_type = ETHERTYPE_TOFCC_FEEDBACK;
        hdr.feedback.setValid();
        hdr.feedback.version = FEEDBACK_VERSION;
        hdr.feedback.msg_type = hdr.bp_mirror.msg_type[3:0];
        hdr.feedback.class_id = (class_id_t)hdr.bp_mirror.group;
        hdr.feedback.queue_id = 0;
        hdr.feedback.degree = hdr.bp_mirror.degree;
        hdr.feedback.flow_protocol = 0;
        hdr.feedback.flow_src_port = 0;
        hdr.feedback.rate = 0;
        hdr.feedback.target_rate = 0;
    }

    /* A message copied to another pipe: where it came from and how far it
     * still goes, in fields backpressure leaves 0. */
    action address_replica() {
        hdr.feedback.flow_src_port = eg_md.bp_replica.origin_port;
        hdr.feedback.flow_protocol = eg_md.bp_replica.pipes_left;
    }

    apply {
        eg_md.make_fake = 0;
        eg_md.recirc_ok = 0;
        eg_md.bp_report = 0;
        eg_md.cp_state = CP_IDLE;

        if (hdr.bp_mirror.isValid()) {
            build_backpressure();
        } else if (eg_md.bp_replica.isValid()) {
            address_replica();
        } else if (hdr.recirc_mirror.isValid()) {
            restore_real();
            recirc_queue_hook.apply(eg_intr_md, eg_md.recirc_queue);
            recirculation_depth_write.execute(0);
        } else if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
            /* Reaction point and congestion point are two chains that
             * share stages. Each step has its own gate, on flags the
             * previous steps' actions set, rather than one nested `if` per
             * chain: Tofino runs one next-table chain per gress, so a block
             * spanning several stages cannot interleave with its sibling,
             * and the two chains one after the other did not fit
             * (tna/README.md, "Stages"). A sub-control's gated steps stay
             * siblings once it is inlined. */
            queue_hook.apply(eg_intr_md, eg_md.queue);
            rate_reduction.apply(hdr, eg_md, eg_intr_md, eg_dprsr_md);
            congestion.apply(hdr, eg_md, eg_intr_md, eg_prsr_md);
            congested_group.apply(hdr, eg_md, eg_dprsr_md);
        }
    }
}

control SwitchEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    Mirror() mirror;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_BACKPRESSURE) {
            mirror.emit<bp_mirror_h>(eg_md.mirror_session, {
                eg_md.mirror_pkt_type,
                eg_md.bp_msg_type,
                eg_md.bp_group,
                eg_md.bp_degree,
                eg_md.bp_src_mac,
                eg_md.bp_dst_mac});
        } else if (eg_dprsr_md.mirror_type == MIRROR_TYPE_RECIRCULATE) {
            mirror.emit<recirc_mirror_h>(eg_md.mirror_session, {eg_md.mirror_pkt_type});
        }
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
