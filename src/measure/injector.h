#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace rtpulse::measure {

struct RunShared;

/// Ground-truth disturbance: a SCHED_FIFO thread above the probes on one CPU that wakes on
/// the probes' deadline grid every `period_ns` and busy-spins for `delay_ns`. Each injection
/// must show up as one sample of at least `delay_ns`, which is what the tests check.
class Injector {
 public:
  Injector(int cpu, int priority, int64_t delay_ns, int64_t period_ns, RunShared& shared);
  ~Injector();
  Injector(const Injector&) = delete;
  Injector& operator=(const Injector&) = delete;

  Status Start();
  void Join();
  int cpu() const { return cpu_; }
  uint64_t injections() const { return injections_.load(std::memory_order_relaxed); }
  /// Non-empty when the injector could not get its CPU or priority (ground truth is off).
  const std::string& problem() const { return problem_; }

 private:
  static void* ThreadEntry(void* self);
  void ThreadMain();

  const int cpu_;
  const int priority_;
  const int64_t delay_ns_;
  const int64_t period_ns_;
  RunShared& shared_;
  pthread_t handle_{};
  bool started_ = false;
  std::atomic<uint64_t> injections_{0};
  std::string problem_;
};

}  // namespace rtpulse::measure
