#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "monitor/source.h"

namespace rtpulse::monitor {

/// Running statistics of one column.
struct ColumnStats {
  Column column;
  uint64_t samples = 0;  ///< Samples with a value (an empty CSV cell does not count).
  double min = 0;
  double max = 0;
  double sum = 0;
  uint64_t rising_edges = 0;      ///< kThrottleFlag: 0 -> 1 between two consecutive samples.
  std::vector<int64_t> above_ns;  ///< kTemperature: time at or above each threshold.
  double first = 0;               ///< First and last logged value (kHex: the raw bits).
  double last = 0;
  double avg() const { return samples == 0 ? 0 : sum / static_cast<double>(samples); }
};

/// Accumulates every sample's row; streaming, so a day-long run keeps no rows in memory.
class StatsAccumulator {
 public:
  StatsAccumulator(std::vector<Column> columns, std::vector<double> thresholds_c);
  void Add(int64_t monotonic_ns, std::span<const double> values);

  const std::vector<ColumnStats>& columns() const { return columns_; }
  const std::vector<double>& thresholds_c() const { return thresholds_c_; }
  uint64_t rows() const { return rows_; }
  /// From the first sample to the last.
  int64_t logged_ns() const { return rows_ == 0 ? 0 : last_ns_ - first_ns_; }

 private:
  std::vector<ColumnStats> columns_;
  std::vector<double> thresholds_c_;
  std::vector<double> previous_;  ///< Last row (NaN where empty), for edges and hold times.
  uint64_t rows_ = 0;
  int64_t first_ns_ = 0;
  int64_t last_ns_ = 0;
};

/// Everything the stats file says besides the numbers.
struct StatsContext {
  int64_t interval_ns = 0;
  std::vector<std::string> notes;
  bool interrupted = false;
};

/// The text of power_thermal_stats.txt (docs/monitor.md describes every line).
std::string FormatStats(const StatsAccumulator& stats, const StatsContext& context);

/// A CSV cell: "" for NaN, "0x50005" for kHex, else up to 4 decimals without trailing zeros.
std::string FormatValue(double value, ColumnKind kind = ColumnKind::kGauge);

}  // namespace rtpulse::monitor
