// control.json (results/control_file.h): a file written by `rtpulse control` (30 jobs, fifo:99,
// no stress; tests/data/control/control.json) reads back into every field and writes out
// the same document; the optional parts round-trip; a missing or mistyped field is named.
#include "results/control_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

#include "support/test_paths.h"

namespace rtpulse::results {
namespace {

std::string ControlFixture() {
  return std::string(RTPULSE_TEST_DATA) + "/control/control.json";
}

nlohmann::json ParseFixture() {
  std::ifstream in(ControlFixture());
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

uint64_t Count(const MicrosecondClasses& classes) {
  return std::accumulate(classes.begin(), classes.end(), uint64_t{0},
                         [](uint64_t n, const auto& c) { return n + c.second; });
}

TEST(ControlFileTest, AFileOfTheCurrentReleaseReadsBackWholeAndWritesTheSameDocument) {
  auto file = ReadControlFile(ControlFixture());
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->scenario, "fifo-99");
  EXPECT_EQ(file->configuration, "fifo:99, no stress");
  EXPECT_EQ(file->applied_policy, "fifo:99");
  EXPECT_FALSE(file->loaded);
  EXPECT_TRUE(file->loads.empty());
  EXPECT_EQ(file->period_ns, 4'000'000);
  EXPECT_EQ(file->jobs_planned, 30u);
  EXPECT_EQ(file->jobs, 30u);
  EXPECT_EQ(file->releases, file->jobs + file->skipped);
  EXPECT_FALSE(file->calibration);
  EXPECT_FALSE(file->inject);
  EXPECT_FALSE(file->deadline_overruns);
  EXPECT_EQ(file->work_set_mode, "streaming");
  ASSERT_EQ(file->counters.count("context-switches"), 1u);
  EXPECT_TRUE(file->counters.at("context-switches").value);
  ASSERT_EQ(file->counters.count("cycles"), 1u);
  EXPECT_FALSE(file->counters.at("cycles").value);  // no PMU where it was written
  EXPECT_NE(file->counters.at("cycles").unsupported.find("not supported here"), std::string::npos);
  // Every job is in each of the three histograms once.
  EXPECT_EQ(Count(file->wakeup_latency_us), file->jobs);
  EXPECT_EQ(Count(file->execution_us), file->jobs);
  EXPECT_EQ(Count(file->response_us), file->jobs);
  EXPECT_EQ(ToJson(*file), ParseFixture());
}

// A file from before misses_unknown was written still reads: every miss was counted then.
TEST(ControlFileTest, AFileWithoutMissesUnknownReadsAsEveryMissKnown) {
  nlohmann::json doc = ParseFixture();
  doc.erase("misses_unknown");
  doc.erase("misses_is_lower_bound");
  auto file = ControlFileFromJson(doc);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->misses_unknown, 0u);
  file->misses_unknown = 4;
  const nlohmann::json bound = ToJson(*file);
  EXPECT_EQ(bound["misses_unknown"], 4);
  EXPECT_EQ(bound["misses_is_lower_bound"], true);
}

TEST(ControlFileTest, CalibrationInjectionOverrunsAndACounterErrorRoundTrip) {
  auto file = ReadControlFile(ControlFixture());
  ASSERT_TRUE(file) << file.error().message;
  file->calibration = ControlCalibration{400'000, 17, 401'250, 21'000, "holds at this frequency"};
  file->inject = std::pair<uint64_t, int64_t>{50, 6'000'000};
  file->deadline_overruns = 3;
  file->counters.clear();
  file->counters_error = "perf_event_open refused: perf_event_paranoid is 3";
  file->release_unknown_jobs = {0, 7};
  auto back = ControlFileFromJson(ToJson(*file));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->calibration);
  EXPECT_EQ(back->calibration->extra_passes, 17u);
  EXPECT_EQ(back->calibration->caveat, "holds at this frequency");
  ASSERT_TRUE(back->inject);
  EXPECT_EQ(back->inject->first, 50u);
  EXPECT_EQ(back->inject->second, 6'000'000);
  EXPECT_EQ(back->deadline_overruns, std::optional<uint64_t>(3));
  EXPECT_EQ(back->counters_error, file->counters_error);
  EXPECT_TRUE(back->counters.empty());
  EXPECT_EQ(back->release_unknown_jobs, (std::vector<uint64_t>{0, 7}));
  EXPECT_EQ(ToJson(*back), ToJson(*file));
}

TEST(ControlFileTest, AMissingOrMistypedFieldIsNamed) {
  nlohmann::json doc = ParseFixture();
  doc.erase("releases");
  auto missing = ControlFileFromJson(doc);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ExitCode::kUsage);
  EXPECT_EQ(missing.error().message, "control.json: field 'releases' is missing");
  doc = ParseFixture();
  doc["jobs"] = "thirty";
  auto mistyped = ControlFileFromJson(doc);
  ASSERT_FALSE(mistyped);
  EXPECT_EQ(mistyped.error().message,
            "control.json: field 'jobs' is string, not a whole number of 0 or more");
  doc = ParseFixture();
  doc["histograms_us"]["response"] = {{1, 2, 3}};
  auto bad_class = ControlFileFromJson(doc);
  ASSERT_FALSE(bad_class);
  EXPECT_NE(bad_class.error().message.find("histograms_us.response"), std::string::npos);
  auto absent = ReadControlFile("/nonexistent/control.json");
  ASSERT_FALSE(absent);
  EXPECT_NE(absent.error().message.find("/nonexistent/control.json: cannot be read"),
            std::string::npos);
}

}  // namespace
}  // namespace rtpulse::results
