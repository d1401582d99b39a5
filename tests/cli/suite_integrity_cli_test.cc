// Scenario integrity and the cmd load in a real suite run: the real binary, real SCHED_FIFO
// probes, a real busy loop started by the test beside an idle scenario. The busy share the
// suite reports is checked against its own raw ticks (a python3 script) and against the
// test's own /proc/stat reading over the run; latency values are never asserted.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace rtpulse {
namespace {

using nlohmann::json;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

/// Percentage points the suite's busy share may differ from the test's own reading: the
/// test's window also holds rtpulse's start, pre-flight and wind-down (about a second beside
/// the 3 s measured), and the VM's other work comes and goes.
constexpr double kTolerancePoints = 20.0;

std::vector<int> IntegrityOnlineCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (size_t c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

/// Independent of rtpulse: busy and total-minus-steal ticks of `cpus` from /proc/stat.
std::pair<uint64_t, uint64_t> IntegrityProcStat(const std::vector<int>& cpus) {
  std::istringstream lines(ReadFile("/proc/stat"));
  uint64_t busy = 0;
  uint64_t ran = 0;
  for (std::string line; std::getline(lines, line);) {
    int cpu = -1;
    unsigned long long v[8] = {};
    if (std::sscanf(line.c_str(), "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0],
                    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 9) {
      continue;
    }
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    uint64_t total = 0;
    for (const auto x : v) total += x;
    ran += total - v[7];
    busy += total - v[3] - v[4] - v[7];
  }
  return {busy, ran};
}

/// A shell busy loop pinned on `cpu`, started by the test (not by rtpulse).
pid_t StartBusyLoop(int cpu) {
  const pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<size_t>(cpu), &set);
    sched_setaffinity(0, sizeof set, &set);
    execl("/bin/sh", "sh", "-c", "while :; do :; done", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

/// The python3 check of the suite's arithmetic over its own raw ticks: prints the busy share.
double PythonOtherPercent(const std::string& result_path, const std::string& scenario) {
  const std::string script =
      "import json,sys\n"
      "r=json.load(open(sys.argv[1]))\n"
      "b=[s for s in r['scenarios'] if s['name']==sys.argv[2]][0]['cpu_busy']\n"
      "print(100.0*max(0,b['busy_ticks']-b['own_ticks'])/b['ticks'])\n";
  TempDir dir;
  std::ofstream(dir.File("check.py")) << script;
  const std::string cmd =
      "python3 " + dir.File("check.py") + " " + result_path + " " + scenario + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buffer[256] = {};
  const size_t n = fread(buffer, 1, sizeof buffer - 1, p);
  pclose(p);
  return std::atof(std::string(buffer, n).c_str());
}

struct IntegrityRun {
  testutil::ProcessResult process;
  json result;
  double test_busy_percent = 0;  ///< The test's own /proc/stat reading over the run.
  std::string out;
};

IntegrityRun RunIdleSuite(const TempDir& dir, const std::vector<int>& cpus,
                          const std::string& extra_scenarios = "") {
  std::ofstream(dir.File("suite.toml")) << "name = \"integrity\"\n"
                                           "duration = \"3s\"\n"
                                           "settle = \"0s\"\n"
                                           "monitor_interval = \"1s\"\n"
                                           "[[scenario]]\n"
                                           "name = \"idle\"\n"
                                        << extra_scenarios;
  IntegrityRun run;
  run.out = dir.File("run");
  const auto before = IntegrityProcStat(cpus);
  run.process = RunRtpulse({"suite", "--config", dir.File("suite.toml"), "--out", run.out, "-q"});
  const auto after = IntegrityProcStat(cpus);
  run.test_busy_percent = 100.0 * static_cast<double>(after.first - before.first) /
                          static_cast<double>(after.second - before.second);
  if (run.process.exit_code == 0) run.result = json::parse(ReadFile(run.out + "/result.json"));
  return run;
}

/// The integrity warning of `scenario`, or "".
std::string IntegrityWarning(const json& scenario) {
  for (const auto& w : scenario["warnings"]) {
    const std::string text = w.get<std::string>();
    if (text.rfind("scenario integrity:", 0) == 0) return text;
  }
  return "";
}

class SuiteIntegrityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO and mlockall";
    cpus_ = IntegrityOnlineCpus();
    ASSERT_FALSE(cpus_.empty());
  }
  std::vector<int> cpus_;
};

TEST_F(SuiteIntegrityTest, IdleBesideABusyLoopIsWarnedWithTheMeasuredShare) {
  TempDir dir;
  const pid_t loop = StartBusyLoop(cpus_.back());
  ASSERT_GT(loop, 0);
  IntegrityRun run = RunIdleSuite(dir, cpus_);
  kill(loop, SIGKILL);
  waitpid(loop, nullptr, 0);
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  const json& idle = run.result["scenarios"][0];
  const json& busy = idle["cpu_busy"];
  ASSERT_TRUE(busy.is_object()) << idle.dump(1);
  const double reported = busy["other_busy_percent"].get<double>();
  // The suite's arithmetic, redone over its raw ticks.
  EXPECT_NEAR(PythonOtherPercent(run.out + "/result.json", "idle"), reported, 0.01);
  // Ground truth: one of the measured CPUs spun the whole time.
  const double one_cpu = 100.0 / static_cast<double>(cpus_.size());
  EXPECT_GE(reported, one_cpu - 15) << busy.dump();
  EXPECT_NEAR(reported, run.test_busy_percent, kTolerancePoints) << busy.dump();
  const std::string warning = IntegrityWarning(idle);
  const std::string number = std::to_string(static_cast<int>(std::lround(reported)));
  EXPECT_NE(warning.find("idle scenario was not idle: " + number + "% CPU busy from other work"),
            std::string::npos)
      << warning << " / " << reported;
  EXPECT_NE(warning.find("(threshold 10%)"), std::string::npos) << warning;
  // Beside the numbers in the summary, and on the terminal.
  EXPECT_NE(ReadFile(run.out + "/statistical_summary.txt").find("idle: " + warning),
            std::string::npos);
  EXPECT_NE(run.process.out.find("idle scenario was not idle"), std::string::npos)
      << run.process.out;
}

TEST_F(SuiteIntegrityTest, QuietIdleIsWarnedExactlyWhenItsMeasuredShareIsAboveTheThreshold) {
  TempDir dir;
  IntegrityRun run = RunIdleSuite(dir, cpus_);
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  const json& idle = run.result["scenarios"][0];
  const double reported = idle["cpu_busy"]["other_busy_percent"].get<double>();
  EXPECT_NEAR(PythonOtherPercent(run.out + "/result.json", "idle"), reported, 0.01);
  // The VM's noise may exceed 10 %: the warning must follow the number, and the number the
  // independent reading.
  EXPECT_NEAR(reported, run.test_busy_percent, kTolerancePoints);
  EXPECT_EQ(!IntegrityWarning(idle).empty(), reported > 10.0) << reported;
}

TEST_F(SuiteIntegrityTest, CommandLoadsRunPlacedLoggedAndAFailedOneIsRecorded) {
  TempDir dir;
  const int cpu = cpus_.back();
  IntegrityRun run = RunIdleSuite(
      dir, cpus_,
      "[[scenario]]\n"
      "name = \"mine\"\n"
      "loads = [{ command = [\"sh\", \"-c\", \"echo started; exit 3\"] },\n"
      "         { command = [\"sh\", \"-c\", \"grep Cpus_allowed_list /proc/self/status; "
      "while :; do :; done\"], cpus = \"" +
          std::to_string(cpu) + "\" }]\n");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  const json& mine = run.result["scenarios"][1];
  EXPECT_EQ(mine["status"], "complete") << "a failed load leaves valid partial results";
  ASSERT_EQ(mine["load_reports"].size(), 2u);
  const json& failed = mine["load_reports"][0];
  ASSERT_EQ(failed["processes"].size(), 1u);
  EXPECT_EQ(failed["processes"][0]["early"], true);
  EXPECT_EQ(failed["processes"][0]["exit_status"], 3);
  EXPECT_TRUE(failed["ops_per_second"].is_null()) << "a command's rate is not known";
  EXPECT_EQ(failed["log"], "mine/load-1-cmd.log");
  EXPECT_EQ(ReadFile(run.out + "/mine/load-1-cmd.log"), "started\n");
  const json& spinner = mine["load_reports"][1];
  EXPECT_EQ(spinner["cpus"], std::to_string(cpu));
  EXPECT_EQ(spinner["processes"][0]["early"], false);
  EXPECT_EQ(spinner["processes"][0]["signal"], SIGTERM);
  EXPECT_EQ(ReadFile(run.out + "/mine/load-2-cmd.log"),
            "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
  bool named = false;
  for (const auto& w : mine["warnings"]) {
    named |=
        w.get<std::string>().find("command 'sh -c echo started; exit 3'") != std::string::npos &&
        w.get<std::string>().find("exit status 3") != std::string::npos;
  }
  EXPECT_TRUE(named) << mine["warnings"].dump(1);
  // What a command should keep busy is not known: not checked, and said so.
  EXPECT_TRUE(mine["cpu_busy"]["intended_busy_cpus"].is_null());
}

}  // namespace
}  // namespace rtpulse
