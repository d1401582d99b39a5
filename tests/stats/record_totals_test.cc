// `rtpulse samples`' totals (stats/record_totals.h) on chosen records: counts, missed flags,
// min and max per thread and over all, negative latencies included.
#include "stats/record_totals.h"

#include <gtest/gtest.h>

namespace rtpulse::stats {
namespace {

SampleRecord Record(uint16_t thread, uint16_t cpu, int64_t latency_ns, bool missed = false) {
  return SampleRecord{0,
                      1'000'000,
                      1'000'000 + latency_ns,
                      thread,
                      cpu,
                      0,
                      missed ? SampleRecord::kMissed : uint8_t{0},
                      0};
}

TEST(RecordTotalsTest, CountsMissedMinAndMaxPerThreadAndOverAll) {
  RecordTotals totals;
  EXPECT_EQ(totals.all.count, 0u);
  totals.Add(Record(0, 2, 5'000));
  totals.Add(Record(1, 3, -250));  // a wake-up before the deadline (clock skew) stays negative
  totals.Add(Record(0, 2, 12'000, true));
  totals.Add(Record(1, 3, 700, true));
  totals.Add(Record(0, 2, 9'000));
  EXPECT_EQ(totals.all.count, 5u);
  EXPECT_EQ(totals.all.missed, 2u);
  EXPECT_EQ(totals.all.min_ns, -250);
  EXPECT_EQ(totals.all.max_ns, 12'000);
  ASSERT_EQ(totals.threads.size(), 2u);
  const RecordGroup& t0 = totals.threads.at(0);
  EXPECT_EQ(t0.count, 3u);
  EXPECT_EQ(t0.missed, 1u);
  EXPECT_EQ(t0.min_ns, 5'000);
  EXPECT_EQ(t0.max_ns, 12'000);
  EXPECT_EQ(t0.cpu, 2);
  const RecordGroup& t1 = totals.threads.at(1);
  EXPECT_EQ(t1.count, 2u);
  EXPECT_EQ(t1.min_ns, -250);
  EXPECT_EQ(t1.max_ns, 700);
  EXPECT_EQ(t1.cpu, 3);
}

TEST(RecordTotalsTest, AnUnpinnedProbeKeepsTheMarker) {
  RecordTotals totals;
  totals.Add(Record(4, kUnpinnedCpu, 1'000));
  EXPECT_EQ(totals.threads.at(4).cpu, kUnpinnedCpu);
}

}  // namespace
}  // namespace rtpulse::stats
