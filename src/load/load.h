#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/sched_policy.h"

namespace rtpulse::load {

/// Settings shared by every load, parsed from the SPEC's `key=value` list.
struct LoadParams {
  std::vector<int> cpus;  ///< One worker pinned on each; filled with the online CPUs if empty.
  int nice = 0;
  SchedPolicy policy = SchedPolicy::kOther;
  int priority = 0;     ///< SCHED_FIFO/RR priority (1-99); 0 for the other policies.
  int intensity = 100;  ///< Duty cycle in percent of each 10 ms slice (built-in loads).
  /// Load-specific keys (mb=, proto=, dir=, ...) after validation, as given.
  std::vector<std::pair<std::string, std::string>> options;
  /// The planned run length (0 = until Stop()); stress-ng gets it as --timeout.
  int64_t duration_ns = 0;
  /// stress-ng: its arguments, passed through verbatim; cmd: the program and its arguments.
  std::vector<std::string> args;
  /// cmd only: the file its stdout and stderr go to (created, truncated); "" = rtpulse's
  /// stderr. The suite sets it to a file in the scenario's folder.
  std::string log_path;

  /// Value of a load-specific key, or `fallback` when absent.
  std::string Option(const std::string& key, const std::string& fallback) const;
};

/// One parsed SPEC: which load and how.
struct LoadSpec {
  std::string name;
  std::string text;  ///< The SPEC as the user wrote it, for reports and errors.
  LoadParams params;
};

/// Busy share of one CPU over the run, from /proc/stat.
struct CpuUse {
  int cpu = -1;
  double busy_percent = 0;     ///< Everything but idle and iowait.
  double softirq_percent = 0;  ///< NET_RX and friends, part of busy.
};

/// How one process of a load ended (the cmd load records its instances).
struct ProcessEnd {
  int instance = 0;
  int pid = 0;
  bool early = false;    ///< It ended before rtpulse stopped it: the load failed.
  bool killed = false;   ///< It outlived SIGTERM's grace and got SIGKILL.
  int exit_status = -1;  ///< Its exit status, or -1 when a signal ended it.
  int signal = 0;        ///< The signal that ended it, or 0.
  double seconds = 0;    ///< From its start to when it was seen ended (early) or stopped.
  /// "exit status 3", "killed by signal 15 (Terminated)".
  std::string Describe() const;
};

/// What a load actually achieved, so a "heavy" scenario that wasn't heavy is visible.
struct LoadReport {
  std::string name;
  std::string spec;
  std::vector<int> cpus;
  double seconds = 0;
  uint64_t ops = 0;
  double ops_per_second = 0;
  /// What one op is ("loops", "fsyncs", "switches", "bogo ops"); "" when the load does not
  /// count its work (cmd): ops and ops_per_second are then unknown, not zero.
  std::string ops_unit;
  double mb_per_second = 0;  ///< 0 when the load moves no data (1 MB = 1e6 bytes).
  std::vector<CpuUse> cpu_use;
  std::vector<std::string> warnings;
  std::vector<ProcessEnd> processes;  ///< cmd: each instance, after Stop().
  std::string log_path;               ///< cmd: where its output went ("" = stderr).
};

/// A running load: its worker processes share one process group, killed as a group.
class Load {
 public:
  virtual ~Load() = default;
  /// Forks and places the workers; returns once they all run (or the first error).
  virtual Status Start() = 0;
  /// Kills the process group and reaps every worker. Safe to call twice.
  virtual void Stop() = 0;
  /// The achieved work since Start(); call after Stop() for final numbers.
  virtual LoadReport Report() const = 0;
  /// The process group of the workers (0 before Start or after Stop).
  virtual int ProcessGroup() const = 0;
};

}  // namespace rtpulse::load
