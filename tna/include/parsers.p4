// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_PARSERS_P4
#define TOFCC_PARSERS_P4

#include "headers.p4"

/* Ethernet / IPv4 / TCP|UDP / feedback. L4 is parsed only for unfragmented
 * IPv4 without options; everything else is forwarded as opaque payload. */
parser HeaderParser(packet_in pkt, inout headers_t hdr, inout parsed_md_t parsed) {
    state start {
        parsed.l4_src_port = 0;
        parsed.l4_dst_port = 0;
        parsed.ipv4_plain = false;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_TOFCC_FEEDBACK: parse_feedback;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTO_TCP): parse_tcp;
            (5, 0, IP_PROTO_UDP): parse_udp;
            (5, 0, _): plain_ipv4;
            default: accept;
        }
    }

    state plain_ipv4 {
        parsed.ipv4_plain = true;
        transition accept;
    }

    state parse_tcp {
        parsed.ipv4_plain = true;
        pkt.extract(hdr.tcp);
        parsed.l4_src_port = hdr.tcp.src_port;
        parsed.l4_dst_port = hdr.tcp.dst_port;
        transition accept;
    }

    state parse_udp {
        parsed.ipv4_plain = true;
        pkt.extract(hdr.udp);
        parsed.l4_src_port = hdr.udp.src_port;
        parsed.l4_dst_port = hdr.udp.dst_port;
        transition select(hdr.udp.dst_port) {
            UDP_PORT_TOFCC_FEEDBACK: parse_feedback;
            default: accept;
        }
    }

    state parse_feedback {
        pkt.extract(hdr.feedback);
        transition accept;
    }
}

/* Ingress starts with intrinsic metadata and the port metadata block. */
parser IngressPrefixParser(packet_in pkt, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition accept;
    }
}

/* Egress sees either the bridged header of a normal packet or the mirror
 * header of a feedback copy; both begin with a pkt_type byte. A feedback copy
 * is truncated by its mirror session to Ethernet + IPv4, which is all that
 * is parsed of it. */
parser EgressPrefixParser(packet_in pkt, inout headers_t hdr, inout parsed_md_t parsed,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    HeaderParser() header_parser;

    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<pkt_type_t>()) {
            PKT_TYPE_MIRROR_FEEDBACK: parse_feedback_copy;
            default: parse_bridged;
        }
    }

    state parse_bridged {
        pkt.extract(hdr.bridged);
        header_parser.apply(pkt, hdr, parsed);
        transition accept;
    }

    state parse_feedback_copy {
        pkt.extract(hdr.fb_mirror);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        parsed.l4_src_port = 0;
        parsed.l4_dst_port = 0;
        parsed.ipv4_plain = true;
        transition accept;
    }
}

#endif
