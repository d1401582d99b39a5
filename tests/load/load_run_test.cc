// Runs every load for about a second through the binary, and proves that no way of ending
// `rtpulse load` (duration, SIGINT, SIGTERM, SIGKILL) leaves a worker behind.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "load/registry.h"
#include "load/spec.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using namespace std::chrono_literals;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

struct ProcInfo {
  int pid = 0;
  int ppid = 0;
  int pgrp = 0;
};

std::vector<ProcInfo> AllProcesses() {
  std::vector<ProcInfo> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string stat = ReadFile(std::string("/proc/") + e->d_name + "/stat");
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));
    std::string state;
    ProcInfo p;
    p.pid = std::stoi(e->d_name);
    fields >> state >> p.ppid >> p.pgrp;
    out.push_back(p);
  }
  closedir(dir);
  return out;
}

/// Process groups of the children of `pid` (the load groups).
std::set<int> ChildGroups(int pid) {
  std::set<int> groups;
  for (const auto& p : AllProcesses()) {
    if (p.ppid == pid) groups.insert(p.pgrp);
  }
  return groups;
}

size_t CountInGroups(const std::set<int>& groups) {
  size_t n = 0;
  for (const auto& p : AllProcesses()) n += groups.count(p.pgrp);
  return n;
}

/// rtpulse started in its own process group, output in files; killed if the test leaves.
class Spawned {
 public:
  explicit Spawned(const std::vector<std::string>& args) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      const int out = open(dir_.File("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open(dir_.File("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      std::vector<std::string> argv{RTPULSE_BINARY};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    setpgid(pid_, pid_);
  }
  ~Spawned() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Spawned(const Spawned&) = delete;
  Spawned& operator=(const Spawned&) = delete;

  int pid() const { return pid_; }
  std::string File(const std::string& name) const { return dir_.File(name); }
  std::string Err() const { return ReadFile(dir_.File("err")); }
  std::string Out() const { return ReadFile(dir_.File("out")); }

  /// Waits until the children of rtpulse fill `groups` groups holding `processes` processes.
  std::set<int> WaitForLoads(size_t groups, size_t processes) {
    for (int i = 0; i < 500; ++i) {
      const auto g = ChildGroups(pid_);
      if (g.size() >= groups && CountInGroups(g) >= processes &&
          Err().find("process group") != std::string::npos)
        return g;
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "loads did not start; stderr: " << Err();
    return {};
  }

  /// Exit status (128 + signal when killed), or -1 after 20 s.
  int Wait() {
    for (int i = 0; i < 2000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

 private:
  TempDir dir_;
  int pid_ = -1;
};

/// Processes left in `groups`, waiting a little for init to reap orphans.
size_t Leftovers(const std::set<int>& groups) {
  size_t n = 0;
  for (int i = 0; i < 300; ++i) {
    n = CountInGroups(groups);
    if (n == 0) return 0;
    std::this_thread::sleep_for(10ms);
  }
  return n;
}

bool HaveStressNg() {
  for (const auto& d : load::Loads()) {
    if (std::string(d.name) == "stress-ng") return d.supported().empty();
  }
  return false;
}

int LastCpu() {
  return load::LocalCpuScope().online.back();
}

// --- each built-in load, about one second ---

struct LoadCase {
  const char* spec;  // cpus= is appended.
  bool cpu_bound;
  bool bytes;
};

class EachLoad : public ::testing::TestWithParam<LoadCase> {};

TEST_P(EachLoad, AchievesWorkAndKeepsItsCpuBusy) {
  const LoadCase c = GetParam();
  TempDir dir;
  std::string spec = std::string(c.spec) +
                     (std::string(c.spec).find(':') == std::string::npos ? ":" : ",") +
                     "cpus=" + std::to_string(LastCpu());
  if (std::string(c.spec) == "io") spec += ",dir=" + dir.path();
  const auto r = RunRtpulse({"load", spec, "-D", "1", "--json", dir.File("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  ASSERT_EQ(j["loads"].size(), 1u);
  const auto& l = j["loads"][0];
  EXPECT_GT(l["ops"].get<uint64_t>(), 0u);
  EXPECT_GT(l["ops_per_second"].get<double>(), 0);
  EXPECT_NEAR(l["seconds"].get<double>(), 1.0, 0.5);
  if (c.bytes) {
    EXPECT_GT(l["mb_per_second"].get<double>(), 0);
  } else {
    EXPECT_EQ(l["mb_per_second"].get<double>(), 0);
  }
  ASSERT_EQ(l["cpu_use"].size(), 1u);
  EXPECT_EQ(l["cpu_use"][0]["cpu"].get<int>(), LastCpu());
  // A CPU-bound load at intensity 100 owns its CPU; io waits on the disk, but still runs.
  EXPECT_GT(l["cpu_use"][0]["busy_percent"].get<double>(), c.cpu_bound ? 50.0 : 1.0);
  EXPECT_NE(r.out.find(l["load"].get<std::string>()), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Builtins, EachLoad,
    ::testing::Values(LoadCase{"cpu", true, false}, LoadCase{"memory:mb=64", true, true},
                      LoadCase{"cache", true, false}, LoadCase{"io", false, true},
                      LoadCase{"switch", true, false}, LoadCase{"net:proto=udp", true, true},
                      LoadCase{"net:proto=tcp", true, true}),
    [](const ::testing::TestParamInfo<LoadCase>& param_info) {
      std::string name;
      for (const char ch : std::string(param_info.param.spec)) {
        if (std::isalnum(static_cast<unsigned char>(ch)) != 0) name += ch;
      }
      return name;
    });

TEST(LoadRun, IntensityIsADutyCycle) {
  TempDir dir;
  const std::string cpu = std::to_string(LastCpu());
  const auto r =
      RunRtpulse({"load", "cpu:intensity=30,cpus=" + cpu, "-D", "2", "--json", dir.File("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  const auto full =
      RunRtpulse({"load", "cpu:cpus=" + cpu, "-D", "2", "--json", dir.File("f.json")});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const auto f = nlohmann::json::parse(ReadFile(dir.File("f.json")));
  // 30% of each 10 ms slice: clearly fewer loops than at 100%.
  EXPECT_LT(j["loads"][0]["ops_per_second"].get<double>(),
            0.6 * f["loads"][0]["ops_per_second"].get<double>());
}

// --- ending the run ---

void ExpectSignalEndsCleanly(int sig) {
  TempDir dir;
  Spawned q({"load", "cpu:cpus=0,intensity=20", "net", "-D", "0", "--json", dir.File("r.json")});
  const auto groups = q.WaitForLoads(2, 2);
  ASSERT_FALSE(groups.empty());
  std::this_thread::sleep_for(300ms);
  kill(q.pid(), sig);
  EXPECT_EQ(q.Wait(), 130) << q.Err();
  EXPECT_EQ(Leftovers(groups), 0u);
  EXPECT_TRUE(ChildGroups(q.pid()).empty());
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  EXPECT_TRUE(j["interrupted"].get<bool>());
  EXPECT_GT(j["loads"][1]["ops"].get<uint64_t>(), 0u);
  EXPECT_NE(q.Out().find("net"), std::string::npos) << q.Out();
}

TEST(LoadRun, SigtermStopsEveryWorkerAndReports) {
  ExpectSignalEndsCleanly(SIGTERM);
}
TEST(LoadRun, SigintStopsEveryWorkerAndReports) {
  ExpectSignalEndsCleanly(SIGINT);
}

TEST(LoadRun, DurationEndLeavesNoWorker) {
  Spawned p({"load", "cpu", "io:dir=/tmp", "-D", "1"});
  const auto groups = p.WaitForLoads(2, 2);
  EXPECT_EQ(p.Wait(), 0) << p.Err();
  EXPECT_EQ(Leftovers(groups), 0u);
}

TEST(LoadRun, SigkillOfRtpulseStillKillsTheWorkers) {
  Spawned p({"load", "cpu", "switch", "-D", "0"});
  const auto groups = p.WaitForLoads(2, 2);
  ASSERT_FALSE(groups.empty());
  ASSERT_GT(CountInGroups(groups), 0u);
  kill(p.pid(), SIGKILL);
  EXPECT_EQ(p.Wait(), 128 + SIGKILL);
  EXPECT_EQ(Leftovers(groups), 0u) << "PR_SET_PDEATHSIG did not kill the workers";
}

// --- stress-ng ---

TEST(StressNgBackend, PassesArgumentsThrough) {
  if (!HaveStressNg()) GTEST_SKIP() << "stress-ng is not installed";
  TempDir dir;
  // --cpu-ops ends stress-ng after about that many bogo ops (it may finish a round), where
  // 3 s unbounded would be hundreds: only a pass-through can do it.
  const auto r = RunRtpulse(
      {"load", "stress-ng:--cpu 1 --cpu-ops 40", "-D", "3", "--json", dir.File("r.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(dir.File("r.json")));
  EXPECT_GE(j["loads"][0]["ops"].get<uint64_t>(), 40u) << r.out;
  EXPECT_LT(j["loads"][0]["ops"].get<uint64_t>(), 60u) << r.out;
  EXPECT_GT(j["loads"][0]["ops_per_second"].get<double>(), 0);
}

TEST(StressNgBackend, BadArgumentsFailBeforeTheRun) {
  if (!HaveStressNg()) GTEST_SKIP() << "stress-ng is not installed";
  const auto r = RunRtpulse({"load", "stress-ng:--no-such-stressor 1", "-D", "1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("rtpulse: error: stress-ng"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

void ExpectStressNgKilledAsGroup(int sig, int expected_exit) {
  Spawned p({"load", "stress-ng:--cpu 2 --switch 1", "-D", "0"});
  // stress-ng itself plus at least three stressors, in one group.
  const auto groups = p.WaitForLoads(1, 4);
  ASSERT_FALSE(groups.empty());
  kill(p.pid(), sig);
  EXPECT_EQ(p.Wait(), expected_exit) << p.Err();
  EXPECT_EQ(Leftovers(groups), 0u);
}

TEST(StressNgBackend, SigtermKillsTheWholeGroup) {
  if (!HaveStressNg()) GTEST_SKIP() << "stress-ng is not installed";
  ExpectStressNgKilledAsGroup(SIGTERM, 130);
}

TEST(StressNgBackend, SigkillOfRtpulseKillsTheWholeGroup) {
  if (!HaveStressNg()) GTEST_SKIP() << "stress-ng is not installed";
  ExpectStressNgKilledAsGroup(SIGKILL, 128 + SIGKILL);
}

}  // namespace
}  // namespace rtpulse
