// ReadLatencyPerSecond on a samples file written here with the real writer: hand-computed
// per-second counts, extremes, missed flags and exact p99s, with one second's records split
// around another's (the drain interleaves threads in batches).

#include "report/latency_per_second.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "measure/sample_log.h"
#include "support/subprocess.h"

namespace rtpulse::report {
namespace {

SampleRecord PerSecondRecord(uint16_t thread, int64_t expected_ns, int64_t latency_ns,
                             bool missed) {
  SampleRecord r{};
  r.thread = thread;
  r.expected_ns = expected_ns;
  r.actual_ns = expected_ns + latency_ns;
  r.flags = missed ? SampleRecord::kMissed : 0;
  return r;
}

TEST(LatencyPerSecondTest, ExactP99AndCountsPerSecondWithInterleavedSeconds) {
  testutil::TempDir dir;
  const std::string path = dir.File("s.bin");
  // Second 7: latencies 1..250 us, shuffled (rank ceil(0.99 x 250) = 248: p99 248 us, so
  // the selection keeps 3 values); second 8: 1000..1049 ns (rank 50 of 50: p99 = max).
  std::vector<int64_t> first(250);
  for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int64_t>(i + 1) * 1000;
  std::shuffle(first.begin(), first.end(), std::mt19937(3));
  std::vector<SampleRecord> records;
  for (size_t i = 0; i < 125; ++i) {
    records.push_back(
        PerSecondRecord(0, 7'000'000'000 + static_cast<int64_t>(i) * 1000, first[i], i == 10));
  }
  for (int64_t i = 0; i < 50; ++i) {
    records.push_back(PerSecondRecord(1, 8'000'000'000 + i * 1000, 1000 + i, i < 2));
  }
  for (size_t i = 125; i < 250; ++i) {
    records.push_back(
        PerSecondRecord(1, 7'000'000'000 + static_cast<int64_t>(i) * 1000, first[i], false));
  }
  auto sink = measure::OpenSamplesFile(path, {1, 2});
  ASSERT_TRUE(sink) << sink.error().message;
  ASSERT_TRUE((*sink)->Write(records.data(), records.size()));
  ASSERT_TRUE((*sink)->Finish(4, false));

  auto got = ReadLatencyPerSecond(path);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->seconds.size(), 2u);
  const LatencySecond& a = got->seconds[0];
  EXPECT_EQ(a.second, 7);
  EXPECT_EQ(a.count, 250u);
  EXPECT_EQ(a.missed, 1u);
  EXPECT_EQ(a.min_ns, 1000);
  EXPECT_EQ(a.max_ns, 250'000);
  EXPECT_EQ(a.p99_ns, 248'000);
  const LatencySecond& b = got->seconds[1];
  EXPECT_EQ(b.second, 8);
  EXPECT_EQ(b.count, 50u);
  EXPECT_EQ(b.missed, 2u);
  EXPECT_EQ(b.min_ns, 1000);
  EXPECT_EQ(b.max_ns, 1049);
  EXPECT_EQ(b.p99_ns, 1049);
  EXPECT_EQ(got->max_held, 3u) << "only second 7's top 3 were held";
  EXPECT_EQ(got->summary.dropped, 4u);
  EXPECT_TRUE(got->summary.has_trailer);
}

TEST(LatencyPerSecondTest, EmptyAndMissingFiles) {
  testutil::TempDir dir;
  const std::string path = dir.File("empty.bin");
  auto sink = measure::OpenSamplesFile(path, {1, 2});
  ASSERT_TRUE(sink) << sink.error().message;
  ASSERT_TRUE((*sink)->Finish(0, false));
  auto empty = ReadLatencyPerSecond(path);
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_TRUE(empty->seconds.empty());
  EXPECT_EQ(empty->max_held, 0u);
  auto missing = ReadLatencyPerSecond(dir.File("nothing.bin"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nothing.bin"), std::string::npos)
      << missing.error().message;
}

}  // namespace
}  // namespace rtpulse::report
