#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"
#include "measure/rt_setup.h"
#include "measure/wake_path.h"

namespace rtpulse::measure {

/// One probe thread's settings.
struct ThreadPlan {
  int index = 0;
  int cpu = -1;  ///< -1: not pinned.
  SchedPolicy policy = SchedPolicy::kFifo;
  int priority = 80;
  int64_t interval_ns = 1'000'000;
  /// The thread's own grid starts this long after the shared origin (cyclictest -A: N x USEC
  /// for thread N; --secaligned USEC: USEC for every thread). 0: the shared origin.
  int64_t phase_ns = 0;
};

/// Ground-truth load: a higher-priority SCHED_FIFO thread on each probe's CPU that
/// busy-spins for `delay_ns` at `rate_hz`, its wake-ups aligned to that probe's deadlines.
struct InjectPlan {
  int64_t delay_ns = 0;
  double rate_hz = 0;
};

/// A validated, immutable description of a latency run (built by the CLI or the suite).
struct LatencyPlan {
  std::vector<ThreadPlan> threads;
  std::vector<WakePath> paths{WakePath::kAbs};  ///< Run in turn, identical settings.
  int64_t duration_ns = 0;                      ///< Per path; 0 = until loops or a signal.
  uint64_t loops = 0;                           ///< Samples per thread; 0 = unlimited.

  int64_t linear_histogram_us = 0;  ///< cyclictest -h/-H limit; 0 = off.
  int64_t breaktrace_ns = 0;        ///< -b: stop when a latency exceeds this; 0 = off.
  bool tracemark = false;           ///< --tracemark: write a marker before stopping ftrace.
  int64_t spike_ns = 0;             ///< --spike trigger; 0 = off.
  size_t spike_nodes = 1024;        ///< Spikes kept per thread.

  size_t sample_ring_capacity = 0;  ///< 0 = no per-sample log; else ring slots per thread.
  std::optional<InjectPlan> inject;

  /// cyclictest --secaligned: the shared grid origin is a whole second of CLOCK_MONOTONIC
  /// (the first one at least the start margin away), so runs on several machines or of
  /// several tools can be lined up.
  bool origin_on_second = false;

  /// cyclictest -c: the clock the abs, rel and posix paths sleep on. Deadlines stay on
  /// CLOCK_MONOTONIC's grid; each wake-up's latency is measured on this clock (wake_source.h).
  clockid_t wake_clock = CLOCK_MONOTONIC;

  /// cyclictest --smi: count each probe's CPU's SMIs over each path (pinned threads only;
  /// RunLatency fails before measuring when the counters cannot be read: measure/smi.h).
  bool count_smis = false;

  bool lock_memory = true;
  std::optional<int> pm_qos_us = 0;  ///< Value held in /dev/cpu_dma_latency; nullopt = leave.
  std::vector<int> main_affinity;    ///< --mainaffinity; empty = leave.
  int64_t deadline_runtime_ns = 0;   ///< SCHED_DEADLINE runtime; 0 = interval / 10.
  std::vector<std::string> notes;    ///< Planning remarks carried into the result's warnings.
  /// WakePath::kGpio: the input line whose edges wake the probe, and the output line driven
  /// at the interval (empty: edges from outside). docs/wake-paths.md.
  std::string gpio_wake;
  std::string gpio_drive;
  /// Where --smi's MSRs (/dev/cpu/N/msr) and -b's tracefs are opened: the real filesystem,
  /// or the machine's FsRoot as the command line has it (a fixture tree in tests).
  FsRoot root;
};

/// Probes as a scenario runner wants them: one thread per CPU in `cpus`, each pinned to
/// its CPU, all at `policy`/`priority` with the same `interval_ns` (cyclictest -S -d 0).
std::vector<ThreadPlan> PinnedThreads(const std::vector<int>& cpus, SchedPolicy policy,
                                      int priority, int64_t interval_ns);

/// The CPUs `threads` measure on, sorted, each once; every CPU of `online` when a thread is
/// not pinned (it may run on any). --explain's trace, --wake timerlat and
/// --deepest-idle-state act on these.
std::vector<int> MeasuredCpus(const std::vector<ThreadPlan>& threads,
                              const std::vector<int>& online);

/// Ring slots per thread for a per-sample log: 2 s of samples at the fastest thread's rate,
/// at least 64 Ki records. The writer drains every few ms, so only a stalled disk can fill
/// it (and drops are counted).
size_t SampleRingCapacity(const std::vector<ThreadPlan>& threads);

/// `--wake a,b,...` (or `all`): the wake paths in the order given. An unknown name (with
/// "did you mean"), a name given twice or an empty list is a usage error.
/// `also`: the paths the caller accepts beside the table's (timerlat, gpio:CHIP:LINE), named
/// in the error for an unknown one so that it lists every path the build has.
Expected<std::vector<WakePath>> ParseWakeList(const std::string& text,
                                              const std::vector<std::string>& also = {});

/// `--wake all` with more than one probe thread: drops the paths whose timer is one per
/// process (itimer, kWakePathTable) and says so in `notes`. A path named on its own is kept
/// for CheckOnePerProcess to refuse.
void DropOnePerProcessPaths(std::vector<WakePath>& paths, size_t threads,
                            std::vector<std::string>& notes);

/// A path whose timer is one per process with more than one thread: a usage error saying
/// how many (`counted`: "threads were asked for") and the fix (`fix`: "add -t 1"). Every
/// command that builds a latency plan (latency, suite, serve) calls it.
Status CheckOnePerProcess(const std::vector<WakePath>& paths, size_t threads,
                          std::string_view counted, std::string_view fix);

}  // namespace rtpulse::measure
