// rtpulse control, whole sweeps and --interference, end to end: the real binary, real
// SCHED_FIFO/RR/DEADLINE threads, real stress-ng, real files. Timing values are never asserted (the
// VM's host steals time); the files are recomputed by tests/cli/control_truth.py and
// tests/results/control_truth.py from the run's own jobs.csv, and injected execution gives exact
// ground truth.
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
#include "support/subprocess.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace control_test;  // NOLINT(google-build-using-namespace)
using testutil::ProcessOptions;
using testutil::ProcessResult;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

TEST_F(ControlTest, PaperSweepRunsSixteenConfigurationsAndLeavesNoStressNg) {
  TempDir dir;
  const std::string run = dir.File("run");
  const std::string marker = ControlMarker();
  ProcessOptions options;
  options.extra_env = {marker};
  options.timeout = std::chrono::milliseconds(240'000);
  const ProcessResult r = RunRtpulse({"control", "--sweep", "paper", "--jobs", "100", "--settle",
                                      "0", "--load", kLightStress, "--quiet", "--out", run},
                                     options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json result = json::parse(ReadFile(run + "/result.json"));
  ASSERT_EQ(result["scenarios"].size(), 16u);
  const std::vector<std::string> names = {
      "other-0",        "other-0-stress",        "other-n19",      "other-n19-stress",
      "fifo-50",        "fifo-50-stress",        "fifo-99",        "fifo-99-stress",
      "rr-50",          "rr-50-stress",          "rr-99",          "rr-99-stress",
      "deadline-400us", "deadline-400us-stress", "deadline-800us", "deadline-800us-stress"};
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(result["scenarios"][i]["name"], names[i]);
    EXPECT_EQ(result["scenarios"][i]["status"], "complete");
    // Each policy really applied: the policy the kernel reports for the job's thread.
    const json control = json::parse(ReadFile(run + "/" + names[i] + "/control.json"));
    EXPECT_EQ(control["applied_policy"], control["policy"]) << names[i];
    const bool stressed = names[i].ends_with("-stress");
    EXPECT_EQ(result["scenarios"][i]["loads"].size(), stressed ? 1u : 0u) << names[i];
  }
  // The summary table: a header, 16 rows, then the notes.
  size_t rows = 0;
  for (const auto& n : names) {
    std::stringstream out(r.out);
    std::string line;
    while (std::getline(out, line)) rows += line.rfind(n + " ", 0) == 0 ? 1u : 0u;
  }
  EXPECT_EQ(rows, 16u) << r.out;
  ExpectTruth(run, r.out);
  // The figures: one curve per configuration, standard and stress paired per policy.
  const std::string cdf = ReadFile(run + "/figures/control_response_cdf.dat");
  for (const auto& n : names) EXPECT_NE(cdf.find(n), std::string::npos) << n;
  EXPECT_TRUE(fs::exists(run + "/figures/control_response_boxes.dat"));
  EXPECT_TRUE(ControlLeftovers(marker).empty());
}

TEST_F(ControlTest, InterferenceListsFourConditionsAndSaysWhichCountersThereAre) {
  TempDir dir;
  const std::string run = dir.File("run");
  const std::string marker = ControlMarker();
  ProcessOptions options;
  options.extra_env = {marker};
  options.timeout = std::chrono::milliseconds(300'000);
  const ProcessResult r = RunRtpulse(
      {"control", "--interference", "--jobs", "20", "--repetitions", "3", "--quiet", "--out", run},
      options);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string text = ReadFile(run + "/interference.txt");
  EXPECT_EQ(text + "results: " + run + "\n", r.out);
  for (const char* condition : {"isolated", "cpu-other", "memory-other", "own-cpu"}) {
    EXPECT_NE(text.find(condition), std::string::npos) << condition << "\n" << text;
  }
  const json doc = json::parse(ReadFile(run + "/interference.json"));
  EXPECT_EQ(doc["conditions"].size(), 4u) << doc.dump(1);
  // This VM has no PMU: the hardware counters say so; the software ones are counted.
  EXPECT_NE(text.find("not supported here"), std::string::npos) << text;
  EXPECT_NE(text.find("context-switches"), std::string::npos) << text;

  // docs/control.md#interference: the intervals are over repetitions, so a second run of the
  // same conditions gives intervals that overlap the first's (pooled jobs did not).
  const std::string again = dir.File("again");
  const ProcessResult r2 = RunRtpulse({"control", "--interference", "--jobs", "20", "--repetitions",
                                       "3", "--quiet", "--out", again},
                                      options);
  ASSERT_EQ(r2.exit_code, 0) << r2.err << r2.out;
  const json doc2 = json::parse(ReadFile(again + "/interference.json"));
  int compared = 0;
  for (size_t k = 1; k < doc["conditions"].size(); ++k) {
    const json& a = doc["conditions"][k]["inflation"];
    const json& b = doc2["conditions"][k]["inflation"];
    ASSERT_FALSE(a.is_null()) << doc["conditions"][k].dump();
    ASSERT_FALSE(b.is_null()) << doc2["conditions"][k].dump();
    EXPECT_EQ(a["base_n"], 3);
    EXPECT_EQ(a["cond_n"], 3);
    EXPECT_LE(a["ci_low_pct"].get<double>(), b["ci_high_pct"].get<double>())
        << doc["conditions"][k]["name"] << ": " << a.dump() << " vs " << b.dump();
    EXPECT_LE(b["ci_low_pct"].get<double>(), a["ci_high_pct"].get<double>())
        << doc["conditions"][k]["name"] << ": " << a.dump() << " vs " << b.dump();
    ++compared;
  }
  EXPECT_EQ(compared, 3);
  EXPECT_TRUE(ControlLeftovers(marker).empty());
}

}  // namespace
}  // namespace rtpulse
