#pragma once

#include <cstdint>
#include <ctime>

namespace rtpulse {

constexpr int64_t kNsPerUs = 1000;
constexpr int64_t kNsPerMs = 1000 * kNsPerUs;
constexpr int64_t kNsPerSec = 1000 * kNsPerMs;

/// Reads a POSIX clock as signed nanoseconds. Inline: it sits in the measurement hot path.
inline int64_t ClockNs(clockid_t clock) {
  timespec ts;  // filled by clock_gettime, which cannot fail for the clocks used here
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

inline int64_t MonotonicNs() {
  return ClockNs(CLOCK_MONOTONIC);
}

inline timespec ToTimespec(int64_t ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / kNsPerSec);
  ts.tv_nsec = static_cast<long>(ns % kNsPerSec);
  if (ts.tv_nsec < 0) {
    ts.tv_nsec += kNsPerSec;
    ts.tv_sec -= 1;
  }
  return ts;
}

}  // namespace rtpulse
