#include "report/monitor_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/clock.h"
#include "core/parse.h"

namespace rtpulse::report {
namespace {

/// One line's cells as strings (core's SplitFields).
std::vector<std::string> SplitCsv(const std::string& line) {
  const std::vector<std::string_view> fields = SplitFields(line);
  return {fields.begin(), fields.end()};
}

/// The cell as a number; NaN when empty; false when it is text.
bool ParseCell(const std::string& cell, double& value) {
  if (cell.empty()) {
    value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  char* end = nullptr;
  value = std::strtod(cell.c_str(), &end);
  return end != cell.c_str() && *end == '\0' && cell.rfind("0x", 0) != 0;
}

}  // namespace

int64_t ParseUtcTimestampNs(const std::string& text) {
  std::tm utc{};
  int ms = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                  &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &ms) != 7) {
    return -1;
  }
  // Fields out of range are malformed, and so is a year past 2261: its nanoseconds since
  // 1970 do not fit in 64 bits (a corrupt or hostile file must not overflow the arithmetic).
  if (utc.tm_year < 1970 || utc.tm_year > 2261 || utc.tm_mon < 1 || utc.tm_mon > 12 ||
      utc.tm_mday < 1 || utc.tm_mday > 31 || utc.tm_hour < 0 || utc.tm_hour > 23 ||
      utc.tm_min < 0 || utc.tm_min > 59 || utc.tm_sec < 0 || utc.tm_sec > 60 || ms < 0 ||
      ms > 999) {
    return -1;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  const time_t seconds = timegm(&utc);
  if (seconds < 0) return -1;
  return static_cast<int64_t>(seconds) * kNsPerSec + int64_t{ms} * kNsPerMs;
}

Expected<MonitorLog> ReadMonitorLog(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Failure(fmt::format("cannot read {}", path));
  std::string line;
  if (!std::getline(in, line)) return Failure(fmt::format("{} is empty", path));
  const std::vector<std::string> header = SplitCsv(line);
  if (header.size() < 2 || header[0] != "timestamp" || header[1] != "elapsed_s") {
    return Failure(fmt::format("{}: header does not start with timestamp,elapsed_s", path));
  }
  MonitorLog log;
  const auto scenario_at =
      static_cast<size_t>(std::find(header.begin(), header.end(), "scenario") - header.begin());
  std::vector<bool> numeric(header.size(), true);
  std::vector<std::vector<double>> values(header.size());
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = SplitCsv(line);
    if (cells.size() != header.size()) continue;  // a row cut short by a crash
    log.realtime_ns.push_back(ParseUtcTimestampNs(cells[0]));
    if (scenario_at < header.size()) log.scenario.push_back(cells[scenario_at]);
    for (size_t c = 1; c < header.size(); ++c) {
      if (c == scenario_at) continue;
      double v = 0;
      if (!ParseCell(cells[c], v)) {
        numeric[c] = false;
        v = std::numeric_limits<double>::quiet_NaN();
      }
      values[c].push_back(v);
    }
  }
  log.elapsed_s = values[1];
  for (size_t c = 2; c < header.size(); ++c) {
    if (numeric[c] && c != scenario_at) log.columns.push_back({header[c], std::move(values[c])});
  }
  return log;
}

}  // namespace rtpulse::report
