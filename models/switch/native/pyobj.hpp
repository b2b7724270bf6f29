// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
//
// What every compiled core shares: the reference model's own Python objects
// (registers, counters, tables) read and written through the C API, and the
// header layouts of tna/include/headers.p4 as byte offsets.
//
// The state stays in the model's objects, so the controller, the vectors and
// the reference path see one switch; a core only skips the Python per packet.
// A function that cannot decide a packet exactly as the model would (a
// frame its parser rejects, an index out of range) returns before its first
// side effect and lets the Python model run the packet instead.
#pragma once
#include <Python.h>

#include <cstdint>
#include <cstring>

namespace tofcc_native {

constexpr uint64_t kU32 = 0xFFFFFFFFull;
constexpr size_t kEthernetBytes = 14;
constexpr size_t kIpv4Bytes = 20;
constexpr size_t kTcpBytes = 20;
constexpr size_t kUdpBytes = 8;
constexpr size_t kFeedbackBytes = 16;
constexpr size_t kBridgedBytes = 17;
constexpr uint16_t kEthertypeIpv4 = 0x0800;
constexpr uint16_t kEthertypeFeedback = 0x88B6;
constexpr uint16_t kUdpPortFeedback = 0x4CCF;
constexpr uint8_t kPktTypeBridged = 1;

// Owns one reference: the C API's new references, released on every path.
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject* o) : o_(o) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() { Py_XDECREF(o_); }
  PyObject* get() const { return o_; }
  PyObject* release() {
    PyObject* o = o_;
    o_ = nullptr;
    return o;
  }
  explicit operator bool() const { return o_ != nullptr; }

 private:
  PyObject* o_ = nullptr;
};

struct Names {
  PyObject *values, *packets, *bytes, *groups, *memo_for, *memo, *deflt, *lookup, *action, *data;
  PyObject *hit, *keys;
};
inline Names& N() {
  static Names n = {
      PyUnicode_InternFromString("values"),   PyUnicode_InternFromString("packets"),
      PyUnicode_InternFromString("bytes"),    PyUnicode_InternFromString("_groups"),
      PyUnicode_InternFromString("_memo_for"), PyUnicode_InternFromString("_memo"),
      PyUnicode_InternFromString("default"),  PyUnicode_InternFromString("lookup"),
      PyUnicode_InternFromString("action"),   PyUnicode_InternFromString("data"),
      PyUnicode_InternFromString("hit"),      PyUnicode_InternFromString("keys"),
  };
  return n;
}

inline bool AsU64(PyObject* v, uint64_t* out) {
  *out = PyLong_AsUnsignedLongLong(v);
  return !(*out == static_cast<uint64_t>(-1) && PyErr_Occurred());
}

// A plain non-negative int below 2^64, as the fast path takes it; anything
// else (a bool, a subclass, a negative number) is for the model to judge.
inline bool PlainU64(PyObject* v, uint64_t* out) {
  if (!PyLong_CheckExact(v)) return false;
  *out = PyLong_AsUnsignedLongLong(v);
  if (*out == static_cast<uint64_t>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// -1: error set; 0: not a plain int (the model's to judge); 1: read.
inline int AttrU64(PyObject* o, PyObject* name, uint64_t* out) {
  Ref v(PyObject_GetAttr(o, name));
  if (!v) return -1;
  return PlainU64(v.get(), out) ? 1 : 0;
}

// A Register's cells in the pipe the data plane runs (Register.values).
class RegisterCells {
 public:
  explicit RegisterCells(PyObject* reg) : list_(PyObject_GetAttr(reg, N().values)) {}
  bool ok() const { return list_ && PyList_Check(list_.get()); }
  Py_ssize_t size() const { return PyList_GET_SIZE(list_.get()); }
  bool read(Py_ssize_t i, uint64_t* out) const {
    return AsU64(PyList_GET_ITEM(list_.get(), i), out);
  }
  bool write(Py_ssize_t i, uint64_t value) {
    PyObject* v = PyLong_FromUnsignedLongLong(value);
    if (v == nullptr) return false;
    PyObject* old = PyList_GET_ITEM(list_.get(), i);
    PyList_SET_ITEM(list_.get(), i, v);
    Py_DECREF(old);
    return true;
  }

 private:
  Ref list_;
};

inline bool ListAdd(PyObject* list, Py_ssize_t i, uint64_t n) {
  uint64_t v;
  if (!AsU64(PyList_GET_ITEM(list, i), &v)) return false;
  PyObject* nv = PyLong_FromUnsignedLongLong(v + n);
  if (nv == nullptr) return false;
  PyObject* old = PyList_GET_ITEM(list, i);
  PyList_SET_ITEM(list, i, nv);
  Py_DECREF(old);
  return true;
}

// Counter.count(index, nbytes) in the running pipe; the caller checked the
// index against size().
inline bool CounterCount(PyObject* counter, Py_ssize_t index, uint64_t nbytes) {
  Ref packets(PyObject_GetAttr(counter, N().packets));
  Ref bytes(PyObject_GetAttr(counter, N().bytes));
  if (!packets || !bytes || !PyList_Check(packets.get()) || !PyList_Check(bytes.get())) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "counter lists");
    return false;
  }
  return ListAdd(packets.get(), index, 1) && ListAdd(bytes.get(), index, nbytes);
}

inline Py_ssize_t CounterSize(PyObject* counter) {
  Ref packets(PyObject_GetAttr(counter, N().packets));
  return packets && PyList_Check(packets.get()) ? PyList_GET_SIZE(packets.get()) : -1;
}

// Table.lookup: the answer it remembers for this key when its memo is the
// current table's (core.py, Table.lookup), else the call itself, which
// searches and remembers. Returns a new reference to the LookupResult.
inline PyObject* Lookup(PyObject* table, PyObject* fields, const uint64_t* key) {
  const Py_ssize_t n = PyTuple_GET_SIZE(fields);
  Ref tup(PyTuple_New(n));
  if (!tup) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyLong_FromUnsignedLongLong(key[i]);
    if (v == nullptr) return nullptr;
    PyTuple_SET_ITEM(tup.get(), i, v);
  }
  Ref groups(PyObject_GetAttr(table, N().groups));
  if (!groups) return nullptr;
  if (groups.get() != Py_None) {
    Ref memo_for(PyObject_GetAttr(table, N().memo_for));
    Ref deflt(PyObject_GetAttr(table, N().deflt));
    if (!memo_for || !deflt) return nullptr;
    if (PyTuple_Check(memo_for.get()) && PyTuple_GET_SIZE(memo_for.get()) == 2 &&
        PyTuple_GET_ITEM(memo_for.get(), 0) == groups.get() &&
        PyTuple_GET_ITEM(memo_for.get(), 1) == deflt.get()) {
      Ref memo(PyObject_GetAttr(table, N().memo));
      if (!memo) return nullptr;
      if (PyDict_Check(memo.get())) {
        PyObject* found = PyDict_GetItemWithError(memo.get(), tup.get());
        if (found != nullptr) {
          Py_INCREF(found);
          return found;
        }
        if (PyErr_Occurred()) return nullptr;
      }
    }
  }
  Ref values(PyDict_New());
  if (!values) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (PyDict_SetItem(values.get(), PyTuple_GET_ITEM(fields, i), PyTuple_GET_ITEM(tup.get(), i)) <
        0)
      return nullptr;
  }
  return PyObject_CallMethodOneArg(table, N().lookup, values.get());
}

// A lookup's answer: which action, and its data by field name.
class Hit {
 public:
  explicit Hit(PyObject* result)
      : r_(result),
        action_(result ? PyObject_GetAttr(result, N().action) : nullptr),
        data_(result ? PyObject_GetAttr(result, N().data) : nullptr) {}
  bool ok() const { return r_ && action_ && data_; }
  // -1: error set; 0/1: the action is (not) `name`.
  int is(PyObject* name) const { return PyObject_RichCompareBool(action_.get(), name, Py_EQ); }
  bool hit(int* out) const {
    Ref h(PyObject_GetAttr(r_.get(), N().hit));
    if (!h) return false;
    *out = PyObject_IsTrue(h.get());
    return *out >= 0;
  }
  bool field(PyObject* name, uint64_t* out) const {
    PyObject* v = PyDict_GetItemWithError(data_.get(), name);
    if (v == nullptr) {
      if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
      return false;
    }
    return AsU64(v, out);
  }

 private:
  Ref r_;
  Ref action_;
  Ref data_;
};

inline uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t Be32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
         static_cast<uint32_t>(p[2]) << 8 | p[3];
}
inline uint64_t Be48(const uint8_t* p) {
  return static_cast<uint64_t>(Be16(p)) << 32 | Be32(p + 2);
}
inline void Put16(uint8_t* p, uint64_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void Put48(uint8_t* p, uint64_t v) {
  for (int i = 5; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}

// Where parser HeaderParser (common.py) found each header, from `off`.
struct Parsed {
  bool ipv4 = false, tcp = false, udp = false, feedback = false;
  size_t ipv4_off = 0, l4_off = 0;
  size_t end = 0;  // the payload's first byte
};

// false: the parser rejects the frame (ParserError: too short).
inline bool ParseHeaders(const uint8_t* p, size_t len, size_t off, Parsed* h) {
  if (off + kEthernetBytes > len) return false;
  const uint16_t ether_type = Be16(p + off + 12);
  off += kEthernetBytes;
  h->end = off;
  if (ether_type == kEthertypeFeedback) {
    if (off + kFeedbackBytes > len) return false;
    h->feedback = true;
    h->end = off + kFeedbackBytes;
    return true;
  }
  if (ether_type != kEthertypeIpv4) return true;
  if (off + kIpv4Bytes > len) return false;
  h->ipv4 = true;
  h->ipv4_off = off;
  off += kIpv4Bytes;
  h->end = off;
  const uint8_t ihl = p[h->ipv4_off] & 0x0F;
  const uint16_t frag_offset = Be16(p + h->ipv4_off + 6) & 0x1FFF;
  if (ihl != 5 || frag_offset != 0) return true;
  const uint8_t protocol = p[h->ipv4_off + 9];
  h->l4_off = off;
  if (protocol == 6) {
    if (off + kTcpBytes > len) return false;
    h->tcp = true;
    h->end = off + kTcpBytes;
  } else if (protocol == 17) {
    if (off + kUdpBytes > len) return false;
    h->udp = true;
    h->end = off + kUdpBytes;
    if (Be16(p + off + 2) == kUdpPortFeedback) {
      if (h->end + kFeedbackBytes > len) return false;
      h->feedback = true;
      h->end += kFeedbackBytes;
    }
  }
  return true;
}

// RFC 1071 over the 20-byte header with its checksum field taken as zero
// (Ipv4.checksum).
inline uint16_t Ipv4Checksum(const uint8_t* ip) {
  uint32_t total = 0;
  for (int i = 0; i < 20; i += 2) {
    if (i == 10) continue;
    total += Be16(ip + i);
  }
  while (total >> 16) total = (total & 0xFFFF) + (total >> 16);
  return static_cast<uint16_t>(~total & 0xFFFF);
}

// bridge(): the bridged header every program puts first in ingress.
inline void PutBridged(uint8_t* out, uint64_t ingress_port, const uint8_t* eth) {
  out[0] = kPktTypeBridged;
  out[1] = out[2] = 0;  // class_id
  Put16(out + 3, ingress_port & 0x1FF);
  std::memcpy(out + 5, eth + 6, 6);   // orig_src_mac
  std::memcpy(out + 11, eth + 0, 6);  // orig_dst_mac
}

// A function table's METH_FASTCALL entry as a callable.
inline PyObject* Function(PyMethodDef* def) { return PyCFunction_New(def, nullptr); }

}  // namespace tofcc_native
