# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The C++ half of the TCP harness: ns-3 sockets, RTT recording and the
congestion-ops class a Python algorithm derives from, compiled by cppyy.

Both the TCP network (tcp.py) and the Python congestion controls
(tcp_cc.py) need it, so it lives apart from both.
"""

from __future__ import annotations

from functools import cache
from typing import Any

_GLUE = r"""
#include <algorithm>
#include <memory>
#include <random>
#include <vector>
namespace tofcc_tcp {
using namespace ns3;

struct Flow;

// The sender socket's RTT estimator: RFC 6298's, recording every sample
// the socket gives it.
class RecordingRtt : public RttMeanDeviation {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("tofcc::RecordingRtt")
                            .SetParent<RttMeanDeviation>()
                            .SetGroupName("Internet")
                            .AddConstructor<RecordingRtt>();
    return tid;
  }
  TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  std::vector<int64_t>* t_ns = nullptr;
  std::vector<int64_t>* rtt_ns = nullptr;
  void Measurement(Time m) override {
    if (t_ns != nullptr) {
      t_ns->push_back(Simulator::Now().GetNanoSeconds());
      rtt_ns->push_back(m.GetNanoSeconds());
    }
    RttMeanDeviation::Measurement(m);
  }
};

// What a Python congestion control derives from (evaluation/tcp_cc.py).
// cppyy 3.5 (CPyCppyy 1.13) cannot make a Python override of a virtual
// returning uint32_t: its dispatcher code says `return unsigned int{};`,
// which does not compile (root-project/root#15315, fixed in CPyCppyy after
// 1.13). GetSsThresh is therefore final here and asks SsThreshBytes, which
// returns int64_t. Fork is final too: a Python algorithm runs on sender
// sockets only (a listening socket forks, and its receiver keeps ns-3's).
class PyCongestionOps : public TcpCongestionOps {
 public:
  // Whether the ACK being processed echoed ECN (ECE), set by the flow's Rx
  // trace before ns-3 hands the ACK to the algorithm: exact per ACK
  // whatever the socket's ECN mode makes of its own state.
  bool last_ece = false;
  // Set (models/speedups.py on): ns-3's per-ACK calls reach Python as
  // numbers (Acked, Increase) instead of as the socket state and the RTT,
  // whose every field read from Python crosses into C++ (issue 48: ~12 us
  // an ACK). Acked returns the new window, or -(window + 1) when the
  // slow-start threshold changed too, which it then leaves in
  // out_ssthresh: a window and a threshold need more than one int64_t.
  bool numbers = false;
  int64_t out_ssthresh = 0;
  std::string GetName() const override { return "PyCongestionOps"; }
  // TracedValue::Set calls the trace only for a changed value, so setting
  // an unchanged window is the no-op not setting it was.
  void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segments_acked, const Time& rtt) override {
    if (!numbers) return TcpCongestionOps::PktsAcked(tcb, segments_acked, rtt);
    int64_t got = Acked(tcb->m_cWnd.Get(), tcb->m_ssThresh.Get(), tcb->m_segmentSize,
                        segments_acked, rtt.GetNanoSeconds(), last_ece);
    tcb->m_cWnd.Set(static_cast<uint32_t>(got < 0 ? -(got + 1) : got));
    if (got < 0) tcb->m_ssThresh.Set(static_cast<uint32_t>(out_ssthresh));
  }
  void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segments_acked) override {
    if (!numbers) return TcpCongestionOps::IncreaseWindow(tcb, segments_acked);
    tcb->m_cWnd.Set(static_cast<uint32_t>(
        Increase(tcb->m_cWnd.Get(), tcb->m_ssThresh.Get(), tcb->m_segmentSize, segments_acked)));
  }
  virtual int64_t Acked(int64_t cwnd, int64_t ssthresh, int64_t segment, int64_t segments_acked,
                        int64_t rtt_ns, bool ece) {
    return cwnd;
  }
  virtual int64_t Increase(int64_t cwnd, int64_t ssthresh, int64_t segment,
                           int64_t segments_acked) {
    return cwnd;
  }
  uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytes_in_flight) final {
    return static_cast<uint32_t>(SsThreshBytes(tcb, bytes_in_flight));
  }
  virtual int64_t SsThreshBytes(Ptr<const TcpSocketState> tcb, uint32_t bytes_in_flight) = 0;
  Ptr<TcpCongestionOps> Fork() final {
    NS_FATAL_ERROR("a Python congestion control runs on a sender socket only");
    return nullptr;
  }
};

struct Flow {
  // Set by Python before the run.
  Ptr<Node> src, dst;
  uint32_t dst_ip = 0;
  uint16_t port = 0;
  TypeId cc;
  // Set: the sender's congestion control instead of `cc` (a Python one,
  // evaluation/tcp_cc.py); the receiver keeps `cc`.
  Ptr<TcpCongestionOps> cc_ops;
  bool ecn = false;
  // DCTCP sending ECT(1) (ns-3's TcpDctcp with UseEct0 false): an L4S sender.
  bool ect1 = false;
  uint32_t segment_bytes = 536;
  uint64_t size_bytes = 0;  // 0: no fixed size
  int64_t start_ns = 0, stop_ns = 0;
  uint8_t tos = 0;
  uint32_t buffer_bytes = 131072;
  int64_t min_rto_ns = 1000000000;
  int64_t delack_ns = 200000000;
  uint32_t delack_segments = 2;
  // ON/OFF (ns-3's OnOffApplication): rate_bps > 0.
  double rate_bps = 0;
  int64_t on_ns = 1000000000, off_ns = 1000000000;
  bool exponential = false;
  std::mt19937_64 rng;
  bool on = false;
  EventId next_chunk;
  uint64_t app_dropped_bytes = 0;
  // The run.
  Ptr<Socket> tx, listen;
  std::vector<Ptr<Socket>> rx;
  uint64_t handed = 0;
  bool closed = false;
  uint64_t rx_bytes = 0;
  int64_t first_rx_ns = -1, last_rx_ns = -1, completed_ns = -1;
  uint64_t segments_sent = 0, bytes_sent = 0, retransmissions = 0;
  uint64_t segments_received = 0, ece_acks = 0;
  std::vector<int64_t> rx_t_ns;
  std::vector<uint32_t> rx_n_bytes;
  std::vector<int64_t> rtt_t_ns, rtt_ns;
  std::vector<int64_t> cwnd_t_ns;
  std::vector<uint32_t> cwnd_bytes;

  void Configure(Ptr<Socket> s) {
    s->SetAttribute("SegmentSize", UintegerValue(segment_bytes));
    s->SetAttribute("SndBufSize", UintegerValue(buffer_bytes));
    s->SetAttribute("RcvBufSize", UintegerValue(buffer_bytes));
    s->SetAttribute("Timestamp", BooleanValue(false));
    s->SetAttribute("MinRto", TimeValue(NanoSeconds(min_rto_ns)));
    s->SetAttribute("DelAckTimeout", TimeValue(NanoSeconds(delack_ns)));
    s->SetAttribute("DelAckCount", UintegerValue(delack_segments));
    if (ecn) DynamicCast<TcpSocketBase>(s)->SetUseEcn(TcpSocketState::On);
    s->SetIpTos(tos);
  }

  void Listen() {
    listen = dst->GetObject<TcpL4Protocol>()->CreateSocket(cc);
    Configure(listen);
    listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    listen->Listen();
    listen->SetAcceptCallback(
        Callback<bool, Ptr<Socket>, const Address&>(
            [](Ptr<Socket>, const Address&) { return true; }),
        Callback<void, Ptr<Socket>, const Address&>(
            [this](Ptr<Socket> s, const Address&) { Accepted(s); }));
  }

  void Accepted(Ptr<Socket> s) {
    rx.push_back(s);
    s->TraceConnectWithoutContext(
        "Rx", Callback<void, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>>(
                  [this](Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>) {
                    if (p->GetSize() > 0) ++segments_received;
                  }));
    s->SetRecvCallback(Callback<void, Ptr<Socket>>([this](Ptr<Socket> s) { Read(s); }));
  }

  void Read(Ptr<Socket> s) {
    Ptr<Packet> p;
    while ((p = s->Recv()) && p->GetSize() > 0) {
      int64_t now = Simulator::Now().GetNanoSeconds();
      uint32_t n = p->GetSize();
      rx_bytes += n;
      rx_t_ns.push_back(now);
      rx_n_bytes.push_back(n);
      if (first_rx_ns < 0) first_rx_ns = now;
      last_rx_ns = now;
      if (size_bytes > 0 && completed_ns < 0 && rx_bytes >= size_bytes) completed_ns = now;
    }
  }

  void Start() {
    tx = src->GetObject<TcpL4Protocol>()->CreateSocket(cc);
    if (cc_ops) DynamicCast<TcpSocketBase>(tx)->SetCongestionControlAlgorithm(cc_ops);
    if (ect1) {
      DynamicCast<TcpSocketBase>(tx)->SetCongestionControlAlgorithm(
          CreateObjectWithAttributes<TcpDctcp>("UseEct0", BooleanValue(false)));
    }
    Configure(tx);
    Ptr<RecordingRtt> rtt = CreateObject<RecordingRtt>();
    rtt->t_ns = &rtt_t_ns;
    rtt->rtt_ns = &rtt_ns;
    DynamicCast<TcpSocketBase>(tx)->SetRtt(rtt);
    tx->TraceConnectWithoutContext(
        "CongestionWindow", Callback<void, uint32_t, uint32_t>([this](uint32_t, uint32_t w) {
          cwnd_t_ns.push_back(Simulator::Now().GetNanoSeconds());
          cwnd_bytes.push_back(w);
        }));
    tx->TraceConnectWithoutContext(
        "Tx", Callback<void, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>>(
                  [this](Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>) {
                    if (p->GetSize() > 0) {
                      ++segments_sent;
                      bytes_sent += p->GetSize();
                    }
                  }));
    tx->TraceConnectWithoutContext(
        "Retransmission",
        Callback<void, Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                 Ptr<const TcpSocketBase>>(
            [this](Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                   Ptr<const TcpSocketBase>) { ++retransmissions; }));
    tx->TraceConnectWithoutContext(
        "Rx", Callback<void, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>>(
                  [this](Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>) {
                    uint8_t flags = h.GetFlags();
                    bool ece = (flags & TcpHeader::ECE) && !(flags & TcpHeader::SYN);
                    if (ece) ++ece_acks;
                    if (cc_ops) DynamicCast<PyCongestionOps>(cc_ops)->last_ece = ece;
                  }));
    tx->Bind();
    tx->Connect(InetSocketAddress(Ipv4Address(dst_ip), port));
    if (rate_bps > 0) {
      tx->SetConnectCallback(
          Callback<void, Ptr<Socket>>([this](Ptr<Socket>) { GoOn(); }),
          Callback<void, Ptr<Socket>>([](Ptr<Socket>) {}));
      return;
    }
    tx->SetConnectCallback(
        Callback<void, Ptr<Socket>>([this](Ptr<Socket>) { Fill(); }),
        Callback<void, Ptr<Socket>>([](Ptr<Socket>) {}));
    tx->SetSendCallback(Callback<void, Ptr<Socket>, uint32_t>(
        [this](Ptr<Socket>, uint32_t) { Fill(); }));
  }

  int64_t Period(int64_t mean_ns) {
    if (!exponential) return mean_ns;
    std::exponential_distribution<double> d(1.0 / static_cast<double>(mean_ns));
    return std::max<int64_t>(1, static_cast<int64_t>(d(rng)));
  }

  // OnOffApplication: ON for a period, one segment per segment time at
  // the rate; a segment the socket cannot take is the application's loss
  // (as ns-3's OnOff drops it), counted.
  void GoOn() {
    if (closed || Simulator::Now().GetNanoSeconds() >= stop_ns) return;
    on = true;
    SendChunk();
    Simulator::Schedule(NanoSeconds(Period(on_ns)), [this]() { GoOff(); });
  }

  void GoOff() {
    on = false;
    Simulator::Cancel(next_chunk);
    if (closed) return;
    Simulator::Schedule(NanoSeconds(Period(off_ns)), [this]() { GoOn(); });
  }

  void SendChunk() {
    if (!on || closed || Simulator::Now().GetNanoSeconds() >= stop_ns) return;
    uint64_t n = segment_bytes;
    if (size_bytes > 0) n = std::min<uint64_t>(n, size_bytes - handed);
    if (tx->GetTxAvailable() >= n) {
      int sent = tx->Send(Create<Packet>(static_cast<uint32_t>(n)));
      if (sent > 0) handed += sent;
    } else {
      app_dropped_bytes += n;
    }
    if (size_bytes > 0 && handed >= size_bytes) {
      closed = true;
      tx->Close();
      return;
    }
    int64_t gap = static_cast<int64_t>(static_cast<double>(n) * 8e9 / rate_bps);
    next_chunk = Simulator::Schedule(NanoSeconds(std::max<int64_t>(gap, 1)),
                                     [this]() { SendChunk(); });
  }

  // BulkSendApplication's SendData: keep the send buffer full.
  void Fill() {
    if (closed) return;
    while (size_bytes == 0 || handed < size_bytes) {
      if (Simulator::Now().GetNanoSeconds() >= stop_ns) return;
      uint64_t chunk = tx->GetTxAvailable();
      if (chunk == 0) return;
      if (size_bytes > 0) chunk = std::min<uint64_t>(chunk, size_bytes - handed);
      chunk = std::min<uint64_t>(chunk, 65536);
      int sent = tx->Send(Create<Packet>(static_cast<uint32_t>(chunk)));
      if (sent <= 0) return;
      handed += sent;
    }
    closed = true;
    tx->Close();
  }

  void Stop() {
    if (!closed && tx) {
      closed = true;
      tx->Close();
    }
  }
};

static std::vector<std::unique_ptr<Flow>> g_flows;

Flow* NewFlow() {
  g_flows.push_back(std::make_unique<Flow>());
  return g_flows.back().get();
}

// Receivers listen from t = 0; senders start at their start time.
void Schedule(Flow* f) {
  f->Listen();
  Simulator::Schedule(NanoSeconds(f->start_ns), [f]() { f->Start(); });
  Simulator::Schedule(NanoSeconds(f->stop_ns), [f]() { f->Stop(); });
}

void Clear() { g_flows.clear(); }

void UseCongestionOps(Flow* f, TcpCongestionOps* ops) { f->cc_ops = Ptr<TcpCongestionOps>(ops); }

// An IPv4 interface on the host's device, and every other address behind it.
void AddressHost(Ptr<Node> node, Ptr<NetDevice> dev, uint32_t ip) {
  Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
  int32_t i = ipv4->AddInterface(dev);
  ipv4->AddAddress(i, Ipv4InterfaceAddress(Ipv4Address(ip), Ipv4Mask("255.255.255.0")));
  ipv4->SetMetric(i, 1);
  ipv4->SetUp(i);
  Ipv4StaticRoutingHelper helper;
  helper.GetStaticRouting(ipv4)->AddNetworkRouteTo(
      Ipv4Address("0.0.0.0"), Ipv4Mask("0.0.0.0"), i);
}

TypeId Lookup(const std::string& name) { return TypeId::LookupByName(name); }

void EnableChecksums() { GlobalValue::Bind("ChecksumEnabled", BooleanValue(true)); }
}
"""


@cache
def glue() -> Any:
    """The TCP glue above, compiled once per process (after ns-3 is loaded)."""
    from . import ns3_env

    ns3_env.ns3()
    import cppyy  # type: ignore[import-not-found]

    cppyy.cppdef(_GLUE)
    return cppyy.gbl.tofcc_tcp
