// SPDX-FileCopyrightText: 2026 The tofino-cc authors
// SPDX-License-Identifier: Apache-2.0
//
// models/switch/pmqecn.py's ingress and egress, compiled: the same tables,
// registers, counters and decisions in the same order, on the model's own
// objects (pyobj.hpp). A mirrored feedback copy reaching egress is rare (one
// per class per feedback interval at most) and goes to the model, which
// rebuilds it. Read it beside the Python; tests/test_native_cores.py holds
// the two to the same bytes and state on every vector and on random frames.
#include <algorithm>

#include "controls.hpp"

namespace tofcc_native {
namespace pmqecn {

// The binding tuple bindings.pmqecn builds, in this order.
enum Slot {
  kTrustedPorts, kTrustedPortsKeys, kUntrustedDrops,
  kSourceBindings, kSourceBindingsKeys, kSpoofedDrops, kSpoofedSourceAction,
  kIpv4Lpm, kIpv4LpmKeys, kDropAction,
  kClockOverride, kClockOverrideKeys, kClockInject,
  kClassify, kClassifyKeys, kSetClass, kClassCounters,
  kFeedbackSession, kFeedbackSessionKeys, kSetFeedbackSession,
  kVqWeight, kVqWeightKeys, kWrr, kVqUsed, kVqLevel,
  kWrrLevelQueue, kWrrLevelQueueKeys, kSetPriorityQueue,
  kVqLastTick, kClassArrivals, kEcnThreshold, kEcnThresholdKeys, kSetThreshold,
  kVqLogElapsed, kVqLogElapsedKeys, kLogElapsed, kVqExpDrain, kVqExpDrainKeys,
  kVqBytes, kClassRates, kClassRatesKeys, kFeedbackGate,
  kIngressResult, kIngressMirror,
  kQueueOverride, kQueueOverrideKeys, kQueueInject,
  kSojournEpoch, kSojournEpochKeys, kSojournSampling, kSojournSamplingKeys,
  kSojournSum0, kSojournSum1, kSojournPkts0, kSojournPkts1,
  kFeedbackRebuilt, kEgressResult,
  kSlots
};
static_assert(static_cast<int>(kTrustedPorts) == kSharedTrustedPorts &&
                  static_cast<int>(kDropAction) == kSharedDropAction,
              "the binding starts with _shared_ingress's objects");

constexpr uint64_t kPorts = 512;
constexpr uint64_t kClasses = 1024;  // PMQECN_CLASSES = PMQECN_VQS
constexpr uint64_t kSlotMask = kClasses - 1;
constexpr uint64_t kSign = 1ull << 31;
constexpr uint64_t kVqCapBytes = 0x3FFFC000;
constexpr uint64_t kNoThreshold = 0x7FFFFFFF;
constexpr int kPipeShift = 7;
constexpr uint8_t kPktTypeMirrorFeedback = 2;
constexpr uint8_t kFeedbackTypePmqecnRate = 1;

inline uint64_t SatAdd(uint64_t a, uint64_t b) { return std::min(a + std::min(b, kU32), kU32); }
inline uint64_t SatSub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }


// What the ingress decided for the mirror copy (IgMd's fb_* fields).
struct Feedback {
  bool mirror = false;
  uint64_t session = 0, queue_id = 0, rate = 0, target_rate = 0;
};

// virtual_queue(): the class's virtual queue, the arrival-time mark and the
// feedback gate. `ecn` is the header's ECN as the deparser will emit it.
int VirtualQueue(PyObject* binding, uint64_t cls, uint64_t in_port, uint64_t now_ticks,
                 uint64_t frame_bytes, bool ipv4_plain, bool session_on, int* ecn,
                 Feedback* fb) {
  const Py_ssize_t slot = static_cast<Py_ssize_t>(cls & kSlotMask);
  RegisterCells last_tick(B(binding, kVqLastTick)), arrivals(B(binding, kClassArrivals));
  RegisterCells vq_bytes(B(binding, kVqBytes)), gate(B(binding, kFeedbackGate));
  uint64_t last, count;
  if (!last_tick.read(slot, &last) || !last_tick.write(slot, now_ticks)) return -1;
  const uint64_t elapsed = (now_ticks - last) & kU32;
  if (!arrivals.read(slot, &count) || !arrivals.write(slot, (count + 1) & kU32)) return -1;
  uint64_t threshold = kNoThreshold, mark_original = 0, rate_log2_q7 = 0, interval = 0;
  {
    uint64_t key[] = {cls, (in_port >> kPipeShift) & 3};
    const int set = LookupAction(binding, kEcnThreshold, kEcnThresholdKeys, key, kSetThreshold,
                                 {{"threshold_bytes", &threshold},
                                  {"mark_original", &mark_original},
                                  {"rate_log2_q7", &rate_log2_q7},
                                  {"feedback_interval_ticks", &interval}});
    if (set < 0) return -1;
    if (set == 0) threshold = kNoThreshold, mark_original = rate_log2_q7 = interval = 0;
  }
  const uint64_t wait = SatSub(interval, elapsed);
  uint64_t log_drain = 0;
  {
    uint64_t key[] = {elapsed};
    uint64_t log_elapsed = 0;
    const int set = LookupAction(binding, kVqLogElapsed, kVqLogElapsedKeys, key, kLogElapsed,
                                 {{"log_elapsed_q7", &log_elapsed}});
    if (set < 0) return -1;
    if (set) log_drain = (log_elapsed + rate_log2_q7) & 0xFFFF;
  }
  uint64_t drain_bytes = 0;
  {
    uint64_t key[] = {log_drain};
    Hit r(B(binding, kVqExpDrain), B(binding, kVqExpDrainKeys), key);
    if (!r.ok() || Field(r, "drain_bytes", &drain_bytes) < 0) return -1;
  }
  const uint64_t shrink = (drain_bytes - frame_bytes) & kU32;
  uint64_t q;
  if (!vq_bytes.read(slot, &q)) return -1;
  if (shrink & kSign) {  // vq_grow
    if (q < kVqCapBytes) {
      q = (q - shrink) & kU32;
      if (!vq_bytes.write(slot, q)) return -1;
    }
  } else {  // vq_shrink
    q = SatSub(q, shrink);
    if (!vq_bytes.write(slot, q)) return -1;
  }
  const bool over = ((threshold - q) & kU32) & kSign;
  if (over && mark_original == 1 && *ecn != 0) *ecn = 3;
  // feedback_gate: (quiet, made), quiet in the high half.
  uint64_t g;
  if (!gate.read(slot, &g)) return -1;
  uint64_t quiet = g >> 32, made = g & kU32;
  if (over && ipv4_plain && session_on) {
    uint64_t key[] = {cls};
    Hit r(B(binding, kClassRates), B(binding, kClassRatesKeys), key);
    if (!r.ok() || Field(r, "rate", &fb->rate) < 0 ||
        Field(r, "target_rate", &fb->target_rate) < 0)
      return -1;
    if (quiet >= wait) {
      quiet = 0;
      made = (made + 1) & kU32;
      fb->mirror = true;
    } else {
      quiet = SatAdd(quiet, elapsed);
    }
  } else {
    quiet = SatAdd(quiet, elapsed);
  }
  return gate.write(slot, quiet << 32 | made) ? 0 : -1;
}

// The ingress's WRR emulation (vq_used, vq_level, wrr_level_queue): the
// queue a class with a wrr entry goes to, in `qid`.
int Wrr(PyObject* binding, uint64_t vq_id, uint64_t* qid, uint64_t* fb_queue_id) {
  uint64_t weight = 0, last_level = 0;
  {
    uint64_t key[] = {vq_id};
    const int set = LookupAction(binding, kVqWeight, kVqWeightKeys, key, kWrr,
                                 {{"weight", &weight}, {"last_level", &last_level}}, true);
    if (set <= 0) return set;
  }
  RegisterCells used_reg(B(binding, kVqUsed)), level_reg(B(binding, kVqLevel));
  const Py_ssize_t i = static_cast<Py_ssize_t>(vq_id);
  uint64_t used, level;
  if (!used_reg.read(i, &used) || !level_reg.read(i, &level)) return -1;
  bool advance = false;
  if (used >= weight) {
    used = 1;
    advance = true;
  } else {
    used = (used + 1) & 0xFFFF;
  }
  if (advance) level = level >= last_level ? 0 : (level + 1) & 0xFF;
  if (!used_reg.write(i, used) || !level_reg.write(i, level)) return -1;
  uint64_t key[] = {level};
  const int set = LookupAction(binding, kWrrLevelQueue, kWrrLevelQueueKeys, key,
                               kSetPriorityQueue, {{"qid", qid}});
  if (set < 0) return -1;
  if (set) *fb_queue_id = *qid & 0xFF;
  return 0;
}

// Every register a packet may index holds all 1,024 classes (else the model
// runs the packet): 1, 0, or -1 (error set).
int IngressSized(PyObject* binding) {
  return Sized(binding, {{kUntrustedDrops, kPorts}, {kSpoofedDrops, kPorts},
                         {kClassCounters, kClasses}},
               {{kVqUsed, kClasses}, {kVqLevel, kClasses}, {kVqLastTick, kClasses},
                {kClassArrivals, kClasses}, {kVqBytes, kClasses}, {kFeedbackGate, kClasses}});
}

// ingress(ig_intr_md, data): the result, or None when the model must run it.
PyObject* Ingress(PyObject* binding, PyObject* ig, PyObject* frame) {
  static PyObject* const kTstamp = FieldName("ingress_mac_tstamp_ns");
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  uint64_t in_port, mac_tstamp;
  const int args = IngressArgs(ig, kTstamp, &in_port, &mac_tstamp);
  if (args <= 0) return args < 0 ? nullptr : Defer();
  Parsed h;
  if (!ParseHeaders(p, len, 0, &h)) return Defer();  // the parser's drop, the model's
  if (in_port >= kPorts) return Defer();
  const int sized = IngressSized(binding);
  if (sized <= 0) return sized < 0 ? nullptr : Defer();

  // IngressClockHook
  uint64_t now_ticks = (mac_tstamp >> 6) & kU32;
  {
    uint64_t key[] = {in_port}, t = 0;
    const int inject = LookupAction(binding, kClockOverride, kClockOverrideKeys, key,
                                    kClockInject, {{"tstamp_ns", &t}});
    if (inject < 0) return nullptr;
    if (inject) now_ticks = (t >> 6) & kU32;
  }
  const uint8_t* ip = h.ipv4 ? p + h.ipv4_off : nullptr;
  const uint64_t frame_bytes = (ip ? Be16(ip + 2) : 0) + kEthernetBytes;

  const int guarded = HostGuards(binding, h, p, in_port, len);
  if (guarded < 0) return nullptr;
  if (guarded) return IngressDropped(B(binding, kIngressResult));
  Route route;
  if (Forward(binding, h, p, &route) < 0) return nullptr;

  uint64_t qid = 0, class_id = 0;
  int ecn = ip ? ip[1] & 3 : 0;
  Feedback fb;
  if (h.ipv4 && !h.feedback) {
    uint64_t vq_id = 0;
    {
      uint64_t key[] = {Be32(ip + 12), Be32(ip + 16), static_cast<uint64_t>(ip[1] >> 2), ip[9]};
      const int set = LookupAction(binding, kClassify, kClassifyKeys, key, kSetClass,
                                   {{"class_id", &class_id}, {"vq_id", &vq_id}, {"qid", &qid}});
      if (set < 0) return nullptr;
      if (set) {
        fb.queue_id = qid & 0xFF;
        // Indices the model would refuse: its to name.
        if (class_id > 0xFFFF || vq_id >= kClasses) return Defer();
      }
    }
    // Counted where it is classified, whether or not routing dropped it.
    if (Count(B(binding, kClassCounters), class_id & kSlotMask, len) < 0) return nullptr;
    bool session_on;
    {
      uint64_t key[] = {in_port};
      const int set = LookupAction(binding, kFeedbackSession, kFeedbackSessionKeys, key,
                                   kSetFeedbackSession, {{"session_id", &fb.session}});
      if (set < 0) return nullptr;
      session_on = set == 1;
    }
    if (Wrr(binding, vq_id, &qid, &fb.queue_id) < 0) return nullptr;
    const bool ipv4_plain = (ip[0] & 0x0F) == 5 && (Be16(ip + 6) & 0x1FFF) == 0;
    if (class_id != 0 && VirtualQueue(binding, class_id, in_port, now_ticks, frame_bytes,
                                      ipv4_plain, session_on, &ecn, &fb) < 0)
      return nullptr;
  }
  Ref mirror(Defer());
  if (fb.mirror) {
    // FbMirror, packed: the message the egress rebuilds into feedback.
    uint8_t m[kFbMirrorBytes] = {kPktTypeMirrorFeedback};
    Put16(m + 1, class_id);
    m[3] = static_cast<uint8_t>(fb.queue_id);
    m[4] = ip[9];                                             // flow_protocol
    if (h.tcp || h.udp) std::memcpy(m + 5, p + h.l4_off, 4);  // flow ports
    Put32(m + 9, fb.rate);
    Put32(m + 13, fb.target_rate);
    std::memcpy(m + 17, p + 6, 6);  // orig_src_mac
    std::memcpy(m + 23, p + 0, 6);  // orig_dst_mac
    Ref header(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(m), kFbMirrorBytes));
    Ref sid(PyLong_FromUnsignedLongLong(fb.session));
    if (!header || !sid) return nullptr;
    PyObject* args[] = {sid.get(), header.get()};
    mirror.reset(PyObject_Vectorcall(B(binding, kIngressMirror), args, 2, nullptr));
    if (!mirror) return nullptr;
  }
  // drop_ctl = 1 leaves the mirror copy alone (TNA).
  if (route.drop) return IngressDropped(B(binding, kIngressResult), mirror.get());
  // emit(bridged, ethernet, ipv4, tcp, udp, feedback) + payload: the frame
  // behind the bridged header, its MACs, TTL and ECN rewritten.
  Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(kBridgedBytes + len)));
  if (!out) return nullptr;
  auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
  PutBridged(o, in_port, p);
  Put16(o + 1, class_id);
  std::memcpy(o + kBridgedBytes, p, len);
  RouteRewrite(o + kBridgedBytes, h.ipv4_off, route);
  uint8_t* oip = o + kBridgedBytes + h.ipv4_off;
  oip[1] = static_cast<uint8_t>((oip[1] & 0xFC) | ecn);
  Ref egress_port(PyLong_FromUnsignedLongLong(route.port));
  Ref queue(PyLong_FromUnsignedLongLong(qid));
  if (!egress_port || !queue) return nullptr;
  return MakeIngressResult(B(binding, kIngressResult), Py_False, egress_port.get(), queue.get(),
                           out.get(), mirror.get());
}

// egress(eg_intr_md, data): the result, or None when the model must run it.
PyObject* Egress(PyObject* binding, PyObject* md, PyObject* frame) {
  const auto* p = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(frame));
  const size_t len = PyBytes_GET_SIZE(frame);
  if (len == 0) return Defer();  // the parser's error, the model's to raise
  if (p[0] == kPktTypeMirrorFeedback) {
    // A mirrored feedback copy: rebuilt into the feedback packet.
    constexpr size_t kHead = kFbMirrorBytes + kEthernetBytes + kIpv4Bytes;
    if (len < kHead) return Defer();
    const uint64_t slot = Be16(p + 1) & kSlotMask;
    const int known = CounterHas(B(binding, kFeedbackRebuilt), kClasses - 1);
    if (known <= 0) return known < 0 ? nullptr : Defer();
    if (Count(B(binding, kFeedbackRebuilt), slot, len) < 0) return nullptr;
    const size_t out_len = kFeedbackFrameBytes + (len - kHead);
    Ref out(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(out_len)));
    if (!out) return nullptr;
    auto* o = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out.get()));
    FeedbackRebuild(p, kFeedbackTypePmqecnRate, o);
    std::memcpy(o + kFeedbackFrameBytes, p + kHead, len - kHead);
    return NewRecord(B(binding, kEgressResult), {Py_False, out.get(), Py_None});
  }
  Parsed h;
  if (len < kBridgedBytes || !ParseHeaders(p, len, kBridgedBytes, &h)) return Defer();
  const uint64_t class_id = Be16(p + 1);
  if (class_id != 0 && !h.feedback) {
    static PyObject* const names[] = {FieldName("egress_port"), FieldName("deq_timedelta")};
    uint64_t port, deq_timedelta;
    uint64_t* const values[] = {&port, &deq_timedelta};
    for (int k = 0; k < 2; ++k) {
      const int got = AttrU64(md, names[k], values[k]);
      if (got < 0) return nullptr;
      if (got == 0) return Defer();
    }
    RegisterCells sums[2] = {RegisterCells(B(binding, kSojournSum0)),
                             RegisterCells(B(binding, kSojournSum1))};
    RegisterCells pkts[2] = {RegisterCells(B(binding, kSojournPkts0)),
                             RegisterCells(B(binding, kSojournPkts1))};
    for (const RegisterCells* r : {&sums[0], &sums[1], &pkts[0], &pkts[1]}) {
      if (!r->ok() || r->size() < static_cast<Py_ssize_t>(kClasses)) return DeferOrError();
    }
    // QueueMetadataHook: only the sojourn is read here.
    uint64_t sojourn_ns = deq_timedelta;
    {
      uint64_t key[] = {port}, depth = 0;
      const int inject = LookupAction(binding, kQueueOverride, kQueueOverrideKeys, key,
                                      kQueueInject,
                                      {{"depth_cells", &depth}, {"sojourn_ns", &sojourn_ns}});
      if (inject < 0) return nullptr;
    }
    uint64_t epoch, sample_mask;
    {
      Hit r(B(binding, kSojournEpoch), B(binding, kSojournEpochKeys), nullptr);
      if (!r.ok() || Field(r, "epoch", &epoch) < 0) return nullptr;
      uint64_t key[] = {class_id};
      Hit s(B(binding, kSojournSampling), B(binding, kSojournSamplingKeys), key);
      if (!s.ok() || Field(s, "sample_mask", &sample_mask) < 0) return nullptr;
    }
    if (epoch > 1) return Defer();
    const Py_ssize_t slot = static_cast<Py_ssize_t>(class_id & kSlotMask);
    uint64_t seen, total;
    if (!pkts[epoch].read(slot, &seen) || !pkts[epoch].write(slot, SatAdd(seen, 1)))
      return nullptr;
    if ((seen & sample_mask) == 0) {
      if (!sums[epoch].read(slot, &total) || !sums[epoch].write(slot, SatAdd(total, sojourn_ns)))
        return nullptr;
    }
  }
  return EgressDeparsed(B(binding, kEgressResult), p, len, h, -1, false);
}

// Both take (binding, intrinsic metadata, data); data that is not bytes is
// the model's to run.
PyObject* IngressStep(PyObject* const* a) { return Ingress(a[0], a[1], a[2]); }
PyObject* EgressStep(PyObject* const* a) { return Egress(a[0], a[1], a[2]); }

PyObject* Functions() { return Entries<kSlots, 3, IngressStep, EgressStep>::Functions(); }

}  // namespace pmqecn
}  // namespace tofcc_native
