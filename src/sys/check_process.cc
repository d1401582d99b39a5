// This process: real-time scheduling privilege and the locked-memory limit. These describe the
// process that runs rtpulse, not the files under RTPULSE_SYSROOT.

#include <fmt/format.h>

#include "sys/check_internal.h"

namespace rtpulse::sys::checks {
namespace {

/// rtpulse latency's default SCHED_FIFO priority (cyclictest's too).
constexpr uint64_t kDefaultRtPriority = 80;
/// Enough for rtpulse's histograms, rings and stacks with room to spare; below it mlockall()
/// may fail or later allocations may be refused.
constexpr uint64_t kMemlockEnoughBytes = 256ull << 20;

std::string Source(const ProcessFacts& p) {
  return p.injected ? fmt::format(" [given by {}]", kProcessFactsEnv) : "";
}

std::string LimitText(const std::optional<uint64_t>& value) {
  return value ? fmt::format("{}", *value) : "unlimited";
}

std::string BytesText(const std::optional<uint64_t>& bytes) {
  if (!bytes) return "unlimited";
  if (*bytes >= (1ull << 30) && *bytes % (1ull << 30) == 0) {
    return fmt::format("{} GiB", *bytes >> 30);
  }
  if (*bytes >= (1ull << 20) && *bytes % (1ull << 20) == 0) {
    return fmt::format("{} MiB", *bytes >> 20);
  }
  if (*bytes >= 1024 && *bytes % 1024 == 0) return fmt::format("{} KiB", *bytes >> 10);
  return fmt::format("{} bytes", *bytes);
}

constexpr const char* kLimitsFile = "/etc/security/limits.d/99-realtime.conf";

}  // namespace

CheckResult RtPrivileges(const CheckContext& c) {
  const std::string why = fmt::format(
      "SCHED_FIFO and SCHED_RR, which latency measurements use, need CAP_SYS_NICE (root has it) "
      "or an RLIMIT_RTPRIO at least as high as the priority (rtpulse's default: {}); without "
      "them the measured thread runs under the time-sharing scheduler",
      kDefaultRtPriority);
  const std::string fix = fmt::format(
      "run as root (sudo rtpulse ...); or sudo setcap cap_sys_nice,cap_ipc_lock+ep \"$(command -v "
      "rtpulse)\"; or for a group: '@realtime - rtprio 99' in {}, then log in again",
      kLimitsFile);
  const ProcessFacts& p = c.process;
  const std::string who = fmt::format("euid {}", p.euid);
  if (p.HasCap(ProcessFacts::kCapSysNice)) {
    return Pass(fmt::format("{}, CAP_SYS_NICE effective{}", who, Source(p)), why);
  }
  const std::string rtprio =
      fmt::format("RLIMIT_RTPRIO {} (hard {})", LimitText(p.rtprio_soft), LimitText(p.rtprio_hard));
  std::string found =
      fmt::format("{}, no CAP_SYS_NICE{}, {}{}", who,
                  p.euid == 0 ? " (root without it: a container?)" : "", rtprio, Source(p));
  if (!p.rtprio_soft || *p.rtprio_soft >= kDefaultRtPriority) return Pass(found, why);
  if (*p.rtprio_soft > 0) {
    return Warn(found, why,
                fmt::format("use priorities up to {} (rtpulse latency -p {}), or: {}",
                            *p.rtprio_soft, *p.rtprio_soft, fix));
  }
  return Warn(found, why, fix);
}

CheckResult MemlockLimit(const CheckContext& c) {
  const std::string why = fmt::format(
      "rtpulse and real-time applications lock their memory (mlockall) so that no page fault "
      "stalls the real-time thread; without CAP_IPC_LOCK, RLIMIT_MEMLOCK caps what may be locked "
      "(warn below {})",
      BytesText(kMemlockEnoughBytes));
  const ProcessFacts& p = c.process;
  const std::string limit =
      fmt::format("RLIMIT_MEMLOCK {} (hard {})", BytesText(p.memlock_soft_bytes),
                  BytesText(p.memlock_hard_bytes));
  if (p.HasCap(ProcessFacts::kCapIpcLock)) {
    return Pass(fmt::format("CAP_IPC_LOCK effective, so {} does not apply{}", limit, Source(p)),
                why);
  }
  const std::string found = limit + Source(p);
  if (!p.memlock_soft_bytes || *p.memlock_soft_bytes >= kMemlockEnoughBytes) {
    return Pass(found, why);
  }
  return Warn(found, why,
              fmt::format("ulimit -l unlimited in the shell that starts the program (raise the "
                          "hard limit first: '@realtime - memlock unlimited' in {}), or run as "
                          "root",
                          kLimitsFile));
}

}  // namespace rtpulse::sys::checks
