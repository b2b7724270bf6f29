// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
//
// models/switch/dadctcp.py's ingress and egress, compiled: the same tables,
// registers, counters and decisions in the same order, on the model's own
// objects (pyobj.hpp). Read it beside the Python; tests/test_native_cores.py
// holds the two to the same bytes and state on every vector and on random
// frames.
#include "pyobj.hpp"

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

struct Fields {
  PyObject *port, *src_mac, *dst_mac, *qid, *depth_cells, *sojourn_ns, *slot, *k1_cells,
      *k2_cells, *use_slope, *drop_not_ect, *egress_port, *egress_qid, *deq_qdepth,
      *global_tstamp_ns;
};
inline Fields& F() {
  static Fields f = {
      PyUnicode_InternFromString("port"),          PyUnicode_InternFromString("src_mac"),
      PyUnicode_InternFromString("dst_mac"),       PyUnicode_InternFromString("qid"),
      PyUnicode_InternFromString("depth_cells"),   PyUnicode_InternFromString("sojourn_ns"),
      PyUnicode_InternFromString("slot"),          PyUnicode_InternFromString("k1_cells"),
      PyUnicode_InternFromString("k2_cells"),      PyUnicode_InternFromString("use_slope"),
      PyUnicode_InternFromString("drop_not_ect"),  PyUnicode_InternFromString("egress_port"),
      PyUnicode_InternFromString("egress_qid"),    PyUnicode_InternFromString("deq_qdepth"),
      PyUnicode_InternFromString("global_tstamp_ns"),
  };
  return f;
}

constexpr uint64_t kSign = 1ull << 31;

inline PyObject* B(PyObject* binding, Slot s) { return PyTuple_GET_ITEM(binding, s); }

inline PyObject* IngressDrop(PyObject* binding) {
  PyObject* args[] = {Py_True};
  return PyObject_Vectorcall(B(binding, kIngressResult), args, 1, nullptr);
}

// ingress(ig_intr_md, data): the result, or None when the model must run it.
PyObject* Ingress(PyObject* binding, uint64_t in_port, PyObject* frame) {
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  Parsed h;
  if (!ParseHeaders(p, len, 0, &h)) Py_RETURN_NONE;  // the parser's drop, the model's
  if (in_port >= 512 || in_port >= static_cast<uint64_t>(CounterSize(B(binding, kUntrustedDrops))) ||
      in_port >= static_cast<uint64_t>(CounterSize(B(binding, kSpoofedDrops)))) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NONE;
  }
  // FeedbackTrust
  if (h.feedback) {
    uint64_t key[] = {in_port};
    Hit r(Lookup(B(binding, kTrustedPorts), B(binding, kTrustedPortsKeys), key));
    int hit = 0;
    if (!r.ok() || !r.hit(&hit)) return nullptr;
    if (!hit) {
      if (!CounterCount(B(binding, kUntrustedDrops), in_port, len)) return nullptr;
      return IngressDrop(binding);
    }
  }
  // SourceGuard
  if (h.ipv4 && !h.feedback) {
    uint64_t key[] = {in_port, Be32(p + h.ipv4_off + 12)};
    Hit r(Lookup(B(binding, kSourceBindings), B(binding, kSourceBindingsKeys), key));
    if (!r.ok()) return nullptr;
    const int spoofed = r.is(B(binding, kSpoofedSourceAction));
    if (spoofed < 0) return nullptr;
    if (spoofed) {
      if (!CounterCount(B(binding, kSpoofedDrops), in_port, len)) return nullptr;
      return IngressDrop(binding);
    }
  }
  // Ipv4Forward
  if (!h.ipv4) return IngressDrop(binding);
  const uint8_t* ip = p + h.ipv4_off;
  if ((ip[0] & 0x0F) != 5 || ip[8] <= 1) return IngressDrop(binding);
  uint64_t port = 0, src_mac = 0, dst_mac = 0, qid = 0;
  {
    uint64_t key[] = {Be32(ip + 16)};
    Hit r(Lookup(B(binding, kIpv4Lpm), B(binding, kIpv4LpmKeys), key));
    if (!r.ok()) return nullptr;
    const int dropped = r.is(B(binding, kDropAction));
    if (dropped < 0) return nullptr;
    if (dropped) return IngressDrop(binding);
    if (!r.field(F().src_mac, &src_mac) || !r.field(F().dst_mac, &dst_mac) ||
        !r.field(F().port, &port))
      return nullptr;
  }
  {
    uint64_t key[] = {static_cast<uint64_t>(ip[1] >> 2)};  // dscp
    Hit r(Lookup(B(binding, kQueueSelect), B(binding, kQueueSelectKeys), key));
    if (!r.ok()) return nullptr;
    const int set = r.is(B(binding, kSetQueueAction));
    if (set < 0) return nullptr;
    if (set && !r.field(F().qid, &qid)) return nullptr;
  }
  // emit(bridged, ethernet, ipv4, tcp, udp, feedback) + payload: the frame
  // behind the bridged header, its MACs and TTL rewritten.
  Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(kBridgedBytes + len)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  PutBridged(o, in_port, p);
  std::memcpy(o + kBridgedBytes, p, len);
  uint8_t* eth = o + kBridgedBytes;
  Put48(eth + 0, dst_mac);
  Put48(eth + 6, src_mac);
  eth[h.ipv4_off + 8] = static_cast<uint8_t>(ip[8] - 1);
  Ref egress_port(PyLong_FromUnsignedLongLong(port));
  Ref queue(PyLong_FromUnsignedLongLong(qid));
  if (!egress_port || !queue) return nullptr;
  PyObject* args[] = {Py_False, egress_port.get(), queue.get(), out.get()};
  return PyObject_Vectorcall(B(binding, kIngressResult), args, 4, nullptr);
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
  if (len < kBridgedBytes || !ParseHeaders(p, len, kBridgedBytes, &h)) Py_RETURN_NONE;
  uint64_t port, qid, deq_qdepth, tstamp;
  PyObject* const names[] = {F().egress_port, F().egress_qid, F().deq_qdepth,
                             F().global_tstamp_ns};
  uint64_t* const values[] = {&port, &qid, &deq_qdepth, &tstamp};
  for (int k = 0; k < 4; ++k) {
    const int got = AttrU64(md, names[k], values[k]);
    if (got < 0) return nullptr;
    if (got == 0) Py_RETURN_NONE;
  }
  bool drop = false;
  int ecn = h.ipv4 ? p[h.ipv4_off + 1] & 3 : 0;
  if (h.ipv4 && !h.feedback) {
    // marking_point(): DequeueQueueHook, then queue_threshold.
    uint64_t depth = deq_qdepth;
    {
      uint64_t key[] = {port};
      Hit r(Lookup(B(binding, kQueueOverride), B(binding, kQueueOverrideKeys), key));
      if (!r.ok()) return nullptr;
      const int inject = r.is(B(binding, kInjectAction));
      if (inject < 0) return nullptr;
      if (inject && !r.field(F().depth_cells, &depth)) return nullptr;
    }
    uint64_t key[] = {port, qid};
    Hit r(Lookup(B(binding, kQueueThreshold), B(binding, kQueueThresholdKeys), key));
    if (!r.ok()) return nullptr;
    const int set = r.is(B(binding, kSetThresholdAction));
    if (set < 0) return nullptr;
    if (set) {
      uint64_t slot, k1, k2, use_slope, drop_not_ect;
      if (!r.field(F().slot, &slot) || !r.field(F().k1_cells, &k1) ||
          !r.field(F().k2_cells, &k2) || !r.field(F().use_slope, &use_slope) ||
          !r.field(F().drop_not_ect, &drop_not_ect))
        return nullptr;
      RegisterCells last_depth(B(binding, kLastDepth));
      RegisterCells last_slope(B(binding, kLastSlope));
      RegisterCells last_departure(B(binding, kLastDeparture));
      if (!last_depth.ok() || !last_slope.ok() || !last_departure.ok()) {
        if (PyErr_Occurred()) return nullptr;
        Py_RETURN_NONE;
      }
      const Py_ssize_t i = static_cast<Py_ssize_t>(slot);
      // Anything the model's own checks would refuse goes to the model.
      if (slot >= static_cast<uint64_t>(last_depth.size()) ||
          slot >= static_cast<uint64_t>(last_slope.size()) ||
          slot >= static_cast<uint64_t>(last_departure.size()) || depth > kU32 ||
          port >= static_cast<uint64_t>(CounterSize(B(binding, kCeMarked))) ||
          port >= static_cast<uint64_t>(CounterSize(B(binding, kNotEctDropped)))) {
        if (PyErr_Occurred()) return nullptr;
        Py_RETURN_NONE;
      }
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
          if (!CounterCount(B(binding, kCeMarked), port, len)) return nullptr;
        } else if (drop_not_ect == 1) {
          if (!CounterCount(B(binding, kNotEctDropped), port, len)) return nullptr;
          drop = true;
        }
      }
    }
  }
  // SwitchEgressDeparser: the frame behind the bridged header, the IPv4
  // checksum made over the header as it leaves.
  Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(len - kBridgedBytes)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  std::memcpy(o, p + kBridgedBytes, len - kBridgedBytes);
  if (h.ipv4) {
    uint8_t* ip = o + (h.ipv4_off - kBridgedBytes);
    ip[1] = static_cast<uint8_t>((ip[1] & 0xFC) | ecn);
    Put16(ip + 10, Ipv4Checksum(ip));
  }
  PyObject* args[] = {drop ? Py_True : Py_False, out.get()};
  return PyObject_Vectorcall(B(binding, kEgressResult), args, 2, nullptr);
}

// Both take (binding, intrinsic metadata, data); data that is not bytes is
// the model's to run.
bool Arguments(PyObject* const* args, Py_ssize_t n) {
  if (n == 3 && PyTuple_Check(args[0]) && PyTuple_GET_SIZE(args[0]) == kSlots) return true;
  PyErr_SetString(PyExc_TypeError, "dadctcp core: (binding, intrinsic metadata, data)");
  return false;
}

PyObject* IngressFast(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (!Arguments(args, n)) return nullptr;
  uint64_t port;
  if (!PyBytes_CheckExact(args[2]) || !PlainU64(args[1], &port)) Py_RETURN_NONE;
  return Ingress(args[0], port, args[2]);
}

PyObject* EgressFast(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (!Arguments(args, n)) return nullptr;
  if (!PyBytes_CheckExact(args[2])) Py_RETURN_NONE;
  return Egress(args[0], args[1], args[2]);
}

PyMethodDef kDefs[] = {
    {"ingress", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(IngressFast)),
     METH_FASTCALL, nullptr},
    {"egress", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(EgressFast)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

// (ingress, egress, the binding tuple's length).
PyObject* Functions() {
  return Py_BuildValue("(NNn)", Function(&kDefs[0]), Function(&kDefs[1]),
                       static_cast<Py_ssize_t>(kSlots));
}

}  // namespace dadctcp
}  // namespace tofcc_native
