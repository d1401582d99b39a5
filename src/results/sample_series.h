#pragma once

// One scenario's per-sample log as a time-ordered series, for the extreme value analysis
// (`rtpulse wcet`, `rtpulse report`'s worst-case section; docs/wcet.md, "Memory").

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "stats/evt.h"

namespace rtpulse::results {

/// Every probe thread's records merged by deadline, replayed by `pass`: each call reads the
/// file again, so the series is never held in memory.
struct SampleSeries {
  stats::SeriesPass pass;
  size_t threads = 0;
  uint64_t dropped = 0;
  bool has_trailer = true;
};

/// Checks the log at `path` (a first pass counts each thread's records) and returns its
/// replay. The order is a stable sort's by (expected_ns, thread): one activation after
/// another, as they happened. A pass over a file that changed since it was opened fails,
/// naming the file.
Expected<SampleSeries> OpenSampleSeries(const std::string& path);

}  // namespace rtpulse::results
