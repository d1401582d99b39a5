#include "load/cpu_stat.h"

#include <sstream>
#include <string>

#include "core/fs_root.h"

namespace rtpulse::load {

std::map<int, CpuTimes> ParseProcStat(const std::string& text) {
  std::map<int, CpuTimes> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    fields >> cpu;
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    uint64_t v[8] = {};
    for (auto& x : v) fields >> x;
    CpuTimes t;
    for (const auto x : v) t.total += x;
    t.idle = v[3] + v[4];
    t.softirq = v[6];
    t.steal = v[7];
    out[cpu] = t;
  }
  return out;
}

std::map<int, CpuTimes> ReadCpuTimes() {
  return ParseProcStat(FsRoot::Live().Read("/proc/stat").value_or(""));
}

std::vector<CpuUse> CpuUseBetween(const std::map<int, CpuTimes>& before,
                                  const std::map<int, CpuTimes>& after,
                                  const std::vector<int>& cpus) {
  std::vector<CpuUse> out;
  for (const int cpu : cpus) {
    CpuUse use;
    use.cpu = cpu;
    const auto b = before.find(cpu);
    const auto a = after.find(cpu);
    if (b != before.end() && a != after.end() && a->second.total > b->second.total) {
      const auto total = static_cast<double>(a->second.total - b->second.total);
      const auto idle = static_cast<double>(a->second.idle - b->second.idle);
      use.busy_percent = 100.0 * (total - idle) / total;
      use.softirq_percent =
          100.0 * static_cast<double>(a->second.softirq - b->second.softirq) / total;
    }
    out.push_back(use);
  }
  return out;
}

}  // namespace rtpulse::load
