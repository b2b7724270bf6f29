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
#include <initializer_list>
#include <memory>
#include <unordered_map>
#include <vector>

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
  void reset(PyObject* o) {
    Py_XDECREF(o_);
    o_ = o;
  }
  explicit operator bool() const { return o_ != nullptr; }

 private:
  PyObject* o_ = nullptr;
};

// Shared immortal-enough constants: 0 and b"" (kept for the process).
inline PyObject* Zero() {
  static PyObject* const zero = PyLong_FromLong(0);
  return zero;
}
inline PyObject* Empty() {
  static PyObject* const empty = PyBytes_FromStringAndSize(nullptr, 0);
  return empty;
}

// None: the Python model runs this packet (the core leaves it untouched).
inline PyObject* Defer() { Py_RETURN_NONE; }
// The same, unless a C API call failed: then that error.
inline PyObject* DeferOrError() { return PyErr_Occurred() ? nullptr : Defer(); }

struct Names {
  PyObject *values, *packets, *bytes, *groups, *deflt, *lookup, *action, *data;
  PyObject *hit, *keys;
};
inline Names& N() {
  static Names n = {
      PyUnicode_InternFromString("values"),   PyUnicode_InternFromString("packets"),
      PyUnicode_InternFromString("bytes"),    PyUnicode_InternFromString("_groups"),
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

// ---- Table.lookup ---------------------------------------------------------
// The search of Table._search_ranked (core.py), compiled once per table
// state: the mask groups best entry first, each a hash of masked key values
// to (rank, LookupResult). The table keeps its compiled form (a capsule in
// `_native_cache`, dropped when the table is copied) and rebuilds it when its
// groups or default are replaced, as they are on every change.

struct KeyHash {
  size_t operator()(const std::vector<uint64_t>& k) const {
    size_t h = k.size();
    for (uint64_t v : k) h = (h * 0x100000001B3ull) ^ std::hash<uint64_t>()(v);
    return h;
  }
};

struct Hit_ {
  std::vector<int64_t> rank;
  PyObject* entry;   // owned: the table's Entry
  PyObject* result;  // owned: its LookupResult, made at its first hit (most
                     // entries of a large table are never hit in a run)
  PyObject* action = nullptr;  // borrowed from the result: its action name
  PyObject* data = nullptr;    // and its data dict
};

// What a compiled search found, borrowed from its table's cache (the
// result holds the action and data): filled only when the cache answered.
struct Found {
  PyObject* action = nullptr;
  PyObject* data = nullptr;
  int hit = -1;
};

struct Group {
  std::vector<uint64_t> masks;
  std::vector<int64_t> top;
  std::unordered_map<std::vector<uint64_t>, Hit_, KeyHash> hits;
};

struct TableCache {
  PyObject* groups = nullptr;  // owned: the table's _groups it was built from
  PyObject* deflt = nullptr;   // owned: the table's default
  PyObject* miss = nullptr;    // owned: LookupResult(False, *default)
  std::vector<Group> ranked;
  ~TableCache() {
    Py_XDECREF(groups);
    Py_XDECREF(deflt);
    Py_XDECREF(miss);
    for (Group& g : ranked)
      for (auto& kv : g.hits) {
        Py_XDECREF(kv.second.entry);
        Py_XDECREF(kv.second.result);
      }
  }
};

inline PyObject* LookupResultType() {
  static PyObject* type = [] {
    Ref core(PyImport_ImportModule("models.switch.core"));
    return core ? PyObject_GetAttrString(core.get(), "LookupResult") : nullptr;
  }();
  return type;
}

inline bool IntTuple(PyObject* t, std::vector<int64_t>* out) {
  if (!PyTuple_Check(t)) return false;
  out->clear();
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); ++i) {
    const long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return false;
    out->push_back(v);
  }
  return true;
}

inline bool UIntTuple(PyObject* t, std::vector<uint64_t>* out) {
  if (!PyTuple_Check(t)) return false;
  out->clear();
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); ++i) {
    uint64_t v;
    if (!AsU64(PyTuple_GET_ITEM(t, i), &v)) return false;
    out->push_back(v);
  }
  return true;
}

inline PyObject* MakeResult(bool hit, PyObject* action, PyObject* data) {
  PyObject* type = LookupResultType();
  if (type == nullptr) return nullptr;
  PyObject* args[] = {hit ? Py_True : Py_False, action, data};
  return PyObject_Vectorcall(type, args, 3, nullptr);
}

// Compiled from table._ranked_groups() (list of (masks, group, top); a
// group maps masked values to (rank, Entry)); nullptr with an error set.
inline TableCache* BuildCache(PyObject* table, PyObject* groups, PyObject* deflt) {
  static PyObject* const kRanked = PyUnicode_InternFromString("_ranked_groups");
  auto cache = std::make_unique<TableCache>();
  Py_INCREF(groups);
  cache->groups = groups;
  Py_INCREF(deflt);
  cache->deflt = deflt;
  if (!PyTuple_Check(deflt) || PyTuple_GET_SIZE(deflt) != 2) {
    PyErr_SetString(PyExc_TypeError, "table default: (action, data)");
    return nullptr;
  }
  cache->miss = MakeResult(false, PyTuple_GET_ITEM(deflt, 0), PyTuple_GET_ITEM(deflt, 1));
  if (cache->miss == nullptr) return nullptr;
  Ref ranked(PyObject_CallMethodNoArgs(table, kRanked));
  if (!ranked) return nullptr;
  Ref it(PyObject_GetIter(ranked.get()));
  if (!it) return nullptr;
  while (PyObject* item = PyIter_Next(it.get())) {
    Ref owned(item);
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3) {
      PyErr_SetString(PyExc_TypeError, "ranked group: (masks, group, top)");
      return nullptr;
    }
    Group g;
    if (!UIntTuple(PyTuple_GET_ITEM(item, 0), &g.masks) ||
        !IntTuple(PyTuple_GET_ITEM(item, 2), &g.top))
      return nullptr;
    PyObject* group = PyTuple_GET_ITEM(item, 1);
    PyObject *values, *hit;
    Py_ssize_t pos = 0;
    while (PyDict_Next(group, &pos, &values, &hit)) {
      Hit_ h{{}, nullptr, nullptr};
      std::vector<uint64_t> k;
      if (!UIntTuple(values, &k) || !PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 2 ||
          !IntTuple(PyTuple_GET_ITEM(hit, 0), &h.rank)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "group hit: (rank, entry)");
        return nullptr;
      }
      h.entry = PyTuple_GET_ITEM(hit, 1);
      Py_INCREF(h.entry);
      g.hits.emplace(std::move(k), std::move(h));
    }
    cache->ranked.push_back(std::move(g));
  }
  if (PyErr_Occurred()) return nullptr;
  return cache.release();
}

inline void FreeCache(PyObject* capsule) {
  delete static_cast<TableCache*>(PyCapsule_GetPointer(capsule, "tofcc_native.TableCache"));
}

// Table.lookup(values) for the key values in the order of `fields` (the
// table's key fields): a new reference to the LookupResult, equal to what
// the model returns (the same action name and data dict).
inline PyObject* Lookup(PyObject* table, PyObject* fields, const uint64_t* key,
                        Found* found = nullptr) {
  static PyObject* const kCache = PyUnicode_InternFromString("_native_cache");
  const Py_ssize_t n = PyTuple_GET_SIZE(fields);
  // The table's state from its __dict__: a packet makes several lookups,
  // and the generic attribute path cost more than the search.
  Ref dict(PyObject_GenericGetDict(table, nullptr));
  if (!dict) return nullptr;
  Ref groups(Py_XNewRef(PyDict_GetItemWithError(dict.get(), N().groups)));
  Ref deflt(Py_XNewRef(PyDict_GetItemWithError(dict.get(), N().deflt)));
  if (!groups || !deflt) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_AttributeError, "table: _groups, default");
    return nullptr;
  }
  if (groups.get() == Py_None) {
    // Not searched since it changed: the model's own lookup builds its groups.
    Ref values(PyDict_New());
    if (!values) return nullptr;
    for (Py_ssize_t i = 0; i < n; ++i) {
      Ref v(PyLong_FromUnsignedLongLong(key[i]));
      if (!v || PyDict_SetItem(values.get(), PyTuple_GET_ITEM(fields, i), v.get()) < 0)
        return nullptr;
    }
    return PyObject_CallMethodOneArg(table, N().lookup, values.get());
  }
  TableCache* cache = nullptr;
  PyObject* capsule = PyDict_GetItemWithError(dict.get(), kCache);  // borrowed
  if (capsule == nullptr) {
    if (PyErr_Occurred()) return nullptr;
  } else {
    cache = static_cast<TableCache*>(PyCapsule_GetPointer(capsule, "tofcc_native.TableCache"));
    if (cache == nullptr) return nullptr;
  }
  if (cache == nullptr || cache->groups != groups.get() || cache->deflt != deflt.get()) {
    cache = BuildCache(table, groups.get(), deflt.get());
    if (cache == nullptr) return nullptr;
    Ref made(PyCapsule_New(cache, "tofcc_native.TableCache", FreeCache));
    if (!made) {
      delete cache;
      return nullptr;
    }
    if (PyObject_SetAttr(table, kCache, made.get()) < 0) return nullptr;
  }
  // The masked key, in a buffer kept between calls (a lookup per table per packet).
  static std::vector<uint64_t> k;
  k.resize(static_cast<size_t>(n));
  Hit_* best = nullptr;
  for (Group& g : cache->ranked) {
    if (best != nullptr && !(best->rank < g.top)) break;  // best[0] >= top
    if (g.masks.size() != k.size()) {
      PyErr_SetString(PyExc_RuntimeError, "lookup: key fields differ from the table's");
      return nullptr;
    }
    for (size_t i = 0; i < k.size(); ++i) k[i] = key[i] & g.masks[i];
    auto found = g.hits.find(k);
    if (found != g.hits.end() && (best == nullptr || best->rank < found->second.rank))
      best = &found->second;
  }
  if (best != nullptr && best->result == nullptr) {
    static PyObject* const kAction = PyUnicode_InternFromString("action");
    static PyObject* const kData = PyUnicode_InternFromString("data");
    Ref action(PyObject_GetAttr(best->entry, kAction));
    Ref data(PyObject_GetAttr(best->entry, kData));
    if (!action || !data) return nullptr;
    best->result = MakeResult(true, action.get(), data.get());
    if (best->result == nullptr) return nullptr;
    best->action = action.get();
    best->data = data.get();
  }
  PyObject* r = best != nullptr ? best->result : cache->miss;
  if (found != nullptr) {
    found->hit = best != nullptr;
    found->action = best != nullptr ? best->action : PyTuple_GET_ITEM(cache->deflt, 0);
    found->data = best != nullptr ? best->data : PyTuple_GET_ITEM(cache->deflt, 1);
  }
  Py_INCREF(r);
  return r;
}

// A lookup's answer: which action, and its data by field name.
class Hit {
 public:
  // Lookup(table, fields, key), its action and data taken from the cache
  // when it answered (no attribute reads), else from the model's result.
  Hit(PyObject* table, PyObject* fields, const uint64_t* key) {
    Found f;
    r_.reset(Lookup(table, fields, key, &f));
    if (!r_) return;
    hit_ = f.hit;
    if (f.action != nullptr) {
      Py_INCREF(f.action);
      action_.reset(f.action);
      Py_INCREF(f.data);
      data_.reset(f.data);
    } else {
      action_.reset(PyObject_GetAttr(r_.get(), N().action));
      data_.reset(PyObject_GetAttr(r_.get(), N().data));
    }
  }
  bool ok() const { return r_ && action_ && data_; }
  // -1: error set; 0/1: the action is (not) `name`.
  int is(PyObject* name) const { return PyObject_RichCompareBool(action_.get(), name, Py_EQ); }
  bool hit(int* out) const {
    if (hit_ >= 0) {
      *out = hit_;
      return true;
    }
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
  int hit_ = -1;  // from the cache; -1: read the result's
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
inline void Put32(uint8_t* p, uint64_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
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

// A result dataclass made as its generated __init__ makes it (each field
// set, in order) without running that Python: `record` is (class, field
// names), from bindings.record(), which checked the class's __init__ does
// nothing else. `values` are borrowed, one per field.
inline PyObject* NewRecord(PyObject* record, std::initializer_list<PyObject*> values) {
  static PyObject* const empty = PyTuple_New(0);
  PyObject* names = PyTuple_GET_ITEM(record, 1);
  if (static_cast<size_t>(PyTuple_GET_SIZE(names)) != values.size()) {
    PyErr_SetString(PyExc_RuntimeError, "record: one value per field");
    return nullptr;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(record, 0));
  Ref obj(PyBaseObject_Type.tp_new(type, empty, nullptr));
  if (!obj) return nullptr;
  Py_ssize_t i = 0;
  for (PyObject* v : values) {
    if (PyObject_GenericSetAttr(obj.get(), PyTuple_GET_ITEM(names, i++), v) < 0) return nullptr;
  }
  return obj.release();
}

// A function table's METH_FASTCALL entry as a callable.
inline PyObject* Function(PyMethodDef* def) { return PyCFunction_New(def, nullptr); }

// A core's two entry points as built-in functions, each taking (binding,
// intrinsic metadata, data[, digest]) and handing the arguments on; data
// that is not bytes is the model's to run.
using Step = PyObject* (*)(PyObject* const* args);

template <Py_ssize_t kSlots, Py_ssize_t kIngressArgs, Step kIngress, Step kEgress>
struct Entries {
  static bool Check(PyObject* const* args, Py_ssize_t n, Py_ssize_t want) {
    if (n == want && PyTuple_Check(args[0]) && PyTuple_GET_SIZE(args[0]) == kSlots) return true;
    PyErr_SetString(PyExc_TypeError, "core: (binding, intrinsic metadata, data[, digest])");
    return false;
  }
  static PyObject* In(PyObject*, PyObject* const* args, Py_ssize_t n) {
    if (!Check(args, n, kIngressArgs)) return nullptr;
    return PyBytes_CheckExact(args[2]) ? kIngress(args) : Defer();
  }
  static PyObject* Out(PyObject*, PyObject* const* args, Py_ssize_t n) {
    if (!Check(args, n, 3)) return nullptr;
    return PyBytes_CheckExact(args[2]) ? kEgress(args) : Defer();
  }
  // (ingress, egress, the binding tuple's length).
  static PyObject* Functions() {
    static PyMethodDef defs[] = {
        {"ingress", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(In)),
         METH_FASTCALL, nullptr},
        {"egress", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Out)),
         METH_FASTCALL, nullptr},
    };
    return Py_BuildValue("(NNn)", Function(&defs[0]), Function(&defs[1]), kSlots);
  }
};

}  // namespace tofcc_native

namespace tofcc_native {

// lookup(table, fields, key): Lookup() as a Python function, for the tests
// that hold it to Table.lookup on tables of every shape.
inline PyObject* LookupCall(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (n != 3 || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2]) ||
      PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[2])) {
    PyErr_SetString(PyExc_TypeError, "lookup(table, fields: tuple, key: tuple)");
    return nullptr;
  }
  std::vector<uint64_t> key;
  if (!UIntTuple(args[2], &key)) return nullptr;
  return Lookup(args[0], args[1], key.data());
}

inline PyObject* LookupFunction() {
  static PyMethodDef def = {
      "lookup", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(LookupCall)),
      METH_FASTCALL, nullptr};
  return Function(&def);
}

}  // namespace tofcc_native
