#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "measure/engine.h"
#include "measure/sample_log.h"
#include "measure/tracing.h"
#include "measure/wake_source.h"
#include "results/latency_result.h"

namespace rtpulse::measure {

/// Shared state of one path's run, owned by the engine.
struct RunShared {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> origin_ns{0};  ///< Published once every probe is ready (then != 0).
  std::atomic<int> ready{0};          ///< Probes that finished their set-up (or failed).
  std::atomic<int> finished{0};       ///< Probes that left their loop.
  std::atomic<bool> break_hit{false};
  std::atomic<int> break_thread{-1};
  std::atomic<int64_t> break_latency_ns{0};
  std::atomic<uint64_t> break_seq{0};
  std::atomic<bool> break_traced{false};
  int64_t end_ns = 0;  ///< Written before threads start; 0 = no time limit.
};

/// Waits until the engine publishes the grid origin (C++20 atomic wait, a futex).
int64_t AwaitOrigin(const std::atomic<int64_t>& origin);

/// One measurement thread: RT set-up inside the thread, then the loop, writing only into
/// memory allocated before it starts.
class Probe {
 public:
  Probe(const LatencyPlan& plan, const ThreadPlan& thread, WakePath path, RunShared& shared,
        SampleRing* ring, Tracer* tracer);
  ~Probe();
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  Status Start();
  void Join();
  void Interrupt() { source_->Interrupt(); }

  LiveProbe Live() const;
  /// The result; call after Join().
  results::ProbeResult TakeResult();
  /// Set when the probe could not run at all (e.g. the wake path failed to arm).
  const std::optional<Error>& failure() const { return failure_; }

 private:
  static void* ThreadEntry(void* self);
  void ThreadMain();
  void SetUp();
  void Loop();
  void RecordLinear(int64_t latency_ns, uint64_t cycle);
  void RecordSpike(uint64_t seq, int64_t expected_ns, int64_t latency_ns);

  const LatencyPlan& plan_;
  const ThreadPlan thread_;
  const WakePath path_;
  RunShared& shared_;
  SampleRing* ring_;
  Tracer* tracer_;
  std::unique_ptr<WakeSource> source_;

  results::ProbeResult result_;
  pthread_t handle_{};
  bool started_ = false;
  std::optional<Error> failure_;
  uint64_t ring_pushed_base_ = 0;
  uint64_t ring_dropped_base_ = 0;

  std::atomic<int> tid_{0};
  std::atomic<int64_t> cur_ns_{0};
  std::atomic<uint64_t> missed_{0};
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> grid_restarts_{0};
};

}  // namespace rtpulse::measure
