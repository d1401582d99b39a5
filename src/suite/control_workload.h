#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/control_loop.h"
#include "control/flight_controller.h"
#include "core/error.h"
#include "measure/wake_path.h"
#include "results/control_result.h"
#include "results/control_summary.h"
#include "stats/control_cost.h"
#include "suite/explain_live.h"
#include "suite/interference.h"
#include "suite/runner.h"
#include "sys/system_info.h"

// The control loop as a suite workload (`rtpulse control`, docs/control.md): per scenario one
// configuration (policy, activation path, loads or not), the flight-controller job run by
// control::RunControlLoop, and the scenario's files (response_times.txt, jobs.csv,
// statistical_report.txt, samples.bin, control.json). The scenario's "latency" in result.json
// is the job's response time c - r (release to completion): the quantity the study reports,
// so `report`, `compare` and `wcet` read a control run as they read a latency run.
namespace rtpulse::suite {

/// One configuration of a control run: a scenario of the suite.
struct ControlConfiguration {
  std::string scenario;  ///< PolicySlug (+ "-stress") (+ "-<path>").
  control::PolicySpec policy;
  measure::WakePath path = measure::WakePath::kAbs;
  bool loaded = false;        ///< Runs under the scenario's loads (stress or --load).
  std::string configuration;  ///< For people: "fifo:99, stress".
  /// The configuration without its load ("fifo:99", "fifo:99, timerfd"): what pairs a
  /// standard and a stress run in the figures.
  std::string policy_path;
};

/// What every configuration of a run shares.
struct ControlSettings {
  int64_t period_ns = 4'000'000;
  int64_t deadline_ns = 0;  ///< 0: the period.
  uint64_t jobs = 10'000;
  int cpu = 0;
  size_t work_set_bytes = 0;
  control::WorkSetMode work_set_mode = control::WorkSetMode::kStreaming;
  int64_t exec_ns = 0;  ///< --exec target (0: the controller as it is).
  /// --exec's result (CalibrateOnCpu, once before any load starts, so every configuration
  /// runs the same work); nullopt without --exec.
  std::optional<control::Calibration> calibration;
  uint64_t inject_every = 0;  ///< --inject-exec (a test aid): every Nth job spins inject_ns.
  int64_t inject_ns = 0;
  uint64_t seed = 1;
  std::vector<ControlConfiguration> configurations;
  std::vector<std::string> load_specs;  ///< What "loaded" means, as SPECs (for control.json).
  std::vector<std::string> notes;       ///< Planning remarks for the run's warnings.
  /// control --explain US: jobs whose start - release exceeds the threshold are explained
  /// while the loop runs (fed from the job log by the watching thread), raw windows in
  /// <scenario>/explain/, the summary in the scenario's latency (docs/control.md#explain).
  std::optional<trace::ExplainPlan> explain;
  VerdictLineFn verdict_line;
};

/// What one scenario left, for the summary and the control cost printed at the end.
struct ControlOutcome {
  std::string scenario;
  std::string configuration;
  std::string policy_path;  ///< ControlConfiguration::policy_path.
  bool loaded = false;
  std::vector<results::ControlJobRow> rows;
  uint64_t releases = 0;
  uint64_t skipped = 0;
  uint64_t misses = 0;
  bool interrupted = false;
  std::optional<stats::ReplayResult> cost;
  std::string cost_error;  ///< Why there is no cost (e.g. no job ran).
};

/// The replay's input from a job log: one entry per release, skipped releases (those before
/// a job, `skipped_before`) as executed = false, sample offset s - r, actuation c - r.
std::vector<stats::ReplayJob> ReplayJobsFromRows(const std::vector<results::ControlJobRow>& rows);

/// --exec: calibrates a controller built as `settings` says on `settings.cpu` (the calling
/// thread is moved there for it and back). A target below one pass is a usage error.
Expected<control::Calibration> CalibrateOnCpu(const ControlSettings& settings);

/// The suite workload: one configuration per scenario, looked up by the scenario's name.
class ControlWorkload final : public Workload {
 public:
  ControlWorkload(ControlSettings settings, sys::SystemInfo info, std::string version,
                  std::string invocation);

  nlohmann::json ConfigJson() const override;
  std::vector<std::string> Notes() const override { return notes_; }
  Expected<Measured> Measure(const std::string& dir, const std::string& name, int64_t duration_ns,
                             int64_t checkpoint_ns,
                             const std::function<void(const results::LatencyRun&)>& checkpoint,
                             Progress& progress) override;

  /// Every scenario measured so far, in run order.
  const std::vector<ControlOutcome>& outcomes() const { return outcomes_; }

 private:
  ControlSettings settings_;
  sys::SystemInfo info_;
  std::string version_;
  std::string invocation_;
  std::vector<std::string> notes_;
  std::vector<ControlOutcome> outcomes_;
};

/// --interference's real RunCondition: the condition's loads (ConditionLoads) started through
/// the load registry, the control job run by RunControlLoop with the loop thread's
/// perf counters opened, enabled and read around the loop, the loads stopped; the jobs'
/// execution times returned. SIGINT/SIGTERM (blocked, taken with sigtimedwait) set `stop`,
/// which ends the run early (its jobs so far count) and RunInterference after it.
/// `settings.configurations` gives the job's policy and wake path (the first one is used).
RunCondition MakeInterferenceRunner(const InterferencePlan& plan, const ControlSettings& settings,
                                    std::atomic<bool>& stop, const std::string& log_dir);

/// The run summary (results/control_summary.h) of `workload`'s outcomes: each configuration's
/// summary row, releases, and its control cost (or why it was not computed).
results::ControlSummary ControlSummaryOf(const ControlWorkload& workload);

}  // namespace rtpulse::suite
