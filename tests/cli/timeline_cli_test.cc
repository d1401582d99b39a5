// The report's latency-over-time figure on a real short `suite --samples` run: every
// per-second point and the caption's counts equal tests/cli/timeline_truth.py's computation
// over `rtpulse samples --csv` of the same samples.bin (docs/report.md).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::cli {
namespace {

namespace fs = std::filesystem;
using testutil::RunProcess;
using testutil::RunRtpulse;
using testutil::TempDir;

/// tests/cli/timeline_truth.py over `rtpulse samples --csv BIN` against the figure's `dat`.
testutil::ProcessResult TimelineTruth(const TempDir& dir, const std::string& bin,
                                      const std::string& dat) {
  const auto csv = RunRtpulse({"samples", "--csv", bin});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  const std::string csv_path = dir.File("samples.csv");
  std::ofstream(csv_path) << csv.out;
  return RunProcess({"/usr/bin/python3",
                     std::string(RTPULSE_SOURCE_DIR) + "/tests/cli/timeline_truth.py", csv_path,
                     dat});
}

TEST(TimelineCliTest, PerSecondPointsEqualPythonOverTheSamplesText) {
  TempDir dir;
  const std::string run = dir.File("run");
  const auto suite = RunRtpulse({"suite", "--scenarios", "idle", "-D", "3s", "--settle", "0s",
                                 "--cpus", "0,1", "--samples", "-q", "--out", run});
  ASSERT_EQ(suite.exit_code, 0) << suite.err;
  const auto report = RunRtpulse({"report", run, "--formats", "svg"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string dat = run + "/figures/timeline_idle.dat";
  ASSERT_TRUE(fs::exists(dat)) << report.out;

  const auto truth = TimelineTruth(dir, run + "/idle/samples.bin", dat);
  ASSERT_EQ(truth.exit_code, 0) << truth.out << truth.err;
  const auto counts = nlohmann::json::parse(truth.out);
  // 3 s on 2 CPUs at the default 1 ms: the points cover every second the deadlines fell in.
  EXPECT_GE(counts["seconds"].get<int>(), 3) << truth.out;
  EXPECT_GE(counts["samples"].get<int>(), 2 * 2500) << truth.out;
}

TEST(TimelineCliTest, ATruncatedSamplesFileIsReadUpToItsLastWholeRecord) {
  TempDir dir;
  const std::string run = dir.File("run");
  ASSERT_EQ(RunRtpulse({"suite", "--scenarios", "idle", "-D", "2s", "--settle", "0s", "--cpus", "0",
                        "--samples", "-q", "--out", run})
                .exit_code,
            0);
  // A cut-off log (a crash mid-write): no trailer, a partial record at the end. The figure
  // still equals the computation over what `samples` reads, and says the run did not end
  // cleanly.
  const std::string bin = run + "/idle/samples.bin";
  fs::resize_file(bin, fs::file_size(bin) - 1000);
  const auto report = RunRtpulse({"report", run, "--formats", "svg"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string dat = run + "/figures/timeline_idle.dat";
  std::ifstream in(dat);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("the run did not end cleanly"), std::string::npos) << text;
  const auto truth = TimelineTruth(dir, bin, dat);
  EXPECT_EQ(truth.exit_code, 0) << truth.out << truth.err;
}

}  // namespace
}  // namespace rtpulse::cli
