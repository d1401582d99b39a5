// An imported file as a scenario (importers/import_scenario.h): its folder name, its result,
// and exact percentiles read back from a samples log the test wrote (nearest rank over the
// same latencies, computed here).
#include "importers/import_scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/samples_writer.h"
#include "support/subprocess.h"

namespace rtpulse::importers {
namespace {

TEST(ImportScenarioName, IsTheStemWithUnsafeCharactersReplaced) {
  EXPECT_EQ(ScenarioName("/data/run 1.txt"), "run_1");
  EXPECT_EQ(ScenarioName("cyclictest-v.log"), "cyclictest-v");
  EXPECT_EQ(ScenarioName("a$b&c.json"), "a_b_c");
  EXPECT_EQ(ScenarioName("/data/.hidden"), "import.hidden");
}

TEST(ImportScenarioResult, WithoutADistributionQuotesTheToolsOwnNumbers) {
  Imported imported;
  imported.format = Format::kCyclictestJson;
  imported.has_distribution = false;
  imported.source_numbers = nlohmann::json::array(
      {{{"thread", 0}, {"cycles", 1000}, {"min", 3}, {"avg", 5}, {"max", 40}},
       {{"thread", 1}, {"cycles", 900}, {"min", 2}, {"wrapped", {{"negative_latencies", 4}}}}});
  const results::ScenarioResult s = ImportedScenario("ct", "ct.json", imported, "", "rtpulse x");
  EXPECT_EQ(s.description, "imported from ct.json (cyclictest-json)");
  EXPECT_FALSE(s.latency);
  EXPECT_EQ(s.error,
            "percentiles unavailable: no histogram in the file; the tool's own numbers: thread "
            "0: 1000 samples, min 3 avg 5 max 40 us; thread 1: 900 samples, 4 negative latencies "
            "that wrapped (cyclictest's unsigned wrap): avg and max corrupt, min of the "
            "non-negative ones 2 us");
}

TEST(ImportScenarioResult, ADistributionBecomesOnePathOfTheProbes) {
  Imported imported;
  imported.probes.resize(2);
  imported.probes[0].histogram.Record(5'000);
  imported.warnings = {"clipped 1 overflow"};
  const results::ScenarioResult s =
      ImportedScenario("v", "v.txt", imported, "v/samples.bin", "rtpulse import v.txt");
  ASSERT_TRUE(s.latency);
  EXPECT_EQ(s.status, results::ScenarioStatus::kComplete);
  ASSERT_EQ(s.latency->paths.size(), 1u);
  EXPECT_EQ(s.latency->paths[0].wake, "import");
  EXPECT_EQ(s.latency->paths[0].probes.size(), 2u);
  EXPECT_EQ(s.latency->cmdline, "rtpulse import v.txt");
  EXPECT_EQ(s.samples_file, "v/samples.bin");
  EXPECT_EQ(s.warnings, imported.warnings);
}

/// The nearest-rank percentile of `sorted`, the percentile given in thousandths of a percent
/// (99.9 % = 99900) so the rank is exact integer arithmetic: ceil(p x n / 100 %).
int64_t NearestRank(const std::vector<int64_t>& sorted, uint64_t milli_percent) {
  const uint64_t rank = (milli_percent * sorted.size() + 99'999) / 100'000;
  return sorted[std::max<uint64_t>(rank, 1) - 1];
}

TEST(ImportScenarioPercentiles, ExactFromTheLogThatHoldsTheHistogramsSamples) {
  testutil::TempDir dir;
  std::vector<SampleRecord> records;
  std::vector<int64_t> latencies;
  results::ScenarioResult s;
  s.latency.emplace();
  s.latency->paths.resize(1);
  s.latency->paths[0].probes.resize(1);
  for (uint64_t i = 0; i < 2000; ++i) {
    const int64_t ns = 1'000 + static_cast<int64_t>((i * 7919) % 2000) * 37;  // distinct values
    records.push_back(SampleRecord{i, static_cast<int64_t>(i) * 1'000'000,
                                   static_cast<int64_t>(i) * 1'000'000 + ns, 0, 0, 0, 0, 0});
    latencies.push_back(ns);
    s.latency->paths[0].probes[0].histogram.Record(ns);
  }
  ASSERT_TRUE(testutil::WriteSamplesV1(dir.File("samples.bin"), records));
  AddExactPercentiles(s, dir.File("samples.bin"));
  ASSERT_TRUE(s.exact_percentiles) << (s.warnings.empty() ? "" : s.warnings[0]);
  std::sort(latencies.begin(), latencies.end());
  EXPECT_EQ(s.exact_percentiles->median_ns, NearestRank(latencies, 50'000));
  EXPECT_EQ(s.exact_percentiles->p95_ns, NearestRank(latencies, 95'000));
  EXPECT_EQ(s.exact_percentiles->p99_ns, NearestRank(latencies, 99'000));
  EXPECT_EQ(s.exact_percentiles->p999_ns, NearestRank(latencies, 99'900));
  EXPECT_EQ(s.exact_percentiles->p9999_ns, NearestRank(latencies, 99'990));

  // A log short of one sample is not the histogram's: the bucket edges stay, said why.
  records.pop_back();
  ASSERT_TRUE(testutil::WriteSamplesV1(dir.File("short.bin"), records));
  results::ScenarioResult t = s;
  t.exact_percentiles.reset();
  AddExactPercentiles(t, dir.File("short.bin"));
  EXPECT_FALSE(t.exact_percentiles);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(t.warnings[0],
            "percentiles are histogram bucket edges, not exact: samples.bin does not hold "
            "exactly the histogram's samples");
}

}  // namespace
}  // namespace rtpulse::importers
