// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
//
// models/switch/spie.py's ingress pass and egress, compiled: the same
// tables, registers, counters and decisions in the same order, on the
// model's own objects (pyobj.hpp). The resubmission queue and the clock that
// releases second passes stay in Python (Spie.ingress); a PI step's mirrored
// copy is rare and goes to the model. Read it beside the Python;
// tests/test_native_cores.py holds the two to the same bytes and state.
#include <algorithm>

#include "controls.hpp"

namespace tofcc_native {
namespace spie {

// The binding tuple Spie.native_binding builds, in this order.
enum Slot {
  kTrustedPorts, kTrustedPortsKeys, kUntrustedDrops,
  kSourceBindings, kSourceBindingsKeys, kSpoofedDrops, kSpoofedSourceAction,
  kIpv4Lpm, kIpv4LpmKeys, kDropAction,
  kClockOverride, kClockOverrideKeys, kClockInject,
  kRandomHook, kRandomOverride, kRandomOverrideKeys, kRandomInject,
  kSketchConfig, kSketchConfigKeys,
  kUpdatePorts, kUpdatePortsKeys, kAcceptUpdate,
  kSpiePort, kSpiePortKeys, kSetSpie,
  kLogRes, kLogResKeys, kLogCount, kLogCountKeys, kLogSumsq, kLogSumsqKeys,
  kRow0, kRow1, kRow2, kMCount, kSumsq, kProb, kState, kCongested,
  kLargeFlowDrops, kRandomDrops, kRejectedUpdates,
  kIngressResult, kUndoDigest,
  kQueueOverride, kQueueOverrideKeys, kQueueInject, kTofino2,
  kPiPort, kPiPortKeys, kSetPi,
  kAlphaHi, kAlphaHiKeys, kAlphaLo, kAlphaLoKeys, kBetaHi, kBetaHiKeys, kBetaLo, kBetaLoKeys,
  kLastUpdateTicks, kDelOld, kPiProb, kPiUpdates,
  kEgressResult, kEgressMirror,
  kSlots
};

constexpr uint64_t kSign = 0x80000000ull;
constexpr uint64_t kEpochWindow = 1ull << 16;
constexpr uint64_t kCountCap = 0xFFFF;
constexpr uint64_t kRandom31 = 0x7FFFFFFF;
constexpr uint8_t kFeedbackTypeSpieState = 5;
constexpr uint8_t kPktTypeMirrorSpie = 5;
constexpr int kModeNone = 0, kModeSpie = 2;
constexpr uint64_t kBridgedIdle = 1;
constexpr size_t kAqmBridgedBytes = 8;
constexpr int kSketchColumns = 4096, kSlotsPerPort = 256, kPorts = 512;

// The three rows' CRC-16s (spie.py crc16_reflected), a byte at a time.
struct CrcTables {
  uint16_t t[3][256];
  CrcTables() {
    const uint16_t polys[3] = {0xA001, 0x8408, 0xA6BC};
    for (int r = 0; r < 3; ++r) {
      for (int b = 0; b < 256; ++b) {
        uint16_t crc = static_cast<uint16_t>(b);
        for (int i = 0; i < 8; ++i) crc = (crc & 1) ? (crc >> 1) ^ polys[r] : crc >> 1;
        t[r][b] = crc;
      }
    }
  }
  uint16_t crc(int row, const uint8_t* data, size_t n) const {
    uint16_t c = 0;
    for (size_t i = 0; i < n; ++i) c = (c >> 8) ^ t[row][(c ^ data[i]) & 0xFF];
    return c;
  }
};

inline bool TaggedInsert(RegisterCells& reg, Py_ssize_t i, uint64_t epoch_base, bool counted,
                         uint64_t* out) {
  uint64_t c;
  if (!reg.read(i, &c)) return false;
  const uint64_t d = (c - epoch_base) & kU32;
  if (d >= kEpochWindow) {
    *out = 0;
    return reg.write(i, (epoch_base + 1) & kU32);
  }
  *out = d;
  if (counted && d < kCountCap) return reg.write(i, (c + 1) & kU32);
  return true;
}

inline bool TaggedUndo(RegisterCells& reg, Py_ssize_t i, uint64_t undo_base, uint64_t* out) {
  uint64_t c;
  if (!reg.read(i, &c)) return false;
  const uint64_t d = (c - undo_base) & kU32;
  *out = d;
  if (d < kCountCap) return reg.write(i, (c - 1) & kU32);
  return true;
}

// The ingress pass's result and digest as Spie.ingress_pass returns them.
inline PyObject* Pass(PyObject* result, PyObject* digest) {
  if (result == nullptr) {
    Py_XDECREF(digest);
    return nullptr;
  }
  return Py_BuildValue("(NN)", result, digest);
}

inline PyObject* Drop(PyObject* binding) { return IngressDropped(B(binding, kIngressResult)); }

inline PyObject* Digest(PyObject* binding, uint64_t sum_added, uint64_t epoch_base) {
  Ref a(PyLong_FromUnsignedLongLong(sum_added));
  Ref b(PyLong_FromUnsignedLongLong(epoch_base));
  if (!a || !b) return nullptr;
  PyObject* args[] = {a.get(), b.get()};
  return PyObject_Vectorcall(B(binding, kUndoDigest), args, 2, nullptr);
}

inline int LookupLog(PyObject* binding, Slot table, Slot keys, uint64_t value, uint64_t* log16) {
  uint64_t key[] = {value};
  Hit r(B(binding, table), B(binding, keys), key);
  if (!r.ok()) return -1;
  return Field(r, "log16", log16);
}

// Spie.ingress_pass(ig_intr_md, data, digest): (result, digest or None), or
// None when the model must run the packet.
PyObject* IngressPass(PyObject* binding, PyObject* ig, PyObject* frame, PyObject* digest) {
  static const CrcTables crcs;
  static PyObject* const kTstamp = FieldName("ingress_mac_tstamp_ns");
  static PyObject* const kRng = FieldName("rng");
  static PyObject* const kGetrandbits = FieldName("getrandbits");
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  uint64_t in_port, mac_tstamp;
  const int args = IngressArgs(ig, kTstamp, &in_port, &mac_tstamp);
  if (args <= 0) return args < 0 ? nullptr : Defer();
  const bool resubmitted = digest != Py_None;
  uint64_t undo_sum = 0, undo_base = 0;
  if (resubmitted) {
    if (!PyTuple_Check(digest) || PyTuple_GET_SIZE(digest) != 2 ||
        !PlainU64(PyTuple_GET_ITEM(digest, 0), &undo_sum) ||
        !PlainU64(PyTuple_GET_ITEM(digest, 1), &undo_base))
      return Defer();
  }
  Parsed h;
  if (!ParseHeaders(p, len, 0, &h)) return Defer();  // the parser's drop, the model's

  // Everything the model would refuse, before any state changes (the
  // random draw included): a port no counter has, a column or slot outside
  // its register.
  if (in_port >= kPorts) return Defer();
  const int sized = Sized(binding, {{kUntrustedDrops, kPorts}, {kSpoofedDrops, kPorts},
                                    {kLargeFlowDrops, kPorts}, {kRandomDrops, kPorts},
                                    {kRejectedUpdates, kPorts}});
  if (sized <= 0) return sized < 0 ? nullptr : Defer();
  RegisterCells rows[3] = {RegisterCells(B(binding, kRow0)), RegisterCells(B(binding, kRow1)),
                           RegisterCells(B(binding, kRow2))};
  RegisterCells m_count(B(binding, kMCount)), sumsq(B(binding, kSumsq)),
      prob_reg(B(binding, kProb)), state(B(binding, kState)), congested_reg(B(binding, kCongested));
  for (const RegisterCells* r : {&rows[0], &rows[1], &rows[2]}) {
    if (!r->ok() || r->size() < kSketchColumns) return DeferOrError();
  }
  for (const RegisterCells* r : {&m_count, &sumsq, &prob_reg, &state, &congested_reg}) {
    if (!r->ok() || r->size() < kSlotsPerPort) return DeferOrError();
  }

  // IngressClockHook
  uint64_t now_ticks = (mac_tstamp >> 6) & kU32;
  {
    uint64_t key[] = {in_port};
    uint64_t t = 0;
    const int inject = LookupAction(binding, kClockOverride, kClockOverrideKeys, key,
                                    kClockInject, {{"tstamp_ns", &t}});
    if (inject < 0) return nullptr;
    if (inject) now_ticks = (t >> 6) & kU32;
  }
  const uint64_t arrival_ns = mac_tstamp & kU32;
  uint64_t epoch_mask, column_mask, sample_mask, large_drop;
  {
    Hit r(B(binding, kSketchConfig), B(binding, kSketchConfigKeys), nullptr);
    if (!r.ok() || Field(r, "epoch_mask", &epoch_mask) < 0 ||
        Field(r, "column_mask", &column_mask) < 0 || Field(r, "sample_mask", &sample_mask) < 0 ||
        Field(r, "large_drop", &large_drop) < 0)
      return nullptr;
  }
  // flow_key(): {src, dst, protocol, l4 ports}, zeros where not parsed.
  uint8_t key[13] = {0};
  if (h.ipv4) {
    std::memcpy(key, p + h.ipv4_off + 12, 8);
    key[8] = p[h.ipv4_off + 9];
    if (h.tcp || h.udp) std::memcpy(key + 9, p + h.l4_off, 4);
  }
  uint64_t hash[3];
  for (int r = 0; r < 3; ++r) {
    hash[r] = crcs.crc(r, key, sizeof key) & column_mask;
    if (hash[r] >= static_cast<uint64_t>(rows[r].size())) return Defer();
  }
  const uint64_t epoch_base = now_ticks & epoch_mask;

  // IngressRandomHook: a draw per arrival (none on the second pass).
  uint64_t random = 0;
  if (!resubmitted) {
    Ref rng(PyObject_GetAttr(B(binding, kRandomHook), kRng));
    if (!rng) return nullptr;
    Ref bits(PyLong_FromLong(32));
    Ref drawn(bits ? PyObject_CallMethodOneArg(rng.get(), kGetrandbits, bits.get()) : nullptr);
    if (!drawn || !AsU64(drawn.get(), &random)) return nullptr;
    random &= kRandom31;
    uint64_t k[] = {in_port};
    const int inject = LookupAction(binding, kRandomOverride, kRandomOverrideKeys, k,
                                    kRandomInject, {{"random_value", &random}});
    if (inject < 0) return nullptr;
    if (inject) random &= kRandom31;
  }
  const bool counted = (random & sample_mask) == 0;

  const int forged = TrustApply(B(binding, kTrustedPorts), B(binding, kTrustedPortsKeys),
                                B(binding, kUntrustedDrops), h, in_port, len);
  if (forged < 0) return nullptr;
  const int spoofed =
      forged ? 0
             : GuardApply(B(binding, kSourceBindings), B(binding, kSourceBindingsKeys),
                          B(binding, kSpoofedDrops), B(binding, kSpoofedSourceAction), h, p,
                          in_port, len);
  if (spoofed < 0) return nullptr;

  int mode = kModeNone;
  uint64_t slot = 0, stale_before = 0;
  bool update_port = false;
  uint64_t next_update_port = 0;
  {
    uint64_t k[] = {in_port};
    Hit r(B(binding, kUpdatePorts), B(binding, kUpdatePortsKeys), k);
    if (!r.ok()) return nullptr;
    const int accept = r.is(B(binding, kAcceptUpdate));
    if (accept < 0) return nullptr;
    update_port = accept == 1;
    if (update_port && Field(r, "next_port", &next_update_port) < 0) return nullptr;
  }
  bool drop = false;
  uint64_t egress_port = 0;
  Route route;
  const uint8_t* fb = h.feedback ? p + h.end - kFeedbackBytes : nullptr;
  if (forged) {
    drop = true;
  } else if (fb != nullptr && (fb[0] & 0x0F) == kFeedbackTypeSpieState) {
    const Py_ssize_t s = fb[2];  // class_id & 0xFF
    if (update_port) {
      const uint64_t rate = Be32(fb + 8), target = Be32(fb + 12);
      if (!prob_reg.write(s, rate) || !state.write(s, target) ||
          !congested_reg.write(s, fb[4] == 1 ? target : 0))
        return nullptr;
      // The ring round the pipes: on to the next pipe's recirculation port
      // until that is where the update started.
      if (next_update_port == (Be16(fb + 6) & 0x1FFu)) {
        drop = true;
      } else {
        egress_port = next_update_port;
      }
    } else {
      drop = true;
      if (Count(B(binding, kRejectedUpdates), in_port, len) < 0)
        return nullptr;
    }
  } else if (spoofed) {
    drop = true;
  } else {
    if (ForwardApply(B(binding, kIpv4Lpm), B(binding, kIpv4LpmKeys), B(binding, kDropAction), h, p,
                     &route) < 0)
      return nullptr;
    drop = route.drop;
    egress_port = route.drop ? 0 : route.port;
    uint64_t k[] = {egress_port};
    Hit r(B(binding, kSpiePort), B(binding, kSpiePortKeys), k);
    if (!r.ok()) return nullptr;
    const int set = r.is(B(binding, kSetSpie));
    if (set < 0) return nullptr;
    if (set) {
      uint64_t m, minus_stale;
      if (Field(r, "slot", &slot) < 0 || Field(r, "mode", &m) < 0 ||
          Field(r, "minus_stale_ticks", &minus_stale) < 0)
        return nullptr;
      if (slot >= kSlotsPerPort) {
        PyErr_SetString(PyExc_RuntimeError, "spie_port: slot beyond the registers");
        return nullptr;
      }
      mode = static_cast<int>(m);
      stale_before = (now_ticks + minus_stale) & kU32;
    }
  }

  uint64_t row[3] = {0, 0, 0};
  if (resubmitted) {
    uint64_t ignored;
    for (int r = 0; r < 3; ++r) {
      if (!TaggedUndo(rows[r], static_cast<Py_ssize_t>(hash[r]), undo_base, &ignored))
        return nullptr;
    }
    row[0] = undo_sum;  // undo_amount()
  } else if (!forged && !spoofed && h.ipv4) {
    for (int r = 0; r < 3; ++r) {
      if (!TaggedInsert(rows[r], static_cast<Py_ssize_t>(hash[r]), epoch_base, counted, &row[r]))
        return nullptr;
    }
  }
  uint64_t prob = 0, m_count_before = 0, sumsq_before = 0;
  int fresh = 0, congested = 0;
  bool idle = false;
  if (mode != kModeNone) {
    const Py_ssize_t s = static_cast<Py_ssize_t>(slot);
    uint64_t st, c;
    if (!prob_reg.read(s, &prob) || !state.read(s, &st) || !congested_reg.read(s, &c))
      return nullptr;
    fresh = ((stale_before - st) & kU32) < kSign ? 0 : 1;
    congested = c == 0 ? 0 : (((stale_before - c) & kU32) < kSign ? 0 : 1);
    idle = fresh == 0;  // mark_idle()
    if (resubmitted) {
      if (!TaggedUndo(m_count, s, undo_base, &m_count_before)) return nullptr;
      if (m_count_before < kCountCap) {  // sumsq_undo
        uint64_t v;
        if (!sumsq.read(s, &v) || !sumsq.write(s, v >= row[0] ? v - row[0] : 0)) return nullptr;
      }
    } else {
      if (!TaggedInsert(m_count, s, epoch_base, counted, &m_count_before)) return nullptr;
      if (!sumsq.read(s, &sumsq_before)) return nullptr;  // sumsq_add
      if (m_count_before == 0) {
        if (!sumsq.write(s, counted ? row[0] : 0)) return nullptr;
      } else if (counted && m_count_before < kCountCap) {
        if (!sumsq.write(s, std::min(sumsq_before + row[0], kU32))) return nullptr;
      }
    }
  }
  const uint64_t prob_margin = (random - prob) & kU32;
  const uint64_t large_drop_margin = (random - large_drop) & kU32;
  const uint64_t m_before = std::min(std::min(row[0], row[1]), row[2]);
  const bool sketch_mode = mode >> 1 == 1;
  const bool spie_congested = sketch_mode && congested == 1;
  uint64_t large_margin = 0;
  if (spie_congested && !resubmitted) {  // large_test()
    uint64_t log_count, log_sumsq, log_res;
    if (LookupLog(binding, kLogCount, kLogCountKeys, m_count_before, &log_count) < 0 ||
        LookupLog(binding, kLogSumsq, kLogSumsqKeys, sumsq_before, &log_sumsq) < 0 ||
        LookupLog(binding, kLogRes, kLogResKeys, m_before, &log_res) < 0)
      return nullptr;
    const uint64_t log_threshold = (log_sumsq - log_count) & 0xFFFF;
    large_margin = (log_res - log_threshold) & 0xFFFF;
  }
  const bool undo = sketch_mode && counted;
  if (resubmitted) {
    drop = true;  // drop_undone()
  } else if (spie_congested && large_margin >> 15 == 0 && large_drop_margin >> 31 == 1) {
    if (Count(B(binding, kLargeFlowDrops), egress_port, len) < 0)
      return nullptr;
    if (undo) return Pass(Drop(binding), Digest(binding, row[0], epoch_base));  // undo_large()
    drop = true;
  } else if (mode == kModeSpie && congested == 1) {
    // a small flow while congested: admitted
  } else if (mode != kModeNone && fresh == 1 && prob_margin >> 31 == 1) {
    if (Count(B(binding, kRandomDrops), egress_port, len) < 0)
      return nullptr;
    if (undo) return Pass(Drop(binding), Digest(binding, row[0], epoch_base));  // undo_random()
    drop = true;
  }
  if (drop) {
    Py_INCREF(Py_None);
    return Pass(Drop(binding), Py_None);
  }
  // emit(bridged, aqm_bridged, ethernet, ipv4, tcp, udp, feedback) + payload
  const size_t head = kBridgedBytes + kAqmBridgedBytes;
  Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(head + len)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  PutBridged(o, in_port, p);
  if (idle) Put16(o + 1, kBridgedIdle);
  o[17] = static_cast<uint8_t>(now_ticks >> 24);
  o[18] = static_cast<uint8_t>(now_ticks >> 16);
  o[19] = static_cast<uint8_t>(now_ticks >> 8);
  o[20] = static_cast<uint8_t>(now_ticks);
  o[21] = static_cast<uint8_t>(arrival_ns >> 24);
  o[22] = static_cast<uint8_t>(arrival_ns >> 16);
  o[23] = static_cast<uint8_t>(arrival_ns >> 8);
  o[24] = static_cast<uint8_t>(arrival_ns);
  std::memcpy(o + head, p, len);
  if (!route.drop) RouteRewrite(o + head, h.ipv4_off, route);
  Ref port(PyLong_FromUnsignedLongLong(egress_port));
  if (!port) return nullptr;
  PyObject* result =
      MakeIngressResult(B(binding, kIngressResult), Py_False, port.get(), Zero(), out.get());
  Py_INCREF(Py_None);
  return Pass(result, Py_None);
}

// Spie.egress(eg_intr_md, data): the result, or None when the model must run it.
PyObject* Egress(PyObject* binding, PyObject* md, PyObject* frame) {
  static PyObject* const names[] = {FieldName("egress_port"), FieldName("deq_timedelta"),
                                    FieldName("global_tstamp_ns")};
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  const size_t head = kBridgedBytes + kAqmBridgedBytes;
  // A PI step's mirrored copy (rare) is the model's; so is a frame its
  // parser rejects.
  if (len < head || p[0] == kPktTypeMirrorSpie) return Defer();
  Parsed h;
  if (!ParseHeaders(p, len, head, &h)) return Defer();
  uint64_t port, deq_timedelta, tstamp;
  uint64_t* const values[] = {&port, &deq_timedelta, &tstamp};
  for (int k = 0; k < 3; ++k) {
    const int got = AttrU64(md, names[k], values[k]);
    if (got < 0) return nullptr;
    if (got == 0) return Defer();
  }
  const int has = CounterHas(B(binding, kPiUpdates), port);
  if (has <= 0) return DeferOrError();
  RegisterCells last_update(B(binding, kLastUpdateTicks)), del_old(B(binding, kDelOld)),
      pi_prob(B(binding, kPiProb));
  for (const RegisterCells* r : {&last_update, &del_old, &pi_prob}) {
    if (!r->ok() || r->size() < kSlotsPerPort) return DeferOrError();
  }
  const uint64_t now_ticks = Be32(p + kBridgedBytes);
  const uint64_t arrival_ns = Be32(p + kBridgedBytes + 4);
  uint64_t sojourn_ns = 0;
  bool active = false;
  uint64_t slot = 0, session = 0, del_ref = 0, congested_from = 0, due_before = 0;
  if (h.ipv4 && !h.feedback) {
    // TimestampQueueHook
    {
      uint64_t key[] = {port};
      const int inject = LookupAction(binding, kQueueOverride, kQueueOverrideKeys, key,
                                      kQueueInject, {{"sojourn_ns", &sojourn_ns}});
      if (inject < 0) return nullptr;
      if (!inject) {
        sojourn_ns = PyObject_IsTrue(B(binding, kTofino2)) ? deq_timedelta
                                                             : (tstamp - arrival_ns) & kU32;
      }
    }
    uint64_t key[] = {port};
    Hit r(B(binding, kPiPort), B(binding, kPiPortKeys), key);
    if (!r.ok()) return nullptr;
    const int set = r.is(B(binding, kSetPi));
    if (set < 0) return nullptr;
    if (set) {
      uint64_t minus_t_update;
      if (Field(r, "slot", &slot) < 0 || Field(r, "session", &session) < 0 ||
          Field(r, "del_ref_ns_shr10", &del_ref) < 0 ||
          Field(r, "congested_from_ns_shr10", &congested_from) < 0 ||
          Field(r, "minus_t_update_ticks", &minus_t_update) < 0)
        return nullptr;
      if (slot >= kSlotsPerPort || sojourn_ns > kU32) return Defer();
      active = true;
      due_before = (now_ticks + minus_t_update) & kU32;
    }
  }
  const Py_ssize_t s = static_cast<Py_ssize_t>(slot);
  bool tick = false;
  if (active) {  // tick_check
    uint64_t last;
    if (!last_update.read(s, &last)) return nullptr;
    if (((due_before - last) & kU32) < kSign) {
      if (!last_update.write(s, now_ticks)) return nullptr;
      tick = true;
    }
  }
  const uint64_t del_cur = sojourn_ns >> 10;
  const uint64_t step_ticks = (now_ticks + (sojourn_ns >> 6)) & kU32;
  uint64_t del_old_value = 0;
  if (tick) {  // del_old_swap
    if (!del_old.read(s, &del_old_value) || !del_old.write(s, del_cur)) return nullptr;
  }
  const uint64_t d_ref = (del_cur - del_ref) & kU32;
  const uint64_t d_old = (del_cur - del_old_value) & kU32;
  const uint64_t congested_margin = (del_cur - congested_from) & kU32;
  Ref mirror(Defer());
  if (tick) {
    // pi_terms(): alpha on d_ref, beta on d_old, each a hi and a lo part.
    const Slot tables[4][2] = {{kAlphaHi, kAlphaHiKeys}, {kAlphaLo, kAlphaLoKeys},
                               {kBetaHi, kBetaHiKeys}, {kBetaLo, kBetaLoKeys}};
    uint64_t term[4], minus[4];
    for (int t = 0; t < 4; ++t) {
      uint64_t key[] = {t < 2 ? d_ref : d_old};
      Hit r(B(binding, tables[t][0]), B(binding, tables[t][1]), key);
      if (!r.ok() || Field(r, "term", &term[t]) < 0 || Field(r, "minus_term", &minus[t]) < 0)
        return nullptr;
    }
    const uint64_t delta = (((term[0] + term[1]) & kU32) + ((term[2] + term[3]) & kU32)) & kU32;
    const uint64_t minus_delta =
        (((minus[0] + minus[1]) & kU32) + ((minus[2] + minus[3]) & kU32)) & kU32;
    // prob_step(): after an idle spell from 0.
    uint64_t prob = 0;
    if (Be16(p + 1) != kBridgedIdle && !pi_prob.read(s, &prob)) return nullptr;
    prob = (delta >> 31 == 1) ? (prob >= minus_delta ? prob - minus_delta : 0)
                              : std::min(prob + delta, kU32);
    if (!pi_prob.write(s, prob)) return nullptr;
    const uint64_t mirror_congested = congested_margin >> 31 == 1 ? 0 : 1;
    if (Count(B(binding, kPiUpdates), port, len) < 0) return nullptr;
    // SpieMirror(PKT_TYPE_MIRROR_SPIE, slot, congested, 0, prob, step_ticks)
    uint8_t m[12] = {kPktTypeMirrorSpie, static_cast<uint8_t>(slot),
                     static_cast<uint8_t>(mirror_congested), 0};
    Put32(m + 4, prob);
    Put32(m + 8, step_ticks);
    Ref header(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(m), sizeof m));
    Ref sid(PyLong_FromUnsignedLongLong(session));
    if (!header || !sid) return nullptr;
    PyObject* args[] = {sid.get(), header.get()};
    mirror.reset(PyObject_Vectorcall(B(binding, kEgressMirror), args, 2, nullptr));
    if (!mirror) return nullptr;
  }
  // SwitchEgressDeparser: the frame behind the two bridged headers.
  return EgressDeparsed(B(binding, kEgressResult), p, len, h, -1, false, mirror.get(), head);
}

PyObject* IngressStep(PyObject* const* a) { return IngressPass(a[0], a[1], a[2], a[3]); }
PyObject* EgressStep(PyObject* const* a) { return Egress(a[0], a[1], a[2]); }

PyObject* Functions() { return Entries<kSlots, 4, IngressStep, EgressStep>::Functions(); }

}  // namespace spie
}  // namespace tofcc_native
