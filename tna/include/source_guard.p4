// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
#ifndef TOFCC_SOURCE_GUARD_P4
#define TOFCC_SOURCE_GUARD_P4

#include "headers.p4"
#include "size.p4"

/* Source binding, a per-port unicast reverse-path check. Every program keys
 * per-sender state on the IPv4 source (PMQECN's classes and their virtual
 * queues and feedback, BFCC's sender groups and backpressure), so a host
 * that sends with another tenant's source would act in that tenant's name.
 * A host port is bound to the prefixes its hosts may use: one `bound` entry
 * per prefix and a /0 `spoofed_source` entry under them; the longest prefix
 * wins, so a source outside every bound prefix of its port hits the /0, is
 * counted per ingress port and flagged. A port with no entry at all is not
 * checked (`unbound`): switch-facing ports carry every tenant's sources,
 * and the recirculation and CPU ports carry packets the switch itself
 * admitted. The controller refuses a config that leaves a host port unbound
 * (tna/README.md, "Trust"). Only IPv4 data is checked: feedback is
 * FeedbackTrust's, and a non-IPv4 packet has no source to bind.
 *
 * The program drops a flagged packet, on the branch of its own if/else
 * chain that runs instead of forwarding: FeedbackTrust already writes
 * drop_ctl in stage 0, and two tables writing one container cannot share
 * a stage, so a drop here would push the whole ingress one stage deeper
 * (tna/README.md, "Stages"). */
control SourceGuard(in headers_t hdr,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    out bit<1> spoofed) {
    Counter<bit<32>, PortId_t>(TOFCC_PORTS, CounterType_t.PACKETS) spoofed_source_drops;

    action bound() {
        spoofed = 0;
    }

    action spoofed_source() {
        spoofed = 1;
        spoofed_source_drops.count(ig_intr_md.ingress_port);
    }

    action unbound() {
        spoofed = 0;
    }

    table source_bindings {
        key = {
            ig_intr_md.ingress_port : exact;
            hdr.ipv4.src_addr       : lpm;
        }
        actions = { bound; spoofed_source; unbound; }
        default_action = unbound();
        size = SOURCE_BINDING_ENTRIES;
    }

    /* Every path writes the flag in an action (no initialising assignment
     * in apply), so it costs no stage of its own (tna/README.md, "Stages"). */
    apply {
        if (hdr.ipv4.isValid() && !hdr.feedback.isValid()) {
            source_bindings.apply();
        } else {
            unbound();
        }
    }
}

#endif
