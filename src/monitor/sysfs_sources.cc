// Sources under /sys: thermal zones, cpufreq frequencies and the limits that show throttling
// on machines without vcgencmd.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "core/parse.h"
#include "monitor/sources.h"

namespace rtpulse::monitor {
namespace {

constexpr const char* kThermal = "/sys/class/thermal";
constexpr const char* kCpufreq = "/sys/devices/system/cpu/cpufreq";

/// Numbered entries `<prefix><N>` of a folder, by N (hwmon-style numbers are not sorted
/// by the kernel's readdir).
std::map<int, std::string> Numbered(const FsRoot& root, const std::string& dir,
                                    std::string_view prefix) {
  std::map<int, std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root.Path(dir), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    uint64_t n = 0;
    if (!ParseCount(std::string_view(name).substr(prefix.size()), n)) continue;
    out[static_cast<int>(n)] = dir + "/" + name;
  }
  return out;
}

/// A whole number read from a one-line sysfs file.
std::optional<int64_t> ReadNumber(const FsRoot& root, const std::string& path) {
  auto line = root.ReadLine(path);
  if (!line) return std::nullopt;
  std::string_view text = *line;
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  uint64_t value = 0;
  if (!ParseCount(text, value)) return std::nullopt;
  return negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
}

double Value(std::optional<int64_t> v, double scale) {
  return v ? static_cast<double>(*v) / scale : kNaN;
}

class ThermalSource : public Source {
 public:
  explicit ThermalSource(const FsRoot& root) : root_(root) {}
  std::string_view name() const override { return "thermal"; }

  std::vector<Column> Start(std::vector<std::string>& notes) override {
    std::vector<Column> columns;
    for (const auto& [n, dir] : Numbered(root_, kThermal, "thermal_zone")) {
      if (!ReadNumber(root_, dir + "/temp")) continue;
      const std::string type = ColumnSafe(root_.ReadLine(dir + "/type").value_or(""));
      columns.push_back({fmt::format("temp_zone{}{}{}_c", n, type.empty() ? "" : "_", type), "C",
                         ColumnKind::kTemperature});
      paths_.push_back(dir + "/temp");
    }
    if (columns.empty()) {
      notes.push_back(fmt::format(
          "thermal: no readable {}/thermal_zone*/temp; temperature columns dropped", kThermal));
    }
    return columns;
  }

  void Sample(int64_t /*monotonic_ns*/, std::span<double> values) override {
    for (size_t i = 0; i < paths_.size(); ++i) values[i] = Value(ReadNumber(root_, paths_[i]), 1e3);
  }

 private:
  const FsRoot& root_;
  std::vector<std::string> paths_;
};

/// CPUs a cpufreq policy drives (related_cpus, else affected_cpus).
std::vector<int> PolicyCpus(const FsRoot& root, const std::string& dir) {
  for (const char* file : {"/related_cpus", "/affected_cpus"}) {
    auto line = root.ReadLine(dir + file);
    if (!line) continue;
    std::string list = *line;
    std::replace(list.begin(), list.end(), ' ', ',');
    if (auto cpus = ParseCpuList(list)) return *cpus;
  }
  return {};
}

class CpufreqSource : public Source {
 public:
  explicit CpufreqSource(const FsRoot& root) : root_(root) {}
  std::string_view name() const override { return "cpufreq"; }

  std::vector<Column> Start(std::vector<std::string>& notes) override {
    std::map<int, std::string> by_cpu;
    for (const auto& [n, dir] : Numbered(root_, kCpufreq, "policy")) {
      if (!ReadNumber(root_, dir + "/scaling_cur_freq")) continue;
      for (const int cpu : PolicyCpus(root_, dir)) by_cpu[cpu] = dir + "/scaling_cur_freq";
    }
    std::vector<Column> columns;
    for (const auto& [cpu, path] : by_cpu) {
      columns.push_back({fmt::format("cpu{}_freq_mhz", cpu), "MHz", ColumnKind::kGauge});
      paths_.push_back(path);
    }
    if (columns.empty()) {
      notes.push_back(fmt::format(
          "cpufreq: no readable {}/policy*/scaling_cur_freq; frequency columns dropped", kCpufreq));
    }
    return columns;
  }

  void Sample(int64_t /*monotonic_ns*/, std::span<double> values) override {
    for (size_t i = 0; i < paths_.size(); ++i) values[i] = Value(ReadNumber(root_, paths_[i]), 1e3);
  }

 private:
  const FsRoot& root_;
  std::vector<std::string> paths_;
};

/// Lowest passive trip point of a thermal zone in millidegrees, if it has one.
std::optional<int64_t> PassiveTrip(const FsRoot& root, const std::string& zone) {
  std::optional<int64_t> lowest;
  for (int k = 0;; ++k) {
    auto type = root.ReadLine(fmt::format("{}/trip_point_{}_type", zone, k));
    if (!type) break;
    if (*type != "passive") continue;
    auto temp = ReadNumber(root, fmt::format("{}/trip_point_{}_temp", zone, k));
    if (temp && (!lowest || *temp < *lowest)) lowest = temp;
  }
  return lowest;
}

class LimitsSource : public Source {
 public:
  explicit LimitsSource(const FsRoot& root) : root_(root) {}
  std::string_view name() const override { return "limits"; }

  std::vector<Column> Start(std::vector<std::string>& notes) override {
    std::vector<Column> columns;
    for (const auto& [n, dir] : Numbered(root_, kCpufreq, "policy")) {
      auto hardware_max = ReadNumber(root_, dir + "/cpuinfo_max_freq");
      if (!hardware_max || !ReadNumber(root_, dir + "/scaling_max_freq")) continue;
      columns.push_back({fmt::format("policy{}_capped", n), "0/1", ColumnKind::kThrottleFlag});
      checks_.push_back({dir + "/scaling_max_freq", *hardware_max, true});
    }
    for (const auto& [n, dir] : Numbered(root_, kThermal, "thermal_zone")) {
      auto trip = PassiveTrip(root_, dir);
      if (!trip || !ReadNumber(root_, dir + "/temp")) continue;
      columns.push_back({fmt::format("zone{}_passive_trip", n), "0/1", ColumnKind::kThrottleFlag});
      checks_.push_back({dir + "/temp", *trip, false});
    }
    if (columns.empty()) {
      notes.push_back(
          "limits: no cpufreq scaling_max_freq/cpuinfo_max_freq and no passive thermal trip "
          "point; frequency-cap and trip columns dropped");
    }
    return columns;
  }

  void Sample(int64_t /*monotonic_ns*/, std::span<double> values) override {
    for (size_t i = 0; i < checks_.size(); ++i) {
      const Check& c = checks_[i];
      auto v = ReadNumber(root_, c.path);
      if (!v) {
        values[i] = kNaN;
      } else if (c.capped_below) {
        values[i] = *v < c.limit ? 1.0 : 0.0;  // scaling_max_freq below the hardware maximum
      } else {
        values[i] = *v >= c.limit ? 1.0 : 0.0;  // temperature at or above the passive trip
      }
    }
  }

 private:
  struct Check {
    std::string path;
    int64_t limit;
    bool capped_below;
  };
  const FsRoot& root_;
  std::vector<Check> checks_;
};

}  // namespace

std::unique_ptr<Source> MakeThermalSource(const FsRoot& root) {
  return std::make_unique<ThermalSource>(root);
}
std::unique_ptr<Source> MakeCpufreqSource(const FsRoot& root) {
  return std::make_unique<CpufreqSource>(root);
}
std::unique_ptr<Source> MakeLimitsSource(const FsRoot& root) {
  return std::make_unique<LimitsSource>(root);
}

}  // namespace rtpulse::monitor
