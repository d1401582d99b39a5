// Golden and format tests for the cyclictest-compatible outputs.
//
// Golden files live in tests/data/golden/. The histogram blocks were written by hand from
// cyclictest's printf formats and the values recorded below (and are also checked against
// the independent snprintf() reconstruction in this file); the JSON document was generated
// once and reviewed field by field (JsonTest below asserts the important values directly). After an
// intentional output change, rewrite them with
//
//   RTPULSE_UPDATE_GOLDEN=1 ctest --test-dir build -R Golden
//
// (the rewriting tests report SKIPPED so an update run never passes silently), then review
// `git diff tests/data/golden` before committing.
#include "results/cyclictest_format.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "stats/summary.h"
#include "support/test_paths.h"

namespace rtpulse::results {
namespace {

using nlohmann::json;

// ---- Golden files ----------------------------------------------------------------------

bool UpdatingGolden() {
  const char* env = std::getenv("RTPULSE_UPDATE_GOLDEN");
  return env != nullptr && std::string(env) == "1";
}

std::string GoldenPath(const std::string& name) {
  return std::string(RTPULSE_TEST_DATA) + "/golden/" + name;
}

// Compares `actual` with the golden file byte for byte, or rewrites the file (and skips)
// when RTPULSE_UPDATE_GOLDEN=1.
void ExpectGolden(const std::string& name, const std::string& actual) {
  const std::string path = GoldenPath(name);
  if (UpdatingGolden()) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    GTEST_SKIP() << "rewrote " << path << ": review the diff";
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << " (create it with RTPULSE_UPDATE_GOLDEN=1)";
  const std::string expected{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(actual, expected) << "output differs from " << path;
}

// ---- A synthetic run -------------------------------------------------------------------

// Records values the way the engine does: the log histogram gets every sample in ns, the
// -h histogram gets whole microseconds below the limit, overflows and underflows counted.
ProbeResult MakeProbe(int index, int cpu, int tid, const std::vector<int64_t>& values_ns,
                      int64_t limit_us, std::vector<uint64_t> overflow_seqs,
                      uint64_t overflow_seqs_dropped) {
  ProbeResult p;
  p.index = index;
  p.cpu = cpu;
  p.tid = tid;
  p.policy = "fifo";
  p.priority = 80;
  p.interval_ns = 1'000'000;
  p.wake = "abs";
  LinearHistogram lin;
  lin.limit_us = limit_us;
  lin.counts.assign(static_cast<size_t>(limit_us), 0);
  for (int64_t v : values_ns) {
    p.histogram.Record(v);
    if (v < 0) {
      ++lin.underflows;
    } else if (v / kNsPerUs >= limit_us) {
      ++lin.overflows;
    } else {
      ++lin.counts[static_cast<size_t>(v / kNsPerUs)];
    }
  }
  EXPECT_EQ(lin.overflows, overflow_seqs.size() + overflow_seqs_dropped) << "inconsistent fixture";
  lin.overflow_seqs = std::move(overflow_seqs);
  lin.overflow_seqs_dropped = overflow_seqs_dropped;
  p.linear = std::move(lin);
  p.last_latency_ns = values_ns.back();
  p.periods_elapsed = values_ns.size();
  return p;
}

const std::vector<int64_t> kThread0Ns = {1500, 2100, 2900, 3000, 3999, 5200, 9000, 12000};
const std::vector<int64_t> kThread1Ns = {800, 900, 1000, 7999, 8000, 25000, 30000, 41000, 50000};

// Two threads, -h 8: thread 0 overflows twice (cycles 6 and 7); thread 1 five times, of
// which three cycle numbers were kept.
PathRun TwoThreadPath() {
  PathRun path;
  path.wake = "abs";
  path.start_realtime_ns = 1'700'000'000'123'456'789;
  path.end_realtime_ns = 1'700'000'060'000'000'000;
  path.duration_ns = 59'876'543'211;
  path.probes.push_back(MakeProbe(0, 2, 1234, kThread0Ns, 8, {6, 7}, 0));
  path.probes.push_back(MakeProbe(1, -1, 1235, kThread1Ns, 8, {3, 10, 11}, 2));
  path.probes[0].missed_activations = 1;
  path.probes[0].skipped_periods = 2;
  path.probes[1].missed_activations = 3;
  path.probes[1].skipped_periods = 4;
  return path;
}

LatencyRun TwoThreadRun() {
  LatencyRun run;
  run.rtpulse_version = "0.1.0";
  run.cmdline = "rtpulse latency -t 2 -h 8 --json out.json";
  run.sysname = "Linux";
  run.nodename = "rig";
  run.release = "6.1.0-27-rt-amd64";
  run.version = "#1 SMP PREEMPT_RT Debian 6.1.115-1";
  run.machine = "x86_64";
  run.preempt_rt = true;
  run.preemption_model = "PREEMPT_RT";
  run.hypervisor = "";
  run.start_realtime_ns = 1'700'000'000'123'456'789;
  run.end_realtime_ns = 1'700'000'060'000'000'000;
  run.paths.push_back(TwoThreadPath());
  run.warnings = {"CPU 2 frequency governor is 'powersave', not 'performance'",
                  "running in a VM (kvm): latencies include the hypervisor"};
  run.dma_latency = "set /dev/cpu_dma_latency to 0";
  return run;
}

// ---- An independent reconstruction of cyclictest's print_hist() ------------------------

struct ThreadHist {
  std::vector<unsigned long> rows;
  long min, avg, max;
  unsigned long overflows;
  std::vector<unsigned long> seqs;
  unsigned long dropped;
};

// Mirrors rt-tests' print_hist() with "# Total:", using its own printf formats. The sum
// column of rows and of "# Total:" follows -H; the extra Max and Overflows column needs
// -H and more than one thread.
std::string CyclictestHistogram(const std::vector<ThreadHist>& t, bool histofall) {
  std::string out = "# Histogram\n";
  char buf[64];
  const size_t n = t.size();
  std::vector<unsigned long long> totals(n + 1, 0);
  for (size_t i = 0; i < t[0].rows.size(); ++i) {
    std::snprintf(buf, sizeof(buf), "%06d ", static_cast<int>(i));
    out += buf;
    unsigned long long all = 0;
    for (size_t j = 0; j < n; ++j) {
      std::snprintf(buf, sizeof(buf), "%06lu", t[j].rows[i]);
      out += buf;
      if (j + 1 < n) out += "\t";
      totals[j] += t[j].rows[i];
      all += t[j].rows[i];
    }
    if (histofall) {
      std::snprintf(buf, sizeof(buf), "\t%06llu", all);
      out += buf;
      totals[n] += all;
    }
    out += "\n";
  }
  out += "# Total:";
  for (size_t j = 0; j < n; ++j) {
    std::snprintf(buf, sizeof(buf), " %09llu", totals[j]);
    out += buf;
  }
  if (histofall) {
    std::snprintf(buf, sizeof(buf), " %09llu", totals[n]);
    out += buf;
  }
  out += "\n# Min Latencies:";
  for (const auto& h : t) {
    std::snprintf(buf, sizeof(buf), " %05lu", static_cast<unsigned long>(h.min));
    out += buf;
  }
  out += "\n# Avg Latencies:";
  for (const auto& h : t) {
    std::snprintf(buf, sizeof(buf), " %05lu", static_cast<unsigned long>(h.avg));
    out += buf;
  }
  out += "\n# Max Latencies:";
  unsigned long maxmax = 0;
  for (const auto& h : t) {
    std::snprintf(buf, sizeof(buf), " %05lu", static_cast<unsigned long>(h.max));
    out += buf;
    maxmax = std::max(maxmax, static_cast<unsigned long>(h.max));
  }
  if (histofall && n > 1) {
    std::snprintf(buf, sizeof(buf), " %05lu", maxmax);
    out += buf;
  }
  out += "\n# Histogram Overflows:";
  unsigned long alloverflows = 0;
  for (const auto& h : t) {
    std::snprintf(buf, sizeof(buf), " %05lu", h.overflows);
    out += buf;
    alloverflows += h.overflows;
  }
  if (histofall && n > 1) {
    std::snprintf(buf, sizeof(buf), " %05lu", alloverflows);
    out += buf;
  }
  out += "\n# Histogram Overflow at cycle number:\n";
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "# Thread %d:", static_cast<int>(i));
    out += buf;
    for (unsigned long seq : t[i].seqs) {
      std::snprintf(buf, sizeof(buf), " %05lu", seq);
      out += buf;
    }
    if (t[i].dropped > 0) {
      std::snprintf(buf, sizeof(buf), " # %05lu others", t[i].dropped);
      out += buf;
    }
    out += "\n";
  }
  out += "\n";
  return out;
}

// The fixture's values in cyclictest's terms (us): rows, min, avg = sum/cycles, max.
std::vector<ThreadHist> FixtureInCyclictestTerms(bool nsecs) {
  const long u = nsecs ? 1 : 1000;
  ThreadHist t0{{0, 1, 2, 2, 0, 1, 0, 0}, 1500 / u, 39699 / 8 / u, 12000 / u, 2, {6, 7}, 0};
  ThreadHist t1{{2, 1, 0, 0, 0, 0, 0, 1}, 800 / u, 164699 / 9 / u, 50000 / u, 5, {3, 10, 11}, 2};
  return {t0, t1};
}

// ---- Status line ----------------------------------------------------------------------

std::string CyclictestStatus(const StatusLine& l, bool nsecs) {
  char buf[256];
  if (nsecs) {
    std::snprintf(buf, sizeof(buf),
                  "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%8ld Avg:%8ld Max:%8ld", l.index,
                  l.tid, l.priority, static_cast<long>(l.interval_us),
                  static_cast<unsigned long>(l.cycles), static_cast<long>(l.min),
                  static_cast<long>(l.act), static_cast<long>(l.avg), static_cast<long>(l.max));
  } else {
    std::snprintf(buf, sizeof(buf),
                  "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld", l.index,
                  l.tid, l.priority, static_cast<long>(l.interval_us),
                  static_cast<unsigned long>(l.cycles), static_cast<long>(l.min),
                  static_cast<long>(l.act), static_cast<long>(l.avg), static_cast<long>(l.max));
  }
  std::string line = buf;
  if (l.smi) {
    // cyclictest --smi's field after Max.
    std::snprintf(buf, sizeof(buf), " SMI:%8ld", static_cast<long>(*l.smi));
    line += buf;
  }
  return line;
}

TEST(StatusLineTest, MatchesCyclictestPrintfForTypicalAndWideValues) {
  const std::vector<StatusLine> lines = {
      {0, 1234, 80, 1000, 59'876, 2, 3, 4, 17, std::nullopt},
      {1, 98, 9, 1500, 0, 0, 0, 0, 0, std::nullopt},
      {12, 1'234'567, 99, 1'000'000, 123'456'789, -5, 123'456, 99'999, 123'456'789, std::nullopt},
      {3, 42, 1, 200, 7, -12'345, -1, -100, -1, std::nullopt},
      {0, 1234, 80, 1000, 59'876, 2, 3, 4, 17, 0},
      {2, 77, 80, 1000, 5, 1, 2, 3, 4, 123'456'789},
  };
  for (const auto& l : lines) {
    for (bool nsecs : {false, true}) {
      EXPECT_EQ(FormatStatusLine(l, nsecs), CyclictestStatus(l, nsecs)) << "nsecs=" << nsecs;
    }
  }
  // The literal layout, so a change of both sides together cannot go unnoticed.
  EXPECT_EQ(FormatStatusLine({0, 1234, 80, 1000, 59'876, 2, 3, 4, 17, std::nullopt}, false),
            "T: 0 ( 1234) P:80 I:1000 C:  59876 Min:      2 Act:    3 Avg:    4 Max:      17");
  EXPECT_EQ(FormatStatusLine({0, 1234, 80, 1000, 59'876, 2'100, 3'050, 4'962, 17'001, std::nullopt},
                             true),
            "T: 0 ( 1234) P:80 I:1000 C:  59876 Min:   2100 Act:    3050 Avg:    4962 Max:"
            "   17001");
  EXPECT_EQ(FormatStatusLine({0, 1234, 80, 1000, 59'876, 2, 3, 4, 17, 26}, false),
            "T: 0 ( 1234) P:80 I:1000 C:  59876 Min:      2 Act:    3 Avg:    4 Max:      17"
            " SMI:      26");
}

TEST(StatusLineTest, StatusOfAProbeInMicrosecondsAndNanoseconds) {
  const PathRun path = TwoThreadPath();
  const StatusLine us = StatusOf(path.probes[0], false);
  EXPECT_EQ(us.index, 0);
  EXPECT_EQ(us.tid, 1234);
  EXPECT_EQ(us.priority, 80);
  EXPECT_EQ(us.interval_us, 1000);
  EXPECT_EQ(us.cycles, 8u);
  EXPECT_EQ(us.min, 1);
  EXPECT_EQ(us.act, 12);  // last sample, 12000 ns
  EXPECT_EQ(us.avg, 4);   // 39699 ns / 8 = 4962 ns
  EXPECT_EQ(us.max, 12);
  const StatusLine ns = StatusOf(path.probes[1], true);
  EXPECT_EQ(ns.index, 1);
  EXPECT_EQ(ns.cycles, 9u);
  EXPECT_EQ(ns.min, 800);
  EXPECT_EQ(ns.act, 50000);
  EXPECT_EQ(ns.avg, 18299);  // 164699 / 9
  EXPECT_EQ(ns.max, 50000);
  EXPECT_EQ(FormatStatusLine(us, false),
            "T: 0 ( 1234) P:80 I:1000 C:      8 Min:      1 Act:   12 Avg:    4 Max:      12");
}

TEST(StatusLineTest, TheFinalLineEndsWithP99AndMissLikeTheLiveLine) {
  ProbeResult p;
  p.index = 3;
  p.tid = 77;
  p.priority = 80;
  p.interval_ns = 1'000'000;
  // 100 samples: 1..99 us and one of 5 ms; nearest-rank p99 is rank 99 = 99 us, exact in
  // value but reported as its bucket's upper edge (99 000 ns: bucket [98 944, 99 071]).
  for (int i = 1; i <= 99; ++i) p.histogram.Record(int64_t{i} * 1000);
  p.histogram.Record(5'000'000);
  p.last_latency_ns = 5'000'000;
  p.missed_activations = 4;
  EXPECT_EQ(FinalStatusLine(p, false),
            "T: 3 (   77) P:80 I:1000 C:    100 Min:      1 Act: 5000 Avg:   99 Max:    5000"
            " P99:      99 Miss:4");
  EXPECT_EQ(FinalStatusLine(p, true),
            FormatStatusLine(StatusOf(p, true), true) + " P99:   99071 Miss:4");
  EXPECT_EQ(FormatStatusLineWithTail(StatusOf(p, false), false, 12, 0),
            FormatStatusLine(StatusOf(p, false), false) + " P99:      12 Miss:0");
  ProbeResult empty;
  EXPECT_EQ(FinalStatusLine(empty, false),
            FormatStatusLine(StatusOf(empty, false), false) + " P99:       0 Miss:0");
}

TEST(InjectLineTest, ThresholdIsThreeQuartersOfTheSpinAtABucketEdgeAndTheCountIsExact) {
  // 3/4 of 2 ms = 1 500 000 ns, in the bucket of width 2048 starting at 732 x 2048.
  EXPECT_EQ(InjectDetectionThreshold(2'000'000), 1'499'136);
  EXPECT_EQ(InjectDetectionThreshold(400), 300) << "exact below 512 ns";
  EXPECT_EQ(InjectDetectionThreshold(1), 1);
  EXPECT_EQ(InjectDetectionThreshold(50'000), 37'440) << "37 500 in [37 440, 37 503]";
  const InjectSettings inject{2'000'000, 10.0, InjectDetectionThreshold(2'000'000)};
  ProbeResult p;
  p.index = 1;
  p.injections = 20;
  // Just below the threshold (the bucket below), at it, inside its bucket, a 2 ms spin, a
  // 9 ms host stall, and ordinary samples.
  for (int64_t v : {1'499'135, 1'499'136, 1'500'000, 2'010'000, 9'000'000, 20'000, 30'000}) {
    p.histogram.Record(v);
  }
  EXPECT_EQ(InjectionsDetected(p, inject), 4u);
  EXPECT_EQ(FormatInjectionLine(p, inject), "# injected 20, detected 4 (>= 1.50 ms) on T1");
}

TEST(StatusLineTest, EmptyProbeReportsZeroes) {
  ProbeResult p;
  p.interval_ns = 250'000;
  const StatusLine l = StatusOf(p, false);
  EXPECT_EQ(l.interval_us, 250);
  EXPECT_EQ(l.cycles, 0u);
  EXPECT_EQ(l.min, 0);
  EXPECT_EQ(l.avg, 0);
  EXPECT_EQ(l.max, 0);
}

// ---- -h / -H block ---------------------------------------------------------------------

TEST(HistogramBlockGoldenTest, PlainHistogramTwoThreads) {
  const std::string text = FormatHistogramBlock(TwoThreadPath(), false, false);
  EXPECT_EQ(text, CyclictestHistogram(FixtureInCyclictestTerms(false), false));
  ExpectGolden("histogram_plain_2threads.txt", text);
}

TEST(HistogramBlockGoldenTest, HistofallTwoThreads) {
  const std::string text = FormatHistogramBlock(TwoThreadPath(), true, false);
  EXPECT_EQ(text, CyclictestHistogram(FixtureInCyclictestTerms(false), true));
  ExpectGolden("histogram_histofall_2threads.txt", text);
}

TEST(HistogramBlockGoldenTest, HistofallTwoThreadsNanoseconds) {
  // -N changes the Min/Avg/Max unit only; the rows stay 1 us classes.
  const std::string text = FormatHistogramBlock(TwoThreadPath(), true, true);
  EXPECT_EQ(text, CyclictestHistogram(FixtureInCyclictestTerms(true), true));
  ExpectGolden("histogram_histofall_2threads_nsecs.txt", text);
}

TEST(HistogramBlockTest, OneThreadPlainMatchesCyclictest) {
  PathRun path = TwoThreadPath();
  path.probes.pop_back();
  auto t = FixtureInCyclictestTerms(false);
  t.pop_back();
  EXPECT_EQ(FormatHistogramBlock(path, false, false), CyclictestHistogram(t, false));
}

TEST(HistogramBlockTest, OneThreadHistofallHasNoSumColumnLikeCyclictest240) {
  // cyclictest 2.40 (Debian rt-tests 2.4), -t 1 -H 3: no sum column, no total in # Total:.
  PathRun path = TwoThreadPath();
  path.probes.pop_back();
  const std::string text = FormatHistogramBlock(path, true, false);
  EXPECT_EQ(text, FormatHistogramBlock(path, false, false));
  EXPECT_EQ(text.find("\t"), std::string::npos) << text;
}

TEST(HistogramBlockTest, ExtraColumnsOnlyWithHistofall) {
  const std::string plain = FormatHistogramBlock(TwoThreadPath(), false, false);
  const std::string all = FormatHistogramBlock(TwoThreadPath(), true, false);
  EXPECT_NE(plain.find("000003 000002\t000000\n"), std::string::npos);
  EXPECT_NE(all.find("000003 000002\t000000\t000002\n"), std::string::npos);
  EXPECT_NE(plain.find("# Total: 000000006 000000004\n"), std::string::npos);
  EXPECT_NE(all.find("# Total: 000000006 000000004 000000010\n"), std::string::npos);
  EXPECT_NE(plain.find("# Max Latencies: 00012 00050\n"), std::string::npos);
  EXPECT_NE(all.find("# Max Latencies: 00012 00050 00050\n"), std::string::npos);
  EXPECT_NE(plain.find("# Histogram Overflows: 00002 00005\n"), std::string::npos);
  EXPECT_NE(all.find("# Histogram Overflows: 00002 00005 00007\n"), std::string::npos);
  EXPECT_NE(all.find("# Min Latencies: 00001 00000\n"), std::string::npos);  // never a sum
  EXPECT_NE(all.find("# Thread 1: 00003 00010 00011 # 00002 others\n"), std::string::npos);
}

TEST(HistogramBlockTest, NegativeLatenciesGetAnRtpulseLine) {
  PathRun path = TwoThreadPath();
  path.probes[1] = MakeProbe(1, -1, 1235, {-700, -20, 300, 1200}, 8, {}, 0);
  const std::string text = FormatHistogramBlock(path, false, false);
  const std::string line =
      "# rtpulse: thread 1: 2 negative latencies (woke before the deadline), not in the rows "
      "above\n";
  EXPECT_NE(text.find("# Thread 1:\n" + line + "\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("thread 0: "), std::string::npos);  // only threads with underflows
  EXPECT_EQ(FormatHistogramBlock(TwoThreadPath(), false, false).find("# rtpulse"),
            std::string::npos);
}

TEST(HistogramBlockTest, NothingWithoutALinearHistogram) {
  PathRun path = TwoThreadPath();
  for (auto& p : path.probes) p.linear.reset();
  EXPECT_EQ(FormatHistogramBlock(path, true, false), "");
  EXPECT_EQ(FormatHistogramBlock(PathRun{}, true, false), "");
}

// ---- JSON ------------------------------------------------------------------------------

TEST(JsonTest, CyclictestKeysWithExactValues) {
  const json j = ToJson(TwoThreadRun(), false);
  EXPECT_EQ(j.at("file_version"), 1);
  EXPECT_EQ(j.at("cmdline:"), "rtpulse latency -t 2 -h 8 --json out.json");
  EXPECT_EQ(j.at("rt_test_version:"), "rtpulse 0.1.0");
  EXPECT_EQ(j.at("start_time"), "Tue, 14 Nov 2023 22:13:20 +0000");
  EXPECT_EQ(j.at("end_time"), "Tue, 14 Nov 2023 22:14:20 +0000");
  EXPECT_EQ(j.at("return_code"), 0);
  const json& si = j.at("sysinfo");
  EXPECT_EQ(si.at("sysname"), "Linux");
  EXPECT_EQ(si.at("nodename"), "rig");
  EXPECT_EQ(si.at("release"), "6.1.0-27-rt-amd64");
  EXPECT_EQ(si.at("version"), "#1 SMP PREEMPT_RT Debian 6.1.115-1");
  EXPECT_EQ(si.at("machine"), "x86_64");
  EXPECT_EQ(si.at("realtime"), 1);
  EXPECT_EQ(j.at("num_threads"), 2);
  EXPECT_EQ(j.at("resolution_in_ns"), 0);

  const json& t0 = j.at("thread").at("0");
  EXPECT_EQ(t0.at("histogram"), json::parse(R"({"1": 1, "2": 2, "3": 2, "5": 1})"));
  EXPECT_EQ(t0.at("cycles"), 8);
  EXPECT_EQ(t0.at("min"), 1);
  EXPECT_EQ(t0.at("max"), 12);
  EXPECT_EQ(t0.at("avg"), 4.96);  // 4962.375 ns, to 2 decimals in us as cyclictest's %.2f
  EXPECT_EQ(t0.at("cpu"), 2);
  EXPECT_EQ(t0.at("node"), -1);
  const json& t1 = j.at("thread").at("1");
  EXPECT_EQ(t1.at("histogram"), json::parse(R"({"0": 2, "1": 1, "7": 1})"));
  EXPECT_EQ(t1.at("cycles"), 9);
  EXPECT_EQ(t1.at("min"), 0);
  EXPECT_EQ(t1.at("max"), 50);
  EXPECT_EQ(t1.at("avg"), 18.3);
  EXPECT_EQ(t1.at("cpu"), -1);
}

TEST(JsonTest, NanosecondResolution) {
  const json j = ToJson(TwoThreadRun(), true);
  EXPECT_EQ(j.at("resolution_in_ns"), 1);
  const json& t0 = j.at("thread").at("0");
  EXPECT_EQ(t0.at("min"), 1500);
  EXPECT_EQ(t0.at("max"), 12000);
  EXPECT_EQ(t0.at("avg"), 4962.38);
  EXPECT_EQ(t0.at("histogram").at("3"), 2);  // rows stay 1 us classes
  EXPECT_EQ(j.at("rtpulse").at("units").at("cyclictest_fields"), "ns");
}

TEST(JsonTest, RtpulseFieldsWithExactValues) {
  const json j = ToJson(TwoThreadRun(), false);
  const json& t0 = j.at("thread").at("0");
  const json& s0 = t0.at("stats");
  EXPECT_EQ(s0.at("count"), 8);
  EXPECT_EQ(s0.at("min_ns"), 1500);
  EXPECT_EQ(s0.at("max_ns"), 12000);
  EXPECT_EQ(s0.at("mean_ns"), 4962.375);
  EXPECT_NEAR(s0.at("stddev_ns").get<double>(), 3447.8376534249696, 1e-9);
  EXPECT_EQ(s0.at("p50_ns"), 3003);  // 3000 lies in [3000, 3003]: the upper edge
  EXPECT_EQ(s0.at("p90_ns"), 12000);
  EXPECT_EQ(s0.at("p99_ns"), 12000);
  EXPECT_EQ(s0.at("p99.9_ns"), 12000);
  EXPECT_EQ(s0.at("p99.99_ns"), 12000);
  EXPECT_EQ(s0.at("p99.999_ns"), 12000);
  EXPECT_EQ(s0.at("negative_latencies"), 0);
  EXPECT_EQ(s0.at("top_bucket_count"), 0);
  EXPECT_EQ(t0.at("missed_activations"), 1);
  EXPECT_EQ(t0.at("skipped_periods"), 2);
  EXPECT_EQ(t0.at("histogram_overflows"), 2);
  EXPECT_EQ(t0.at("thread_index"), 0);
  EXPECT_EQ(t0.at("tid"), 1234);
  EXPECT_EQ(t0.at("policy"), "fifo");
  EXPECT_EQ(t0.at("interval_ns"), 1'000'000);
  EXPECT_EQ(t0.at("histogram_log").size(), 8u);
  EXPECT_EQ(t0.at("histogram_log").at(3), json::parse("[3000, 3003, 1]"));

  const json& s1 = j.at("thread").at("1").at("stats");
  EXPECT_EQ(s1.at("p50_ns"), 8007);  // 8000 lies in [8000, 8007]
  EXPECT_EQ(s1.at("p90_ns"), 50000);
  EXPECT_EQ(j.at("thread").at("1").at("missed_activations"), 3);
  EXPECT_EQ(j.at("thread").at("1").at("skipped_periods"), 4);

  const json& r = j.at("rtpulse");
  EXPECT_EQ(r.at("percentile_method"), std::string(stats::kPercentileMethod));
  EXPECT_EQ(r.at("histogram").at("max_relative_error"), 1.0 / 512.0);
  EXPECT_EQ(r.at("histogram").at("exact_below_ns"), 512);
  EXPECT_EQ(r.at("histogram").at("top_bucket_from_ns"), int64_t{1} << 40);
  EXPECT_EQ(r.at("warnings").size(), 2u);
  EXPECT_EQ(r.at("interrupted"), false);
  EXPECT_EQ(r.at("units").at("cyclictest_fields"), "us");
  EXPECT_EQ(r.at("units").at("rtpulse_fields"), "ns");
  EXPECT_FALSE(r.contains("breaktrace"));

  ASSERT_EQ(r.at("paths").size(), 1u);
  const json& path = r.at("paths").at(0);
  EXPECT_EQ(path.at("wake"), "abs");
  EXPECT_EQ(path.at("threads"), json::parse("[0, 1]"));
  const json& all = path.at("all_threads");
  EXPECT_EQ(all.at("count"), 17);
  EXPECT_EQ(all.at("min_ns"), 800);
  EXPECT_EQ(all.at("max_ns"), 50000);
  EXPECT_EQ(all.at("p50_ns"), 5207);   // rank 9: 5200 in [5200, 5207]
  EXPECT_EQ(all.at("p90_ns"), 41023);  // rank 16: 41000 in [40960, 41023]
  EXPECT_EQ(all.at("p99_ns"), 50000);
  EXPECT_EQ(all.at("missed_activations"), 4);
  EXPECT_EQ(all.at("skipped_periods"), 6);
}

TEST(JsonTest, TwoPathsNumberThreadsConsecutively) {
  LatencyRun run = TwoThreadRun();
  PathRun second = TwoThreadPath();
  second.wake = "timerfd";
  run.paths.push_back(second);
  run.breaktrace = BreakTrace{1, 77, 41000, true};
  const json j = ToJson(run, false);
  EXPECT_EQ(j.at("num_threads"), 4);
  EXPECT_EQ(j.at("thread").at("3").at("wake"), "abs");  // probes keep their own wake name
  EXPECT_EQ(j.at("rtpulse").at("paths").at(1).at("threads"), json::parse("[2, 3]"));
  EXPECT_EQ(j.at("rtpulse").at("paths").at(1).at("wake"), "timerfd");
  EXPECT_EQ(j.at("rtpulse").at("breaktrace").at("seq"), 77);
  EXPECT_EQ(j.at("rtpulse").at("breaktrace").at("tracing_stopped"), true);
}

TEST(JsonGoldenTest, WholeDocument) {
  ExpectGolden("latency_2threads.json", ToJson(TwoThreadRun(), false).dump(2) + "\n");
}

TEST(JsonTest, HistogramToJsonIsSparseAndSigned) {
  Histogram h;
  h.Record(-5);
  h.Record(3000);
  h.Record(3001);
  EXPECT_EQ(HistogramToJson(h), json::parse("[[-5, -5, 1], [3000, 3003, 2]]"));
  EXPECT_EQ(HistogramToJson(Histogram{}), json::array());
}

// ---- Summary ---------------------------------------------------------------------------

TEST(SummaryTextTest, ContainsMethodMissedSkippedAndEveryWarning) {
  LatencyRun run = TwoThreadRun();
  const std::string text = FormatSummary(run);
  EXPECT_NE(text.find("wake path: abs\n"), std::string::npos) << text;
  EXPECT_NE(text.find("percentiles: " + std::string(stats::kPercentileMethod) + "\n"),
            std::string::npos)
      << text;
  // missed/skipped per thread and summed in the "all" row, at the end of each row.
  EXPECT_NE(text.find("      1/2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      3/4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      4/6\n"), std::string::npos) << text;
  EXPECT_NE(text.find("T0 cpu2"), std::string::npos) << text;
  EXPECT_NE(text.find("\nall "), std::string::npos) << text;
  for (const auto& w : run.warnings) {
    EXPECT_NE(text.find("warning: " + w + "\n"), std::string::npos) << w;
  }
  EXPECT_EQ(text.find("interrupted"), std::string::npos);
  EXPECT_EQ(text.find("side by side"), std::string::npos);  // one path only

  run.interrupted = true;
  run.paths.push_back(TwoThreadPath());
  run.paths.back().wake = "timerfd";
  const std::string two = FormatSummary(run);
  EXPECT_NE(two.find("wake path: timerfd\n"), std::string::npos);
  EXPECT_NE(two.find("side by side (all threads):\n"), std::string::npos) << two;
  EXPECT_NE(two.find("note: interrupted"), std::string::npos) << two;
}

/// One thread at 1 ms: a wake-up 100 us late, then one 3.3 ms late whose stall swallowed
/// three periods (late 2.3 ms, 1.3 ms and 0.3 ms when it came).
LatencyRun StallRun() {
  LatencyRun run;
  PathRun path;
  path.wake = "abs";
  ProbeResult p = MakeProbe(0, 2, 1234, {100'000, 3'300'000}, 10'000, {}, 0);
  p.linear.reset();
  for (int64_t v : {2'300'000, 1'300'000, 300'000}) p.skipped_histogram.Record(v);
  p.missed_activations = 1;
  p.skipped_periods = 3;
  p.periods_elapsed = 5;
  path.probes.push_back(std::move(p));
  run.paths.push_back(std::move(path));
  return run;
}

TEST(PerPeriodTest, JsonHasAPerPeriodBlockBesideThePerWakeUpStats) {
  const json j = ToJson(StallRun(), false);
  const json& t = j.at("thread").at("0");
  EXPECT_EQ(t.at("stats").at("count"), 2);  // per wake-up, as cyclictest counts
  EXPECT_EQ(t.at("cycles"), 2);
  const json& per = t.at("per_period");
  EXPECT_EQ(per.at("periods"), 5);
  EXPECT_EQ(per.at("skipped_periods"), 3);
  // By hand: 0.1, 0.3, 1.3, 2.3 and 3.3 ms.
  EXPECT_EQ(per.at("stats").at("count"), 5);
  EXPECT_EQ(per.at("stats").at("min_ns"), 100'000);
  EXPECT_EQ(per.at("stats").at("max_ns"), 3'300'000);
  EXPECT_DOUBLE_EQ(per.at("stats").at("mean_ns").get<double>(), 1'460'000.0);
  EXPECT_NEAR(per.at("stats").at("stddev_ns").get<double>(), 1'209'297.3, 0.1);
  EXPECT_EQ(per.at("skipped_stats").at("count"), 3);
  EXPECT_EQ(per.at("skipped_stats").at("min_ns"), 300'000);
  uint64_t logged = 0;
  for (const auto& b : per.at("skipped_histogram_log")) logged += b.at(2).get<uint64_t>();
  EXPECT_EQ(logged, 3u);
  const json& all = j.at("rtpulse").at("paths").at(0).at("all_threads");
  EXPECT_EQ(all.at("count"), 2);
  EXPECT_EQ(all.at("per_period").at("count"), 5);
  EXPECT_EQ(all.at("per_period").at("max_ns"), 3'300'000);
}

TEST(PerPeriodTest, WithoutTheSkippedPeriodsLatenciesThereIsNoPerPeriodBlock) {
  // The two-thread fixture counts skipped periods but holds none of their latencies (as an
  // import would): per period is unknown, so neither written nor printed as if known.
  const LatencyRun run = TwoThreadRun();
  const json j = ToJson(run, false);
  EXPECT_FALSE(j.at("thread").at("0").contains("per_period"));
  EXPECT_FALSE(j.at("rtpulse").at("paths").at(0).at("all_threads").contains("per_period"));
  const std::string text = FormatSummary(run);
  EXPECT_NE(text.find("per period: unknown"), std::string::npos) << text;
}

TEST(PerPeriodTest, AnImportWithoutSkippedPeriodsStillHasNoPerPeriodStatistics) {
  // Other tools do not count skipped periods: 0 there means "not known", not "none".
  LatencyRun run = StallRun();
  ProbeResult& p = run.paths[0].probes[0];
  p.skipped_histogram = Histogram{};
  p.skipped_periods = 0;
  p.missed_activations = 0;
  p.periods_elapsed = 2;
  const json known = ToJson(run, false);
  EXPECT_EQ(known.at("thread").at("0").at("per_period").at("periods"), 2);
  p.per_period_unknown = true;
  const json j = ToJson(run, false);
  EXPECT_FALSE(j.at("thread").at("0").contains("per_period"));
  EXPECT_FALSE(j.at("rtpulse").at("paths").at(0).at("all_threads").contains("per_period"));
  EXPECT_NE(FormatSummary(run).find("per period: unknown"), std::string::npos);
}

TEST(PerPeriodTest, TextSummaryHasALabelledPerPeriodRow) {
  const std::string text = FormatSummary(StallRun());
  const size_t wake_ups = text.find("per wake-up (cyclictest)");
  const size_t periods = text.find("\nper period: every period");
  ASSERT_NE(wake_ups, std::string::npos) << text;
  ASSERT_NE(periods, std::string::npos) << text;
  EXPECT_LT(wake_ups, periods);
  // Values by hand (see StallRun): per wake-up 0.1 and 3.3 ms; per period five of them.
  // Percentiles are their bucket's upper edge: 100 000 ns lies in [99 968, 100 095].
  const std::string wake_up_row =
      fmt::format("{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}/{}\n",
                  "T0 cpu2", 2, "100.0 us", "100.1 us", "3.30 ms", "3.30 ms", "3.30 ms", "3.30 ms",
                  "1.70 ms", "1.60 ms", 1, 3);
  const std::string period_row =
      fmt::format("{:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}/{}\n",
                  "T0 cpu2", 5, "100.0 us", "1.30 ms", "3.30 ms", "3.30 ms", "3.30 ms", "3.30 ms",
                  "1.46 ms", "1.21 ms", 1, 3);
  const size_t w = text.find(wake_up_row);
  const size_t p = text.find(period_row);
  ASSERT_NE(w, std::string::npos) << text;
  ASSERT_NE(p, std::string::npos) << text;
  EXPECT_LT(wake_ups, w);
  EXPECT_LT(w, periods);
  EXPECT_LT(periods, p);
  EXPECT_NE(text.find("periods"), std::string::npos);
}

TEST(SummaryTextTest, HumanNs) {
  EXPECT_EQ(HumanNs(812), "812 ns");
  EXPECT_EQ(HumanNs(0), "0 ns");
  EXPECT_EQ(HumanNs(-700), "-700 ns");
  EXPECT_EQ(HumanNs(12'400), "12.4 us");
  EXPECT_EQ(HumanNs(3'050'000), "3.05 ms");
  EXPECT_EQ(HumanNs(1'200'000'000), "1.20 s");
}

TEST(CommentedLinesTest, EveryLineStartsWithAHashAndEmptyLinesStayEmptyComments) {
  EXPECT_EQ(CommentedLines("Max: 12\n\nverdict PASS\n"), "# Max: 12\n#\n# verdict PASS\n");
  EXPECT_EQ(CommentedLines("no newline at the end"), "# no newline at the end\n");
  EXPECT_EQ(CommentedLines(""), "");
}

}  // namespace
}  // namespace rtpulse::results
