// rtpulse hwlat end to end: a real run (busy loop and kernel trace) whose every number an
// independent script recomputes from its events file, with a thread of the test taking the
// measured CPU at known times (its time must never count as hardware latency); bad input
// refused before anything runs or is written; without the trace's privilege exit 3; SIGINT
// leaving valid partial results.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/clock.h"
#include "core/cpus.h"
#include "support/cli_refusal.h"
#include "support/cpu_taker.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "support/tracefs.h"

namespace rtpulse {
namespace {

using nlohmann::json;
using testutil::ProcessOptions;
using testutil::ProcessResult;
using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

std::string MeasuredCpu() {
  return std::to_string(OnlineCpus(FsRoot::Live()).back());
}

TEST(HwlatCliTest, EveryNumberMatchesThePythonTruthAndAThreadsTimeIsNeverHardware) {
  if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const int cpu = OnlineCpus(FsRoot::Live()).back();
  // The test's own thread at SCHED_FIFO 96, above the loop's 95: 2 ms every 100 ms.
  std::vector<testutil::Span> spans;
  std::string error;
  std::thread taker([&] {
    spans = testutil::TakeTheCpu(cpu, 96, MonotonicNs() + 500 * kNsPerMs, 100 * kNsPerMs,
                                 2 * kNsPerMs, 10, &error);
  });
  const ProcessResult r =
      RunRtpulse({"hwlat", "--cpu-list", std::to_string(cpu), "--duration", "2", "--threshold",
                  "10", "--hardlimit", "500us", "--json", dir.File("hwlat.json"), "--report",
                  dir.File("report.txt"), "--events", dir.File("events.csv")});
  taker.join();
  ASSERT_EQ(spans.size(), 10u) << "the test's thread could not take CPU " << cpu << ": " << error;
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.err << r.out;
  std::ofstream(dir.File("stdout.txt")) << r.out;
  const ProcessResult truth = testutil::RunProcess(
      {"/usr/bin/python3", std::string(testutil::SourceDirPath()) + "/tests/cli/hwlat_truth.py",
       dir.File("hwlat.json"), dir.File("events.csv"), dir.File("report.txt"),
       dir.File("stdout.txt")});
  ASSERT_EQ(truth.exit_code, 0) << truth.err << truth.out;
  const json doc = json::parse(ReadFile(dir.File("hwlat.json")));
  EXPECT_EQ(r.exit_code, doc["failed"].get<bool>() ? 4 : 0) << "exit 4 exactly when failed";
  EXPECT_EQ(doc["mode"], "loop");
  EXPECT_EQ(doc["threshold_ns"], 10'000);
  EXPECT_EQ(doc["hardlimit_ns"], 500'000);
  EXPECT_EQ(doc["cpus"][0]["not_examined"], 0) << "every gap above the threshold attributed";
  EXPECT_NE(r.out.find("hwlatdetect:  test duration 2 seconds"), std::string::npos) << r.out;
  // Each span's gap: the thread's time (and interrupts in it) is never the sample's.
  std::istringstream in(ReadFile(dir.File("events.csv")));
  std::string line;
  std::getline(in, line);
  struct Gap {
    int64_t start = 0, gap = 0, unaccounted = 0;
  };
  std::vector<Gap> gaps;
  while (std::getline(in, line)) {
    Gap g;
    long long irq = 0, soft = 0, thread = 0, sw = 0, idle = 0, lost = 0;
    int c = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%ld,%ld,%lld,%lld,%lld,%lld,%lld,%lld", &c, &g.start,
                          &g.gap, &irq, &soft, &thread, &sw, &idle, &lost),
              9)
        << line;
    g.unaccounted = lost;
    gaps.push_back(g);
  }
  for (const testutil::Span& s : spans) {
    const auto covering = std::find_if(gaps.begin(), gaps.end(), [&](const Gap& g) {
      return g.start <= s.start_ns && g.start + g.gap >= s.end_ns;
    });
    ASSERT_NE(covering, gaps.end()) << "no gap covers the span at " << s.start_ns;
    EXPECT_LE(covering->unaccounted, covering->gap - (s.end_ns - s.start_ns))
        << "the taker's 2 ms counted as hardware, at " << s.start_ns;
  }
}

TEST(HwlatCliTest, BadInputIsOneLineExit2AndNothingWritten) {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  const std::vector<Case> cases = {
      {{"--cpu-list", "4096"}, "--cpu-list 4096"}, {{"--threshold", "0"}, "--threshold 0"},
      {{"--hardlimit", "x"}, "--hardlimit x"},     {{"--duration", "0"}, "--duration 0"},
      {{"--mode", "tracer"}, "--mode tracer"},     {{"--policy", "fast"}, "fast"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"hwlat", "--json", dir.File("h.json")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const ProcessResult r = RunRtpulse(args);
    SCOPED_TRACE(c.named);
    testutil::ExpectOneLineRefusal(r, c.named);
    EXPECT_FALSE(std::filesystem::exists(dir.File("h.json")));
  }
}

// As nobody the kernel trace cannot be had, and loop mode cannot tell hardware from OS noise
// without it: exit 3 with the reason, nothing measured or written.
TEST(HwlatCliTest, WithoutTheTraceNothingRunsAndTheReasonIsSaid) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "runs the binary as nobody, which needs root";
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  ProcessOptions nobody;
  nobody.run_as_uid = 65534;
  const ProcessResult r = RunRtpulse({"hwlat", "--cpu-list", MeasuredCpu(), "--duration", "1",
                                      "--policy", "other", "--json", dir.File("h.json")},
                                     nobody);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("no kernel trace, so hardware cannot be told from OS noise"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir.File("h.json")));
}

TEST(HwlatCliTest, SigintLeavesValidPartialResultsAndExits130) {
  if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  ProcessOptions options;
  options.signal = SIGINT;
  options.signal_after = std::chrono::milliseconds(1500);
  const ProcessResult r = RunRtpulse({"hwlat", "--cpu-list", MeasuredCpu(), "--policy", "other",
                                      "--duration", "60", "--json", dir.File("h.json"), "-q"},
                                     options);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const json doc = json::parse(ReadFile(dir.File("h.json")));
  EXPECT_TRUE(doc["interrupted"].get<bool>());
  EXPECT_GT(doc["cpus"][0]["duration_ns"].get<int64_t>(), 500 * kNsPerMs);
  EXPECT_NE(r.out.find("(interrupted: partial)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("hwlatdetect:"), std::string::npos) << "-q prints the summary only";
}

}  // namespace
}  // namespace rtpulse
