// `rtpulse wcet`'s option checks (report/wcet_analysis.h), without running the binary: each
// range's edges; tests/cli/wcet_cli_test.cc runs the analysis end to end.
#include "report/wcet_analysis.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

namespace rtpulse::report {
namespace {

std::string Refusal(const WcetRequest& r) {
  const Status s = CheckWcetRequest(r);
  return s ? std::string() : s.error().message;
}

TEST(WcetRequestTest, EachRangeIsCheckedAtItsEdges) {
  WcetRequest r;
  EXPECT_EQ(Refusal(r), "");
  r.block = 10;
  EXPECT_EQ(Refusal(r), "");
  r.block = 9;
  EXPECT_EQ(Refusal(r),
            "--block 9 is too small; give at least 10 samples per block (default 1000 = 1 s at "
            "1 ms)");
  r = WcetRequest{};
  for (const double ok : {0.5, 0.99, 0.999999}) {
    r.threshold_quantile = ok;
    EXPECT_EQ(Refusal(r), "") << ok;
  }
  for (const double bad : {0.49, 1.0, -1.0}) {
    r.threshold_quantile = bad;
    EXPECT_NE(Refusal(r).find("must be in [0.5, 1)"), std::string::npos) << bad;
  }
  r = WcetRequest{};
  for (const int ok : {0, 100000}) {
    r.bootstrap = ok;
    EXPECT_EQ(Refusal(r), "") << ok;
  }
  for (const int bad : {-1, 100001}) {
    r.bootstrap = bad;
    EXPECT_EQ(Refusal(r), fmt::format("--bootstrap {} must be between 0 and 100000", bad));
  }
}

TEST(WcetRequestTest, ABadRequestIsRefusedBeforeTheRunIsRead) {
  WcetRequest r;
  r.run = "/nonexistent/run";
  r.block = 2;
  std::string note;
  auto run = AnalyseWorstCase(r, SystemCommandRunner(), note);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().message.find("--block 2"), std::string::npos) << run.error().message;
  r.block = 1000;
  run = AnalyseWorstCase(r, SystemCommandRunner(), note);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, ExitCode::kUsage) << run.error().message;
}

}  // namespace
}  // namespace rtpulse::report
