#include "export/machine_metrics.h"

#include <array>
#include <cctype>
#include <cmath>
#include <string_view>

namespace rtpulse::exporter {
namespace {

constexpr std::array<std::string_view, 4> kStatuses = {"pass", "warn", "fail", "info"};

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

/// Where one monitor column goes: its family and labels, and the factor to base units.
struct Target {
  std::string_view family;
  std::string_view help;
  std::string_view unit;
  Labels labels;
  double scale = 1;
};

/// Columns numbered in the middle: prefix, number, suffix ("cpu3_freq_mhz").
struct NumberedRule {
  std::string_view prefix;
  std::string_view suffix;
  std::string_view label;
  std::string_view family;
  std::string_view help;
  std::string_view unit;
  double scale;
};

constexpr NumberedRule kNumbered[] = {
    {"cpu", "_freq_mhz", "cpu", "rtpulse_cpu_frequency_hertz", "Current CPU frequency", "hertz",
     1e6},
    {"cpu", "_busy_pct", "cpu", "rtpulse_cpu_busy_ratio",
     "Share of time the CPU was busy over the monitor interval (cpu=\"all\": every CPU)", "ratio",
     0.01},
    {"policy", "_capped", "policy", "rtpulse_frequency_capped",
     "1 when the cpufreq policy's maximum is held below the hardware maximum", "", 1},
    {"zone", "_passive_trip", "zone", "rtpulse_thermal_passive_trip",
     "1 when the thermal zone is at or above its lowest passive trip point", "", 1},
    {"irq_cpu", "_per_s", "cpu", "rtpulse_interrupts_per_second",
     "Hard interrupts handled by the CPU per second", "", 1},
    {"softirq_cpu", "_per_s", "cpu", "rtpulse_softirqs_per_second",
     "Softirqs run on the CPU per second", "", 1},
};

struct NamedRule {
  std::string_view column;
  std::string_view family;
  std::string_view help;
  std::string_view unit;
  std::string_view label;
  std::string_view label_value;
  double scale;
};

constexpr std::string_view kThrottledHelp =
    "1 while the Raspberry Pi firmware reports the condition now (vcgencmd get_throttled)";
constexpr std::string_view kVoltsHelp = "Supply voltage (vcgencmd)";
constexpr std::string_view kLoadHelp = "Load average (/proc/loadavg)";

constexpr NamedRule kNamed[] = {
    {"under_voltage_now", "rtpulse_throttled", kThrottledHelp, "", "condition", "under_voltage", 1},
    {"arm_freq_capped_now", "rtpulse_throttled", kThrottledHelp, "", "condition", "arm_freq_capped",
     1},
    {"throttled_now", "rtpulse_throttled", kThrottledHelp, "", "condition", "throttled", 1},
    {"soft_temp_limit_now", "rtpulse_throttled", kThrottledHelp, "", "condition", "soft_temp_limit",
     1},
    {"throttled_raw", "rtpulse_throttled_raw",
     "The raw get_throttled bit field (vcgencmd), as a number", "", "", "", 1},
    {"pmic_power_w", "rtpulse_board_power_watts",
     "Board power from the Raspberry Pi 5 PMIC (vcgencmd pmic_read_adc)", "watts", "", "", 1},
    {"ext5v_v", "rtpulse_voltage_volts", kVoltsHelp, "volts", "rail", "ext5v", 1},
    {"core_v", "rtpulse_voltage_volts", kVoltsHelp, "volts", "rail", "core", 1},
    {"cpu_steal_pct", "rtpulse_cpu_steal_ratio",
     "Share of time a hypervisor ran something else on the machine's CPUs", "ratio", "", "", 0.01},
    {"ctxt_per_s", "rtpulse_context_switches_per_second", "Context switches per second", "", "", "",
     1},
    {"mem_used_mib", "rtpulse_memory_used_bytes", "MemTotal - MemAvailable (/proc/meminfo)",
     "bytes", "", "", 1048576},
    {"mem_available_mib", "rtpulse_memory_available_bytes", "MemAvailable (/proc/meminfo)", "bytes",
     "", "", 1048576},
    {"load1", "rtpulse_load_average", kLoadHelp, "", "window", "1m", 1},
    {"load5", "rtpulse_load_average", kLoadHelp, "", "window", "5m", 1},
    {"load15", "rtpulse_load_average", kLoadHelp, "", "window", "15m", 1},
};

Target Classify(const std::string& column) {
  const std::string_view name = column;
  // temp_zone<N>[_<type>]_c
  constexpr std::string_view kTemp = "temp_zone";
  if (name.size() > kTemp.size() + 2 && name.starts_with(kTemp) && name.ends_with("_c")) {
    const std::string_view rest = name.substr(kTemp.size(), name.size() - kTemp.size() - 2);
    const size_t underscore = rest.find('_');
    const std::string_view zone = rest.substr(0, underscore);
    if (AllDigits(zone)) {
      const std::string_view type =
          underscore == std::string_view::npos ? std::string_view{} : rest.substr(underscore + 1);
      return {"rtpulse_temperature_celsius",
              "Thermal zone temperature (/sys/class/thermal)",
              "celsius",
              {{"zone", std::string(zone)}, {"type", std::string(type)}},
              1};
    }
  }
  for (const NamedRule& r : kNamed) {
    if (name != r.column) continue;
    Labels labels;
    if (!r.label.empty()) labels.push_back({std::string(r.label), std::string(r.label_value)});
    return {r.family, r.help, r.unit, std::move(labels), r.scale};
  }
  for (const NumberedRule& r : kNumbered) {
    if (name.size() < r.prefix.size() + r.suffix.size() || !name.starts_with(r.prefix) ||
        !name.ends_with(r.suffix)) {
      continue;
    }
    const std::string_view middle =
        name.substr(r.prefix.size(), name.size() - r.prefix.size() - r.suffix.size());
    if (middle.empty() && r.family == "rtpulse_cpu_busy_ratio") {
      return {r.family, r.help, r.unit, {{std::string(r.label), "all"}}, r.scale};
    }
    if (!AllDigits(middle)) continue;
    return {r.family, r.help, r.unit, {{std::string(r.label), std::string(middle)}}, r.scale};
  }
  return {{}, "A monitor column (docs/monitor.md) under its own name", "", {}, 1};
}

}  // namespace

void AppendSystemInfo(const Labels& labels, std::vector<MetricFamily>& out) {
  MetricFamily f;
  f.name = "rtpulse_system";
  f.help = "The machine and rtpulse: version, kernel release, preemption model, board";
  f.type = MetricType::kInfo;
  f.samples.push_back({"_info", labels, 1});
  out.push_back(std::move(f));
}

void AppendChecks(const std::vector<CheckState>& checks, double ran_at_unix_s,
                  std::vector<MetricFamily>& out) {
  MetricFamily f;
  f.name = "rtpulse_check_status";
  f.help =
      "The `rtpulse check` audit: 1 for the status each check has (pass, warn, fail, info), 0 "
      "for the others";
  f.type = MetricType::kGauge;
  for (const CheckState& c : checks) {
    for (std::string_view status : kStatuses) {
      f.samples.push_back({"",
                           {{"check", c.id}, {"area", c.area}, {"status", std::string(status)}},
                           c.status == status ? 1.0 : 0.0});
    }
  }
  out.push_back(std::move(f));
  MetricFamily when;
  when.name = "rtpulse_check_timestamp_seconds";
  when.help = "When the audit behind rtpulse_check_status ran (Unix time)";
  when.type = MetricType::kGauge;
  when.unit = "seconds";
  when.samples.push_back({"", {}, ran_at_unix_s});
  out.push_back(std::move(when));
}

void AppendMonitorReadings(const std::vector<MonitorReading>& readings,
                           std::vector<MetricFamily>& out) {
  const size_t first = out.size();
  for (const MonitorReading& r : readings) {
    Target t = Classify(r.column);
    const std::string family =
        t.family.empty() ? "rtpulse_monitor_" + SanitizeName(r.column) : std::string(t.family);
    MetricFamily* f = nullptr;
    for (size_t i = first; i < out.size(); ++i) {
      if (out[i].name == family) f = &out[i];
    }
    if (f == nullptr) {
      MetricFamily added;
      added.name = family;
      added.help = std::string(t.help);
      added.type = MetricType::kGauge;
      added.unit = std::string(t.unit);
      out.push_back(std::move(added));
      f = &out.back();
    }
    if (std::isnan(r.value)) continue;
    f->samples.push_back({"", std::move(t.labels), r.value * t.scale});
  }
}

}  // namespace rtpulse::exporter
