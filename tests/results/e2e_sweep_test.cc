// sweep.json (results/e2e_sweep.h): a file written by `rtpulse e2e --sweep threads` of this
// release (tests/data/e2e/sweep.json) reads back and writes out the same document; thread
// counts keep their number order past 9; a missing or mistyped field is named.
#include "results/e2e_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "support/test_paths.h"

namespace rtpulse::results {
namespace {

std::string SweepFixture() {
  return std::string(RTPULSE_TEST_DATA) + "/e2e/sweep.json";
}

TEST(E2eSweepFileTest, AFileOfTheCurrentReleaseReadsBackAndWritesTheSameDocument) {
  auto recs = ReadSweepFile(SweepFixture());
  ASSERT_TRUE(recs) << recs.error().message;
  ASSERT_EQ(recs->size(), 1u);
  const SweepRecommendation& r = recs->front();
  EXPECT_FALSE(r.loaded);
  ASSERT_EQ(r.p99_total_ns_by_threads.size(), 2u);
  EXPECT_EQ(r.p99_total_ns_by_threads[0].first, 1);
  // The recommendation is the count with the lowest p99 Total, and its p99 is that one.
  const auto lowest =
      std::min_element(r.p99_total_ns_by_threads.begin(), r.p99_total_ns_by_threads.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_EQ(r.threads, lowest->first);
  EXPECT_EQ(r.p99_total_ns, lowest->second);
  std::ifstream in(SweepFixture());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(SweepFileJson(*recs), nlohmann::json::parse(text.str()));
}

TEST(E2eSweepFileTest, ThreadCountsKeepTheirNumberOrderAndRoundTrip) {
  SweepRecommendation r{true, 2, 900, {{1, 1000}, {2, 900}, {10, 1500}}};
  const nlohmann::json doc = SweepFileJson({r});
  auto back = SweepFileFromJson(doc);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_TRUE(back->front().loaded);
  EXPECT_EQ(back->front().p99_total_ns_by_threads, r.p99_total_ns_by_threads);  // 10 after 2
  EXPECT_EQ(SweepFileJson(*back), doc);
}

TEST(E2eSweepFileTest, AMissingOrMistypedFieldIsNamed) {
  auto none = SweepFileFromJson(nlohmann::json::object());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "sweep.json: field 'recommendation' is missing or not a list");
  nlohmann::json doc = SweepFileJson({SweepRecommendation{false, 1, 5, {{1, 5}}}});
  doc["recommendation"][0]["threads"] = "one";
  auto mistyped = SweepFileFromJson(doc);
  ASSERT_FALSE(mistyped);
  EXPECT_EQ(mistyped.error().code, ExitCode::kUsage);
  EXPECT_EQ(mistyped.error().message,
            "sweep.json: recommendation 0: field 'threads' is missing or of the wrong type");
  doc = SweepFileJson({SweepRecommendation{false, 1, 5, {{1, 5}}}});
  doc["recommendation"][0]["p99_total_ns_by_threads"]["x"] = 4;
  EXPECT_FALSE(SweepFileFromJson(doc));
}

}  // namespace
}  // namespace rtpulse::results
