#pragma once

// Ground truth for OS-noise tests: a thread of the test takes a CPU at SCHED_FIFO for known
// spans at known times, recording each span as its own clock reads saw it.
#include <time.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/sched_policy.h"
#include "measure/rt_setup.h"

namespace rtpulse::testutil {

struct Span {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

/// On the calling thread, pinned to `cpu` at SCHED_FIFO `priority`: from `first_ns`
/// (CLOCK_MONOTONIC) every `every_ns`, spins `spin_ns`, `count` times. Returns the spans; empty,
/// with `error` set, when the thread could not get the CPU or the policy.
inline std::vector<Span> TakeTheCpu(int cpu, int priority, int64_t first_ns, int64_t every_ns,
                                    int64_t spin_ns, int count, std::string* error) {
  std::vector<Span> spans;
  Status set = measure::SetThreadAffinity({cpu});
  if (set) set = measure::SetThreadScheduling(SchedPolicy::kFifo, priority);
  if (!set) {
    *error = set.error().message;
    return spans;
  }
  for (int i = 0; i < count; ++i) {
    const int64_t at = first_ns + i * every_ns;
    const timespec t{static_cast<time_t>(at / kNsPerSec), static_cast<long>(at % kNsPerSec)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr);
    Span s;
    s.start_ns = MonotonicNs();
    do {
      s.end_ns = MonotonicNs();
    } while (s.end_ns - s.start_ns < spin_ns);
    spans.push_back(s);
  }
  return spans;
}

}  // namespace rtpulse::testutil
