# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""scapy view of tofino-cc's feedback header (tna/include/headers.p4, feedback_h).

Hosts, vectors, the demo and the evaluation all build and read feedback
packets through this one layer.
"""

from __future__ import annotations

from scapy.fields import BitField, ByteField, IntField, ShortField
from scapy.layers.inet import UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

from models.switch.headers import (
    ETHERTYPE_TOFCC_FEEDBACK,
    FEEDBACK_VERSION,
    UDP_PORT_TOFCC_FEEDBACK,
)


class TofccFeedback(Packet):
    name = "TofccFeedback"
    fields_desc = [  # noqa: RUF012 - scapy's declared layout
        BitField("version", FEEDBACK_VERSION, 4),
        BitField("msg_type", 0, 4),
        ShortField("class_id", 0),
        ByteField("queue_id", 0),
        ByteField("degree", 0),
        ByteField("flow_protocol", 0),
        ShortField("flow_src_port", 0),
        IntField("rate", 0),
        IntField("target_rate", 0),
    ]


bind_layers(UDP, TofccFeedback, dport=UDP_PORT_TOFCC_FEEDBACK)
bind_layers(Ether, TofccFeedback, type=ETHERTYPE_TOFCC_FEEDBACK)
