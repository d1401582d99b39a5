#pragma once

// `rtpulse noise` (docs/noise.md): one busy-polling thread per CPU reads CLOCK_MONOTONIC in a
// tight loop; every gap between two reads is time the CPU did not give the loop. Each gap
// enters a histogram of `bucket_width_ns` buckets (oslat's); a gap above `threshold_ns` is a
// noise event, kept with its start time. What the CPU gave is the rest: % available.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/sched_policy.h"

namespace rtpulse::measure {

struct NoisePlan {
  std::vector<int> cpus;  ///< One poller pinned on each.
  SchedPolicy policy = SchedPolicy::kFifo;
  int priority = 95;               ///< For fifo/rr; 0 for the other policies.
  int64_t duration_ns = 0;         ///< 0: until `stop`.
  int64_t threshold_ns = 5000;     ///< A gap above this is a noise event.
  int64_t bucket_width_ns = 1000;  ///< Histogram bucket width.
  int buckets = 32;                ///< The last one holds every longer gap too.
  int64_t stop_above_ns = 0;       ///< oslat -T: stop the run at the first gap above; 0 = off.
  size_t events_kept = 200'000;    ///< Per CPU; later events are counted, not kept.
  bool lock_memory = true;
};

/// One noise event: the loop read `start_ns` and next read start_ns + gap_ns (CLOCK_MONOTONIC).
struct NoiseEvent {
  int64_t start_ns = 0;
  int64_t gap_ns = 0;
};

/// What one CPU's poller saw.
struct NoiseCpuRecord {
  int cpu = -1;
  int tid = 0;
  int64_t start_ns = 0;  ///< Its first read.
  int64_t end_ns = 0;    ///< Its last read.
  uint64_t reads = 0;    ///< Gaps measured (reads - 1).
  int64_t min_gap_ns = 0;
  int64_t max_gap_ns = 0;
  /// Bucket k holds the gaps in (k * width, (k + 1) * width]; a gap of 0 (the clock did not
  /// move) is counted in bucket 0; the last bucket holds every longer gap too.
  std::vector<uint64_t> histogram;
  uint64_t events = 0;           ///< Gaps above the threshold.
  int64_t noise_ns = 0;          ///< Their sum.
  std::vector<NoiseEvent> kept;  ///< The first events_kept of them, in time order.
  bool stopped_above = false;    ///< This poller saw a gap above stop_above_ns.
};

struct NoiseRecord {
  int64_t start_realtime_ns = 0;
  int64_t start_monotonic_ns = 0;    ///< CLOCK_MONOTONIC at the same instant.
  std::vector<NoiseCpuRecord> cpus;  ///< In plan order.
  bool interrupted = false;          ///< `stop` ended it before its duration.
  std::vector<std::string> warnings;
};

/// Who watches the run while it goes (rtpulse noise --explain), called on RunNoise's thread,
/// never a poller's: `ready` once with each poller's kernel tid (plan order, before the first
/// read), `event` for each event kept, within ~5 ms of it (poller = index in plan.cpus,
/// index = its place in that poller's kept list).
struct NoiseWatch {
  std::function<void(const std::vector<int>& tids)> ready;
  std::function<void(size_t poller, size_t index, const NoiseEvent& event)> event;
};

/// Usage error naming the first bad field: no CPU, a CPU twice, a threshold or bucket width
/// of 0 or below, buckets outside 4..1024, a priority outside the policy's range.
Status CheckNoisePlan(const NoisePlan& plan);

/// Starts the pollers and returns when the duration is over, `stop` was set or a poller saw a
/// gap above stop_above_ns. Resource error (nothing measured) when a poller cannot get its
/// CPU or its policy (e.g. SCHED_FIFO without privilege).
Expected<NoiseRecord> RunNoise(const NoisePlan& plan, const std::atomic<bool>& stop,
                               const NoiseWatch* watch = nullptr);

}  // namespace rtpulse::measure
