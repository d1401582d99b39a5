// The k-way merge of a samples file's threads (results/sample_series.h) against a stable sort
// of the same records by (expected_ns, thread), computed here from what the test wrote.
#include "results/sample_series.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/samples_file.h"
#include "support/samples_writer.h"

namespace rtpulse::results {
namespace {

std::string TempPath(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("sample_series_test.") + std::to_string(::getpid()) + "." + name))
      .string();
}

SampleRecord Record(uint16_t thread, uint64_t seq, int64_t expected_ns, int64_t latency_ns) {
  SampleRecord r{};
  r.seq = seq;
  r.expected_ns = expected_ns;
  r.actual_ns = expected_ns + latency_ns;
  r.thread = thread;
  r.cpu = thread;
  return r;
}

/// The truth: a stable sort of the records as written, by (expected_ns, thread).
std::vector<double> SortedLatencies(std::vector<SampleRecord> records) {
  std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.expected_ns != b.expected_ns ? a.expected_ns < b.expected_ns : a.thread < b.thread;
  });
  std::vector<double> out;
  for (const auto& r : records) out.push_back(static_cast<double>(r.actual_ns - r.expected_ns));
  return out;
}

std::vector<double> Replay(const SampleSeries& series) {
  std::vector<double> out;
  const Status s = series.pass([&](double v) { out.push_back(v); });
  EXPECT_TRUE(s.ok()) << s.error().message;
  return out;
}

/// Three threads with their own periods and phases (some deadlines equal across threads),
/// written as a recorder writes them: each thread's records in order, threads interleaved in
/// batches of random size.
std::vector<SampleRecord> InterleavedRun(std::mt19937& rng) {
  const std::array<int64_t, 3> period = {1000, 1500, 1000};
  const std::array<int64_t, 3> phase = {0, 500, 0};
  std::array<std::vector<SampleRecord>, 3> per_thread;
  std::uniform_int_distribution<int64_t> latency(1, 90'000);
  for (uint16_t t = 0; t < 3; ++t) {
    for (uint64_t i = 0; i < 400; ++i) {
      per_thread[t].push_back(
          Record(t, i, 5'000'000 + phase[t] + static_cast<int64_t>(i) * period[t], latency(rng)));
    }
  }
  std::vector<SampleRecord> file;
  std::array<size_t, 3> next{};
  std::uniform_int_distribution<size_t> batch(1, 40);
  std::uniform_int_distribution<uint16_t> pick(0, 2);
  while (file.size() < 1200) {
    const uint16_t t = pick(rng);
    for (size_t n = batch(rng); n > 0 && next[t] < per_thread[t].size(); --n) {
      file.push_back(per_thread[t][next[t]++]);
    }
  }
  return file;
}

TEST(SampleSeriesTest, MergesThreadsByDeadlineAsAStableSortWould) {
  std::mt19937 rng(7);
  const auto records = InterleavedRun(rng);
  const std::string path = TempPath("merge.bin");
  ASSERT_TRUE(testutil::WriteSamplesV1(path, records, 3));
  auto series = OpenSampleSeries(path);
  ASSERT_TRUE(series) << series.error().message;
  EXPECT_EQ(series->threads, 3u);
  EXPECT_EQ(series->dropped, 3u);
  EXPECT_TRUE(series->has_trailer);
  const auto truth = SortedLatencies(records);
  EXPECT_EQ(Replay(*series), truth);
  EXPECT_EQ(Replay(*series), truth) << "a second pass replays the same series";
  std::filesystem::remove(path);
}

TEST(SampleSeriesTest, AThreadWhoseDeadlinesGoBackIsSortedInMemory) {
  std::vector<SampleRecord> records = {Record(0, 0, 3000, 11), Record(1, 0, 2000, 22),
                                       Record(0, 1, 1000, 33), Record(1, 1, 2000, 44),
                                       Record(0, 2, 2000, 55)};
  const std::string path = TempPath("back.bin");
  ASSERT_TRUE(testutil::WriteSamplesV1(path, records, 0, false));
  auto series = OpenSampleSeries(path);
  ASSERT_TRUE(series) << series.error().message;
  EXPECT_EQ(series->threads, 2u);
  EXPECT_FALSE(series->has_trailer);
  // By hand: 1000 (33), then deadline 2000 thread 0 (55) before thread 1's two in file order
  // (22, 44), then 3000 (11).
  const std::vector<double> by_hand = {33, 55, 22, 44, 11};
  EXPECT_EQ(SortedLatencies(records), by_hand);
  EXPECT_EQ(Replay(*series), by_hand);
  std::filesystem::remove(path);
}

TEST(SampleSeriesTest, AFileChangedBetweenPassesIsAnErrorNamingIt) {
  std::mt19937 rng(11);
  auto records = InterleavedRun(rng);
  const std::string path = TempPath("changed.bin");
  ASSERT_TRUE(testutil::WriteSamplesV1(path, records));
  auto series = OpenSampleSeries(path);
  ASSERT_TRUE(series) << series.error().message;
  records.push_back(Record(2, 400, 9'000'000, 5));  // a record the first pass never counted
  ASSERT_TRUE(testutil::WriteSamplesV1(path, records));
  const Status s = series->pass([](double) {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(path), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("changed while it was read"), std::string::npos)
      << s.error().message;
  std::filesystem::remove(path);
}

TEST(SampleSeriesTest, AMissingFileIsAnErrorNamingIt) {
  const std::string path = TempPath("missing.bin");
  auto series = OpenSampleSeries(path);
  ASSERT_FALSE(series);
  EXPECT_NE(series.error().message.find(path), std::string::npos) << series.error().message;
}

}  // namespace
}  // namespace rtpulse::results
