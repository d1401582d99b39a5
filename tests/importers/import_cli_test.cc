// Runs the built `rtpulse import` on the real-tool fixtures and reads the result back.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "results/suite_reader.h"
#include "results/suite_result.h"
#include "support/subprocess.h"

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

}  // namespace
}  // namespace rtpulse
