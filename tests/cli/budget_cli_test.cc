// `rtpulse report --budget` on a saved results folder (an import of values the test writes,
// so the true percentiles are known): the verdict, its exit codes and its files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/subprocess.h"

namespace rtpulse {
namespace {

using testutil::ReadFile;
using testutil::RunRtpulse;
using testutil::TempDir;

class ReportBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/bin/gnuplot", X_OK) != 0) GTEST_SKIP() << "gnuplot missing";
    // 1..20000 us, one each: the nearest-rank p99 is sample 19800, exactly 19800 us, and the
    // import keeps the exact percentiles from its samples log.
    std::ofstream values(dir_.File("known.txt"));
    for (int us = 20000; us >= 1; --us) values << us << "\n";
    values.close();
    auto r = RunRtpulse(
        {"import", dir_.File("known.txt"), "--format", "values", "--unit", "us", "--out", run_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  testutil::ProcessResult Report(const std::string& budget) {
    return RunRtpulse(
        {"report", run_, "--budget", budget, "--formats", "svg", "--no-html", "--out", out_});
  }
  TempDir dir_;
  const std::string run_ = dir_.File("run");
  const std::string out_ = dir_.File("out");
};

TEST_F(ReportBudgetTest, AtTheTrueValuePassesOneNanosecondBelowFails) {
  auto pass = Report("19800us@p99");
  EXPECT_EQ(pass.exit_code, 0) << pass.err << pass.out;
  EXPECT_NE(pass.out.find("  known            PASS       per wake-up  p99 19800.000 us, margin "
                          "0.000 us\n"),
            std::string::npos)
      << pass.out;
  EXPECT_NE(pass.out.find("meets 19800 us at p99 in 1 of 1 scenario\n"), std::string::npos);
  EXPECT_NE(ReadFile(out_ + "/tables/verdict.tex").find("known & PASS & 20000 & 19800.000 us"),
            std::string::npos);

  auto fail = Report("19799999ns@p99");
  EXPECT_EQ(fail.exit_code, 4) << fail.err << fail.out;
  EXPECT_NE(fail.out.find("FAIL       per wake-up  p99 19800.000 us, over by 0.001 us"),
            std::string::npos)
      << fail.out;
  EXPECT_NE(fail.out.find("does not meet 19799.999 us at p99 in 0 of 1 scenario; known fails: "
                          "p99 19800.000 us"),
            std::string::npos)
      << fail.out;
}

TEST_F(ReportBudgetTest, TheMaximumAndTheSupportMark) {
  // p99.99 of 20000 samples: rank 19998, not supported (needs 100000).
  auto r = Report("20ms@p99.99");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("p99.99 19998.000 us, margin 2.000 us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p99.99 not supported by 20000 samples; needs >= 100000 samples"),
            std::string::npos)
      << r.out;
  auto max = Report("19999us");
  EXPECT_EQ(max.exit_code, 4);
  EXPECT_NE(max.out.find("max 20000.000 us, over by 1.000 us"), std::string::npos) << max.out;
}

TEST_F(ReportBudgetTest, ABadBudgetIsExitTwoAndWritesNothing) {
  for (const char* bad : {"100", "100us@p101", "@p0", "100us@p99.9.9"}) {
    SCOPED_TRACE(bad);
    auto r = Report(bad);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err.rfind("rtpulse: error: --budget: invalid budget '" + std::string(bad) + "'", 0),
              0u)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(std::filesystem::exists(out_)) << "nothing written";
  }
}

}  // namespace
}  // namespace rtpulse
