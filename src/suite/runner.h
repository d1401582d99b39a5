#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/exit_code.h"
#include "results/suite_result.h"
#include "suite/integrity.h"
#include "suite/suite_config.h"
#include "suite/tune_ab.h"
#include "sys/tuning.h"

// The scenario runner behind `rtpulse suite` (docs/suite.md): a list of scenarios, each = loads
// + one workload, run in phases:
//
//   plan -> pre-flight -> tunings, monitor -> per scenario: loads, settle, measure, stop, write
//        -> summary (monitor stopped, tunings restored, final files)
//
// Everything that touches the machine (loads, monitor, tunings, the settle wait, the workload)
// comes in through the interfaces below, so the phases, their order, checkpointing,
// interruption and restore are tested with fakes and no root (tests/suite/runner_test.cc).
// The real implementations are in suite/services.h; the CLI only parses and hands over.
namespace rtpulse::suite {

/// The machine audit done before anything starts, as the run records it.
struct Preflight {
  nlohmann::json system = nlohmann::json::object();  ///< system_info.json (checks included).
  std::string text;                                  ///< system_info.txt.
  /// Environment warnings and every pre-flight warn/fail line, recorded in result.json.
  std::vector<std::string> warnings;
  int pass = 0;
  int warn = 0;
  int fail = 0;
  /// "title: found (fix: ...)" for every failed check (printed when --strict refuses).
  std::vector<std::string> failures;
};

/// One scenario's loads, started and stopped together.
class ScenarioLoads {
 public:
  virtual ~ScenarioLoads() = default;
  /// Starts every load; on failure none is left running.
  virtual Status Start() = 0;
  /// Stops every load (idempotent; the destructor must also stop them).
  virtual void Stop() = 0;
  /// What the loads achieved (rtpulse load --json's loads[]), after Stop().
  virtual nlohmann::json Reports() const = 0;
  /// "SPEC: warning" lines, after Stop().
  virtual std::vector<std::string> Warnings() const = 0;
};

/// The low-priority monitor that runs for the whole suite.
class SuiteMonitor {
 public:
  virtual ~SuiteMonitor() = default;
  virtual void Start() = 0;
  /// Stops it; the first write error of the run, if any.
  virtual Status Stop() = 0;
  virtual Status WriteStats(const std::string& path, bool interrupted) = 0;
  virtual std::vector<std::string> Notes() const = 0;
  /// The scenario now running ("" between scenarios): the monitor log's `scenario` column.
  /// A monitor that logs no such column ignores it.
  virtual void SetScenario(const std::string& /*name*/) {}
};

/// Reversible tunings in force for the run (--tune).
class SuiteTuning {
 public:
  virtual ~SuiteTuning() = default;
  virtual Status Restore() = 0;
  /// The runner wrote the result.json that records the restore: whatever watches for a death
  /// in between (the guardian, which would mark the run killed) may go.
  virtual void Release() {}
  virtual nlohmann::json ToJson() const = 0;
  virtual std::string Describe() const = 0;
};

/// What a workload reports while it measures (the CLI draws it).
struct LiveStatus {
  int64_t elapsed_ns = 0;
  uint64_t samples = 0;
  int64_t max_ns = 0;
  int64_t p99_ns = 0;
  uint64_t missed = 0;
};

/// Where the suite is, for progress display. Every method has a no-op default.
class Progress {
 public:
  virtual ~Progress() = default;
  /// Scenario `index` of `count` starts; `after_ns` is what the later scenarios will take.
  virtual void Scenario(size_t /*index*/, size_t /*count*/, const std::string& /*name*/,
                        int64_t /*planned_ns*/, int64_t /*after_ns*/) {}
  virtual void Settling(int64_t /*left_ns*/) {}
  /// False when nothing would be shown: the workload then skips its live snapshots.
  virtual bool WantsTicks() const { return false; }
  virtual void Measuring(const LiveStatus& /*status*/) {}
  /// The scenario's progress line is finished (clear a redrawn line).
  virtual void Done() {}
  /// A message for the person running the suite ("pre-flight: ...", warnings), said once.
  virtual void Say(const std::string& /*line*/) {}
};

/// Waits while the loads settle.
class Pause {
 public:
  virtual ~Pause() = default;
  /// Waits `ns`, calling `tick(left_ns)` about once a second; true when the run was
  /// interrupted (SIGINT/SIGTERM) instead.
  virtual bool Wait(int64_t ns, const std::function<void(int64_t)>& tick) = 0;
  /// True (once) when a SIGINT/SIGTERM is pending now, without waiting.
  virtual bool StopPending() { return false; }
};

/// What one scenario's measurement produced.
struct Measured {
  results::LatencyRun latency;
  bool interrupted = false;
  std::vector<std::string> warnings;  ///< e.g. the per-sample log could not be written.
  /// The per-sample log failed (a full disk): the runner says it once, marks the run failed
  /// and exits with its code (3 for no space or privilege), as for result.json's writes.
  std::optional<Error> write_error;
  std::string samples_file;  ///< Relative to the run folder; "" when none.
  /// From samples_file (one wake path only): the summary's exact percentiles, per wake-up
  /// and per period (results::ScenarioResult's fields of the same names).
  std::optional<results::ExactPercentileValues> exact_percentiles;
  std::optional<results::ExactPercentileValues> exact_per_period_percentiles;
};

/// What runs under a scenario's loads: the latency probes today, the control loop and the
/// perception pipeline next. One workload serves every scenario of a suite.
class Workload {
 public:
  virtual ~Workload() = default;
  /// The workload's settings for result.json's "config" (merged into it).
  virtual nlohmann::json ConfigJson() const = 0;
  /// Planning remarks to record as run warnings.
  virtual std::vector<std::string> Notes() const { return {}; }
  /// Measures for `duration_ns`. `dir` is the scenario folder (relative name `name`), for
  /// per-sample files. `checkpoint` is called every checkpoint interval with what was
  /// measured so far (the runner writes it to result.json); `progress` gets live status.
  /// Returns an error when nothing could be measured.
  virtual Expected<Measured> Measure(
      const std::string& dir, const std::string& name, int64_t duration_ns, int64_t checkpoint_ns,
      const std::function<void(const results::LatencyRun&)>& checkpoint, Progress& progress) = 0;
};

/// Everything the runner needs from outside, decided before it starts.
struct SuitePlan {
  SuiteConfig config;
  std::vector<int> cpus;    ///< Measured CPUs.
  std::vector<int> online;  ///< Online CPUs.
  std::string out_dir;
  int64_t checkpoint_ns = 10'000'000'000;
  bool strict = false;  ///< Refuse (exit 1) when a pre-flight check fails.
  bool tune = false;    ///< Apply tunings for the run.
  /// --tune-ab: config.scenarios are its blocks (ExpandTuneAb), each run with its knob on or
  /// as found; empty otherwise.
  std::optional<TuneAbPlan> tune_ab;
  std::string invocation;  ///< The command line, for result files.
  std::string version;     ///< rtpulse version, for result files.
  /// --budget: result.json's verdict judges it (docs/budget.md).
  std::optional<stats::Budget> budget;
  /// --textfile DIR: rtpulse.prom for node_exporter's textfile collector, rewritten with
  /// every result.json (docs/fleet.md#batch-runs); "" = none.
  std::string textfile_dir;
};

/// How the runner reaches the machine. `tune` may be empty when the plan has no tuning.
struct Services {
  std::function<Preflight()> preflight;
  std::function<Expected<std::unique_ptr<SuiteTuning>>(const std::string& journal_path)> tune;
  /// --tune-ab: one knob applied for one block.
  std::function<Expected<std::unique_ptr<SuiteTuning>>(sys::TuneKnob knob,
                                                       const std::string& journal_path)>
      tune_knob;
  std::function<Expected<std::unique_ptr<SuiteMonitor>>(const std::string& csv_path)> monitor;
  std::function<std::unique_ptr<ScenarioLoads>(const Scenario& scenario)> loads;
  Pause* pause = nullptr;
  Workload* workload = nullptr;
  Progress* progress = nullptr;
  /// CLOCK_REALTIME now, in ns (a fake clock in tests).
  std::function<int64_t()> realtime_ns;
  /// The CPU counters read around each measurement for the integrity check (ReadBusy);
  /// empty: not checked.
  std::function<BusyReading()> busy;
};

/// `ns` as HH:MM:SS (negative as 00:00:00), for progress lines and `--list`.
std::string FormatClock(int64_t ns);

/// Measured time and settle time of scenario `s` under `c`'s defaults.
int64_t ScenarioDuration(const SuiteConfig& c, const Scenario& s);
int64_t ScenarioSettle(const SuiteConfig& c, const Scenario& s);

/// The suite's settings for result.json (workload settings merged in by the runner).
nlohmann::json ConfigJson(const SuitePlan& plan);

/// `rtpulse suite --list`: the scenarios, their loads and times, the total.
std::string FormatScenarioList(const SuitePlan& plan);

/// How a run ended.
struct RunOutcome {
  ExitCode code = ExitCode::kOk;
  results::SuiteResult result;
};

/// Runs `plan` through `services`, writing the results tree into plan.out_dir as it goes
/// (docs/suite.md). Exit codes: 0 every scenario complete; 1 a scenario failed, a file could
/// not be written, or --strict refused; 3 the output folder cannot be made or the monitor or
/// tunings cannot start; 130 interrupted. Every started load is stopped and every tuning
/// restored on every way out.
RunOutcome RunSuite(const SuitePlan& plan, const Services& services);

}  // namespace rtpulse::suite
