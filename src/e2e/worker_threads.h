#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "e2e/pipeline.h"

// The threads of the pipeline as the kernel sees them (docs/e2e.md, "Threads"): which threads
// the inference backend created, giving them the inference thread's scheduling by tid, and
// reading every pipeline thread's policy, priority and CPUs back from /proc/self/task.
namespace rtpulse::e2e {

/// One thread's scheduling as /proc/self/task/TID/{stat,status} report it.
struct TaskSched {
  std::string name;    ///< comm.
  std::string policy;  ///< "other", "fifo", "rr", "batch", "idle", "deadline".
  int priority = 0;    ///< rt_priority (0 for the non-real-time policies).
  std::string cpus;    ///< Cpus_allowed_list, as written there ("0-3").
};

/// Parses the text of /proc/.../stat (comm, policy field 41, rt_priority field 40) and of
/// /proc/.../status (Cpus_allowed_list). A failure naming the field when either is malformed.
Expected<TaskSched> ParseTaskSched(std::string_view stat_text, std::string_view status_text);

/// Reads thread `tid` of this process (through FsRoot::Live(): the running kernel).
Expected<TaskSched> ReadTaskSched(int tid);

/// `spec` against what the kernel reports: policy and priority equal, and the CPUs equal to
/// `spec.cpus` when it pins. `note` gets what differs ("policy other, asked fifo").
ThreadCheck CheckTask(int tid, std::string_view role, const ThreadSpec& spec,
                      const TaskSched& seen);

/// Gives thread `tid` (of this process) `spec`'s policy, priority and CPUs with
/// sched_setscheduler and sched_setaffinity by tid. A refusal (EPERM) is a resource error
/// naming `option`; a thread that has exited meanwhile is not an error (returns false).
Expected<bool> ApplySpecToTask(int tid, const ThreadSpec& spec, std::string_view option);

/// Applies `spec` to the calling thread (set inside the thread, as `latency` does); errors name
/// `policy_option` or `cpus_option` (resource when refused).
Status ApplySpecToThisThread(const ThreadSpec& spec, std::string_view policy_option,
                             std::string_view cpus_option);

/// Usage error unless `spec` is a policy of measure::ParsePolicy with a fitting priority
/// (1..99 for fifo/rr, 0 otherwise). CPUs the machine lacks are refused when applied.
Status CheckThreadSpec(const ThreadSpec& spec, std::string_view policy_option);

}  // namespace rtpulse::e2e
