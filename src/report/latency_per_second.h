// The latency-over-time figure's data: per-second aggregates of a samples log, computed
// while streaming it (docs/report.md, "Memory"), never from an in-memory copy of the log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/samples_file.h"

namespace rtpulse::report {

/// One second of a samples log, all threads together: the records whose deadline
/// (expected_ns) falls in it.
struct LatencySecond {
  int64_t second = 0;   ///< expected_ns / 1e9 (CLOCK_MONOTONIC seconds).
  uint64_t count = 0;   ///< Records (activations) of the second.
  uint64_t missed = 0;  ///< Of them, flagged missed (woke after the next deadline).
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  int64_t p99_ns = 0;  ///< Exact nearest rank: the ceil(0.99 x count)-th smallest.
};

/// A whole log by the second, in order, with what the reader said about the file.
struct LatencyPerSecond {
  std::vector<LatencySecond> seconds;
  SamplesFileSummary summary;
  /// Most latencies held at once during the selection pass (the open seconds' top 1 %):
  /// a few seconds' worth for a log written in time order, whatever its length.
  uint64_t max_held = 0;
};

/// Reads `path` twice: a first pass counts each second's records (and min, max, missed), a
/// second keeps, per open second, only its largest count - rank + 1 latencies (a min-heap),
/// and closes a second as soon as all its records were seen. Memory is bounded by the
/// number of seconds (86400 a day) plus the open seconds' top 1 %, not by the samples; the
/// p99 is the exact nearest-rank value a sort would give. A file that changes between the
/// passes is an error (Failure, naming the file and the second).
Expected<LatencyPerSecond> ReadLatencyPerSecond(const std::string& path);

}  // namespace rtpulse::report
