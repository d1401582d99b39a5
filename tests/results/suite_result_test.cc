#include "results/suite_result.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "stats/summary.h"

namespace rtpulse::results {
namespace {

/// A scenario whose two threads hold 1..1000 us and 1001..2000 us, one sample each.
ScenarioResult Scenario(const std::string& name, ScenarioStatus status) {
  ScenarioResult s;
  s.name = name;
  s.status = status;
  LatencyRun run;
  PathRun path;
  path.wake = "abs";
  for (int t = 0; t < 2; ++t) {
    ProbeResult p;
    p.index = t;
    p.cpu = t;
    p.wake = "abs";
    for (int us = 1; us <= 1000; ++us) p.histogram.Record((t * 1000 + us) * int64_t{1000});
    p.missed_activations = static_cast<uint64_t>(t);
    p.skipped_periods = 2 * static_cast<uint64_t>(t);
    p.periods_elapsed = 1000 + 2 * static_cast<uint64_t>(t);
    path.probes.push_back(std::move(p));
  }
  run.paths.push_back(std::move(path));
  s.latency = std::move(run);
  return s;
}

TEST(SuiteResultTest, SummaryRowsMergeEveryThreadOfAScenario) {
  SuiteResult suite;
  suite.scenarios.push_back(Scenario("idle", ScenarioStatus::kComplete));
  ScenarioResult pending;
  pending.name = "heavy";
  suite.scenarios.push_back(pending);
  const auto rows = SummarizeScenarios(suite);
  ASSERT_EQ(rows.size(), 1u) << "a scenario without measurements has no row";
  const ScenarioStats& r = rows[0];
  EXPECT_EQ(r.scenario, "idle");
  EXPECT_EQ(r.samples, 2000u);
  EXPECT_EQ(r.min_ns, 1000);
  EXPECT_EQ(r.max_ns, 2'000'000);
  EXPECT_DOUBLE_EQ(r.mean_ns, 1'000'500.0);
  // Nearest rank on 1..2000 us: p50 -> rank 1000 = 1000 us, p95 -> 1900 us, p99 -> 1980 us,
  // each within the histogram's 1/512 relative bucket error and never below the truth.
  auto near = [](int64_t value, int64_t truth) {
    EXPECT_GE(value, truth);
    EXPECT_LE(static_cast<double>(value), static_cast<double>(truth) * (1 + 1.0 / 512));
  };
  near(r.median_ns, 1'000'000);
  near(r.p95_ns, 1'900'000);
  near(r.p99_ns, 1'980'000);
  near(r.p999_ns, 1'998'000);
  EXPECT_EQ(r.p9999_ns, 2'000'000);
  EXPECT_EQ(r.missed_activations, 1u);
  EXPECT_EQ(r.skipped_periods, 2u);
  EXPECT_EQ(r.periods_elapsed, 2002u);
  // Population standard deviation of 1..2000 us: sqrt((2000^2 - 1) / 12) us.
  EXPECT_NEAR(r.stddev_ns, 577'350.0, 1.0);
}

TEST(SuiteResultTest, ExactPercentilesReplaceBucketEdgesAndSayWhichRows) {
  SuiteResult suite;
  suite.scenarios.push_back(Scenario("idle", ScenarioStatus::kComplete));
  suite.scenarios.push_back(Scenario("logged", ScenarioStatus::kComplete));
  // The exact nearest ranks of 1..2000 us (what stats::ComputeExactPercentiles gives).
  suite.scenarios[1].exact_percentiles =
      ExactPercentileValues{1'000'000, 1'900'000, 1'980'000, 1'998'000, 2'000'000};
  const auto rows = SummarizeScenarios(suite);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].percentiles_exact);
  EXPECT_NE(rows[0].p95_ns, 1'900'000) << "the bucket edge, 1900.543 us";
  EXPECT_TRUE(rows[1].percentiles_exact);
  EXPECT_EQ(rows[1].median_ns, 1'000'000);
  EXPECT_EQ(rows[1].p95_ns, 1'900'000);
  EXPECT_EQ(rows[1].p99_ns, 1'980'000);
  EXPECT_EQ(rows[1].p999_ns, 1'998'000);
  EXPECT_EQ(rows[1].p9999_ns, 2'000'000);
  const nlohmann::json j = ToJson(suite);
  EXPECT_EQ(j["scenarios"][0]["summary"][0]["percentile_method"], "bucket_upper_edge");
  EXPECT_EQ(j["scenarios"][1]["summary"][0]["percentile_method"], "exact");
  EXPECT_FALSE(j["scenarios"][0].contains("exact_percentiles"));
  EXPECT_EQ(j["scenarios"][1]["exact_percentiles"]["p95_ns"], 1'900'000);
  EXPECT_EQ(j["scenarios"][1]["summary"][0]["p95_ns"], 1'900'000);
  const std::string mixed = MethodStatement(rows);
  EXPECT_EQ(mixed, std::string(stats::kExactPercentileMethod) +
                       " for logged; the others: " + std::string(stats::kPercentileMethod));
  EXPECT_EQ(j["percentile_method"], mixed);
  EXPECT_NE(FormatStatisticalSummary(suite).find("percentiles: " + mixed + "\n"),
            std::string::npos);
  EXPECT_EQ(MethodStatement({rows[1]}), stats::kExactPercentileMethod);
  EXPECT_EQ(MethodStatement({rows[0]}), stats::kPercentileMethod);
  // A scenario with two wake paths keeps its bucket edges: one set of exact values cannot
  // stand for both.
  suite.scenarios[1].latency->paths.push_back(suite.scenarios[1].latency->paths[0]);
  suite.scenarios[1].latency->paths[1].wake = "timerfd";
  for (const auto& r : SummarizeScenarios(suite)) EXPECT_FALSE(r.percentiles_exact);
}

/// The idle scenario with its skipped periods' latencies: thread 1's two skipped periods
/// were 3 ms and 2.5 ms late.
ScenarioResult StallScenario() {
  ScenarioResult s = Scenario("stall", ScenarioStatus::kComplete);
  ProbeResult& p = s.latency->paths[0].probes[1];
  p.skipped_histogram.Record(3'000'000);
  p.skipped_histogram.Record(2'500'000);
  return s;
}

TEST(SuiteResultTest, SummaryRowsHavePerPeriodStatisticsBesideThePerWakeUpOnes) {
  SuiteResult suite;
  suite.scenarios.push_back(StallScenario());
  const auto rows = SummarizeScenarios(suite);
  ASSERT_EQ(rows.size(), 1u);
  const ScenarioStats& r = rows[0];
  EXPECT_EQ(r.samples, 2000u);  // per wake-up: unchanged
  EXPECT_EQ(r.max_ns, 2'000'000);
  ASSERT_TRUE(r.per_period.has_value());
  const PerPeriodStats& p = *r.per_period;
  EXPECT_EQ(p.periods, 2002u);  // = periods_elapsed
  EXPECT_EQ(p.min_ns, 1000);
  EXPECT_EQ(p.max_ns, 3'000'000);
  // By hand: 1..2000 us plus 2500 and 3000 us. Sum = 2001000 + 5500 us over 2002.
  EXPECT_NEAR(p.mean_ns, (2'001'000.0 + 5'500.0) / 2002.0 * 1000.0, 1e-6);
  // Nearest rank 2002 * 0.9999 -> 2002: the largest; 99.9 % -> rank 2000: 2000 us.
  EXPECT_EQ(p.p9999_ns, 3'000'000);
  EXPECT_GE(p.p999_ns, 2'000'000);
  EXPECT_LE(static_cast<double>(p.p999_ns), 2'000'000 * (1 + 1.0 / 512));
  EXPECT_GE(p.median_ns, 1'001'000);  // rank 1001
  EXPECT_LE(static_cast<double>(p.median_ns), 1'001'000 * (1 + 1.0 / 512));

  const auto j = StatisticalSummaryJson(suite);
  const auto& row = j.at("scenarios").at(0);
  EXPECT_EQ(row.at("samples"), 2000);
  EXPECT_EQ(row.at("per_period").at("periods"), 2002);
  EXPECT_EQ(row.at("per_period").at("max_ns"), 3'000'000);
  const std::string text = FormatStatisticalSummary(suite);
  EXPECT_NE(text.find("per period: every period"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("{:<16} {:>10} {:>8} ", "stall", 2002, "1.0")), std::string::npos)
      << text;
  EXPECT_NE(text.find(" 3000.0 "), std::string::npos) << text;

  // Without the skipped periods' latencies (the plain fixture): no per-period row.
  SuiteResult plain;
  plain.scenarios.push_back(Scenario("idle", ScenarioStatus::kComplete));
  EXPECT_FALSE(SummarizeScenarios(plain)[0].per_period.has_value());
  EXPECT_EQ(FormatStatisticalSummary(plain).find("per period"), std::string::npos);
}

TEST(SuiteResultTest, JsonIsVersionedAndMarksCheckpoints) {
  SuiteResult suite;
  suite.status = "running";
  suite.scenarios.push_back(Scenario("idle", ScenarioStatus::kComplete));
  suite.scenarios.push_back(Scenario("light", ScenarioStatus::kMeasuring));
  ScenarioResult pending;
  pending.name = "heavy";
  suite.scenarios.push_back(pending);
  const auto j = ToJson(suite);
  EXPECT_EQ(j["schema"], kSuiteSchema);
  EXPECT_EQ(j["schema_version"], kSuiteSchemaVersion);
  EXPECT_EQ(j["status"], "running");
  ASSERT_EQ(j["scenarios"].size(), 3u);
  EXPECT_FALSE(j["scenarios"][0]["checkpoint"].get<bool>());
  EXPECT_TRUE(j["scenarios"][1]["checkpoint"].get<bool>());
  EXPECT_EQ(j["scenarios"][1]["status"], "measuring");
  EXPECT_TRUE(j["scenarios"][2]["latency"].is_null());
  EXPECT_EQ(j["scenarios"][2]["status"], "pending");
  EXPECT_EQ(j["scenarios"][0]["summary"][0]["samples"], 2000);
  EXPECT_EQ(j["scenarios"][0]["latency"]["thread"]["1"]["cycles"], 1000);
}

TEST(SuiteResultTest, TextTableSaysUnitsMethodAndWhatDidNotRun) {
  SuiteResult suite;
  suite.status = "interrupted";
  suite.scenarios.push_back(Scenario("idle", ScenarioStatus::kComplete));
  ScenarioResult failed;
  failed.name = "heavy";
  failed.status = ScenarioStatus::kFailed;
  failed.error = "loads did not start: stress-ng missing";
  suite.scenarios.push_back(failed);
  const std::string text = FormatStatisticalSummary(suite);
  EXPECT_NE(text.find("p99.99"), std::string::npos);
  EXPECT_NE(text.find("jitter"), std::string::npos);
  EXPECT_NE(text.find("microseconds"), std::string::npos);
  EXPECT_NE(text.find("nearest-rank"), std::string::npos);
  EXPECT_NE(text.find("heavy"), std::string::npos);
  EXPECT_NE(text.find("stress-ng missing"), std::string::npos);
  EXPECT_NE(text.find("1/2"), std::string::npos) << "missed/skipped";
  EXPECT_NE(text.find("suite interrupted"), std::string::npos);
  // idle's row: 2000 samples, min 1.0 us, max 2000.0 us.
  EXPECT_NE(text.find("2000.0"), std::string::npos) << text;
  const auto j = StatisticalSummaryJson(suite);
  EXPECT_EQ(j["units"], "ns");
  ASSERT_EQ(j["scenarios"].size(), 1u);
  EXPECT_EQ(j["scenarios"][0]["max_ns"], 2'000'000);
}

}  // namespace
}  // namespace rtpulse::results

#include <filesystem>
#include <fstream>

#include "results/cyclictest_format.h"
#include "results/suite_reader.h"

namespace rtpulse::results {
namespace {

TEST(SuiteReaderTest, ResultJsonReadsBackToTheSameStatistics) {
  SuiteResult suite;
  suite.status = "complete";
  suite.scenarios.push_back(Scenario("idle", ScenarioStatus::kComplete));
  // Negative latencies and a spread of magnitudes survive the round trip too.
  suite.scenarios[0].latency->paths[0].probes[0].histogram.Record(-1234);
  suite.scenarios[0].latency->paths[0].probes[0].histogram.Record(7'654'321);
  suite.scenarios[0].samples_file = "idle/samples.bin";
  ScenarioResult pending;
  pending.name = "heavy";
  suite.scenarios.push_back(pending);
  const std::string dir = ::testing::TempDir() + "/suite_reader_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/result.json") << ToJson(suite).dump(1);

  auto read = ReadSuiteResult(dir);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_EQ(read->scenarios.size(), 2u);
  EXPECT_EQ(read->scenarios[0].samples_file, "idle/samples.bin");
  EXPECT_FALSE(read->scenarios[1].latency.has_value());
  EXPECT_EQ(read->scenarios[1].status, ScenarioStatus::kPending);
  const auto before = SummarizeScenarios(suite);
  const auto after = SummarizeScenarios(*read);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].samples, before[0].samples);
  EXPECT_EQ(after[0].min_ns, before[0].min_ns);
  EXPECT_EQ(after[0].max_ns, before[0].max_ns);
  EXPECT_EQ(after[0].median_ns, before[0].median_ns);
  EXPECT_EQ(after[0].p99_ns, before[0].p99_ns);
  EXPECT_EQ(after[0].p9999_ns, before[0].p9999_ns);
  EXPECT_NEAR(after[0].mean_ns, before[0].mean_ns, 1.0);
  EXPECT_NEAR(after[0].stddev_ns, before[0].stddev_ns, before[0].stddev_ns * 1e-6);
  EXPECT_EQ(after[0].missed_activations, before[0].missed_activations);
  EXPECT_EQ(after[0].periods_elapsed, before[0].periods_elapsed);
  const auto& p = read->scenarios[0].latency->paths[0].probes[1];
  EXPECT_EQ(p.cpu, 1);
  EXPECT_EQ(p.histogram.count(), 1000u);
}

// Activations that may have missed unseen (SCHED_DEADLINE jobs whose release is unknown): every
// file and table that states the miss count says it is a lower bound, and it reads back.
TEST(SuiteReaderTest, AMissCountThatIsALowerBoundSaysSoEverywhereAndReadsBack) {
  SuiteResult suite;
  suite.status = "complete";
  suite.scenarios.push_back(Scenario("deadline", ScenarioStatus::kComplete));
  suite.scenarios[0].latency->paths[0].probes[1].misses_unknown = 3;
  const auto rows = SummarizeScenarios(suite);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].misses_unknown, 3u);
  const nlohmann::json doc = ToJson(suite);
  const nlohmann::json& scenario = doc["scenarios"][0];
  const nlohmann::json& exact = scenario["latency"]["thread"]["0"];
  EXPECT_FALSE(exact.contains("misses_unknown")) << "thread 0's misses are all known";
  const nlohmann::json& bound = scenario["latency"]["thread"]["1"];
  EXPECT_EQ(bound["missed_activations"], 1);
  EXPECT_EQ(bound["misses_unknown"], 3);
  EXPECT_EQ(bound["missed_activations_is_lower_bound"], true);
  const nlohmann::json& all = scenario["latency"]["rtpulse"]["paths"][0]["all_threads"];
  EXPECT_EQ(all["misses_unknown"], 3) << all.dump();
  EXPECT_EQ(all["missed_activations_is_lower_bound"], true);
  EXPECT_EQ(scenario["summary"][0]["misses_unknown"], 3);
  EXPECT_EQ(scenario["summary"][0]["missed_activations_is_lower_bound"], true);
  EXPECT_NE(FormatSummary(*suite.scenarios[0].latency).find("    >=1/2"), std::string::npos)
      << FormatSummary(*suite.scenarios[0].latency);
  EXPECT_NE(FormatStatisticalSummary(suite).find(">=1/2"), std::string::npos)
      << FormatStatisticalSummary(suite);

  const std::string dir = ::testing::TempDir() + "/suite_reader_bound_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/result.json") << doc.dump(1);
  auto read = ReadSuiteResult(dir);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(read->scenarios[0].latency->paths[0].probes[0].misses_unknown, 0u);
  EXPECT_EQ(read->scenarios[0].latency->paths[0].probes[1].misses_unknown, 3u);
}

TEST(SuiteReaderTest, BadFilesAreUsageErrorsNamingTheFile) {
  const std::string dir = ::testing::TempDir() + "/suite_reader_bad";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/broken.json") << "{\"schema\": \"rtpulse.suite\", ";
  std::ofstream(dir + "/other.json") << "{\"hello\": 1}";
  std::ofstream(dir + "/future.json") << "{\"schema\": \"rtpulse.suite\", \"schema_version\": 99}";
  for (const char* name : {"broken.json", "other.json", "future.json", "missing.json"}) {
    auto r = ReadSuiteResult(dir + "/" + name);
    ASSERT_FALSE(r.has_value()) << name;
    EXPECT_EQ(r.error().code, ExitCode::kUsage);
    EXPECT_NE(r.error().message.find(name), std::string::npos) << r.error().message;
  }
}

TEST(SuiteReaderTest, PerPeriodLatenciesReadBack) {
  SuiteResult suite;
  suite.status = "complete";
  suite.scenarios.push_back(StallScenario());
  const std::string dir = ::testing::TempDir() + "/suite_reader_per_period_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/result.json") << ToJson(suite).dump(1);
  auto read = ReadSuiteResult(dir);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  const auto before = SummarizeScenarios(suite);
  const auto after = SummarizeScenarios(*read);
  ASSERT_TRUE(after[0].per_period.has_value());
  EXPECT_EQ(after[0].per_period->periods, 2002u);
  EXPECT_EQ(after[0].per_period->max_ns, before[0].per_period->max_ns);
  EXPECT_EQ(after[0].per_period->min_ns, before[0].per_period->min_ns);
  EXPECT_EQ(after[0].per_period->p9999_ns, before[0].per_period->p9999_ns);
  EXPECT_EQ(after[0].per_period->median_ns, before[0].per_period->median_ns);
  EXPECT_NEAR(after[0].per_period->mean_ns, before[0].per_period->mean_ns, 1.0);
  const auto& p = read->scenarios[0].latency->paths[0].probes[1];
  EXPECT_EQ(p.skipped_histogram.count(), 2u);
  EXPECT_EQ(p.skipped_histogram.min(), 2'500'000);
  EXPECT_EQ(p.skipped_histogram.max(), 3'000'000);
  EXPECT_FALSE(p.per_period_unknown);

  // A file without per_period blocks (an import, or written before them) has none either.
  std::ifstream in(dir + "/result.json");
  auto doc = nlohmann::json::parse(in);
  in.close();
  for (auto& [k, t] : doc["scenarios"][0]["latency"]["thread"].items()) t.erase("per_period");
  std::ofstream(dir + "/result.json") << doc.dump(1);
  auto bare = ReadSuiteResult(dir);
  ASSERT_TRUE(bare.has_value()) << bare.error().message;
  EXPECT_TRUE(bare->scenarios[0].latency->paths[0].probes[0].per_period_unknown);
  EXPECT_FALSE(SummarizeScenarios(*bare)[0].per_period.has_value());
}

}  // namespace
}  // namespace rtpulse::results
