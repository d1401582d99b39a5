#include "e2e/worker_threads.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/fs_root.h"
#include "core/parse.h"
#include "core/sched_policy.h"
#include "measure/rt_setup.h"

namespace rtpulse::e2e {
namespace {

std::string SpecText(const ThreadSpec& spec) {
  return IsRealtime(*measure::ParsePolicy(spec.policy))
             ? fmt::format("{}:{}", spec.policy, spec.priority)
             : spec.policy;
}

}  // namespace

Expected<TaskSched> ParseTaskSched(std::string_view stat_text, std::string_view status_text) {
  TaskSched out;
  // comm may hold spaces and parentheses: it runs from the first '(' to the last ')'.
  const size_t open = stat_text.find('(');
  const size_t close = stat_text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Failure("task stat: no (comm) field");
  }
  out.name = std::string(stat_text.substr(open + 1, close - open - 1));
  // Fields after comm start with field 3 (state); rt_priority is field 40, policy 41.
  std::vector<std::string_view> fields;
  std::string_view rest = stat_text.substr(close + 1);
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = std::min(rest.find_first_of(" \n"), rest.size());
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end);
  }
  constexpr size_t kRtPriority = 40 - 3;
  constexpr size_t kPolicy = 41 - 3;
  if (fields.size() <= kPolicy) {
    return Failure(
        fmt::format("task stat: {} fields after comm, policy is field 41", fields.size()));
  }
  auto priority = ParseInt(fields[kRtPriority], "rt_priority");
  auto policy = ParseInt(fields[kPolicy], "policy");
  if (!priority) return priority.error();
  if (!policy) return policy.error();
  out.priority = static_cast<int>(*priority);
  out.policy = KernelPolicyName(static_cast<int>(*policy));
  constexpr std::string_view kKey = "Cpus_allowed_list:";
  const size_t at = status_text.find(kKey);
  if (at == std::string_view::npos) return Failure("task status: no Cpus_allowed_list line");
  std::string_view line = status_text.substr(at + kKey.size());
  line = line.substr(0, line.find('\n'));
  out.cpus = std::string(TrimBlanks(line));
  return out;
}

Expected<TaskSched> ReadTaskSched(int tid) {
  const FsRoot& fs = FsRoot::Live();
  const auto stat = fs.Read(fmt::format("/proc/self/task/{}/stat", tid));
  const auto status = fs.Read(fmt::format("/proc/self/task/{}/status", tid));
  if (!stat || !status) return Failure(fmt::format("thread {} has no /proc/self/task entry", tid));
  return ParseTaskSched(*stat, *status);
}

ThreadCheck CheckTask(int tid, std::string_view role, const ThreadSpec& spec,
                      const TaskSched& seen) {
  ThreadCheck check;
  check.tid = tid;
  check.name = seen.name;
  check.role = std::string(role);
  check.policy = seen.policy;
  check.priority = seen.priority;
  check.cpus = seen.cpus;
  std::vector<std::string> differs;
  const auto asked = measure::ParsePolicy(spec.policy);
  const std::string asked_policy = asked ? SchedPolicyName(*asked) : spec.policy;
  const int asked_priority = asked && IsRealtime(*asked) ? spec.priority : 0;
  if (seen.policy != asked_policy) {
    differs.push_back(fmt::format("policy {}, asked {}", seen.policy, asked_policy));
  } else if (seen.priority != asked_priority) {
    differs.push_back(fmt::format("priority {}, asked {}", seen.priority, asked_priority));
  }
  if (!spec.cpus.empty()) {
    auto cpus = ParseCpuList(seen.cpus);
    if (!cpus || *cpus != spec.cpus) {
      differs.push_back(fmt::format("CPUs {}, asked {}", seen.cpus, FormatCpuList(spec.cpus)));
    }
  }
  check.as_asked = differs.empty();
  check.note = fmt::format("{}", fmt::join(differs, "; "));
  return check;
}

Expected<bool> ApplySpecToTask(int tid, const ThreadSpec& spec, std::string_view option) {
  auto policy = measure::ParsePolicy(spec.policy);
  if (!policy) return policy.error();
  sched_param param{};
  param.sched_priority = IsRealtime(*policy) ? spec.priority : 0;
  if (sched_setscheduler(tid, LinuxPolicy(*policy), &param) != 0) {
    const int err = errno;
    if (err == ESRCH) return false;
    return Error{err == EPERM ? ExitCode::kResource : ExitCode::kFailure,
                 fmt::format("{} {}: cannot give the backend's worker thread {} policy {}: {}{}",
                             option, SpecText(spec), tid, SpecText(spec), std::strerror(err),
                             err == EPERM ? " (fix: run as root or give CAP_SYS_NICE)" : "")};
  }
  if (!spec.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : spec.cpus) CPU_SET(static_cast<size_t>(cpu), &set);
    if (sched_setaffinity(tid, sizeof(set), &set) != 0) {
      const int err = errno;
      if (err == ESRCH) return false;
      return Error{err == EPERM ? ExitCode::kResource : ExitCode::kFailure,
                   fmt::format("cannot pin the backend's worker thread {} to CPU(s) {}: {}", tid,
                               FormatCpuList(spec.cpus), std::strerror(err))};
    }
  }
  return true;
}

Status ApplySpecToThisThread(const ThreadSpec& spec, std::string_view policy_option,
                             std::string_view cpus_option) {
  auto policy = measure::ParsePolicy(spec.policy);
  if (!policy) return policy.error();
  if (Status s = measure::SetThreadScheduling(*policy, spec.priority); !s) {
    const bool refused = s.error().code == ExitCode::kResource;
    return Error{s.error().code,
                 fmt::format("{} {}: {}{}", policy_option, SpecText(spec), s.error().message,
                             refused ? " (fix: run as root or give CAP_SYS_NICE, or leave "
                                       "the policy at other)"
                                     : "")};
  }
  if (Status s = measure::SetThreadAffinity(spec.cpus); !s) {
    return Error{s.error().code,
                 fmt::format("{} {}: {} (fix: give CPUs of this machine's "
                             "online set)",
                             cpus_option, FormatCpuList(spec.cpus), s.error().message)};
  }
  return Status::Ok();
}

Status CheckThreadSpec(const ThreadSpec& spec, std::string_view policy_option) {
  auto policy = measure::ParsePolicy(spec.policy);
  if (!policy) return UsageError(fmt::format("{}: {}", policy_option, policy.error().message));
  if (IsRealtime(*policy) && (spec.priority < 1 || spec.priority > 99)) {
    return UsageError(fmt::format("{} {}:{}: the priority of {} must be 1..99", policy_option,
                                  spec.policy, spec.priority, spec.policy));
  }
  if (!IsRealtime(*policy) && spec.priority != 0) {
    return UsageError(fmt::format("{} {}:{}: policy {} takes no priority (use fifo or rr)",
                                  policy_option, spec.policy, spec.priority, spec.policy));
  }
  return Status::Ok();
}

}  // namespace rtpulse::e2e
