#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace rtpulse::report {

/// thermal_power_log.csv (docs/monitor.md) read back: every numeric column, whatever the
/// machine logged. An empty cell (a value that could not be read) is NaN.
struct MonitorLog {
  std::vector<int64_t> realtime_ns;  ///< From `timestamp` (UTC, ms); lines up with results.
  std::vector<double> elapsed_s;
  struct Column {
    std::string name;
    std::vector<double> values;  ///< One per row; NaN where the cell was empty.
  };
  std::vector<Column> columns;  ///< Numeric columns other than timestamp and elapsed_s.
  /// The `scenario` cell of each row ("" between scenarios); empty when the file has no such
  /// column (logs written before it existed, or by other tools).
  std::vector<std::string> scenario;
};

/// Reads the CSV. Columns that hold text (throttled_raw's hex) are left out. A file that
/// does not exist is an error (callers skip the figures with a note).
Expected<MonitorLog> ReadMonitorLog(const std::string& path);

/// Parses "2024-05-01T12:00:00.123Z" (what the monitor writes) as UTC; -1 when malformed.
int64_t ParseUtcTimestampNs(const std::string& text);

}  // namespace rtpulse::report
