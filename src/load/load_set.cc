#include "load/load_set.h"

#include <fmt/format.h>

#include "core/parse.h"
#include "load/registry.h"

namespace rtpulse::load {

LoadSet::LoadSet(std::vector<LoadSpec> specs) {
  for (const auto& spec : specs) loads_.push_back(CreateLoad(spec));
}

LoadSet::~LoadSet() {
  Stop();
}

Status LoadSet::Start() {
  for (auto& load : loads_) {
    if (Status s = load->Start(); !s) {
      Stop();
      return s;
    }
  }
  return Status::Ok();
}

void LoadSet::Stop() {
  for (auto& load : loads_) load->Stop();
}

std::vector<LoadReport> LoadSet::Reports() const {
  std::vector<LoadReport> out;
  for (const auto& load : loads_) out.push_back(load->Report());
  return out;
}

std::string FormatReportTable(const std::vector<LoadReport>& reports) {
  std::string out = fmt::format("{:<10} {:<8} {:>16} {:<10} {:>10} {}\n", "load", "cpus",
                                "achieved/s", "unit", "MB/s", "CPU busy % (softirq %)");
  for (const auto& r : reports) {
    std::string busy;
    for (const auto& use : r.cpu_use) {
      busy += fmt::format("{}cpu{} {:.0f}", busy.empty() ? "" : "  ", use.cpu, use.busy_percent);
      if (use.softirq_percent >= 1) busy += fmt::format(" ({:.0f})", use.softirq_percent);
    }
    const std::string mb = r.mb_per_second > 0 ? fmt::format("{:.1f}", r.mb_per_second) : "-";
    // A load that does not count its work (cmd) shows '-': its rate is unknown, not zero.
    const std::string rate = r.ops_unit.empty() ? "-" : fmt::format("{:.1f}", r.ops_per_second);
    out += fmt::format("{:<10} {:<8} {:>16} {:<10} {:>10} {}\n", r.name, FormatCpuList(r.cpus),
                       rate, r.ops_unit.empty() ? "-" : r.ops_unit, mb, busy);
  }
  for (const auto& r : reports) {
    for (const auto& p : r.processes) {
      out += fmt::format("{}: instance {} (pid {}) {}: {}\n", r.name, p.instance, p.pid,
                         p.early    ? "ended early"
                         : p.killed ? "killed after the grace"
                                    : "stopped",
                         p.Describe());
    }
    if (!r.processes.empty() && !r.log_path.empty()) {
      out += fmt::format("{}: output in {}\n", r.name, r.log_path);
    }
  }
  for (const auto& r : reports) {
    for (const auto& w : r.warnings) out += fmt::format("warning: {}: {}\n", r.name, w);
  }
  return out;
}

}  // namespace rtpulse::load
