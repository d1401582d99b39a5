#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "control/control_loop.h"
#include "core/error.h"
#include "measure/perf_counters.h"
#include "stats/inflation.h"

// `rtpulse control --interference` (docs/control.md): the same control job isolated, with a
// CPU-only load on the other CPUs, with a memory-bandwidth load on the other CPUs, and with a
// load on its own CPU, in interleaved repetitions; execution-time inflation per condition
// against the isolated baseline, with a confidence interval, the counters of every run, and a
// plain sentence saying what the numbers show.
namespace rtpulse::suite {

enum class InterferenceCondition { kIsolated, kCpuOther, kMemoryOther, kOwnCpu };

/// "isolated", "cpu-other", "memory-other", "own-cpu" (scenario names).
std::string_view ConditionName(InterferenceCondition condition);
/// One line for people: "CPU-only load on the other CPUs".
std::string_view ConditionDescription(InterferenceCondition condition);

struct InterferencePlan {
  int cpu = 0;                  ///< The job's CPU.
  std::vector<int> other_cpus;  ///< Where the cross-CPU loads run (not empty).
  uint64_t jobs_per_run = 2'500;
  int repetitions = 5;
  size_t work_set_bytes = 0;  ///< At least twice the last-level cache (the CLI checks).
  size_t llc_bytes = 0;       ///< As found (0: unknown), recorded.
  std::vector<InterferenceCondition> conditions{
      InterferenceCondition::kIsolated, InterferenceCondition::kCpuOther,
      InterferenceCondition::kMemoryOther, InterferenceCondition::kOwnCpu};
};

/// Usage errors naming the value and the fix: no conditions, a condition twice, no isolated
/// baseline, no other CPUs or the job's CPU among them, fewer than 1 repetition, fewer than 10
/// jobs per run, a work set below twice the last-level cache (when it is known).
Status ValidateInterferencePlan(const InterferencePlan& plan);

/// The loads of a condition, in the suite's load SPEC syntax (docs/loads.md): none isolated;
/// `cpu:cpus=OTHER` (CPU-only); `memory:cpus=OTHER,mb=M`, one worker per other CPU streaming
/// its own M MiB, M = max(64, 4 x the last-level cache); `cpu:cpus=CPU` on the job's own CPU.
std::vector<std::string> ConditionLoads(InterferenceCondition condition,
                                        const InterferencePlan& plan);

/// The run order: every repetition runs each condition once, the order rotated from one
/// repetition to the next, so slow drifts (temperature, frequency) hit every condition alike.
/// Repetition r (1-based) starts with conditions[(r - 1) % conditions.size()].
std::vector<std::pair<InterferenceCondition, int>> InterferenceOrder(const InterferencePlan& plan);

/// What one run under one condition measured.
struct InterferenceRun {
  InterferenceCondition condition = InterferenceCondition::kIsolated;
  int repetition = 0;
  std::vector<int64_t> exec_ns;  ///< Per job.
  std::vector<measure::CounterReading> counters;
  std::vector<std::string> warnings;
};

/// A run from what the control loop recorded: exec_ns[k] = c_k - s_k for every job, the
/// thread's counters as read after the loop, and the record's warnings, plus one when the
/// loop was interrupted or its RT set-up degraded.
InterferenceRun InterferenceRunFromRecord(InterferenceCondition condition, int repetition,
                                          const control::ControlRunRecord& record,
                                          std::vector<measure::CounterReading> counters);

/// One condition over all its repetitions.
struct ConditionResult {
  InterferenceCondition condition = InterferenceCondition::kIsolated;
  int runs = 0;         ///< Runs that measured.
  int failed_runs = 0;  ///< Runs whose RunCondition returned an error (see warnings).
  std::vector<double> repetition_medians_ns;  ///< Per measured run, in run order.
  /// Over the repetition medians against the isolated ones (stats::RepetitionInflation); set
  /// only for a condition other than the baseline with at least 2 measured repetitions on
  /// both sides (otherwise `no_inflation` says why).
  bool has_inflation = false;
  std::string no_inflation;
  stats::Inflation inflation;
  double median_exec_ns = 0;  ///< Of the pooled jobs (0 when none).
  /// Counters summed over the measured runs, in enum order. Supported only when supported in
  /// every run (else the first reason); multiplexed when any run was.
  std::vector<measure::CounterReading> counters;
  std::vector<double> counters_per_job;  ///< counters[i].value / jobs (0 when unsupported).
  uint64_t jobs = 0;
};

/// One run as it went, in run order.
struct RunSummary {
  InterferenceCondition condition = InterferenceCondition::kIsolated;
  int repetition = 0;
  bool measured = false;
  std::string error;  ///< When not measured.
  uint64_t jobs = 0;
  double median_exec_ns = 0;
  std::vector<measure::CounterReading> counters;
  std::vector<std::string> warnings;
};

struct InterferenceReport {
  InterferencePlan plan;
  std::vector<ConditionResult> conditions;  ///< In plan.conditions order.
  std::vector<RunSummary> runs;             ///< Every run started, in run order.
  int planned_runs = 0;
  std::vector<std::string> warnings;
  bool interrupted = false;
  std::string verdict;  ///< InterferenceVerdict(*this).
};

/// Runs one condition once (the CLI gives the real one: loads started, the control loop run,
/// loads stopped).
using RunCondition = std::function<Expected<InterferenceRun>(InterferenceCondition, int)>;

/// Runs every (condition, repetition) of InterferenceOrder through `run`, stopping early when
/// `stop` is set (checked before each run: interrupted, with what was measured), and computes
/// the report. A run that returns an error is recorded (its RunSummary, a warning naming the
/// run) and the experiment goes on, since the other runs' numbers stay valid; the result is an
/// error only for an invalid plan or when no run at all measured (the first run's error).
Expected<InterferenceReport> RunInterference(const InterferencePlan& plan, const RunCondition& run,
                                             const std::atomic<bool>& stop);

/// The plain sentence: "exec time +31 % [27, 35] with memory traffic on other CPUs, +1 % [-1,
/// 3] with CPU-only load there: contention in the shared memory system, not scheduling", or
/// what else the intervals support (no measurable effect, scheduling on its own CPU, ...).
std::string InterferenceVerdict(const InterferenceReport& report);

/// interference.json's document (docs/control.md, "Interference"): the plan, every run, every
/// condition with its inflation and counters, the warnings and the verdict.
nlohmann::json InterferenceToJson(const InterferenceReport& report);
/// The report of an interference.json (keys the command adds beside, such as rtpulse_version,
/// are not part of it); a missing or mistyped field is a usage error naming it.
Expected<InterferenceReport> InterferenceFromJson(const nlohmann::json& doc);
/// Reads and parses RUN/interference.json; errors name the file.
Expected<InterferenceReport> ReadInterferenceFile(const std::string& path);
/// The table and verdict, as printed and saved in interference.txt.
std::string FormatInterference(const InterferenceReport& report);

}  // namespace rtpulse::suite
