#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/command_runner.h"
#include "core/fs_root.h"
#include "suite/runner.h"
#include "sys/check.h"
#include "sys/process_facts.h"

// The runner's real services: load processes, the sysfs/proc monitor, reversible tunings,
// a settle wait that takes SIGINT/SIGTERM synchronously, and the pre-flight audit.
namespace rtpulse::suite {

/// The same audit as `rtpulse check` on `context`, as the suite records it; `header_line`
/// opens system_info.txt.
Preflight RunPreflight(const sys::CheckContext& context, const std::string& header_line);

/// load::LoadSet behind the runner's interface. A cmd load's output goes to
/// `dir`/load-N-cmd.log (N: the load's place in the scenario, from 1).
std::unique_ptr<ScenarioLoads> StartableLoads(const Scenario& scenario, const std::string& dir);

/// monitor::Sampler on every default source of `root`, logging to `csv_path`.
Expected<std::unique_ptr<SuiteMonitor>> OpenMonitor(const FsRoot& root, const std::string& csv_path,
                                                    int64_t interval_ns);

/// sys::Tuning applied for the measured CPUs (a guardian process restores it if we die).
Expected<std::unique_ptr<SuiteTuning>> ApplyTuning(const FsRoot& root,
                                                   const std::vector<int>& measured_cpus,
                                                   const std::vector<int>& online_cpus,
                                                   bool rt_throttling_off,
                                                   const std::string& journal_path);

/// One knob of sys::Tuning applied (suite --tune-ab), with its guardian; that marks
/// `result_path` killed (results::MarkKilled) if rtpulse dies while the knob is in force or
/// before Release(). `result_path` "": nothing to mark (the knob trial before a run).
Expected<std::unique_ptr<SuiteTuning>> ApplyKnob(const FsRoot& root, sys::TuneKnob knob,
                                                 const std::vector<int>& measured_cpus,
                                                 const std::vector<int>& online_cpus,
                                                 const std::string& journal_path,
                                                 const std::string& result_path = "");

/// The services every command that runs the suite on this machine shares: `preflight` as
/// found, the monitor on `root`, the scenarios' loads (their logs in the scenario folders), the
/// integrity check's CPU counters, CLOCK_REALTIME, and the given pause, workload and progress.
/// Tunings are left empty: a command that offers --tune adds them.
Services MachineServices(const SuitePlan& plan, const FsRoot& root, Preflight preflight,
                         Pause& pause, Workload& workload, Progress& progress);

/// Whether SIGINT or SIGTERM came within `timeout_ns` (they must be blocked:
/// measure::BlockRunSignals; taken synchronously with sigtimedwait). What a workload's non-RT
/// thread polls while its measurement runs.
bool StopSignalWithin(int64_t timeout_ns);

/// Waits with sigtimedwait on SIGINT/SIGTERM (they must be blocked: measure::BlockRunSignals).
class SignalPause final : public Pause {
 public:
  bool Wait(int64_t ns, const std::function<void(int64_t)>& tick) override;
  bool StopPending() override;
};

}  // namespace rtpulse::suite
