// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
//
// models/switch/dadctcp.py's ingress and egress, compiled: the same tables,
// registers, counters and decisions in the same order, on the model's own
// objects (pyobj.hpp). Read it beside the Python; tests/test_native_cores.py
// holds the two to the same bytes and state on every vector and on random
// frames.
#include <algorithm>

#include "controls.hpp"

namespace tofcc_native {
namespace dadctcp {

// The binding tuple models/switch/native/__init__.py builds, in this order.
enum Slot {
  kTrustedPorts, kTrustedPortsKeys, kUntrustedDrops,
  kSourceBindings, kSourceBindingsKeys, kSpoofedDrops, kSpoofedSourceAction,
  kIpv4Lpm, kIpv4LpmKeys, kDropAction,
  kQueueSelect, kQueueSelectKeys, kSetQueueAction,
  kQueueOverride, kQueueOverrideKeys, kInjectAction,
  kQueueThreshold, kQueueThresholdKeys, kSetThresholdAction,
  kCeMarked, kNotEctDropped, kLastDepth, kLastSlope, kLastDeparture,
  kIngressResult, kEgressResult,
  kSlots
};
static_assert(static_cast<int>(kTrustedPorts) == kSharedTrustedPorts &&
                  static_cast<int>(kDropAction) == kSharedDropAction,
              "the binding starts with _shared_ingress's objects");

constexpr uint64_t kSign = 1ull << 31;
constexpr uint64_t kPorts = 512;

// ingress(ig_intr_md, data): the result, or None when the model must run it.
PyObject* Ingress(PyObject* binding, PyObject* ig, PyObject* frame) {
  static PyObject* const kPort = FieldName("ingress_port");
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  uint64_t in_port;
  const int got = AttrU64(ig, kPort, &in_port);
  if (got <= 0) return got < 0 ? nullptr : Defer();
  Parsed h;
  if (!ParseHeaders(p, len, 0, &h)) return Defer();  // the parser's drop, the model's
  // A port the counters would refuse: the model's to refuse.
  const int known = in_port < kPorts ? Sized(binding, {{kUntrustedDrops, kPorts},
                                                       {kSpoofedDrops, kPorts}})
                                     : 0;
  if (known <= 0) return known < 0 ? nullptr : Defer();
  const int guarded = HostGuards(binding, h, p, in_port, len);
  if (guarded < 0) return nullptr;
  if (guarded) return IngressDropped(B(binding, kIngressResult));
  Route route;
  if (Forward(binding, h, p, &route) < 0) return nullptr;
  if (route.drop) return IngressDropped(B(binding, kIngressResult));
  const uint8_t* ip = p + h.ipv4_off;
  uint64_t qid = 0;
  {
    uint64_t key[] = {static_cast<uint64_t>(ip[1] >> 2)};  // dscp
    if (LookupAction(binding, kQueueSelect, kQueueSelectKeys, key, kSetQueueAction,
                     {{"qid", &qid}}) < 0)
      return nullptr;
  }
  // emit(bridged, ethernet, ipv4, tcp, udp, feedback) + payload: the frame
  // behind the bridged header, its MACs and TTL rewritten.
  Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(kBridgedBytes + len)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  PutBridged(o, in_port, p);
  std::memcpy(o + kBridgedBytes, p, len);
  RouteRewrite(o + kBridgedBytes, h.ipv4_off, route);
  Ref egress_port(PyLong_FromUnsignedLongLong(route.port));
  Ref queue(PyLong_FromUnsignedLongLong(qid));
  if (!egress_port || !queue) return nullptr;
  return MakeIngressResult(B(binding, kIngressResult), Py_False, egress_port.get(), queue.get(),
                           out.get());
}

inline uint64_t ArithShiftRight(uint64_t v, int bits) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v & kU32)) >> bits) & kU32;
}
inline bool AtOrAbove(uint64_t depth, uint64_t threshold) {
  return ((static_cast<int64_t>(depth) - static_cast<int64_t>(threshold)) & kSign) == 0;
}

// egress(eg_intr_md, data): the result, or None when the model must run it.
PyObject* Egress(PyObject* binding, PyObject* md, PyObject* frame) {
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  Parsed h;
  if (len < kBridgedBytes || !ParseHeaders(p, len, kBridgedBytes, &h)) return Defer();
  static PyObject* const names[] = {FieldName("egress_port"), FieldName("egress_qid"),
                                    FieldName("deq_qdepth"), FieldName("global_tstamp_ns")};
  uint64_t port, qid, deq_qdepth, tstamp;
  uint64_t* const values[] = {&port, &qid, &deq_qdepth, &tstamp};
  for (int k = 0; k < 4; ++k) {
    const int got = AttrU64(md, names[k], values[k]);
    if (got < 0) return nullptr;
    if (got == 0) return Defer();
  }
  bool drop = false;
  int ecn = h.ipv4 ? p[h.ipv4_off + 1] & 3 : 0;
  if (h.ipv4 && !h.feedback) {
    // marking_point(): DequeueQueueHook, then queue_threshold.
    uint64_t depth = deq_qdepth;
    {
      uint64_t key[] = {port};
      if (LookupAction(binding, kQueueOverride, kQueueOverrideKeys, key, kInjectAction,
                       {{"depth_cells", &depth}}) < 0)
        return nullptr;
    }
    uint64_t key[] = {port, qid};
    Hit r(B(binding, kQueueThreshold), B(binding, kQueueThresholdKeys), key);
    if (!r.ok()) return nullptr;
    const int set = r.is(B(binding, kSetThresholdAction));
    if (set < 0) return nullptr;
    if (set) {
      static PyObject* const names[] = {FieldName("slot"), FieldName("k1_cells"),
                                        FieldName("k2_cells"), FieldName("use_slope"),
                                        FieldName("drop_not_ect")};
      uint64_t slot, k1, k2, use_slope, drop_not_ect;
      uint64_t* const values[] = {&slot, &k1, &k2, &use_slope, &drop_not_ect};
      for (int k = 0; k < 5; ++k) {
        if (!r.field(names[k], values[k])) return nullptr;
      }
      RegisterCells last_depth(B(binding, kLastDepth));
      RegisterCells last_slope(B(binding, kLastSlope));
      RegisterCells last_departure(B(binding, kLastDeparture));
      if (!last_depth.ok() || !last_slope.ok() || !last_departure.ok()) {
        if (PyErr_Occurred()) return nullptr;
        return Defer();
      }
      const Py_ssize_t i = static_cast<Py_ssize_t>(slot);
      // Anything the model's own checks would refuse goes to the model.
      if (slot >= static_cast<uint64_t>(last_depth.size()) ||
          slot >= static_cast<uint64_t>(last_slope.size()) ||
          slot >= static_cast<uint64_t>(last_departure.size()) || depth > kU32) {
        return Defer();
      }
      const int known =
          port < kPorts ? Sized(binding, {{kCeMarked, kPorts}, {kNotEctDropped, kPorts}}) : 0;
      if (known <= 0) return known < 0 ? nullptr : Defer();
      const uint64_t now_ticks = (tstamp >> 6) & kU32;
      uint64_t prev_depth, prev_slope;
      if (!last_depth.read(i, &prev_depth) || !last_depth.write(i, depth) ||
          !last_departure.write(i, now_ticks))
        return nullptr;
      const uint64_t slope = (depth - prev_depth) & kU32;
      if (!last_slope.read(i, &prev_slope) || !last_slope.write(i, slope)) return nullptr;
      const uint64_t avg = (ArithShiftRight(slope, 1) + ArithShiftRight(prev_slope, 2)) & kU32;
      const bool congested =
          AtOrAbove(depth, k2) || (use_slope == 1 && AtOrAbove(depth, k1) && !(avg & kSign));
      if (congested) {
        if (ecn != 0) {
          ecn = 3;
          if (Count(B(binding, kCeMarked), port, len) < 0) return nullptr;
        } else if (drop_not_ect == 1) {
          if (Count(B(binding, kNotEctDropped), port, len) < 0) return nullptr;
          drop = true;
        }
      }
    }
  }
  return EgressDeparsed(B(binding, kEgressResult), p, len, h, ecn, drop);
}

// Both take (binding, intrinsic metadata, data); data that is not bytes is
// the model's to run.
PyObject* IngressStep(PyObject* const* a) { return Ingress(a[0], a[1], a[2]); }
PyObject* EgressStep(PyObject* const* a) { return Egress(a[0], a[1], a[2]); }

PyObject* Functions() { return Entries<kSlots, 3, IngressStep, EgressStep>::Functions(); }

}  // namespace dadctcp
}  // namespace tofcc_native
