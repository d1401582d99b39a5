#pragma once

#include <cstdint>
#include <map>

#include "core/samples_file.h"

// Count, missed wake-ups, min and max latency over a samples log's records, for the whole
// log and per probe thread (`rtpulse samples`' summary; docs/samples-format.md). Exact: the
// records' own nanoseconds, no histogram.
namespace rtpulse::stats {

/// The CPU column of a record whose probe was not pinned.
inline constexpr uint16_t kUnpinnedCpu = 0xFFFF;

/// One group of records (one thread, or all of them).
struct RecordGroup {
  uint64_t count = 0;
  uint64_t missed = 0;  ///< Records flagged SampleRecord::kMissed.
  int64_t min_ns = 0;   ///< Meaningful when count > 0.
  int64_t max_ns = 0;
  uint16_t cpu = kUnpinnedCpu;  ///< The last record's CPU.

  void Add(const SampleRecord& r);
};

struct RecordTotals {
  RecordGroup all;
  std::map<uint16_t, RecordGroup> threads;  ///< By probe thread index.

  void Add(const SampleRecord& r) {
    all.Add(r);
    threads[r.thread].Add(r);
  }
};

}  // namespace rtpulse::stats
