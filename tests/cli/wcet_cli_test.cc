// Runs the built `rtpulse wcet` on a run folder written here (result.json + samples.bin), so
// it is hermetic and fast; wcet_e2e_test does the same on a real `suite --samples` run.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "measure/sample_log.h"
#include "support/subprocess.h"

namespace rtpulse::cli {
namespace {

namespace fs = std::filesystem;
using testutil::RunRtpulse;

/// A suite run folder: scenario `idle` has 2 threads x 30000 samples, `busy` has none.
void WriteRun(const std::string& dir, bool with_samples) {
  fs::create_directories(dir + "/idle");
  nlohmann::json result = {{"schema", "rtpulse.suite"},
                           {"schema_version", 1},
                           {"status", "complete"},
                           {"scenarios",
                            {{{"name", "idle"},
                              {"status", "complete"},
                              {"samples_file", with_samples ? "idle/samples.bin" : ""}},
                             {{"name", "busy"}, {"status", "complete"}}}}};
  std::ofstream(dir + "/result.json") << result.dump(1);
  if (!with_samples) return;
  auto sink = measure::OpenSamplesFile(dir + "/idle/samples.bin", {0, 1'000'000'000});
  ASSERT_TRUE(sink) << sink.error().message;
  std::mt19937_64 rng(5);
  std::vector<measure::SampleRecord> records;
  for (uint64_t seq = 0; seq < 30'000; ++seq) {
    for (uint16_t thread = 0; thread < 2; ++thread) {
      const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
      measure::SampleRecord r{};
      r.seq = seq;
      r.thread = thread;
      r.cpu = thread;
      r.expected_ns = 1'000'000'000 + static_cast<int64_t>(seq) * 1'000'000;
      r.actual_ns = r.expected_ns + static_cast<int64_t>(2000.0 * std::pow(u, -0.2));
      records.push_back(r);
    }
  }
  ASSERT_TRUE((*sink)->Write(records.data(), records.size()));
  ASSERT_TRUE((*sink)->Finish(0, false));
}

TEST(WcetCommandTest, WritesJsonWithEveryFieldAndTheDisclaimer) {
  testutil::TempDir dir;
  WriteRun(dir.path(), true);
  const auto r =
      RunRtpulse({"wcet", dir.path(), "--json", "-", "--bootstrap", "20", "--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "rtpulse.wcet");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_NE(j["disclaimer"].get<std::string>().find("not guarantees"), std::string::npos);
  EXPECT_EQ(j["skipped_scenarios"], nlohmann::json::array({"busy"}));
  ASSERT_EQ(j["scenarios"].size(), 1u);
  const auto& s = j["scenarios"][0];
  EXPECT_EQ(s["scenario"], "idle");
  EXPECT_EQ(s["threads"], 2);
  for (const char* key : {"samples_file", "order", "dropped", "input_warnings", "plot", "report"}) {
    EXPECT_TRUE(s.contains(key)) << key;
  }
  const auto& rep = s["report"];
  EXPECT_EQ(rep["samples"], 60'000);
  EXPECT_TRUE(rep["pot"]["ok"]);
  EXPECT_TRUE(rep["block_maxima"]["ok"]);
  EXPECT_EQ(rep["block_maxima"]["blocks"], 60);
  EXPECT_EQ(rep["pot"]["levels"].size(), 7u);
  EXPECT_EQ(rep["pot"]["levels"][0]["probability"], 1e-6);
  EXPECT_TRUE(rep["pot"]["levels"][6]["ci_high_ns"].is_number());
  EXPECT_TRUE(rep["block_maxima"]["levels"][0]["ci_low_ns"].is_number());
  EXPECT_EQ(rep["checks"].size(), 4u);
  EXPECT_EQ(rep["pot"]["diagnostics"].size(), 11u);
  EXPECT_TRUE(rep.contains("warnings"));
  EXPECT_NE(r.err.find("not guarantees"), std::string::npos) << "table goes to stderr";
  EXPECT_EQ(nlohmann::json::parse(testutil::ReadFile(dir.File("wcet/wcet.json")))["scenarios"],
            j["scenarios"]);
  EXPECT_TRUE(fs::exists(dir.File("wcet/idle/exceedance.dat")));
  EXPECT_TRUE(fs::exists(dir.File("wcet/idle/exceedance.gp")));
}

TEST(WcetCommandTest, TextTableAndSameSeedSameResult) {
  testutil::TempDir dir;
  WriteRun(dir.path(), true);
  const auto a = RunRtpulse(
      {"wcet", dir.path(), "--bootstrap", "10", "--block", "500", "--threshold-quantile", "0.98"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("scenario idle"), std::string::npos);
  EXPECT_NE(a.out.find("1e-12"), std::string::npos);
  EXPECT_NE(a.out.find("NOTE:"), std::string::npos);
  const auto first = nlohmann::json::parse(testutil::ReadFile(dir.File("wcet/wcet.json")));
  EXPECT_EQ(first["scenarios"][0]["report"]["pot"]["threshold_quantile"], 0.98);
  EXPECT_EQ(first["scenarios"][0]["report"]["block_maxima"]["blocks"], 120);
  ASSERT_EQ(RunRtpulse({"wcet", dir.path(), "--bootstrap", "10", "--block", "500",
                        "--threshold-quantile", "0.98"})
                .exit_code,
            0);
  const auto second = nlohmann::json::parse(testutil::ReadFile(dir.File("wcet/wcet.json")));
  EXPECT_EQ(first["scenarios"], second["scenarios"]);
}

TEST(WcetCommandTest, MissingSamplesIsAUsageError) {
  testutil::TempDir dir;
  WriteRun(dir.path(), false);
  const auto r = RunRtpulse({"wcet", dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--samples"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.File("wcet")));

  testutil::TempDir with;
  WriteRun(with.path(), true);
  const auto busy = RunRtpulse({"wcet", with.path(), "--scenario", "busy"});
  EXPECT_EQ(busy.exit_code, 2);
  EXPECT_NE(busy.err.find("re-run the suite with --samples"), std::string::npos) << busy.err;
}

TEST(WcetCommandTest, BadUsage) {
  testutil::TempDir dir;
  WriteRun(dir.path(), true);
  const auto typo = RunRtpulse({"wcet", dir.path(), "--scenario", "idel"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("Did you mean 'idle'"), std::string::npos) << typo.err;
  EXPECT_EQ(RunRtpulse({"wcet", dir.path(), "--threshold-quantile", "1.5"}).exit_code, 2);
  EXPECT_EQ(RunRtpulse({"wcet", dir.path(), "--block", "2"}).exit_code, 2);
  EXPECT_EQ(RunRtpulse({"wcet", dir.File("nothing-here")}).exit_code, 2);
}

}  // namespace
}  // namespace rtpulse::cli
