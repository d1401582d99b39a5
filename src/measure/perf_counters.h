#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

// Per-thread counters through perf_event_open(2): hardware ones (instructions, cycles, cache
// misses, stalled cycles) where the kernel and CPU offer them, software ones (context
// switches, migrations, page faults) always. Opened before a run, read after it: nothing is
// read in the real-time loop.
namespace rtpulse::measure {

enum class Counter {
  kInstructions,
  kCycles,
  kCacheReferences,
  kCacheMisses,
  kStalledCyclesFrontend,
  kStalledCyclesBackend,
  kContextSwitches,
  kCpuMigrations,
  kPageFaults,
};

/// Every Counter, in enum order.
inline constexpr Counter kAllCounters[] = {
    Counter::kInstructions,
    Counter::kCycles,
    Counter::kCacheReferences,
    Counter::kCacheMisses,
    Counter::kStalledCyclesFrontend,
    Counter::kStalledCyclesBackend,
    Counter::kContextSwitches,
    Counter::kCpuMigrations,
    Counter::kPageFaults,
};

/// "instructions", "cycles", "cache-misses", "context-switches", ... (perf's names).
std::string_view CounterName(Counter counter);
bool IsHardwareCounter(Counter counter);

/// One counter's reading.
struct CounterReading {
  Counter counter = Counter::kInstructions;
  bool supported = false;
  /// Why not, when not supported ("not supported here: no hardware PMU (ENOENT)").
  std::string unsupported;
  uint64_t value = 0;  ///< Scaled by time_enabled / time_running when multiplexed.
  bool multiplexed = false;
  /// Counted in user space only: the kernel refused kernel-mode counting
  /// (perf_event_paranoid), so work the kernel did for the thread is not in `value`.
  bool user_only = false;
};

/// The counters of one thread.
class ThreadCounters {
 public:
  ThreadCounters() = default;
  ~ThreadCounters();
  ThreadCounters(const ThreadCounters&) = delete;
  ThreadCounters& operator=(const ThreadCounters&) = delete;

  /// Opens every Counter for thread `tid` (0: the calling thread), disabled, each on its own
  /// fd (no group: one counter the CPU lacks does not take the others down). User and kernel
  /// mode are counted; where the kernel refuses kernel mode (EACCES/EPERM under
  /// perf_event_paranoid), hardware counters and page faults are counted in user mode only
  /// (`user_only`), while context switches and migrations, which happen only in kernel mode,
  /// are "not permitted" rather than a false 0. A counter the kernel does not offer (ENOENT,
  /// EOPNOTSUPP, ENODEV, ENOSYS) is kept as "not supported here" with the errno name. Any
  /// other failure (no such thread, out of file descriptors) is an error and nothing stays
  /// open; so is a second Open (the first stays as it was).
  Status Open(pid_t tid = 0);
  bool is_open() const { return open_; }
  /// Start and stop counting (no-ops before Open).
  void Enable();
  void Disable();
  /// Every counter, in enum order. Before Open: every one unsupported ("not opened").
  std::vector<CounterReading> Read() const;

 private:
  void CloseAll();
  bool open_ = false;
  std::vector<int> fds_;  ///< Per Counter; -1: not open.
  std::vector<bool> user_only_;
  std::vector<std::string> unsupported_;
};

}  // namespace rtpulse::measure
