#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control/control_loop.h"
#include "core/error.h"
#include "core/fs_root.h"
#include "suite/control_workload.h"
#include "suite/interference.h"
#include "suite/runner.h"
#include "trace/explainer.h"

// `rtpulse control`'s plan (docs/control.md): the options as typed (ControlRequest), checked
// and turned into a suite plan whose scenarios are the configurations, the job's settings
// and, with --interference, the contention experiment's plan. Nothing is started or written
// here; every refusal is a usage or resource error naming the option and the fix.
namespace rtpulse::suite {

/// The command line of `rtpulse control`, before any check (the CLI's defaults).
struct ControlRequest {
  std::string policy = "fifo:99";
  std::string period = "4ms";
  uint64_t jobs = 10'000;
  bool jobs_given = false;
  std::string deadline;
  std::optional<int> cpu;
  std::string wake = "abs";
  std::string work_set;
  std::string work_set_mode = "streaming";
  std::string exec;
  std::string sweep;
  std::vector<std::string> load;
  bool no_stress = false;
  std::string settle;
  bool interference = false;
  int repetitions = 5;
  std::string out;
  std::string checkpoint = "10s";
  std::string inject_exec;
  /// --explain and --explain-events as the CLI's shared option group parsed them (the
  /// threshold, the events, the tracefs folder); the job's CPU is set here. nullopt: none.
  std::optional<trace::ExplainPlan> explain;
  VerdictLineFn verdict_line;  ///< How an explained job's line reads.
  std::string invocation;      ///< For result.json.
  std::string version;
};

/// Everything checked and decided before anything is started or written.
struct ControlPlan {
  SuitePlan suite;
  ControlSettings settings;
  std::optional<InterferencePlan> interference;
};

/// Checks `request` against this machine (`root`: online CPUs, memory, caches) and builds the
/// plan. The results folder is checked, not created; --exec's calibration is not run
/// (CalibrateOnCpu, before any load starts).
Expected<ControlPlan> BuildControlPlan(const ControlRequest& request, const FsRoot& root);

/// A control time option ("4ms", "250us", "0.5s"): a bare number is refused (4 would read as
/// 4 seconds where 4 ms was meant); 0 only when `zero_ok`.
Expected<int64_t> ControlTime(const std::string& option, const std::string& text, bool zero_ok);

/// The study's stress-ng mix (4 CPUs) scaled to `cpus` online CPUs.
std::string StudyStressSpec(size_t cpus);

/// The study's eight configurations at `period_ns` (docs/control.md, "Sweeps").
std::vector<control::PolicySpec> PaperPolicies(int64_t period_ns);

}  // namespace rtpulse::suite
