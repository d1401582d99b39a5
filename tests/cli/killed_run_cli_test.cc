// A killed suite run (issue 15): the tuning guardian that outlives a SIGKILLed rtpulse restores
// the tunings and marks result.json killed; readers read a stale 'running' as killed and say
// so. Real processes, a real SIGKILL, the real /proc/sys/kernel/sched_rt_runtime_us.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "support/subprocess.h"

namespace rtpulse {
namespace {

using nlohmann::json;
using testutil::ProcessOptions;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

std::string KilledRtRuntime() {
  return ReadFile("/proc/sys/kernel/sched_rt_runtime_us");
}

/// Waits up to 10 s for every process carrying `marker` (rtpulse, its loads, the guardian and
/// the rtpulse the guardian runs to mark the result) to be gone; returns what is left.
std::set<int> KilledLeftovers(const std::string& marker) {
  std::set<int> left;
  for (int i = 0; i < 1000; ++i) {
    left = testutil::MarkedProcesses(marker);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return left;
}

void WriteJsonFile(const std::string& path, const json& j) {
  std::ofstream(path) << j.dump(1) << "\n";
}

/// The pid of a process that has just exited (and was reaped): no process has it now, unless
/// the kernel hands it out again within the test (then only the start-time check could tell).
int DeadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

std::string IsoUtc(std::chrono::system_clock::time_point t) {
  const time_t secs = std::chrono::system_clock::to_time_t(t);
  tm utc{};
  gmtime_r(&secs, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

TEST(KilledRunTest, GuardianRestoresAndMarksTheResultKilledAndReportSaysSo) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for --tune and SCHED_FIFO";
  const std::string before = KilledRtRuntime();
  ASSERT_NE(before, "-1\n") << "RT throttling already off: the test could not see a change";
  TempDir dir;
  const std::string marker = "RTPULSE_KILLED_TEST_MARK=" + std::to_string(::getpid());
  ProcessOptions options;
  options.extra_env = {marker};
  // SIGKILL once a checkpoint shows the tunings in force and the scenario measuring (a fixed
  // delay could land in the pre-flight, before anything is tuned, on this loaded machine).
  std::atomic<bool> done{false};
  std::atomic<int> killed_pid{0};
  std::thread killer([&] {
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream in(dir.File("run/result.json"));
      if (!in) continue;
      json j = json::parse(in, nullptr, false);
      if (j.is_discarded() || j["tuning"].empty() || j["scenarios"].empty()) continue;
      json& s = j["scenarios"][0];
      if (s["status"] != "measuring" || !s["latency"].is_object()) continue;
      killed_pid.store(j["writer"]["pid"].get<int>());
      ::kill(killed_pid.load(), SIGKILL);
      return;
    }
  });
  const auto r = RunRtpulse(
      {"suite", "--tune", "--no-rt-throttling", "--scenarios", "idle", "--cpus", "1", "--duration",
       "60s", "--settle", "0", "--checkpoint-interval", "1s", "-q", "--out", dir.File("run")},
      options);
  done.store(true);
  killer.join();
  ASSERT_NE(killed_pid.load(), 0) << "never saw a checkpoint: " << r.err;
  ASSERT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  EXPECT_TRUE(KilledLeftovers(marker).empty()) << "guardian and its marking rtpulse gone";
  EXPECT_EQ(KilledRtRuntime(), before) << "the guardian restored it";

  json result = json::parse(ReadFile(dir.File("run/result.json")));
  EXPECT_EQ(result["status"], "killed") << result.dump(1).substr(0, 2000);
  ASSERT_TRUE(result.contains("killed"));
  EXPECT_EQ(result["killed"]["detected_by"], "tuning guardian");
  EXPECT_EQ(result["killed"]["pid"], killed_pid.load()) << "the killed rtpulse";
  EXPECT_EQ(result["writer"]["pid"], killed_pid.load());
  EXPECT_EQ(result["updated_time"], result["killed"]["time"]);
  EXPECT_FALSE(result["killed"]["time"].get<std::string>().empty());
  bool found = false;
  size_t applied = 0;
  for (auto& c : result["tuning"]) {
    if (c["status"] != "applied") continue;
    ++applied;
    // Every applied tuning was restored by the guardian (the main process never got to it).
    EXPECT_TRUE(c["restored"].get<bool>()) << c.dump();
    EXPECT_EQ(c["restored_by"], "guardian") << c.dump();
    EXPECT_EQ(c["restored_time"], result["killed"]["time"]) << c.dump();
    if (c["path"] == "/proc/sys/kernel/sched_rt_runtime_us") {
      found = true;
      EXPECT_EQ(c["after"], "-1");
      EXPECT_EQ(c["before"].get<std::string>() + "\n", before);
    }
  }
  EXPECT_TRUE(found) << result["tuning"].dump();
  EXPECT_EQ(result["killed"]["tuning_restored"].get<size_t>(), applied);
  EXPECT_EQ(result["killed"]["tuning_not_restored"].get<size_t>(), 0u);
  // The scenario holds the last checkpoint.
  ASSERT_EQ(result["scenarios"].size(), 1u);
  EXPECT_EQ(result["scenarios"][0]["status"], "measuring");

  const auto report = RunRtpulse({"report", dir.File("run"), "--formats", "svg"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.err.find("the run was killed (its tuning guardian marked it at " +
                            result["killed"]["time"].get<std::string>()),
            std::string::npos)
      << report.err;
  const std::string html = ReadFile(dir.File("run/report/index.html"));
  EXPECT_NE(html.find("killed"), std::string::npos);
  EXPECT_EQ(html.find(">running<"), std::string::npos) << "never presented as running";
}

class StaleRunningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("values.txt")) << "10\n12\n11\n30\n9\n";
    const auto r = RunRtpulse({"import", dir_.File("values.txt"), "--format", "values", "--unit",
                               "us", "--no-samples", "--out", dir_.File("run")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    result_ = json::parse(ReadFile(dir_.File("run/result.json")));
    ASSERT_EQ(result_["status"], "complete");
  }
  /// Writes result_ with the given status changes and runs `report` on it.
  testutil::ProcessResult ReportOn(const json& changes) {
    json forged = result_;
    forged.merge_patch(changes);
    WriteJsonFile(dir_.File("run/result.json"), forged);
    return RunRtpulse({"report", dir_.File("run"), "--formats", "svg"});
  }
  TempDir dir_;
  json result_;
};

TEST_F(StaleRunningTest, DeadWriterIsReadAsKilled) {
  const int pid = DeadPid();
  const std::string old = IsoUtc(std::chrono::system_clock::now() - std::chrono::hours(2));
  const auto r = ReportOn(
      {{"status", "running"}, {"updated_time", old}, {"writer", {{"pid", pid}, {"boot_id", ""}}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the run was killed (stale 'running': no process " + std::to_string(pid) +
                       " is alive; last checkpoint " + old + ")"),
            std::string::npos)
      << r.err;
  const std::string html = ReadFile(dir_.File("run/report/index.html"));
  EXPECT_NE(html.find("killed"), std::string::npos);
  EXPECT_EQ(html.find(">running<"), std::string::npos);
}

TEST_F(StaleRunningTest, ReusedPidIsReadAsKilled) {
  // This test's own pid is alive, but not with the recorded start time: another process.
  const auto r = ReportOn({{"status", "running"},
                           {"updated_time", IsoUtc(std::chrono::system_clock::now())},
                           {"writer", {{"pid", ::getpid()}, {"start_ticks", 1}}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("stale 'running': process " + std::to_string(::getpid()) + " is gone"),
            std::string::npos)
      << r.err;
}

TEST_F(StaleRunningTest, LiveWriterStaysRunning) {
  // The parent of the report process (this test) is alive with its real start time: running.
  std::string stat = ReadFile("/proc/self/stat");
  stat = stat.substr(stat.rfind(')') + 2);
  std::istringstream fields(stat);
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;
  const auto r = ReportOn({{"status", "running"},
                           {"updated_time", IsoUtc(std::chrono::system_clock::now())},
                           {"writer", {{"pid", ::getpid()}, {"start_ticks", std::stoull(field)}}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("was killed"), std::string::npos) << r.err;
}

TEST_F(StaleRunningTest, WithoutWriterAnOldCheckpointIsKilledAndARecentOneIsNot) {
  // An older result.json has no writer: judged by age against the checkpoint interval (10 s),
  // the longest settle and 60 s of margin.
  json no_writer = result_;
  no_writer.erase("writer");
  result_ = no_writer;
  const std::string old = IsoUtc(std::chrono::system_clock::now() - std::chrono::minutes(5));
  auto r = ReportOn(
      {{"status", "running"}, {"updated_time", old}, {"config", {{"checkpoint_interval_s", 10}}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the run was killed (stale 'running': last checkpoint " + old),
            std::string::npos)
      << r.err;
  r = ReportOn(
      {{"status", "running"},
       {"updated_time", IsoUtc(std::chrono::system_clock::now() - std::chrono::seconds(20))},
       {"config", {{"checkpoint_interval_s", 10}}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("was killed"), std::string::npos) << "within 10 s + 60 s: " << r.err;
}

}  // namespace
}  // namespace rtpulse
