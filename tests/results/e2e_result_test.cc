// The e2e result files (results/e2e_result.h): exact ms text, stage rules, the statistics'
// exact values, and frames.csv's reader refusing every kind of bad field.
#include "results/e2e_result.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace rtpulse::results {
namespace {

using testutil::ReadFile;
using testutil::TempDir;

E2eFrameRow E2eTestRow(uint64_t index, int64_t base) {
  E2eFrameRow r;
  r.index = index;
  r.source_seq = index + 3;
  r.release_ns = base;
  r.capture_ns = base + 10;
  r.read_end_ns = base + 110;        // capture 100
  r.infer_start_ns = base + 130;     // queue 20
  r.pre_end_ns = base + 430;         // preproc 300
  r.inference_end_ns = base + 5430;  // inference 5000
  r.post_end_ns = base + 5470;       // postproc 40
  r.alert_ns = base + 5477;          // decision -> alert 7
  r.edge_ns = index % 2 == 0 ? base + 5475 : -1;
  r.dropped_before = static_cast<uint32_t>(index);
  r.obstacle = index % 2 == 1;
  r.changed = index == 1;
  r.miss = index == 2;
  r.roi_depth_m = 1.25;
  return r;
}

TEST(E2eResult, MsTextIsExactNanoseconds) {
  EXPECT_EQ(E2eMsText(0), "0.000000");
  EXPECT_EQ(E2eMsText(1), "0.000001");
  EXPECT_EQ(E2eMsText(1234567), "1.234567");
  EXPECT_EQ(E2eMsText(-5), "-0.000005");
  EXPECT_EQ(E2eMsText(std::numeric_limits<int64_t>::max()), "9223372036854.775807");
  EXPECT_EQ(E2eMsText(std::numeric_limits<int64_t>::min()), "-9223372036854.775808");
}

TEST(E2eResult, StagesFollowTheirRulesAndAddUpToTotal) {
  auto s = StagesOf(E2eTestRow(0, 1000));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->capture_ns, 100);
  EXPECT_EQ(s->queue_ns, 20);
  EXPECT_EQ(s->preproc_ns, 300);
  EXPECT_EQ(s->inference_ns, 5000);
  EXPECT_EQ(s->postproc_ns, 40);
  EXPECT_EQ(s->decision_to_alert_ns, 7);
  EXPECT_EQ(s->total_ns, 5467);
  EXPECT_EQ(s->decision_to_edge_ns, 5);  // the edge may come before the sink returns
  EXPECT_EQ(StagesOf(E2eTestRow(1, 1000))->decision_to_edge_ns, -1);
  // A driver's stamp after the read: Capture and Total negative/short, as measured.
  E2eFrameRow late = E2eTestRow(5, 1000);
  late.capture_ns = late.read_end_ns + 50;
  auto l = StagesOf(late);
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->capture_ns, -50);
  EXPECT_EQ(l->total_ns, 5467 - 150);
  E2eRunFacts facts;
  facts.timestamp_source = "driver-eof";
  EXPECT_NE(
      FormatE2eStatistics({late}, facts).find("Capture stamps after the read's end: 1 frames"),
      std::string::npos);
  E2eFrameRow bad = E2eTestRow(4, 1000);
  bad.pre_end_ns = bad.infer_start_ns - 1;
  auto refused = StagesOf(bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("frame 4"), std::string::npos);
  EXPECT_NE(refused.error().message.find("pre_end_ns"), std::string::npos);
  EXPECT_NE(refused.error().message.find("not clamped"), std::string::npos);
}

TEST(E2eResult, StageStatisticsExactValues) {
  EXPECT_FALSE(ComputeE2eStageStats({}));
  auto one = ComputeE2eStageStats({42});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->count, 1u);
  EXPECT_DOUBLE_EQ(one->mean_ns, 42);
  EXPECT_DOUBLE_EQ(one->std_ns, 0);
  EXPECT_EQ(one->p50_ns, 42);
  EXPECT_EQ(one->p99_ns, 42);
  // 1..100 in reverse: mean 50.5, population std sqrt((100^2 - 1) / 12), nearest ranks.
  std::vector<int64_t> v;
  for (int64_t i = 100; i >= 1; --i) v.push_back(i);
  auto s = ComputeE2eStageStats(v);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->mean_ns, 50.5);
  EXPECT_NEAR(s->std_ns, 28.86607004772212, 1e-9);
  EXPECT_EQ(s->min_ns, 1);
  EXPECT_EQ(s->p50_ns, 50);
  EXPECT_EQ(s->p90_ns, 90);
  EXPECT_EQ(s->p99_ns, 99);
  EXPECT_EQ(s->max_ns, 100);
  // Huge values do not overflow the sum.
  const int64_t big = std::numeric_limits<int64_t>::max() - 1;
  auto h = ComputeE2eStageStats({big, big});
  ASSERT_TRUE(h);
  EXPECT_DOUBLE_EQ(h->mean_ns, static_cast<double>(big));
}

TEST(E2eResult, SeedCsvHasTheSeedsHeaderAndColumnOrder) {
  const std::string csv = FormatE2eLatencyCsv({E2eTestRow(0, 1000), E2eTestRow(1, 9000)});
  EXPECT_EQ(csv,
            "Sample,Total,Preproc,Inference,Postproc,Capture,DecisionToAlert\n"
            "1,0.005467,0.000300,0.005000,0.000040,0.000100,0.000007\n"
            "2,0.005467,0.000300,0.005000,0.000040,0.000100,0.000007\n");
}

TEST(E2eResult, FrameLogRoundTripsEveryField) {
  TempDir dir;
  std::vector<E2eFrameRow> rows = {E2eTestRow(0, 1000), E2eTestRow(1, 9000), E2eTestRow(2, 20000)};
  // A frame whose ROI depth is not known (no fit, timing only): an empty field, read as such.
  rows[1].roi_depth_m = std::numeric_limits<double>::quiet_NaN();
  ASSERT_TRUE(WriteFrameLog(dir.File("frames.csv"), rows));
  EXPECT_NE(ReadFile(dir.File("frames.csv")).find(",1,1,0,,"), std::string::npos)
      << ReadFile(dir.File("frames.csv"));
  auto back = ReadFrameLog(dir.File("frames.csv"));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& a = rows[i];
    const auto& b = (*back)[i];
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.source_seq, b.source_seq);
    EXPECT_EQ(a.release_ns, b.release_ns);
    EXPECT_EQ(a.capture_ns, b.capture_ns);
    EXPECT_EQ(a.read_end_ns, b.read_end_ns);
    EXPECT_EQ(a.infer_start_ns, b.infer_start_ns);
    EXPECT_EQ(a.pre_end_ns, b.pre_end_ns);
    EXPECT_EQ(a.inference_end_ns, b.inference_end_ns);
    EXPECT_EQ(a.post_end_ns, b.post_end_ns);
    EXPECT_EQ(a.alert_ns, b.alert_ns);
    EXPECT_EQ(a.edge_ns, b.edge_ns);
    EXPECT_EQ(a.dropped_before, b.dropped_before);
    EXPECT_EQ(a.lost_before, b.lost_before);
    EXPECT_EQ(a.obstacle, b.obstacle);
    EXPECT_EQ(a.changed, b.changed);
    EXPECT_EQ(a.miss, b.miss);
    if (std::isnan(a.roi_depth_m)) {
      EXPECT_TRUE(std::isnan(b.roi_depth_m)) << i;
    } else {
      EXPECT_DOUBLE_EQ(a.roi_depth_m, b.roi_depth_m);
    }
  }
  // A row out of stage order is refused on write, and nothing is written.
  E2eFrameRow bad = E2eTestRow(3, 1000);
  bad.alert_ns = bad.post_end_ns - 1;
  EXPECT_FALSE(WriteFrameLog(dir.File("bad.csv"), {bad}));
  EXPECT_FALSE(std::filesystem::exists(dir.File("bad.csv")));
}

TEST(E2eResult, FrameLogReaderNamesTheLineColumnAndValue) {
  TempDir dir;
  const std::string good = FormatFrameLog({E2eTestRow(0, 1000), E2eTestRow(1, 9000)});
  const std::string header = good.substr(0, good.find('\n') + 1);
  const std::string line1 =
      good.substr(header.size(), good.find('\n', header.size()) - header.size() + 1);
  const auto replace_field = [&](size_t column, const std::string& value) {
    std::vector<std::string> f;
    std::string cell;
    for (char c : line1.substr(0, line1.size() - 1)) {
      if (c == ',') {
        f.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    f.push_back(cell);
    f[column] = value;
    std::string out;
    for (size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + f[i];
    return header + out + "\n";
  };
  const struct {
    std::string text;
    std::string says;
  } cases[] = {
      {"", "empty file"},
      {"index,foo\n", "header"},
      {header + "1,2,3\n", "3 fields"},
      {replace_field(3, "12x"), "capture_ns '12x'"},
      {replace_field(0, "-1"), "index -1 is negative"},
      {replace_field(11, "-2"), "dropped_before -2 is out of range"},
      {replace_field(13, "2"), "obstacle '2' is not 0 or 1"},
      {replace_field(15, "yes"), "miss 'yes'"},
      {replace_field(16, "nan"),
       "roi_depth_m 'nan' is neither a finite number of metres nor "
       "empty"},
      {replace_field(10, "-7"), "edge_ns -7"},
      {replace_field(20, "4999"), "inference_ns 4999 is not inference_end_ns - pre_end_ns = 5000"},
      {replace_field(23, "1"), "total_ns 1 is not alert_ns - capture_ns"},
      {replace_field(6, "0"), "lies before"},
      {header + line1 + line1, "index 0 does not follow 0"},
  };
  for (const auto& c : cases) {
    const std::string path = dir.File("frames.csv");
    std::ofstream(path) << c.text;
    auto r = ReadFrameLog(path);
    ASSERT_FALSE(r) << c.says;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().code, ExitCode::kUsage) << c.says;
    if (c.text.size() > header.size()) {
      EXPECT_NE(r.error().message.find(path + ":"), std::string::npos) << r.error().message;
    }
  }
}

TEST(E2eResult, PercentilesAreNaBelowTheCountTheyNeed) {
  // Nearest rank: below 10 values p90 is the maximum, below 100 p99 is; those print n/a.
  EXPECT_EQ(E2ePercentileText(1234, 90, 9), "n/a");
  EXPECT_EQ(E2ePercentileText(1234, 90, 10), "0.001234");
  EXPECT_EQ(E2ePercentileText(1234, 99, 99), "n/a");
  EXPECT_EQ(E2ePercentileText(1234, 99, 100), "0.001234");
  std::vector<E2eFrameRow> rows;
  for (uint64_t i = 0; i < 40; ++i)
    rows.push_back(E2eTestRow(i, 1000 + 100000 * static_cast<int64_t>(i)));
  E2eRunFacts facts;
  const std::string text = FormatE2eStatistics(rows, facts);
  const auto at = text.find("\nTotal ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  // 40 frames: p90 is a percentile, p99 is not (it would be the maximum).
  EXPECT_NE(line.find(" n/a "), std::string::npos) << line;
  EXPECT_EQ(line.find("n/a"), line.rfind("n/a")) << line;
}

TEST(E2eResult, StatisticsSayWhatCannotBeKnown) {
  E2eRunFacts facts;
  facts.scenario = "baseline";
  facts.mode = "back-to-back";
  const std::string empty = FormatE2eStatistics({}, facts);
  EXPECT_NE(empty.find("Throughput: n/a"), std::string::npos) << empty;
  EXPECT_NE(empty.find("Misses: not counted (no deadline"), std::string::npos) << empty;
  EXPECT_NE(empty.find("Total            n/a"), std::string::npos) << empty;
  facts.deadline_ns = 5000;
  facts.misses = 1;
  facts.released = 3;
  facts.dropped = 3;
  facts.start_ns = 1000;
  facts.end_ns = 1000 + 1'000'000;
  const std::string text =
      FormatE2eStatistics({E2eTestRow(0, 1000), E2eTestRow(1, 9000), E2eTestRow(2, 20000)}, facts);
  EXPECT_NE(text.find("Misses: 1 (Total above the deadline)"), std::string::npos) << text;
  // Alerts at 1000, 9000 and 20000 (+ 5477): 2 intervals in 19000 ns.
  EXPECT_NE(
      text.find("Throughput: 105263.158 frames/s (2 intervals between the 3 frames' alerts in "
                "19000 ns)"),
      std::string::npos)
      << text;
  // dropped_before sums to 0 + 1 + 2 = 3: none after the last frame.
  EXPECT_NE(text.find("Dropped: 3 (released, never processed; 0 after"), std::string::npos) << text;
  // Two of three frames have an edge: DecisionToEdge over those two only.
  EXPECT_NE(text.find("DecisionToEdge         2 "), std::string::npos) << text;
}

}  // namespace
}  // namespace rtpulse::results
