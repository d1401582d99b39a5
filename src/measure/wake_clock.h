#pragma once

// cyclictest's -c/--clock and -R/--resolution: which clock the timer paths sleep on, and how
// fine that clock reads. docs/latency.md, "Clocks".

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace rtpulse::measure {

/// First auxiliary clock id (CLOCK_AUX, Linux 6.17): aux0..aux7 are this + 0..7.
inline constexpr clockid_t kFirstAuxClock = 16;
inline constexpr int kAuxClocks = 8;

/// -c's value: cyclictest's numbers (0 = CLOCK_MONOTONIC, 1 = CLOCK_REALTIME) or a name:
/// monotonic, realtime, boottime, tai, aux0..aux7. A usage error lists what is accepted.
Expected<clockid_t> ParseWakeClock(std::string_view text);

/// "monotonic", "realtime", "boottime", "tai", "aux3"; "clock N" for another id.
std::string WakeClockName(clockid_t clock);

/// Whether this kernel has `clock` and can sleep on it (clock_nanosleep). A resource error
/// names the clock and what the kernel needs (an auxiliary clock: Linux 6.17's
/// CONFIG_POSIX_AUX_CLOCKS and the clock enabled in /sys/kernel/time/aux_clocks/N).
Status CheckWakeClock(clockid_t clock);

/// -R: the resolution the kernel reports for a clock (clock_getres) and the smallest step
/// seen between consecutive reads of it (which includes the cost of one read).
struct ClockResolution {
  int64_t reported_ns = 0;  ///< 0 when clock_getres failed.
  int64_t measured_ns = 0;  ///< 0 when every read returned the same time.
  int64_t reads = 0;        ///< Consecutive reads the measurement took.
};

/// Reads `clock` back to back for about a millisecond (at most 100,000 times).
ClockResolution MeasureClockResolution(clockid_t clock);

/// -R's verdict on clock `name`: a warning, recorded with the run, when it returned the same
/// time for every read or steps by more than a microsecond (cyclictest's unit); nullopt for a
/// finer step, which includes a read's own cost (about 20 ns) and so is above the 1 ns every
/// high-resolution clock reports.
std::optional<std::string> ClockResolutionWarning(const ClockResolution& r, std::string_view name);

}  // namespace rtpulse::measure
