// Scheduling policies (sched(7)): the one value type every module sets threads and processes
// with (measure's probes, load's workers, e2e's stage threads), its names and its Linux
// number, and the name of any policy number the kernel reports.
#pragma once

#include <fmt/format.h>
#include <sched.h>

#include <optional>
#include <string>
#include <string_view>

namespace rtpulse {

/// The policies set with a priority (SCHED_DEADLINE takes a runtime, deadline and period
/// instead and is set where those are known: measure's deadline wake path, control).
enum class SchedPolicy { kOther, kBatch, kIdle, kFifo, kRr };
/// Every SchedPolicy, in declaration order.
inline constexpr SchedPolicy kSchedPolicies[] = {SchedPolicy::kOther, SchedPolicy::kBatch,
                                                 SchedPolicy::kIdle, SchedPolicy::kFifo,
                                                 SchedPolicy::kRr};

/// "other", "batch", "idle", "fifo", "rr".
inline std::string SchedPolicyName(SchedPolicy policy) {
  switch (policy) {
    case SchedPolicy::kOther:
      return "other";
    case SchedPolicy::kBatch:
      return "batch";
    case SchedPolicy::kIdle:
      return "idle";
    case SchedPolicy::kFifo:
      return "fifo";
    case SchedPolicy::kRr:
      return "rr";
  }
  return "other";
}

/// The policy of a name of SchedPolicyName; nullopt for any other text (each caller words
/// its own error and may take aliases, such as cyclictest's "normal").
inline std::optional<SchedPolicy> SchedPolicyFromName(std::string_view name) {
  for (const SchedPolicy p : kSchedPolicies) {
    if (name == SchedPolicyName(p)) return p;
  }
  return std::nullopt;
}

/// fifo and rr: the policies that take a priority of 1..99.
inline bool IsRealtime(SchedPolicy policy) {
  return policy == SchedPolicy::kFifo || policy == SchedPolicy::kRr;
}

/// SCHED_OTHER, SCHED_BATCH, ... for sched_setscheduler.
inline int LinuxPolicy(SchedPolicy policy) {
  switch (policy) {
    case SchedPolicy::kOther:
      return SCHED_OTHER;
    case SchedPolicy::kBatch:
      return SCHED_BATCH;
    case SchedPolicy::kIdle:
      return SCHED_IDLE;
    case SchedPolicy::kFifo:
      return SCHED_FIFO;
    case SchedPolicy::kRr:
      return SCHED_RR;
  }
  return SCHED_OTHER;
}

/// "other", "fifo", "rr", "batch", "idle", "deadline", or "policy-N" for a number this
/// table does not know (sched_getscheduler, /proc/PID/stat's policy field).
inline std::string KernelPolicyName(int policy) {
  constexpr int kSchedDeadline = 6;  // SCHED_DEADLINE: not in glibc 2.36's <sched.h>
  for (const SchedPolicy p : kSchedPolicies) {
    if (LinuxPolicy(p) == policy) return SchedPolicyName(p);
  }
  if (policy == kSchedDeadline) return "deadline";
  return fmt::format("policy-{}", policy);
}

}  // namespace rtpulse
