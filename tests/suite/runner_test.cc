// The suite runner's phases with fake loads, monitor, tunings, settle wait and workload: no
// root, no real-time threads, real files in a temporary folder.
#include "suite/runner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace rtpulse::suite {
namespace {

using nlohmann::json;
using testutil::ReadFile;
using testutil::TempDir;
using Log = std::vector<std::string>;

/// Everything the fakes do, in order.
struct World {
  Log log;
  std::set<std::string> loads_fail;     ///< Scenarios whose loads do not start.
  std::set<std::string> measure_fails;  ///< Scenarios whose workload errors out.
  std::string interrupt_measuring;      ///< The workload reports an interruption here.
  int interrupt_settle_at = -1;         ///< The n-th settle wait (0-based) is interrupted.
  int settles = 0;
  std::vector<json> checkpoints_seen;  ///< result.json as read inside each checkpoint.
  std::string out_dir;
  bool tune_restored = false;
  /// result.json as on disk at each Release() of a tuning or knob (kept apart from `log`).
  std::vector<json> released_with;
  /// Each SetScenario() on the monitor: the name and how long `log` was then (kept apart
  /// from `log`, whose exact sequence the phase tests compare).
  std::vector<std::pair<std::string, size_t>> monitor_scenarios;
};

class FakeLoads final : public ScenarioLoads {
 public:
  FakeLoads(World& w, std::string name) : w_(w), name_(std::move(name)) {}
  ~FakeLoads() override {
    if (running_) w_.log.push_back("loads destroyed while running " + name_);
  }
  Status Start() override {
    w_.log.push_back("loads start " + name_);
    if (w_.loads_fail.count(name_) > 0) return ResourceError("no such load here");
    running_ = true;
    return Status::Ok();
  }
  void Stop() override {
    w_.log.push_back("loads stop " + name_);
    running_ = false;
  }
  json Reports() const override { return json::array({{{"load", "cpu"}, {"ops", 42}}}); }
  std::vector<std::string> Warnings() const override { return {"cpu: slower than asked"}; }

 private:
  World& w_;
  std::string name_;
  bool running_ = false;
};

class FakeMonitor final : public SuiteMonitor {
 public:
  explicit FakeMonitor(World& w) : w_(w) {}
  void Start() override { w_.log.push_back("monitor start"); }
  Status Stop() override {
    w_.log.push_back("monitor stop");
    return Status::Ok();
  }
  Status WriteStats(const std::string& path, bool interrupted) override {
    w_.log.push_back(std::string("monitor stats") + (interrupted ? " interrupted" : ""));
    return WriteFileText(path, "stats\n");
  }
  std::vector<std::string> Notes() const override { return {"no thermal zones"}; }
  void SetScenario(const std::string& name) override {
    w_.monitor_scenarios.emplace_back(name, w_.log.size());
  }

 private:
  static Status WriteFileText(const std::string& path, const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return Failure("cannot write " + path);
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return Status::Ok();
  }
  World& w_;
};

class FakeTuning final : public SuiteTuning {
 public:
  explicit FakeTuning(World& w) : w_(w) {}
  Status Restore() override {
    w_.log.push_back("tune restore");
    w_.tune_restored = true;
    return Status::Ok();
  }
  void Release() override {
    w_.released_with.push_back(json::parse(ReadFile(w_.out_dir + "/result.json"), nullptr, false));
  }
  json ToJson() const override { return json::array({{{"restored", w_.tune_restored}}}); }
  std::string Describe() const override { return "  governor: performance\n"; }

 private:
  World& w_;
};

class FakePause final : public Pause {
 public:
  explicit FakePause(World& w) : w_(w) {}
  bool Wait(int64_t ns, const std::function<void(int64_t)>& tick) override {
    w_.log.push_back("settle " + std::to_string(ns / 1'000'000'000) + "s");
    tick(ns);
    return w_.settles++ == w_.interrupt_settle_at;
  }

 private:
  World& w_;
};

/// Three samples of 10, 20, 30 us on one thread; a checkpoint with the first one.
class FakeWorkload final : public Workload {
 public:
  explicit FakeWorkload(World& w) : w_(w) {}
  json ConfigJson() const override { return {{"interval_us", 1000}, {"policy", "fifo"}}; }
  std::vector<std::string> Notes() const override { return {"planned note"}; }
  Expected<Measured> Measure(const std::string& dir, const std::string& name, int64_t duration_ns,
                             int64_t checkpoint_ns,
                             const std::function<void(const results::LatencyRun&)>& checkpoint,
                             Progress& progress) override {
    w_.log.push_back("measure " + name + " " + std::to_string(duration_ns / 1'000'000'000) + "s");
    EXPECT_TRUE(std::filesystem::is_directory(dir)) << dir;
    EXPECT_EQ(checkpoint_ns, 3'000'000'000);
    if (w_.measure_fails.count(name) > 0) return Failure("probe thread could not start");
    results::LatencyRun run;
    run.paths.push_back({"abs", 1, 2, 3'000'000, {}, std::nullopt});
    results::ProbeResult probe;
    probe.wake = "abs";
    probe.interval_ns = 1'000'000;
    probe.histogram.Record(10'000);
    probe.periods_elapsed = 1;
    probe.linear = results::LinearHistogram{};
    probe.linear->limit_us = 1000;
    probe.linear->counts.assign(1000, 0);
    probe.linear->counts[10] = 1;
    run.paths[0].probes.push_back(probe);
    checkpoint(run);
    w_.checkpoints_seen.push_back(json::parse(ReadFile(w_.out_dir + "/result.json")));
    progress.Measuring({1, 1, 10'000, 10'000, 0});
    run.paths[0].probes[0].histogram.Record(20'000);
    run.paths[0].probes[0].histogram.Record(30'000);
    run.paths[0].probes[0].periods_elapsed = 3;
    run.paths[0].probes[0].linear->counts[20] = 1;
    run.paths[0].probes[0].linear->counts[30] = 1;
    Measured m;
    m.latency = run;
    m.interrupted = name == w_.interrupt_measuring;
    m.latency.interrupted = m.interrupted;
    m.warnings.push_back("workload warning");
    return m;
  }

 private:
  World& w_;
};

class RecordingProgress final : public Progress {
 public:
  explicit RecordingProgress(World& w) : w_(w) {}
  void Scenario(size_t index, size_t count, const std::string& name, int64_t,
                int64_t after_ns) override {
    w_.log.push_back("progress " + std::to_string(index + 1) + "/" + std::to_string(count) + " " +
                     name + " after " + std::to_string(after_ns / 1'000'000'000) + "s");
  }
  void Say(const std::string& line) override { said.push_back(line); }
  std::vector<std::string> said;

 private:
  World& w_;
};

class RunnerTest : public ::testing::Test {
 protected:
  RunnerTest() : pause_(world_), workload_(world_), progress_(world_) {
    world_.out_dir = dir_.File("run");
    plan_.out_dir = world_.out_dir;
    plan_.cpus = {0, 1};
    plan_.online = {0, 1};
    plan_.checkpoint_ns = 3'000'000'000;
    plan_.version = "9.9.9";
    plan_.invocation = "rtpulse suite --test";
    plan_.config.duration_ns = 10'000'000'000;
    plan_.config.settle_ns = 2'000'000'000;
    for (const char* name : {"idle", "light", "heavy"}) {
      Scenario s;
      s.name = name;
      s.description = std::string(name) + " scenario";
      s.load_specs = {"cpu"};
      plan_.config.scenarios.push_back(s);
    }
    plan_.config.scenarios[2].duration_ns = 20'000'000'000;

    services_.preflight = [this] {
      world_.log.push_back("preflight");
      Preflight p;
      p.system = {{"release", "6.1.0-test"}};
      p.text = "system info\n";
      p.warnings = {"environment warning"};
      p.pass = 3;
      p.warn = 1;
      p.fail = fail_checks_;
      if (fail_checks_ > 0) p.failures = {"PREEMPT_RT: not set (fix: build an RT kernel)"};
      return p;
    };
    services_.tune = [this](const std::string& journal) -> Expected<std::unique_ptr<SuiteTuning>> {
      world_.log.push_back("tune apply " + std::filesystem::path(journal).filename().string());
      return std::unique_ptr<SuiteTuning>(std::make_unique<FakeTuning>(world_));
    };
    services_.monitor = [this](const std::string& csv) -> Expected<std::unique_ptr<SuiteMonitor>> {
      world_.log.push_back("monitor open " + std::filesystem::path(csv).filename().string());
      if (monitor_fails_) return ResourceError("cannot open the monitor log");
      return std::unique_ptr<SuiteMonitor>(std::make_unique<FakeMonitor>(world_));
    };
    services_.loads = [this](const Scenario& s) {
      return std::make_unique<FakeLoads>(world_, s.name);
    };
    services_.pause = &pause_;
    services_.workload = &workload_;
    services_.progress = &progress_;
    services_.realtime_ns = [this] { return ++clock_ns_; };
  }

  RunOutcome Run() { return RunSuite(plan_, services_); }
  json ResultJson() const { return json::parse(ReadFile(world_.out_dir + "/result.json")); }

  TempDir dir_;
  World world_;
  FakePause pause_;
  FakeWorkload workload_;
  RecordingProgress progress_;
  SuitePlan plan_;
  Services services_;
  int fail_checks_ = 0;
  bool monitor_fails_ = false;
  int64_t clock_ns_ = 1'000;
};

TEST_F(RunnerTest, PhasesRunInOrderAndEveryScenarioIsWritten) {
  plan_.tune = true;
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kOk);
  const Log expected = {
      "preflight",
      "tune apply tuning_journal.json",
      "monitor open thermal_power_log.csv",
      "monitor start",
      "progress 1/3 idle after 34s",  // light 10 + 2, heavy 20 + 2
      "loads start idle",
      "settle 2s",
      "measure idle 10s",
      "monitor stats",  // at the checkpoint
      "loads stop idle",
      "progress 2/3 light after 22s",
      "loads start light",
      "settle 2s",
      "measure light 10s",
      "monitor stats",
      "loads stop light",
      "progress 3/3 heavy after 0s",
      "loads start heavy",
      "settle 2s",
      "measure heavy 20s",
      "monitor stats",
      "loads stop heavy",
      "monitor stop",
      "monitor stats",
      "tune restore",
  };
  EXPECT_EQ(world_.log, expected);

  const json result = ResultJson();
  EXPECT_EQ(result["status"], "complete");
  EXPECT_EQ(result["rtpulse_version"], "9.9.9");
  EXPECT_EQ(result["cmdline"], "rtpulse suite --test");
  // The suite's settings and the workload's, merged.
  EXPECT_EQ(result["config"]["cpus"], "0-1");
  EXPECT_EQ(result["config"]["interval_us"], 1000);
  EXPECT_EQ(result["config"]["scenarios"][2]["duration_s"], 20.0);
  EXPECT_EQ(result["warnings"], json::array({"environment warning", "planned note"}));
  EXPECT_EQ(result["monitor"]["notes"], json::array({"no thermal zones"}));
  EXPECT_EQ(result["tuning"][0]["restored"], true);
  ASSERT_EQ(result["scenarios"].size(), 3u);
  for (const auto& s : result["scenarios"]) {
    SCOPED_TRACE(s["name"].get<std::string>());
    EXPECT_EQ(s["status"], "complete");
    EXPECT_FALSE(s["checkpoint"].get<bool>());
    EXPECT_EQ(s["latency"]["thread"]["0"]["stats"]["count"], 3);
    EXPECT_EQ(s["load_reports"][0]["ops"], 42);
    EXPECT_EQ(s["warnings"], json::array({"workload warning", "cpu: slower than asked"}));
    // The run's warnings are carried into each latency result too.
    EXPECT_EQ(s["latency"]["rtpulse"]["warnings"][0], "environment warning");
    const std::string dir = world_.out_dir + "/" + s["name"].get<std::string>() + "/";
    for (const char* f : {"cyclictest.json", "cyclictest_raw.txt", "histogram.txt",
                          "min_latency.txt", "avg_latency.txt", "max_latency.txt"}) {
      EXPECT_TRUE(std::filesystem::is_regular_file(dir + f)) << f;
    }
    // 10, 20, 30 us: cyclictest's whole-microsecond summary lines.
    EXPECT_EQ(ReadFile(dir + "max_latency.txt"), "# Max Latencies: 00030\n");
    EXPECT_EQ(ReadFile(dir + "min_latency.txt"), "# Min Latencies: 00010\n");
  }
  EXPECT_EQ(ReadFile(world_.out_dir + "/system_info.txt"), "system info\n");
  EXPECT_EQ(json::parse(ReadFile(world_.out_dir + "/system_info.json"))["release"], "6.1.0-test");
  const json summary = json::parse(ReadFile(world_.out_dir + "/statistical_summary.json"));
  ASSERT_EQ(summary["scenarios"].size(), 3u);
  EXPECT_EQ(summary["scenarios"][1]["samples"], 3);
  EXPECT_NE(ReadFile(world_.out_dir + "/statistical_summary.txt").find("light"), std::string::npos);
}

// thermal_power_log.csv's `scenario` column: the monitor is told each scenario's name before
// its loads start and cleared after they stop.
TEST_F(RunnerTest, TheMonitorIsToldWhichScenarioRuns) {
  Run();
  const auto at = [&](const std::string& entry) {
    return static_cast<size_t>(std::find(world_.log.begin(), world_.log.end(), entry) -
                               world_.log.begin());
  };
  ASSERT_EQ(world_.monitor_scenarios.size(), 6u);
  const char* names[] = {"idle", "light", "heavy"};
  for (size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE(names[k]);
    const auto& [set, set_at] = world_.monitor_scenarios[2 * k];
    const auto& [cleared, cleared_at] = world_.monitor_scenarios[2 * k + 1];
    EXPECT_EQ(set, names[k]);
    EXPECT_EQ(cleared, "");
    EXPECT_GT(set_at, at("monitor start"));
    EXPECT_LE(set_at, at(std::string("loads start ") + names[k]));
    EXPECT_GT(cleared_at, at(std::string("loads stop ") + names[k]));
    EXPECT_LE(cleared_at, at("monitor stop"));  // the index the next entry takes
  }
}

TEST_F(RunnerTest, ACheckpointIsOnDiskWhileTheScenarioMeasures) {
  Run();
  ASSERT_EQ(world_.checkpoints_seen.size(), 3u);
  const json& during = world_.checkpoints_seen[1];  // inside light's measurement
  EXPECT_EQ(during["status"], "running");
  EXPECT_EQ(during["scenarios"][0]["status"], "complete");
  EXPECT_EQ(during["scenarios"][1]["status"], "measuring");
  EXPECT_TRUE(during["scenarios"][1]["checkpoint"].get<bool>());
  EXPECT_EQ(during["scenarios"][1]["latency"]["thread"]["0"]["stats"]["count"], 1);
  EXPECT_EQ(during["scenarios"][2]["status"], "pending");
  EXPECT_TRUE(during["scenarios"][2]["latency"].is_null());
}

TEST_F(RunnerTest, AnInterruptionWhileSettlingStopsTheLoadsAndRunsNothingMore) {
  plan_.tune = true;
  world_.interrupt_settle_at = 1;  // light
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kInterrupted);
  const Log tail(world_.log.end() - 7, world_.log.end());
  const Log expected = {"progress 2/3 light after 22s",
                        "loads start light",
                        "settle 2s",
                        "loads stop light",
                        "monitor stop",
                        "monitor stats interrupted",
                        "tune restore"};
  EXPECT_EQ(tail, expected);
  // No measurement of light, nothing of heavy; the monitor stopped, the tuning restored.
  EXPECT_EQ(std::count(world_.log.begin(), world_.log.end(), "measure light 10s"), 0);
  EXPECT_EQ(std::count(world_.log.begin(), world_.log.end(), "loads start heavy"), 0);
  EXPECT_EQ(world_.log.back(), "tune restore");
  const json result = ResultJson();
  EXPECT_EQ(result["status"], "interrupted");
  EXPECT_EQ(result["scenarios"][0]["status"], "complete");
  EXPECT_EQ(result["scenarios"][1]["status"], "interrupted");
  EXPECT_NE(result["scenarios"][1]["error"].get<std::string>().find("settled"), std::string::npos);
  EXPECT_TRUE(result["scenarios"][1]["latency"].is_null());
  EXPECT_EQ(result["scenarios"][2]["status"], "pending");
  EXPECT_TRUE(result["tuning"][0]["restored"].get<bool>());
}

TEST_F(RunnerTest, AnInterruptionWhileMeasuringKeepsThePartialResult) {
  world_.interrupt_measuring = "light";
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kInterrupted);
  EXPECT_EQ(std::count(world_.log.begin(), world_.log.end(), "loads stop light"), 1);
  EXPECT_EQ(std::count(world_.log.begin(), world_.log.end(), "loads start heavy"), 0);
  const json result = ResultJson();
  EXPECT_EQ(result["status"], "interrupted");
  EXPECT_EQ(result["scenarios"][1]["status"], "interrupted");
  EXPECT_EQ(result["scenarios"][1]["latency"]["thread"]["0"]["stats"]["count"], 3);
  EXPECT_EQ(result["scenarios"][1]["latency"]["return_code"], 130);
  EXPECT_TRUE(std::filesystem::exists(world_.out_dir + "/light/cyclictest.json"));
}

TEST_F(RunnerTest, FailedLoadsOrMeasurementFailTheScenarioAndTheRunGoesOn) {
  world_.loads_fail = {"idle"};
  world_.measure_fails = {"light"};
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kFailure);
  // Loads that did not start are not stopped or reported; the failed measurement's are.
  EXPECT_EQ(std::count(world_.log.begin(), world_.log.end(), "loads stop idle"), 0);
  EXPECT_EQ(std::count(world_.log.begin(), world_.log.end(), "loads stop light"), 1);
  EXPECT_EQ(std::count(world_.log.begin(), world_.log.end(), "measure heavy 20s"), 1);
  const json result = ResultJson();
  EXPECT_EQ(result["status"], "failed");
  EXPECT_EQ(result["scenarios"][0]["status"], "failed");
  EXPECT_EQ(result["scenarios"][0]["error"], "loads did not start: no such load here");
  EXPECT_TRUE(result["scenarios"][0]["load_reports"].empty());
  EXPECT_EQ(result["scenarios"][1]["status"], "failed");
  EXPECT_EQ(result["scenarios"][1]["error"], "probe thread could not start");
  EXPECT_TRUE(result["scenarios"][1]["latency"].is_null());
  EXPECT_EQ(result["scenarios"][2]["status"], "complete");
  const auto& said = progress_.said;
  EXPECT_NE(std::find(said.begin(), said.end(), "scenario light: probe thread could not start"),
            said.end());
}

TEST_F(RunnerTest, StrictRefusesAfterThePreflightAndStartsNothing) {
  plan_.strict = true;
  plan_.tune = true;
  fail_checks_ = 1;
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kFailure);
  EXPECT_EQ(world_.log, Log{"preflight"});
  EXPECT_EQ(ResultJson()["status"], "refused");
  const auto& said = progress_.said;
  EXPECT_NE(
      std::find(said.begin(), said.end(), "fail: PREEMPT_RT: not set (fix: build an RT kernel)"),
      said.end());
}

TEST_F(RunnerTest, AMonitorThatCannotStartRestoresTheTuningsAndSaysWhy) {
  plan_.tune = true;
  monitor_fails_ = true;
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kResource);
  const Log expected = {"preflight", "tune apply tuning_journal.json",
                        "monitor open thermal_power_log.csv", "tune restore"};
  EXPECT_EQ(world_.log, expected);
}

TEST_F(RunnerTest, AnUnwritableResultsFolderIsAFailureNotAUsageError) {
  if (geteuid() == 0) {
    // root writes anywhere: make result.json a folder instead, which nobody can replace.
    std::filesystem::create_directories(world_.out_dir + "/result.json/x");
  } else {
    std::filesystem::create_directories(world_.out_dir);
    chmod(world_.out_dir.c_str(), 0555);
  }
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kFailure);
  EXPECT_EQ(std::count(world_.log.begin(), world_.log.end(), "monitor start"), 0)
      << "nothing started";
  const auto& said = progress_.said;
  EXPECT_EQ(std::count_if(said.begin(), said.end(),
                          [](const std::string& l) { return l.rfind("error:", 0) == 0; }),
            1)
      << "the write error is said once";
  chmod(world_.out_dir.c_str(), 0755);
}

TEST_F(RunnerTest, ListShowsEveryScenarioWithItsTimesAndTheTotal) {
  const std::string list = FormatScenarioList(plan_);
  EXPECT_NE(list.find("suite 'default' (built-in), CPUs 0-1:"), std::string::npos) << list;
  EXPECT_NE(list.find("heavy          00:00:20 (+00:00:02 settle)  heavy scenario"),
            std::string::npos)
      << list;
  EXPECT_NE(list.find("total about 00:00:46"), std::string::npos) << list;
}

TEST_F(RunnerTest, TheIntegrityCheckReadsAroundTheMeasurementAndWarnsAnIdleThatWasBusy) {
  // Each scenario's CPUs 0-1 advance 1000 ticks each; "light" has 1260 of them busy, rtpulse
  // itself 0 (63 %), the others 100 busy of which rtpulse 40 (3 %).
  uint64_t base = 0;
  int reads = 0;
  services_.busy = [&] {
    world_.log.push_back("busy read");
    BusyReading r;
    const bool after = reads++ % 2 == 1;
    const bool light = reads > 2 && reads <= 4;
    for (const int cpu : {0, 1}) {
      load::CpuTimes t;
      t.total = base + (after ? 1000 : 0);
      t.idle = base + (after ? (light ? 370 : 950) : 0);
      r.cpus[cpu] = t;
    }
    r.own_ticks = after && !light ? 40 : 0;
    r.own_known = true;
    if (after) base += 10'000;
    return r;
  };
  ASSERT_EQ(Run().code, ExitCode::kOk);
  const auto measure = std::find(world_.log.begin(), world_.log.end(), "measure light 10s");
  ASSERT_NE(measure, world_.log.end());
  EXPECT_EQ(*(measure - 1), "busy read");
  // The second reading comes after the measurement (and its checkpoints), before the loads
  // stop.
  const auto second = std::find(measure, world_.log.end(), "busy read");
  const auto stop = std::find(measure, world_.log.end(), "loads stop light");
  EXPECT_LT(second, stop);
  EXPECT_NE(stop, world_.log.end());
  const json r = ResultJson();
  const json& light = r["scenarios"][1];
  EXPECT_DOUBLE_EQ(light["cpu_busy"]["other_busy_percent"].get<double>(), 63.0);
  const std::string warning =
      "scenario integrity: idle scenario was not idle: 63% CPU busy from other work on CPUs 0-1 "
      "(threshold 10%); its latencies were measured under load; no other process was seen "
      "using CPU time (the kernel's own work, or processes that ended in between)";
  EXPECT_NE(std::find(light["warnings"].begin(), light["warnings"].end(), warning),
            light["warnings"].end())
      << light["warnings"].dump(1);
  EXPECT_DOUBLE_EQ(r["scenarios"][0]["cpu_busy"]["other_busy_percent"].get<double>(), 3.0);
  for (const auto& w : r["scenarios"][0]["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("scenario integrity"), std::string::npos) << w;
  }
  EXPECT_NE(ReadFile(world_.out_dir + "/statistical_summary.txt").find("  light: " + warning),
            std::string::npos);
}

}  // namespace
}  // namespace rtpulse::suite

namespace rtpulse::suite {
namespace {

/// One knob for one block: logs its apply and restore; its record says "applied".
class FakeKnob final : public SuiteTuning {
 public:
  explicit FakeKnob(World& w) : w_(w) {}
  Status Restore() override {
    w_.log.push_back("knob restore");
    restored_ = true;
    return Status::Ok();
  }
  void Release() override {
    w_.released_with.push_back(json::parse(ReadFile(w_.out_dir + "/result.json"), nullptr, false));
  }
  json ToJson() const override {
    return json::array(
        {{{"what", "RT throttling"}, {"status", "applied"}, {"restored", restored_}}});
  }
  std::string Describe() const override { return ""; }

 private:
  World& w_;
  bool restored_ = false;
};

TEST_F(RunnerTest, TheGuardianIsReleasedOnlyOnceTheFinalResultIsOnDisk) {
  // Releasing before the last write would let a SIGKILL in between leave "running" with the
  // tunings applied on disk and no guardian to mark it killed.
  plan_.tune = true;
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kOk);
  ASSERT_EQ(world_.released_with.size(), 1u);
  const json& on_disk = world_.released_with[0];
  ASSERT_FALSE(on_disk.is_discarded());
  EXPECT_EQ(on_disk["status"], "complete");
  EXPECT_EQ(on_disk["tuning"][0]["restored"], true);
  EXPECT_EQ(on_disk, ResultJson()) << "nothing written after the release";
}

TEST_F(RunnerTest, AnInterruptedRunReleasesItsGuardianAfterTheFinalWriteToo) {
  plan_.tune = true;
  world_.interrupt_measuring = "light";
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kInterrupted);
  ASSERT_EQ(world_.released_with.size(), 1u);
  EXPECT_EQ(world_.released_with[0]["status"], "interrupted");
  EXPECT_EQ(world_.released_with[0]["tuning"][0]["restored"], true);
}

TEST_F(RunnerTest, TuneAbAppliesTheKnobForOnBlocksOnlyAndRestoresItBeforeTheNext) {
  plan_.config.scenarios.resize(1);  // idle
  const json applied = json::array({{{"what", "RT throttling"}, {"status", "applied"}}});
  plan_.tune_ab =
      ExpandTuneAb(plan_.config, {KnobFromRecords(sys::TuneKnob::kRtThrottling, applied)}, 2);
  services_.tune_knob = [this](
                            sys::TuneKnob knob,
                            const std::string& journal) -> Expected<std::unique_ptr<SuiteTuning>> {
    world_.log.push_back("knob apply " + std::string(sys::TuneKnobName(knob)) + " " +
                         std::filesystem::path(journal).parent_path().filename().string());
    return std::unique_ptr<SuiteTuning>(std::make_unique<FakeKnob>(world_));
  };
  const RunOutcome outcome = Run();
  EXPECT_EQ(outcome.code, ExitCode::kOk);
  Log seen;
  for (const auto& line : world_.log) {
    if (line.rfind("knob", 0) == 0 || line.rfind("measure", 0) == 0 ||
        line.rfind("loads st", 0) == 0) {
      seen.push_back(line);
    }
  }
  const Log expected = {"loads start idle-rt-throttling-01-off",
                        "measure idle-rt-throttling-01-off 10s",
                        "loads stop idle-rt-throttling-01-off",
                        "knob apply rt-throttling idle-rt-throttling-01-on",
                        "loads start idle-rt-throttling-01-on",
                        "measure idle-rt-throttling-01-on 10s",
                        "loads stop idle-rt-throttling-01-on",
                        "knob restore",
                        "knob apply rt-throttling idle-rt-throttling-02-on",
                        "loads start idle-rt-throttling-02-on",
                        "measure idle-rt-throttling-02-on 10s",
                        "loads stop idle-rt-throttling-02-on",
                        "knob restore",
                        "loads start idle-rt-throttling-02-off",
                        "measure idle-rt-throttling-02-off 10s",
                        "loads stop idle-rt-throttling-02-off"};
  EXPECT_EQ(seen, expected);
  // Each knob's guardian goes only once result.json records that block's restore.
  ASSERT_EQ(world_.released_with.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const json& on_disk = world_.released_with[i];
    ASSERT_FALSE(on_disk.is_discarded());
    size_t restored_on = 0;
    for (const auto& b : on_disk["tune_ab"]["knobs"][0]["blocks"]) {
      if (b["condition"] == "on" && b["status"] != "pending") {
        EXPECT_TRUE(b["tuning"][0]["restored"].get<bool>()) << b.dump();
        ++restored_on;
      }
    }
    EXPECT_EQ(restored_on, i + 1);
  }
  const json tune_ab = ResultJson()["tune_ab"];
  ASSERT_EQ(tune_ab["knobs"][0]["blocks"].size(), 4u);
  for (const auto& b : tune_ab["knobs"][0]["blocks"]) {
    // The fake workload's three samples: 10, 20 and 30 us.
    EXPECT_EQ(b["max_ns"], 30'000) << b.dump();
    EXPECT_EQ(b["p99.9_ns"], 30'000) << b.dump();
    if (b["condition"] == "on") {
      EXPECT_TRUE(b["tuning"][0]["restored"].get<bool>());
    }
  }
  EXPECT_EQ(tune_ab["knobs"][0]["effects"][0]["note"],
            "not measurable: fewer than 6 complete pairs (2)");
  EXPECT_NE(ReadFile(world_.out_dir + "/tune_ab.txt").find("rt-throttling"), std::string::npos);
}

}  // namespace
}  // namespace rtpulse::suite
