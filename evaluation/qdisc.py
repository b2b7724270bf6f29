# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""ns-3's own AQMs (RED, PIE, CoDel, FqCoDel queue discs, as ns-3 ships
them) as the egress queue of a switch port: the reference implementations
our P4 AQMs are compared with, on the same links, senders and buffers.

A scheme of kind `red`, `pie`, `codel` or `fqcodel` routes by destination
(the baselines' RoutedPipeline) and gives every switch port an
`Ns3QdiscTm` in place of the traffic manager model. The queue disc holds
the IPv4 packet of each frame as an `Ipv4QueueDiscItem` (so RED's, PIE's and
CoDel's ECN marks set CE in its header, checksum updated); the Ethernet
header is put back on the way out from the addresses (the host owning each
IP), which is what the routed baselines' frames carry. Only IPv4 frames go
in (the routed baselines carry nothing else).

Its size limit is the scenario's per-port buffer, in packets (RED's MinTh
and MaxTh are in the unit of the limit: in bytes they would be 5 and 15
bytes).
ns-3's parameters otherwise (RED: MinTh 5, MaxTh 15 packets, with the
port's LinkBandwidth and LinkDelay; PIE: 15 ms reference delay; CoDel and
FqCoDel: 5 ms target, 100 ms interval; FqCoDel's quantum, which ns-3
reads from the device's MTU, 1500 bytes), ECN on (`UseEcn`) when the scheme
says so (default). Drops: the reasons ns-3 gives are sorted into passive
(the queue was full: "Dropped by internal queue", PIE's "Forced drop",
CoDel's and FqCoDel's "Overlimit drop"), counted as the port's tail drops,
and active (every other: RED's early and forced drops, PIE's unforced
drops, CoDel's target-exceeded drops after dequeue), counted as the
scheme's own drops, as seed 002 counts them.
"""

from __future__ import annotations

import builtins
from functools import cache
from typing import Any

from .network import Stats
from .tm import Dequeued

KINDS = ("red", "pie", "codel", "fqcodel")
TYPE_IDS = {
    "red": "ns3::RedQueueDisc",
    "pie": "ns3::PieQueueDisc",
    "codel": "ns3::CoDelQueueDisc",
    "fqcodel": "ns3::FqCoDelQueueDisc",
}
PASSIVE_REASONS = ("Dropped by internal queue", "Overlimit drop")
# PIE's "Forced drop" is its queue limit; RED's is its average above MaxTh.
PASSIVE_BY_KIND = {"pie": ("Forced drop",)}
ETH_HEADER_BYTES = 14

_GLUE = r"""
#include <string>
namespace tofcc_qdisc {
using namespace ns3;

struct Port {
  Ptr<QueueDisc> qd;
  // Drops since the caller last looked: 1 passive, 2 active.
  int last_drop = 0;
  uint64_t passive = 0, active = 0;
  std::vector<std::string> passive_reasons;
  std::string out;
  int64_t out_sojourn_ns = 0;

  void Dropped(const char* reason) {
    std::string r(reason);
    bool passive_drop = false;
    for (const auto& p : passive_reasons) {
      if (r.find(p) != std::string::npos) passive_drop = true;
    }
    if (passive_drop) { ++passive; last_drop = 1; } else { ++active; last_drop = 2; }
  }

  // 0 queued, 1 refused (full), 2 dropped by the AQM.
  int Enqueue(const std::string& ip) {
    Ptr<Packet> p = Create<Packet>(reinterpret_cast<const uint8_t*>(ip.data()), ip.size());
    Ipv4Header h;
    h.EnableChecksum();
    p->RemoveHeader(h);
    last_drop = 0;
    qd->Enqueue(Create<Ipv4QueueDiscItem>(p, Address(), 0x0800, h));
    return last_drop;
  }

  // True and `out` set: the next packet to send (drops on the way counted).
  bool Dequeue() {
    Ptr<QueueDiscItem> item = qd->Dequeue();
    if (!item) return false;
    out_sojourn_ns = (Simulator::Now() - item->GetTimeStamp()).GetNanoSeconds();
    item->AddHeader();
    Ptr<Packet> p = item->GetPacket();
    out.assign(p->GetSize(), '\0');
    p->CopyData(reinterpret_cast<uint8_t*>(&out[0]), out.size());
    return true;
  }
};

Port* NewPort(const std::string& type, uint32_t max_packets, uint64_t rate_bps, int64_t delay_ns,
              bool ecn) {
  Port* port = new Port();
  ObjectFactory f;
  f.SetTypeId(type);
  // In packets: RED's MinTh and MaxTh are in the unit of MaxSize.
  f.Set("MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, max_packets)));
  if (type == "ns3::RedQueueDisc") {
    f.Set("LinkBandwidth", DataRateValue(DataRate(rate_bps)));
    f.Set("LinkDelay", TimeValue(NanoSeconds(delay_ns)));
  }
  f.Set("UseEcn", BooleanValue(ecn));
  port->qd = f.Create<QueueDisc>();
  Ptr<FqCoDelQueueDisc> fq = DynamicCast<FqCoDelQueueDisc>(port->qd);
  // ns-3 takes FqCoDel's quantum from the device's MTU; this queue has no device.
  if (fq) fq->SetQuantum(1500);
  auto dropped = Callback<void, Ptr<const QueueDiscItem>, const char*>(
      [port](Ptr<const QueueDiscItem>, const char* r) { port->Dropped(r); });
  port->qd->TraceConnectWithoutContext("DropBeforeEnqueue", dropped);
  port->qd->TraceConnectWithoutContext("DropAfterDequeue", dropped);
  port->qd->Initialize();
  return port;
}

void FreePort(Port* port) {
  port->qd->Dispose();
  delete port;
}
}
"""


@cache
def glue() -> Any:
    from . import ns3_env

    ns3_env.ns3()
    import cppyy  # type: ignore[import-not-found]

    cppyy.cppdef(_GLUE)
    return cppyy.gbl.tofcc_qdisc


class Ns3QdiscTm:
    """The EgressTm interface (evaluation/tm.py) over an ns-3 queue disc."""

    def __init__(
        self,
        kind: str,
        buffer_packets: int,
        rate_bps: int,
        delay_ns: int,
        ecn: bool,
        macs: dict[builtins.bytes, builtins.bytes],
        stats: Stats,
    ) -> None:
        g = glue()
        self.port = g.NewPort(TYPE_IDS[kind], buffer_packets, rate_bps, delay_ns, ecn)
        for reason in (*PASSIVE_REASONS, *PASSIVE_BY_KIND.get(kind, ())):
            self.port.passive_reasons.push_back(reason)
        self._g = g
        self.macs, self.stats = macs, stats
        self.priority: dict[int, int] = {}
        self.weight: dict[int, int] = {}
        self.not_ipv4 = 0

    @property
    def packets(self) -> int:
        return int(self.port.qd.GetNPackets())

    @property
    def bytes(self) -> int:
        return int(self.port.qd.GetNBytes())

    def enqueue(self, frame: builtins.bytes, qid: int, now_ns: int) -> bool:
        """False: refused because the queue is full (a tail drop, which the
        port counts); an AQM drop is counted here and reads as accepted."""
        if frame[12:14] != b"\x08\x00":
            self.not_ipv4 += 1
            return True
        verdict = self.port.Enqueue(frame[ETH_HEADER_BYTES:])
        if verdict == 1:
            return False
        if verdict == 2:
            self.stats.drops_active += 1
        return True

    def dequeue(self, now_ns: int) -> Dequeued | None:
        port = self.port
        ip: builtins.bytes
        before = int(port.active)
        got = port.Dequeue()
        # Drops after dequeue (CoDel) are the AQM's own.
        self.stats.drops_active += int(port.active) - before
        if not got:
            return None
        ip = builtins.bytes(port.out)
        dst = self.macs.get(ip[16:20], b"\xff" * 6)
        src = self.macs.get(ip[12:16], b"\x00" * 6)
        n = self.packets
        return Dequeued(dst + src + b"\x08\x00" + ip, 0, 0, n, int(port.out_sojourn_ns))

    def next_eligible_ns(self, now_ns: int) -> int | None:
        """No TM shaper here (the port asks when a dequeue left frames)."""
        return None

    def close(self) -> None:
        self._g.FreePort(self.port)
