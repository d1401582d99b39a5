// The name of a Linux scheduling policy number (sched_getscheduler, /proc/PID/stat's
// policy field), as rtpulse prints policies everywhere.
#pragma once

#include <fmt/format.h>
#include <sched.h>

#include <string>

namespace rtpulse {

/// "other", "fifo", "rr", "batch", "idle", "deadline", or "policy-N" for a number this
/// table does not know.
inline std::string KernelPolicyName(int policy) {
  constexpr int kSchedDeadline = 6;  // SCHED_DEADLINE: not in glibc 2.36's <sched.h>
  switch (policy) {
    case SCHED_OTHER:
      return "other";
    case SCHED_FIFO:
      return "fifo";
    case SCHED_RR:
      return "rr";
    case SCHED_BATCH:
      return "batch";
    case SCHED_IDLE:
      return "idle";
    case kSchedDeadline:
      return "deadline";
    default:
      return fmt::format("policy-{}", policy);
  }
}

}  // namespace rtpulse
