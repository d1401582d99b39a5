#pragma once

#include <cstdint>
#include <string>

namespace rtpulse::load {

/// The sum over stressors of stress-ng's --metrics-brief table.
struct StressNgMetrics {
  int stressors = 0;
  uint64_t bogo_ops = 0;
  double bogo_ops_per_second = 0;  ///< Real-time column.
};

/// Parses stress-ng's output ("stress-ng: metrc: [pid] cpu 208 1.00 0.18 0.00 207.18 ...").
StressNgMetrics ParseStressNgMetrics(const std::string& output);

}  // namespace rtpulse::load
