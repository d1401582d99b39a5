// `rtpulse e2e --json`'s run summary (results/e2e_summary.h): a summary reads back into the
// same document, unknown numbers stay null (never 0), a sweep's recommendation comes back in
// thread order, and a missing or mistyped field is named. tests/cli/e2e_cli_test.cc reads
// the summary a run printed with the same reader.
#include "results/e2e_summary.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace rtpulse::results {
namespace {

E2eSummary SummaryExample() {
  E2eSummary s;
  E2eSummaryRow measured;
  measured.scenario = "threads-2";
  measured.configuration = "threads 2";
  measured.threads = 2;
  measured.frames = 120;
  measured.total_count = 120;
  measured.p50_total_ns = 38'000'000;
  measured.p99_total_ns = 41'500'000;
  measured.max_total_ns = 43'000'000;
  measured.misses = 1;
  measured.dropped = 2;
  measured.lost = 0;
  measured.throughput_fps = 24.5;
  measured.backend = "opencv-dnn";
  E2eSummaryRow empty;
  empty.scenario = "loaded";
  empty.loaded = true;
  empty.interrupted = true;
  s.scenarios = {measured, empty};
  s.recommendation =
      std::vector<SweepRecommendation>{{false, 2, 41'500'000, {{1, 50}, {2, 40}, {10, 60}}}};
  s.not_measured = {{"loaded", "interrupted while its loads settled"}};
  s.figure_notes = {"gnuplot not found"};
  s.results = "out";
  s.status = "interrupted";
  return s;
}

TEST(E2eSummaryTest, ASummaryReadsBackIntoTheSameDocument) {
  const nlohmann::json doc = ToJson(SummaryExample());
  EXPECT_TRUE(doc["scenarios"][1]["p99_total_ns"].is_null());
  EXPECT_TRUE(doc["scenarios"][1]["misses"].is_null()) << "no deadline: not counted, not 0";
  EXPECT_TRUE(doc["scenarios"][1]["throughput_fps"].is_null());
  auto back = E2eSummaryFromJson(doc);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->scenarios.size(), 2u);
  EXPECT_EQ(back->scenarios[0].p99_total_ns, 41'500'000);
  EXPECT_EQ(back->scenarios[0].misses, 1u);
  EXPECT_FALSE(back->scenarios[1].p50_total_ns.has_value());
  ASSERT_TRUE(back->recommendation.has_value());
  EXPECT_EQ(back->recommendation->front().threads, 2);
  const std::vector<std::pair<int, int64_t>> in_order = {{1, 50}, {2, 40}, {10, 60}};
  EXPECT_EQ(back->recommendation->front().p99_total_ns_by_threads, in_order) << "10 after 2";
  EXPECT_EQ(back->not_measured.front().why, "interrupted while its loads settled");
  EXPECT_EQ(ToJson(*back), doc);
  // Without --sweep there is no recommendation at all, and none comes back.
  E2eSummary plain = SummaryExample();
  plain.recommendation.reset();
  EXPECT_FALSE(ToJson(plain).contains("recommendation"));
  auto plain_back = E2eSummaryFromJson(ToJson(plain));
  ASSERT_TRUE(plain_back) << plain_back.error().message;
  EXPECT_FALSE(plain_back->recommendation.has_value());
}

TEST(E2eSummaryTest, AMissingOrMistypedFieldIsNamed) {
  nlohmann::json missing = ToJson(SummaryExample());
  missing["scenarios"][1].erase("misses");
  auto a = E2eSummaryFromJson(missing);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message, "e2e summary: field 'scenarios.1.misses' is missing");
  nlohmann::json mistyped = ToJson(SummaryExample());
  mistyped["scenarios"][0]["frames"] = "many";
  auto b = E2eSummaryFromJson(mistyped);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("field 'scenarios.0.frames' is string"), std::string::npos)
      << b.error().message;
  // The JSON library would convert these (true to 1, -1 to 2^64 - 1, 1.5 to 1): each is
  // refused with its value instead.
  for (const auto& [field, value, message] :
       {std::tuple{"threads", nlohmann::json(true), "is boolean, not a whole number"},
        std::tuple{"frames", nlohmann::json(-1), "is number -1, not a whole number of 0 or more"},
        std::tuple{"frames", nlohmann::json(1.5), "is number 1.5, not a whole number of 0 or more"},
        std::tuple{"loaded", nlohmann::json(1), "is number 1, not true or false"},
        std::tuple{"throughput_fps", nlohmann::json("fast"), "is string, not a number"}}) {
    nlohmann::json doc = ToJson(SummaryExample());
    doc["scenarios"][0][field] = value;
    auto r = E2eSummaryFromJson(doc);
    ASSERT_FALSE(r) << field;
    EXPECT_EQ(r.error().message,
              std::string("e2e summary: field 'scenarios.0.") + field + "' " + message);
  }
  nlohmann::json no_list = ToJson(SummaryExample());
  no_list["not_measured"] = "none";
  auto c = E2eSummaryFromJson(no_list);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, "e2e summary: field 'not_measured' is string, not a list");
  nlohmann::json bad_rec = ToJson(SummaryExample());
  bad_rec["recommendation"][0].erase("threads");
  auto d = E2eSummaryFromJson(bad_rec);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("field 'threads'"), std::string::npos) << d.error().message;
  EXPECT_EQ(d.error().message.find("sweep.json"), std::string::npos) << "names this file";
}

}  // namespace
}  // namespace rtpulse::results
