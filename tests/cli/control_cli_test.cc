// rtpulse control, end to end: the real binary, real SCHED_FIFO/RR/DEADLINE threads, real
// stress-ng, real files. Timing values are never asserted (the VM's host steals time); the
// files are recomputed by tests/cli/control_truth.py and tests/results/control_truth.py from
// the run's own jobs.csv, and injected execution gives exact ground truth.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/control_cli_support.h"
#include "results/control_summary.h"
#include "support/subprocess.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace control_test;  // NOLINT(google-build-using-namespace)
using testutil::ProcessOptions;
using testutil::ProcessResult;
using testutil::ReadFile;
using testutil::RunProcess;
using testutil::RunRtpulse;
using testutil::TempDir;

/// One fifo:50 run with every 50th job spinning 6 ms more, shared by the tests below.
class ControlFifoRun : public ControlTest {
 protected:
  static void SetUpTestSuite() {
    if (!testutil::IsRoot()) return;
    dir_ = new TempDir();
    run_ = dir_->File("run");
    result_ = new ProcessResult(RunRtpulse({"control", "--policy", "fifo:50", "--jobs", "300",
                                            "--no-stress", "--inject-exec", "50:6ms", "--quiet",
                                            "--json", dir_->File("summary.json"), "--out", run_}));
  }
  static void TearDownTestSuite() {
    delete result_;
    delete dir_;
    result_ = nullptr;
    dir_ = nullptr;
  }
  static TempDir* dir_;
  static ProcessResult* result_;
  static std::string run_;
};
TempDir* ControlFifoRun::dir_ = nullptr;
ProcessResult* ControlFifoRun::result_ = nullptr;
std::string ControlFifoRun::run_;

TEST_F(ControlFifoRun, LeavesTheScenarioFilesAndEveryNumberMatchesThePythonTruth) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  const std::string s = run_ + "/fifo-50";
  for (const char* f : {"response_times.txt", "jobs.csv", "statistical_report.txt", "control.json",
                        "samples.bin", "cyclictest.json"}) {
    EXPECT_TRUE(fs::exists(s + "/" + f)) << f;
  }
  ExpectTruth(run_, result_->out);
  // statistical_report.txt against Python's statistics module over response_times.txt.
  const json control = json::parse(ReadFile(s + "/control.json"));
  const ProcessResult truth = RunProcess(
      {"/usr/bin/python3", Source("tests/results/control_truth.py"), s + "/response_times.txt",
       s + "/jobs.csv", std::to_string(control["skipped_after_last"].get<uint32_t>())});
  ASSERT_EQ(truth.exit_code, 0) << truth.err;
  const std::string report = ReadFile(s + "/statistical_report.txt");
  size_t from = 0;
  int blocks = 0;
  while (from <= truth.out.size()) {
    size_t to = truth.out.find("\n--\n", from);
    if (to == std::string::npos) to = truth.out.size();
    const std::string block = truth.out.substr(from, to - from);
    EXPECT_NE(report.find(block), std::string::npos) << block << "\nreport:\n" << report;
    ++blocks;
    from = to + 4;
  }
  EXPECT_EQ(blocks, 8);  // no release unknown: no "of them certain misses" block
  EXPECT_EQ(control["policy"], "fifo:50");
  EXPECT_EQ(control["applied_policy"], "fifo:50");
  EXPECT_EQ(control["counters"]["context-switches"]["value"].is_number(), true) << control;
  // --json: the same counts as the folder.
  const json summary = json::parse(ReadFile(dir_->File("summary.json")));
  ASSERT_EQ(summary["configurations"].size(), 1u);
  EXPECT_EQ(summary["configurations"][0]["jobs"], control["jobs"]);
  EXPECT_EQ(summary["configurations"][0]["misses"], control["misses"]);
  EXPECT_EQ(summary["configurations"][0]["skipped"], control["skipped"]);
  EXPECT_EQ(summary["status"], "complete");
  // The summary's reader takes what the run wrote and gives the same document back.
  auto summary_back = results::ControlSummaryFromJson(summary);
  ASSERT_TRUE(summary_back) << summary_back.error().message;
  EXPECT_EQ(summary_back->configurations.at(0).row.jobs, control["jobs"].get<uint64_t>());
  EXPECT_EQ(results::ToJson(*summary_back), summary);
  // The control cost line printed per configuration is the one control.json holds.
  EXPECT_NE(result_->out.find("fifo-50: " + control["control_cost"]["summary"].get<std::string>()),
            std::string::npos)
      << result_->out;
}

TEST_F(ControlFifoRun, InjectedExecutionGivesExactlyThoseMissesAndSkippedReleases) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  const std::vector<Job> jobs = ReadJobs(run_ + "/fifo-50/jobs.csv");
  ASSERT_EQ(jobs.size(), 300u);
  uint64_t skipped = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    skipped += j.skipped_before;
    EXPECT_EQ(j.miss, j.end - j.release > 4'000'000) << "job " << i;
    if (i % 50 == 49) {
      // 6 ms more than a 4 ms period: a miss, and the next release is skipped (the job ends
      // before the one after it: wake-up + exec stay below 2 ms here).
      EXPECT_TRUE(j.miss) << "injected job " << i;
      EXPECT_GE(j.end - j.start, 6'000'000) << "injected job " << i;
      if (i + 1 < jobs.size()) {
        EXPECT_EQ(jobs[i + 1].skipped_before, 1u) << "after job " << i;
      }
    }
  }
  const json control = json::parse(ReadFile(run_ + "/fifo-50/control.json"));
  // The last job (299) is an injected one: the release it ran past follows no job, so
  // control.json counts it apart (skipped_after_last) and in skipped and releases.
  const uint64_t after_last = control["skipped_after_last"].get<uint64_t>();
  EXPECT_GE(after_last, 1u);
  EXPECT_EQ(after_last,
            static_cast<uint64_t>((jobs.back().end - jobs.back().release - 1) / 4'000'000))
      << "the skip rule for the last job";
  EXPECT_EQ(control["skipped"].get<uint64_t>(), skipped + after_last);
  EXPECT_EQ(control["releases"].get<uint64_t>(), jobs.size() + skipped + after_last);
  EXPECT_EQ(control["inject"]["every"], 50);
  // Jobs 49, 99, ..., 299: six injected misses, each skipping at least the release after it
  // (the last one's after the last job). A host stall can add more, never fewer.
  EXPECT_GE(control["misses"].get<uint64_t>(), 6u);
  EXPECT_GE(skipped + after_last, 6u);
}

TEST_F(ControlFifoRun, ReportCompareAndWcetReadTheFolderUnchanged) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  const ProcessResult report = RunRtpulse({"report", run_});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  // Issue 35 item 5: a control run's own figures are in the page, drawn again from its
  // jobs.csv, inline; about 220 KB in all for this one configuration.
  const std::string html = ReadFile(run_ + "/report/index.html");
  const size_t section = html.find("<section id=\"control-figures\">");
  ASSERT_NE(section, std::string::npos);
  for (const char* figure : {"control_response_cdf", "control_response_boxes"}) {
    const size_t at = html.find(std::string("<figure id=\"fig-") + figure + "\"><svg", section);
    EXPECT_NE(at, std::string::npos) << figure;
    EXPECT_TRUE(fs::exists(run_ + "/figures/" + figure + ".dat")) << figure;
  }
  EXPECT_LT(html.find("<section id=\"first-screen\">"), html.find("id=\"summary\""));
  EXPECT_LT(html.size(), 400'000u) << "report/index.html grew to " << html.size() << " bytes";
  const ProcessResult compare = RunRtpulse({"compare", run_, run_});
  EXPECT_EQ(compare.exit_code, 0) << compare.err;
  const ProcessResult wcet = RunRtpulse({"wcet", run_});
  EXPECT_EQ(wcet.exit_code, 0) << wcet.err;
  EXPECT_TRUE(fs::exists(run_ + "/wcet/wcet.json"));
}

TEST_F(ControlTest, SigintMidRunExits130WithMarkedValidPartialFilesAndNoStressNg) {
  TempDir dir;
  const std::string run = dir.File("run");
  const std::string marker = ControlMarker();
  ProcessOptions options;
  options.extra_env = {marker};
  options.signal = SIGINT;
  // fifo-99 (1000 jobs, 4 s), then fifo-99-stress: SIGINT comes 1.5 s after result.json first
  // shows the second started (settling, with --settle 0 its loads start and its loop is set
  // up), in the middle of its 4 s: watched, not a guessed time (a slow start under a
  // sanitizer or a loaded host shifts it).
  options.signal_when = testutil::WhenStateHeldFor(
      [&] {
        const json j = json::parse(ReadFile(run + "/result.json"), nullptr, false);
        if (j.is_discarded() || !j.contains("scenarios") || j["scenarios"].size() < 2) return false;
        const std::string second = j["scenarios"][1].value("status", "");
        return second == "settling" || second == "measuring";
      },
      std::chrono::milliseconds(1500));
  const ProcessResult r =
      RunRtpulse({"control", "--policy", "fifo:99", "--jobs", "1000", "--settle", "0", "--load",
                  kLightStress, "--quiet", "--out", run},
                 options);
  ASSERT_EQ(r.exit_code, 130) << r.err;
  const json result = json::parse(ReadFile(run + "/result.json"));
  EXPECT_EQ(result["status"], "interrupted");
  ASSERT_EQ(result["scenarios"].size(), 2u);
  EXPECT_EQ(result["scenarios"][0]["status"], "complete");
  EXPECT_EQ(result["scenarios"][1]["status"], "interrupted");
  const std::string s = run + "/fifo-99-stress";
  const json control = json::parse(ReadFile(s + "/control.json"));
  EXPECT_TRUE(control["interrupted"].get<bool>());
  const uint64_t jobs = control["jobs"].get<uint64_t>();
  EXPECT_GT(jobs, 10u);
  EXPECT_LT(jobs, 1000u);
  EXPECT_EQ(ReadJobs(s + "/jobs.csv").size(), jobs);
  EXPECT_NE(ReadFile(s + "/statistical_report.txt").find("Interrupted: yes"), std::string::npos);
  EXPECT_TRUE(result["scenarios"][1]["latency"]["rtpulse"]["interrupted"].get<bool>());
  // The partial files are whole: the truth script recomputes them (and the summary printed).
  ExpectTruth(run, r.out);
  EXPECT_TRUE(ControlLeftovers(marker).empty());
}

TEST_F(ControlTest, SigkillAfterACheckpointLeavesTheJobsSoFarInResultJson) {
  TempDir dir;
  const std::string run = dir.File("run");
  const std::string marker = ControlMarker();
  ProcessOptions options;
  options.extra_env = {marker};
  options.signal = SIGKILL;
  // 1500 jobs of 4 ms (6 s): killed 4 s after the start, after the 1 s checkpoint(s).
  options.signal_after = std::chrono::milliseconds(4000);
  const ProcessResult r =
      RunRtpulse({"control", "--policy", "fifo:50", "--jobs", "1500", "--no-stress",
                  "--inject-exec", "50:6ms", "--checkpoint", "1s", "--quiet", "--out", run},
                 options);
  ASSERT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  const json result = json::parse(ReadFile(run + "/result.json"));
  EXPECT_EQ(result["status"], "running");
  ASSERT_EQ(result["scenarios"].size(), 1u);
  const json& s = result["scenarios"][0];
  EXPECT_EQ(s["status"], "measuring") << "a checkpoint is not a complete scenario";
  EXPECT_TRUE(s["checkpoint"].get<bool>());
  ASSERT_EQ(s["latency"]["thread"].size(), 1u) << s.dump();
  const json& t = s["latency"]["thread"]["0"];
  const uint64_t samples = t["cycles"].get<uint64_t>();
  const uint64_t skipped = t["skipped_periods"].get<uint64_t>();
  const uint64_t periods = t["periods_elapsed"].get<uint64_t>();
  // At least most of one second of jobs (the set-up of the loop's thread is not measured).
  EXPECT_GT(samples, 100u);
  EXPECT_LT(samples, 1500u);
  // The note names the jobs the snapshot held; the histogram holds exactly those.
  const std::string note = t["notes"].back().get<std::string>();
  EXPECT_NE(note.find("checkpoint: the " + std::to_string(samples) + " jobs so far (" +
                      std::to_string(periods) + " releases)"),
            std::string::npos)
      << note;
  uint64_t in_histogram = 0;
  uint64_t over_6ms = 0;
  for (const auto& b : t["histogram_log"]) {
    in_histogram += b[2].get<uint64_t>();
    if (b[1].get<int64_t>() >= 6'000'000) over_6ms += b[2].get<uint64_t>();
  }
  EXPECT_EQ(in_histogram, samples);
  EXPECT_EQ(periods, samples + skipped);
  EXPECT_EQ(t["per_period"]["periods"].get<uint64_t>(), periods);
  // Ground truth: jobs 49, 99, ... spin 6 ms (a response above 6 ms, a miss), and each skips
  // the release after it, counted in the next job (one the snapshot holds for all but the
  // last). A host stall can add more, never fewer.
  EXPECT_GE(over_6ms, samples / 50);
  EXPECT_GE(skipped, (samples - 1) / 50);
  EXPECT_GE(t["missed_activations"].get<uint64_t>(), (samples - 1) / 50);
  // No more releases than the checkpoint's elapsed time holds (the first is after its start).
  const int64_t duration_ns = s["latency"]["rtpulse"]["paths"][0]["duration_ns"].get<int64_t>();
  EXPECT_LE(static_cast<int64_t>(periods), duration_ns / 4'000'000 + 1) << duration_ns;
  EXPECT_TRUE(ControlLeftovers(marker).empty());
}

TEST_F(ControlTest, PathsSweepRunsThePolicyOnEachActivationPath) {
  TempDir dir;
  const std::string run = dir.File("run");
  const ProcessResult r = RunRtpulse({"control", "--sweep", "paths", "--policy", "fifo:80",
                                      "--jobs", "100", "--no-stress", "--quiet", "--out", run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json result = json::parse(ReadFile(run + "/result.json"));
  ASSERT_EQ(result["scenarios"].size(), 3u);
  const std::vector<std::string> paths = {"abs", "timerfd", "posix"};
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string name = "fifo-80-" + paths[i];
    EXPECT_EQ(result["scenarios"][i]["name"], name);
    const json control = json::parse(ReadFile(run + "/" + name + "/control.json"));
    EXPECT_EQ(control["wake"], paths[i]);
    EXPECT_EQ(control["applied_policy"], "fifo:80");
    EXPECT_EQ(result["scenarios"][i]["latency"]["thread"]["0"]["wake"], paths[i]);
  }
  ExpectTruth(run, r.out);
}

// A SCHED_DEADLINE run whose deadline (2 ms) is shorter than its period (4 ms): every 10th job
// spins 2.5 ms more, a certain miss that skips no release, so a count of skipped releases
// cannot pass for the misses. The one miss count is read from every file that states it:
// jobs.csv, control.json, result.json, statistical_report.txt, the printed table, --json and
// the report's HTML; the Python truth recomputes the rest from jobs.csv, leaving out of every
// statistic the jobs whose release the kernel's period restart hid (release_known 0).
TEST_F(ControlTest, ADeadlineRunStatesOneMissCountInEveryFile) {
  TempDir dir;
  const std::string run = dir.File("run");
  const ProcessResult r =
      RunRtpulse({"control", "--policy", "deadline:3500us/4ms/4ms", "--deadline", "2ms", "--jobs",
                  "100", "--no-stress", "--inject-exec", "10:2500us", "--quiet", "--json",
                  dir.File("summary.json"), "--out", run});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json result = json::parse(ReadFile(run + "/result.json"));
  ASSERT_EQ(result["scenarios"].size(), 1u);
  const std::string name = result["scenarios"][0]["name"];
  const std::string s = run + "/" + name;
  const json control = json::parse(ReadFile(s + "/control.json"));
  EXPECT_EQ(control["deadline_ns"], 2'000'000);
  EXPECT_EQ(control["applied_policy"], "deadline:3500us/4ms/4ms");
  const std::vector<Job> jobs = ReadJobs(s + "/jobs.csv");
  ASSERT_EQ(jobs.size(), 100u);
  uint64_t misses = 0;
  uint64_t uncertain = 0;  // releases unknown and not known to have missed (ci45 had 4)
  for (size_t i = 0; i < jobs.size(); ++i) {
    misses += jobs[i].miss ? 1U : 0U;
    uncertain += !jobs[i].release_known && !jobs[i].miss ? 1U : 0U;
    // 2.5 ms of execution alone is above the 2 ms deadline, known release or not.
    if (i % 10 == 9) {
      EXPECT_TRUE(jobs[i].miss) << "injected job " << i;
    }
  }
  EXPECT_GE(misses, 10u);
  EXPECT_EQ(control["misses"], misses);
  // Every JSON file says how many may have missed unseen, so its count is a lower bound.
  EXPECT_EQ(control["misses_unknown"], uncertain);
  EXPECT_EQ(control["misses_is_lower_bound"], uncertain > 0);
  const json& thread = result["scenarios"][0]["latency"]["thread"]["0"];
  EXPECT_EQ(thread["missed_activations"], misses) << thread.dump();
  EXPECT_EQ(thread.value("misses_unknown", uint64_t{0}), uncertain) << thread.dump();
  EXPECT_EQ(thread.value("missed_activations_is_lower_bound", false), uncertain > 0);
  const json cyclictest = json::parse(ReadFile(s + "/cyclictest.json"));
  EXPECT_EQ(cyclictest["thread"]["0"].value("misses_unknown", uint64_t{0}), uncertain);
  const std::string study = ReadFile(s + "/statistical_report.txt");
  // A lower bound when some job whose release is unknown may have missed too.
  EXPECT_NE(
      study.find(fmt::format("Deadline misses: {}{} (", uncertain > 0 ? "at least " : "", misses)),
      std::string::npos)
      << study;
  EXPECT_EQ(study.find("WARNING"), std::string::npos) << study;
  const json summary = json::parse(ReadFile(dir.File("summary.json")));
  EXPECT_EQ(summary["configurations"][0]["misses"], misses);
  EXPECT_EQ(summary["configurations"][0]["misses_unknown"], uncertain);
  EXPECT_EQ(summary["configurations"][0]["misses_is_lower_bound"], uncertain > 0);
  EXPECT_EQ(summary["configurations"][0]["jobs"], 100);
  EXPECT_EQ(summary["configurations"][0]["responses"],
            100 - control["release_unknown_jobs"].size());
  // The report's scenario table: the misses column of this scenario's row.
  const ProcessResult report = RunRtpulse({"report", "--formats", "svg", run});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string html = ReadFile(run + "/report/index.html");
  // Its first cell: the scenario's name and wake path.
  const std::string row_start = "<tr><td class=\"l\">" + name + " (";
  const size_t row = html.find(row_start);
  ASSERT_NE(row, std::string::npos) << html.substr(0, 4000);
  const std::string line = html.substr(row, html.find('\n', row) - row);
  std::vector<std::string> cells;
  for (size_t at = line.find("<td"); at != std::string::npos; at = line.find("<td", at + 1)) {
    const size_t open = line.find('>', at) + 1;
    cells.push_back(line.substr(open, line.find("</td>", open) - open));
  }
  ASSERT_GE(cells.size(), 13u) << line;
  EXPECT_EQ(cells[12], (uncertain > 0 ? "\u2265" : "") + std::to_string(misses)) << line;
  ExpectTruth(run, r.out);
}

TEST_F(ControlTest, ExecCalibrationIsRecordedWithItsCaveat) {
  TempDir dir;
  const std::string run = dir.File("run");
  const ProcessResult r = RunRtpulse({"control", "--policy", "fifo:60", "--exec", "300", "--jobs",
                                      "100", "--no-stress", "--quiet", "--out", run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json control = json::parse(ReadFile(run + "/fifo-60/control.json"));
  const json& c = control["calibration"];
  ASSERT_TRUE(c.is_object()) << control;
  EXPECT_EQ(c["target_ns"], 300'000);
  EXPECT_GT(c["extra_passes"].get<int64_t>(), 0);
  EXPECT_GT(c["measured_ns"].get<int64_t>(), c["one_pass_ns"].get<int64_t>());
  EXPECT_NE(c["caveat"].get<std::string>().find("frequency"), std::string::npos);
  EXPECT_NE(ReadFile(run + "/fifo-60/statistical_report.txt").find("--exec 300 us"),
            std::string::npos);
  ExpectTruth(run, r.out);
}

/// A fixture /sys and /proc: CPUs 0 and 2-3 online, 1 GiB available, a 4 MiB last-level cache.
class ControlFixtureTree {
 public:
  ControlFixtureTree() {
    const std::string cpu = dir_.File("sys/devices/system/cpu");
    fs::create_directories(cpu + "/cpu0/cache/index0");
    fs::create_directories(cpu + "/cpu0/cache/index3");
    fs::create_directories(dir_.File("proc"));
    std::ofstream(cpu + "/online") << "0,2-3\n";
    std::ofstream(cpu + "/cpu0/cache/index0/size") << "32K\n";
    std::ofstream(cpu + "/cpu0/cache/index3/size") << "4096K\n";
    std::ofstream(dir_.File("proc/meminfo")) << "MemTotal:        2097152 kB\n"
                                                "MemAvailable:    1048576 kB\n";
  }
  std::string root() const { return dir_.path(); }

 private:
  TempDir dir_;
};

TEST(ControlBadInputTest, EveryBadValueIsNamedExitsTwoAndWritesNothing) {
  ControlFixtureTree tree;
  TempDir dir;
  const std::string out = dir.File("never");
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> named;  ///< What the one-line message must say.
  };
  const std::vector<Case> cases = {
      {{"--policy", "fast:50"}, {"fast:50"}},
      {{"--policy", "deadline:5ms/4ms/4ms"}, {"deadline:5ms/4ms/4ms"}},
      {{"--period", "0"}, {"--period", "'0'"}},
      {{"--period", "4"}, {"--period", "'4'", "needs a unit", "4ms"}},
      {{"--deadline", "3.5"}, {"--deadline", "'3.5'", "3.5ms"}},
      {{"--policy", "fifo:100"}, {"100", "1..99"}},
      {{"--policy", "rr:0"}, {"rr:0"}},
      {{"--policy", "other:25"}, {"25"}},
      {{"--policy", "deadline:400us/4ms/5ms"}, {"deadline:400us/4ms/5ms", "--period"}},
      {{"--cpu", "1"}, {"CPU 1", "not online", "0,2-3"}},
      {{"--work-set", "2G"}, {"2G", "MemAvailable", "1024 MiB"}},
      {{"--work-set", "12Q"}, {"12Q"}},
      {{"--interference", "--work-set", "1M"}, {"1M", "4096 KiB", "8192K"}},
      {{"--sweep", "papers"}, {"papers"}},
      {{"--wake", "nosuchpath"}, {"nosuchpath"}},
      {{"--inject-exec", "0:6ms"}, {"0:6ms"}},
      {{"--jobs", "0"}, {"--jobs 0"}},
      {{"--exec", "1ns"}, {"--exec", "1"}},
      {{"--interference", "--load", "cpu"}, {"--load"}},
      {{"--sweep", "paths", "--policy", "deadline:400us/4ms/4ms"}, {"--sweep paths"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"control", "--out", out, "--quiet"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    ProcessOptions options;
    options.extra_env = {"RTPULSE_SYSROOT=" + tree.root()};
    const ProcessResult r = RunRtpulse(args, options);
    SCOPED_TRACE(args.back());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const auto& word : c.named) EXPECT_NE(r.err.find(word), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "output folder created";
  }
}

}  // namespace
}  // namespace rtpulse
