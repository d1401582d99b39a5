// `--wake timerlat` (trace/timerlat.h) as measure's records, so every output, `report` and
// `compare` show it like any other wake path: a path "timerlat" with the thread latency of each
// CPU (what cyclictest and rtla call the thread latency) and a path "timerlat-irq" with the
// latency the kernel saw at the timer's hard IRQ, side by side (docs/wake-paths.md#timerlat).
#pragma once

#include <string_view>
#include <vector>

#include "measure/recorder.h"
#include "trace/timerlat.h"

namespace rtpulse::suite {

inline constexpr std::string_view kTimerlatPath = "timerlat";
inline constexpr std::string_view kTimerlatIrqPath = "timerlat-irq";

/// The two paths of one timerlat run (probes in CPU order, index = position). Per probe:
/// periods_elapsed = the kernel's last activation number of that context, missed_activations
/// = activations numbered without a record (lost from the trace buffer), so samples + missed
/// = periods_elapsed; skipped_periods stays 0 (the timer re-arms every period itself).
std::vector<measure::PathRecord> TimerlatPaths(const trace::TimerlatResult& result,
                                               int64_t period_ns);

}  // namespace rtpulse::suite
