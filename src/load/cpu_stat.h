#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "load/load.h"

namespace rtpulse::load {

/// Cumulative jiffies of one CPU from /proc/stat.
struct CpuTimes {
  uint64_t total = 0;
  uint64_t idle = 0;  ///< idle + iowait.
  uint64_t softirq = 0;
  uint64_t steal = 0;  ///< Time the hypervisor gave to others (part of total, not of idle).
};

/// Per-CPU lines of the running kernel's /proc/stat ("cpuN ..."): FsRoot::Live(), as the
/// loads whose CPU use they measure run here.
std::map<int, CpuTimes> ReadCpuTimes();

/// Parses the text of /proc/stat.
std::map<int, CpuTimes> ParseProcStat(const std::string& text);

/// Busy and softirq percent of each of `cpus` between two samples (missing CPUs: 0).
std::vector<CpuUse> CpuUseBetween(const std::map<int, CpuTimes>& before,
                                  const std::map<int, CpuTimes>& after,
                                  const std::vector<int>& cpus);

}  // namespace rtpulse::load
