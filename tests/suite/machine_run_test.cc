// suite::MachineRun, the one way `suite`, `control` and `e2e` start a run on this machine: the
// stop signals blocked from its construction on, the command's own services added before the
// run starts, and the outcome of a run that never reached a scenario told apart. On a machine
// made of files; the blocking is checked in a child process, so this program's mask stays.
#include "suite/machine_run.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "core/atomic_file.h"
#include "core/exit_code.h"
#include "support/fake_tree.h"
#include "support/subprocess.h"

namespace rtpulse::suite {
namespace {

class NoWorkload final : public Workload {
 public:
  nlohmann::json ConfigJson() const override { return nlohmann::json::object(); }
  Expected<Measured> Measure(const std::string& /*dir*/, const std::string& /*name*/,
                             int64_t /*duration_ns*/, int64_t /*checkpoint_ns*/,
                             const std::function<void(const results::LatencyRun&)>& /*checkpoint*/,
                             Progress& /*progress*/) override {
    ++measured;
    return Measured{};
  }
  int measured = 0;
};

TEST(MachineRunTest, StopSignalsAreBlockedOnceConstructed) {
  const testutil::FakeTree tree;
  const FsRoot root = tree.Root();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sigset_t before;
    sigprocmask(SIG_SETMASK, nullptr, &before);
    const MachineRun machine(root, "rtpulse test");
    sigset_t after;
    sigprocmask(SIG_SETMASK, nullptr, &after);
    const bool was_open = sigismember(&before, SIGINT) == 0 && sigismember(&before, SIGTERM) == 0;
    const bool now_blocked = sigismember(&after, SIGINT) == 1 && sigismember(&after, SIGTERM) == 1;
    _exit(was_open && now_blocked ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "SIGINT/SIGTERM not blocked by MachineRun";
}

TEST(MachineRunTest, TheCommandsServicesAreAddedBeforeARunThatCannotStart) {
  const testutil::FakeTree tree;
  const FsRoot root = tree.Root();
  const testutil::TempDir tmp;
  // The results folder's parent is a file: the run stops before its first scenario, with
  // the runner's exit code for a file in the way (bad input, core's CreateFolders).
  ASSERT_TRUE(WriteFileAtomic(tmp.path() + "/file", "x\n"));
  SuitePlan plan;
  Scenario idle;
  idle.name = "idle";
  plan.config.scenarios.push_back(idle);
  plan.out_dir = tmp.path() + "/file/run";
  NoWorkload workload;
  Progress progress;
  int customized = 0;
  // A separate process again: constructing the machine blocks the stop signals.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MachineRun machine(root, "rtpulse test");
    const RunOutcome outcome = machine.Run(plan, workload, progress, [&](Services& services) {
      ++customized;
      if (services.workload != &workload || services.progress != &progress) _exit(10);
      if (!services.preflight || !services.monitor || !services.loads) _exit(11);
    });
    if (customized != 1) _exit(12);
    if (workload.measured != 0) _exit(13);
    if (!NothingRan(outcome)) _exit(14);
    _exit(ToInt(outcome.code));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), ToInt(ExitCode::kUsage));
}

TEST(MachineRunTest, NothingRanOnlyWhenNoScenarioStarted) {
  RunOutcome outcome;
  EXPECT_TRUE(NothingRan(outcome));  // no scenario at all
  outcome.result.scenarios.emplace_back();
  outcome.result.status = "refused";
  EXPECT_TRUE(NothingRan(outcome));
  outcome.result.status = "running";  // stopped before the runner finished its first scenario
  EXPECT_TRUE(NothingRan(outcome));
  for (const char* status : {"complete", "interrupted", "failed"}) {
    outcome.result.status = status;
    EXPECT_FALSE(NothingRan(outcome)) << status;
  }
}

}  // namespace
}  // namespace rtpulse::suite
