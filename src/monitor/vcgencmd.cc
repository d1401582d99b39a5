// Raspberry Pi firmware readings through `vcgencmd`, run by a CommandRunner so tests run the
// same path with a fake script on PATH.

#include "monitor/vcgencmd.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>

#include "core/parse.h"
#include "core/printable.h"
#include "monitor/sources.h"

namespace rtpulse::monitor {
namespace {

/// "key=<number><unit>" -> number; nullopt for another key, "nan" or garbage.
std::optional<double> ValueAfter(std::string_view line, std::string_view key,
                                 std::string_view unit) {
  line = TrimBlanks(line);
  if (line.rfind(key, 0) != 0) return std::nullopt;
  line.remove_prefix(key.size());
  if (line.size() < unit.size() || line.substr(line.size() - unit.size()) != unit) {
    return std::nullopt;
  }
  const std::string number(line.substr(0, line.size() - unit.size()));
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

class VcgencmdSource : public Source {
 public:
  VcgencmdSource(const CommandRunner& runner, std::chrono::milliseconds timeout)
      : runner_(runner), timeout_(timeout) {}
  std::string_view name() const override { return "vcgencmd"; }

  std::vector<Column> Start(std::vector<std::string>& notes) override {
    std::vector<Column> columns;
    if (runner_.Find("vcgencmd").empty()) {
      notes.push_back(
          "vcgencmd: not found on PATH (not Raspberry Pi OS); firmware throttling, PMIC power "
          "and core voltage columns dropped (throttling falls back to the cpufreq and "
          "thermal limits)");
      return columns;
    }
    if (auto t = Throttled(); !t.empty()) {
      throttled_ = true;
      columns.push_back({"throttled_raw", "hex", ColumnKind::kHex});
      for (const char* flag :
           {"under_voltage_now", "arm_freq_capped_now", "throttled_now", "soft_temp_limit_now"}) {
        columns.push_back({flag, "0/1", ColumnKind::kThrottleFlag});
      }
    } else {
      notes.push_back("vcgencmd get_throttled: " + error_ + "; throttling columns dropped");
    }
    if (auto p = Pmic(); p) {
      pmic_ = true;
      columns.push_back({"pmic_power_w", "W", ColumnKind::kGauge});
      ext5v_ = p->ext5v_v.has_value();
      if (ext5v_) columns.push_back({"ext5v_v", "V", ColumnKind::kGauge});
    } else {
      notes.push_back("vcgencmd pmic_read_adc: " + error_ +
                      " (only a Raspberry Pi 5 has the PMIC); power columns dropped");
    }
    if (Volts()) {
      volts_ = true;
      columns.push_back({"core_v", "V", ColumnKind::kGauge});
    } else {
      notes.push_back("vcgencmd measure_volts core: " + error_ + "; core_v dropped");
    }
    return columns;
  }

  void Sample(int64_t /*monotonic_ns*/, std::span<double> values) override {
    size_t i = 0;
    if (throttled_) {
      const auto t = Throttled();
      const bool ok = !t.empty();
      values[i++] = ok ? static_cast<double>(t[0]) : kNaN;
      for (const uint32_t bit :
           {kUnderVoltageNow, kArmFreqCappedNow, kThrottledNow, kSoftTempLimitNow}) {
        values[i++] = ok ? ((t[0] & bit) != 0 ? 1.0 : 0.0) : kNaN;
      }
    }
    if (pmic_) {
      const auto p = Pmic();
      values[i++] = p ? p->power_w : kNaN;
      if (ext5v_) values[i++] = p && p->ext5v_v ? *p->ext5v_v : kNaN;
    }
    if (volts_) values[i++] = Volts().value_or(kNaN);
  }

 private:
  std::optional<std::string> Call(std::vector<std::string> argv) {
    argv.insert(argv.begin(), "vcgencmd");
    auto out = RunForStdout(runner_, argv, timeout_);
    if (!out) {
      error_ = out.error().message;
      return std::nullopt;
    }
    return std::move(*out);
  }

  /// One element (the bits) or none; a vector keeps Sample() free of optional-of-int noise.
  std::vector<uint32_t> Throttled() {
    auto out = Call({"get_throttled"});
    if (!out) return {};
    auto flags = ParseGetThrottled(*out);
    if (!flags) {
      error_ = fmt::format("unexpected output '{}'", Printable(TrimBlanks(*out)));
      return {};
    }
    return {flags->raw};
  }

  std::optional<PmicReading> Pmic() {
    auto out = Call({"pmic_read_adc"});
    if (!out) return std::nullopt;
    auto reading = ParsePmicReadAdc(*out);
    if (!reading)
      error_ = fmt::format("no current/voltage rail pairs in '{}'", Printable(TrimBlanks(*out)));
    return reading;
  }

  std::optional<double> Volts() {
    auto out = Call({"measure_volts", "core"});
    if (!out) return std::nullopt;
    auto v = ParseVolts(*out);
    if (!v) error_ = fmt::format("unexpected output '{}'", Printable(TrimBlanks(*out)));
    return v;
  }

  const CommandRunner& runner_;
  std::chrono::milliseconds timeout_;
  std::string error_;
  bool throttled_ = false;
  bool pmic_ = false;
  bool ext5v_ = false;
  bool volts_ = false;
};

}  // namespace

std::optional<double> ParseVolts(std::string_view text) {
  return ValueAfter(text, "volt=", "V");
}

std::optional<PmicReading> ParsePmicReadAdc(std::string_view text) {
  std::map<std::string, double, std::less<>> amps;
  std::map<std::string, double, std::less<>> volts;
  for (const auto line : SplitLines(text)) {
    const auto fields = SplitFields(line);
    if (fields.size() != 2) continue;
    const std::string_view rail = fields[0];
    const std::string_view reading = fields[1];
    const size_t eq = reading.find('=');
    if (eq == std::string_view::npos || rail.size() < 3) continue;
    const std::string_view base = rail.substr(0, rail.size() - 2);
    const std::string_view suffix = rail.substr(rail.size() - 2);
    const std::string_view number = reading.substr(eq + 1);
    if (suffix == "_A") {
      if (auto a = ValueAfter(number, "", "A")) amps[std::string(base)] = *a;
    } else if (suffix == "_V") {
      if (auto v = ValueAfter(number, "", "V")) volts[std::string(base)] = *v;  // nanV: skipped
    }
  }
  PmicReading r;
  for (const auto& [rail, a] : amps) {
    const auto v = volts.find(rail);
    if (v == volts.end()) continue;
    r.power_w += a * v->second;
    ++r.rails;
  }
  if (const auto ext = volts.find("EXT5V"); ext != volts.end()) r.ext5v_v = ext->second;
  if (r.rails == 0) return std::nullopt;
  return r;
}

std::string DescribeThrottled(uint32_t bits) {
  std::string out;
  const std::pair<uint32_t, const char*> names[] = {{kUnderVoltageNow, "under-voltage"},
                                                    {kArmFreqCappedNow, "arm frequency capped"},
                                                    {kThrottledNow, "throttled"},
                                                    {kSoftTempLimitNow, "soft temperature limit"}};
  for (const auto& [bit, name] : names) {
    if ((bits & bit) == 0) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out.empty() ? "none" : out;
}

std::unique_ptr<Source> MakeVcgencmdSource(const CommandRunner& runner,
                                           std::chrono::milliseconds timeout) {
  return std::make_unique<VcgencmdSource>(runner, timeout);
}

}  // namespace rtpulse::monitor
