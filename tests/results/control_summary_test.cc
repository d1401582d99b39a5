// `rtpulse control --json`'s run summary (results/control_summary.h): a summary reads back
// into the same document, a cost without a relative number stays null and a cost not
// computed keeps its reason, and a missing or mistyped field is named.
// tests/cli/control_cli_test.cc reads the summary a run wrote with the same reader.
#include "results/control_summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace rtpulse::results {
namespace {

ControlSummary ControlExample() {
  ControlSummary s;
  ControlSummaryConfiguration fifo;
  fifo.row = {"fifo-50", "fifo:50", 300, 300, 2, 5, 812.5, 1900, 2300, 40, 780.0};
  fifo.releases = 302;
  fifo.cost = ControlSummaryCost{12.5, 0.02, 8'000'000, false, "cost +12.5 %"};
  ControlSummaryConfiguration zero;
  zero.row = {"other-0", "other:0", 10, 10, 0, 0, 100.0, 120, 130, 15, 90.0};
  ControlSummaryConfiguration blind;  // every release unknown: no response figure
  blind.row = {"deadline-1ms", "deadline:1ms/4ms/4ms", 3, 0, 0, 1, {}, {}, {}, {}, 300.0};
  blind.row.misses_unknown = 2;  // 3 unknown releases, 1 certain miss
  blind.releases = 3;
  blind.cost_error = "3 job(s)' release unknown";
  zero.releases = 10;
  zero.cost = ControlSummaryCost{std::nan(""), 0.0, 4'000'000, false, "no relative number"};
  ControlSummaryConfiguration lost;
  lost.row.scenario = "fifo-1-stress";
  lost.cost = ControlSummaryCost{HUGE_VAL, HUGE_VAL, 900'000'000, true, "control lost"};
  ControlSummaryConfiguration none;
  none.row.scenario = "rr-10";
  none.interrupted = true;
  none.cost_error = "no job ran";
  s.configurations = {fifo, zero, none, lost, blind};
  s.figure_notes = {"gnuplot not found"};
  s.results = "out";
  s.status = "complete";
  return s;
}

TEST(ControlSummaryTest, ASummaryReadsBackIntoTheSameDocument) {
  const nlohmann::json doc = ToJson(ControlExample());
  EXPECT_TRUE(doc["configurations"][1]["control_cost"]["cost_increase_pct"].is_null());
  EXPECT_EQ(doc["configurations"][2]["control_cost"], nlohmann::json({{"error", "no job ran"}}));
  auto back = ControlSummaryFromJson(doc);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->configurations.size(), 5u);
  EXPECT_EQ(back->configurations[0].row.misses, 5u);
  EXPECT_EQ(back->configurations[0].releases, 302u);
  EXPECT_EQ(doc["configurations"][0]["misses_is_lower_bound"], false);
  EXPECT_EQ(doc["configurations"][4]["misses_unknown"], 2);
  EXPECT_EQ(doc["configurations"][4]["misses_is_lower_bound"], true);
  EXPECT_EQ(back->configurations[0].row.misses_unknown, 0u);
  EXPECT_EQ(back->configurations[4].row.misses_unknown, 2u);
  ASSERT_TRUE(back->configurations[0].cost.has_value());
  EXPECT_EQ(back->configurations[0].cost->cost_increase_pct, 12.5);
  EXPECT_FALSE(back->configurations[1].cost->cost_increase_pct.has_value());
  EXPECT_FALSE(back->configurations[2].cost.has_value());
  EXPECT_EQ(back->configurations[2].cost_error, "no job ran");
  // Outside the model the replay's figures are not finite: null, and they read back as such.
  EXPECT_TRUE(doc["configurations"][3]["control_cost"]["peak_error_rad"].is_null());
  EXPECT_TRUE(doc["configurations"][3]["control_cost"]["cost_increase_pct"].is_null());
  ASSERT_TRUE(back->configurations[3].cost.has_value());
  EXPECT_FALSE(back->configurations[3].cost->peak_error_rad.has_value());
  EXPECT_TRUE(back->configurations[3].cost->outside_model);
  // A figure no job gives is null, not 0, and reads back as none.
  for (const char* key : {"mean_response_us", "p99_response_us", "max_response_us",
                          "max_latency_us", "median_exec_us"}) {
    EXPECT_TRUE(doc["configurations"][2][key].is_null()) << key;
    if (std::string(key) != "median_exec_us") {
      EXPECT_TRUE(doc["configurations"][4][key].is_null()) << key;
    }
  }
  EXPECT_EQ(doc["configurations"][4]["responses"], 0);
  EXPECT_EQ(doc["configurations"][4]["median_exec_us"], 300.0);
  EXPECT_FALSE(back->configurations[4].row.max_response_us.has_value());
  EXPECT_EQ(back->configurations[4].row.jobs, 3u);
  EXPECT_EQ(back->configurations[4].row.responses, 0u);
  EXPECT_EQ(ToJson(*back), doc);
  // A summary from before `responses` had every release known.
  nlohmann::json old = doc;
  old["configurations"][0].erase("responses");
  auto old_back = ControlSummaryFromJson(old);
  ASSERT_TRUE(old_back) << old_back.error().message;
  EXPECT_EQ(old_back->configurations[0].row.responses, 300u);
}

TEST(ControlSummaryTest, AMissingOrMistypedFieldIsNamed) {
  nlohmann::json missing = ToJson(ControlExample());
  missing["configurations"][0].erase("releases");
  auto a = ControlSummaryFromJson(missing);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message, "control summary: field 'configurations.0.releases' is missing");
  nlohmann::json mistyped = ToJson(ControlExample());
  mistyped["configurations"][1]["control_cost"]["worst_stall_ns"] = "long";
  auto b = ControlSummaryFromJson(mistyped);
  ASSERT_FALSE(b);
  EXPECT_NE(
      b.error().message.find("field 'configurations.1.control_cost.worst_stall_ns' is string"),
      std::string::npos)
      << b.error().message;
  nlohmann::json no_list = ToJson(ControlExample());
  no_list["configurations"] = nlohmann::json::object();
  auto c = ControlSummaryFromJson(no_list);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, "control summary: field 'configurations' is object, not a list");
}

}  // namespace
}  // namespace rtpulse::results
