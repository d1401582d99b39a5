// The cmd load with real programs: a shell busy loop placed on one CPU, a program that exits
// with 3, one that ignores SIGTERM, one that cannot start, a missing one; and `rtpulse load`
// interrupted with SIGINT leaves none of them behind.
#include <dirent.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/parse.h"
#include "load/load_set.h"
#include "load/spec.h"
#include "support/subprocess.h"

namespace rtpulse {
namespace {

using namespace std::chrono_literals;
using testutil::ReadFile;
using testutil::TempDir;

/// Live (non-zombie) members of process group `pgid`, from /proc/PID/stat.
std::vector<int> CmdGroupMembers(int pgid) {
  std::vector<int> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string stat = ReadFile(std::string("/proc/") + e->d_name + "/stat");
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));
    std::string state;
    int ppid = 0;
    int pgrp = 0;
    fields >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != "Z") out.push_back(std::stoi(e->d_name));
  }
  closedir(dir);
  return out;
}

std::string StatusField(int pid, const std::string& key) {
  std::istringstream lines(ReadFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key + ":", 0) == 0) {
      return std::string(TrimBlanks(std::string_view(line).substr(key.size() + 1)));
    }
  }
  return "";
}

load::LoadSpec MustParse(const std::string& text) {
  auto spec = load::ParseLoadSpec(text);
  EXPECT_TRUE(spec.has_value()) << (spec ? "" : spec.error().message);
  return spec ? *spec : load::LoadSpec{};
}

int LastOnlineCpu() {
  return load::LocalCpuScope().allowed.empty() ? load::LocalCpuScope().online.back()
                                               : load::LocalCpuScope().allowed.back();
}

TEST(CommandLoad, SpecSplitsOnBlanksAndShellGivesTheRestToSh) {
  auto plain = MustParse("cmd:instances=2 python3 -c pass");
  EXPECT_EQ(plain.params.args, (std::vector<std::string>{"python3", "-c", "pass"}));
  EXPECT_EQ(plain.params.Option("instances", ""), "2");
  auto shell = MustParse("cmd:shell=1 while :; do  :; done");
  EXPECT_EQ(shell.params.args, (std::vector<std::string>{"/bin/sh", "-c", "while :; do  :; done"}));
  // The command takes the rest of its argument, '+' included.
  auto specs = load::ParseLoadSpecs({"cpu:cpus=0+cmd:shell=1 echo $((1+2))"});
  ASSERT_TRUE(specs) << specs.error().message;
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[1].params.args.back(), "echo $((1+2))");
  auto listed = load::CommandLoadSpec({"sh", "-c", "sleep 1"}, {"cpus=0"}, load::LocalCpuScope());
  ASSERT_TRUE(listed) << listed.error().message;
  EXPECT_EQ(listed->text, "cmd:cpus=0 sh -c \"sleep 1\"");
  EXPECT_EQ(listed->params.cpus, std::vector<int>{0});
}

TEST(CommandLoad, BadCommandsAreUsageErrorsNamingTheValue) {
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"cmd:no-such-program-rtpulse-test --x",
            "program 'no-such-program-rtpulse-test' not "
            "found in PATH"},
           {"cmd:cpus=0", "no command given"},
           {"cmd:instances=0 true", "instances=0 is not valid"},
           {"cmd:grace=5 true", "grace=5 is not valid"},
           {"cmd:intensity=50 true", "intensity= does not apply"},
           {"cmd:shell=yes true", "shell=yes is not valid"},
           {"cmd:instance=2 true", "Did you mean 'instances'?"}}) {
    auto spec = load::ParseLoadSpec(text);
    ASSERT_FALSE(spec) << text;
    EXPECT_EQ(spec.error().code, ExitCode::kUsage) << text;
    EXPECT_NE(spec.error().message.find(says), std::string::npos) << spec.error().message;
  }
}

TEST(CommandLoad, InstancesRunPlacedOnTheirCpusAndStopOnSigterm) {
  const int cpu = LastOnlineCpu();
  load::LoadSet loads(
      {MustParse(fmt::format("cmd:cpus={},instances=2,shell=1 while :; do :; done", cpu))});
  ASSERT_TRUE(loads.Start());
  const int pgid = loads.loads()[0]->ProcessGroup();
  ASSERT_GT(pgid, 0);
  std::this_thread::sleep_for(200ms);
  const std::vector<int> members = CmdGroupMembers(pgid);
  ASSERT_EQ(members.size(), 2u);
  std::set<std::string> instances;
  for (const int pid : members) {
    EXPECT_EQ(StatusField(pid, "Cpus_allowed_list"), std::to_string(cpu)) << pid;
    std::ifstream env("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    for (std::string var; std::getline(env, var, '\0');) {
      if (var.rfind("RTPULSE_LOAD_INSTANCE=", 0) == 0) instances.insert(var);
    }
  }
  EXPECT_EQ(instances,
            (std::set<std::string>{"RTPULSE_LOAD_INSTANCE=0", "RTPULSE_LOAD_INSTANCE=1"}));
  loads.Stop();
  EXPECT_TRUE(CmdGroupMembers(pgid).empty());
  const auto reports = loads.Reports();
  ASSERT_EQ(reports[0].processes.size(), 2u);
  for (const auto& p : reports[0].processes) {
    EXPECT_FALSE(p.early);
    EXPECT_FALSE(p.killed);
    EXPECT_EQ(p.signal, SIGTERM);
    EXPECT_EQ(p.exit_status, -1);
  }
  EXPECT_TRUE(reports[0].warnings.empty());
  EXPECT_EQ(reports[0].ops_unit, "");  // not counted: no rate is claimed
  const std::string table = load::FormatReportTable(reports);
  EXPECT_NE(table.find("killed by signal 15"), std::string::npos) << table;
}

TEST(CommandLoad, AnEarlyExitIsAFailedLoadWithItsStatusAndOutputInTheLog) {
  TempDir dir;
  auto spec = MustParse("cmd:shell=1 echo to-stdout; echo to-stderr >&2; exit 3");
  spec.params.log_path = dir.File("cmd.log");
  load::LoadSet loads({spec});
  ASSERT_TRUE(loads.Start());
  std::this_thread::sleep_for(300ms);
  loads.Stop();
  const auto r = loads.Reports()[0];
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_TRUE(r.processes[0].early);
  EXPECT_EQ(r.processes[0].exit_status, 3);
  EXPECT_EQ(r.processes[0].signal, 0);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("command '/bin/sh -c echo to-stdout; echo to-stderr >&2; exit 3'"),
            std::string::npos)
      << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("ended before it was stopped: exit status 3"), std::string::npos)
      << r.warnings[0];
  EXPECT_EQ(ReadFile(dir.File("cmd.log")), "to-stdout\nto-stderr\n");
  EXPECT_EQ(r.log_path, dir.File("cmd.log"));
}

TEST(CommandLoad, EachInstanceIsRecordedOnItsOwn) {
  // Instance 1 of 3 fails at once; the other two run until stopped.
  load::LoadSet loads({MustParse(
      "cmd:instances=3,shell=1 [ \"$RTPULSE_LOAD_INSTANCE\" = 1 ] && exit 5; while :; do sleep "
      "0.05; done")});
  ASSERT_TRUE(loads.Start());
  std::this_thread::sleep_for(300ms);
  loads.Stop();
  const auto r = loads.Reports()[0];
  ASSERT_EQ(r.processes.size(), 3u);
  std::set<int> stopped;
  for (const auto& p : r.processes) {
    if (p.instance == 1) {
      EXPECT_TRUE(p.early);
      EXPECT_EQ(p.exit_status, 5);
    } else {
      EXPECT_FALSE(p.early) << p.instance;
      EXPECT_EQ(p.signal, SIGTERM) << p.instance;
      stopped.insert(p.instance);
    }
  }
  EXPECT_EQ(stopped, (std::set<int>{0, 2}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("(instance 1, pid "), std::string::npos) << r.warnings[0];
}

TEST(CommandLoad, OneThatIgnoresSigtermIsKilledAfterTheGrace) {
  // The shell and its sleep ignore SIGTERM (an ignored signal stays ignored across exec).
  auto spec = load::CommandLoadSpec({"sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"},
                                    {"grace=300ms"}, load::LocalCpuScope());
  ASSERT_TRUE(spec) << spec.error().message;
  load::LoadSet loads({*spec});
  ASSERT_TRUE(loads.Start());
  const int pgid = loads.loads()[0]->ProcessGroup();
  std::this_thread::sleep_for(200ms);
  const auto t0 = std::chrono::steady_clock::now();
  loads.Stop();
  const auto stop_took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(stop_took, 300ms);
  EXPECT_LT(stop_took, 3s);
  EXPECT_TRUE(CmdGroupMembers(pgid).empty()) << "the sleep child is gone too";
  const auto r = loads.Reports()[0];
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_TRUE(r.processes[0].killed);
  EXPECT_EQ(r.processes[0].signal, SIGKILL);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("did not stop within 0.3 s of SIGTERM: killed"), std::string::npos)
      << r.warnings[0];
}

TEST(CommandLoad, AProgramThatCannotStartFailsTheStartAndLeavesNothing) {
  // A folder passes the PATH check (it is "executable") but exec refuses it.
  load::LoadSet loads({MustParse("cmd:instances=2 /tmp")});
  const Status s = loads.Start();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("cmd '/tmp' (instance 0) did not start: cannot run '/tmp': "
                                   "Permission denied"),
            std::string::npos)
      << s.error().message;
  EXPECT_EQ(loads.loads()[0]->ProcessGroup(), 0);
}

TEST(CommandLoad, SigintToRtpulseLoadLeavesNoProcessBehind) {
  const std::string marker = "RTPULSE_CMD_TEST_MARK=" + std::to_string(getpid());
  testutil::ProcessOptions options;
  options.extra_env = {marker};
  options.signal = SIGINT;
  options.signal_after = 1500ms;
  // A shell with a child of its own: the whole group must go.
  auto r = testutil::RunRtpulse(
      {"load", "cmd:instances=2,shell=1 sleep 100 & while :; do sleep 0.1; done", "--duration",
       "60s", "--json", "/dev/null"},
      options);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.out.find("cmd"), std::string::npos) << r.out;
  std::set<int> left;
  for (int i = 0; i < 100; ++i) {
    left = testutil::MarkedProcesses(marker);
    if (left.empty()) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " marked processes left";
  for (const int pid : left) kill(pid, SIGKILL);
}

}  // namespace
}  // namespace rtpulse
