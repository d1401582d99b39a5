#include "core/parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/clock.h"
#include "core/printable.h"

namespace rtpulse {

std::string_view TrimBlanks(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\r\n";
  const auto begin = text.find_first_not_of(kBlanks);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kBlanks) - begin + 1);
}

namespace {

bool ParseWhole(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

/// Splits "12.5ms" into number "12.5" and suffix "ms".
bool SplitNumber(std::string_view s, double& number, std::string_view& suffix) {
  size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  if (i == 0) return false;
  const std::string digits(s.substr(0, i));
  char* end = nullptr;
  number = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(number)) return false;
  suffix = s.substr(i);
  return true;
}

}  // namespace

Expected<uint64_t> ParseByteSize(std::string_view option, std::string_view text) {
  const std::string_view t = TrimBlanks(text);
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  std::string_view unit(end, static_cast<size_t>(t.data() + t.size() - end));
  if (ec != std::errc{} || t.empty()) {
    return UsageError(fmt::format(
        "{} '{}' is not a size; give bytes with an optional unit, e.g. 64M, 512K", option, text));
  }
  if (unit.ends_with("iB")) unit.remove_suffix(2);
  if (unit.ends_with("B") && unit.size() > 1) unit.remove_suffix(1);
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  if (unit == "M" || unit == "m") shift = 20;
  if (unit == "G" || unit == "g") shift = 30;
  if (unit == "T" || unit == "t") shift = 40;
  if (shift < 0) {
    return UsageError(
        fmt::format("{} '{}': unknown unit '{}'; use K, M, G or T (e.g. 64M)", option, text, unit));
  }
  if (shift > 0 && n > (std::numeric_limits<uint64_t>::max() >> shift)) {
    return UsageError(fmt::format("{} '{}' is past 2^64 bytes; give a smaller size", option, text));
  }
  return n << shift;
}

Expected<int64_t> ParseInt(std::string_view text, std::string_view what) {
  int64_t value = 0;
  const auto s = TrimBlanks(text);
  if (!ParseWhole(s, value) || value < 0) {
    return UsageError(
        fmt::format("invalid {} '{}': expected a whole number >= 0", what, Printable(text)));
  }
  return value;
}

Expected<int64_t> ParseSignedInt(std::string_view text, std::string_view what) {
  int64_t value = 0;
  if (!ParseWhole(TrimBlanks(text), value)) {
    return UsageError(
        fmt::format("invalid {} '{}': expected a whole number", what, Printable(text)));
  }
  return value;
}

Expected<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  const auto s = TrimBlanks(text);
  if (s.empty()) return UsageError("empty CPU list: give CPUs like '0-3,6'");
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    const auto item = s.substr(pos, comma - pos);
    const size_t dash = item.find('-');
    int64_t lo = 0;
    int64_t hi = 0;
    bool ok = false;
    if (dash == std::string_view::npos) {
      ok = ParseWhole(item, lo);
      hi = lo;
    } else {
      ok = ParseWhole(item.substr(0, dash), lo) && ParseWhole(item.substr(dash + 1), hi);
    }
    constexpr int64_t kMaxCpu = 8191;  // NR_CPUS upper bound in Debian kernels
    if (!ok || lo < 0 || hi < lo || hi > kMaxCpu) {
      return UsageError(
          fmt::format("invalid CPU list '{}' at '{}': use numbers and ranges like '0-3,6'",
                      Printable(text), Printable(item)));
    }
    for (int64_t c = lo; c <= hi; ++c) cpus.push_back(static_cast<int>(c));
    if (comma == s.size()) break;
    pos = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

Expected<int64_t> ParseDurationNs(std::string_view text) {
  const auto s = TrimBlanks(text);
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(s, number, suffix)) {
    return UsageError(
        fmt::format("invalid duration '{}': use a number with s, m, h or d, e.g. '30s' or '10m'",
                    Printable(text)));
  }
  // cyclictest's parse_time_string() also takes M, H and D: scripts use them with -D.
  std::string unit(suffix);
  if (unit.size() == 1) {
    unit[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0])));
  }
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else {
    return UsageError(
        fmt::format("invalid duration '{}': unknown unit '{}', use s, m, h or d (e.g. '30s')",
                    Printable(text), Printable(suffix)));
  }
  const double ns = number * scale * static_cast<double>(kNsPerSec);
  if (ns > 1e18) return UsageError(fmt::format("duration '{}' is too long", Printable(text)));
  return static_cast<int64_t>(std::llround(ns));
}

std::string FormatTimeNs(int64_t ns) {
  if (ns % kNsPerSec == 0) return fmt::format("{}s", ns / kNsPerSec);
  if (ns % kNsPerMs == 0) return fmt::format("{}ms", ns / kNsPerMs);
  if (ns % kNsPerUs == 0) return fmt::format("{}us", ns / kNsPerUs);
  return fmt::format("{}ns", ns);
}

Expected<int64_t> ParseTimeNs(std::string_view text, int64_t default_unit_ns) {
  const auto s = TrimBlanks(text);
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(s, number, suffix)) {
    return UsageError(fmt::format(
        "invalid time '{}': use a number with ns, us, ms or s, e.g. '2ms'", Printable(text)));
  }
  double scale = 0;
  if (suffix == "ns") {
    scale = 1;
  } else if (suffix == "us") {
    scale = 1e3;
  } else if (suffix == "ms") {
    scale = 1e6;
  } else if (suffix == "s") {
    scale = 1e9;
  } else if (suffix.empty() && default_unit_ns != 0) {
    scale = static_cast<double>(default_unit_ns);
  } else {
    return UsageError(
        fmt::format("invalid time '{}': give a unit ns, us, ms or s, e.g. '2ms'", Printable(text)));
  }
  const double ns = number * scale;
  if (ns > 1e18) return UsageError(fmt::format("time '{}' is too long", Printable(text)));
  return static_cast<int64_t>(std::llround(ns));
}

Expected<double> ParseRateHz(std::string_view text) {
  const auto s = TrimBlanks(text);
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(s, number, suffix)) {
    return UsageError(fmt::format("invalid rate '{}': use e.g. '10Hz' or '1kHz'", Printable(text)));
  }
  double scale = 0;
  if (suffix.empty() || suffix == "Hz" || suffix == "hz") {
    scale = 1;
  } else if (suffix == "kHz" || suffix == "khz") {
    scale = 1e3;
  } else {
    return UsageError(fmt::format("invalid rate '{}': unknown unit '{}', use Hz or kHz",
                                  Printable(text), Printable(suffix)));
  }
  if (number <= 0) return UsageError(fmt::format("rate '{}' must be above zero", Printable(text)));
  return number * scale;
}

std::vector<std::string_view> SplitFields(std::string_view line, char separator) {
  std::vector<std::string_view> fields;
  size_t from = 0;
  while (true) {
    const size_t at = line.find(separator, from);
    if (at == std::string_view::npos) {
      fields.push_back(line.substr(from));
      return fields;
    }
    fields.push_back(line.substr(from, at - from));
    from = at + 1;
  }
}

}  // namespace rtpulse
