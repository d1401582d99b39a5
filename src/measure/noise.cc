#include "measure/noise.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <set>
#include <thread>

#include "core/clock.h"
#include "measure/rt_setup.h"

namespace rtpulse::measure {
namespace {

/// The flags every poller and the run share.
struct NoiseControl {
  std::atomic<int> ready{0};     ///< Pollers set up (or failed).
  std::atomic<int> finished{0};  ///< Pollers that left their loop.
  std::atomic<bool> go{false};
  std::atomic<bool> halt{false};
  std::atomic<int64_t> end_ns{INT64_MAX};
};

struct Poller {
  int cpu = -1;
  NoiseCpuRecord record;
  std::string error;  ///< Set-up failed: why.
  /// Events written to record.kept so far (release): a watcher reads that many.
  std::atomic<size_t> published{0};
};

void SleepNs(int64_t ns) {
  const timespec t{static_cast<time_t>(ns / kNsPerSec), static_cast<long>(ns % kNsPerSec)};
  nanosleep(&t, nullptr);
}

/// The busy loop: reads the clock until the end, a halt or a gap above plan.stop_above_ns.
void PollLoop(const NoisePlan& plan, NoiseControl& control, NoiseCpuRecord& r,
              std::atomic<size_t>& published) {
  const int64_t width = plan.bucket_width_ns;
  const int64_t threshold = plan.threshold_ns;
  const int64_t stop_above = plan.stop_above_ns > 0 ? plan.stop_above_ns : INT64_MAX;
  const size_t last = r.histogram.size() - 1;
  const size_t cap = r.kept.size();
  uint64_t* const histogram = r.histogram.data();
  NoiseEvent* const kept = r.kept.data();
  const int64_t end = control.end_ns.load(std::memory_order_acquire);
  size_t k = 0;
  uint64_t reads = 0;
  int64_t min_gap = INT64_MAX;
  int64_t max_gap = 0;
  int64_t prev = MonotonicNs();
  r.start_ns = prev;
  for (;;) {
    const int64_t now = MonotonicNs();
    const int64_t gap = now - prev;
    ++reads;
    min_gap = std::min(min_gap, gap);
    max_gap = std::max(max_gap, gap);
    if (gap <= width) {
      ++histogram[0];
    } else {
      ++histogram[std::min(static_cast<size_t>((gap - 1) / width), last)];
      if (gap > threshold) {
        ++r.events;
        r.noise_ns += gap;
        if (k < cap) {
          kept[k++] = {prev, gap};
          published.store(k, std::memory_order_release);
        }
        if (gap > stop_above) {
          r.stopped_above = true;
          prev = now;
          control.halt.store(true, std::memory_order_relaxed);
          break;
        }
      }
    }
    prev = now;
    if (now >= end || control.halt.load(std::memory_order_relaxed)) break;
  }
  r.end_ns = prev;
  r.reads = reads;
  r.min_gap_ns = min_gap;  // the loop reads at least once
  r.max_gap_ns = max_gap;
}

void PollerMain(const NoisePlan& plan, NoiseControl& control, Poller& p) {
  // A name of its own, so a trace (--explain's softirq names) tells it from rtpulse's others.
  (void)pthread_setname_np(pthread_self(), "rtpulse-noise");
  p.record.cpu = p.cpu;
  p.record.tid = static_cast<int>(syscall(SYS_gettid));
  p.record.histogram.assign(static_cast<size_t>(plan.buckets), 0);
  p.record.kept.assign(plan.events_kept, NoiseEvent{});  // touched now, not in the loop
  PrefaultStack(64 * 1024);
  if (Status s = SetThreadAffinity({p.cpu}); !s) {
    p.error = fmt::format("CPU {}: {}", p.cpu, s.error().message);
  } else if (Status policy = SetThreadScheduling(plan.policy, plan.priority); !policy) {
    p.error = fmt::format("CPU {}: {}; fix: run as root (sudo), or poll at --policy other", p.cpu,
                          policy.error().message);
  }
  control.ready.fetch_add(1, std::memory_order_release);
  while (!control.go.load(std::memory_order_acquire)) SleepNs(100'000);
  if (p.error.empty() && !control.halt.load(std::memory_order_acquire)) {
    PollLoop(plan, control, p.record, p.published);
  }
  control.finished.fetch_add(1, std::memory_order_release);
}

/// Hands the watcher each poller's events published since the last call (`seen`).
void FeedWatch(const NoiseWatch* watch, const std::vector<std::unique_ptr<Poller>>& pollers,
               std::vector<size_t>& seen) {
  if (watch == nullptr || !watch->event) return;
  for (size_t i = 0; i < pollers.size(); ++i) {
    const size_t n = pollers[i]->published.load(std::memory_order_acquire);
    for (; seen[i] < n; ++seen[i]) watch->event(i, seen[i], pollers[i]->record.kept[seen[i]]);
  }
}

}  // namespace

Status CheckNoisePlan(const NoisePlan& plan) {
  if (plan.cpus.empty()) return UsageError("no CPU to measure on: give -c, e.g. -c 1");
  if (std::set<int>(plan.cpus.begin(), plan.cpus.end()).size() != plan.cpus.size()) {
    return UsageError("a CPU is listed twice: give each CPU once");
  }
  if (plan.threshold_ns <= 0) {
    return UsageError(
        fmt::format("threshold {} ns: it must be above 0, e.g. 5us", plan.threshold_ns));
  }
  if (plan.bucket_width_ns <= 0) {
    return UsageError(
        fmt::format("bucket width {} ns: it must be above 0, e.g. 1us", plan.bucket_width_ns));
  }
  if (plan.buckets < 4 || plan.buckets > 1024) {
    return UsageError(fmt::format("{} buckets: give 4..1024 (oslat's -b range)", plan.buckets));
  }
  if (plan.duration_ns < 0) return UsageError("the duration must not be negative");
  if (plan.stop_above_ns < 0) return UsageError("-T must not be negative");
  if (IsRealtime(plan.policy) && (plan.priority < 1 || plan.priority > 99)) {
    return UsageError(
        fmt::format("priority {}: {} takes 1..99", plan.priority, SchedPolicyName(plan.policy)));
  }
  return Status::Ok();
}

Expected<NoiseRecord> RunNoise(const NoisePlan& plan, const std::atomic<bool>& stop,
                               const NoiseWatch* watch) {
  if (Status s = CheckNoisePlan(plan); !s) return s.error();
  NoiseRecord out;
  if (plan.lock_memory) {
    if (auto warning = LockAllMemory()) out.warnings.push_back(*warning);
  }
  NoiseControl control;
  std::vector<std::unique_ptr<Poller>> pollers;
  std::vector<std::thread> threads;
  for (const int cpu : plan.cpus) {
    pollers.push_back(std::make_unique<Poller>());
    pollers.back()->cpu = cpu;
    threads.emplace_back(PollerMain, std::cref(plan), std::ref(control), std::ref(*pollers.back()));
  }
  const int n = static_cast<int>(pollers.size());
  while (control.ready.load(std::memory_order_acquire) < n) SleepNs(1'000'000);
  std::string failed;
  for (const auto& p : pollers) {
    if (failed.empty() && !p->error.empty()) failed = p->error;
  }
  if (!failed.empty()) {
    control.halt.store(true);
  } else if (watch != nullptr && watch->ready) {
    std::vector<int> tids;
    for (const auto& p : pollers) tids.push_back(p->record.tid);
    watch->ready(tids);
  }
  std::vector<size_t> seen(pollers.size(), 0);
  out.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  out.start_monotonic_ns = MonotonicNs();
  if (plan.duration_ns > 0) control.end_ns.store(MonotonicNs() + plan.duration_ns);
  control.go.store(true, std::memory_order_release);
  while (control.finished.load(std::memory_order_acquire) < n) {
    if (stop.load(std::memory_order_relaxed) && !control.halt.load()) {
      out.interrupted = true;
      control.halt.store(true);
    }
    FeedWatch(watch, pollers, seen);
    SleepNs(5'000'000);
  }
  for (auto& t : threads) t.join();
  if (!failed.empty()) return ResourceError(failed);
  FeedWatch(watch, pollers, seen);
  for (auto& p : pollers) p->record.kept.resize(p->published.load(std::memory_order_acquire));
  for (auto& p : pollers) out.cpus.push_back(std::move(p->record));
  return out;
}

}  // namespace rtpulse::measure
