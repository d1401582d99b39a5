#include "monitor/source.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "core/clock.h"

namespace rtpulse::monitor {

double RateTracker::Rate(size_t i, uint64_t counter, int64_t now_ns) {
  const bool had = valid_[i];
  const uint64_t previous = last_[i];
  last_[i] = counter;
  valid_[i] = true;
  if (!had || last_ns_ < 0 || now_ns <= last_ns_ || counter < previous) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  // delta * 1e9 / ns keeps whole-number rates exact (100 events in 100 ms -> 1000).
  return static_cast<double>(counter - previous) * static_cast<double>(kNsPerSec) /
         static_cast<double>(now_ns - last_ns_);
}

std::string ColumnSafe(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

bool ParseCount(std::string_view text, uint64_t& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

}  // namespace rtpulse::monitor
