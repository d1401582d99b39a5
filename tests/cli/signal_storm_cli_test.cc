// Signal storm (issue 15): 100 SIGINT/SIGTERM/SIGKILL at random, seeded moments to real
// `rtpulse suite --tune --no-rt-throttling --samples` runs (a stress-ng load, two scenarios)
// and `rtpulse latency --samples` runs. After each run: result files parse and say honestly
// how the run ended, the samples log reads back with `rtpulse samples`, no process carrying
// the run's marker is left and every tuned setting holds its value from before the storm.
// Latency values are never asserted; structure, counts and what is left behind are.
//
// The seed and the calibrated phases are printed with the line that replays the signal plan
// (RTPULSE_STORM_SEED=N RTPULSE_STORM_PHASES=...).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::MarkedProcesses;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;
using StormClock = std::chrono::steady_clock;

constexpr int kStormSignals = 100;
/// A guardian polls its parent every 500 ms and restores within 30 s at worst; a load worker
/// dies with its parent. Longer than this and something was left behind.
constexpr auto kStormLeftoverBound = std::chrono::seconds(15);
constexpr auto kStormRunTimeout = std::chrono::seconds(60);

/// One signal of the plan: when (ms after the start), which, and whether it goes to the
/// process group (what a Ctrl-C on the terminal does) or to the process only (`kill PID`).
struct StormShot {
  int at_ms = 0;
  int sig = 0;
  bool group = false;
  std::string phase;
};

/// How a run ended, and which of the planned signals reached a live process.
struct StormOutcome {
  bool exited = false;  ///< exit() (code in `code`), else killed by signal `code`
  int code = -1;
  int delivered = 0;  ///< signals sent while the process lived (not yet reaped)
  int first_sig = 0;  ///< the first delivered signal, 0 when none
  bool killed_by_storm = false;
  double seconds = 0;
  std::string err;
};

const char* StormSignalName(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGKILL ? "SIGKILL" : "?";
}

std::string StormPlanText(const std::vector<StormShot>& shots) {
  std::ostringstream s;
  for (const auto& shot : shots) {
    s << " " << StormSignalName(shot.sig) << (shot.group ? "(group)" : "") << "@" << shot.at_ms
      << "ms[" << shot.phase << "]";
  }
  return s.str();
}

/// Runs the rtpulse binary with `args` in its own process group, stdout/stderr to files,
/// `marker` in its environment, and sends `shots` on time. `poll` (if set) is called about
/// every 10 ms with the elapsed ms while the process lives (the calibration watches files).
StormOutcome RunStormProcess(const std::vector<std::string>& args, const std::string& marker,
                             const std::vector<StormShot>& shots, const std::string& log_prefix,
                             const std::function<void(double)>& poll = {}) {
  std::vector<std::string> argv{RTPULSE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  const std::string out_path = log_prefix + ".out";
  const std::string err_path = log_prefix + ".err";
  StormOutcome outcome;
  const auto start = StormClock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0 || err_fd < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
        dup2(err_fd, STDERR_FILENO) < 0) {
      _exit(126);
    }
    std::string env = marker;
    putenv(env.data());
    execv(cargs[0], cargs.data());
    _exit(127);
  }
  setpgid(pid, pid);  // both sides, so a group signal sent at once finds the group
  size_t next = 0;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(StormClock::now() - start).count();
    while (next < shots.size() && elapsed_ms >= shots[next].at_ms) {
      // Not reaped yet, so the pid (and its group id) still names this process.
      if (kill(shots[next].group ? -pid : pid, shots[next].sig) == 0) {
        if (outcome.delivered++ == 0) outcome.first_sig = shots[next].sig;
      }
      ++next;
    }
    if (StormClock::now() - start > kStormRunTimeout) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "rtpulse " << args[0] << " did not end within 60 s: a hang";
      break;
    }
    if (poll) poll(elapsed_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(next < shots.size() ? 1 : 10));
  }
  outcome.seconds = std::chrono::duration<double>(StormClock::now() - start).count();
  if (WIFEXITED(status)) {
    outcome.exited = true;
    outcome.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.code = WTERMSIG(status);
    outcome.killed_by_storm = true;
  }
  outcome.err = ReadFile(err_path);
  return outcome;
}

/// Waits (bounded) for every process of a run to be gone: first the tuning guardians its
/// journals name, by pid (a SIGKILLed suite's guardian restores, then execs `rtpulse
/// __mark-killed`, and while it execs its environment reads empty: a scan for the marker alone
/// can miss it and read result.json before the mark), then every marked process. Returns what
/// is left.
std::set<int> StormLeftovers(const std::string& marker, const std::string& dir = "") {
  const auto until = StormClock::now() + kStormLeftoverBound;
  std::set<int> left = testutil::WaitGone(testutil::JournalGuardians(dir), kStormLeftoverBound);
  for (const int pid : MarkedProcesses(marker)) left.insert(pid);
  while (!left.empty() && StormClock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    left = testutil::WaitGone(left, std::chrono::milliseconds(0));
    for (const int pid : MarkedProcesses(marker)) left.insert(pid);
  }
  return left;
}

std::string StormDescribe(const std::set<int>& pids) {
  std::string text;
  for (const int pid : pids) {
    std::string comm = ReadFile("/proc/" + std::to_string(pid) + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    text += " " + std::to_string(pid) + "(" + comm + ")";
  }
  return text;
}

/// `rtpulse samples FILE`: exit code, the `records` count it printed, stderr.
struct StormSamplesRead {
  int code = -1;
  std::optional<uint64_t> records;
  std::string out;
  std::string err;
};

StormSamplesRead ReadSamplesLog(const std::string& path) {
  StormSamplesRead read;
  const auto r = RunRtpulse({"samples", path});
  read.code = r.exit_code;
  read.out = r.out;
  read.err = r.err;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string key;
    uint64_t n = 0;
    if (words >> key && key == "records" && words >> n) read.records = n;
  }
  return read;
}

/// The samples log of a run or scenario: FILE when it was finished, else the FILE.tmp.<pid>
/// a killed writer leaves (empty when neither exists).
std::vector<std::string> SamplesLogs(const std::string& file) {
  std::vector<std::string> found;
  const fs::path p(file);
  if (!fs::is_directory(p.parent_path())) return found;
  if (fs::exists(p)) found.push_back(file);
  for (const auto& e : fs::directory_iterator(p.parent_path())) {
    if (e.path().filename().string().starts_with(p.filename().string() + ".tmp.")) {
      found.push_back(e.path().string());
    }
  }
  return found;
}

/// Every file --tune changes, read now (the paths come from the calibration run's record).
std::map<std::string, std::string> ReadSettings(const std::set<std::string>& paths) {
  std::map<std::string, std::string> values;
  for (const auto& p : paths) values[p] = ReadFile(p);
  return values;
}

/// A SIGKILLed suite --tune: once its guardian runs (its journal exists) the guardian outlives
/// it and marks result.json killed, with what was restored and by whom: the guardian when the
/// kill came while the tunings were in force, rtpulse when it had restored them itself and
/// the kill came before its final write (docs/result-json.md#killed-runs). Only a run killed
/// before it started its guardian keeps "running" on disk (readers then read it as killed);
/// one killed after its final write keeps that.
void ExpectKilledRunMarked(const json& result, bool guardian_started) {
  const std::string status = result.value("status", "");
  bool applied = false;
  for (const auto& t : result["tuning"]) {
    EXPECT_TRUE(t.contains("status")) << t.dump();
    if (t.value("status", "") == "applied") applied = true;
  }
  if (status == "running") {
    EXPECT_FALSE(applied) << "a tuned run killed mid-run says running: " << result["tuning"].dump();
    EXPECT_FALSE(guardian_started) << "its guardian ran but did not mark it killed";
  } else if (status == "killed") {
    ASSERT_TRUE(result.contains("killed")) << result.dump();
    const std::string by = result["killed"].value("tuning_restored_by", "");
    EXPECT_TRUE(by == "guardian" || by == "rtpulse") << result["killed"].dump();
    size_t restored = 0;
    for (const auto& t : result["tuning"]) {
      if (t.value("status", "") == "applied") {
        EXPECT_TRUE(t.value("restored", false)) << t.dump();
        ++restored;
      }
    }
    EXPECT_EQ(result["killed"].value("tuning_restored", size_t{0}), restored);
  } else {
    EXPECT_TRUE(status == "complete" || status == "interrupted" || status == "failed") << status;
  }
  for (const auto& s : result["scenarios"]) {
    const std::string st = s.value("status", "");
    EXPECT_TRUE(st == "pending" || st == "settling" || st == "measuring" || st == "complete" ||
                st == "interrupted" || st == "killed")
        << st;
  }
}

/// A suite folder after a run that ended at any moment (`o` says how).
void ExpectSuiteOutputValid(const std::string& out, const StormOutcome& o) {
  const bool killed = o.killed_by_storm && o.code == SIGKILL;
  if (!fs::exists(out + "/result.json")) {
    // Nothing written yet: only when the run died before its first write. SIGINT/SIGTERM
    // that early find the default action (the signals are not blocked yet) and nothing to
    // clean up.
    EXPECT_TRUE(o.killed_by_storm) << "exit " << o.code << " without result.json: " << o.err;
    if (fs::exists(out)) {
      for (const auto& e : fs::recursive_directory_iterator(out)) {
        EXPECT_FALSE(e.path().filename() == "samples.bin") << e.path();
      }
    }
    return;
  }
  json result;
  ASSERT_NO_THROW(result = json::parse(ReadFile(out + "/result.json"))) << "atomic writes";
  EXPECT_EQ(result["schema"], "rtpulse.suite");
  if (killed) {
    ExpectKilledRunMarked(result, fs::exists(out + "/tuning_journal.json"));
  } else if (o.killed_by_storm) {
    // SIGINT/SIGTERM by default action after result.json was written: the signal was not
    // blocked, and tunings and loads were left to chance.
    ADD_FAILURE() << StormSignalName(o.code) << " killed the suite after it wrote result.json";
    return;
  } else {
    ASSERT_TRUE(o.code == 0 || o.code == 130) << o.code << " " << o.err;
    EXPECT_EQ(result["status"], o.code == 0 ? "complete" : "interrupted");
    EXPECT_TRUE(fs::exists(out + "/statistical_summary.json"));
    for (const auto& t : result["tuning"]) {
      if (t["status"] == "applied") {
        EXPECT_TRUE(t["restored"].get<bool>()) << t.dump();
      }
    }
  }
  for (const auto& s : result["scenarios"]) {
    const std::string name = s["name"];
    const std::string status = s["status"];
    SCOPED_TRACE("scenario " + name + " " + status);
    if (!killed) {
      EXPECT_TRUE(status == "complete" || status == "interrupted" || status == "pending") << status;
    }
    uint64_t logged = 0;
    if (s["latency"].is_object()) {
      for (const auto& [i, t] : s["latency"]["thread"].items()) {
        EXPECT_EQ(t["cycles"], t["stats"]["count"]);
        logged += t["samples_logged"].get<uint64_t>();
      }
    }
    const auto logs = SamplesLogs(out + "/" + name + "/samples.bin");
    const bool final_block =
        s["latency"].is_object() &&
        !(s.contains("checkpoint") && s["checkpoint"].is_boolean() && s["checkpoint"].get<bool>());
    if (final_block) {
      // Written when the scenario ended: the log was finished and renamed first.
      ASSERT_TRUE(fs::exists(out + "/" + name + "/samples.bin"));
      const auto read = ReadSamplesLog(out + "/" + name + "/samples.bin");
      EXPECT_EQ(read.code, 0) << read.err;
      ASSERT_TRUE(read.records.has_value()) << read.out;
      EXPECT_EQ(*read.records, logged) << "the log holds what result.json counted";
    } else if (status == "measuring" && s["latency"].is_object()) {
      // Killed while measuring, after a checkpoint: the writer's FILE.tmp.<pid>, readable up to
      // its last checkpoint (500 ms).
      EXPECT_FALSE(logs.empty()) << "no samples log for a scenario that measured";
    } else if (status == "measuring") {
      // Killed as the measurement started, before its first checkpoint: no snapshot, so
      // nothing is claimed; a log, if it was opened, still reads (below).
      EXPECT_FALSE(s.contains("checkpoint") && s["checkpoint"].is_boolean() &&
                   s["checkpoint"].get<bool>())
          << "a checkpoint without its snapshot";
    }
    for (const auto& log : logs) {
      const auto read = ReadSamplesLog(log);
      EXPECT_EQ(read.code, 0) << log << ": " << read.err;
      EXPECT_TRUE(read.records.has_value()) << log << ": " << read.out;
    }
  }
}

/// Whether a run was stopped: yes when its first delivered signal (not SIGKILL) came while it
/// measured, no when no signal reached it; unknown (nullopt) otherwise.
std::optional<bool> StormStopped(const StormOutcome& o, const std::vector<StormShot>& shots) {
  if (o.delivered == 0) return false;
  if (shots.front().phase == "measuring" && shots.front().sig != SIGKILL) return true;
  return std::nullopt;
}

/// A latency run's files after a run that ended at any moment. latency exits 0 when a signal
/// stops it, as cyclictest: its JSON and its samples log say so, and agree.
void ExpectLatencyOutputValid(const TempDir& dir, const StormOutcome& o,
                              std::optional<bool> stopped) {
  const std::string json_path = dir.File("r.json");
  const auto logs = SamplesLogs(dir.File("r.smp"));
  if (o.killed_by_storm) {
    // SIGKILL (or a SIGINT/SIGTERM before the signals were blocked): no JSON unless the kill
    // came after it was written; a samples log, when there is one, reads back.
    EXPECT_TRUE(o.code == SIGKILL || !fs::exists(json_path))
        << StormSignalName(o.code) << " killed latency after it wrote its JSON";
    if (fs::exists(json_path)) {
      EXPECT_FALSE(json::parse(ReadFile(json_path), nullptr, false).is_discarded()) << json_path;
    }
    for (const auto& log : logs) {
      const auto read = ReadSamplesLog(log);
      EXPECT_EQ(read.code, 0) << log << ": " << read.err;
      EXPECT_TRUE(read.records.has_value()) << log << ": " << read.out;
    }
    return;
  }
  ASSERT_EQ(o.code, 0) << o.err;
  json j;
  ASSERT_NO_THROW(j = json::parse(ReadFile(json_path)));
  EXPECT_EQ(j["return_code"], 0);
  const bool interrupted = j["rtpulse"]["interrupted"].get<bool>();
  if (stopped) {
    EXPECT_EQ(interrupted, *stopped);
  }
  uint64_t logged = 0;
  for (const auto& [i, t] : j["thread"].items()) logged += t["samples_logged"].get<uint64_t>();
  ASSERT_TRUE(fs::exists(dir.File("r.smp"))) << "finished runs rename their log";
  EXPECT_EQ(logs.size(), 1u) << "no temporary left beside the finished log";
  const auto read = ReadSamplesLog(dir.File("r.smp"));
  EXPECT_EQ(read.code, 0) << read.err;
  ASSERT_TRUE(read.records.has_value()) << read.out;
  EXPECT_EQ(*read.records, logged) << "the log holds what the JSON counted";
  EXPECT_NE(read.out.find(interrupted ? "interrupted   yes" : "interrupted   no"),
            std::string::npos)
      << read.out;
}

/// The suite every storm run starts: a stress-ng load that settles, then an idle scenario.
constexpr const char* kStormSuite = R"(name = "storm"
settle = "0s"

[[scenario]]
name = "busy"
loads = ["stress-ng:--cpu 1 --cpu-load 50"]
settle = "300ms"
duration = "1s"

[[scenario]]
name = "calm"
duration = "500ms"
)";

std::vector<std::string> StormSuiteArgs(const std::string& config, const std::string& out) {
  return {"suite",
          "--config",
          config,
          "--tune",
          "--no-rt-throttling",
          "--cpus",
          "1",
          "--samples",
          "--checkpoint-interval",
          "500ms",
          "--monitor-interval",
          "500ms",
          "-q",
          "--out",
          out};
}

std::vector<std::string> StormLatencyArgs(const TempDir& dir) {
  return {"latency",
          "-S",
          "-i",
          "1000",
          "-D",
          "1s",
          "-q",
          "--json",
          dir.File("r.json"),
          "--samples",
          dir.File("r.smp")};
}

/// Where the phases of a run fall (ms from the start), from one unsignalled run.
struct StormPhases {
  double settle = -1;   // suite: the first scenario settles
  double measure = -1;  // suite: it measures; latency: the samples log exists
  double second = -1;   // suite: the second scenario started
  double end = -1;      // the process ended
};

class SignalStormTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO, mlockall and --tune";
    if (std::system("command -v stress-ng >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "stress-ng missing (scripts/install-deps --test)";
    }
  }
};

std::string StormMarker(int run) {
  return "RTPULSE_STORM_TEST_MARK=" + std::to_string(getpid()) + "_" + std::to_string(run);
}

TEST_F(SignalStormTest, HundredSignalsLeaveMarkedResultsRecoverableLogsNoProcessAndSettings) {
  const auto storm_start = StormClock::now();
  unsigned seed = static_cast<unsigned>(std::random_device{}());
  if (const char* s = std::getenv("RTPULSE_STORM_SEED"))
    seed = static_cast<unsigned>(std::stoul(s));
  std::printf("signal storm seed %u\n", seed);
  RecordProperty("seed", std::to_string(seed));
  SCOPED_TRACE(::testing::Message() << "RTPULSE_STORM_SEED=" << seed);
  std::mt19937 random(seed);

  TempDir config_dir;
  const std::string config = config_dir.File("storm.toml");
  std::ofstream(config) << kStormSuite;
  ASSERT_NE(ReadFile("/proc/sys/kernel/sched_rt_runtime_us"), "-1\n")
      << "RT throttling already off: the storm could not see a lost setting";

  // Calibration: one suite and one latency run without signals, watched for their phases.
  // The suite's tuning record names every file --tune changes on this machine.
  std::set<std::string> tuned_paths = {"/proc/sys/kernel/sched_rt_runtime_us"};
  StormPhases suite_phases;
  StormPhases latency_phases;
  {
    TempDir dir;
    const std::string out = dir.File("run");
    const std::string marker = StormMarker(0);
    auto watch = [&](double ms) {
      std::ifstream in(out + "/result.json");
      if (!in) return;
      const json r = json::parse(in, nullptr, false);
      if (r.is_discarded() || !r.contains("scenarios")) return;
      const std::string first = r["scenarios"][0].value("status", "");
      const std::string second = r["scenarios"][1].value("status", "");
      if (suite_phases.settle < 0 && first != "pending") suite_phases.settle = ms;
      if (suite_phases.measure < 0 && first != "pending" && first != "settling") {
        suite_phases.measure = ms;
      }
      if (suite_phases.second < 0 && second != "pending") suite_phases.second = ms;
    };
    const auto before = ReadFile("/proc/sys/kernel/sched_rt_runtime_us");
    const auto o = RunStormProcess(StormSuiteArgs(config, out), marker, {}, dir.File("log"), watch);
    suite_phases.end = o.seconds * 1000;
    ASSERT_TRUE(o.exited && o.code == 0) << o.code << " " << o.err;
    const json result = json::parse(ReadFile(out + "/result.json"));
    ASSERT_EQ(result["status"], "complete");
    bool throttling = false;
    for (const auto& t : result["tuning"]) {
      if (t["status"] != "applied") continue;
      tuned_paths.insert(t["path"].get<std::string>());
      if (t["path"] == "/proc/sys/kernel/sched_rt_runtime_us") throttling = t["after"] == "-1";
    }
    EXPECT_TRUE(throttling) << "--no-rt-throttling applied: " << result["tuning"].dump();
    ExpectSuiteOutputValid(out, o);
    EXPECT_EQ(ReadFile("/proc/sys/kernel/sched_rt_runtime_us"), before);
    EXPECT_TRUE(StormLeftovers(marker, dir.path()).empty());
  }
  {
    TempDir dir;
    const std::string marker = StormMarker(1);
    auto watch = [&](double ms) {
      if (latency_phases.measure < 0 && !SamplesLogs(dir.File("r.smp")).empty()) {
        latency_phases.measure = ms;
      }
    };
    const auto o = RunStormProcess(StormLatencyArgs(dir), marker, {}, dir.File("log"), watch);
    latency_phases.end = o.seconds * 1000;
    ASSERT_TRUE(o.exited && o.code == 0) << o.code << " " << o.err;
    ExpectLatencyOutputValid(dir, o, false);
    EXPECT_TRUE(StormLeftovers(marker).empty());
  }
  ASSERT_GT(suite_phases.settle, 0);
  ASSERT_GT(suite_phases.measure, suite_phases.settle);
  ASSERT_GT(suite_phases.second, suite_phases.measure);
  ASSERT_GT(latency_phases.measure, 0);
  // The moments are drawn inside the calibrated phases, so a replay needs them too: the line
  // below gives both, RTPULSE_STORM_PHASES=a,b,c,d,e,f uses these instead of this run's.
  if (const char* p = std::getenv("RTPULSE_STORM_PHASES")) {
    double v[6] = {};
    ASSERT_EQ(std::sscanf(p, "%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]),
              6)
        << "RTPULSE_STORM_PHASES='" << p << "': give the six numbers the storm printed";
    suite_phases = {v[0], v[1], v[2], v[3]};
    latency_phases = {-1, v[4], -1, v[5]};
  }
  std::printf(
      "calibration: suite settles at %.0f ms, measures at %.0f, second scenario %.0f, "
      "ends %.0f; latency logs at %.0f, ends %.0f\n"
      "replay: RTPULSE_STORM_SEED=%u RTPULSE_STORM_PHASES=%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n",
      suite_phases.settle, suite_phases.measure, suite_phases.second, suite_phases.end,
      latency_phases.measure, latency_phases.end, seed, suite_phases.settle, suite_phases.measure,
      suite_phases.second, suite_phases.end, latency_phases.measure, latency_phases.end);
  std::fflush(stdout);
  const auto settings_before = ReadSettings(tuned_paths);

  auto uniform = [&](double lo, double hi) {
    return static_cast<int>(
        std::uniform_real_distribution<double>(lo, std::max(lo + 1, hi))(random));
  };
  const int signals[] = {SIGINT, SIGTERM, SIGKILL};
  int sent = 0;
  int runs = 0;
  std::map<std::string, int> by_phase;
  std::map<int, int> by_signal;
  while (sent < kStormSignals) {
    ++runs;
    const bool suite = std::bernoulli_distribution(0.6)(random);
    const StormPhases& ph = suite ? suite_phases : latency_phases;
    std::vector<StormShot> shots;
    // The first signal's moment: a phase, then a uniform moment inside it.
    const int phase = std::uniform_int_distribution<int>(0, suite ? 4 : 2)(random);
    StormShot first;
    if (suite) {
      switch (phase) {
        case 0:
          first = {uniform(0, ph.settle), 0, false, "start-up"};
          break;
        case 1:
          first = {uniform(ph.settle, ph.measure), 0, false, "settle"};
          break;
        case 2:
          first = {uniform(ph.measure, ph.end - 500), 0, false, "measuring"};
          break;
        case 3: {
          // Around a checkpoint write of the loaded scenario (0.5 s of measuring; 1 s is its
          // end).
          const double base = ph.measure;
          const int k = std::uniform_int_distribution<int>(1, 2)(random);
          first = {uniform(base + 500 * k - 20, base + 500 * k + 30), 0, false, "checkpoint"};
          break;
        }
        default:
          first = {uniform(ph.end - 500, ph.end + 50), 0, false, "finishing"};
          break;
      }
    } else {
      switch (phase) {
        case 0:
          first = {uniform(0, ph.measure + 20), 0, false, "start-up"};
          break;
        case 1:
          // Inside the 1 s measurement (-D 1s from about when its log appears): the time to
          // the end also holds the finishing (the log's percentiles, the JSON), which took
          // over 400 ms in one calibration, so `ph.end - 300` alone was sometimes after it.
          first = {uniform(ph.measure, std::min(ph.end - 300, ph.measure + 900)), 0, false,
                   "measuring"};
          break;
        default:
          first = {uniform(ph.end - 300, ph.end + 50), 0, false, "finishing"};
          break;
      }
    }
    shots.push_back(first);
    // A storm: sometimes more signals follow, into the shutdown the first one started.
    const int extra = std::discrete_distribution<int>({55, 30, 15})(random);
    for (int i = 0; i < extra; ++i) {
      shots.push_back({shots.back().at_ms + uniform(0, 400), 0, false, "after"});
    }
    for (auto& s : shots) {
      s.sig = signals[std::uniform_int_distribution<int>(0, 2)(random)];
      s.group = s.sig != SIGKILL && std::bernoulli_distribution(0.5)(random);
    }
    while (static_cast<int>(shots.size()) > kStormSignals - sent) shots.pop_back();

    TempDir dir;
    const std::string marker = StormMarker(runs + 1);
    SCOPED_TRACE(::testing::Message() << "run " << runs << " " << (suite ? "suite" : "latency")
                                      << ":" << StormPlanText(shots));
    const auto o = suite ? RunStormProcess(StormSuiteArgs(config, dir.File("run")), marker, shots,
                                           dir.File("log"))
                         : RunStormProcess(StormLatencyArgs(dir), marker, shots, dir.File("log"));
    sent += o.delivered;
    if (o.delivered == 0) {
      // The run ended before the first moment: the plan's signals were not sent. The run is
      // still checked (it finished); the storm goes on until 100 signals reached a process.
      EXPECT_TRUE(o.exited && o.code == 0) << o.code << " " << o.err;
    }
    for (size_t i = 0; i < shots.size() && static_cast<int>(i) < o.delivered; ++i) {
      ++by_phase[shots[i].phase];
      ++by_signal[shots[i].sig];
    }
    const auto left = StormLeftovers(marker, dir.path());
    EXPECT_TRUE(left.empty()) << "left behind:" << StormDescribe(left);
    for (const int pid : left) kill(pid, SIGKILL);
    EXPECT_EQ(ReadSettings(tuned_paths), settings_before) << "a tuned setting was not restored";
    if (suite) {
      ExpectSuiteOutputValid(dir.File("run"), o);
    } else {
      ExpectLatencyOutputValid(dir, o, StormStopped(o, shots));
    }
    if (::testing::Test::HasFailure()) {
      std::printf("run %d failed; stderr:\n%s\n", runs, o.err.c_str());
      break;  // one failure is enough to replay from the seed
    }
  }
  const double wall = std::chrono::duration<double>(StormClock::now() - storm_start).count();
  std::printf(
      "signal storm: %d signals in %d runs, %.0f s wall; SIGINT %d, SIGTERM %d, "
      "SIGKILL %d; by moment:",
      sent, runs, wall, by_signal[SIGINT], by_signal[SIGTERM], by_signal[SIGKILL]);
  for (const auto& [phase, n] : by_phase) std::printf(" %s %d", phase.c_str(), n);
  std::printf("\n");
  EXPECT_EQ(sent, kStormSignals);
  EXPECT_GT(by_signal[SIGKILL], 0);
  EXPECT_GT(by_signal[SIGINT] + by_signal[SIGTERM], 0);
}

}  // namespace
}  // namespace rtpulse
