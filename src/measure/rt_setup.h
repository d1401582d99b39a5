#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/sched_policy.h"

namespace rtpulse::measure {

/// A --policy name of cyclictest's (SchedPolicyName's, and "normal" for other); a usage
/// error naming them otherwise.
Expected<SchedPolicy> ParsePolicy(const std::string& name);

/// Locks current and future memory (mlockall). Returns a warning text on failure.
std::optional<std::string> LockAllMemory();

/// Threads created from now on without a stack size of their own (the HTTP server's, the
/// monitor's, std::thread) get `bytes` of stack instead of RLIMIT_STACK's 8 MiB: with all
/// memory locked, each would otherwise hold its whole stack resident.
void SetDefaultThreadStack(size_t bytes);
inline constexpr size_t kHelperThreadStackBytes = 512 * 1024;

/// Touches `bytes` of the calling thread's stack so later use never page-faults.
void PrefaultStack(size_t bytes);

/// Sets the calling thread's policy and priority. Linux applies it per thread.
Status SetThreadScheduling(SchedPolicy policy, int priority);

/// Pins the calling thread to `cpus` (empty: leave as is).
Status SetThreadAffinity(const std::vector<int>& cpus);

/// Holds /dev/cpu_dma_latency at a value while alive (the kernel drops the request when
/// the file is closed), so deep C-states do not add exit latency to the measurement.
class DmaLatencyGuard {
 public:
  DmaLatencyGuard() = default;
  ~DmaLatencyGuard();
  DmaLatencyGuard(const DmaLatencyGuard&) = delete;
  DmaLatencyGuard& operator=(const DmaLatencyGuard&) = delete;

  /// Opens the device and writes `latency_us`. On failure returns why (not fatal).
  Status Hold(int latency_us, const std::string& device = "/dev/cpu_dma_latency");
  void Release();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// `SCHED_DEADLINE` for the calling thread (sched_setattr; glibc has no wrapper). `flags` are
/// sched_attr's sched_flags (e.g. kSchedFlagDlOverrun).
Status SetThreadDeadline(int64_t runtime_ns, int64_t deadline_ns, int64_t period_ns,
                         uint64_t flags = 0);

/// SCHED_FLAG_DL_OVERRUN: the kernel sends SIGXCPU when a SCHED_DEADLINE task overruns its
/// runtime (Linux 4.16+).
inline constexpr uint64_t kSchedFlagDlOverrun = 0x04;

/// A thread's scheduling as the kernel reports it (sched_getattr).
struct ThreadSchedAttr {
  int policy = 0;  ///< SCHED_OTHER, SCHED_FIFO, ..., 6 = SCHED_DEADLINE (reset-on-fork masked).
  int nice = 0;
  int priority = 0;
  int64_t runtime_ns = 0;
  int64_t deadline_ns = 0;
  int64_t period_ns = 0;
  uint64_t flags = 0;
};
inline constexpr int kSchedDeadlinePolicy = 6;

/// Reads thread `tid`'s (0: the calling thread's) scheduling with sched_getattr.
Expected<ThreadSchedAttr> GetThreadSchedAttr(int tid = 0);

}  // namespace rtpulse::measure
