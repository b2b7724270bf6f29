// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_FORWARDING_P4
#define TOFCC_FORWARDING_P4

#include "headers.p4"
#include "size.p4"

/* Plain IPv4 LPM routing with next-hop MAC rewrite and TTL decrement.
 * Non-IPv4 and expiring packets are dropped; the miss action is drop.
 * IPv4 with options is dropped too: the deparser recomputes the checksum over
 * the fixed 20-byte header only (options are never parsed), so forwarding it
 * would emit a wrong checksum. Data-centre fabrics do not carry IP options. */
control Ipv4Forward(inout headers_t hdr,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    action route(PortId_t port, mac_addr_t src_mac, mac_addr_t dst_mac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; drop; }
        default_action = drop();
        size = IPV4_LPM_ENTRIES;
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            drop();
        } else if (hdr.ipv4.ihl != 5) {
            drop();
        } else if (hdr.ipv4.ttl <= 1) {
            drop();
        } else {
            ipv4_lpm.apply();
        }
    }
}

#endif
