#include "monitor/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/clock.h"
#include "monitor/vcgencmd.h"

namespace rtpulse::monitor {
namespace {

std::string Seconds(int64_t ns) {
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

void AppendTable(std::string& out, const StatsAccumulator& stats) {
  out += fmt::format("{:<28} {:>6} {:>8} {:>12} {:>12} {:>12}\n", "column", "unit", "samples",
                     "min", "avg", "max");
  for (const auto& c : stats.columns()) {
    if (c.column.kind == ColumnKind::kHex) continue;
    if (c.samples == 0) {
      out += fmt::format("{:<28} {:>6} {:>8} {:>12} {:>12} {:>12}\n", c.column.name, c.column.unit,
                         0, "-", "-", "-");
      continue;
    }
    out += fmt::format("{:<28} {:>6} {:>8} {:>12} {:>12} {:>12}\n", c.column.name, c.column.unit,
                       c.samples, FormatValue(c.min), FormatValue(c.avg()), FormatValue(c.max));
  }
}

void AppendThrottling(std::string& out, const StatsAccumulator& stats) {
  out += "\nthrottle events (0 -> 1 transitions of a \"now\" flag between two samples):\n";
  uint64_t total = 0;
  bool any = false;
  for (const auto& c : stats.columns()) {
    if (c.column.kind != ColumnKind::kThrottleFlag) continue;
    any = true;
    total += c.rising_edges;
    out += fmt::format("  {:<26} {}\n", c.column.name, c.rising_edges);
  }
  if (!any) {
    out += "  no throttling source (see notes)\n";
    return;
  }
  out += fmt::format("  {:<26} {}\n", "total", total);
  for (const auto& c : stats.columns()) {
    if (c.column.kind != ColumnKind::kHex || c.samples == 0) continue;
    const auto last = static_cast<uint32_t>(c.last);
    out +=
        fmt::format("  {} first {}, last {}; since boot (last sample): {}\n", c.column.name,
                    FormatValue(c.first, ColumnKind::kHex), FormatValue(c.last, ColumnKind::kHex),
                    DescribeThrottled(last >> kThrottledSinceBootShift));
  }
}

void AppendThresholds(std::string& out, const StatsAccumulator& stats) {
  out += "\ntime at or above temperature thresholds (each sample holds until the next):\n";
  bool any = false;
  for (const auto& c : stats.columns()) {
    if (c.column.kind != ColumnKind::kTemperature) continue;
    any = true;
    for (size_t k = 0; k < stats.thresholds_c().size(); ++k) {
      const int64_t logged = stats.logged_ns();
      const double pct =
          logged > 0 ? 100.0 * static_cast<double>(c.above_ns[k]) / static_cast<double>(logged)
                     : 0.0;
      out += fmt::format("  {:<26} >= {} C  {} ({:.1f} % of {})\n", c.column.name,
                         FormatValue(stats.thresholds_c()[k]), Seconds(c.above_ns[k]), pct,
                         Seconds(logged));
    }
  }
  if (!any) out += "  no temperature source (see notes)\n";
}

}  // namespace

StatsAccumulator::StatsAccumulator(std::vector<Column> columns, std::vector<double> thresholds_c)
    : thresholds_c_(std::move(thresholds_c)), previous_(columns.size(), kNaN) {
  for (auto& column : columns) {
    ColumnStats s;
    s.column = std::move(column);
    s.above_ns.assign(thresholds_c_.size(), 0);
    columns_.push_back(std::move(s));
  }
}

void StatsAccumulator::Add(int64_t monotonic_ns, std::span<const double> values) {
  const int64_t since_previous = rows_ == 0 ? 0 : monotonic_ns - last_ns_;
  for (size_t i = 0; i < columns_.size(); ++i) {
    ColumnStats& s = columns_[i];
    const double v = values[i];
    const double before = previous_[i];
    previous_[i] = v;
    // Sample-and-hold: the previous value lasted until this sample.
    if (s.column.kind == ColumnKind::kTemperature && !std::isnan(before)) {
      for (size_t k = 0; k < thresholds_c_.size(); ++k) {
        if (before >= thresholds_c_[k]) s.above_ns[k] += since_previous;
      }
    }
    if (std::isnan(v)) continue;
    if (s.column.kind == ColumnKind::kThrottleFlag && !std::isnan(before) && before < 0.5 &&
        v >= 0.5) {
      ++s.rising_edges;
    }
    if (s.samples == 0) {
      s.min = s.max = s.first = v;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.sum += v;
    s.last = v;
    ++s.samples;
  }
  if (rows_ == 0) first_ns_ = monotonic_ns;
  last_ns_ = monotonic_ns;
  ++rows_;
}

std::string FormatValue(double value, ColumnKind kind) {
  if (std::isnan(value)) return "";
  if (kind == ColumnKind::kHex) return fmt::format("0x{:x}", static_cast<uint64_t>(value));
  std::string s = fmt::format("{:.4f}", value);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string FormatStats(const StatsAccumulator& stats, const StatsContext& context) {
  std::string out = "rtpulse monitor: power and thermal statistics\n";
  out += fmt::format("samples    {} every {}, {} logged{}\n", stats.rows(),
                     Seconds(context.interval_ns), Seconds(stats.logged_ns()),
                     context.interrupted ? " (interrupted)" : "");
  if (!context.notes.empty()) {
    out += "notes:\n";
    for (const auto& n : context.notes) out += "  - " + n + "\n";
  }
  out += "\n";
  AppendTable(out, stats);
  AppendThrottling(out, stats);
  AppendThresholds(out, stats);
  const bool power =
      std::any_of(stats.columns().begin(), stats.columns().end(),
                  [](const ColumnStats& c) { return c.column.name == "pmic_power_w"; });
  if (power) {
    out +=
        "\npmic_power_w: sum of V x I over the PMIC rails paired by name (X_A with X_V). It "
        "is the power the board's rails deliver and excludes conversion losses, so the draw "
        "at the 5 V input is higher.\n";
  }
  return out;
}

}  // namespace rtpulse::monitor
