// e2e.json (results/e2e_file.h): a file written by `rtpulse e2e` of this release (synthetic
// source, 20 frames; tests/data/e2e/e2e.json) reads back into every field and writes out the
// same document; the optional parts round-trip; a missing or mistyped field is named.
#include "results/e2e_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/test_paths.h"

namespace rtpulse::results {
namespace {

std::string E2eFixture() {
  return std::string(RTPULSE_TEST_DATA) + "/e2e/e2e.json";
}

nlohmann::json ParseE2eFixture() {
  std::ifstream in(E2eFixture());
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

TEST(E2eFileTest, AFileOfTheCurrentReleaseReadsBackWholeAndWritesTheSameDocument) {
  auto file = ReadE2eFile(E2eFixture());
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->scenario, "threads-1");
  EXPECT_EQ(file->source.spec, "synthetic");
  EXPECT_EQ(file->settings.mode, "back-to-back");
  EXPECT_EQ(file->settings.frames, 20u);
  EXPECT_EQ(file->counts.frames, 20u);
  EXPECT_FALSE(file->settings.loopback);
  ASSERT_EQ(file->threads.size(), 2u);
  EXPECT_EQ(file->threads[0].role, "capture");
  ASSERT_EQ(file->stages.size(), std::size(kE2eStageNames));
  ASSERT_TRUE(file->stages.at("Total"));
  const E2eStageStats& total = *file->stages.at("Total");
  EXPECT_EQ(total.count, file->counts.frames);  // every frame has a Total
  EXPECT_LE(total.min_ns, total.p50_ns);
  EXPECT_LE(total.p99_ns, total.max_ns);
  EXPECT_FALSE(file->stages.at("DecisionToEdge"));  // no GPIO edge in this run
  EXPECT_EQ(ToJson(*file), ParseE2eFixture());
}

TEST(E2eFileTest, LoopbackLoadsAndUnknownThreadsRoundTrip) {
  auto file = ReadE2eFile(E2eFixture());
  ASSERT_TRUE(file) << file.error().message;
  file->settings.loopback = "gpio:gpiochip0:4";
  file->settings.loaded = true;
  file->settings.loads = {"cpu:cpus=1"};
  file->backend.threads.reset();
  file->backend.threads_from = "not known";
  file->counts.throughput_fps.reset();
  auto back = E2eFileFromJson(ToJson(*file));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->settings.loopback, std::optional<std::string>("gpio:gpiochip0:4"));
  EXPECT_EQ(back->settings.loads, file->settings.loads);
  EXPECT_FALSE(back->backend.threads);
  EXPECT_FALSE(back->counts.throughput_fps);
  EXPECT_EQ(ToJson(*back), ToJson(*file));
}

TEST(E2eFileTest, AMissingOrMistypedFieldIsNamedWithItsPath) {
  nlohmann::json doc = ParseE2eFixture();
  doc["settings"]["capture"].erase("policy");
  auto missing = E2eFileFromJson(doc);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ExitCode::kUsage);
  EXPECT_EQ(missing.error().message, "e2e.json: field 'settings.capture.policy' is missing");
  doc = ParseE2eFixture();
  doc["stages"]["Total"]["count"] = "twenty";
  auto mistyped = E2eFileFromJson(doc);
  ASSERT_FALSE(mistyped);
  EXPECT_EQ(mistyped.error().message,
            "e2e.json: field 'stages.Total.count' is string, not a whole number of 0 or more");
  doc = ParseE2eFixture();
  doc["threads"][1].erase("tid");
  auto thread = E2eFileFromJson(doc);
  ASSERT_FALSE(thread);
  EXPECT_EQ(thread.error().message, "e2e.json: field 'threads.1.tid' is missing");
}

}  // namespace
}  // namespace rtpulse::results
