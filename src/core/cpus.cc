#include "core/cpus.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "core/parse.h"

namespace rtpulse {

std::vector<int> OnlineCpus(const FsRoot& root) {
  if (auto line = root.ReadLine("/sys/devices/system/cpu/online")) {
    if (auto cpus = ParseCpuList(*line)) return *cpus;
  }
  std::vector<int> cpus;
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 0; i < n; ++i) cpus.push_back(i);
  return cpus;
}

std::vector<int> HousekeepingCpus(const std::vector<int>& online,
                                  const std::vector<int>& measured) {
  std::vector<int> free;
  for (int cpu : online) {
    if (std::find(measured.begin(), measured.end(), cpu) == measured.end()) free.push_back(cpu);
  }
  return free;
}

std::vector<int> LeaveMeasuredCpus(const std::vector<int>& measured) {
  sched_param other{};
  (void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
  if (measured.empty()) return {};
  const std::vector<int> free = HousekeepingCpus(OnlineCpus(FsRoot::Live()), measured);
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : free) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(static_cast<size_t>(cpu), &set);
  }
  if (free.empty() || pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) return {};
  return free;
}

}  // namespace rtpulse
