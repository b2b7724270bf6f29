// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_TRUST_P4
#define TOFCC_TRUST_P4

#include "headers.p4"
#include "size.p4"

/* Feedback, backpressure and pause messages change how *other* senders are
 * treated, so only switch-facing ports listed here may deliver them. A
 * feedback header arriving anywhere else is a forgery: dropped and counted
 * per ingress port. */
control FeedbackTrust(in headers_t hdr,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      out bool forged) {
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) untrusted_feedback_drops;

    action trusted() { }

    table trusted_ports {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { trusted; NoAction; }
        default_action = NoAction();
        size = TOFCC_PORTS;
    }

    apply {
        forged = false;
        if (hdr.feedback.isValid()) {
            if (!trusted_ports.apply().hit) {
                forged = true;
                ig_dprsr_md.drop_ctl = 1;
                untrusted_feedback_drops.count(ig_intr_md.ingress_port);
            }
        }
    }
}

#endif
