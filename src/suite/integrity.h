#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/fs_root.h"
#include "load/cpu_stat.h"
#include "suite/suite_config.h"

// Scenario integrity (docs/suite.md#scenario-integrity): was the idle scenario idle, did the
// heavy one load? Two readings of /proc/stat around the measurement, minus rtpulse's own CPU
// time, compared with what the scenario's loads intended.
namespace rtpulse::suite {

/// An idle scenario whose measured CPUs were busier than this with other work is warned.
inline constexpr double kIdleBusyThresholdPercent = 10.0;
/// A scenario whose CPU-bound loads should keep N CPUs busy is warned below this share of N.
inline constexpr double kLoadedShareThreshold = 0.5;

/// A process's name and CPU time (utime + stime, clock ticks) from its /proc/PID/stat.
struct ProcessTicks {
  std::string comm;
  uint64_t ticks = 0;
};

/// One reading of the counters the check compares.
struct BusyReading {
  std::map<int, load::CpuTimes> cpus;  ///< /proc/stat per CPU.
  /// utime + stime of every rtpulse thread (/proc/self/stat), in the same clock ticks. The
  /// loads are child processes: their time is not in it until they are reaped.
  uint64_t own_ticks = 0;
  bool own_known = false;
  /// Every other process by pid, to name what kept an idle scenario busy.
  std::map<int, ProcessTicks> processes;
};

/// /proc/stat, /proc/self/stat and every /proc/PID/stat under `fs`.
BusyReading ReadBusy(const FsRoot& fs);

/// The utime + stime fields of a /proc/PID/stat line; nullopt when it does not parse.
std::optional<uint64_t> ParseOwnTicks(const std::string& stat_line);

/// The comm (between the first '(' and the last ')') and utime + stime of a /proc/PID/stat
/// line; nullopt when it does not parse.
std::optional<ProcessTicks> ParseProcessTicks(const std::string& stat_line);

/// A process that ran between two readings, and for how long.
struct ProcessCpu {
  int pid = 0;
  std::string comm;
  uint64_t ticks = 0;
};
/// The `n` processes that used the most CPU between the readings, most first (one that
/// started in between counts all its time; one that ended is not seen).
std::vector<ProcessCpu> BusiestProcesses(const BusyReading& before, const BusyReading& after,
                                         size_t n);

/// What ran on `cpus` between two readings.
struct ScenarioBusy {
  std::vector<int> cpus;
  uint64_t ticks = 0;       ///< Time the CPUs ran this machine: total minus steal.
  uint64_t busy_ticks = 0;  ///< Not idle, iowait or steal.
  uint64_t own_ticks = 0;   ///< rtpulse's own threads (probes, monitor), wherever they ran.
  /// 100 * (busy - own) / ticks, at least 0: the busy share that was not rtpulse.
  double other_percent = 0;
  /// CPUs' worth of that work: other_percent / 100 * cpus.size().
  double other_cpus = 0;
};

ScenarioBusy BusyBetween(const BusyReading& before, const BusyReading& after,
                         const std::vector<int>& cpus);

/// What a scenario's loads intend: the CPUs their CPU-bound loads should keep busy (each at
/// its intensity, a CPU counted at most once) and where. Zero CPUs for an idle scenario; a
/// negative count when the intent is not known (only io, stress-ng or cmd loads).
struct Intent {
  double busy_cpus = 0;
  std::vector<int> cpus;  ///< The CPUs to compare: the measured ones when idle.
};
Intent ScenarioIntent(const Scenario& scenario, const std::vector<int>& measured_cpus);

/// The check: warnings ("scenario integrity: ...") and the numbers, for result.json's
/// scenario "cpu_busy".
struct IntegrityCheck {
  std::vector<std::string> warnings;
  nlohmann::json json;
};
IntegrityCheck CheckIntegrity(const Scenario& scenario, const std::vector<int>& measured_cpus,
                              const BusyReading& before, const BusyReading& after);

}  // namespace rtpulse::suite
