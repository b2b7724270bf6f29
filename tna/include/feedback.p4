// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* The one feedback packet (tna/README.md gives its layout), rebuilt in
 * egress from a mirrored copy: the copy's Ethernet and IPv4 headers turned
 * around toward the flow's source, UDP to the feedback port, and the
 * feedback header filled from the mirror header the ingress or egress
 * that made the copy wrote (class, queue, flow, rates). The message type
 * is the program's. */
#ifndef TOFCC_FEEDBACK_P4
#define TOFCC_FEEDBACK_P4

#include "headers.p4"

control FeedbackRebuild(inout headers_t hdr)(bit<4> msg_type) {
    action rebuild() {
        hdr.ethernet.dst_addr = hdr.fb_mirror.orig_src_mac;
        hdr.ethernet.src_addr = hdr.fb_mirror.orig_dst_mac;
        ipv4_addr_t source = hdr.ipv4.src_addr;
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
        hdr.ipv4.dst_addr = source;
        hdr.ipv4.ecn = ECN_CE;
        hdr.ipv4.total_len = FEEDBACK_IPV4_TOTAL_LEN;
        hdr.ipv4.identification = 0;
        hdr.ipv4.flags = 0;
        hdr.ipv4.frag_offset = 0;
        hdr.ipv4.ttl = FEEDBACK_TTL;
        hdr.ipv4.protocol = IP_PROTO_UDP;
        hdr.udp.setValid();
        hdr.udp.src_port = hdr.fb_mirror.flow_dst_port;
        hdr.udp.dst_port = UDP_PORT_TOFCC_FEEDBACK;
        hdr.udp.length = FEEDBACK_UDP_LEN;
        hdr.udp.checksum = 0;
        hdr.feedback.setValid();
        hdr.feedback.version = FEEDBACK_VERSION;
        hdr.feedback.msg_type = msg_type;
        hdr.feedback.class_id = hdr.fb_mirror.class_id;
        hdr.feedback.queue_id = hdr.fb_mirror.queue_id;
        hdr.feedback.degree = 0;
        hdr.feedback.flow_protocol = hdr.fb_mirror.flow_protocol;
        hdr.feedback.flow_src_port = hdr.fb_mirror.flow_src_port;
        hdr.feedback.rate = hdr.fb_mirror.rate;
        hdr.feedback.target_rate = hdr.fb_mirror.target_rate;
    }

    apply {
        rebuild();
    }
}

#endif
