#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rtpulse::monitor {

/// A value that is not available this time (see Source::Sample).
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// How the statistics treat a column.
enum class ColumnKind {
  kGauge,         ///< A level or a rate: min/avg/max.
  kTemperature,   ///< Degrees C: min/avg/max plus time above the thresholds.
  kThrottleFlag,  ///< 0/1 "limited now": min/avg/max plus rising edges (throttle events).
  kHex,           ///< A raw bit field (get_throttled): logged in hex, no min/avg/max.
};

/// One CSV column. The unit is also the suffix of the name (`_c`, `_mhz`, `_pct`, ...).
struct Column {
  std::string name;
  std::string unit;
  ColumnKind kind = ColumnKind::kGauge;
};

/// One kind of measurement (thermal zones, cpufreq, /proc/stat, vcgencmd ...). It finds its
/// columns once at start; a source whose files or command are missing returns none and says
/// why in a note: a missing source is never an error.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::string_view name() const = 0;
  /// Discovers the columns. Empty (and a line added to `notes`) when the source is absent.
  virtual std::vector<Column> Start(std::vector<std::string>& notes) = 0;
  /// Fills one value per column from Start(); NaN where a value is not available this time
  /// (a file vanished, a command failed, a rate on the first sample).
  virtual void Sample(int64_t monotonic_ns, std::span<double> values) = 0;
};

/// Turns a monotonically increasing counter into a per-second rate between samples.
class RateTracker {
 public:
  explicit RateTracker(size_t counters = 0) : last_(counters), valid_(counters, false) {}
  void Resize(size_t counters) {
    last_.assign(counters, 0);
    valid_.assign(counters, false);
  }
  /// Rate of counter `i` since the previous call with a valid time; NaN on the first call or
  /// when the counter went backwards (reset or wrap).
  double Rate(size_t i, uint64_t counter, int64_t now_ns);
  /// Marks the end of one sample: later Rate() calls measure from `now_ns`.
  void Commit(int64_t now_ns) { last_ns_ = now_ns; }

 private:
  std::vector<uint64_t> last_;
  std::vector<bool> valid_;
  int64_t last_ns_ = -1;
};

/// Lower-case letters, digits and '_' only ("cpu-thermal" -> "cpu_thermal").
std::string ColumnSafe(std::string_view text);

/// Whitespace-separated fields of one line.
std::vector<std::string_view> SplitFields(std::string_view line);

/// Lines of a text file, without the newline.
std::vector<std::string_view> SplitLines(std::string_view text);

/// Parses a whole unsigned number; false on anything else.
bool ParseCount(std::string_view text, uint64_t& out);

}  // namespace rtpulse::monitor
