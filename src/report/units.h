#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace rtpulse::report {

/// Nanoseconds as microseconds, the unit every table and figure of a report uses.
inline double NsToUs(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

/// Nanoseconds as a microsecond figure with one decimal ("12.3"), for tables.
inline std::string FormatUs(double ns) {
  return fmt::format("{:.1f}", ns / 1000.0);
}
inline std::string FormatUs(int64_t ns) {
  return FormatUs(static_cast<double>(ns));
}

}  // namespace rtpulse::report
