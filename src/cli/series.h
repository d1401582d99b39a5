#pragma once

// One scenario's per-sample log as a time-ordered series for the extreme value analysis
// (`rtpulse wcet`, `rtpulse report`'s worst-case section; docs/wcet.md, "Memory").

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "stats/evt.h"

namespace rtpulse::cli {

/// Every probe thread's records merged by deadline (wcet_cmd.cc), replayed by `pass`: each
/// call reads the file again, so the series is never held.
struct SeriesLog {
  stats::SeriesPass pass;
  size_t threads = 0;
  uint64_t dropped = 0;
  bool has_trailer = true;
};

/// Checks the log (a first pass counts each thread's records) and returns its replay.
Expected<SeriesLog> OpenSeriesLog(const std::string& path);

}  // namespace rtpulse::cli
