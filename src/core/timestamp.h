#pragma once

// Wall-clock times as rtpulse writes them: ISO 8601 UTC in JSON and text, and the local
// stamp that names a run's folder.

#include <cstdint>
#include <ctime>
#include <string>

namespace rtpulse {

/// "2026-01-02T03:04:05Z" for a CLOCK_REALTIME time in ns; "" when the time is unknown
/// (zero or negative) or out of the calendar's range.
std::string UtcIsoSeconds(int64_t realtime_ns);

/// "2026-01-02T03:04:05.678Z": the same with milliseconds (truncated, as seconds are).
std::string UtcIsoMillis(int64_t realtime_ns);

/// "20260102_030405": local time, the name a run's folder gets by default (suite, control,
/// e2e).
std::string RunFolderStamp(std::time_t now = std::time(nullptr));

}  // namespace rtpulse
