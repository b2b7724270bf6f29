// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
/* The smallest program on which p4testgen (p4c 34b86e9, Tofino target)
 * stops with the internal error S-PIE meets: a Hash constructed with a
 * CRCPolynomial (HashAlgorithm_t.CUSTOM) and read with get(). README.md
 * beside this file gives the command, its output and the line of p4testgen
 * that throws. With -DPREDEFINED the same program uses the predefined CRC16
 * (the same polynomial, 0x8005 reflected, init 0, no final xor) and
 * p4testgen generates its tests: the crash is the CUSTOM constructor, not
 * the hash input, the key width or anything else in S-PIE. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_h ethernet;
}

struct md_t {}

parser IgParser(packet_in pkt, out headers_t hdr, out md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
#ifdef PREDEFINED
    Hash<bit<16>>(HashAlgorithm_t.CRC16) hasher;
#else
    CRCPolynomial<bit<16>>(16w0x8005, true, false, false, 16w0x0000, 16w0x0000) poly;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, poly) hasher;
#endif

    apply {
        hdr.ethernet.ether_type = hasher.get({hdr.ethernet.src_addr});
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); }
}

parser EgParser(packet_in pkt, out headers_t hdr, out md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout md_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {}
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in md_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {}
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
