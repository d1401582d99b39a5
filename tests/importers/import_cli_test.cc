// Runs the built `rtpulse import` on the real-tool fixtures and reads the result back.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "results/suite_reader.h"
#include "results/suite_result.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

const std::string kData = std::string(RTPULSE_TEST_DATA) + "/import/";

TEST(ImportCli, EveryFormatIntoOneReadableResultsFolder) {
  testutil::TempDir dir;
  const std::string out = dir.File("run");
  const std::vector<std::string> files = {
      "cyclictest_h.json",          "cyclictest_noh.json",  "cyclictest_hist.txt",
      "cyclictest_H_overflow.txt",  "cyclictest_v.txt",     "jitterdebugger.json",
      "jitterdebugger_samples.raw", "rt-app-thread0-0.log", "values_us.txt"};
  std::vector<std::string> args = {"import", "--out", out, "--quiet"};
  for (const auto& f : files) args.push_back(kData + f);
  const auto r = testutil::RunRtpulse(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  auto suite = results::ReadSuiteResult(out);
  ASSERT_TRUE(suite) << suite.error().message;
  ASSERT_EQ(suite->scenarios.size(), files.size());
  EXPECT_EQ(suite->status, "complete");
  // The summary written equals the one computed from what was read back.
  std::ifstream in(out + "/statistical_summary.json");
  const auto written = nlohmann::json::parse(in);
  EXPECT_EQ(written, results::StatisticalSummaryJson(*suite));
  const auto rows = results::SummarizeScenarios(*suite);
  ASSERT_EQ(rows.size(), files.size() - 1);  // cyclictest_noh has no distribution
  EXPECT_EQ(rows[0].scenario, "cyclictest_h");
  EXPECT_EQ(rows[0].samples, 972u + 990u);  // the file's cycles
  EXPECT_EQ(rows[0].max_ns, 13'033'000);
  // Without -h: no latency, said plainly, the tool's numbers kept.
  const auto& noh = suite->scenarios[1];
  EXPECT_FALSE(noh.latency);
  EXPECT_NE(noh.error.find("percentiles unavailable"), std::string::npos);
  // Time-ordered inputs got samples.bin files.
  EXPECT_EQ(suite->scenarios[4].samples_file, "cyclictest_v/samples.bin");
  EXPECT_TRUE(std::filesystem::exists(out + "/cyclictest_v/samples.bin"));
  EXPECT_TRUE(std::filesystem::exists(out + "/values_us/samples.bin"));
  EXPECT_TRUE(std::filesystem::exists(out + "/jitterdebugger_samples/samples.bin"));
  const auto s = testutil::RunRtpulse({"samples", out + "/values_us/samples.bin"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("records       5"), std::string::npos) << s.out;
}

TEST(ImportCli, BadInputWritesNothingAndExits2) {
  testutil::TempDir dir;
  std::ofstream(dir.File("bad.txt")) << "1\n2\nthree\n";
  const std::string out = dir.File("run");
  const auto r =
      testutil::RunRtpulse({"import", kData + "values_us.txt", dir.File("bad.txt"), "--out", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.txt:3:1: 'three' is not a number"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));  // the good first file's samples.bin is gone too
}

TEST(ImportCli, UsageErrors) {
  testutil::TempDir dir;
  auto r = testutil::RunRtpulse(
      {"import", kData + "values_us.txt", "--format", "rtapp", "--out", dir.File("a")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'rt-app'"), std::string::npos) << r.err;
  r = testutil::RunRtpulse(
      {"import", kData + "values_us.txt", "--unit", "min", "--out", dir.File("a")});
  EXPECT_EQ(r.exit_code, 2);
  std::ofstream(dir.File("x")) << "";
  r = testutil::RunRtpulse({"import", kData + "values_us.txt", "--out", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already holds files"), std::string::npos) << r.err;
}

TEST(ImportCli, NoSamplesAndUnits) {
  testutil::TempDir dir;
  const auto r =
      testutil::RunRtpulse({"import", kData + "values_us.txt", "--unit", "ms", "--no-samples",
                            "--name", "loop", "--out", dir.File("o"), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto suite = results::ReadSuiteResult(dir.File("o"));
  ASSERT_TRUE(suite) << suite.error().message;
  EXPECT_EQ(suite->scenarios[0].name, "loop");
  EXPECT_EQ(suite->scenarios[0].samples_file, "");
  EXPECT_EQ(results::SummarizeScenarios(*suite)[0].max_ns, 250'000'000);
  EXPECT_FALSE(std::filesystem::exists(dir.File("o/loop")));
}

TEST(ImportCli, APipeNeedsItsFormatNamedAndIsReadWhole) {
  // Detection would read the head of a pipe and take it away from the import.
  testutil::TempDir dir;
  const std::string data = kData + "values_us.txt";
  const std::string bin = RTPULSE_BINARY;
  auto r = testutil::RunProcess(
      {"/bin/bash", "-c", bin + " import <(cat " + data + ") --out " + dir.File("a") + " --quiet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a regular file (a pipe?)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--format"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("a")));
  r = testutil::RunProcess({"/bin/bash", "-c",
                            bin + " import <(cat " + data +
                                ") --format values --name piped --out " + dir.File("b") +
                                " --quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto suite = results::ReadSuiteResult(dir.File("b"));
  ASSERT_TRUE(suite) << suite.error().message;
  EXPECT_EQ(results::SummarizeScenarios(*suite)[0].samples, 5u);  // all of the file
  EXPECT_EQ(results::SummarizeScenarios(*suite)[0].max_ns, 250'000);
}

TEST(ImportCli, JitterdebuggerRawFromAPipeNeedsNoSamples) {
  // samples.raw is read twice when samples.bin is written: a pipe cannot be.
  testutil::TempDir dir;
  const std::string raw = kData + "jitterdebugger_samples.raw";
  const std::string bin = RTPULSE_BINARY;
  auto r =
      testutil::RunProcess({"/bin/bash", "-c",
                            bin + " import <(cat " + raw + ") --format jitterdebugger-raw --out " +
                                dir.File("a") + " --quiet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a pipe, and samples.raw is read twice"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--no-samples"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("a")));
  r = testutil::RunProcess({"/bin/bash", "-c",
                            bin + " import <(cat " + raw +
                                ") --format jitterdebugger-raw --no-samples --out " +
                                dir.File("b") + " --quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto direct =
      testutil::RunRtpulse({"import", raw, "--no-samples", "--out", dir.File("c"), "--quiet"});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  auto piped = results::ReadSuiteResult(dir.File("b"));
  auto file = results::ReadSuiteResult(dir.File("c"));
  ASSERT_TRUE(piped && file);
  EXPECT_EQ(results::SummarizeScenarios(*piped)[0].samples,
            results::SummarizeScenarios(*file)[0].samples);
  EXPECT_GT(results::SummarizeScenarios(*file)[0].samples, 0u);
}

TEST(ImportCli, JobsOutOfRange) {
  testutil::TempDir dir;
  const auto r = testutil::RunRtpulse(
      {"import", kData + "values_us.txt", "--jobs", "65", "--out", dir.File("a")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--jobs 65: give 1..64 threads"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("a")));
}

TEST(ImportCli, NegativeValuesAreWarnedOnStderrAndInTheResult) {
  testutil::TempDir dir;
  std::ofstream(dir.File("neg.txt")) << "5\n-12.5\n3\n-2\n";
  std::ofstream(dir.File("one.txt")) << "-7\n3\n";
  const auto r = testutil::RunRtpulse({"import", dir.File("neg.txt"), dir.File("one.txt"),
                                       kData + "values_us.txt", "--no-samples", "--out",
                                       dir.File("o"), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Two of the four values are below zero, the smallest -12.5 us; one of two in the other.
  const std::string neg =
      "2 negative values of 4 (the smallest -12.5 us): latencies and response times are not "
      "negative; check the sign and that the column holds latencies (they are kept as read)";
  const std::string one = "1 negative value of 2 (the smallest -7 us)";
  EXPECT_NE(r.err.find("rtpulse: warning: neg: " + neg + "\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rtpulse: warning: one: " + one), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("values_us: "), std::string::npos) << "no warning without negatives";
  EXPECT_TRUE(r.out.empty()) << r.out;  // --quiet: nothing else

  auto suite = results::ReadSuiteResult(dir.File("o"));
  ASSERT_TRUE(suite) << suite.error().message;
  ASSERT_EQ(suite->scenarios.size(), 3u);
  EXPECT_EQ(suite->scenarios[0].warnings, std::vector<std::string>{neg});
  EXPECT_TRUE(suite->scenarios[2].warnings.empty());
  ASSERT_TRUE(suite->scenarios[0].latency);
  EXPECT_EQ(suite->scenarios[0].latency->warnings, std::vector<std::string>{neg});
  // The values are kept as read.
  const auto& h = suite->scenarios[0].latency->paths[0].probes[0].histogram;
  EXPECT_EQ(h.negative_count(), 2u);
  EXPECT_EQ(h.min(), -12'500);
  std::ifstream in(dir.File("o/result.json"));
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["config"]["inputs"][0]["warnings"], nlohmann::json({neg}));
}

TEST(ImportCli, BinaryBytesInTheInputAreEscapedInTheError) {
  testutil::TempDir dir;
  std::ofstream(dir.File("bin.txt"), std::ios::binary) << std::string("1\n2\0\x1b[31m\xff\n", 11);
  const auto r = testutil::RunRtpulse(
      {"import", dir.File("bin.txt"), "--format", "values", "--out", dir.File("o")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bin.txt:2:2: unexpected '\\x00\\x1b[31m\\xff' after the value"),
            std::string::npos)
      << r.err;
  for (const char c : r.err) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (u >= 0x20 && u < 0x7f)) << "raw byte " << static_cast<int>(u);
  }
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_FALSE(std::filesystem::exists(dir.File("o")));

  // The same through the cyclictest JSON reader: the JSON parser's "last read" bytes.
  std::ofstream(dir.File("bin.json"), std::ios::binary)
      << std::string("{\"thread\": \xff\x1b\x01}\n", 16);
  const auto j = testutil::RunRtpulse(
      {"import", dir.File("bin.json"), "--format", "cyclictest-json", "--out", dir.File("o")});
  EXPECT_EQ(j.exit_code, 2) << j.err;
  EXPECT_EQ(j.err.rfind("rtpulse: error: ", 0), 0u) << j.err;
  EXPECT_NE(j.err.find("bin.json:1:"), std::string::npos) << j.err;
  for (const char c : j.err) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (u >= 0x20 && u < 0x7f)) << "raw byte " << static_cast<int>(u);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("o")));
}

// ---- Measurement truth on other tools' data (issue 10) ----

const std::string kTruth = std::string(RTPULSE_TEST_DATA) + "/../importers/import_truth.py";

/// Ground truth from tests/importers/import_truth.py (python, nothing of rtpulse).
nlohmann::json Truth(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/python3", kTruth};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = testutil::RunProcess(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

/// Imports `files` into `out`, expecting success; returns all it printed: stdout, then
/// stderr (where the import's warnings go).
std::string MustImportCli(const std::vector<std::string>& files, const std::string& out) {
  std::vector<std::string> args = {"import", "--out", out};
  args.insert(args.end(), files.begin(), files.end());
  const auto r = testutil::RunRtpulse(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out + r.err;
}

void ExpectRelNear(double actual, double expected, double rel = 1e-6) {
  EXPECT_NEAR(actual, expected, std::fabs(expected) * rel + 1e-3) << "expected " << expected;
}

TEST(ImportTruth, CyclictestJsonWrappedNegativesAreRecoveredNotAveraged) {
  // A real `cyclictest -x` file: avg ~4e18, max -30 (tests/data/import/README.md).
  const std::string file = kData + "cyclictest_x_wrap.json";
  const auto truth = Truth({"cyclictest-json", file, "100"})["0"];
  testutil::TempDir dir;
  const std::string out = dir.File("o");
  const std::string printed = MustImportCli({file}, out);
  EXPECT_NE(printed.find("cyclictest stores latencies unsigned, so they wrapped"),
            std::string::npos)
      << printed;
  const auto result = ReadJson(out + "/result.json");
  const auto& t = result["scenarios"][0]["latency"]["thread"]["0"];
  const auto& st = t["stats"];
  EXPECT_EQ(st["count"], truth["cycles"]);
  EXPECT_EQ(st["negative_latencies"], truth["negatives"]);
  EXPECT_GT(truth["negatives"].get<int>(), 0);
  EXPECT_EQ(t["histogram_overflows"], truth["overflows"]);
  EXPECT_EQ(t["histogram_underflows"], truth["negatives"]);
  EXPECT_EQ(st["min_ns"], truth["largest_negative_ns"]);
  EXPECT_EQ(st["bounds"]["min_ns"], "upper_bound");
  EXPECT_EQ(st["bounds"]["max_ns"], "lower_bound");
  EXPECT_EQ(st["bounds"]["mean_ns"], "unknown");  // negatives and overflows, values unknown
  EXPECT_EQ(st["mean_is_unknown"], true);
  EXPECT_EQ(st["stddev_is_lower_bound"], true);
  ExpectRelNear(st["stddev_ns"].get<double>(), truth["stddev_lower_bound_ns"].get<double>());
  // No corrupt number reaches a statistic: nothing near the wrapped avg.
  EXPECT_LT(std::fabs(st["mean_ns"].get<double>()), 1e8);
  const auto& row = result["scenarios"][0]["summary"][0];
  EXPECT_TRUE(row["mean_ns"].is_null());
  EXPECT_EQ(row["min_is_upper_bound"], true);
  EXPECT_EQ(row["p99_is_lower_bound"], true);  // lands in the clipped overflows
  ExpectRelNear(row["jitter_stddev_ns"].get<double>(),
                truth["stddev_lower_bound_ns"].get<double>());
  const auto& src = result["config"]["inputs"][0]["source_numbers"][0];
  EXPECT_TRUE(src["avg"].is_null());
  EXPECT_EQ(src["wrapped"]["negative_latencies"], truth["negatives"]);
  // The text summary marks what is not exact.
  EXPECT_NE(printed.find("\u2264-30.0"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\u2265100.0"), std::string::npos) << printed;
  // The report's tables mark the same statistics.
  const auto rep = testutil::RunRtpulse({"report", out});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const auto tex = testutil::RunProcess({"/bin/cat", out + "/tables/summary.tex"}).out;
  EXPECT_NE(tex.find("& 5000 & $\\leq$-30.0 & ? & "), std::string::npos) << tex;
  const auto html = testutil::RunProcess({"/bin/cat", out + "/report/index.html"}).out;
  EXPECT_NE(html.find("<td>\u2264-30.0</td><td>?</td>"), std::string::npos);
  EXPECT_NE(html.find("unsigned wrap"), std::string::npos);
  // compare reads it and prints no wrapped-size number.
  const auto cmp = testutil::RunRtpulse({"compare", out, out});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_EQ(cmp.out.find("0000000000"), std::string::npos) << cmp.out;
  const size_t mean_line = cmp.out.find("mean (us)");
  ASSERT_NE(mean_line, std::string::npos) << cmp.out;
  const std::string mean_row = cmp.out.substr(mean_line, cmp.out.find('\n', mean_line) - mean_line);
  EXPECT_NE(mean_row.find('?'), std::string::npos) << mean_row;  // unknown, said so
  EXPECT_EQ(mean_row.find_first_of("0123456789"), std::string::npos) << mean_row;  // no number
}

/// cyclictest --json text for one thread with the given histogram, cycles, min, avg, max.
std::string OneThreadJson(const std::string& histogram, uint64_t cycles, const std::string& min,
                          const std::string& avg, const std::string& max) {
  return fmt::format(
      "{{\"file_version\": 1, \"cmdline:\": \"cyclictest -x -h 100 --json=f.json\", "
      "\"thread\": {{\"0\": {{\"histogram\": {{{}}}, \"cycles\": {}, \"min\": {}, \"max\": {}, "
      "\"avg\": {}, \"cpu\": 0, \"node\": 0}}}}}}",
      histogram, cycles, min, max, avg);
}

TEST(ImportTruth, OneWrappedNegativeIsRecoveredExactly) {
  // Edited to hold the wrapped pattern: samples 10,10,10,20 us and one of -7 us, which
  // cyclictest stores as 2^64 - 7: avg = (50 + 2^64 - 7) / 5, max prints as -7.
  testutil::TempDir dir;
  const std::string file = dir.File("one_negative.json");
  std::ofstream(file) << OneThreadJson("\"10\": 3, \"20\": 1", 5, "10",
                                       fmt::format("{:.17g}", (43.0 + 18446744073709551616.0) / 5),
                                       "-7");
  const auto truth = Truth({"cyclictest-json", file, "100"})["0"];
  ASSERT_EQ(truth["negatives"], 1);
  MustImportCli({file}, dir.File("o"));
  const auto result = ReadJson(dir.File("o/result.json"));
  const auto& st = result["scenarios"][0]["latency"]["thread"]["0"]["stats"];
  EXPECT_EQ(st["negative_latencies"], 1);
  EXPECT_EQ(st["min_ns"], -7000);  // two's complement of the printed max
  EXPECT_EQ(st["max_ns"], 20000);
  ExpectRelNear(st["mean_ns"].get<double>(), truth["mean_ns"].get<double>());
  ExpectRelNear(st["stddev_ns"].get<double>(), truth["stddev_ns"].get<double>());
  EXPECT_FALSE(st.contains("bounds"));  // every value is known
}

TEST(ImportTruth, WithoutAHistogramTheWrappedAvgIsNotQuoted) {
  // No -h: only cycles/min/avg/max. 2 of 5 samples wrapped: avg = (2 * 2^64 + 31) / 5.
  testutil::TempDir dir;
  const std::string file = dir.File("noh.json");
  const std::string avg = fmt::format("{:.17g}", (2 * 18446744073709551616.0 + 31) / 5);
  std::ofstream(file) << OneThreadJson("", 5, "10", avg, "-3");
  MustImportCli({file}, dir.File("o"));
  const auto result = ReadJson(dir.File("o/result.json"));
  const std::string error = result["scenarios"][0]["error"];
  EXPECT_NE(error.find("2 negative latencies that wrapped"), std::string::npos) << error;
  EXPECT_EQ(error.find(avg.substr(0, 6)), std::string::npos) << error;
  EXPECT_TRUE(result["config"]["inputs"][0]["source_numbers"][0]["avg"].is_null());
}

TEST(ImportTruth, AWrappedAvgThatGivesNoCountIsRefused) {
  testutil::TempDir dir;
  const std::string file = dir.File("edited.json");
  // 2.5 wrapped values is no count at all.
  std::ofstream(file) << OneThreadJson(
      "\"10\": 3", 5, "10", fmt::format("{:.17g}", 2.5 * 18446744073709551616.0 / 5), "-7");
  const auto r = testutil::RunRtpulse({"import", file, "--out", dir.File("o")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("thread.0: avg"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unsigned wrap"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("re-run cyclictest"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("o")));
}

TEST(ImportTruth, CyclictestHistogramTextWithAWrappedMaxIsReadAndNothingUnknownIsPrinted) {
  // A real `cyclictest -x -h 100` text: '# Max Latencies: 18446744073709551609' (= -7).
  const std::string file = kData + "cyclictest_x_wrap_h.txt";
  std::ifstream in(file);
  std::string line;
  uint64_t max_printed = 0;
  uint64_t overflows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# Max Latencies: ", 0) == 0) max_printed = std::stoull(line.substr(17));
    if (line.rfind("# Histogram Overflows: ", 0) == 0) overflows = std::stoull(line.substr(23));
  }
  ASSERT_GT(max_printed, uint64_t{1} << 63);
  const auto largest_negative_us = static_cast<int64_t>(max_printed);
  testutil::TempDir dir;
  const std::string printed = MustImportCli({file}, dir.File("o"));
  const auto result = ReadJson(dir.File("o/result.json"));
  const auto& row = result["scenarios"][0]["summary"][0];
  EXPECT_EQ(row["min_ns"], largest_negative_us * 1000);
  EXPECT_EQ(row["min_is_upper_bound"], true);
  const auto& st = result["scenarios"][0]["latency"]["thread"]["0"]["stats"];
  EXPECT_EQ(st["negative_latencies"], overflows);  // at most; the file cannot say
  EXPECT_EQ(st["bounds"]["negative_latencies"], "upper_bound");
  for (const char* key : {"mean_ns", "median_ns", "p99_ns", "max_ns", "jitter_stddev_ns"}) {
    EXPECT_TRUE(row[key].is_null()) << key << " = " << row[key];
  }
  EXPECT_NE(printed.find("does not say how many of the " + std::to_string(overflows) +
                         " overflows are negative"),
            std::string::npos)
      << printed;
  const auto text = testutil::RunProcess({"/bin/cat", dir.File("o/statistical_summary.txt")});
  EXPECT_NE(text.out.find("        ?"), std::string::npos) << text.out;
}

TEST(ImportTruth, CyclictestVerboseZeroLinesAreNotSamples) {
  // A real `cyclictest -x -v` run: a latency <= 0 prints as 0 with the previous cycle number.
  const std::string file = kData + "cyclictest_vx.txt";
  const auto truth = Truth({"cyclictest-verbose", file})["0"];
  ASSERT_GT(truth["zero_lines"].get<int>(), 0);
  testutil::TempDir dir;
  const std::string out = dir.File("o");
  const std::string printed = MustImportCli({file}, out);
  EXPECT_NE(printed.find("latency <= 0, value not printed"), std::string::npos) << printed;
  const auto result = ReadJson(out + "/result.json");
  const auto& t = result["scenarios"][0]["latency"]["thread"]["0"];
  EXPECT_EQ(t["latencies_not_printed"], truth["zero_lines"]);
  EXPECT_EQ(t["stats"]["count"], truth["printed"]);
  EXPECT_EQ(t["periods_elapsed"],
            truth["printed"].get<uint64_t>() + truth["zero_lines"].get<uint64_t>());
  EXPECT_EQ(t["stats"]["max_ns"], truth["max_us"].get<int64_t>() * 1000);
  EXPECT_EQ(t["stats"]["min_ns"], truth["min_us"].get<int64_t>() * 1000);
  ExpectRelNear(t["stats"]["mean_ns"].get<double>(), truth["mean_ns"].get<double>(), 1e-9);
  const auto& row = result["scenarios"][0]["summary"][0];
  EXPECT_EQ(row["latencies_not_printed"], truth["zero_lines"]);
  const auto summary = ReadJson(out + "/statistical_summary.json");
  EXPECT_EQ(summary["scenarios"][0]["latencies_not_printed"], truth["zero_lines"]);
  // samples.bin holds the printed samples only, in rising seq order (docs/samples-format.md).
  const auto bin = Truth({"samples-bin", out + "/cyclictest_vx/samples.bin"});
  EXPECT_EQ(bin["records"], truth["printed"]);
  EXPECT_EQ(bin["seq_increasing"], true);
  EXPECT_EQ(truth["seqs_increasing"], true);
  // Read back, the suite reader keeps the count.
  auto suite = results::ReadSuiteResult(out);
  ASSERT_TRUE(suite) << suite.error().message;
  EXPECT_EQ(results::SummarizeScenarios(*suite)[0].latencies_not_printed,
            truth["zero_lines"].get<uint64_t>());
}

TEST(ImportTruth, JitterdebuggerOverflowsAtItsFixedLimitAndTheJitterIsALowerBound) {
  // A real jitterdebugger run with 4 samples >= 1000 us on CPU 1 (highest filled slot 693).
  const std::string json = kData + "jitterdebugger_overflow.json";
  const std::string raw = kData + "jitterdebugger_overflow_samples.raw";
  const auto truth = Truth({"jitterdebugger", json, raw})["1"];
  ASSERT_GT(truth["overflows"].get<int>(), 1);
  ASSERT_LT(truth["highest_class_us"].get<int>(), 999);
  testutil::TempDir dir;
  const std::string printed = MustImportCli({json}, dir.File("o"));
  const auto result = ReadJson(dir.File("o/result.json"));
  const auto& t = result["scenarios"][0]["latency"]["thread"]["1"];
  EXPECT_EQ(t["histogram_overflows"], truth["overflows"]);
  // Every overflow is recorded at or above the tool's 1000 us limit, not above slot 693.
  uint64_t at_or_above_limit = 0;
  for (const auto& b : t["histogram_log"]) {
    if (b[1].get<int64_t>() >= 1'000'000) at_or_above_limit += b[2].get<uint64_t>();  // [lo, hi, n]
  }
  EXPECT_EQ(at_or_above_limit, truth["overflows"].get<uint64_t>());
  EXPECT_NE(printed.find("(>= 1000 us)"), std::string::npos) << printed;
  const auto& st = t["stats"];
  EXPECT_EQ(st["stddev_is_lower_bound"], true);
  EXPECT_FALSE(st.contains("mean_is_lower_bound"));  // jitterdebugger's avg is exact
  EXPECT_EQ(st["max_ns"], truth["max_us"].get<int64_t>() * 1000);
  ExpectRelNear(st["stddev_ns"].get<double>(), truth["stddev_lower_bound_ns"].get<double>());
  EXPECT_LE(st["stddev_ns"].get<double>(), truth["true_stddev_ns"].get<double>());
  EXPECT_NE(printed.find("\u2265"), std::string::npos) << printed;
  // CPU 0 had no overflow: exact, no bounds.
  EXPECT_FALSE(result["scenarios"][0]["latency"]["thread"]["0"]["stats"].contains("bounds"));
}

TEST(ImportTruth, CyclictestHistogramTextWithOverflowsGivesBoundsNotExactNumbers) {
  // Real -h and -H files with overflows: the mean is cyclictest's truncated average (a lower
  // bound), the jitter the smallest spread the file allows.
  for (const char* name : {"cyclictest_hist.txt", "cyclictest_H_overflow.txt"}) {
    SCOPED_TRACE(name);
    const auto truth = Truth({"cyclictest-hist", kData + name});
    testutil::TempDir dir;
    MustImportCli({kData + name}, dir.File("o"));
    const auto result = ReadJson(dir.File("o/result.json"));
    const auto& threads = result["scenarios"][0]["latency"]["thread"];
    ASSERT_EQ(threads.size(), truth.size());
    for (const auto& [key, want] : truth.items()) {
      const auto& st = threads[key]["stats"];
      ASSERT_GT(want["overflows"].get<int>(), 0);
      EXPECT_EQ(st["mean_is_lower_bound"], true);
      EXPECT_EQ(st["stddev_is_lower_bound"], true);
      ExpectRelNear(st["mean_ns"].get<double>(), want["mean_ns"].get<double>());
      ExpectRelNear(st["stddev_ns"].get<double>(), want["stddev_lower_bound_ns"].get<double>());
    }
    const auto& row = result["scenarios"][0]["summary"][0];
    EXPECT_EQ(row["mean_is_lower_bound"], true);
    // Two threads whose means are only bounds: the spread between them is not known, so the
    // row's jitter is the threads' own lower bounds pooled, sqrt(sum n_i sd_i^2 / N).
    EXPECT_EQ(row["jitter_stddev_is_lower_bound"], true);
    double within = 0;
    uint64_t n = 0;
    for (const auto& [key, want] : truth.items()) {
      const auto count = threads[key]["stats"]["count"].get<uint64_t>();
      const double sd = want["stddev_lower_bound_ns"].get<double>();
      within += static_cast<double>(count) * sd * sd;
      n += count;
    }
    ExpectRelNear(row["jitter_stddev_ns"].get<double>(),
                  std::sqrt(within / static_cast<double>(n)));
  }
}

// ---- Exact percentiles from samples.bin (issue 10 item 5) ----

/// The summary's percentiles of `row` (JSON, ns) against python's nearest rank over the
/// same values, and none of them a value absent from the data.
void ExpectExactPercentiles(const nlohmann::json& row, const nlohmann::json& truth) {
  EXPECT_EQ(row["percentile_method"], "exact");
  EXPECT_EQ(row["samples"], truth["count"]);
  const std::vector<std::pair<const char*, const char*>> pairs = {
      {"median_ns", "p50"},  {"p95_ns", "p95"},       {"p99_ns", "p99"},
      {"p99.9_ns", "p99.9"}, {"p99.99_ns", "p99.99"}, {"max_ns", "max"}};
  const auto distinct = truth["distinct_ns"].get<std::vector<int64_t>>();
  for (const auto& [field, p] : pairs) {
    EXPECT_EQ(row[field], truth[p]) << field;
    const int64_t v = row[field].get<int64_t>();
    EXPECT_TRUE(std::binary_search(distinct.begin(), distinct.end(), v))
        << field << " = " << v << " ns is not a value of the data";
    EXPECT_EQ(v % 1000, 0) << field << ": whole-microsecond data, whole-microsecond percentile";
  }
}

/// The text table's row for `scenario`: its columns, split on spaces.
std::vector<std::string> TextRow(const std::string& text, const std::string& scenario) {
  std::vector<std::string> cols;
  size_t at = text.find("\n" + scenario + " ");
  if (at == std::string::npos) return cols;
  const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t j = line.find(' ', i);
    cols.push_back(line.substr(i, j == std::string::npos ? std::string::npos : j - i));
    i = j == std::string::npos ? line.size() : j;
  }
  return cols;
}

TEST(ImportExact, CyclictestVerbosePercentilesAreTheSortedDatas) {
  const std::string file = kData + "cyclictest_v.txt";
  const auto truth = Truth({"nearest-rank", "cyclictest-verbose", file});
  testutil::TempDir dir;
  const std::string out = dir.File("o");
  const std::string printed = MustImportCli({file}, out);
  const auto result = ReadJson(out + "/result.json");
  ExpectExactPercentiles(result["scenarios"][0]["summary"][0], truth);
  EXPECT_EQ(result["scenarios"][0]["exact_percentiles"]["p99_ns"], truth["p99"]);
  EXPECT_NE(result["percentile_method"].get<std::string>().find("exact (from the samples log)"),
            std::string::npos);
  const auto summary = ReadJson(out + "/statistical_summary.json");
  ExpectExactPercentiles(summary["scenarios"][0], truth);
  // The bucket edge would not have been a sample here (25 us lies in a 32 ns wide bucket).
  EXPECT_EQ(truth["p50"], 25000);
  // The printed table (us, one decimal): median .. p99.99 columns are the truth.
  const auto cols = TextRow(printed, "cyclictest_v");
  ASSERT_GE(cols.size(), 10u) << printed;
  const char* ps[] = {"p50", "p95", "p99", "p99.9", "p99.99", "max"};
  const size_t at[] = {4, 5, 6, 7, 8, 9};
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(cols[at[k]], fmt::format("{:.1f}", truth[ps[k]].get<double>() / 1000.0)) << ps[k];
  }
  EXPECT_NE(printed.find("percentiles: nearest-rank (rank = ceil(p/100*N)); value = the sample "
                         "of that rank, exact (from the samples log)"),
            std::string::npos)
      << printed;
  // Read back (report, compare), the exact values stay.
  auto suite = results::ReadSuiteResult(out);
  ASSERT_TRUE(suite) << suite.error().message;
  const auto rows = results::SummarizeScenarios(*suite);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].percentiles_exact);
  EXPECT_EQ(rows[0].p99_ns, truth["p99"].get<int64_t>());
}

TEST(ImportExact, ValuesFileWithATailAboveTheExactRange) {
  testutil::TempDir dir;
  const std::string file = dir.File("lat.txt");
  Truth({"make-values", file, "50000", "7"});
  const auto truth = Truth({"nearest-rank", "values-us", file});
  const std::string out = dir.File("o");
  MustImportCli({file}, out);
  const auto summary = ReadJson(out + "/statistical_summary.json");
  ExpectExactPercentiles(summary["scenarios"][0], truth);
  // Without samples.bin the same file gives bucket edges, said so, and at least one of them
  // differs from the sample (so the test above could fail).
  const auto r =
      testutil::RunRtpulse({"import", file, "--no-samples", "--quiet", "--out", dir.File("edges")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto edges = ReadJson(dir.File("edges") + "/statistical_summary.json")["scenarios"][0];
  EXPECT_EQ(edges["percentile_method"], "bucket_upper_edge");
  bool differs = false;
  for (const char* f : {"median_ns", "p95_ns", "p99_ns", "p99.9_ns", "p99.99_ns"}) {
    EXPECT_GE(edges[f].get<int64_t>(), summary["scenarios"][0][f].get<int64_t>()) << f;
    differs |= edges[f] != summary["scenarios"][0][f];
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace rtpulse
