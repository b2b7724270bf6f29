// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
//
// models/switch/bfcc.py's ingress and egress, compiled: data packets,
// fakes and originals, backpressure messages and the copies that become
// them; the same tables, registers, counters and decisions in the same
// order, on the model's own objects (pyobj.hpp). A message's copy to another
// pipe (bp_replicate's replica, in egress) is rare and goes to the model.
// Read it beside the Python; tests/test_native_cores.py holds the two to
// the same bytes and state.
#include <algorithm>

#include "controls.hpp"

namespace tofcc_native {
namespace bfcc {

// The binding tuple bindings.bfcc builds, in this order (kEgressMirror is
// also the ingress mirror's class).
enum Slot {
  kTrustedPorts, kTrustedPortsKeys, kUntrustedDrops,
  kSourceBindings, kSourceBindingsKeys, kSpoofedDrops, kSpoofedSourceAction,
  kIpv4Lpm, kIpv4LpmKeys, kDropAction,
  kFakeDrops, kAdmittedByQid, kBpState, kBpRecordedNs,
  kSenderGroup, kSenderGroupKeys, kSetGroup,
  kReactionPoint, kReactionPointKeys, kReact,
  kBackpressureReceived, kBpReplicate, kBpReplicateKeys, kReplicate, kRelayReplica,
  kSenderNotify, kSenderNotifyKeys, kNotifySenders,
  kIngressResult,
  kQueueOverride, kQueueOverrideKeys, kQueueInject,
  kRecircOverride, kRecircOverrideKeys, kRecircInject,
  kFlaggedDepartures, kFakesSent, kRecirculationSkips, kRrCount,
  kRateThreshold, kRateThresholdKeys, kSetRateThreshold,
  kRecirculation, kRecirculationKeys, kRecirculate, kRecirculationDepth,
  kOccupancyWindow, kVqOccupancy, kCongestedVq, kBpLastSent,
  kCongestionPoint, kCongestionPointKeys, kMonitor,
  kBpUpstream, kBpUpstreamKeys, kToUpstream,
  kEgressResult, kEgressMirror,
  kSlots
};
static_assert(static_cast<int>(kTrustedPorts) == kSharedTrustedPorts &&
                  static_cast<int>(kDropAction) == kSharedDropAction,
              "the binding starts with _shared_ingress's objects");

constexpr uint16_t kEthertypeFake = 0x88B5;
constexpr uint8_t kPktTypeMirrorBackpressure = 3;
constexpr uint8_t kPktTypeMirrorRecirculate = 4;
constexpr uint8_t kPktTypeMirrorBpReplica = 6;
constexpr uint64_t kMsgBackpressure = 2, kMsgClear = 3;
constexpr uint64_t kWindowClosed = 0xFF, kKeyFirstCount = 0xFE, kKeyOneCount = 0x100;
constexpr int kEpochLowBit = 19, kEpochBits = 6;
constexpr uint64_t kPorts = 512, kQids = 128, kCps = 16, kVqSlots = 4096;
constexpr size_t kBfccBridgedBytes = 1;

// message(): a backpressure or clear message from a trusted port, recorded
// for the port it concerns, copied on to the next pipe, and consumed or
// relayed to the named group's senders.
PyObject* Message(PyObject* binding, const uint8_t* p, size_t len, uint64_t in_port,
                  uint64_t now_ns, const Parsed& h) {
  const uint8_t* fb = p + h.end - kFeedbackBytes;
  const uint64_t msg_type = fb[0] & 0x0F, class_id = Be16(fb + 1), degree = fb[4];
  const uint64_t flow_protocol = fb[5], flow_src_port = Be16(fb + 6);
  bool replicate = false, replica = false, mirror = false;
  uint64_t session = 0, left = 0, bp_port = in_port;
  {
    uint64_t key[] = {in_port};
    Hit r(B(binding, kBpReplicate), B(binding, kBpReplicateKeys), key);
    if (!r.ok()) return nullptr;
    const int rep = r.is(B(binding, kReplicate)), relay = r.is(B(binding, kRelayReplica));
    if (rep < 0 || relay < 0) return nullptr;
    if (rep) {
      replicate = true;
      if (Field(r, "session", &session) < 0 || Field(r, "pipes_left", &left) < 0) return nullptr;
    } else if (relay) {
      replica = true;
      if (Field(r, "session", &session) < 0) return nullptr;
      left = (flow_protocol - 1) & 0xFF;
      bp_port = flow_src_port;
    }
  }
  bool relay = false;
  uint64_t relay_port = 0, src_mac = 0, dst_mac = 0;
  if (replica) {
    mirror = flow_protocol != 0;  // consume()
  } else {
    uint64_t key[] = {msg_type, class_id};
    Hit n(B(binding, kSenderNotify), B(binding, kSenderNotifyKeys), key);
    if (!n.ok()) return nullptr;
    const int notify = n.is(B(binding, kNotifySenders));
    if (notify < 0) return nullptr;
    if (notify) {
      relay = true;
      if (Field(n, "port", &relay_port) < 0 || Field(n, "src_mac", &src_mac) < 0 ||
          Field(n, "dst_mac", &dst_mac) < 0)
        return nullptr;
    }
    mirror = replicate;
  }
  const Py_ssize_t index = static_cast<Py_ssize_t>(bp_port & 0x1FF);
  if (msg_type == kMsgBackpressure || msg_type == kMsgClear) {
    RegisterCells state(B(binding, kBpState)), recorded(B(binding, kBpRecordedNs));
    const uint64_t bp_key = msg_type == kMsgBackpressure ? (class_id & 0xFF) << 8 | degree : 0;
    if (!state.write(index, bp_key)) return nullptr;
    if (msg_type == kMsgBackpressure && !recorded.write(index, now_ns)) return nullptr;
    if (!replica && Count(B(binding, kBackpressureReceived), in_port, len) < 0) return nullptr;
  }
  // SwitchIngressDeparser: the copy is the message as it arrived.
  Ref made(Defer());
  if (mirror) {
    const uint8_t m[4] = {kPktTypeMirrorBpReplica, static_cast<uint8_t>(bp_port >> 8),
                          static_cast<uint8_t>(bp_port), static_cast<uint8_t>(left)};
    Ref header(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(m), sizeof m));
    Ref sid(PyLong_FromUnsignedLongLong(session));
    if (!header || !sid) return nullptr;
    PyObject* args[] = {sid.get(), header.get()};
    made.reset(PyObject_Vectorcall(B(binding, kEgressMirror), args, 2, nullptr));
    if (!made) return nullptr;
  }
  if (!relay) {
    return IngressDropped(B(binding, kIngressResult), made.get());
  }
  const size_t head = kBridgedBytes + kBfccBridgedBytes;
  Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(head + len)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  PutBridged(o, in_port, p);
  o[kBridgedBytes] = 0;
  std::memcpy(o + head, p, len);
  Put48(o + head, dst_mac);
  Put48(o + head + 6, src_mac);
  Ref port(PyLong_FromUnsignedLongLong(relay_port));
  if (!port) return nullptr;
  return MakeIngressResult(B(binding, kIngressResult), Py_False, port.get(), Zero(), out.get(),
                           made.get());
}

PyObject* Ingress(PyObject* binding, PyObject* ig, PyObject* frame) {
  static PyObject* const kTstamp = FieldName("global_tstamp_ns");
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  uint64_t in_port, tstamp;
  const int args = IngressArgs(ig, kTstamp, &in_port, &tstamp);
  if (args <= 0) return args < 0 ? nullptr : Defer();
  Parsed h;
  if (!ParseHeaders(p, len, 0, &h) || in_port >= kPorts) return Defer();
  const int sized = Sized(binding,
                          {{kUntrustedDrops, kPorts}, {kSpoofedDrops, kPorts},
                           {kFakeDrops, kPorts}, {kAdmittedByQid, kQids},
                           {kBackpressureReceived, kPorts}},
                          {{kBpState, kPorts}, {kBpRecordedNs, kPorts}});
  if (sized <= 0) return sized < 0 ? nullptr : Defer();
  const uint64_t now_ns = tstamp & kU32;
  const uint16_t ether_type = Be16(p + 12);
  const int guarded = HostGuards(binding, h, p, in_port, len);
  if (guarded < 0) return nullptr;
  if (guarded) return IngressDropped(B(binding, kIngressResult));
  if (ether_type == kEthertypeFake) {
    if (Count(B(binding, kFakeDrops), in_port, len) < 0)
      return nullptr;
    return IngressDropped(B(binding, kIngressResult));
  }
  if (h.feedback && !h.ipv4) return Message(binding, p, len, in_port, now_ns, h);

  Route route;
  if (Forward(binding, h, p, &route) < 0) return nullptr;
  uint64_t class_id = 0, qid = 0, bp_degree = 0;
  if (h.ipv4 && !h.feedback && !route.drop) {
    {
      uint64_t key[] = {Be32(p + h.ipv4_off + 12)};
      Hit g(B(binding, kSenderGroup), B(binding, kSenderGroupKeys), key);
      if (!g.ok()) return nullptr;
      const int set = g.is(B(binding, kSetGroup));
      if (set < 0) return nullptr;
      if (set && Field(g, "group", &class_id) < 0) return nullptr;
    }
    uint64_t key[] = {route.port};
    Hit r(B(binding, kReactionPoint), B(binding, kReactionPointKeys), key);
    int hit = 0;
    if (!r.ok() || !r.hit(&hit)) return nullptr;
    const int react = hit ? r.is(B(binding, kReact)) : 0;
    if (react < 0) return nullptr;
    if (react) {
      uint64_t high_qid, low_qid, expiry, named_only;
      if (Field(r, "high_qid", &high_qid) < 0 || Field(r, "low_qid", &low_qid) < 0 ||
          Field(r, "bp_expiry_ns", &expiry) < 0 || Field(r, "named_group_only", &named_only) < 0)
        return nullptr;
      const uint64_t alive_max = (expiry - 1) & kU32;
      RegisterCells state(B(binding, kBpState)), recorded(B(binding, kBpRecordedNs));
      const Py_ssize_t i = static_cast<Py_ssize_t>(route.port);
      uint64_t at, key_value;
      if (!recorded.read(i, &at)) return nullptr;
      const uint64_t age = (now_ns - at) & kU32;
      if (age > alive_max) {  // bp_state_expire
        if (!state.write(i, 0)) return nullptr;
        key_value = 0;
      } else if (!state.read(i, &key_value)) {
        return nullptr;
      }
      const uint64_t degree = key_value & 0xFF, named = key_value >> 8;
      if (degree != 0 && named != 0) {
        if (named == (class_id & 0xFF)) {
          qid = low_qid;
          bp_degree = degree;
        } else if (named_only == 0) {
          qid = high_qid;
          bp_degree = degree;
        } else {
          qid = high_qid;
        }
      } else {
        qid = high_qid;
      }
      if (qid >= kQids) {
        PyErr_SetString(PyExc_RuntimeError, "reaction_point: qid beyond admitted_by_qid");
        return nullptr;
      }
      if (Count(B(binding, kAdmittedByQid), qid, len) < 0)
        return nullptr;
    }
  }
  if (route.drop) return IngressDropped(B(binding, kIngressResult));
  // ingress_deparse: bridged, bfcc_bridged, then the frame as routed.
  const size_t head = kBridgedBytes + kBfccBridgedBytes;
  Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(head + len)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  PutBridged(o, in_port, p);
  Put16(o + 1, class_id & 0xFFFF);
  o[kBridgedBytes] = static_cast<uint8_t>(bp_degree);
  std::memcpy(o + head, p, len);
  RouteRewrite(o + head, h.ipv4_off, route);
  Ref port(PyLong_FromUnsignedLongLong(route.port));
  Ref queue(PyLong_FromUnsignedLongLong(qid));
  if (!port || !queue) return nullptr;
  return MakeIngressResult(B(binding, kIngressResult), Py_False, port.get(), queue.get(),
                           out.get());
}

// Pair registers ({first, second}: first in the high 32 bits).
inline uint64_t Hi(uint64_t v) { return v >> 32; }
inline uint64_t Lo(uint64_t v) { return v & kU32; }
inline uint64_t Pair(uint64_t hi, uint64_t lo) { return (hi & kU32) << 32 | (lo & kU32); }

struct Mirror {
  int type = 0;  // 0 none, 3 backpressure, 4 recirculate
  uint64_t session = 0, msg_type = 0, group = 0, degree = 0, src_mac = 0, dst_mac = 0;
};

// The queue a hook reports: its override's, else the chip's.
inline int QueueOf(PyObject* binding, Slot table, Slot keys, Slot inject, uint64_t port,
                   uint64_t* depth, uint64_t* sojourn) {
  uint64_t key[] = {port};
  Hit r(B(binding, table), B(binding, keys), key);
  if (!r.ok()) return -1;
  const int injected = r.is(B(binding, inject));
  if (injected < 0) return -1;
  if (injected && (Field(r, "depth_cells", depth) < 0 || Field(r, "sojourn_ns", sojourn) < 0))
    return -1;
  return 0;
}

PyObject* Egress(PyObject* binding, PyObject* md, PyObject* frame) {
  static PyObject* const names[] = {FieldName("egress_port"), FieldName("enq_qdepth"),
                                    FieldName("deq_timedelta"), FieldName("deq_qdepth"),
                                    FieldName("global_tstamp_ns")};
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  if (len == 0 || p[0] == kPktTypeMirrorBpReplica) return Defer();
  uint64_t port, enq_qdepth, deq_timedelta, deq_qdepth, tstamp;
  uint64_t* const values[] = {&port, &enq_qdepth, &deq_timedelta, &deq_qdepth, &tstamp};
  for (int k = 0; k < 5; ++k) {
    const int got = AttrU64(md, names[k], values[k]);
    if (got < 0) return nullptr;
    if (got == 0) return Defer();
  }
  if (port >= kPorts) return Defer();
  const int sized = Sized(binding,
                          {{kFlaggedDepartures, kPorts}, {kFakesSent, kPorts},
                           {kRecirculationSkips, kPorts}},
                          {{kRrCount, kPorts}, {kRecirculationDepth, 1}, {kOccupancyWindow, kCps},
                           {kVqOccupancy, kVqSlots}, {kCongestedVq, kCps}, {kBpLastSent, kCps}});
  if (sized <= 0) return sized < 0 ? nullptr : Defer();
  Mirror mirror;
  Ref out;
  if (p[0] == kPktTypeMirrorBackpressure) {
    // build_backpressure(): the copy becomes the message to the upstream.
    const size_t head = 16;
    if (len < head + kEthernetBytes) return Defer();
    out.reset(PyBytes_FromStringAndSize(
        nullptr, static_cast<Py_ssize_t>(len - head + kFeedbackBytes)));
    if (!out) return nullptr;
    auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
    std::memcpy(o, p + 10, 6);  // dst_mac
    std::memcpy(o + 6, p + 4, 6);  // src_mac
    Put16(o + 12, kEthertypeFeedback);
    uint8_t* fb = o + kEthernetBytes;
    std::memset(fb, 0, kFeedbackBytes);
    fb[0] = static_cast<uint8_t>(2 << 4 | (p[1] & 0x0F));  // version 2, msg_type
    fb[2] = p[2];  // class_id = group
    fb[4] = p[3];  // degree
    std::memcpy(fb + kFeedbackBytes, p + head + kEthernetBytes, len - head - kEthernetBytes);
    return NewRecord(B(binding, kEgressResult), {Py_False, out.get(), Py_None});
  }
  if (p[0] == kPktTypeMirrorRecirculate) {
    // An original back from the recirculation port: restore_real(), and the
    // pipe's recirculation queue recorded.
    const size_t head = 1;
    if (len < head + kEthernetBytes + kIpv4Bytes) return Defer();
    uint64_t depth = deq_qdepth, sojourn = deq_timedelta;
    if (QueueOf(binding, kRecircOverride, kRecircOverrideKeys, kRecircInject, port, &depth,
                &sojourn) < 0)
      return nullptr;
    RegisterCells level(B(binding, kRecirculationDepth));
    if (!level.write(0, depth & kU32)) return nullptr;
    out.reset(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(len - head)));
    if (!out) return nullptr;
    auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
    std::memcpy(o, p + head, len - head);
    Put16(o + 12, kEthertypeIpv4);
    uint8_t* ip = o + kEthernetBytes;
    ip[8] = static_cast<uint8_t>(ip[8] + 1);
    Put16(ip + 10, Ipv4Checksum(ip));
    return NewRecord(B(binding, kEgressResult), {Py_False, out.get(), Py_None});
  }
  const size_t head = kBridgedBytes + kBfccBridgedBytes;
  Parsed h;
  if (len < head || !ParseHeaders(p, len, head, &h)) return Defer();
  const uint64_t class_id = Be16(p + 1);
  const uint64_t bp_degree_in = p[kBridgedBytes];
  bool fake = false;
  if (h.ipv4 && !h.feedback) {
    bool make_fake = false;
    if (bp_degree_in != 0) {  // reaction_point_apply
      uint64_t k1[] = {bp_degree_in}, k2[] = {port};
      Hit r(B(binding, kRateThreshold), B(binding, kRateThresholdKeys), k1);
      Hit c(B(binding, kRecirculation), B(binding, kRecirculationKeys), k2);
      if (!r.ok() || !c.ok()) return nullptr;
      const int rt_set = r.is(B(binding, kSetRateThreshold));
      const int recirc = c.is(B(binding, kRecirculate));
      if (rt_set < 0 || recirc < 0) return nullptr;
      if (rt_set && recirc) {
        uint64_t rt, session, level_cells;
        if (Field(r, "rt_packets", &rt) < 0 || Field(c, "session", &session) < 0 ||
            Field(c, "level_cells", &level_cells) < 0)
          return nullptr;
        if (Count(B(binding, kFlaggedDepartures), port, len) < 0) return nullptr;
        RegisterCells rr(B(binding, kRrCount));
        const Py_ssize_t i = static_cast<Py_ssize_t>(port);
        uint64_t sent;
        if (!rr.read(i, &sent)) return nullptr;
        if (sent >= rt) {
          sent = 0;
          make_fake = true;
        } else {
          sent = (sent + 1) & 0xFF;
        }
        if (!rr.write(i, sent)) return nullptr;
        if (make_fake) {
          RegisterCells level(B(binding, kRecirculationDepth));
          uint64_t depth;
          if (!level.read(0, &depth)) return nullptr;
          if (depth > level_cells) {
            if (Count(B(binding, kRecirculationSkips), port, len) < 0) return nullptr;
          } else {
            fake = true;
            mirror.type = kPktTypeMirrorRecirculate;
            mirror.session = session;
            if (Count(B(binding, kFakesSent), port, len) < 0) return nullptr;
          }
        }
      }
    }
    // QueueMetadataHook, then the congestion point.
    uint64_t depth = enq_qdepth, sojourn = deq_timedelta;
    if (QueueOf(binding, kQueueOverride, kQueueOverrideKeys, kQueueInject, port, &depth,
                &sojourn) < 0)
      return nullptr;
    uint64_t key[] = {port};
    Hit cp(B(binding, kCongestionPoint), B(binding, kCongestionPointKeys), key);
    int hit = 0;
    if (!cp.ok() || !cp.hit(&hit)) return nullptr;
    const int monitored = hit ? cp.is(B(binding, kMonitor)) : 0;
    if (monitored < 0) return nullptr;
    if (monitored && !make_fake) {
      uint64_t cp_id, threshold, t_min, t_max, window_packets, refresh_mask;
      if (Field(cp, "cp_id", &cp_id) < 0 ||
          Field(cp, "congestion_threshold_cells", &threshold) < 0 ||
          Field(cp, "t_min_ns", &t_min) < 0 || Field(cp, "t_max_ns", &t_max) < 0 ||
          Field(cp, "window_packets", &window_packets) < 0 ||
          Field(cp, "refresh_mask", &refresh_mask) < 0)
        return nullptr;
      if (cp_id >= kCps) return DeferOrError();
      const Py_ssize_t c = static_cast<Py_ssize_t>(cp_id);
      const uint64_t group = class_id & 0xFF;
      const uint64_t bp_epoch = tstamp & kU32 & refresh_mask;
      const bool congested_depth = ((threshold - depth) & kU32) >> 31 & 1;
      bool report = false;
      uint64_t bp_key = 0, bp_group = 0, msg = 0, degree_out = 0;
      RegisterCells window(B(binding, kOccupancyWindow)), vq(B(binding, kVqOccupancy)),
          best(B(binding, kCongestedVq)), last_sent(B(binding, kBpLastSent));
      if (congested_depth) {
        const uint64_t degree = (((t_max - sojourn) & kU32) >> 31 & 1)   ? 3
                                : (((t_min - sojourn) & kU32) >> 31 & 1) ? 2
                                                                        : 1;
        degree_out = degree;
        msg = kMsgBackpressure;
        if (group != 0) {
          uint64_t w, v, b;
          if (!window.read(c, &w)) return nullptr;
          uint64_t id = Hi(w), packets = Lo(w);
          if (packets == 0 || packets >= window_packets) {
            packets = 1;
            id = (id + 1) & kU32;
          } else {
            packets = (packets + 1) & kU32;
          }
          if (!window.write(c, Pair(id, packets))) return nullptr;
          const Py_ssize_t vi = static_cast<Py_ssize_t>(cp_id << 8 | group);
          if (!vq.read(vi, &v)) return nullptr;
          const uint64_t vq_key =
              Hi(v) == id ? (Lo(v) - kKeyOneCount) & kU32 : (kKeyFirstCount << 8 | group);
          if (!vq.write(vi, Pair(id, vq_key))) return nullptr;
          const uint64_t epoch = (bp_epoch >> kEpochLowBit) & ((1u << kEpochBits) - 1);
          const uint64_t tag = epoch << 2 | (degree & 3);
          report = true;
          if (!best.read(c, &b)) return nullptr;
          uint64_t best_key = Lo(b);
          if (Hi(b) != id || vq_key < best_key) best_key = vq_key;
          if (!best.write(c, Pair(id, best_key))) return nullptr;
          bp_group = best_key & 0xFF;
          bp_key = bp_group << 8 | tag;
        }
      } else {  // recovered()
        msg = kMsgClear;
        report = true;
        uint64_t w, b;
        if (!window.read(c, &w) || !window.write(c, Pair(Hi(w), kWindowClosed))) return nullptr;
        if (!best.read(c, &b)) return nullptr;
        bp_group = Lo(b) & 0xFF;
        bp_key = 0;
      }
      if (report) {
        uint64_t prev;
        if (!last_sent.read(c, &prev) || !last_sent.write(c, bp_key & 0xFFFF)) return nullptr;
        if (prev != bp_key) {
          uint64_t k[] = {bp_group};
          Hit u(B(binding, kBpUpstream), B(binding, kBpUpstreamKeys), k);
          if (!u.ok()) return nullptr;
          const int to = u.is(B(binding, kToUpstream));
          if (to < 0) return nullptr;
          if (to) {
            mirror.type = kPktTypeMirrorBackpressure;
            mirror.msg_type = msg;
            mirror.group = bp_group;
            mirror.degree = degree_out;
            if (Field(u, "session_id", &mirror.session) < 0 ||
                Field(u, "src_mac", &mirror.src_mac) < 0 ||
                Field(u, "dst_mac", &mirror.dst_mac) < 0)
              return nullptr;
          }
        }
      }
    }
  }
  // SwitchEgressDeparser: the mirror header, the frame behind the bridged
  // headers (a fake's ether type), the IPv4 checksum.
  Ref header;
  if (mirror.type == kPktTypeMirrorBackpressure) {
    uint8_t m[16] = {kPktTypeMirrorBackpressure, static_cast<uint8_t>(mirror.msg_type),
                     static_cast<uint8_t>(mirror.group), static_cast<uint8_t>(mirror.degree)};
    Put48(m + 4, mirror.src_mac);
    Put48(m + 10, mirror.dst_mac);
    header.reset(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(m), sizeof m));
  } else if (mirror.type == kPktTypeMirrorRecirculate) {
    const char m[1] = {static_cast<char>(kPktTypeMirrorRecirculate)};
    header.reset(PyBytes_FromStringAndSize(m, 1));
  }
  Ref made_mirror(Defer());
  if (mirror.type != 0) {
    Ref sid(PyLong_FromUnsignedLongLong(mirror.session));
    if (!header || !sid) return nullptr;
    PyObject* args[] = {sid.get(), header.get()};
    made_mirror.reset(PyObject_Vectorcall(B(binding, kEgressMirror), args, 2, nullptr));
    if (!made_mirror) return nullptr;
  }
  out.reset(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(len - head)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  std::memcpy(o, p + head, len - head);
  if (fake) Put16(o + 12, kEthertypeFake);
  if (h.ipv4) {
    uint8_t* ip = o + (h.ipv4_off - head);
    Put16(ip + 10, Ipv4Checksum(ip));
  }
  return NewRecord(B(binding, kEgressResult), {Py_False, out.get(), made_mirror.get()});
}

PyObject* IngressStep(PyObject* const* a) { return Ingress(a[0], a[1], a[2]); }
PyObject* EgressStep(PyObject* const* a) { return Egress(a[0], a[1], a[2]); }

PyObject* Functions() { return Entries<kSlots, 3, IngressStep, EgressStep>::Functions(); }

}  // namespace bfcc
}  // namespace tofcc_native
