#include "results/log_percentiles.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/samples_file.h"
#include "stats/summary.h"
#include "support/samples_writer.h"

namespace rtpulse::results {
namespace {

constexpr int64_t kInterval = 1'000'000;
constexpr uint8_t kAbs = 0;    // measure::WakePath::kAbs
constexpr uint8_t kPosix = 3;  // measure::WakePath::kPosix

/// A samples file written record by record (the format of docs/samples-format.md).
class LogFile {
 public:
  LogFile() {
    path_ = (std::filesystem::temp_directory_path() /
             ("log_percentiles_test." + std::to_string(::getpid()) + "." +
              std::to_string(counter_++) + ".bin"))
                .string();
  }
  ~LogFile() { std::filesystem::remove(path_); }
  void Add(const SampleRecord& r) { records_.push_back(r); }
  void Write() const { ASSERT_TRUE(testutil::WriteSamplesV1(path_, records_)) << path_; }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
  std::vector<SampleRecord> records_;
};

/// A probe thread's run as the probe loop would record it, and the same run in the log: a
/// late wake-up of `latency` swallows floor(latency / T) periods, each late by latency - jT.
struct ThreadTruth {
  ProbeResult probe;
  std::vector<int64_t> wakeups;
  std::vector<int64_t> periods;
};

ThreadTruth SimulateThread(int index, uint8_t wake, uint64_t count, std::mt19937_64& rng,
                           std::vector<SampleRecord>& log) {
  ThreadTruth t;
  t.probe.index = index;
  t.probe.interval_ns = kInterval;
  std::uniform_int_distribution<int64_t> usual(-300, 90'000);
  std::uniform_int_distribution<int64_t> stall(kInterval, 4 * kInterval + 12'345);
  uint64_t seq = 0;
  for (uint64_t n = 0; n < count; ++n) {
    const int64_t latency = n % 97 == 13 ? stall(rng) : usual(rng);
    const uint64_t skipped = latency >= kInterval ? static_cast<uint64_t>(latency / kInterval) : 0;
    SampleRecord r{};
    r.seq = seq;
    r.expected_ns = 5'000'000'000 + static_cast<int64_t>(seq) * kInterval;
    r.actual_ns = r.expected_ns + latency;
    r.thread = static_cast<uint16_t>(index);
    r.wake_path = wake;
    r.flags = skipped > 0 ? SampleRecord::kMissed : uint8_t{0};
    log.push_back(r);
    t.probe.histogram.Record(latency);
    t.wakeups.push_back(latency);
    t.periods.push_back(latency);
    for (uint64_t j = 1; j <= skipped; ++j) {
      t.probe.skipped_histogram.Record(latency - static_cast<int64_t>(j) * kInterval);
      t.periods.push_back(latency - static_cast<int64_t>(j) * kInterval);
    }
    if (skipped > 0) ++t.probe.missed_activations;
    t.probe.skipped_periods += skipped;
    seq += 1 + skipped;
  }
  t.probe.periods_elapsed = seq;
  return t;
}

/// The independent computation: sort, take the element of rank ceil(p/100*N).
std::vector<int64_t> SortedRanks(std::vector<int64_t> v, std::span<const double> percentiles) {
  std::sort(v.begin(), v.end());
  std::vector<int64_t> out;
  for (double p : percentiles) {
    const auto rank = static_cast<size_t>(
        std::max(1.0, std::ceil(p / 100.0 * static_cast<double>(v.size()) - 1e-9)));
    out.push_back(v[rank - 1]);
  }
  return out;
}

struct TwoPaths {
  LogFile log;
  PathRun abs;
  std::vector<ThreadTruth> truth;
};

/// Two threads on the abs path, interleaved in batches as the writer does, and a posix path's
/// records in the same file that an abs selection must skip.
void MakeTwoPaths(TwoPaths& run) {
  std::mt19937_64 rng(7);
  std::vector<std::vector<SampleRecord>> records(3);
  run.abs.wake = "abs";
  for (size_t i = 0; i < 2; ++i) {
    run.truth.push_back(SimulateThread(static_cast<int>(i), kAbs, 3000 + 500 * i, rng, records[i]));
    run.abs.probes.push_back(run.truth.back().probe);
  }
  SimulateThread(0, kPosix, 700, rng, records[2]);
  std::vector<size_t> at(3, 0);
  for (bool more = true; more;) {
    more = false;
    for (size_t i = 0; i < 3; ++i) {
      for (size_t k = 0; k < 100 && at[i] < records[i].size(); ++k) {
        run.log.Add(records[i][at[i]++]);
      }
      more |= at[i] < records[i].size();
    }
  }
  run.log.Write();
}

TEST(ExactPercentilesFromLogTest, EveryStreamEqualsTheSortedLogAndSkipsOtherWakePaths) {
  TwoPaths run;
  MakeTwoPaths(run);
  LogPercentileRequest request{run.log.path(), kAbs, stats::kPercentiles, true};
  auto e = ExactPercentilesFromLog(run.abs, request);
  ASSERT_TRUE(e) << e.error().message;
  std::vector<int64_t> all;
  std::vector<int64_t> all_periods;
  ASSERT_EQ(e->threads.size(), 2u);
  ASSERT_EQ(e->threads_per_period.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const ThreadTruth& t = run.truth[i];
    ASSERT_GT(t.probe.skipped_periods, 30u);
    EXPECT_EQ(e->threads[i], SortedRanks(t.wakeups, stats::kPercentiles)) << "thread " << i;
    EXPECT_EQ(e->threads_per_period[i], SortedRanks(t.periods, stats::kPercentiles))
        << "thread " << i;
    all.insert(all.end(), t.wakeups.begin(), t.wakeups.end());
    all_periods.insert(all_periods.end(), t.periods.begin(), t.periods.end());
  }
  EXPECT_EQ(e->all, SortedRanks(all, stats::kPercentiles));
  EXPECT_EQ(e->all_per_period, SortedRanks(all_periods, stats::kPercentiles));
  EXPECT_TRUE(e->per_period_note.empty());
  // Values of the data, not bucket edges: with samples up to 4 ms most percentiles lie in
  // buckets several ns wide, where the upper edge is rarely a sample.
  Histogram merged;
  for (const auto& p : run.abs.probes) merged.Merge(p.histogram);
  int differ = 0;
  for (size_t i = 0; i < stats::kPercentiles.size(); ++i) {
    differ += merged.Percentile(stats::kPercentiles[i]) != e->all[i];
  }
  EXPECT_GE(differ, 3);
  EXPECT_GE(e->passes, 2u * 6u);  // six streams, a histogram pass and a selection each
}

TEST(ExactPercentilesFromLogTest, ALogWithoutTheRunsSamplesIsAnErrorNotAWrongValue) {
  TwoPaths run;
  MakeTwoPaths(run);
  // Without the wake-path filter the posix records are counted too.
  LogPercentileRequest unfiltered{run.log.path(), std::nullopt, stats::kPercentiles, false};
  auto e = ExactPercentilesFromLog(run.abs, unfiltered);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, ExitCode::kFailure);
  EXPECT_NE(e.error().message.find("does not hold exactly the samples all threads of abs"),
            std::string::npos)
      << e.error().message;
  EXPECT_NE(e.error().message.find("the log gives 7200, the run counted 6500"), std::string::npos)
      << e.error().message;
  // A sample the log does not have (a dropped record).
  PathRun more = run.abs;
  more.probes[1].histogram.Record(1234);
  LogPercentileRequest request{run.log.path(), kAbs, stats::kPercentiles, true};
  EXPECT_FALSE(ExactPercentilesFromLog(more, request));
}

TEST(ExactPercentilesFromLogTest, PerPeriodThatDoesNotMatchStaysBucketEdgesWithANote) {
  TwoPaths run;
  MakeTwoPaths(run);
  PathRun changed = run.abs;
  changed.probes[0].skipped_histogram = Histogram();
  for (int k = 0; k < static_cast<int>(changed.probes[0].skipped_periods); ++k) {
    changed.probes[0].skipped_histogram.Record(5);
  }
  LogPercentileRequest request{run.log.path(), kAbs, stats::kPercentiles, true};
  auto e = ExactPercentilesFromLog(changed, request);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_FALSE(e->all.empty());
  EXPECT_TRUE(e->all_per_period.empty());
  EXPECT_TRUE(e->threads_per_period.empty());
  EXPECT_NE(e->per_period_note.find("does not hold exactly the periods"), std::string::npos)
      << e->per_period_note;
  // An import's probes have no per-period latencies: nothing is selected, nothing noted.
  PathRun imported = run.abs;
  for (auto& p : imported.probes) p.per_period_unknown = true;
  auto i = ExactPercentilesFromLog(imported, request);
  ASSERT_TRUE(i);
  EXPECT_TRUE(i->all_per_period.empty());
  EXPECT_TRUE(i->per_period_note.empty());
  // SCHED_DEADLINE's re-anchored grid: the gaps do not give the deadlines; said, not guessed.
  PathRun restarted = run.abs;
  restarted.probes[1].grid_restarts = 2;
  auto g = ExactPercentilesFromLog(restarted, request);
  ASSERT_TRUE(g);
  EXPECT_FALSE(g->all.empty());
  EXPECT_TRUE(g->all_per_period.empty());
  EXPECT_NE(g->per_period_note.find("2 activations of abs re-anchored the period grid"),
            std::string::npos)
      << g->per_period_note;
}

TEST(ExactPercentilesFromLogTest, AnEmptyPathAndAMissingFile) {
  LogFile log;
  log.Write();
  PathRun path;
  path.wake = "abs";
  path.probes.emplace_back();
  path.probes[0].interval_ns = kInterval;
  LogPercentileRequest request{log.path(), kAbs, stats::kPercentiles, true};
  auto e = ExactPercentilesFromLog(path, request);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->all, std::vector<int64_t>(stats::kPercentiles.size(), 0));
  request.samples_path = log.path() + ".missing";
  EXPECT_FALSE(ExactPercentilesFromLog(path, request));
}

TEST(PickPercentilesTest, PicksByPercentileAndRefusesMissingOnes) {
  ExactPathPercentiles e;
  e.percentiles = {50.0, 95.0, 99.0};
  e.all = {10, 20, 30};
  const double wanted[] = {99.0, 50.0};
  EXPECT_EQ(PickPercentiles(e, e.all, wanted), (std::vector<int64_t>{30, 10}));
  const double absent[] = {99.9};
  EXPECT_FALSE(PickPercentiles(e, e.all, absent));
  EXPECT_FALSE(PickPercentiles(e, e.all_per_period, wanted));  // not computed
}

}  // namespace
}  // namespace rtpulse::results
