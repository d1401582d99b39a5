#include "importers/import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli/cyclictest_intervals.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::importers {
namespace {

// Compares the start of an error ("file" cut off) with what the test expects.
#define EXPECT_PREFIX(actual, prefix) \
  EXPECT_EQ(std::string(actual).substr(0, std::string(prefix).size()), std::string(prefix))

const std::string kData = std::string(RTPULSE_TEST_DATA) + "/import/";

nlohmann::json LoadJson(const std::string& name) {
  std::ifstream in(kData + name);
  return nlohmann::json::parse(in);
}

Imported MustImport(const std::string& path, ImportOptions options = {},
                    SampleConsumer* samples = nullptr) {
  auto r = ImportFile(path, options, samples);
  if (!r) ADD_FAILURE() << r.error().message;
  return r ? std::move(*r) : Imported{};
}

/// The error message of importing `content` as a file (with `format` forced when given).
std::string ErrorOf(const std::string& content, std::optional<Format> format = std::nullopt) {
  testutil::TempDir dir;
  const std::string path = dir.File("in.txt");
  std::ofstream(path) << content;
  ImportOptions options;
  options.format = format;
  auto r = ImportFile(path, options, nullptr);
  EXPECT_FALSE(r) << "imported: " << content;
  if (r) return "";
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
  const std::string m = r.error().message;
  return m.substr(m.find("in.txt") + 6);  // ":line:col: what; fix"
}

struct Collect final : SampleConsumer {
  std::vector<TimedSample> all;
  void Add(const TimedSample& s) override { all.push_back(s); }
};

TEST(DetectFormat, EveryFixture) {
  EXPECT_EQ(*DetectFormat(kData + "cyclictest_h.json"), Format::kCyclictestJson);
  EXPECT_EQ(*DetectFormat(kData + "cyclictest_hist.txt"), Format::kCyclictestHistogram);
  EXPECT_EQ(*DetectFormat(kData + "cyclictest_H_overflow.txt"), Format::kCyclictestHistogram);
  EXPECT_EQ(*DetectFormat(kData + "cyclictest_v.txt"), Format::kCyclictestVerbose);
  EXPECT_EQ(*DetectFormat(kData + "jitterdebugger.json"), Format::kJitterdebuggerJson);
  EXPECT_EQ(*DetectFormat(kData + "jitterdebugger_samples.raw"), Format::kJitterdebuggerRaw);
  EXPECT_EQ(*DetectFormat(kData + "rt-app-thread0-0.log"), Format::kRtApp);
  EXPECT_EQ(*DetectFormat(kData + "values_us.txt"), Format::kValues);
}

/// The format table: every format has one row, its name round-trips, a file of it imports
/// with that format, and time_ordered is true exactly for the formats that keep the samples'
/// order (the verbose dump, samples.raw, one value per line).
TEST(FormatTable, EveryFormatHasARowANameAndItsOrderFlag) {
  const std::vector<std::pair<std::string, bool>> fixtures = {{"cyclictest_h.json", false},
                                                              {"cyclictest_hist.txt", false},
                                                              {"cyclictest_v.txt", true},
                                                              {"jitterdebugger.json", false},
                                                              {"jitterdebugger_samples.raw", true},
                                                              {"rt-app-thread0-0.log", false},
                                                              {"values_us.txt", true}};
  std::set<std::string> names;
  for (const auto& [file, ordered] : fixtures) {
    SCOPED_TRACE(file);
    const Format f = *DetectFormat(kData + file);
    EXPECT_TRUE(names.insert(FormatName(f)).second) << "two fixtures of one format";
    EXPECT_EQ(FormatFromName(FormatName(f)), f);
    const Imported im = MustImport(kData + file);
    EXPECT_EQ(im.format, f);
    EXPECT_EQ(im.time_ordered, ordered);
  }
  const auto listed = FormatNames();
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), names);
  EXPECT_EQ(listed.size(), names.size());
  EXPECT_FALSE(FormatFromName("cyclictest"));
}

TEST(DetectFormat, JsonOrBinaryNoRowClaimsIsAnErrorNotValues) {
  testutil::TempDir dir;
  std::ofstream(dir.File("a.json")) << "{\"wu_lat\": 1}\n";  // rt-app's word, but JSON
  auto json = DetectFormat(dir.File("a.json"));
  ASSERT_FALSE(json);
  EXPECT_NE(json.error().message.find("JSON, but neither cyclictest"), std::string::npos);
  std::ofstream(dir.File("b.bin"), std::ios::binary) << std::string("# Total:\0\1", 10);
  auto binary = DetectFormat(dir.File("b.bin"));  // under 28 bytes: no samples.raw either
  ASSERT_FALSE(binary);
  EXPECT_NE(binary.error().message.find("binary file of unknown format"), std::string::npos);
}

TEST(CyclictestJson, CountsMinMaxMatchTheFile) {
  const auto src = LoadJson("cyclictest_h.json");
  const Imported im = MustImport(kData + "cyclictest_h.json");
  ASSERT_EQ(im.probes.size(), src["thread"].size());
  for (const auto& p : im.probes) {
    const auto& t = src["thread"][std::to_string(p.index)];
    EXPECT_EQ(p.histogram.count(), t["cycles"].get<uint64_t>());
    EXPECT_EQ(p.histogram.min(), t["min"].get<int64_t>() * 1000);
    EXPECT_EQ(p.histogram.max(), t["max"].get<int64_t>() * 1000);
    EXPECT_NEAR(p.histogram.Mean(), t["avg"].get<double>() * 1000, 1.0);
    uint64_t in_range = 0;
    for (const auto& [k, v] : t["histogram"].items()) in_range += v.get<uint64_t>();
    // The JSON leaves overflows out: cycles - sum are >= the -h 100 limit, never dropped.
    ASSERT_TRUE(p.linear);
    EXPECT_EQ(p.linear->limit_us, 100);
    EXPECT_EQ(p.linear->overflows, t["cycles"].get<uint64_t>() - in_range);
    EXPECT_EQ(p.histogram.CountAtOrAbove(100'000), p.linear->overflows);
  }
}

TEST(CyclictestJson, WithoutHistogramSaysPercentilesAreUnavailable) {
  const auto src = LoadJson("cyclictest_noh.json");
  const Imported im = MustImport(kData + "cyclictest_noh.json");
  EXPECT_FALSE(im.has_distribution);
  EXPECT_TRUE(im.probes.empty());
  ASSERT_EQ(im.source_numbers.size(), 2u);
  EXPECT_EQ(im.source_numbers[0]["cycles"], src["thread"]["0"]["cycles"]);
  EXPECT_EQ(im.source_numbers[1]["max"], src["thread"]["1"]["max"]);
  ASSERT_FALSE(im.warnings.empty());
  EXPECT_NE(im.warnings.back().find("percentiles are unavailable"), std::string::npos);
}

TEST(CyclictestHistogram, CountsAndOverflows) {
  // cyclictest_hist.txt: "# Total: 000000981 000000997", "# Min Latencies: 00010 00012",
  // "# Max Latencies: 00521 00686", "# Histogram Overflows: 00005 00003".
  const Imported im = MustImport(kData + "cyclictest_hist.txt");
  ASSERT_EQ(im.probes.size(), 2u);
  EXPECT_EQ(im.probes[0].histogram.count(), 981u + 5u);
  EXPECT_EQ(im.probes[1].histogram.count(), 997u + 3u);
  EXPECT_EQ(im.probes[0].histogram.min(), 10'000);
  EXPECT_EQ(im.probes[0].histogram.max(), 521'000);
  EXPECT_EQ(im.probes[1].histogram.max(), 686'000);
  EXPECT_EQ(im.probes[0].linear->overflows, 5u);
  EXPECT_EQ(im.probes[0].linear->overflow_seqs.size(), 5u);
}

TEST(CyclictestHistogram, OverflowsAreCountedAtTheLimitAndFlagged) {
  // -H 30: 93 and 770 overflows, the sum column, "# 00063 others" / "# 00740 others".
  const Imported im = MustImport(kData + "cyclictest_H_overflow.txt");
  ASSERT_EQ(im.probes.size(), 2u);  // the -H sum column is not a thread
  const auto& t1 = im.probes[1];
  EXPECT_EQ(t1.histogram.count(), 230u + 770u);
  EXPECT_EQ(t1.linear->overflows, 770u);
  EXPECT_EQ(t1.histogram.CountAtOrAbove(30'000), 770u);
  EXPECT_EQ(t1.histogram.max(), 250'000);
  EXPECT_EQ(t1.linear->overflow_seqs.size(), 30u);
  EXPECT_EQ(t1.linear->overflow_seqs_dropped, 740u);
  EXPECT_EQ(im.probes[0].linear->overflow_seqs_dropped, 63u);
  // The median lands in the overflows: reported at the limit, a lower bound, and said so.
  EXPECT_GE(t1.histogram.Percentile(50), 30'000);
  EXPECT_LE(t1.histogram.Percentile(50), 30'000 + 30'000 / 512);
  bool flagged = false;
  for (const auto& w : im.warnings) flagged |= w.find("770 of 1000") != std::string::npos;
  EXPECT_TRUE(flagged);
}

TEST(CyclictestVerbose, EverySampleInOrder) {
  std::ifstream in(kData + "cyclictest_v.txt");
  std::map<int, std::vector<int64_t>> expected;
  std::string line;
  while (std::getline(in, line)) {
    int t = 0;
    long loop = 0;
    long us = 0;
    if (std::sscanf(line.c_str(), " %d: %ld: %ld", &t, &loop, &us) == 3) expected[t].push_back(us);
  }
  Collect samples;
  const Imported im = MustImport(kData + "cyclictest_v.txt", {}, &samples);
  ASSERT_EQ(im.probes.size(), expected.size());
  size_t total = 0;
  for (const auto& p : im.probes) {
    const auto& v = expected[p.index];
    EXPECT_EQ(p.histogram.count(), v.size());
    EXPECT_EQ(p.histogram.max(), *std::max_element(v.begin(), v.end()) * 1000);
    EXPECT_EQ(p.histogram.min(), *std::min_element(v.begin(), v.end()) * 1000);
    total += v.size();
  }
  // "Thread 0 Interval: 1500" and "Thread 1 Interval: 2000" from `-t 2 -i 1000`: cyclictest
  // prints each interval plus the 500 us thread distance.
  EXPECT_EQ(im.probes[0].interval_ns, 1'000'000);
  EXPECT_EQ(im.probes[1].interval_ns, 1'500'000);
  ASSERT_EQ(samples.all.size(), total);
  EXPECT_EQ(samples.all[0].latency_ns, expected[samples.all[0].thread][0] * 1000);
  for (const auto& s : samples.all) {
    ASSERT_EQ(s.expected_ns, static_cast<int64_t>(s.seq) * (s.thread == 0 ? 1'000'000 : 1'500'000));
  }
}

/// Imports a cyclictest -v text with the given headers and one sample line per thread.
Imported VerboseWithHeaders(const std::string& headers, int threads) {
  testutil::TempDir dir;
  std::string text = headers;
  for (int t = 0; t < threads; ++t) text += fmt::format("{:8}:{:8}:{:8}\n", t, 0, 12);
  std::ofstream(dir.File("v.txt")) << text;
  return MustImport(dir.File("v.txt"));
}

bool SaysTimesUnknown(const Imported& im) {
  return std::any_of(im.warnings.begin(), im.warnings.end(), [](const std::string& w) {
    return w.find("sample times unknown") != std::string::npos &&
           w.find("-d0") != std::string::npos;
  });
}

TEST(CyclictestVerbose, TheHeaderIsTheIntervalPlusTheDistance) {
  // -d0 (or -h): the headers are equal and are the interval.
  Imported im = VerboseWithHeaders("Thread 0 Interval: 1000\nThread 1 Interval: 1000\n", 2);
  EXPECT_EQ(im.probes[0].interval_ns, 1'000'000);
  EXPECT_EQ(im.probes[1].interval_ns, 1'000'000);
  EXPECT_FALSE(SaysTimesUnknown(im));
  // -t3 -i500 -d250: printed 750 1000 1250.
  im = VerboseWithHeaders(
      "Thread 0 Interval: 750\nThread 1 Interval: 1000\nThread 2 Interval: 1250\n", 3);
  EXPECT_EQ(im.probes[0].interval_ns, 500'000);
  EXPECT_EQ(im.probes[2].interval_ns, 1'000'000);
  // One thread: 1200 may be -i700 with the default distance, or -i1200 -d0. Not guessed.
  im = VerboseWithHeaders("Thread 0 Interval: 1200\n", 1);
  EXPECT_EQ(im.probes[0].interval_ns, 0);
  EXPECT_TRUE(SaysTimesUnknown(im));
  // Steps that differ are not cyclictest's; nothing is guessed either.
  im = VerboseWithHeaders(
      "Thread 0 Interval: 1500\nThread 1 Interval: 1700\nThread 2 Interval: 2500\n", 3);
  EXPECT_EQ(im.probes[1].interval_ns, 0);
  EXPECT_TRUE(SaysTimesUnknown(im));
}

TEST(CyclictestVerbose, RealRunsGiveTheIntervalsCyclictestSet) {
  // Every multi-thread row of the table recorded from cyclictest's own status lines
  // (tests/data/cyclictest-intervals), run again here with -v: the import must give the same
  // intervals. -h/-H rows are left out (cyclictest -v with -h prints no sample lines).
  if (testutil::RunProcess({"/bin/sh", "-c", "command -v cyclictest"}).exit_code != 0) {
    GTEST_SKIP() << "cyclictest is not installed (scripts/install-deps --test installs rt-tests)";
  }
  if (!testutil::IsRoot()) GTEST_SKIP() << "the table's -p rows need root";
  int checked = 0;
  for (const auto& row : testutil::ReadIntervalTable()) {
    // Rows with an explicit thread count only: -t alone and -S (which overrides -t) follow
    // the CPU count.
    const bool counted = std::regex_search(row.flags, std::regex("-t[0-9]")) &&
                         row.flags.find("-S") == std::string::npos;
    if (!counted || row.intervals_us.size() < 2 || row.flags.find("-h") != std::string::npos ||
        row.flags.find("-H") != std::string::npos) {
      continue;
    }
    SCOPED_TRACE("cyclictest " + row.flags + " -v");
    testutil::TempDir dir;
    std::vector<std::string> argv = {
        "/bin/sh", "-c", "cyclictest " + row.flags + " -v -l 20 > " + dir.File("v.txt")};
    ASSERT_EQ(testutil::RunProcess(argv).exit_code, 0);
    const Imported im = MustImport(dir.File("v.txt"));
    ASSERT_EQ(im.probes.size(), row.intervals_us.size());
    for (const auto& p : im.probes) {
      EXPECT_EQ(p.interval_ns, row.intervals_us[static_cast<size_t>(p.index)] * 1000)
          << "thread " << p.index;
    }
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

TEST(Jitterdebugger, JsonMatchesTheFile) {
  const auto src = LoadJson("jitterdebugger.json");
  const Imported im = MustImport(kData + "jitterdebugger.json");
  ASSERT_EQ(im.probes.size(), src["cpu"].size());
  for (const auto& p : im.probes) {
    const auto& c = src["cpu"][std::to_string(p.cpu)];
    EXPECT_EQ(p.histogram.count(), c["count"].get<uint64_t>());
    EXPECT_EQ(p.histogram.min(), c["min"].get<int64_t>() * 1000);
    EXPECT_EQ(p.histogram.max(), c["max"].get<int64_t>() * 1000);
  }
}

TEST(Jitterdebugger, RawSamples) {
  std::ifstream in(kData + "jitterdebugger_samples.raw", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(bytes.size() % 28, 0u);
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> per_cpu;  // count, max
  for (size_t i = 0; i < bytes.size(); i += 28) {
    uint32_t cpu = 0;
    uint64_t v = 0;
    std::memcpy(&cpu, bytes.data() + i, 4);
    std::memcpy(&v, bytes.data() + i + 20, 8);
    per_cpu[cpu].first++;
    per_cpu[cpu].second = std::max(per_cpu[cpu].second, v);
  }
  Collect samples;
  const Imported im = MustImport(kData + "jitterdebugger_samples.raw", {}, &samples);
  ASSERT_EQ(im.probes.size(), per_cpu.size());
  for (const auto& p : im.probes) {
    EXPECT_EQ(p.histogram.count(), per_cpu[static_cast<uint32_t>(p.cpu)].first);
    EXPECT_EQ(p.histogram.max(),
              static_cast<int64_t>(per_cpu[static_cast<uint32_t>(p.cpu)].second) * 1000);
  }
  EXPECT_EQ(samples.all.size(), bytes.size() / 28);
  EXPECT_PREFIX(ErrorOf(bytes.substr(0, 28 * 3 + 5), Format::kJitterdebuggerRaw),
                ": 5 stray bytes at byte 84 (re");
}

// Found by fuzz_import_auto (docs/fuzzing.md): a record whose tv_sec has no int64
// nanoseconds overflowed sec * 1e9 (UBSan). It is now refused as not a jitterdebugger
// sample, naming the record; the last second that fits (2262-04-11) still imports.
std::string RawRecordBytes(uint32_t cpu, int64_t sec, int64_t nsec, uint64_t value_us) {
  std::string r(28, '\0');
  std::memcpy(r.data(), &cpu, 4);
  std::memcpy(r.data() + 4, &sec, 8);
  std::memcpy(r.data() + 12, &nsec, 8);
  std::memcpy(r.data() + 20, &value_us, 8);
  return r;
}

TEST(Jitterdebugger, RawTimesBeyondInt64NanosecondsAreRefused) {
  EXPECT_PREFIX(ErrorOf(RawRecordBytes(0, 15'801, 0, 3) + RawRecordBytes(0, 274'877'922'745, 0, 16),
                        Format::kJitterdebuggerRaw),
                ": record 1 at byte 28: cpu 0 time 274877922745.000000000 value 16 is not a "
                "jitterdebugger sample");
  // INT64_MAX = 9223372036854775807 ns: second 9223372035 with any nanosecond fits.
  testutil::TempDir dir;
  const std::string path = dir.File("samples.raw");
  std::ofstream(path, std::ios::binary) << RawRecordBytes(2, 9'223'372'035, 999'999'999, 7);
  Collect samples;
  ImportOptions options;
  options.format = Format::kJitterdebuggerRaw;
  MustImport(path, options, &samples);
  ASSERT_EQ(samples.all.size(), 1u);
  EXPECT_EQ(samples.all[0].latency_ns, 7000);
  EXPECT_EQ(samples.all[0].expected_ns, 9'223'372'035'999'999'999 - 7000);
  EXPECT_PREFIX(ErrorOf(RawRecordBytes(2, 9'223'372'036, 0, 7), Format::kJitterdebuggerRaw),
                ": record 0 at byte 0: cpu 2 time 9223372036.000000000 value 7 is not");
}

TEST(RtApp, WuLatColumn) {
  std::ifstream in(kData + "rt-app-thread0-0.log");
  std::string line;
  uint64_t rows = 0;
  long max_us = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    ++rows;
    max_us = std::max(max_us, std::stol(line.substr(line.find_last_of(' ') + 1)));
  }
  const Imported im = MustImport(kData + "rt-app-thread0-0.log");
  ASSERT_EQ(im.probes.size(), 1u);
  EXPECT_EQ(im.probes[0].histogram.count(), rows);
  EXPECT_EQ(im.probes[0].histogram.max(), max_us * 1000);
}

TEST(Values, UnitsCommentsBlankLines) {
  // 12.5, 13, 14.25, 250, 11 (us)
  Collect samples;
  const Imported im = MustImport(kData + "values_us.txt", {}, &samples);
  const auto& h = im.probes[0].histogram;
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(h.min(), 11'000);
  EXPECT_EQ(h.max(), 250'000);
  EXPECT_EQ(h.sum(), 12'500 + 13'000 + 14'250 + 250'000 + 11'000);
  ASSERT_EQ(samples.all.size(), 5u);
  EXPECT_EQ(samples.all[2].latency_ns, 14'250);
  EXPECT_EQ(samples.all[2].seq, 2u);
  ImportOptions ms;
  ms.unit_ns = 1'000'000;
  EXPECT_EQ(MustImport(kData + "values_us.txt", ms).probes[0].histogram.max(), 250'000'000);
}

TEST(Values, DecimalsRoundToTheNanosecond) {
  testutil::TempDir dir;
  std::ofstream(dir.File("v")) << "0.0015\n-2\n1e3\n+7.9999999\n";
  ImportOptions o;
  o.format = Format::kValues;
  const Imported im = MustImport(dir.File("v"), o);
  const auto& h = im.probes[0].histogram;
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.min(), -2000);
  EXPECT_EQ(h.max(), 1'000'000);
  EXPECT_EQ(h.sum(), 2 - 2000 + 1'000'000 + 8000);
}

TEST(Malformed, ValuesNameLineAndColumn) {
  EXPECT_PREFIX(ErrorOf("12\n1x3\n", Format::kValues), ":2:2: unexpected 'x3' after th");
  EXPECT_PREFIX(ErrorOf("12\n  abc\n", Format::kValues), ":2:3: 'abc' is not a number");
  EXPECT_PREFIX(ErrorOf("1\n2\n3 4\n", Format::kValues), ":3:3: unexpected '4' afte");
  EXPECT_PREFIX(ErrorOf("", Format::kValues), ":1:1: no values in the");
  EXPECT_PREFIX(ErrorOf("# only a comment\n\n", Format::kValues), ":3:1: no values in the");
  EXPECT_PREFIX(ErrorOf(""), ":1:1: empty file;");  // detection
}

TEST(Malformed, CyclictestVerbose) {
  const std::string head = "Thread 0 Interval: 1000\n       0:       0:      12\n";
  EXPECT_PREFIX(ErrorOf(head + "       0:       1:", Format::kCyclictestVerbose),
                ":3:19: line has 2 of the 3 fields thread");
  EXPECT_PREFIX(ErrorOf(head + "       0:       1:     1q\n", Format::kCyclictestVerbose),
                ":3:25: more than 3 fields; cyc");
  EXPECT_PREFIX(ErrorOf(head + "       0:       x:      3\n", Format::kCyclictestVerbose),
                ":3:17: 'x:      3' is not");
  EXPECT_PREFIX(ErrorOf(head + "       0:       1\n", Format::kCyclictestVerbose),
                ":3:18: line has 2 of");
}

TEST(Malformed, CyclictestHistogram) {
  const std::string rows = "# Histogram\n000000 000001\t000002\n000001 000003\t000004\n";
  const std::string tail =
      "# Total: 000000004 000000006\n# Min Latencies: 00000 00000\n# Avg Latencies: 00000 "
      "00000\n# Max Latencies: 00001 00001\n# Histogram Overflows: 00000 00000\n";
  EXPECT_TRUE(ImportFile("/nonexistent", {}, nullptr).error().message.find("cannot open") !=
              std::string::npos);
  {
    testutil::TempDir folder;
    EXPECT_TRUE(
        ImportFile(folder.path(), {}, nullptr).error().message.find(": is a folder; give a file") !=
        std::string::npos);
  }
  // A wrapped max (2^64 - 7 = -7 us) needs a wrapped sample among the overflows.
  EXPECT_PREFIX(ErrorOf(rows + "# Total: 000000004 000000006\n# Min Latencies: 00000 00000\n"
                               "# Avg Latencies: 00000 00000\n# Max Latencies: "
                               "18446744073709551609 00001\n# Histogram Overflows: 00000 00000\n",
                        Format::kCyclictestHistogram),
                ":9:1: thread 0: avg 0 / max 18446744073709551609 look wrapped");
  // 2^64 itself is not an unsigned 64-bit number.
  EXPECT_PREFIX(
      ErrorOf(rows + "# Max Latencies: 18446744073709551616 00001\n", Format::kCyclictestHistogram),
      ":4:18: '18446744073709551616' is not a whole number from 0 to 2^64-1");
  // Wrong column count, non-number, a row out of order, a cut-off file.
  EXPECT_PREFIX(ErrorOf(rows + "000002 000001\n" + tail, Format::kCyclictestHistogram),
                ":4:14: histogram row has 1 counts, e");
  EXPECT_PREFIX(ErrorOf(rows + "000002 0x0001\t1\n" + tail, Format::kCyclictestHistogram),
                ":4:8: '0x0001' is not a whole ");
  EXPECT_PREFIX(ErrorOf(rows + "000007 1\t1\n" + tail, Format::kCyclictestHistogram),
                ":4:1: histogram class 7 where ");
  EXPECT_PREFIX(ErrorOf(rows + tail.substr(0, 90), Format::kCyclictestHistogram),
                ":7:4: last line has no end (file cut sho");
  EXPECT_PREFIX(ErrorOf(rows + tail.substr(0, 87), Format::kCyclictestHistogram),
                ":7:1: missing '# Max Latencies:' line; t");
  EXPECT_PREFIX(ErrorOf(rows + "# Total: 000000009 000000006\n" + tail.substr(29),
                        Format::kCyclictestHistogram),
                ":9:1: thread 0: rows sum to 4 but '# Tot");
}

TEST(Bounds, OverflowsWithAMaxBelowTheLimitLeaveTheMaxALowerBound) {
  // jitterdebugger: 2 of 5 samples outside its 1000 slots, yet max says 12 us: the max that
  // overflowed is not known, so the recorded one (the limit) is only a lower bound.
  testutil::TempDir dir;
  const std::string path = dir.File("results.json");
  std::ofstream(path) << "{\"cpu\": {\"0\": {\"histogram\": {\"10\": 3}, \"count\": 5, "
                         "\"min\": 10, \"max\": 12, \"avg\": 406}}}";
  const Imported im = MustImport(path);
  ASSERT_EQ(im.probes.size(), 1u);
  const auto& p = im.probes[0];
  EXPECT_EQ(p.histogram.count(), 5u);
  EXPECT_EQ(p.histogram.max(), 1'000'000);
  EXPECT_EQ(p.histogram.CountAtOrAbove(1'000'000), 2u);
  EXPECT_EQ(p.bounds.max, results::Bound::kLowerBound);
  EXPECT_EQ(p.bounds.stddev, results::Bound::kLowerBound);
  EXPECT_EQ(p.bounds.mean, results::Bound::kExact);  // jitterdebugger's avg sums every sample
  // Mean 406 us exact; the smallest spread: 3 at 10 us and 2 at >= 1000 us, about 406 us:
  // (3 * 396^2 + 2 * 594^2) / 5 = 235224 us^2 (by hand; its minimum, since 3*396 = 2*594).
  EXPECT_NEAR(p.histogram.StdDev(), std::sqrt(235'224.0) * 1000, 1.0);
}

TEST(Malformed, JsonAndRtApp) {
  EXPECT_PREFIX(
      ErrorOf("{\n  \"thread\": {\n    \"0\": {\"cycles\": 3,\n", Format::kCyclictestJson),
      ":4:1: parse error at");
  EXPECT_PREFIX(
      ErrorOf("{\"thread\": {\"0\": {\"histogram\": {\"x\": 1}, \"cycles\": 1, \"min\": 1, "
              "\"max\": 1, \"avg\": 1}}}",
              Format::kCyclictestJson),
      ":1:33: thread.0.histogram entry \"x\": 1 is not a c");
  EXPECT_PREFIX(ErrorOf("{\"cpu\": {\"0\": {\"histogram\": {}, \"count\": \"many\"}}}",
                        Format::kJitterdebuggerJson),
                ":1:33: cpu.0.count missing or not a numb");
  const std::string header =
      "#idx     perf      run   period           start             end          rel_st      "
      "slack c_duration   c_period     wu_lat\n";
  EXPECT_PREFIX(ErrorOf(header + "   0  1  2  3  4  5  6  7  8  9  1x\n", Format::kRtApp),
                ":2:34: wu_lat '1x' is not a numb");
  EXPECT_PREFIX(ErrorOf(header + "   0  1  2  3  4  5  6  7  8  9\n", Format::kRtApp),
                ":2:32: 10 columns where the header h");
  EXPECT_PREFIX(ErrorOf(header, Format::kRtApp), ":2:1: no rows");
}

}  // namespace
}  // namespace rtpulse::importers
