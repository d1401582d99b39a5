// wcet.json (results/wcet_file.h): a document reads back into the same document; another
// schema, a missing or mistyped field are named. tests/cli/wcet_cli_test.cc reads the file
// `rtpulse wcet` writes with the same reader.
#include "results/wcet_file.h"

#include <gtest/gtest.h>

#include <string>

namespace rtpulse::results {
namespace {

WcetFile Example() {
  WcetFile f;
  f.rtpulse_version = "0.1.0";
  f.cmdline = "rtpulse wcet run";
  f.run = "run";
  f.disclaimer = "an extrapolation";
  f.skipped_scenarios = {"cpu"};
  WcetScenarioEntry e;
  e.scenario = "idle";
  e.samples_file = "idle/samples.bin";
  e.threads = 2;
  e.order = "all threads merged by deadline (expected_ns)";
  e.dropped = 3;
  e.input_warnings = {"3 samples were dropped"};
  e.plot = {{"data", "run/wcet/idle/exceedance.dat"}, {"rendered", nullptr}};
  e.report = {{"samples", 1000}, {"pot", {{"ok", true}}}};
  f.scenarios = {e};
  return f;
}

TEST(WcetFileTest, ADocumentReadsBackIntoTheSameDocument) {
  const nlohmann::json doc = ToJson(Example());
  EXPECT_EQ(doc["schema"], "rtpulse.wcet");
  EXPECT_EQ(doc["schema_version"], 1);
  auto back = WcetFileFromJson(doc);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->scenarios.size(), 1u);
  EXPECT_EQ(back->scenarios[0].threads, 2u);
  EXPECT_EQ(back->scenarios[0].dropped, 3u);
  EXPECT_EQ(back->skipped_scenarios, std::vector<std::string>{"cpu"});
  EXPECT_EQ(ToJson(*back), doc);
}

TEST(WcetFileTest, AnotherSchemaAMissingOrMistypedFieldIsNamed) {
  nlohmann::json other = ToJson(Example());
  other["schema"] = "rtpulse-latency";
  auto a = WcetFileFromJson(other);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("schema 'rtpulse-latency' version 1 is not rtpulse.wcet"),
            std::string::npos)
      << a.error().message;
  nlohmann::json missing = ToJson(Example());
  missing["scenarios"][0].erase("threads");
  auto b = WcetFileFromJson(missing);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().message, "wcet.json: field 'scenarios.0.threads' is missing");
  nlohmann::json mistyped = ToJson(Example());
  mistyped["scenarios"][0]["report"] = "none";
  auto c = WcetFileFromJson(mistyped);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, "wcet.json: field 'scenarios.0.report' is string, not an object");
  nlohmann::json no_list = ToJson(Example());
  no_list["scenarios"] = 1;
  auto d = WcetFileFromJson(no_list);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().message, "wcet.json: field 'scenarios' is number, not a list");
  auto e = ReadWcetFile("/nonexistent/wcet.json");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("/nonexistent/wcet.json: cannot be read"), std::string::npos);
}

}  // namespace
}  // namespace rtpulse::results
