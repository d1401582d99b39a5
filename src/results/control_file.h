#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

// A control scenario's control.json (docs/control.md, "Files"): the configuration as asked
// and as applied, what the loop did (jobs, releases, skipped releases, misses), the
// machine's counters, the control cost and 1 us histograms of the three times. Written by
// the control workload, read back by ReadControlFile.
namespace rtpulse::results {

/// --exec's calibration: the extra passes that made the job take `target_ns` here.
struct ControlCalibration {
  int64_t target_ns = 0;
  uint64_t extra_passes = 0;
  int64_t measured_ns = 0;
  int64_t one_pass_ns = 0;
  std::string caveat;
};

/// One perf counter of the job's thread: its value, or why it is not supported here.
struct ControlCounter {
  std::optional<uint64_t> value;  ///< nullopt: unsupported (`unsupported` says why)
  bool multiplexed = false;
  std::string unsupported;
};

/// A 1 us histogram: (us, count) of every non-empty class, values rounded down.
using MicrosecondClasses = std::vector<std::pair<int64_t, uint64_t>>;

struct ControlFile {
  std::string scenario;
  std::string configuration;   ///< "fifo:99, no stress"
  std::string policy;          ///< As asked (control::FormatPolicySpec).
  std::string applied_policy;  ///< As read back in the job's thread.
  std::string wake;
  bool loaded = false;
  std::vector<std::string> loads;  ///< The loads' SPECs ([] when not loaded).
  int cpu = 0;
  int tid = 0;
  int64_t period_ns = 0;
  int64_t deadline_ns = 0;
  uint64_t jobs_planned = 0;
  uint64_t jobs = 0;
  uint64_t releases = 0;
  uint64_t skipped = 0;
  uint64_t skipped_after_last = 0;
  uint64_t misses = 0;
  /// Jobs whose release is unknown and whose execution alone stayed within the deadline: they
  /// may have missed too, so `misses` is a lower bound ("misses_is_lower_bound").
  uint64_t misses_unknown = 0;
  uint64_t grid_restarts = 0;
  std::vector<uint64_t> release_unknown_jobs;  ///< Indexes of jobs whose release is unknown.
  uint64_t rt_throttle_suspects = 0;
  bool interrupted = false;
  bool degraded = false;
  std::vector<std::string> warnings;
  std::string rt_throttling;                  ///< A sentence: as found, and the run's signature.
  std::optional<uint64_t> deadline_overruns;  ///< SCHED_DEADLINE's own count, when it gave one.
  uint64_t work_set_bytes = 0;
  std::string work_set_mode;  ///< "streaming" or "random"
  std::optional<ControlCalibration> calibration;
  std::optional<std::pair<uint64_t, int64_t>> inject;  ///< --inject-exec: every, extra_ns
  std::map<std::string, ControlCounter> counters;      ///< By counter name.
  std::string counters_error;  ///< Why no counter was read at all ("" when they were).
  /// The control cost of the measured timing as stats::ReplayResult's fields and a summary,
  /// or {"error": why} (docs/control.md, "Control cost").
  nlohmann::json control_cost;
  uint64_t checksum = 0;  ///< Of the controller's outputs: the work was done.
  std::string latency_quantity;
  MicrosecondClasses wakeup_latency_us;
  MicrosecondClasses execution_us;
  MicrosecondClasses response_us;
};

nlohmann::json ToJson(const ControlFile& file);
/// Every field of `doc`; a missing field or one of the wrong type is a usage error naming it.
Expected<ControlFile> ControlFileFromJson(const nlohmann::json& doc);
/// Reads and parses a control.json; errors name the file.
Expected<ControlFile> ReadControlFile(const std::string& path);

}  // namespace rtpulse::results
