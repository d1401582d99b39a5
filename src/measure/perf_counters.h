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
};

/// The counters of one thread.
class ThreadCounters {
 public:
  ThreadCounters() = default;
  ~ThreadCounters();
  ThreadCounters(const ThreadCounters&) = delete;
  ThreadCounters& operator=(const ThreadCounters&) = delete;

  /// Opens every Counter for thread `tid` (0: the calling thread), disabled. A counter the
  /// kernel refuses is kept as unsupported with the reason; only a failure to open any
  /// software counter is an error.
  Status Open(pid_t tid = 0);
  void Enable();
  void Disable();
  /// Every counter, in enum order.
  std::vector<CounterReading> Read() const;

 private:
  std::vector<int> fds_;
  std::vector<std::string> unsupported_;
};

}  // namespace rtpulse::measure
