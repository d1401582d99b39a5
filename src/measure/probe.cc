#include "measure/probe.h"

#include <fmt/format.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>

#include "core/clock.h"
#include "measure/probe_loop.h"

namespace rtpulse::measure {
namespace {

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer keeps its per-thread state in static TLS, which glibc carves out of the
// thread's stack (hundreds of KiB): a 512 KiB stack leaves less than the prefault needs.
constexpr size_t kStackBytes = 4 * 1024 * 1024;
#else
constexpr size_t kStackBytes = 512 * 1024;
#endif
constexpr size_t kStackPrefaultBytes = 256 * 1024;
LoopHooks g_hooks;

}  // namespace

void SetLoopHooks(LoopHooks hooks) {
  g_hooks = hooks;
}

int64_t AwaitOrigin(const std::atomic<int64_t>& origin) {
  int64_t value = origin.load(std::memory_order_acquire);
  while (value == 0) {
    origin.wait(0, std::memory_order_acquire);
    value = origin.load(std::memory_order_acquire);
  }
  return value;
}

void SignalReady(std::atomic<int>& ready) {
  ready.fetch_add(1, std::memory_order_acq_rel);
  // A raw futex rather than std::atomic::notify_all: libstdc++'s notify skips the system
  // call unless a std::atomic::wait is registered, and AwaitReady needs a timeout, which
  // std::atomic::wait does not have.
  static_assert(sizeof(std::atomic<int>) == sizeof(int));
  syscall(SYS_futex, reinterpret_cast<int*>(&ready), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
          nullptr, 0);
}

bool AwaitReady(std::atomic<int>& ready, int count, int64_t timeout_ns) {
  const int64_t deadline = MonotonicNs() + timeout_ns;
  for (;;) {
    const int seen = ready.load(std::memory_order_acquire);
    if (seen >= count) return true;
    const int64_t left = deadline - MonotonicNs();
    if (left <= 0) return false;
    const timespec timeout = ToTimespec(left);
    // Sleeps only while the value is still `seen`; any SignalReady since wakes it (EAGAIN).
    syscall(SYS_futex, reinterpret_cast<int*>(&ready), FUTEX_WAIT_PRIVATE, seen, &timeout, nullptr,
            0);
  }
}

int64_t ReadyTimeoutNs() {
  return g_hooks.ready_timeout_ns > 0 ? g_hooks.ready_timeout_ns : 10 * kNsPerSec;
}

Probe::Probe(const LatencyPlan& plan, const ThreadPlan& thread, WakePath path, RunShared& shared,
             SampleRing* ring, Tracer* tracer)
    : plan_(plan),
      thread_(thread),
      path_(path),
      shared_(shared),
      ring_(ring),
      tracer_(tracer),
      source_(MakeWakeSource(path, plan.wake_clock)) {
  result_.index = thread.index;
  result_.cpu = OwnsPolicy(path) ? -1 : thread.cpu;
  result_.policy = OwnsPolicy(path) ? "deadline" : SchedPolicyName(thread.policy);
  result_.priority = OwnsPolicy(path) ? 0 : thread.priority;
  result_.interval_ns = thread.interval_ns;
  result_.wake = std::string(WakePathName(path));
  if (plan.linear_histogram_us > 0) {
    LinearHistogramRecord linear;
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

Probe::~Probe() {
  Join();
}

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

void Probe::MarkDegraded() {
  result_.degraded = true;
  degraded_.store(true, std::memory_order_relaxed);
}

void Probe::SetUp() {
  tid_.store(static_cast<int>(gettid()), std::memory_order_relaxed);
  PrefaultStack(kStackPrefaultBytes);
  // SCHED_DEADLINE refuses a CPU mask smaller than its root domain, so that path is never
  // pinned; every other path is pinned before its policy is set.
  if (thread_.cpu >= 0 && !OwnsPolicy(path_)) {
    if (Status s = SetThreadAffinity({thread_.cpu}); !s) {
      MarkDegraded();
      result_.notes.push_back(s.error().message);
    }
  }
  if (!OwnsPolicy(path_)) {
    if (Status s = SetThreadScheduling(thread_.policy, thread_.priority); !s) {
      MarkDegraded();
      result_.notes.push_back(s.error().message + "; ran as SCHED_OTHER instead");
      result_.policy = "other";
      result_.priority = 0;
    }
  } else {
    result_.notes.push_back(
        "deadline: SCHED_DEADLINE threads cannot be pinned (not run on a "
        "fixed CPU)");
  }
}

void Probe::ThreadMain() {
  SetUp();
  set_up_.store(true, std::memory_order_release);
  if (g_hooks.before_ready != nullptr) g_hooks.before_ready();
  SignalReady(shared_.ready);
  // This thread's grid: the shared origin, moved by its phase (-A, --secaligned).
  const int64_t origin = AwaitOrigin(shared_.origin_ns) + thread_.phase_ns;
  if (shared_.stop.load(std::memory_order_relaxed)) {
    helper_tid_.store(0, std::memory_order_release);
    done_.store(true, std::memory_order_release);
    shared_.finished.fetch_add(1, std::memory_order_acq_rel);
    return;
  }

  WakeParams params;
  params.start_ns = origin;
  params.interval_ns = thread_.interval_ns;
  params.clock = plan_.wake_clock;
  params.cpu = thread_.cpu;
  params.policy = thread_.policy;
  params.priority = thread_.priority;
  params.deadline_runtime_ns =
      plan_.deadline_runtime_ns > 0 ? plan_.deadline_runtime_ns : thread_.interval_ns / 10;
  params.stop = &shared_.stop;
  params.end_ns = shared_.end_ns;
  params.gpio_line = plan_.gpio_wake;
  params.gpio_drive = plan_.gpio_drive;
  const Status armed = source_->Arm(params);
  helper_tid_.store(armed ? source_->HelperTid() : 0, std::memory_order_release);
  if (!armed) {
    failure_ = Error{armed.error().code, fmt::format("thread {} ({}): {}", thread_.index,
                                                     WakePathName(path_), armed.error().message)};
  } else {
    if (const char* note = source_->note()) result_.notes.emplace_back(note);
    Loop();
    bool problem = false;
    if (std::string end_note = source_->EndNote(problem); !end_note.empty()) {
      result_.notes.push_back(std::move(end_note));
      if (problem) MarkDegraded();
    }
  }
  source_->Disarm();
  done_.store(true, std::memory_order_release);
  shared_.finished.fetch_add(1, std::memory_order_acq_rel);
}

void Probe::Loop() {
  if (path_ == WakePath::kAbs && plan_.wake_clock == CLOCK_MONOTONIC) {
    // The default path, called directly (no virtual dispatch).
    RunLoop(static_cast<AbsSleep&>(*source_), MonotonicClock{});
  } else {
    RunLoop(*source_, MonotonicClock{});
  }
}

void Probe::EnterLoop() {
  if (g_hooks.enter != nullptr) g_hooks.enter();
}

void Probe::LeaveLoop() {
  if (g_hooks.exit != nullptr) g_hooks.exit();
  if (wait_error_ != 0) {
    MarkDegraded();
    result_.notes.push_back(
        fmt::format("wait failed: {}; this thread stopped early", std::strerror(wait_error_)));
  }
  result_.missed_activations = missed_.load(std::memory_order_relaxed);
  result_.skipped_periods = skipped_.load(std::memory_order_relaxed);
  result_.last_latency_ns = cur_ns_.load(std::memory_order_relaxed);
  result_.grid_restarts = grid_restarts_.load(std::memory_order_relaxed);
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
  live.avg_ns =
      live.count > 0 ? static_cast<double>(h.LiveSum()) / static_cast<double>(live.count) : 0.0;
  live.p99_ns = h.LivePercentile(99.0);
  live.missed = missed_.load(std::memory_order_relaxed);
  return live;
}

void Probe::LiveResultTo(ProbeRecord& out) const {
  out.index = thread_.index;
  out.cpu = result_.cpu;
  out.tid = tid_.load(std::memory_order_relaxed);
  // SetUp() may still be downgrading the policy; until it is done, report the plan.
  const bool set_up = set_up_.load(std::memory_order_acquire);
  out.policy =
      set_up ? result_.policy : (OwnsPolicy(path_) ? "deadline" : SchedPolicyName(thread_.policy));
  out.priority = set_up ? result_.priority : (OwnsPolicy(path_) ? 0 : thread_.priority);
  out.interval_ns = thread_.interval_ns;
  out.wake = result_.wake;
  out.degraded = degraded_.load(std::memory_order_relaxed);
  result_.histogram.LiveCopyTo(out.histogram);
  result_.skipped_histogram.LiveCopyTo(out.skipped_histogram);
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

void Probe::WatchInjections(int64_t period_ns, int64_t delay_ns) {
  inject_period_ns_ = period_ns;
  inject_delay_ns_ = delay_ns;
  result_.injected_histogram.emplace();  // before the loop: it allocates nothing
}

ProbeRecord Probe::TakeResult() {
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
