// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
//
// The controls every program shares (models/switch/common.py): FeedbackTrust,
// SourceGuard and Ipv4Forward, on the model's own tables and counters.
// Each returns -1 with a Python error set, else its answer.
#pragma once
#include <unordered_map>
#include <utility>

#include "pyobj.hpp"

namespace tofcc_native {

inline PyObject* FieldName(const char* name) { return PyUnicode_InternFromString(name); }

// Slot `s` of a core's binding tuple (the order of its Slot enum).
inline PyObject* B(PyObject* binding, int s) { return PyTuple_GET_ITEM(binding, s); }

// A lookup's action data field by a literal name (its Python string made
// once), or -1 with an error set.
inline int Field(const Hit& r, const char* name, uint64_t* out) {
  static std::unordered_map<const char*, PyObject*> names;
  PyObject*& key = names[name];
  if (key == nullptr && (key = FieldName(name)) == nullptr) return -1;
  return r.field(key, out) ? 0 : -1;
}

// A lookup in the binding's table `table` (key fields `keys`) whose action,
// when it is `action` (and, with need_hit, an entry's), sets the named
// fields: -1 (error set), 0 (another action) or 1.
inline int LookupAction(PyObject* binding, int table, int keys, const uint64_t* key, int action,
                 std::initializer_list<std::pair<const char*, uint64_t*>> fields,
                 bool need_hit = false) {
  Hit r(B(binding, table), B(binding, keys), key);
  if (!r.ok()) return -1;
  const int is = r.is(B(binding, action));
  if (is <= 0) return is;
  if (need_hit) {
    int hit = 0;
    if (!r.hit(&hit)) return -1;
    if (!hit) return 0;
  }
  for (auto [name, out] : fields) {
    if (Field(r, name, out) < 0) return -1;
  }
  return 1;
}

// IngressResult(drop, egress_port, qid, data, mirror, icos 0); `record` is
// the binding's (class, fields) for it.
inline PyObject* MakeIngressResult(PyObject* record, PyObject* drop, PyObject* port,
                                   PyObject* qid, PyObject* data, PyObject* mirror = Py_None) {
  return NewRecord(record, {drop, port, qid, data, mirror, Zero()});
}
inline PyObject* IngressDropped(PyObject* record, PyObject* mirror = Py_None) {
  return MakeIngressResult(record, Py_True, Zero(), Zero(), Empty(), mirror);
}

// Counter.count(index, len): 0, or -1 with an error set.
inline int Count(PyObject* counter, uint64_t index, size_t len) {
  return CounterCount(counter, static_cast<Py_ssize_t>(index), len) ? 0 : -1;
}

// FeedbackTrust.apply: 1 when the packet is forged feedback (counted).
inline int TrustApply(PyObject* trusted_ports, PyObject* keys, PyObject* drops, const Parsed& h,
                      uint64_t in_port, size_t len) {
  if (!h.feedback) return 0;
  uint64_t key[] = {in_port};
  Hit r(trusted_ports, keys, key);
  int hit = 0;
  if (!r.ok() || !r.hit(&hit)) return -1;
  if (hit) return 0;
  return CounterCount(drops, static_cast<Py_ssize_t>(in_port), len) ? 1 : -1;
}

// SourceGuard.apply: 1 when the source is outside its port's binding (counted).
inline int GuardApply(PyObject* bindings, PyObject* keys, PyObject* drops, PyObject* spoofed_action,
                      const Parsed& h, const uint8_t* p, uint64_t in_port, size_t len) {
  if (!h.ipv4 || h.feedback) return 0;
  uint64_t key[] = {in_port, Be32(p + h.ipv4_off + 12)};
  Hit r(bindings, keys, key);
  if (!r.ok()) return -1;
  const int spoofed = r.is(spoofed_action);
  if (spoofed <= 0) return spoofed;
  return CounterCount(drops, static_cast<Py_ssize_t>(in_port), len) ? 1 : -1;
}

// The objects bindings._shared_ingress puts first in every core's binding,
// in this order (each core's Slot enum starts with them: static_assert).
enum SharedSlot {
  kSharedTrustedPorts, kSharedTrustedPortsKeys, kSharedUntrustedDrops,
  kSharedSourceBindings, kSharedSourceBindingsKeys, kSharedSpoofedDrops,
  kSharedSpoofedSourceAction, kSharedIpv4Lpm, kSharedIpv4LpmKeys, kSharedDropAction,
};

// FeedbackTrust then SourceGuard, as every program runs them first: 1 when
// one of them drops the packet (counted), 0 when both pass it, -1 (error set).
inline int HostGuards(PyObject* binding, const Parsed& h, const uint8_t* p, uint64_t in_port,
                      size_t len) {
  const int forged =
      TrustApply(B(binding, kSharedTrustedPorts), B(binding, kSharedTrustedPortsKeys),
                 B(binding, kSharedUntrustedDrops), h, in_port, len);
  if (forged != 0) return forged;
  return GuardApply(B(binding, kSharedSourceBindings), B(binding, kSharedSourceBindingsKeys),
                    B(binding, kSharedSpoofedDrops), B(binding, kSharedSpoofedSourceAction), h,
                    p, in_port, len);
}

// The ingress port and one timestamp of ig_intr_md: 1 read, 0 when either
// is not a plain int (the model's to judge), -1 (error set).
inline int IngressArgs(PyObject* ig, PyObject* stamp_name, uint64_t* port, uint64_t* stamp) {
  static PyObject* const kPort = FieldName("ingress_port");
  const int a = AttrU64(ig, kPort, port);
  if (a <= 0) return a;
  return AttrU64(ig, stamp_name, stamp);
}

// Ipv4Forward.apply's answer; the caller rewrites the MACs and the TTL.
struct Route {
  bool drop = true;
  uint64_t port = 0, src_mac = 0, dst_mac = 0;
};

inline int ForwardApply(PyObject* lpm, PyObject* keys, PyObject* drop_action, const Parsed& h,
                        const uint8_t* p, Route* out) {
  static PyObject* const kPort = FieldName("port");
  static PyObject* const kSrcMac = FieldName("src_mac");
  static PyObject* const kDstMac = FieldName("dst_mac");
  *out = Route();
  if (!h.ipv4) return 0;
  const uint8_t* ip = p + h.ipv4_off;
  if ((ip[0] & 0x0F) != 5 || ip[8] <= 1) return 0;
  uint64_t key[] = {Be32(ip + 16)};
  Hit r(lpm, keys, key);
  if (!r.ok()) return -1;
  const int dropped = r.is(drop_action);
  if (dropped < 0) return -1;
  if (dropped) return 0;
  if (!r.field(kSrcMac, &out->src_mac) || !r.field(kDstMac, &out->dst_mac) ||
      !r.field(kPort, &out->port))
    return -1;
  out->drop = false;
  return 0;
}

// Ipv4Forward.apply on the shared slots.
inline int Forward(PyObject* binding, const Parsed& h, const uint8_t* p, Route* out) {
  return ForwardApply(B(binding, kSharedIpv4Lpm), B(binding, kSharedIpv4LpmKeys),
                      B(binding, kSharedDropAction), h, p, out);
}

// What Ipv4Forward did to the headers, on the bytes the deparser emits:
// `eth` is the frame's Ethernet header, `ipv4_off` the IPv4 header's offset
// from it.
inline void RouteRewrite(uint8_t* eth, size_t ipv4_off, const Route& r) {
  Put48(eth + 0, r.dst_mac);
  Put48(eth + 6, r.src_mac);
  eth[ipv4_off + 8] = static_cast<uint8_t>(eth[ipv4_off + 8] - 1);
}

// include/feedback.p4's FeedbackRebuild on a mirrored copy as the egress
// parser reads it (its FbMirror header, Ethernet and IPv4, nothing more):
// the one feedback packet toward the flow's source, written to `out`
// (kFeedbackFrameBytes), its message from the mirror header.
constexpr size_t kFbMirrorBytes = 29;
constexpr size_t kFeedbackFrameBytes = kEthernetBytes + kIpv4Bytes + kUdpBytes + kFeedbackBytes;
constexpr uint8_t kFeedbackVersion = 2;
constexpr uint8_t kFeedbackTtl = 64;
constexpr uint16_t kFeedbackIpv4TotalLen = 44;
constexpr uint16_t kFeedbackUdpLen = 24;

inline void FeedbackRebuild(const uint8_t* m, uint8_t msg_type, uint8_t* out) {
  const uint8_t* eth = m + kFbMirrorBytes;
  const uint8_t* ip = eth + kEthernetBytes;
  std::memcpy(out + 0, m + 17, 6);  // dst: orig_src_mac
  std::memcpy(out + 6, m + 23, 6);  // src: orig_dst_mac
  std::memcpy(out + 12, eth + 12, 2);
  uint8_t* o = out + kEthernetBytes;
  o[0] = ip[0];
  o[1] = static_cast<uint8_t>(ip[1] | 3);  // ECN CE
  Put16(o + 2, kFeedbackIpv4TotalLen);
  std::memset(o + 4, 0, 4);  // identification, flags, fragment offset
  o[8] = kFeedbackTtl;
  o[9] = 17;  // UDP
  std::memcpy(o + 12, ip + 16, 4);
  std::memcpy(o + 16, ip + 12, 4);
  Put16(o + 10, Ipv4Checksum(o));
  uint8_t* udp = o + kIpv4Bytes;
  std::memcpy(udp + 0, m + 7, 2);  // flow_dst_port
  Put16(udp + 2, kUdpPortFeedback);
  Put16(udp + 4, kFeedbackUdpLen);
  Put16(udp + 6, 0);
  uint8_t* fb = udp + kUdpBytes;
  fb[0] = static_cast<uint8_t>(kFeedbackVersion << 4 | (msg_type & 0x0F));
  std::memcpy(fb + 1, m + 1, 3);  // class_id, queue_id
  fb[4] = 0;                      // degree
  fb[5] = m[4];                   // flow_protocol
  std::memcpy(fb + 6, m + 5, 2);  // flow_src_port
  std::memcpy(fb + 8, m + 9, 8);  // rate, target_rate
}

// SwitchEgressDeparser of a bridged packet: EgressResult(drop, the frame
// behind its `head` bytes of bridged headers, `mirror`), the IPv4 header's
// ECN set to `ecn` (unless negative) and its checksum made as it leaves.
inline PyObject* EgressDeparsed(PyObject* record, const uint8_t* p, size_t len, const Parsed& h,
                                int ecn, bool drop, PyObject* mirror = Py_None,
                                size_t head = kBridgedBytes) {
  Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(len - head)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  std::memcpy(o, p + head, len - head);
  if (h.ipv4) {
    uint8_t* ip = o + (h.ipv4_off - head);
    if (ecn >= 0) ip[1] = static_cast<uint8_t>((ip[1] & 0xFC) | ecn);
    Put16(ip + 10, Ipv4Checksum(ip));
  }
  return NewRecord(record, {drop ? Py_True : Py_False, out.get(), mirror});
}

// A counter index the model takes: below the counter's size.
inline int CounterHas(PyObject* counter, uint64_t index) {
  const Py_ssize_t n = CounterSize(counter);
  if (n < 0) return PyErr_Occurred() ? -1 : 0;
  return index < static_cast<uint64_t>(n) ? 1 : 0;
}

// Every counter and register a packet may index, at least as large as the
// core assumes (else the model runs the packet): 1, 0, or -1 (error set).
inline int Sized(PyObject* binding, std::initializer_list<std::pair<int, uint64_t>> counters,
                 std::initializer_list<std::pair<int, uint64_t>> registers = {}) {
  for (auto [slot, size] : counters) {
    const int has = CounterHas(B(binding, slot), size - 1);
    if (has <= 0) return has;
  }
  for (auto [slot, size] : registers) {
    RegisterCells cells(B(binding, slot));
    if (!cells.ok()) return PyErr_Occurred() ? -1 : 0;
    if (static_cast<uint64_t>(cells.size()) < size) return 0;
  }
  return 1;
}

}  // namespace tofcc_native
