#include "suite/machine_run.h"

#include <utility>

#include "measure/engine.h"
#include "sys/process_facts.h"

namespace rtpulse::suite {
namespace {

// The process facts come first, while the signals are still as rtpulse was started with;
// blocking them is the last thing before the machine is read.
sys::ProcessFacts ProbeThenBlockSignals() {
  sys::ProcessFacts facts = sys::ProbeProcess();
  measure::BlockRunSignals();
  return facts;
}

}  // namespace

MachineRun::MachineRun(const FsRoot& root, std::string header_line)
    : context_(root, commands_, ProbeThenBlockSignals()), header_line_(std::move(header_line)) {}

RunOutcome MachineRun::Run(const SuitePlan& plan, Workload& workload, Progress& progress,
                           const std::function<void(Services&)>& customize) {
  Services services = MachineServices(plan, context_.root, RunPreflight(context_, header_line_),
                                      pause_, workload, progress);
  if (customize) customize(services);
  return RunSuite(plan, services);
}

bool NothingRan(const RunOutcome& outcome) {
  return outcome.result.scenarios.empty() || outcome.result.status == "refused" ||
         outcome.result.status == "running";
}

}  // namespace rtpulse::suite
