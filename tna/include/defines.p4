// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_DEFINES_P4
#define TOFCC_DEFINES_P4

#include "arch.p4"

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<16> ether_type_t;
typedef bit<8>  ip_protocol_t;
typedef bit<16> class_id_t;
typedef bit<16> vq_id_t;
typedef bit<8>  pkt_type_t;

const ether_type_t ETHERTYPE_IPV4 = 0x0800;
/* Switch-to-switch feedback (backpressure) rides directly on Ethernet with
 * an IEEE local-experimental EtherType; host-bound feedback rides on UDP so
 * it is routed back across L3 hops. Both carry the same feedback_h. */
const ether_type_t ETHERTYPE_TOFCC_FEEDBACK = 0x88B6;
const bit<16> UDP_PORT_TOFCC_FEEDBACK = 0x4CCF;   /* 19663 */
/* BFCC "fake" packets: a real packet whose EtherType is swapped for the other
 * IEEE local-experimental value. It keeps its full length, so it takes the
 * wire time of the packet it stands in for, and nothing uses it: a BFCC
 * switch drops and counts it, an IPv4 router drops it as non-IPv4, a host
 * ignores the unknown type. */
const ether_type_t ETHERTYPE_TOFCC_FAKE = 0x88B5;

const ip_protocol_t IP_PROTO_TCP = 6;
const ip_protocol_t IP_PROTO_UDP = 17;

const bit<4> FEEDBACK_VERSION = 2;
const bit<4> FEEDBACK_TYPE_PMQECN_RATE = 1;
const bit<4> FEEDBACK_TYPE_BACKPRESSURE = 2;
const bit<4> FEEDBACK_TYPE_BACKPRESSURE_CLEAR = 3;
const bit<4> FEEDBACK_TYPE_QCN = 4;
const bit<4> FEEDBACK_TYPE_SPIE_STATE = 5;

const bit<2> ECN_NOT_ECT = 0;
const bit<2> ECN_CE = 3;

/* First byte of everything egress sees in front of the packet. */
const pkt_type_t PKT_TYPE_BRIDGED = 1;
const pkt_type_t PKT_TYPE_MIRROR_FEEDBACK = 2;
const pkt_type_t PKT_TYPE_MIRROR_BACKPRESSURE = 3;
const pkt_type_t PKT_TYPE_MIRROR_RECIRCULATE = 4;
const pkt_type_t PKT_TYPE_MIRROR_SPIE = 5;

/* Mirror type 0 means "no mirror"; 1..7 are ours. */
const MirrorType_t MIRROR_TYPE_FEEDBACK = 2;
const MirrorType_t MIRROR_TYPE_BACKPRESSURE = 3;
const MirrorType_t MIRROR_TYPE_RECIRCULATE = 4;
const MirrorType_t MIRROR_TYPE_SPIE = 5;

const bit<8> FEEDBACK_TTL = 64;
/* IPv4 (20) + UDP (8) + feedback_h (16). */
const bit<16> FEEDBACK_IPV4_TOTAL_LEN = 44;
const bit<16> FEEDBACK_UDP_LEN = 24;

#endif
