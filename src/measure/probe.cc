#include "measure/probe.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/clock.h"

namespace rtpulse::measure {
namespace {

constexpr size_t kStackBytes = 512 * 1024;
constexpr size_t kStackPrefaultBytes = 256 * 1024;
LoopHooks g_hooks;

}  // namespace

void SetLoopHooks(LoopHooks hooks) { g_hooks = hooks; }

int64_t AwaitOrigin(const std::atomic<int64_t>& origin) {
  int64_t value = origin.load(std::memory_order_acquire);
  while (value == 0) {
    origin.wait(0, std::memory_order_acquire);
    value = origin.load(std::memory_order_acquire);
  }
  return value;
}

Probe::Probe(const LatencyPlan& plan, const ThreadPlan& thread, WakePath path, RunShared& shared,
             SampleRing* ring, Tracer* tracer)
    : plan_(plan),
      thread_(thread),
      path_(path),
      shared_(shared),
      ring_(ring),
      tracer_(tracer),
      source_(MakeWakeSource(path)) {
  result_.index = thread.index;
  result_.cpu = path == WakePath::kDeadline ? -1 : thread.cpu;
  result_.policy = path == WakePath::kDeadline ? "deadline" : PolicyName(thread.policy);
  result_.priority = path == WakePath::kDeadline ? 0 : thread.priority;
  result_.interval_ns = thread.interval_ns;
  result_.wake = std::string(WakePathName(path));
  if (plan.linear_histogram_us > 0) {
    results::LinearHistogram linear;
    linear.limit_us = plan.linear_histogram_us;
    linear.counts.assign(static_cast<size_t>(plan.linear_histogram_us), 0);
    linear.overflow_seqs.reserve(static_cast<size_t>(plan.linear_histogram_us));
    result_.linear = std::move(linear);
  }
  if (plan.spike_ns > 0) result_.spikes.reserve(plan.spike_nodes);
  if (ring_ != nullptr) {
    ring_pushed_base_ = ring_->pushed();
    ring_dropped_base_ = ring_->dropped();
  }
}

Probe::~Probe() { Join(); }

Status Probe::Start() {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kStackBytes);
  const int rc = pthread_create(&handle_, &attr, &Probe::ThreadEntry, this);
  pthread_attr_destroy(&attr);
  if (rc != 0) return Failure(fmt::format("cannot start probe thread: {}", std::strerror(rc)));
  started_ = true;
  return Status::Ok();
}

void Probe::Join() {
  if (!started_) return;
  pthread_join(handle_, nullptr);
  started_ = false;
}

void* Probe::ThreadEntry(void* self) {
  static_cast<Probe*>(self)->ThreadMain();
  return nullptr;
}

void Probe::SetUp() {
  tid_.store(static_cast<int>(gettid()), std::memory_order_relaxed);
  PrefaultStack(kStackPrefaultBytes);
  // SCHED_DEADLINE refuses a CPU mask smaller than its root domain, so that path is never
  // pinned; every other path is pinned before its policy is set.
  if (thread_.cpu >= 0 && path_ != WakePath::kDeadline) {
    if (Status s = SetThreadAffinity({thread_.cpu}); !s) {
      result_.degraded = true;
      result_.notes.push_back(s.error().message);
    }
  }
  if (path_ != WakePath::kDeadline) {
    if (Status s = SetThreadScheduling(thread_.policy, thread_.priority); !s) {
      result_.degraded = true;
      result_.notes.push_back(s.error().message + "; ran as SCHED_OTHER instead");
      result_.policy = "other";
      result_.priority = 0;
    }
  } else {
    result_.notes.push_back("deadline: SCHED_DEADLINE threads cannot be pinned (not run on a "
                            "fixed CPU)");
  }
}

void Probe::ThreadMain() {
  SetUp();
  set_up_.store(true, std::memory_order_release);
  shared_.ready.fetch_add(1, std::memory_order_acq_rel);
  const int64_t origin = AwaitOrigin(shared_.origin_ns);
  if (shared_.stop.load(std::memory_order_relaxed)) {
    done_.store(true, std::memory_order_release);
    shared_.finished.fetch_add(1, std::memory_order_acq_rel);
    return;
  }

  WakeParams params;
  params.start_ns = origin;
  params.interval_ns = thread_.interval_ns;
  params.cpu = thread_.cpu;
  params.policy = thread_.policy;
  params.priority = thread_.priority;
  params.deadline_runtime_ns =
      plan_.deadline_runtime_ns > 0 ? plan_.deadline_runtime_ns : thread_.interval_ns / 10;
  params.stop = &shared_.stop;
  if (Status s = source_->Arm(params); !s) {
    failure_ = Error{s.error().code, fmt::format("thread {} ({}): {}", thread_.index,
                                                 WakePathName(path_), s.error().message)};
  } else {
    if (const char* note = source_->note()) result_.notes.emplace_back(note);
    Loop();
  }
  source_->Disarm();
  done_.store(true, std::memory_order_release);
  shared_.finished.fetch_add(1, std::memory_order_acq_rel);
}

void Probe::RecordLinear(int64_t latency_ns, uint64_t cycle) {
  results::LinearHistogram& linear = *result_.linear;
  if (latency_ns < 0) {
    ++linear.underflows;
    return;
  }
  const int64_t us = latency_ns / kNsPerUs;
  if (us < linear.limit_us) {
    ++linear.counts[static_cast<size_t>(us)];
    return;
  }
  ++linear.overflows;
  if (linear.overflow_seqs.size() < linear.overflow_seqs.capacity()) {
    linear.overflow_seqs.push_back(cycle);  // within reserved capacity: no allocation
  } else {
    ++linear.overflow_seqs_dropped;
  }
}

void Probe::RecordSpike(uint64_t seq, int64_t expected_ns, int64_t latency_ns) {
  if (result_.spikes.size() < result_.spikes.capacity()) {
    result_.spikes.push_back({seq, expected_ns, latency_ns});  // reserved: no allocation
  } else {
    ++result_.spikes_not_kept;
  }
}

void Probe::Loop() {
  const bool extras = result_.linear.has_value() || plan_.spike_ns > 0 || ring_ != nullptr ||
                      plan_.breaktrace_ns > 0 || source_->RestartsGridOnOverrun();
  if (g_hooks.enter != nullptr) g_hooks.enter();
  if (path_ == WakePath::kAbs) {
    // The default path, called directly (no virtual dispatch).
    auto& abs = static_cast<AbsSleep&>(*source_);
    extras ? LoopImpl<true>(abs) : LoopImpl<false>(abs);
  } else {
    extras ? LoopImpl<true>(*source_) : LoopImpl<false>(*source_);
  }
  if (g_hooks.exit != nullptr) g_hooks.exit();

  if (wait_error_ != 0) {
    result_.degraded = true;
    result_.notes.push_back(
        fmt::format("wait failed: {}; this thread stopped early", std::strerror(wait_error_)));
  }
  result_.missed_activations = missed_.load(std::memory_order_relaxed);
  result_.skipped_periods = skipped_.load(std::memory_order_relaxed);
  result_.last_latency_ns = cur_ns_.load(std::memory_order_relaxed);
  result_.grid_restarts = grid_restarts_.load(std::memory_order_relaxed);
}

template <bool kExtras, typename Source>
void Probe::LoopImpl(Source& source) {
  const int64_t interval = thread_.interval_ns;
  const int64_t end_ns = shared_.end_ns > 0 ? shared_.end_ns : INT64_MAX;
  const uint64_t loops = plan_.loops > 0 ? plan_.loops : UINT64_MAX;
  const bool restarts_grid = source_->RestartsGridOnOverrun();
  const int64_t spike_ns = plan_.spike_ns;
  const int64_t break_ns = plan_.breaktrace_ns;
  const uint16_t cpu_field =
      result_.cpu >= 0 ? static_cast<uint16_t>(result_.cpu) : uint16_t{0xFFFF};
  Histogram& histogram = result_.histogram;
  int64_t next = source_->GridOrigin(shared_.origin_ns.load(std::memory_order_relaxed)) + interval;
  uint64_t seq = 0;
  uint64_t cycles = 0;
  bool resync = false;
  int64_t last_wake = 0;  // published once, after the loop: only read after Join()

  // Stop is checked once per activation, after the wake-up (a stop asked for meanwhile
  // ends the loop at the next one, within a period), and once before the first wait.
  if (shared_.stop.load(std::memory_order_relaxed)) {
    result_.periods_elapsed = 0;
    return;
  }
  for (;;) {
    const WakeResult wake = source.Wait(next);
    const int64_t now = MonotonicNs();
    if (wake.error != 0) {
      wait_error_ = wake.error;
      break;
    }
    // An activation that arrives after stop was asked for may be the unblocking post, not a
    // real period: it is not recorded.
    if (shared_.stop.load(std::memory_order_relaxed)) break;

    last_wake = now;
    const int64_t latency = now - wake.expected_ns;
    if (kExtras && restarts_grid && (resync || latency < 0)) {
      // SCHED_DEADLINE: after an overrun the kernel may have restarted its period (CBS)
      // where we cannot see it; a wake-up before our grid proves it did. The activation
      // that follows is where the kernel's grid shows again: re-anchor on it, count it in
      // grid_restarts, and record no latency for it rather than an invented one.
      grid_restarts_.store(grid_restarts_.load(std::memory_order_relaxed) + 1,
                           std::memory_order_relaxed);
      resync = false;
      ++seq;
      next = now + interval;
      if (cycles >= loops || now >= end_ns) break;
      continue;
    }
    histogram.Record(latency);
    cur_ns_.store(latency, std::memory_order_relaxed);
    const uint64_t skipped =
        wake.expirations > 0
            ? wake.expirations - 1
            : (latency >= interval ? static_cast<uint64_t>(latency / interval) : 0);
    if (skipped > 0) {
      missed_.store(missed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      skipped_.store(skipped_.load(std::memory_order_relaxed) + skipped,
                     std::memory_order_relaxed);
    }
    if constexpr (kExtras) {
      if (result_.linear) RecordLinear(latency, cycles);
      if (spike_ns > 0 && latency > spike_ns) RecordSpike(seq, wake.expected_ns, latency);
      if (ring_ != nullptr) {
        SampleRecord record{};
        record.seq = seq;
        record.expected_ns = wake.expected_ns;
        record.actual_ns = now;
        record.thread = static_cast<uint16_t>(thread_.index);
        // Unpinned probes record where this sample ran (sched_getcpu reads glibc's rseq
        // area: no system call).
        record.cpu = cpu_field != 0xFFFF ? cpu_field : static_cast<uint16_t>(sched_getcpu());
        record.wake_path = static_cast<uint8_t>(path_);
        record.flags = skipped > 0 ? SampleRecord::kMissed : uint8_t{0};
        ring_->Push(record);
      }
    }
    ++cycles;
    seq += 1 + skipped;
    if constexpr (kExtras) {
      if (break_ns > 0 && latency > break_ns) {
        bool expected = false;
        if (shared_.break_hit.compare_exchange_strong(expected, true)) {
          shared_.break_thread.store(thread_.index);
          shared_.break_latency_ns.store(latency);
          shared_.break_seq.store(seq - 1 - skipped);
          const bool traced = tracer_ != nullptr &&
                              tracer_->Break(thread_.index, latency, break_ns, plan_.tracemark);
          shared_.break_traced.store(traced);
        }
        shared_.stop.store(true, std::memory_order_relaxed);
        break;
      }
      if (restarts_grid && skipped > 0) resync = true;
    }
    next = wake.expected_ns + static_cast<int64_t>(1 + skipped) * interval;
    if (cycles >= loops || now >= end_ns) break;
  }
  last_wake_ns_.store(last_wake, std::memory_order_relaxed);
  result_.periods_elapsed = seq;
}

LiveProbe Probe::Live() const {
  LiveProbe live;
  live.index = thread_.index;
  live.cpu = result_.cpu;
  live.tid = tid_.load(std::memory_order_relaxed);
  live.priority = thread_.priority;
  live.interval_ns = thread_.interval_ns;
  const Histogram& h = result_.histogram;
  live.count = h.LiveCount();
  live.cur_ns = cur_ns_.load(std::memory_order_relaxed);
  live.min_ns = h.LiveMin();
  live.max_ns = h.LiveMax();
  live.avg_ns = live.count > 0 ? static_cast<double>(h.LiveSum()) / static_cast<double>(live.count)
                               : 0.0;
  live.p99_ns = h.LivePercentile(99.0);
  live.missed = missed_.load(std::memory_order_relaxed);
  return live;
}

void Probe::LiveResultTo(results::ProbeResult& out) const {
  out.index = thread_.index;
  out.cpu = result_.cpu;
  out.tid = tid_.load(std::memory_order_relaxed);
  // SetUp() may still be downgrading the policy; until it is done, report the plan.
  const bool set_up = set_up_.load(std::memory_order_acquire);
  out.policy = set_up ? result_.policy
                      : (path_ == WakePath::kDeadline ? "deadline" : PolicyName(thread_.policy));
  out.priority = set_up ? result_.priority : (path_ == WakePath::kDeadline ? 0 : thread_.priority);
  out.interval_ns = thread_.interval_ns;
  out.wake = result_.wake;
  result_.histogram.LiveCopyTo(out.histogram);
  out.missed_activations = missed_.load(std::memory_order_relaxed);
  out.skipped_periods = skipped_.load(std::memory_order_relaxed);
  out.grid_restarts = grid_restarts_.load(std::memory_order_relaxed);
  out.periods_elapsed = out.histogram.count() + out.skipped_periods + out.grid_restarts;
  out.last_latency_ns = cur_ns_.load(std::memory_order_relaxed);
  if (ring_ != nullptr) {
    out.samples_dropped = ring_->dropped() - ring_dropped_base_;
    const uint64_t offered = ring_->pushed() - ring_pushed_base_;
    // Two separate relaxed counters: never let a newer drop count make this wrap.
    out.samples_logged = offered > out.samples_dropped ? offered - out.samples_dropped : 0;
  }
}

results::ProbeResult Probe::TakeResult() {
  result_.tid = tid_.load(std::memory_order_relaxed);
  if (ring_ != nullptr) {
    // Rings live across wake paths: report this path's share only.
    // pushed() counts every record offered, including the ones a full ring dropped.
    result_.samples_dropped = ring_->dropped() - ring_dropped_base_;
    result_.samples_logged = ring_->pushed() - ring_pushed_base_ - result_.samples_dropped;
  }
  return std::move(result_);
}

}  // namespace rtpulse::measure
