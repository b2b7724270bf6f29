// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_HEADERS_P4
#define TOFCC_HEADERS_P4

#include "defines.p4"

header ethernet_h {
    mac_addr_t   dst_addr;
    mac_addr_t   src_addr;
    ether_type_t ether_type;
}

/* DSCP and ECN are separate fields: marking touches only ecn. */
header ipv4_h {
    bit<4>        version;
    bit<4>        ihl;
    bit<6>        dscp;
    bit<2>        ecn;
    bit<16>       total_len;
    bit<16>       identification;
    bit<3>        flags;
    bit<13>       frag_offset;
    bit<8>        ttl;
    ip_protocol_t protocol;
    bit<16>       hdr_checksum;
    ipv4_addr_t   src_addr;
    ipv4_addr_t   dst_addr;
}

header tcp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

/* The project's single feedback header, 16 bytes; tna/README.md has the
 * byte diagram. Rates are packets per second. */
header feedback_h {
    bit<4>        version;
    bit<4>        msg_type;
    class_id_t    class_id;       /* class (PMQECN) or sender group (BFCC) */
    bit<8>        queue_id;
    bit<8>        degree;         /* congestion degree, 0 when unused */
    ip_protocol_t flow_protocol;
    bit<16>       flow_src_port;  /* the source's own L4 port */
    bit<32>       rate;           /* lambda_i: measured arrival rate */
    bit<32>       target_rate;    /* lambda_i*: rate the source should use */
}

/* Ingress -> egress. MACs travel unrewritten so feedback can be addressed
 * to the previous hop even though routing has rewritten the Ethernet header. */
header bridged_md_h {
    pkt_type_t pkt_type;
    class_id_t class_id;
    @padding bit<7> _pad0;
    PortId_t   ingress_port;
    mac_addr_t orig_src_mac;
    mac_addr_t orig_dst_mac;
}

/* Egress-to-egress mirror of a congested packet: everything the copy needs
 * to become a feedback packet, 29 bytes (<= 32 B mirror header limit). */
header fb_mirror_h {
    pkt_type_t    pkt_type;
    class_id_t    class_id;
    bit<8>        queue_id;
    ip_protocol_t flow_protocol;
    bit<16>       flow_src_port;
    bit<16>       flow_dst_port;
    bit<32>       rate;
    bit<32>       target_rate;
    mac_addr_t    orig_src_mac;
    mac_addr_t    orig_dst_mac;
}

/* BFCC: ingress -> egress, after bridged_md_h. bp_degree != 0 marks a packet
 * of the group the downstream switch named (tna/bfcc/README.md). */
header bfcc_bridged_h {
    bit<8> bp_degree;
}

/* P4QCN: ingress -> egress, after bridged_md_h. The ingress clock (64 ns
 * ticks, from IngressClockHook) so the egress congestion point's per-flow
 * feedback interval runs on a clock a test can set. */
header p4qcn_bridged_h {
    bit<32> now_ticks;
}

/* AQM (RED, CoDel): ingress -> egress, after bridged_md_h. The ingress
 * clock in 64 ns ticks (IngressClockHook, so a test can set it: CoDel's
 * timers) and the low 32 bits of the real MAC timestamp in ns (Tofino's
 * sojourn time, tna/aqm/README.md). */
header aqm_bridged_h {
    bit<32> now_ticks;
    bit<32> arrival_ns;
}

/* BFCC egress-to-egress mirror that becomes a backpressure (or clear)
 * message to the upstream switch, 16 bytes. The copy is truncated to its
 * Ethernet header by the mirror session. */
header bp_mirror_h {
    pkt_type_t pkt_type;
    bit<8>     msg_type;
    bit<8>     group;      /* BFCC's sender groups are 8 bits */
    bit<8>     degree;
    mac_addr_t src_mac;
    mac_addr_t dst_mac;
}

/* BFCC egress-to-egress mirror of a packet that left as a fake: the copy is
 * the real packet on its way to a recirculation port. */
header recirc_mirror_h {
    pkt_type_t pkt_type;
}

/* S-PIE egress-to-egress mirror of a PI step's departure: the state its
 * ingress needs, 12 bytes (tna/spie/README.md). now_ticks is the step's
 * packet's ingress clock, so the update's age is measured on the clock the
 * data packets read (a test's pinned clock included). */
header spie_mirror_h {
    pkt_type_t pkt_type;
    bit<8>     slot;
    bit<8>     congested;
    bit<8>     reserved;
    bit<32>    prob;
    bit<32>    now_ticks;
}

struct headers_t {
    bridged_md_h bridged;
    bfcc_bridged_h bfcc_bridged;
    p4qcn_bridged_h p4qcn_bridged;
    aqm_bridged_h aqm_bridged;
    fb_mirror_h  fb_mirror;
    bp_mirror_h  bp_mirror;
    recirc_mirror_h recirc_mirror;
    spie_mirror_h spie_mirror;
    ethernet_h   ethernet;
    ipv4_h       ipv4;
    tcp_h        tcp;
    udp_h        udp;
    feedback_h   feedback;
}

/* What every program's parser fills in besides headers. */
struct parsed_md_t {
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
    bool    ipv4_plain;   /* IPv4 with no options (ihl == 5) */
}

/* Queue state as the pipeline sees it: the real TM metadata, or injected by
 * the test hook. Both widened to 32 bits (Tofino2's timedelta is 32 bits). */
struct queue_md_t {
    bit<32> depth_cells;
    bit<32> sojourn_ns;
}

#endif
