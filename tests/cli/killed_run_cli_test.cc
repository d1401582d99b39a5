// A killed suite run (issue 15): the tuning guardian that outlives a SIGKILLed rtpulse restores
// the tunings and marks result.json killed; readers read a stale 'running' as killed and say
// so. Real processes, a real SIGKILL, the real /proc/sys/kernel/sched_rt_runtime_us.
#include <fcntl.h>
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
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

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
/// the rtpulse the guardian runs to mark the result) to be gone; returns what is left. The
/// guardians named in `dir`'s journals are waited for by pid first: while one execs the
/// marking rtpulse its environment reads empty, and the marker scan alone would miss it.
std::set<int> KilledLeftovers(const std::string& marker, const std::string& dir = "") {
  std::set<int> left =
      testutil::WaitGone(testutil::JournalGuardians(dir), std::chrono::seconds(10));
  if (!left.empty()) return left;
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
  EXPECT_TRUE(KilledLeftovers(marker, dir.path()).empty())
      << "guardian and its marking rtpulse gone";
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

/// rtpulse started with RTPULSE_TEST_STOP_AT=`point` (core/test_stop.h): it stops itself
/// (SIGSTOP) at that moment, where the test SIGKILLs it.
class StoppedRun {
 public:
  StoppedRun(const std::vector<std::string>& args, const std::string& point,
             const std::string& marker, const std::string& log)
      : log_(log) {
    std::vector<std::string> argv{RTPULSE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0 || ::dup2(fd, STDERR_FILENO) < 0) ::_exit(126);
      ::setenv("RTPULSE_TEST_STOP_AT", point.c_str(), 1);
      const size_t eq = marker.find('=');
      ::setenv(marker.substr(0, eq).c_str(), marker.substr(eq + 1).c_str(), 1);
      std::vector<char*> cargs;
      for (auto& a : argv) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      ::execv(cargs[0], cargs.data());
      ::_exit(127);
    }
  }
  ~StoppedRun() {
    if (!reaped_ && pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  /// Waits (at most 90 s) for the stop; false if the process ended or never got there.
  bool WaitStopped() {
    for (int i = 0; i < 9000; ++i) {
      int status = 0;
      const pid_t got = ::waitpid(pid_, &status, WNOHANG | WUNTRACED);
      if (got == pid_ && WIFSTOPPED(status)) return true;
      if (got == pid_) {
        reaped_ = true;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  /// SIGKILL and reap; true when it died of it.
  bool Kill() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }
  pid_t pid() const { return pid_; }
  std::string Log() const { return ReadFile(log_); }

 private:
  std::string log_;
  pid_t pid_ = -1;
  bool reaped_ = false;
};

/// The applied records of `records` (a `tuning` array); each must say restored by `by`.
size_t ExpectRestoredBy(const json& records, const std::string& by, const std::string& when) {
  size_t applied = 0;
  for (const auto& c : records) {
    if (c["status"] != "applied") continue;
    ++applied;
    EXPECT_TRUE(c["restored"].get<bool>()) << c.dump();
    EXPECT_EQ(c["restored_by"], by) << c.dump();
    EXPECT_EQ(c["restored_time"], when) << c.dump();
  }
  return applied;
}

std::vector<std::string> TunedSuiteArgs(const std::string& out) {
  return {
      "suite",      "--tune", "--no-rt-throttling",    "--scenarios", "idle",     "--cpus", "1",
      "--duration", "1s",     "--checkpoint-interval", "1s",          "--settle", "0",      "-q",
      "--out",      out};
}

TEST(KilledRunTest, KilledAfterItsOwnRestoreBeforeTheFinalWriteIsMarkedRestoredByRtpulse) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for --tune and SCHED_FIFO";
  const std::string before = KilledRtRuntime();
  ASSERT_NE(before, "-1\n") << "RT throttling already off: the test could not see a change";
  TempDir dir;
  const std::string marker = "RTPULSE_KILLED_TEST_MARK=" + std::to_string(::getpid()) + "_own";
  StoppedRun run(TunedSuiteArgs(dir.File("run")), "tunings-restored", marker, dir.File("log"));
  ASSERT_TRUE(run.WaitStopped()) << run.Log();
  // The window: rtpulse has put the settings back, result.json still says otherwise.
  EXPECT_EQ(KilledRtRuntime(), before);
  const json checkpoint = json::parse(ReadFile(dir.File("run/result.json")));
  EXPECT_EQ(checkpoint["status"], "running");
  bool in_window = false;
  for (const auto& c : checkpoint["tuning"]) {
    if (c["status"] == "applied" && !c["restored"].get<bool>()) in_window = true;
  }
  EXPECT_TRUE(in_window) << "the record still shows the tunings in force: "
                         << checkpoint["tuning"].dump();
  const std::set<int> guardians = testutil::JournalGuardians(dir.path());
  ASSERT_EQ(guardians.size(), 1u) << "the guardian still watches (marking only)";
  EXPECT_TRUE(testutil::WaitGone(guardians, std::chrono::milliseconds(0)).size() == 1u);

  ASSERT_TRUE(run.Kill());
  EXPECT_TRUE(KilledLeftovers(marker, dir.path()).empty());
  EXPECT_EQ(KilledRtRuntime(), before);
  const json result = json::parse(ReadFile(dir.File("run/result.json")));
  ASSERT_EQ(result["status"], "killed") << result.dump(1).substr(0, 2000);
  EXPECT_EQ(result["killed"]["pid"], run.pid());
  EXPECT_EQ(result["killed"]["tuning_restored_by"], "rtpulse");
  const size_t applied =
      ExpectRestoredBy(result["tuning"], "rtpulse", result["killed"]["time"].get<std::string>());
  EXPECT_GT(applied, 0u);
  EXPECT_EQ(result["killed"]["tuning_restored"].get<size_t>(), applied);
  EXPECT_EQ(result["killed"]["tuning_not_restored"].get<size_t>(), 0u);
  EXPECT_NE(run.Log().find("ended after restoring its tunings itself"), std::string::npos)
      << run.Log();
  const auto report = RunRtpulse({"report", dir.File("run"), "--formats", "svg"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.err.find("restored by rtpulse itself before it died"), std::string::npos)
      << report.err;
}

TEST(KilledRunTest, KilledAfterTheFinalWriteKeepsTheFinalResult) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for --tune and SCHED_FIFO";
  const std::string before = KilledRtRuntime();
  TempDir dir;
  const std::string marker = "RTPULSE_KILLED_TEST_MARK=" + std::to_string(::getpid()) + "_final";
  StoppedRun run(TunedSuiteArgs(dir.File("run")), "final-written", marker, dir.File("log"));
  ASSERT_TRUE(run.WaitStopped()) << run.Log();
  const std::string final_text = ReadFile(dir.File("run/result.json"));
  EXPECT_EQ(json::parse(final_text)["status"], "complete");
  ASSERT_EQ(testutil::JournalGuardians(dir.path()).size(), 1u) << "not yet let go";
  ASSERT_TRUE(run.Kill());
  EXPECT_TRUE(KilledLeftovers(marker, dir.path()).empty());
  EXPECT_EQ(KilledRtRuntime(), before);
  EXPECT_EQ(ReadFile(dir.File("run/result.json")), final_text) << "the guardian left it alone";
  EXPECT_NE(run.Log().find("(the run ended itself): left alone"), std::string::npos) << run.Log();
}

/// --tune-ab on this machine: RT throttling is the knob every Linux has.
std::vector<std::string> TuneAbArgs(const std::string& out, const std::string& duration) {
  return {"suite",
          "--tune-ab",
          "--no-rt-throttling",
          "--ab-pairs",
          "2",
          "--scenarios",
          "idle",
          "--cpus",
          "1",
          "--duration",
          duration,
          "--settle",
          "0",
          "--checkpoint-interval",
          "1s",
          "-q",
          "--out",
          out};
}

/// Every applied record of `records` is restored; returns how many `by` restored at `when` (the
/// others were restored by rtpulse at the end of their block, without a `restored_by`).
size_t CountRestoredBy(const std::vector<json>& records, const std::string& by,
                       const std::string& when) {
  size_t n = 0;
  for (const auto& block : records) {
    for (const auto& c : block) {
      if (c["status"] != "applied") continue;
      EXPECT_TRUE(c["restored"].get<bool>()) << c.dump();
      if (!c.contains("restored_by")) continue;
      EXPECT_EQ(c["restored_by"], by) << c.dump();
      EXPECT_EQ(c["restored_time"], when) << c.dump();
      ++n;
    }
  }
  return n;
}

/// The --tune-ab blocks' tuning records of `result`, every knob.
std::vector<json> AbTuning(const json& result) {
  std::vector<json> records;
  for (const auto& k : result["tune_ab"]["knobs"]) {
    if (!k.contains("blocks")) continue;
    for (const auto& b : k["blocks"]) {
      if (b.contains("tuning")) records.push_back(b["tuning"]);
    }
  }
  return records;
}

TEST(KilledRunTest, TuneAbKnobGuardianMarksARunKilledWhileTheKnobIsOn) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for --tune-ab and SCHED_FIFO";
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs (one for the IRQs)";
  const std::string before = KilledRtRuntime();
  ASSERT_NE(before, "-1\n") << "RT throttling already off: the test could not see a change";
  TempDir dir;
  const std::string marker = "RTPULSE_KILLED_TEST_MARK=" + std::to_string(::getpid()) + "_ab";
  // Killed while an "on" block measures with its knob in force: its checkpoint shows it.
  std::atomic<bool> done{false};
  std::atomic<int> killed_pid{0};
  std::thread killer([&] {
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::ifstream in(dir.File("run/result.json"));
      if (!in) continue;
      json j = json::parse(in, nullptr, false);
      if (j.is_discarded() || !j.contains("scenarios")) continue;
      bool on_measuring = false;
      for (const auto& s : j["scenarios"]) {
        const std::string name = s.value("name", "");
        on_measuring |= s.value("status", "") == "measuring" && name.ends_with("-on") &&
                        s.contains("latency") && s["latency"].is_object();
      }
      if (!on_measuring || KilledRtRuntime() != "-1\n") continue;
      killed_pid.store(j["writer"]["pid"].get<int>());
      ::kill(killed_pid.load(), SIGKILL);
      return;
    }
  });
  ProcessOptions options;
  options.extra_env = {marker};
  const auto r = RunRtpulse(TuneAbArgs(dir.File("run"), "3s"), options);
  done.store(true);
  killer.join();
  ASSERT_NE(killed_pid.load(), 0) << "never saw an on block measuring: " << r.err;
  ASSERT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  EXPECT_TRUE(KilledLeftovers(marker, dir.path()).empty());
  EXPECT_EQ(KilledRtRuntime(), before) << "the knob's guardian restored it";
  const json result = json::parse(ReadFile(dir.File("run/result.json")));
  ASSERT_EQ(result["status"], "killed") << result.dump(1).substr(0, 3000);
  EXPECT_EQ(result["killed"]["tuning_restored_by"], "guardian");
  const size_t by_guardian =
      CountRestoredBy(AbTuning(result), "guardian", result["killed"]["time"].get<std::string>());
  EXPECT_EQ(by_guardian, 1u) << "the one knob in force when killed";
  EXPECT_EQ(result["killed"]["tuning_restored"].get<size_t>(), by_guardian);
}

TEST(KilledRunTest, TuneAbKilledAfterAKnobsRestoreBeforeItsRecordIsMarkedRestoredByRtpulse) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for --tune-ab and SCHED_FIFO";
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs (one for the IRQs)";
  const std::string before = KilledRtRuntime();
  TempDir dir;
  const std::string marker = "RTPULSE_KILLED_TEST_MARK=" + std::to_string(::getpid()) + "_abr";
  StoppedRun run(TuneAbArgs(dir.File("run"), "200ms"), "knob-restored", marker, dir.File("log"));
  ASSERT_TRUE(run.WaitStopped()) << run.Log();
  EXPECT_EQ(KilledRtRuntime(), before) << "rtpulse restored the knob";
  size_t open_records = 0;
  for (const auto& records : AbTuning(json::parse(ReadFile(dir.File("run/result.json"))))) {
    for (const auto& c : records) {
      if (c["status"] == "applied" && !c["restored"].get<bool>()) ++open_records;
    }
  }
  EXPECT_GT(open_records, 0u) << "the record still shows the knob in force";
  ASSERT_TRUE(run.Kill());
  EXPECT_TRUE(KilledLeftovers(marker, dir.path()).empty());
  EXPECT_EQ(KilledRtRuntime(), before);
  const json result = json::parse(ReadFile(dir.File("run/result.json")));
  ASSERT_EQ(result["status"], "killed") << result.dump(1).substr(0, 3000);
  EXPECT_EQ(result["killed"]["tuning_restored_by"], "rtpulse");
  const size_t by_rtpulse =
      CountRestoredBy(AbTuning(result), "rtpulse", result["killed"]["time"].get<std::string>());
  EXPECT_EQ(by_rtpulse, open_records);
  EXPECT_EQ(result["killed"]["tuning_restored"].get<size_t>(), by_rtpulse);
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
