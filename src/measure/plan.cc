#include "measure/plan.h"

#include <algorithm>

#include "core/clock.h"

namespace rtpulse::measure {

std::vector<ThreadPlan> PinnedThreads(const std::vector<int>& cpus, Policy policy, int priority,
                                      int64_t interval_ns) {
  std::vector<ThreadPlan> threads;
  threads.reserve(cpus.size());
  for (size_t i = 0; i < cpus.size(); ++i) {
    ThreadPlan t;
    t.index = static_cast<int>(i);
    t.cpu = cpus[i];
    t.policy = policy;
    t.priority = priority;
    t.interval_ns = interval_ns;
    threads.push_back(t);
  }
  return threads;
}

size_t SampleRingCapacity(const std::vector<ThreadPlan>& threads) {
  int64_t fastest_ns = kNsPerSec;
  for (const auto& t : threads) fastest_ns = std::min(fastest_ns, std::max<int64_t>(1, t.interval_ns));
  const int64_t per_sec = kNsPerSec / fastest_ns;
  return static_cast<size_t>(std::max<int64_t>(65536, 2 * per_sec));
}

}  // namespace rtpulse::measure
