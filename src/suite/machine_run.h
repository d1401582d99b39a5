#pragma once

#include <functional>
#include <string>

#include "core/command_runner.h"
#include "core/fs_root.h"
#include "suite/runner.h"
#include "suite/services.h"
#include "sys/check.h"

// One way a command runs a workload through the suite on this machine (`suite`, `control`,
// `e2e`): what every such run does before its first scenario, written once.
namespace rtpulse::suite {

/// The machine a suite run measures. Constructing it probes this process (sys::ProbeProcess)
/// and then blocks SIGINT and SIGTERM (measure::BlockRunSignals), so that from here on the
/// settle wait, the engine and the workloads take them synchronously and every scenario ends
/// with its results written; and it reads the machine's facts (sys::CheckContext) that the
/// workloads and the pre-flight audit share.
class MachineRun {
 public:
  /// `header_line` opens system_info.txt ("rtpulse VERSION COMMAND, INVOCATION").
  MachineRun(const FsRoot& root, std::string header_line);
  /// The machine's facts hold `root` by reference: it must outlive the MachineRun.
  MachineRun(FsRoot&& root, std::string header_line) = delete;
  MachineRun(const MachineRun&) = delete;
  MachineRun& operator=(const MachineRun&) = delete;

  const FsRoot& root() const { return context_.root; }
  const sys::CheckContext& context() const { return context_; }
  const sys::SystemInfo& info() const { return context_.info; }

  /// Runs `plan` with `workload` under the pre-flight audit, the monitor, the scenarios' loads
  /// and the integrity check (MachineServices), pausing on SIGINT/SIGTERM; `customize` adds
  /// what the command offers beyond them (its tunings) before the run starts.
  RunOutcome Run(const SuitePlan& plan, Workload& workload, Progress& progress,
                 const std::function<void(Services&)>& customize = {});

 private:
  SystemCommandRunner commands_;
  sys::CheckContext context_;
  std::string header_line_;
  SignalPause pause_;
};

/// True when the run stopped before any scenario ran (refused, or it could not start): the
/// runner has said why and the command prints no summary.
bool NothingRan(const RunOutcome& outcome);

}  // namespace rtpulse::suite
