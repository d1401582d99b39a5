// The files of `rtpulse control` (response_times.txt, jobs.csv, statistical_report.txt) and
// the summary table: floor rounding, the reader's checks, golden text, and every printed
// number against tests/results/control_truth.py (Python's statistics module).
#include "results/control_result.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::results {
namespace {

constexpr int64_t kControlPeriodNs = 4'000'000;

ControlJobRow ControlRow(uint64_t job, int64_t release, int64_t latency, int64_t exec,
                         uint32_t skipped = 0) {
  ControlJobRow r;
  r.job = job;
  r.release_ns = release;
  r.start_ns = release + latency;
  r.end_ns = release + latency + exec;
  r.skipped_before = skipped;
  r.miss = latency + exec > kControlPeriodNs;
  return r;
}

/// A job whose release is unknown (SCHED_DEADLINE restarted its period): the grid's anchor is
/// its start; a miss only when the execution alone exceeds the deadline (the period here).
ControlJobRow ControlUnknownRow(uint64_t job, int64_t start, int64_t exec, uint32_t skipped = 0) {
  ControlJobRow r;
  r.job = job;
  r.release_known = false;
  r.release_ns = start;
  r.start_ns = start;
  r.end_ns = start + exec;
  r.skipped_before = skipped;
  r.miss = exec > kControlPeriodNs;
  return r;
}

/// A deterministic 250 Hz run: varied latencies (some sub-microsecond remainders), every 97th
/// job overruns by 5 ms (a miss, and the next release skipped). With `unknown_every` > 0, every
/// such job has its release unknown, the grid re-anchored on its start; those at 5 ms overrun
/// (a certain miss), the others not.
std::vector<ControlJobRow> ControlGeneratedRun(size_t jobs, size_t unknown_every = 0) {
  std::vector<ControlJobRow> rows;
  uint64_t state = 12345;
  auto next = [&](uint64_t mod) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % mod);
  };
  int64_t release = 1'000'000'000;
  uint32_t skipped = 0;
  for (size_t k = 0; k < jobs; ++k) {
    const int64_t latency = 1500 + next(80'000);
    const int64_t exec =
        k % 97 == 50 || (unknown_every > 0 && k % (2 * unknown_every) == unknown_every - 1)
            ? 5'000'000
            : 100'000 + next(300'000);
    if (unknown_every > 0 && k % unknown_every == unknown_every - 1) {
      const int64_t anchor = release + latency;
      rows.push_back(ControlUnknownRow(k, anchor, exec, skipped));
      skipped = exec > kControlPeriodNs ? 1 : 0;
      release = anchor + kControlPeriodNs * (1 + skipped);
      continue;
    }
    rows.push_back(ControlRow(k, release, latency, exec, skipped));
    skipped = latency + exec > kControlPeriodNs ? 1 : 0;
    release += kControlPeriodNs * (1 + skipped);
  }
  return rows;
}

void ControlWriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(ControlResultTest, ResponseTimesAreWholeMicrosecondsRoundedDown) {
  testutil::TempDir dir;
  const std::vector<ControlJobRow> rows = {
      ControlRow(0, 0, 0, 0), ControlRow(1, 4000000, 400, 599), ControlRow(2, 8000000, 1000, 0),
      ControlRow(3, 12000000, 1, 1998), ControlRow(4, 16000000, 123, 4000000)};
  EXPECT_EQ(ResponseTimesUs(rows), (std::vector<int64_t>{0, 0, 1, 1, 4000}));
  ASSERT_TRUE(WriteResponseTimes(dir.File("response_times.txt"), rows));
  EXPECT_EQ(testutil::ReadFile(dir.File("response_times.txt")), "0\n0\n1\n1\n4000\n");
}

TEST(ControlResultTest, ANegativeResponseIsRefusedNotClamped) {
  testutil::TempDir dir;
  ControlJobRow bad = ControlRow(7, 1'000'000, 10, 10);
  bad.end_ns = bad.release_ns - 1;  // before its release (and its start)
  const Status s = WriteResponseTimes(dir.File("response_times.txt"), {bad});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("job 7"), std::string::npos) << s.error().message;
  EXPECT_TRUE(dir.List().empty());
  EXPECT_FALSE(WriteJobLog(dir.File("jobs.csv"), {bad}));
  EXPECT_TRUE(dir.List().empty());
}

TEST(ControlResultTest, JobLogRoundTrips) {
  testutil::TempDir dir;
  const auto rows = ControlGeneratedRun(300, 40);
  ASSERT_TRUE(WriteJobLog(dir.File("jobs.csv"), rows));
  const std::string text = testutil::ReadFile(dir.File("jobs.csv"));
  EXPECT_EQ(text.substr(0, text.find('\n')), kJobLogHeader);
  auto back = ReadJobLog(dir.File("jobs.csv"));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ((*back)[i].job, rows[i].job);
    EXPECT_EQ((*back)[i].release_ns, rows[i].release_ns);
    EXPECT_EQ((*back)[i].start_ns, rows[i].start_ns);
    EXPECT_EQ((*back)[i].end_ns, rows[i].end_ns);
    EXPECT_EQ((*back)[i].skipped_before, rows[i].skipped_before);
    EXPECT_EQ((*back)[i].miss, rows[i].miss);
    EXPECT_EQ((*back)[i].release_known, rows[i].release_known);
  }
}

TEST(ControlResultTest, JobLogLineFormat) {
  ControlJobRow r = ControlRow(3, 1'000'000, 2'500, 4'000'000);
  r.skipped_before = 2;
  EXPECT_EQ(FormatJobLog({r}), std::string(kJobLogHeader) +
                                   "\n3,1000000,1002500,5002500,2500,4000000,4002500,2,1,1\n");
  // A release the loop could not see: no release, latency or response, never 0; the miss
  // only when certain (5 ms of execution alone against a 4 ms deadline), else empty.
  EXPECT_EQ(FormatJobLog({ControlUnknownRow(4, 9'000'000, 5'000'000, 1),
                          ControlUnknownRow(5, 18'000'000, 300'000)}),
            std::string(kJobLogHeader) +
                "\n4,,9000000,14000000,,5000000,,1,1,0\n"
                "5,,18000000,18300000,,300000,,0,,0\n");
}

TEST(ControlResultTest, AJobLogWithoutTheReleaseKnownColumnStillReads) {
  testutil::TempDir dir;
  ControlWriteText(dir.File("jobs.csv"), std::string(kJobLogHeaderWithoutReleaseKnown) +
                                             "\n0,1000,1500,3500,500,2000,2500,0,0\n"
                                             "1,5000,5600,7600,600,2000,2600,0,0\n");
  auto rows = ReadJobLog(dir.File("jobs.csv"));
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_TRUE((*rows)[0].release_known);
  EXPECT_TRUE((*rows)[1].release_known);
  EXPECT_EQ((*rows)[1].release_ns, 5000);
}

TEST(ControlResultTest, MalformedLinesNameFileLineAndValue) {
  testutil::TempDir dir;
  const std::string good = "0,1000,1500,3500,500,2000,2500,0,0,1";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1,5000,5500,7500,500,2000,2500,0,0", "9 fields"},
      {"1,5000,5500,7500,500,2000,2500,0,0,1,9", "11 fields"},
      {"1,5000,55x0,7500,500,2000,2500,0,0,1", "start_ns '55x0' is not a whole number"},
      {"1,5000,,7500,500,2000,2500,0,0,1", "start_ns '' is not a whole number"},
      {"1,,5500,7500,500,2000,2500,0,0,1", "release_ns '' is not a whole number"},
      {"1,5000,5500,7500,500,2000,2500,0,2,1", "miss '2' is not 0 or 1"},
      {"1,5000,5500,7500,500,2000,2500,0,,1", "miss '' is not a whole number"},
      {"1,5000,5500,7500,501,2000,2501,0,0,1", "latency_ns 501 is not start_ns - release_ns = 500"},
      {"1,5000,5500,7500,500,1999,2500,0,0,1", "exec_ns 1999 is not end_ns - start_ns = 2000"},
      {"1,5000,5500,7500,500,2000,2499,0,0,1",
       "response_ns 2499 is not end_ns - release_ns = 2500"},
      {"1,5000,5500,5400,500,-100,400,0,0,1", "end 5400 ns lies before its start"},
      {"1,5000,4000,4500,-1000,500,-500,0,0,1", "end 4500 ns lies before its release"},
      {"0,5000,5500,7500,500,2000,2500,0,0,1", "job 0 does not follow job 0"},
      {"1,1000,1500,3500,500,2000,2500,0,0,1", "release_ns 1000 is not after"},
      {"1,5000,5500,7500,500,2000,2500,-1,0,1", "skipped_before -1 is out of range"},
      {"1,5000,5500,7500,500,2000,2500,0,0,1 ", "release_known '1 ' is not 0 or 1"},
      {"1,5000,5500,7500,500,2000,2500,0,0,2", "release_known '2' is not 0 or 1"},
      // A job whose release is unknown: release, latency and response empty, miss empty or 1.
      {"1,5000,5500,7500,,2000,,0,,0",
       "release_ns '5000' given for a job whose release is "
       "unknown"},
      {"1,,5500,7500,500,2000,,0,,0", "latency_ns '500' given for a job whose release"},
      {"1,,5500,7500,,2000,2000,0,,0", "response_ns '2000' given for a job whose release"},
      {"1,,5500,7500,,2000,,0,0,0", "miss 0 for a job whose release is unknown"},
      {"1,,5500,7500,,1999,,0,,0", "exec_ns 1999 is not end_ns - start_ns = 2000"},
      {"1,,900,7000,,6100,,0,1,0",
       "start_ns (its release unknown) 900 is not after the "
       "previous job's release 1000"},
  };
  for (const auto& [line, want] : cases) {
    const std::string path = dir.File("jobs.csv");
    ControlWriteText(path, std::string(kJobLogHeader) + "\n" + good + "\n" + line + "\n");
    auto rows = ReadJobLog(path);
    ASSERT_FALSE(rows) << line;
    EXPECT_EQ(rows.error().code, ExitCode::kUsage) << line;
    EXPECT_NE(rows.error().message.find(path + ":3: "), std::string::npos) << rows.error().message;
    EXPECT_NE(rows.error().message.find(want), std::string::npos) << rows.error().message;
  }
  ControlWriteText(dir.File("jobs.csv"), "job,release,start\n" + good + "\n");
  auto header = ReadJobLog(dir.File("jobs.csv"));
  ASSERT_FALSE(header);
  EXPECT_NE(header.error().message.find(dir.File("jobs.csv") + ":1: header"), std::string::npos)
      << header.error().message;
}

TEST(ControlResultTest, EmptyInputIsAUsageError) {
  testutil::TempDir dir;
  ControlWriteText(dir.File("jobs.csv"), "");
  auto rows = ReadJobLog(dir.File("jobs.csv"));
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().code, ExitCode::kUsage);
  EXPECT_NE(rows.error().message.find("is empty"), std::string::npos);
  auto missing = ReadJobLog(dir.File("none.csv"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ExitCode::kUsage);

  ControlWriteText(dir.File("jobs.csv"), std::string(kJobLogHeader) + "\n");
  auto none = ReadJobLog(dir.File("jobs.csv"));
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());

  auto stats = ComputeStudyStats({});
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().code, ExitCode::kUsage);
}

TEST(ControlResultTest, StudyStatsExactValues) {
  auto s = ComputeStudyStats({4, 1, 3, 2});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count, 4u);
  EXPECT_EQ(s->sum_us, 10);
  EXPECT_DOUBLE_EQ(s->mean_us, 2.5);
  EXPECT_DOUBLE_EQ(s->median_us, 2.5);  // mean of the two middle values
  EXPECT_EQ(s->min_us, 1);
  EXPECT_EQ(s->max_us, 4);
  EXPECT_DOUBLE_EQ(s->stddev_us, std::sqrt(5.0 / 3.0));  // sample: 5 / (n - 1)
  EXPECT_EQ(s->p90_us, 4);                               // rank ceil(3.6) = 4
  EXPECT_EQ(s->p99_us, 4);

  auto one = ComputeStudyStats({7});
  ASSERT_TRUE(one);
  EXPECT_DOUBLE_EQ(one->median_us, 7);
  EXPECT_DOUBLE_EQ(one->stddev_us, 0);

  std::vector<int64_t> hundred;
  for (int64_t v = 100; v >= 1; --v) hundred.push_back(v);
  auto h = ComputeStudyStats(hundred);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->p90_us, 90);
  EXPECT_EQ(h->p99_us, 99);
  EXPECT_DOUBLE_EQ(h->median_us, 50.5);

  const int64_t big = int64_t{1} << 40;  // squares beyond 64 bits
  auto b = ComputeStudyStats({big, big, big + 2});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->sum_us, 3 * big + 2);
  EXPECT_NEAR(b->stddev_us, std::sqrt(4.0 / 3.0), 1e-9);
}

TEST(ControlResultTest, MinCountForPercentileIsTheNearestRankBound) {
  EXPECT_EQ(MinCountForPercentile(50), 2u);
  EXPECT_EQ(MinCountForPercentile(90), 10u);
  EXPECT_EQ(MinCountForPercentile(99), 100u);
  EXPECT_EQ(MinCountForPercentile(99.9), 1000u);
  EXPECT_EQ(MinCountForPercentile(99.99), 10000u);
  EXPECT_EQ(MinCountForPercentile(99.999), 100000u);
}

TEST(ControlResultTest, StatisticalReportGolden) {
  // Responses 2.600, 3.999 and 5 000.100 us: the file holds 2, 3, 5000.
  std::vector<ControlJobRow> rows = {ControlRow(0, 1'000'000, 600, 2'000),
                                     ControlRow(1, 5'000'000, 999, 3'000),
                                     ControlRow(2, 13'000'000, 100, 5'000'000, 1)};
  ControlScenarioFacts facts;
  facts.configuration = "fifo:99, no stress";
  facts.period_ns = kControlPeriodNs;
  facts.deadline_ns = kControlPeriodNs;
  facts.releases = 4;
  facts.skipped = 1;
  facts.misses = 1;
  facts.notes = {"RT throttling: sched_rt_runtime_us = 950000"};
  EXPECT_EQ(FormatStatisticalReport(rows, facts),
            "# rtpulse control: fifo:99, no stress\n"
            "# The study's table: response times in microseconds, over exactly the values of "
            "response_times.txt (one per job whose release is known, whole us rounded down)\n"
            "Count: 3\n"
            "Sum: 5005\n"
            "Mean: 1668.33\n"
            "Median: 3.00\n"
            "Min: 2\n"
            "Max: 5000\n"
            "StdDev: 2885.31\n"
            "P90: 5000\n"
            "P99: 5000\n"
            "# StdDev: sample standard deviation (divisor n-1; n/a for one value); P90, P99: "
            "nearest rank (the value of rank ceil(p/100 * n) in ascending order); Median: the "
            "middle value, the mean of the two middle values for an even count; source: "
            "response_times.txt\n"
            "\n"
            "rtpulse statistics over jobs.csv: exact ns values shown in us, nearest rank; a "
            "percentile needs at least 1 / (1 - p) jobs to be more than the maximum, and is n/a "
            "below that\n"
            "Wake-up latency (start - release):\n"
            "  min: 0.100 us\n"
            "  p50: 0.600 us\n"
            "  p90: n/a: needs >= 10 jobs\n"
            "  p99: n/a: needs >= 100 jobs\n"
            "  p99.9: n/a: needs >= 1000 jobs\n"
            "  p99.99: n/a: needs >= 10000 jobs\n"
            "  p99.999: n/a: needs >= 100000 jobs\n"
            "  max: 0.999 us\n"
            "Execution (end - start):\n"
            "  min: 2.000 us\n"
            "  p50: 3.000 us\n"
            "  p90: n/a: needs >= 10 jobs\n"
            "  p99: n/a: needs >= 100 jobs\n"
            "  p99.9: n/a: needs >= 1000 jobs\n"
            "  p99.99: n/a: needs >= 10000 jobs\n"
            "  p99.999: n/a: needs >= 100000 jobs\n"
            "  max: 5000.000 us\n"
            "Response (end - release):\n"
            "  min: 2.600 us\n"
            "  p50: 3.999 us\n"
            "  p90: n/a: needs >= 10 jobs\n"
            "  p99: n/a: needs >= 100 jobs\n"
            "  p99.9: n/a: needs >= 1000 jobs\n"
            "  p99.99: n/a: needs >= 10000 jobs\n"
            "  p99.999: n/a: needs >= 100000 jobs\n"
            "  max: 5000.100 us\n"
            "\n"
            "Period: 4000.000 us\n"
            "Deadline: 4000.000 us\n"
            "Releases: 4\n"
            "Jobs: 3\n"
            "Releases unknown: 0\n"
            "Skipped releases: 1 (0 after the last job)\n"
            "Deadline misses: 1 (end > release + deadline; skipped releases are counted above, "
            "not here)\n"
            "Interrupted: no\n"
            "Notes:\n"
            "  - RT throttling: sched_rt_runtime_us = 950000\n");
}

TEST(ControlResultTest, StatisticalReportShowsCountsThatDoNotAddUp) {
  const std::vector<ControlJobRow> rows = {ControlRow(0, 0, 10, 10)};
  ControlScenarioFacts facts;
  facts.releases = 5;
  facts.skipped = 2;
  facts.misses = 1;
  facts.interrupted = true;
  const std::string text = FormatStatisticalReport(rows, facts);
  EXPECT_NE(text.find("Releases: 5 (WARNING: jobs + skipped = 3, not the releases)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Skipped releases: 2 (0 after the last job) (WARNING: jobs.csv's "
                      "skipped_before adds up to 0, plus 0 after the last job)"),
            std::string::npos)
      << text;
  // The releases the last job ran past count in the skipped ones: no warning when they add up.
  facts.skipped_after_last = 2;
  const std::string trailing = FormatStatisticalReport(rows, facts);
  EXPECT_NE(trailing.find("Skipped releases: 2 (2 after the last job)\n"), std::string::npos)
      << trailing;
  EXPECT_NE(text.find("(WARNING: the loop counted 1)"), std::string::npos);
  EXPECT_NE(text.find("StdDev: n/a (needs >= 2 values)\n"), std::string::npos);
  EXPECT_NE(text.find("Interrupted: yes: partial results"), std::string::npos);

  const std::string empty = FormatStatisticalReport({}, facts);
  EXPECT_NE(empty.find("Count: 0\n(no job completed: nothing to summarise)\n"), std::string::npos)
      << empty;
  EXPECT_EQ(empty.find("Mean:"), std::string::npos);
}

TEST(ControlResultTest, EveryPrintedNumberMatchesPythonStatistics) {
  // (jobs, every how many jobs a release is unknown): 3 jobs of which none is known, too.
  const std::pair<size_t, size_t> runs[] = {{1, 0},    {2, 0},     {9, 0}, {10, 0},
                                            {1500, 0}, {1500, 40}, {3, 1}};
  for (const auto& [jobs, unknown_every] : runs) {
    SCOPED_TRACE(testing::Message() << jobs << " jobs, unknown every " << unknown_every);
    testutil::TempDir dir;
    const auto rows = ControlGeneratedRun(jobs, unknown_every);
    ControlScenarioFacts facts;
    facts.configuration = "rr:50, stress";
    facts.period_ns = kControlPeriodNs;
    facts.deadline_ns = kControlPeriodNs;
    for (const auto& r : rows) {
      facts.skipped += r.skipped_before;
      facts.misses += r.miss ? 1 : 0;
    }
    facts.releases = rows.size() + facts.skipped;
    ASSERT_TRUE(WriteResponseTimes(dir.File("response_times.txt"), rows));
    ASSERT_TRUE(WriteJobLog(dir.File("jobs.csv"), rows));
    ASSERT_TRUE(WriteStatisticalReport(dir.File("statistical_report.txt"), rows, facts));
    const std::string report = testutil::ReadFile(dir.File("statistical_report.txt"));
    EXPECT_EQ(report.find("WARNING"), std::string::npos) << report;

    const auto truth = testutil::RunProcess(
        {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/results/control_truth.py",
         dir.File("response_times.txt"), dir.File("jobs.csv")});
    ASSERT_EQ(truth.exit_code, 0) << truth.err;
    size_t blocks = 0;
    size_t from = 0;
    while (from <= truth.out.size()) {
      size_t to = truth.out.find("\n--\n", from);
      if (to == std::string::npos) to = truth.out.size();
      const std::string block = truth.out.substr(from, to - from);
      EXPECT_NE(report.find(block), std::string::npos) << "python's block:\n"
                                                       << block << "\nreport:\n"
                                                       << report;
      ++blocks;
      from = to + 4;
    }
    // One block more ("N of them certain misses") when some release is unknown.
    EXPECT_EQ(blocks, unknown_every > 0 ? 9u : 8u);
    // The truth can disagree: a response_times.txt whose first value differs is refused.
    std::string times = testutil::ReadFile(dir.File("response_times.txt"));
    times.insert(0, "1");
    ControlWriteText(dir.File("response_times.txt"), times);
    const auto off = testutil::RunProcess(
        {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/results/control_truth.py",
         dir.File("response_times.txt"), dir.File("jobs.csv")});
    EXPECT_NE(off.exit_code, 0) << off.out;
  }
}

TEST(ControlResultTest, SummaryTableGolden) {
  // Responses 2.600, 3.999, 5 000.100 us (floor 2, 3, 5000); max latency 999 ns.
  const std::vector<ControlJobRow> rows = {ControlRow(0, 1'000'000, 600, 2'000),
                                           ControlRow(1, 5'000'000, 999, 3'000),
                                           ControlRow(2, 13'000'000, 100, 5'000'000, 1)};
  const ControlSummaryRow s = SummarizeControlScenario("fifo-99", "fifo:99", rows, 1);
  EXPECT_EQ(s.jobs, 3u);
  EXPECT_EQ(s.skipped, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.responses, 3u);
  EXPECT_DOUBLE_EQ(s.mean_response_us.value_or(-1), 5005.0 / 3);
  EXPECT_EQ(s.p99_response_us, 5000);
  EXPECT_EQ(s.max_response_us, 5000);
  EXPECT_EQ(s.max_latency_us, 0);
  EXPECT_DOUBLE_EQ(s.median_exec_us.value_or(-1), 3.0);
  const ControlSummaryRow none =
      SummarizeControlScenario("deadline-400-stress", "deadline:400us/4ms/4ms, stress", {}, 0);
  EXPECT_EQ(FormatControlSummary({s, none}),
            "scenario             configuration                   jobs  skipped  misses  mean "
            "resp us  p99 resp us  max resp us  max latency us  median exec us\n"
            "fifo-99              fifo:99                            3        1       1       "
            "1668.33         5000         5000               0           3.000\n"
            "deadline-400-stress  deadline:400us/4ms/4ms, stress     0        0       0           "
            "n/a          n/a          n/a             n/a             n/a\n"
            "response times in whole us rounded down (as in response_times.txt; p99 by nearest "
            "rank); max latency floor(ns / 1000); median exec in us from the ns values\n");
}

TEST(ControlResultTest, AnUnknownReleaseGivesNoLatencyOrResponseAndOneMissCount) {
  // Job 1: its release unknown, 5 ms of execution alone against a 4 ms deadline (a certain
  // miss); job 3: unknown, 0.3 ms (not known to have missed); jobs 0 and 2 known, job 2 a miss.
  const std::vector<ControlJobRow> rows = {
      ControlRow(0, 1'000'000, 600, 2'000), ControlUnknownRow(1, 5'000'000, 5'000'000),
      ControlRow(2, 13'000'000, 700, 4'000'000, 1), ControlUnknownRow(3, 20'000'000, 300'000)};
  EXPECT_EQ(ResponseTimesUs(rows), (std::vector<int64_t>{2, 4000}));
  ControlScenarioFacts facts;
  facts.configuration = "deadline:1ms/4ms/4ms, no stress";
  facts.period_ns = kControlPeriodNs;
  facts.deadline_ns = kControlPeriodNs;
  facts.releases = 5;
  facts.skipped = 1;
  facts.misses = 2;
  const std::string report = FormatStatisticalReport(rows, facts);
  EXPECT_EQ(report.find("WARNING"), std::string::npos) << report;
  for (const char* want :
       {"Count: 2\n", "Min: 2\n", "Max: 4000\n",
        "latency and response over the 2 jobs whose release is known, execution over all 4\n",
        // The smallest latency is job 0's 0.6 us, not a 0 from an unknown release.
        "Wake-up latency (start - release):\n  min: 0.600 us\n",
        "Execution (end - start):\n  min: 2.000 us\n",
        "Response (end - release):\n  min: 2.600 us\n",
        "Jobs: 4\nReleases unknown: 2 jobs (SCHED_DEADLINE restarted its period where the "
        "loop cannot see: no latency and no response for them, not 0; 1 of them certain "
        "misses, their execution alone above the deadline)\n",
        "Deadline misses: at least 2 (",
        "  (1 job whose release is unknown may have missed too: not counted, not known)\n"}) {
    EXPECT_NE(report.find(want), std::string::npos) << want << "\nreport:\n" << report;
  }
  const ControlSummaryRow s = SummarizeControlScenario("deadline-1ms", "deadline:1ms", rows, 1);
  EXPECT_EQ(s.jobs, 4u);
  EXPECT_EQ(s.responses, 2u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.misses_unknown, 1u) << "job 3's release is unknown and its miss not certain";
  EXPECT_EQ(s.max_response_us, 4000);
  EXPECT_EQ(s.max_latency_us, 0);  // 0.7 us, floor
  EXPECT_DOUBLE_EQ(s.median_exec_us.value_or(-1), (300.0 + 4000.0) / 2);
  const std::string table = FormatControlSummary({s});
  EXPECT_NE(table.find(" >=2 "), std::string::npos) << "a lower bound, said in its cell\n" << table;
  EXPECT_NE(table.find("deadline-1ms: 2 of 4 jobs' releases unknown (SCHED_DEADLINE restarted "
                       "its period): response and latency over the other 2; misses counted "
                       "among them only when certain, so its misses are a lower bound\n"),
            std::string::npos)
      << table;
  // No release known: no response figure at all, n/a, while the execution is known.
  const std::vector<ControlJobRow> blind = {ControlUnknownRow(0, 5'000'000, 300'000)};
  const ControlSummaryRow b = SummarizeControlScenario("d", "deadline", blind, 0);
  EXPECT_FALSE(b.mean_response_us);
  EXPECT_FALSE(b.max_latency_us);
  EXPECT_DOUBLE_EQ(b.median_exec_us.value_or(-1), 300.0);
  const std::string blind_report = FormatStatisticalReport(blind, facts);
  EXPECT_NE(blind_report.find("Count: 0\n(no job's release is known: no response to summarise)"),
            std::string::npos)
      << blind_report;
  EXPECT_NE(blind_report.find("Response (end - release):\n  n/a: no job's release is known\n"),
            std::string::npos)
      << blind_report;
}

}  // namespace
}  // namespace rtpulse::results
