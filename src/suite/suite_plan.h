#pragma once

#include <optional>
#include <string>

#include "core/error.h"
#include "core/fs_root.h"
#include "measure/plan.h"
#include "suite/latency_workload.h"
#include "suite/runner.h"
#include "trace/explainer.h"

// `rtpulse suite`'s plan (docs/suite.md): the options as typed (SuiteRequest), checked and
// turned into the runner's plan (the suite file or the built-in scenarios, the CPUs, the
// tunings, the budget) and the latency probes' settings. Nothing is started or written here.
namespace rtpulse::suite {

/// The command line of `rtpulse suite`, before any check (the CLI's defaults).
struct SuiteRequest {
  std::string config;  ///< --config FILE ("": the built-in scenarios)
  std::string duration;
  std::string settle;
  bool quick = false;
  std::string scenarios;
  std::string out;
  std::string cpus;
  std::optional<int> priority;
  std::string interval;
  std::string wake;
  std::string monitor_interval;
  std::string checkpoint_interval = "10s";
  bool tune = false;
  bool rt_throttling_off = false;
  bool tune_ab = false;
  std::optional<int> ab_pairs;
  bool strict = false;
  bool samples = false;
  std::string budget;
  std::string textfile;  ///< --textfile DIR
  /// --explain and --explain-events as the CLI's shared option group parsed them; the
  /// probes' CPUs are set here. nullopt: none.
  std::optional<trace::ExplainPlan> explain;
  VerdictLineFn verdict_line;  ///< How an explained sample's line reads.
  std::string invocation;      ///< For result.json.
  std::string version;
};

/// The runner's plan plus what the latency workload needs.
struct LatencySuitePlan {
  SuitePlan suite;
  LatencySettings latency;
  measure::LatencyPlan latency_plan;
};

/// Checks `request` against this machine (`root`: online CPUs) and builds the plan. The
/// results folder is checked, not created.
Expected<LatencySuitePlan> BuildLatencySuitePlan(const SuiteRequest& request, const FsRoot& root);

/// --tune-ab: tries every knob once (applied, then restored at once) to learn which apply
/// here, then replaces the plan's scenarios by the blocks of those that do. RT throttling is
/// tried only with `rt_throttling_off`. A machine where none applies is a resource error.
Status PlanTuneAb(const FsRoot& root, bool rt_throttling_off, int pairs, SuitePlan& plan);

}  // namespace rtpulse::suite
