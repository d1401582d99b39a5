// Tuning (rtpulse suite --tune) on fixture trees: what it writes, what it records, and that
// every way out (Restore, the destructor, SIGKILL of the process) puts every byte back.

#include "sys/tuning.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sys/fake_machine.h"

namespace rtpulse::sys {
namespace {

namespace fs = std::filesystem;
using testutil::FakeTree;
using testutil::ReadFile;

constexpr const char* kPolicy = "/sys/devices/system/cpu/cpufreq/policy0/";
constexpr const char* kCpu0Freq = "/sys/devices/system/cpu/cpu0/cpufreq/";
constexpr const char* kRtRuntime = "/proc/sys/kernel/sched_rt_runtime_us";

/// A Raspberry Pi 5 as the tunings see it: four CPUs on one cpufreq policy (each cpuN/cpufreq
/// links to policy0), ondemand at 1.5-2.4 GHz, RT throttling on, a few IRQs.
FakeTree Pi5Tree() {
  FakeTree tree;
  const std::string policy = kPolicy;
  tree.Write("/sys/devices/system/cpu/online", "0-3\n")
      .Write(policy + "scaling_governor", "ondemand\n")
      .Write(policy + "scaling_available_governors",
             "conservative ondemand userspace powersave performance schedutil \n")
      .Write(policy + "scaling_min_freq", "1500000\n")
      .Write(policy + "scaling_max_freq", "2400000\n")
      .Write(policy + "cpuinfo_min_freq", "1500000\n")
      .Write(policy + "cpuinfo_max_freq", "2400000\n")
      .Write(policy + "affected_cpus", "0 1 2 3\n")
      .Write(kRtRuntime, "950000\n")
      .Write("/proc/sys/kernel/sched_rt_period_us", "1000000\n")
      .Write("/proc/irq/default_smp_affinity", "f\n")
      .Write("/proc/irq/9/smp_affinity_list", "0-3\n")
      .Write("/proc/irq/27/smp_affinity_list", "3\n")
      .Write("/proc/irq/104/smp_affinity_list", "0\n")
      .Write("/proc/irq/160/smp_affinity_list", "2-3\n");
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string dir = tree.path() + "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
    fs::create_directories(dir);
    fs::create_directory_symlink("../cpufreq/policy0", dir + "/cpufreq");
  }
  return tree;
}

/// A 2-CPU virtual machine: no cpufreq, two IRQs.
FakeTree VmTree() {
  FakeTree tree;
  tree.Write("/sys/devices/system/cpu/online", "0-1\n")
      .Write(kRtRuntime, "950000\n")
      .Write("/proc/irq/default_smp_affinity", "3\n")
      .Write("/proc/irq/24/smp_affinity_list", "0-1\n")
      .Write("/proc/irq/25/smp_affinity_list", "0-1\n");
  return tree;
}

TuneOptions Pi5Options() {
  TuneOptions options;
  options.measured_cpus = {3};
  options.rt_throttling_off = true;
  return options;
}

/// Every regular file under `dir` (not through the cpufreq links) and its bytes.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && !entry.is_symlink()) {
      files[fs::relative(entry.path(), dir).string()] = ReadFile(entry.path().string());
    }
  }
  return files;
}

std::string In(const FakeTree& tree, const std::string& path) {
  return ReadFile(tree.path() + path);
}

const TuneChange* Find(const Tuning& tuning, std::string_view what) {
  for (const auto& c : tuning.changes()) {
    if (c.what == what) return &c;
  }
  return nullptr;
}

std::unique_ptr<Tuning> ApplyOrDie(const FsRoot& root, const TuneOptions& options) {
  auto tuning = Tuning::Apply(root, options);
  if (!tuning) {
    ADD_FAILURE() << tuning.error().message;
    return nullptr;
  }
  return std::move(*tuning);
}

/// True when `pid` is gone or a zombie.
bool Gone(pid_t pid) {
  const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
  if (!fs::exists(stat)) return true;
  const std::string text = ReadFile(stat);
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

/// A signal mask of /proc/PID/status ("SigIgn", "SigPnd", "ShdPnd"); 0 when unreadable.
uint64_t StatusMask(pid_t pid, const std::string& field) {
  std::istringstream in(ReadFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stoull(line.substr(field.size() + 1), nullptr, 16);
    }
  }
  return 0;
}

uint64_t SignalBit(int sig) {
  return uint64_t{1} << (sig - 1);
}

int RefuseIrq27(const char* path, std::string_view content) {
  if (std::strstr(path, "/proc/irq/27/") != nullptr) return EIO;
  return WriteKernelFile(path, content);
}

TEST(TuningTest, AppliesEveryTuningOnAPi5Tree) {
  FakeTree tree = Pi5Tree();
  auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
  ASSERT_TRUE(tuning);
  EXPECT_EQ(In(tree, std::string(kPolicy) + "scaling_governor"), "performance\n");
  EXPECT_EQ(In(tree, std::string(kPolicy) + "scaling_min_freq"), "2400000\n");
  EXPECT_EQ(In(tree, std::string(kPolicy) + "scaling_max_freq"), "2400000\n");
  EXPECT_EQ(In(tree, kRtRuntime), "-1\n");
  EXPECT_EQ(In(tree, "/proc/irq/default_smp_affinity"), "7\n");
  EXPECT_EQ(In(tree, "/proc/irq/9/smp_affinity_list"), "0-2\n");
  EXPECT_EQ(In(tree, "/proc/irq/27/smp_affinity_list"), "0-2\n");
  EXPECT_EQ(In(tree, "/proc/irq/104/smp_affinity_list"), "0\n") << "already off CPU 3";
  EXPECT_EQ(In(tree, "/proc/irq/160/smp_affinity_list"), "0-2\n");

  struct Expect {
    std::string what, path, before, after;
  };
  const std::vector<Expect> applied = {
      {"cpufreq governor (CPUs 0-3)", std::string(kCpu0Freq) + "scaling_governor", "ondemand",
       "performance"},
      {"cpufreq minimum (CPUs 0-3)", std::string(kCpu0Freq) + "scaling_min_freq", "1500000",
       "2400000"},
      {"RT throttling", kRtRuntime, "950000", "-1"},
      {"default IRQ affinity", "/proc/irq/default_smp_affinity", "f", "7"},
      {"IRQ 9 affinity", "/proc/irq/9/smp_affinity_list", "0-3", "0-2"},
      {"IRQ 27 affinity", "/proc/irq/27/smp_affinity_list", "3", "0-2"},
      {"IRQ 160 affinity", "/proc/irq/160/smp_affinity_list", "2-3", "0-2"},
  };
  const auto& changes = tuning->changes();
  ASSERT_EQ(changes.size(), applied.size() + 1);
  for (size_t i = 0; i < applied.size(); ++i) {
    SCOPED_TRACE(applied[i].what);
    EXPECT_EQ(changes[i].what, applied[i].what);
    EXPECT_EQ(changes[i].path, applied[i].path);
    EXPECT_EQ(changes[i].before, applied[i].before);
    EXPECT_EQ(changes[i].after, applied[i].after);
    EXPECT_EQ(changes[i].status, TuneStatus::kApplied);
    EXPECT_FALSE(changes[i].restored);
  }
  EXPECT_EQ(changes.back().what, "IRQ affinity");
  EXPECT_EQ(changes.back().status, TuneStatus::kSkipped);
  EXPECT_EQ(changes.back().detail, "IRQs 104 already avoid CPUs 3");
}

/// The paths a tuning applied, in order.
std::vector<std::string> AppliedPaths(const Tuning& tuning) {
  std::vector<std::string> paths;
  for (const auto& c : tuning.changes()) {
    if (c.status == TuneStatus::kApplied) paths.push_back(c.path);
  }
  return paths;
}

TEST(TuningTest, OneKnobAtATimeTouchesOnlyItsFiles) {
  const std::string governor = std::string(kCpu0Freq) + "scaling_governor";
  const std::string minimum = std::string(kCpu0Freq) + "scaling_min_freq";
  const std::map<TuneKnob, std::vector<std::string>> expected = {
      {TuneKnob::kGovernor, {governor}},
      {TuneKnob::kMinFreq, {minimum}},
      {TuneKnob::kRtThrottling, {kRtRuntime}},
      {TuneKnob::kDefaultIrqAffinity, {"/proc/irq/default_smp_affinity"}},
      {TuneKnob::kIrqAffinity,
       {"/proc/irq/9/smp_affinity_list", "/proc/irq/27/smp_affinity_list",
        "/proc/irq/160/smp_affinity_list"}},
  };
  for (const TuneKnob knob : kTuneKnobs) {
    SCOPED_TRACE(std::string(TuneKnobName(knob)));
    FakeTree tree = Pi5Tree();
    const auto before = Snapshot(tree.path());
    TuneOptions options = Pi5Options();
    options.rt_throttling_off = false;  // ignored with `only`: the knob itself decides
    options.only = knob;
    auto tuning = ApplyOrDie(tree.Root(), options);
    ASSERT_TRUE(tuning);
    EXPECT_EQ(AppliedPaths(*tuning), expected.at(knob));
    ASSERT_TRUE(tuning->Restore());
    EXPECT_EQ(Snapshot(tree.path()), before);
  }
  EXPECT_EQ(TuneKnobName(TuneKnob::kDefaultIrqAffinity), "default-irq-affinity");
}

TEST(TuningTest, AKnobThatDoesNotApplySaysWhy) {
  FakeTree tree = VmTree();
  tree.Write("/proc/irq/default_smp_affinity", "1\n");  // CPU 0 only
  TuneOptions options;
  options.measured_cpus = {1};
  for (const TuneKnob knob : {TuneKnob::kGovernor, TuneKnob::kDefaultIrqAffinity}) {
    options.only = knob;
    auto tuning = ApplyOrDie(tree.Root(), options);
    ASSERT_TRUE(tuning);
    EXPECT_TRUE(AppliedPaths(*tuning).empty());
    ASSERT_EQ(tuning->changes().size(), 1u);
    EXPECT_EQ(tuning->changes()[0].status, TuneStatus::kSkipped);
    EXPECT_NE(tuning->changes()[0].detail.find(knob == TuneKnob::kGovernor ? "no cpufreq"
                                                                           : "already avoids"),
              std::string::npos)
        << tuning->changes()[0].detail;
  }
}

/// cpuidle's states of `cpu` in `tree`, named `names` in order, each enabled (disable 0).
void WriteIdleStates(FakeTree& tree, int cpu, const std::vector<std::string>& names) {
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string state = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                              "/cpuidle/state" + std::to_string(k) + "/";
    tree.Write(state + "name", names[k] + "\n").Write(state + "disable", "0\n");
  }
}

// --deepest-idle-state: cpuidle's per-state disable files, only the states deeper than N, only
// on the measured CPUs, nothing else of the tree; every byte back after.
TEST(TuningTest, IdleStatesDeeperThanTheLimitAreDisabledOnTheMeasuredCpusOnly) {
  FakeTree tree = Pi5Tree();
  for (int cpu = 0; cpu < 4; ++cpu)
    WriteIdleStates(tree, cpu, {"WFI", "cpu-sleep", "cluster-sleep"});
  const auto before = Snapshot(tree.path());
  TuneOptions options;
  options.only = TuneKnob::kIdleStates;
  options.deepest_idle_state = 0;
  options.measured_cpus = {3, 2};
  {
    auto tuning = ApplyOrDie(tree.Root(), options);
    ASSERT_TRUE(tuning);
    auto now = Snapshot(tree.path());
    std::vector<std::string> changed;
    for (const auto& [file, bytes] : now) {
      if (before.at(file) != bytes) changed.push_back(file + "=" + bytes);
    }
    EXPECT_EQ(changed,
              (std::vector<std::string>{"sys/devices/system/cpu/cpu2/cpuidle/state1/disable=1\n",
                                        "sys/devices/system/cpu/cpu2/cpuidle/state2/disable=1\n",
                                        "sys/devices/system/cpu/cpu3/cpuidle/state1/disable=1\n",
                                        "sys/devices/system/cpu/cpu3/cpuidle/state2/disable=1\n"}));
    const TuneChange* c = Find(*tuning, "idle state 2 (cluster-sleep) of CPU 3");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->status, TuneStatus::kApplied);
    EXPECT_EQ(c->before, "0");
    ASSERT_TRUE(tuning->Restore());
  }
  EXPECT_EQ(Snapshot(tree.path()), before);
}

// What --deepest-idle-state records: the states it disabled, restored after; a measured CPU
// without idle states is a warning, not a silent no-op.
TEST(TuningTest, IdleStatesRecordNamesWhatWasDisabledAndWarnsOfACpuWithoutStates) {
  FakeTree tree = Pi5Tree();
  WriteIdleStates(tree, 2, {"WFI", "cpu-sleep"});
  const auto before = Snapshot(tree.path());
  auto none = LimitIdleStates(tree.Root(), std::nullopt, {0, 1, 2, 3}, {2, 3});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(*none) << "no --deepest-idle-state: no tuning";
  auto limited = LimitIdleStates(tree.Root(), 0, {0, 1, 2, 3}, {2, 3});
  ASSERT_TRUE(limited) << limited.error().message;
  std::unique_ptr<Tuning>& tuning = *limited;
  ASSERT_TRUE(tuning);
  std::vector<std::string> warnings;
  EXPECT_EQ(RestoreIdleStates(*tuning, warnings),
            "disabled for the run, then restored: idle state 1 (cpu-sleep) of CPU 2");
  EXPECT_EQ(Snapshot(tree.path()), before);
  EXPECT_EQ(tuning->guardian_pid(), 0);
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_NE(warnings[0].find("--deepest-idle-state: "), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("CPU 3"), std::string::npos) << warnings[0];
}

TEST(TuningTest, RestorePutsEveryByteBack) {
  FakeTree tree = Pi5Tree();
  const auto before = Snapshot(tree.path());
  auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
  ASSERT_TRUE(tuning);
  const pid_t guardian = tuning->guardian_pid();
  ASSERT_GT(guardian, 0);
  EXPECT_FALSE(Gone(guardian));
  ASSERT_NE(Snapshot(tree.path()), before);

  const Status restored = tuning->Restore();
  ASSERT_TRUE(restored) << restored.error().message;
  EXPECT_EQ(Snapshot(tree.path()), before);
  EXPECT_TRUE(tuning->restored());
  for (const auto& c : tuning->changes()) {
    EXPECT_EQ(c.restored, c.status == TuneStatus::kApplied) << c.what;
  }
  EXPECT_EQ(tuning->guardian_pid(), 0);
  EXPECT_TRUE(Gone(guardian)) << "Restore() waits for the guardian";
}

TEST(TuningTest, DestructorRestores) {
  FakeTree tree = Pi5Tree();
  const auto before = Snapshot(tree.path());
  pid_t guardian = 0;
  {
    auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
    ASSERT_TRUE(tuning);
    guardian = tuning->guardian_pid();
    EXPECT_EQ(In(tree, kRtRuntime), "-1\n");
  }
  EXPECT_EQ(Snapshot(tree.path()), before);
  EXPECT_TRUE(Gone(guardian));
}

TEST(TuningTest, RestoreIsIdempotent) {
  FakeTree tree = Pi5Tree();
  auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
  ASSERT_TRUE(tuning);
  ASSERT_TRUE(tuning->Restore());
  // Someone changes the governor after the run: a second Restore() must not write again.
  tree.Write(std::string(kPolicy) + "scaling_governor", "schedutil\n");
  EXPECT_TRUE(tuning->Restore());
  EXPECT_EQ(In(tree, std::string(kPolicy) + "scaling_governor"), "schedutil\n");
}

TEST(TuningTest, RefusedIrqIsRecordedAndTheOthersApplied) {
  FakeTree tree = Pi5Tree();
  const auto before = Snapshot(tree.path());
  TuneOptions options = Pi5Options();
  options.write_file = &RefuseIrq27;
  auto tuning = ApplyOrDie(tree.Root(), options);
  ASSERT_TRUE(tuning);
  const TuneChange* refused = Find(*tuning, "IRQ 27 affinity");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->status, TuneStatus::kRefused);
  EXPECT_EQ(refused->before, "3");
  EXPECT_EQ(refused->after, "0-2");
  EXPECT_NE(refused->detail.find("Input/output error"), std::string::npos) << refused->detail;
  EXPECT_NE(refused->detail.find("per-CPU or kernel-managed IRQ"), std::string::npos);
  EXPECT_EQ(In(tree, "/proc/irq/27/smp_affinity_list"), "3\n");
  for (const char* what : {"IRQ 9 affinity", "IRQ 160 affinity", "RT throttling"}) {
    ASSERT_NE(Find(*tuning, what), nullptr) << what;
    EXPECT_EQ(Find(*tuning, what)->status, TuneStatus::kApplied) << what;
  }
  EXPECT_EQ(In(tree, "/proc/irq/9/smp_affinity_list"), "0-2\n");
  ASSERT_TRUE(tuning->Restore());
  EXPECT_EQ(Snapshot(tree.path()), before);
  EXPECT_FALSE(Find(*tuning, "IRQ 27 affinity")->restored) << "nothing to restore";
}

TEST(TuningTest, VmWithoutCpufreqSkipsItWithANote) {
  FakeTree tree = VmTree();
  TuneOptions options;
  options.measured_cpus = {1};
  auto tuning = ApplyOrDie(tree.Root(), options);
  ASSERT_TRUE(tuning);
  const TuneChange* cpufreq = Find(*tuning, "cpufreq");
  ASSERT_NE(cpufreq, nullptr);
  EXPECT_EQ(cpufreq->status, TuneStatus::kSkipped);
  EXPECT_NE(cpufreq->detail.find("no cpufreq"), std::string::npos);
  EXPECT_EQ(Find(*tuning, "RT throttling"), nullptr) << "not requested";
  EXPECT_EQ(In(tree, kRtRuntime), "950000\n");
  EXPECT_EQ(In(tree, "/proc/irq/24/smp_affinity_list"), "0\n");
  EXPECT_EQ(In(tree, "/proc/irq/25/smp_affinity_list"), "0\n");
  EXPECT_EQ(In(tree, "/proc/irq/default_smp_affinity"), "1\n");
}

TEST(TuningTest, NoHousekeepingCpuLeavesIrqsAlone) {
  FakeTree tree = VmTree();
  TuneOptions options;
  options.measured_cpus = {0, 1};
  auto tuning = ApplyOrDie(tree.Root(), options);
  ASSERT_TRUE(tuning);
  const TuneChange* irqs = Find(*tuning, "IRQ affinity");
  ASSERT_NE(irqs, nullptr);
  EXPECT_EQ(irqs->status, TuneStatus::kSkipped);
  EXPECT_EQ(irqs->detail,
            "every online CPU (0-1) is measured: no housekeeping CPU to move IRQs to");
  EXPECT_EQ(In(tree, "/proc/irq/24/smp_affinity_list"), "0-1\n");
  EXPECT_EQ(In(tree, "/proc/irq/default_smp_affinity"), "3\n");
}

TEST(TuningTest, PerCpuPoliciesAndAnAdminCapOnTheMaximum) {
  // x86 style: each CPU its own cpufreq folder; scaling_max_freq capped below the hardware.
  FakeTree tree;
  tree.Write("/sys/devices/system/cpu/online", "0-1\n");
  for (const char* cpu : {"cpu0", "cpu1"}) {
    const std::string dir = std::string("/sys/devices/system/cpu/") + cpu + "/cpufreq/";
    tree.Write(dir + "scaling_governor", "powersave\n")
        .Write(dir + "scaling_min_freq", "800000\n")
        .Write(dir + "scaling_max_freq", "2000000\n")
        .Write(dir + "cpuinfo_max_freq", "3600000\n");
  }
  auto tuning = ApplyOrDie(tree.Root(), {});
  ASSERT_TRUE(tuning);
  for (const char* cpu : {"0", "1"}) {
    const TuneChange* governor = Find(*tuning, std::string("cpufreq governor (CPUs ") + cpu + ")");
    const TuneChange* minimum = Find(*tuning, std::string("cpufreq minimum (CPUs ") + cpu + ")");
    ASSERT_NE(governor, nullptr);
    ASSERT_NE(minimum, nullptr);
    EXPECT_EQ(governor->status, TuneStatus::kApplied);
    EXPECT_EQ(minimum->after, "2000000") << "scaling_max_freq caps it, not cpuinfo_max_freq";
    EXPECT_EQ(
        In(tree, "/sys/devices/system/cpu/cpu" + std::string(cpu) + "/cpufreq/scaling_min_freq"),
        "2000000\n");
  }
  const TuneChange* irqs = Find(*tuning, "IRQ affinity");
  ASSERT_NE(irqs, nullptr);
  EXPECT_EQ(irqs->detail, "no measured CPUs given: IRQs left alone");
}

TEST(TuningTest, AlreadyTunedIsSkippedAndNotRestored) {
  FakeTree tree = Pi5Tree();
  tree.Write(std::string(kPolicy) + "scaling_governor", "performance\n");
  auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
  ASSERT_TRUE(tuning);
  const TuneChange* governor = Find(*tuning, "cpufreq governor (CPUs 0-3)");
  ASSERT_NE(governor, nullptr);
  EXPECT_EQ(governor->status, TuneStatus::kSkipped);
  EXPECT_EQ(governor->detail, "already performance");
  tree.Write(std::string(kPolicy) + "scaling_governor", "schedutil\n");
  ASSERT_TRUE(tuning->Restore());
  EXPECT_EQ(In(tree, std::string(kPolicy) + "scaling_governor"), "schedutil\n");
}

TEST(TuningTest, GovernorMissingFromTheAvailableListIsANote) {
  FakeTree tree = Pi5Tree();
  tree.Write(std::string(kPolicy) + "scaling_available_governors", "ondemand powersave\n");
  auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
  ASSERT_TRUE(tuning);
  const TuneChange* governor = Find(*tuning, "cpufreq governor (CPUs 0-3)");
  ASSERT_NE(governor, nullptr);
  EXPECT_EQ(governor->status, TuneStatus::kSkipped);
  EXPECT_EQ(governor->detail, "no 'performance' governor (available: ondemand powersave)");
  EXPECT_EQ(In(tree, std::string(kPolicy) + "scaling_governor"), "ondemand\n");
}

TEST(TuningTest, JournalFollowsTheRun) {
  FakeTree tree = Pi5Tree();
  testutil::TempDir results;
  TuneOptions options = Pi5Options();
  options.journal_path = results.File("tuning_journal.json");
  auto tuning = ApplyOrDie(tree.Root(), options);
  ASSERT_TRUE(tuning);
  auto journal = nlohmann::json::parse(ReadFile(options.journal_path));
  EXPECT_EQ(journal["state"], "applied");
  EXPECT_EQ(journal["guardian_pid"], tuning->guardian_pid());
  EXPECT_EQ(journal["rtpulse_pid"], getpid());
  EXPECT_EQ(journal["changes"], tuning->ToJson());
  ASSERT_TRUE(tuning->Restore());
  journal = nlohmann::json::parse(ReadFile(options.journal_path));
  EXPECT_EQ(journal["state"], "restored");
  EXPECT_EQ(journal["changes"][0]["restored"], true);
}

TEST(TuningTest, UnusableJournalChangesNothing) {
  FakeTree tree = Pi5Tree();
  const auto before = Snapshot(tree.path());
  TuneOptions options = Pi5Options();
  options.journal_path = tree.path() + "/no/such/folder/tuning_journal.json";
  auto tuning = Tuning::Apply(tree.Root(), options);
  ASSERT_FALSE(tuning);
  EXPECT_NE(tuning.error().message.find("nothing was tuned"), std::string::npos)
      << tuning.error().message;
  EXPECT_NE(tuning.error().message.find("does not exist"), std::string::npos);
  EXPECT_EQ(Snapshot(tree.path()), before);
}

TEST(TuningTest, JsonAndDescription) {
  FakeTree tree = Pi5Tree();
  TuneOptions options = Pi5Options();
  options.write_file = &RefuseIrq27;
  auto tuning = ApplyOrDie(tree.Root(), options);
  ASSERT_TRUE(tuning);
  const nlohmann::json json = tuning->ToJson();
  ASSERT_TRUE(json.is_array());
  EXPECT_EQ(json[0], nlohmann::json({{"what", "cpufreq governor (CPUs 0-3)"},
                                     {"path", std::string(kCpu0Freq) + "scaling_governor"},
                                     {"before", "ondemand"},
                                     {"after", "performance"},
                                     {"status", "applied"},
                                     {"restored", false}}));
  EXPECT_EQ(json[5]["status"], "refused");
  EXPECT_FALSE(json[5].contains("restored"));
  EXPECT_EQ(tuning->Describe().substr(0, tuning->Describe().find('\n')),
            "Tuning (--tune): 6 applied, 1 refused, 1 skipped; in force");
  EXPECT_NE(tuning->Describe().find("  applied  RT throttling: 950000 -> -1 "
                                    "(/proc/sys/kernel/sched_rt_runtime_us)\n"),
            std::string::npos)
      << tuning->Describe();
  ASSERT_TRUE(tuning->Restore());
  EXPECT_EQ(tuning->ToJson()[0]["restored"], true);
  EXPECT_NE(tuning->Describe().find("skipped; restored\n"), std::string::npos);
}

TEST(TuningTest, GuardianIgnoresCtrlCAndLeavesTheProcessGroup) {
  FakeTree tree = Pi5Tree();
  auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
  ASSERT_TRUE(tuning);
  const pid_t guardian = tuning->guardian_pid();
  EXPECT_EQ(getpgid(guardian), guardian) << "its own group: a Ctrl-C does not reach it";
  // Even sent directly, the terminal's signals do not stop it: it ignores them (SIG_IGN, set
  // before it reported ready), and the kernel discards an ignored signal as it is sent. So once
  // kill() has returned there is nothing to wait for: a signal the guardian did not ignore
  // would now be pending (a fatal one queues SIGKILL) or would have killed it.
  const std::initializer_list<int> terminal_signals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  const uint64_t ignored = StatusMask(guardian, "SigIgn");
  for (int sig : terminal_signals) {
    EXPECT_NE(ignored & SignalBit(sig), 0u) << "signal " << sig << " is not ignored";
  }
  for (int sig : terminal_signals) ASSERT_EQ(kill(guardian, sig), 0);
  EXPECT_EQ(StatusMask(guardian, "SigPnd") | StatusMask(guardian, "ShdPnd"), 0u)
      << "a signal sent to the guardian is pending";
  EXPECT_FALSE(Gone(guardian));
  EXPECT_EQ(In(tree, kRtRuntime), "-1\n") << "and it restored nothing";
  const Status restored = tuning->Restore();
  EXPECT_TRUE(restored) << restored.error().message;
  EXPECT_EQ(In(tree, kRtRuntime), "950000\n");
}

TEST(TuningTest, GuardianRunsWithoutRealTimePriority) {
  sched_param param{};
  param.sched_priority = 10;
  if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
    GTEST_SKIP() << "cannot take SCHED_FIFO here (needs root or CAP_SYS_NICE): "
                 << std::strerror(errno);
  }
  FakeTree tree = Pi5Tree();
  auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
  sched_param other{};
  sched_setscheduler(0, SCHED_OTHER, &other);
  ASSERT_TRUE(tuning);
  EXPECT_EQ(sched_getscheduler(tuning->guardian_pid()), SCHED_OTHER);
}

/// A process that applies tunings and waits to be killed, as a killed `rtpulse suite` would.
struct Victim {
  pid_t pid = 0;
  pid_t guardian = 0;
  pid_t holder = 0;  ///< Its forked child that keeps the guardian's socket open (0: none).
};

/// Makes orphaned descendants (the guardian, once its parent is killed) this test's children,
/// so the test can reap them and tell exactly when they exit.
class Subreaper {
 public:
  Subreaper() : ok_(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0) {}
  ~Subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
  /// False where the kernel interface is missing: qemu-user 7.2 (the arm64 stage) answers
  /// EINVAL, so an orphaned guardian goes to init and this process cannot reap it.
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

Victim StartVictim(const FakeTree& tree, bool fork_holder) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto tuning = Tuning::Apply(tree.Root(), Pi5Options());
    pid_t report[2] = {tuning ? (*tuning)->guardian_pid() : -1, 0};
    if (tuning && fork_holder) {
      report[1] = fork();
      if (report[1] == 0) {
        for (;;) pause();
      }
    }
    if (write(fds[1], report, sizeof(report)) != sizeof(report)) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  pid_t report[2] = {-1, 0};
  const bool read_all = read(fds[0], report, sizeof(report)) == sizeof(report);
  close(fds[0]);
  return {pid, read_all ? report[0] : -1, report[1]};
}

/// Reaps `pid` (a child of this process); false if it still runs after `limit`.
bool WaitExit(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(TuningTest, SigkillOfTheProcessIsUndoneByTheGuardian) {
  Subreaper subreaper;
  if (!subreaper.ok())
    GTEST_SKIP() << "PR_SET_CHILD_SUBREAPER unavailable: " << std::strerror(errno);
  FakeTree tree = Pi5Tree();
  const auto before = Snapshot(tree.path());
  const Victim victim = StartVictim(tree, false);
  ASSERT_GT(victim.guardian, 0);
  EXPECT_EQ(In(tree, kRtRuntime), "-1\n");
  EXPECT_EQ(In(tree, std::string(kPolicy) + "scaling_governor"), "performance\n");

  ASSERT_EQ(kill(victim.pid, SIGKILL), 0);
  ASSERT_EQ(waitpid(victim.pid, nullptr, 0), victim.pid);
  ASSERT_TRUE(WaitExit(victim.guardian, std::chrono::seconds(5)))
      << "the guardian must exit once it has restored";
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(victim.guardian)));
  EXPECT_EQ(Snapshot(tree.path()), before);
}

TEST(TuningTest, SigkillIsUndoneEvenWhenAForkedChildHoldsTheSocket) {
  // A load worker forked by rtpulse inherits the guardian's socket, so end-of-file may not come
  // when rtpulse dies; the guardian notices it was orphaned instead.
  Subreaper subreaper;
  if (!subreaper.ok())
    GTEST_SKIP() << "PR_SET_CHILD_SUBREAPER unavailable: " << std::strerror(errno);
  FakeTree tree = Pi5Tree();
  const auto before = Snapshot(tree.path());
  const Victim victim = StartVictim(tree, true);
  ASSERT_GT(victim.guardian, 0);
  ASSERT_GT(victim.holder, 0);
  ASSERT_EQ(kill(victim.pid, SIGKILL), 0);
  ASSERT_EQ(waitpid(victim.pid, nullptr, 0), victim.pid);
  const bool exited = WaitExit(victim.guardian, std::chrono::seconds(5));
  kill(victim.holder, SIGKILL);
  WaitExit(victim.holder, std::chrono::seconds(5));
  ASSERT_TRUE(exited);
  EXPECT_EQ(Snapshot(tree.path()), before);
}

/// Options whose guardian runs something after a restore: this test binary listing no test
/// (it execs /proc/self/exe), which only shows that the guardian got that far.
TuneOptions MarkingOptions() {
  TuneOptions options = Pi5Options();
  options.after_restore = {"tuning_test", "--gtest_filter=-*"};
  return options;
}

TEST(TuningTest, WithAfterRestoreTheGuardianStaysAfterRestoreUntilRelease) {
  FakeTree tree = Pi5Tree();
  const auto before = Snapshot(tree.path());
  auto tuning = ApplyOrDie(tree.Root(), MarkingOptions());
  ASSERT_TRUE(tuning);
  const pid_t guardian = tuning->guardian_pid();
  ASSERT_TRUE(tuning->Restore());
  EXPECT_EQ(Snapshot(tree.path()), before);
  EXPECT_EQ(tuning->guardian_pid(), guardian) << "still watching, marking only";
  EXPECT_FALSE(Gone(guardian));
  tuning->Release();
  EXPECT_EQ(tuning->guardian_pid(), 0);
  EXPECT_TRUE(Gone(guardian)) << "Release() waits for the guardian";
  tuning->Release();  // idempotent
}

TEST(TuningTest, AGuardianHandedOverWritesNothingBackWhenRtpulseDiesBeforeRelease) {
  // rtpulse restored the files itself; whatever they hold afterwards is not the guardian's to
  // change (here: a later value the test writes, as another program might).
  Subreaper subreaper;
  if (!subreaper.ok())
    GTEST_SKIP() << "PR_SET_CHILD_SUBREAPER unavailable: " << std::strerror(errno);
  FakeTree tree = Pi5Tree();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto tuning = Tuning::Apply(tree.Root(), MarkingOptions());
    const pid_t guardian = tuning && (*tuning)->Restore() ? (*tuning)->guardian_pid() : -1;
    if (write(fds[1], &guardian, sizeof(guardian)) != sizeof(guardian)) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  pid_t guardian = -1;
  ASSERT_EQ(read(fds[0], &guardian, sizeof(guardian)), static_cast<ssize_t>(sizeof(guardian)));
  close(fds[0]);
  ASSERT_GT(guardian, 0);
  EXPECT_EQ(In(tree, kRtRuntime), "950000\n") << "restored by the process itself";
  tree.Write(kRtRuntime, "123\n");
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
  ASSERT_TRUE(WaitExit(guardian, std::chrono::seconds(10))) << "the guardian ends after it";
  EXPECT_EQ(In(tree, kRtRuntime), "123\n") << "the guardian wrote nothing back";
}

TEST(TuningTest, AForkedChildDoesNotRestore) {
  FakeTree tree = Pi5Tree();
  auto tuning = ApplyOrDie(tree.Root(), Pi5Options());
  ASSERT_TRUE(tuning);
  const pid_t child = fork();
  if (child == 0) {
    const bool ok = static_cast<bool>(tuning->Restore());
    tuning.reset();  // the destructor, too
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(In(tree, kRtRuntime), "-1\n");
  EXPECT_FALSE(Gone(tuning->guardian_pid()));
  ASSERT_TRUE(tuning->Restore());
  EXPECT_EQ(In(tree, kRtRuntime), "950000\n");
}

}  // namespace
}  // namespace rtpulse::sys
