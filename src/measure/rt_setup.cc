#include "measure/rt_setup.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace rtpulse::measure {

Expected<SchedPolicy> ParsePolicy(const std::string& name) {
  if (name == "normal") return SchedPolicy::kOther;
  if (auto policy = SchedPolicyFromName(name)) return *policy;
  return UsageError(
      fmt::format("unknown policy '{}': use one of other, normal, batch, idle, fifo, rr", name));
}

std::optional<std::string> LockAllMemory() {
  // MCL_FUTURE under a finite RLIMIT_MEMLOCK makes every later allocation past the limit
  // fail (std::bad_alloc in the middle of a run), so without CAP_IPC_LOCK (root) and an
  // unlimited limit, memory is left unlocked and the run says so.
  rlimit limit{};
  getrlimit(RLIMIT_MEMLOCK, &limit);
  if (geteuid() != 0 && limit.rlim_cur != RLIM_INFINITY) {
    return fmt::format(
        "memory not locked: RLIMIT_MEMLOCK is {} KiB and locking all memory would make later "
        "allocations fail; page faults may add latency (fix: run as root, or 'ulimit -l "
        "unlimited')",
        limit.rlim_cur / 1024);
  }
  // One malloc arena for every thread from here on: glibc reserves 64 MiB of address space
  // for each further arena (a thread's first allocation makes one), and mlockall counts those
  // reservations as locked memory (VmLck) although they hold no page. The probe threads do not
  // allocate while they measure, so they have nothing to contend for.
  mallopt(M_ARENA_MAX, 1);
  if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) return std::nullopt;
  return fmt::format(
      "mlockall failed ({}): page faults may add latency (fix: run as root or raise "
      "'ulimit -l')",
      std::strerror(errno));
}

void SetDefaultThreadStack(size_t bytes) {
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return;
  if (pthread_attr_setstacksize(&attr, bytes) == 0) pthread_setattr_default_np(&attr);
  pthread_attr_destroy(&attr);
}

void PrefaultStack(size_t bytes) {
  // Touch the stack a fixed-size frame at a time (no VLA, no alloca).
  constexpr size_t kChunk = 16 * 1024;
  volatile unsigned char chunk[kChunk];
  // Recurse first and touch after, so the frame stays live (no tail call reusing it).
  if (bytes > kChunk) PrefaultStack(bytes - kChunk);
  for (size_t i = 0; i < kChunk; i += 64) chunk[i] = 0;
  asm volatile("" : : "r"(chunk) : "memory");  // keep the writes
}

Status SetThreadScheduling(SchedPolicy policy, int priority) {
  sched_param param{};
  param.sched_priority = IsRealtime(policy) ? priority : 0;
  if (sched_setscheduler(0, LinuxPolicy(policy), &param) != 0) {
    const int err = errno;
    return Error{err == EPERM ? ExitCode::kResource : ExitCode::kFailure,
                 fmt::format("cannot set policy {} priority {}: {}", SchedPolicyName(policy),
                             priority, std::strerror(err))};
  }
  return Status::Ok();
}

Status SetThreadAffinity(const std::vector<int>& cpus) {
  if (cpus.empty()) return Status::Ok();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(static_cast<size_t>(cpu), &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return Failure(
        fmt::format("cannot pin to CPU(s) {}: {}", fmt::join(cpus, ","), std::strerror(errno)));
  }
  return Status::Ok();
}

DmaLatencyGuard::~DmaLatencyGuard() {
  Release();
}

Status DmaLatencyGuard::Hold(int latency_us, const std::string& device) {
  Release();
  const int fd = ::open(device.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    // Only a permission problem is fixed by root; a missing device (no CONFIG_CPU_IDLE PM QoS,
    // a container) is not.
    const bool privilege = err == EACCES || err == EPERM;
    return ResourceError(fmt::format("cannot open {}: {}{}", device, std::strerror(err),
                                     privilege ? " (run as root)" : ""));
  }
  const int32_t value = latency_us;
  if (::write(fd, &value, sizeof(value)) != static_cast<ssize_t>(sizeof(value))) {
    const int err = errno;
    ::close(fd);
    return Failure(fmt::format("cannot write {}: {}", device, std::strerror(err)));
  }
  fd_ = fd;
  return Status::Ok();
}

void DmaLatencyGuard::Release() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

namespace {
/// Layout of struct sched_attr (include/uapi/linux/sched/types.h), version 0 (48 bytes).
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
};
constexpr uint32_t kSchedDeadline = kSchedDeadlinePolicy;
}  // namespace

Status SetThreadDeadline(int64_t runtime_ns, int64_t deadline_ns, int64_t period_ns,
                         uint64_t flags) {
  SchedAttr attr{};
  attr.sched_flags = flags;
  attr.size = sizeof(attr);
  attr.sched_policy = kSchedDeadline;
  attr.sched_runtime = static_cast<uint64_t>(runtime_ns);
  attr.sched_deadline = static_cast<uint64_t>(deadline_ns);
  attr.sched_period = static_cast<uint64_t>(period_ns);
  if (syscall(SYS_sched_setattr, 0, &attr, 0U) != 0) {
    const int err = errno;
    return Error{err == EPERM ? ExitCode::kResource : ExitCode::kFailure,
                 fmt::format("cannot set SCHED_DEADLINE (runtime {} ns, period {} ns): {}{}",
                             runtime_ns, period_ns, std::strerror(err),
                             err == EBUSY ? " (admission control: bandwidth exhausted; use a "
                                            "longer interval or fewer threads)"
                                          : "")};
  }
  return Status::Ok();
}

Expected<ThreadSchedAttr> GetThreadSchedAttr(int tid) {
  SchedAttr attr{};
  if (syscall(SYS_sched_getattr, tid, &attr, static_cast<unsigned>(sizeof(attr)), 0U) != 0) {
    return Failure(fmt::format("sched_getattr({}) failed: {}", tid, std::strerror(errno)));
  }
  ThreadSchedAttr out;
  constexpr uint32_t kResetOnFork = 0x40000000;
  out.policy = static_cast<int>(attr.sched_policy & ~kResetOnFork);
  out.nice = attr.sched_nice;
  out.priority = static_cast<int>(attr.sched_priority);
  out.runtime_ns = static_cast<int64_t>(attr.sched_runtime);
  out.deadline_ns = static_cast<int64_t>(attr.sched_deadline);
  out.period_ns = static_cast<int64_t>(attr.sched_period);
  out.flags = attr.sched_flags;
  return out;
}

}  // namespace rtpulse::measure
