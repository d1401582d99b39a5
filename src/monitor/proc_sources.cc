// Sources under /proc: load, CPU use and steal, context switches, memory, IRQ and softirq
// rates per CPU.

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>

#include "core/memory_facts.h"
#include "monitor/sources.h"

namespace rtpulse::monitor {
namespace {

double ParseReal(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && !s.empty() ? v : kNaN;
}

class LoadSource : public Source {
 public:
  explicit LoadSource(const FsRoot& root) : root_(root) {}
  std::string_view name() const override { return "load"; }

  std::vector<Column> Start(std::vector<std::string>& notes) override {
    if (!root_.ReadLine("/proc/loadavg")) {
      notes.push_back("load: /proc/loadavg not readable; load columns dropped");
      return {};
    }
    return {{"load1", "tasks", ColumnKind::kGauge},
            {"load5", "tasks", ColumnKind::kGauge},
            {"load15", "tasks", ColumnKind::kGauge}};
  }

  void Sample(int64_t /*monotonic_ns*/, std::span<double> values) override {
    const auto line = root_.ReadLine("/proc/loadavg").value_or("");
    const auto fields = SplitFields(line);
    for (size_t i = 0; i < 3; ++i) values[i] = i < fields.size() ? ParseReal(fields[i]) : kNaN;
  }

 private:
  const FsRoot& root_;
};

/// One "cpu" line of /proc/stat: busy, steal and total jiffies.
struct CpuTimes {
  uint64_t busy = 0;
  uint64_t steal = 0;
  uint64_t total = 0;
};

/// "cpu" or "cpuN" -> times. Fields: user nice system idle iowait irq softirq steal (guest
/// time is already inside user and nice, so it is not added again).
std::optional<CpuTimes> ParseCpuLine(const std::vector<std::string_view>& fields) {
  if (fields.size() < 5) return std::nullopt;
  uint64_t v[8] = {};
  for (size_t i = 0; i < 8 && i + 1 < fields.size(); ++i) {
    if (!ParseCount(fields[i + 1], v[i])) return std::nullopt;
  }
  CpuTimes t;
  for (const uint64_t x : v) t.total += x;
  t.busy = t.total - v[3] - v[4] - v[7];  // not idle, iowait or stolen by the hypervisor
  t.steal = v[7];
  return t;
}

class CpuStatSource : public Source {
 public:
  explicit CpuStatSource(const FsRoot& root) : root_(root) {}
  std::string_view name() const override { return "cpu"; }

  std::vector<Column> Start(std::vector<std::string>& notes) override {
    auto text = root_.Read("/proc/stat");
    std::vector<Column> columns;
    if (text) {
      for (const auto line : SplitLines(*text)) {
        const auto fields = SplitFields(line);
        if (fields.empty() || !ParseCpuLine(fields)) continue;
        if (fields[0] == "cpu") {
          columns.push_back({"cpu_busy_pct", "%", ColumnKind::kGauge});
          columns.push_back({"cpu_steal_pct", "%", ColumnKind::kGauge});
          lines_.emplace_back("cpu");
        } else if (fields[0].rfind("cpu", 0) == 0) {
          columns.push_back({fmt::format("{}_busy_pct", fields[0]), "%", ColumnKind::kGauge});
          lines_.emplace_back(fields[0]);
        }
      }
    }
    const std::string all = text.value_or("");
    for (const auto line : SplitLines(all)) {
      const auto fields = SplitFields(line);
      if (fields.size() == 2 && fields[0] == "ctxt") has_ctxt_ = true;
    }
    if (has_ctxt_) columns.push_back({"ctxt_per_s", "1/s", ColumnKind::kGauge});
    if (columns.empty()) {
      notes.push_back(
          "cpu: /proc/stat not readable; CPU use, steal and context-switch "
          "columns dropped");
    }
    previous_.resize(lines_.size());
    ctxt_rate_.Resize(1);
    return columns;
  }

  void Sample(int64_t monotonic_ns, std::span<double> values) override {
    std::map<std::string, CpuTimes, std::less<>> now;
    std::optional<uint64_t> ctxt;
    const auto text = root_.Read("/proc/stat").value_or("");
    for (const auto line : SplitLines(text)) {
      const auto fields = SplitFields(line);
      if (fields.empty()) continue;
      if (fields[0] == "ctxt" && fields.size() == 2) {
        uint64_t v = 0;
        if (ParseCount(fields[1], v)) ctxt = v;
      } else if (auto t = ParseCpuLine(fields)) {
        now[std::string(fields[0])] = *t;
      }
    }
    size_t col = 0;
    for (size_t i = 0; i < lines_.size(); ++i) {
      const auto it = now.find(lines_[i]);
      std::optional<CpuTimes> cur;
      if (it != now.end()) cur = it->second;
      const auto& prev = previous_[i];
      double busy = kNaN;
      double steal = kNaN;
      if (cur && prev && cur->total > prev->total && cur->busy >= prev->busy &&
          cur->steal >= prev->steal) {
        const auto total = static_cast<double>(cur->total - prev->total);
        busy = 100.0 * static_cast<double>(cur->busy - prev->busy) / total;
        steal = 100.0 * static_cast<double>(cur->steal - prev->steal) / total;
      }
      previous_[i] = cur;
      values[col++] = busy;
      if (lines_[i] == "cpu") values[col++] = steal;
    }
    if (has_ctxt_) values[col] = ctxt ? ctxt_rate_.Rate(0, *ctxt, monotonic_ns) : kNaN;
    ctxt_rate_.Commit(monotonic_ns);
  }

 private:
  const FsRoot& root_;
  std::vector<std::string> lines_;
  std::vector<std::optional<CpuTimes>> previous_;
  bool has_ctxt_ = false;
  RateTracker ctxt_rate_;
};

class MemorySource : public Source {
 public:
  explicit MemorySource(const FsRoot& root) : root_(root) {}
  std::string_view name() const override { return "memory"; }

  std::vector<Column> Start(std::vector<std::string>& notes) override {
    double total = kNaN;
    double available = kNaN;
    Read(total, available);
    if (std::isnan(total) || std::isnan(available)) {
      notes.push_back(
          "memory: /proc/meminfo has no MemTotal/MemAvailable; memory columns "
          "dropped");
      return {};
    }
    return {{"mem_used_mib", "MiB", ColumnKind::kGauge},
            {"mem_available_mib", "MiB", ColumnKind::kGauge}};
  }

  void Sample(int64_t /*monotonic_ns*/, std::span<double> values) override {
    double total = kNaN;
    double available = kNaN;
    Read(total, available);
    values[0] = total - available;
    values[1] = available;
  }

 private:
  /// MemTotal and MemAvailable in MiB (meminfo prints kB).
  void Read(double& total, double& available) const {
    const std::string text = root_.Read("/proc/meminfo").value_or("");
    constexpr double kMiB = 1024.0 * 1024.0;
    if (const auto bytes = MeminfoBytes(text, "MemTotal")) {
      total = static_cast<double>(*bytes) / kMiB;
    }
    if (const auto bytes = MeminfoBytes(text, "MemAvailable")) {
      available = static_cast<double>(*bytes) / kMiB;
    }
  }
  const FsRoot& root_;
};

/// /proc/interrupts and /proc/softirqs share a layout: a header "CPU0 CPU1 ..." and rows
/// "NAME: count count ... [description]". Per-CPU sums over the rows that have one count
/// per CPU (ERR: and MIS: have a single total and are skipped).
class PerCpuCountSource : public Source {
 public:
  PerCpuCountSource(const FsRoot& root, std::string path, std::string prefix)
      : root_(root), path_(std::move(path)), prefix_(std::move(prefix)) {}
  std::string_view name() const override { return prefix_; }

  std::vector<Column> Start(std::vector<std::string>& notes) override {
    std::vector<Column> columns;
    if (auto text = root_.Read(path_)) {
      const auto lines = SplitLines(*text);
      if (!lines.empty()) {
        for (const auto cpu : SplitFields(lines[0])) {
          if (cpu.rfind("CPU", 0) != 0) continue;
          columns.push_back(
              {fmt::format("{}_cpu{}_per_s", prefix_, cpu.substr(3)), "1/s", ColumnKind::kGauge});
        }
      }
    }
    if (columns.empty()) {
      notes.push_back(fmt::format("{}: {} not readable; per-CPU {} rate columns dropped", prefix_,
                                  path_, prefix_));
    }
    rates_.Resize(columns.size());
    return columns;
  }

  void Sample(int64_t monotonic_ns, std::span<double> values) override {
    const auto text = root_.Read(path_);
    std::vector<uint64_t> sums(values.size(), 0);
    bool ok = text.has_value();
    if (ok) {
      const auto lines = SplitLines(*text);
      for (size_t l = 1; l < lines.size(); ++l) {
        const auto fields = SplitFields(lines[l]);
        if (fields.size() < sums.size() + 1) continue;
        std::vector<uint64_t> counts(sums.size());
        bool row = true;
        for (size_t c = 0; c < sums.size() && row; ++c) row = ParseCount(fields[c + 1], counts[c]);
        if (!row) continue;
        for (size_t c = 0; c < sums.size(); ++c) sums[c] += counts[c];
      }
    }
    for (size_t c = 0; c < sums.size(); ++c) {
      values[c] = ok ? rates_.Rate(c, sums[c], monotonic_ns) : kNaN;
    }
    rates_.Commit(monotonic_ns);
  }

 private:
  const FsRoot& root_;
  std::string path_;
  std::string prefix_;
  RateTracker rates_;
};

}  // namespace

std::unique_ptr<Source> MakeLoadSource(const FsRoot& root) {
  return std::make_unique<LoadSource>(root);
}
std::unique_ptr<Source> MakeCpuStatSource(const FsRoot& root) {
  return std::make_unique<CpuStatSource>(root);
}
std::unique_ptr<Source> MakeMemorySource(const FsRoot& root) {
  return std::make_unique<MemorySource>(root);
}
std::unique_ptr<Source> MakeInterruptsSource(const FsRoot& root) {
  return std::make_unique<PerCpuCountSource>(root, "/proc/interrupts", "irq");
}
std::unique_ptr<Source> MakeSoftirqsSource(const FsRoot& root) {
  return std::make_unique<PerCpuCountSource>(root, "/proc/softirqs", "softirq");
}

}  // namespace rtpulse::monitor
