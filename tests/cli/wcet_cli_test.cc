// Runs the built `rtpulse wcet` on a run folder written here (result.json + samples.bin), so
// it is hermetic and fast; wcet_e2e_test does the same on a real `suite --samples` run.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "measure/sample_log.h"
#include "results/wcet_file.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

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
  // 60000 samples support p >= 10^-2 / 60000 = 1.67e-7: 1e-6 is reported with its interval,
  // 1e-7 and beyond (1e-12 used to be printed) are refused and stay, marked, in raw_fit.
  EXPECT_TRUE(rep["pot"]["trusted"].get<bool>()) << rep["pot"]["refusal"];
  EXPECT_NEAR(rep["pot"]["min_probability"].get<double>(), 1e-2 / 60'000, 1e-20);
  EXPECT_TRUE(rep["pot"]["levels"][0]["ci_high_ns"].is_number());
  EXPECT_TRUE(rep["pot"]["levels"][1]["estimate_ns"].is_null());
  EXPECT_EQ(rep["pot"]["levels"][1]["refusal"],
            "beyond the supported range: p < 1.7e-07 (more than 2 orders of magnitude below 1/n)");
  EXPECT_TRUE(rep["pot"]["levels"][6]["ci_high_ns"].is_null());
  EXPECT_TRUE(rep["pot"]["levels"][6]["refusal"].is_string());
  EXPECT_TRUE(rep["pot"]["raw_fit"]["untrusted"].get<bool>());
  EXPECT_TRUE(rep["pot"]["raw_fit"]["levels"][6]["ci_high_ns"].is_number());
  EXPECT_TRUE(rep["block_maxima"]["levels"][0]["ci_low_ns"].is_number());
  EXPECT_EQ(rep["checks"].size(), 4u);
  EXPECT_EQ(rep["pot"]["diagnostics"].size(), 11u);
  EXPECT_TRUE(rep.contains("warnings"));
  EXPECT_NE(r.err.find("not guarantees"), std::string::npos) << "table goes to stderr";
  EXPECT_EQ(nlohmann::json::parse(testutil::ReadFile(dir.File("wcet/wcet.json")))["scenarios"],
            j["scenarios"]);
  // The file's reader takes what the command wrote and gives the same document back.
  auto read = results::ReadWcetFile(dir.File("wcet/wcet.json"));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->skipped_scenarios, std::vector<std::string>{"busy"});
  ASSERT_EQ(read->scenarios.size(), 1u);
  EXPECT_EQ(read->scenarios[0].threads, 2u);
  EXPECT_EQ(results::ToJson(*read),
            nlohmann::json::parse(testutil::ReadFile(dir.File("wcet/wcet.json"))));
  EXPECT_TRUE(fs::exists(dir.File("wcet/idle/exceedance.dat")));
  EXPECT_TRUE(fs::exists(dir.File("wcet/idle/exceedance.gp")));
}

// wcet.json's plot object (docs/wcet.md): where the files are and whether the SVG was
// rendered, with a note instead when gnuplot is not there.
TEST(WcetCommandTest, PlotObjectNamesTheFilesAndSaysWhetherItWasRendered) {
  testutil::TempDir dir;
  WriteRun(dir.path(), true);
  const std::string folder = dir.File("wcet/idle");
  const nlohmann::json files = {{"data", folder + "/exceedance.dat"},
                                {"script", folder + "/exceedance.gp"}};
  // Without gnuplot on PATH: the data and script stay, with the way to render them.
  testutil::ProcessOptions no_gnuplot;
  no_gnuplot.extra_env = {"PATH=/nonexistent"};
  const auto bare = RunRtpulse({"wcet", dir.path(), "--json", "-", "--bootstrap", "0"}, no_gnuplot);
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  nlohmann::json expected = files;
  expected["rendered"] = nullptr;
  expected["note"] = "gnuplot not found; not rendered (run `gnuplot exceedance.gp` there)";
  EXPECT_EQ(nlohmann::json::parse(bare.out)["scenarios"][0]["plot"], expected);
  EXPECT_FALSE(fs::exists(folder + "/exceedance.svg"));
  if (!fs::exists("/usr/bin/gnuplot")) GTEST_SKIP() << "gnuplot-nox is not installed";
  // With it: the SVG, and no note.
  const auto drawn = RunRtpulse({"wcet", dir.path(), "--json", "-", "--bootstrap", "0"});
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  expected = files;
  expected["rendered"] = folder + "/exceedance.svg";
  EXPECT_EQ(nlohmann::json::parse(drawn.out)["scenarios"][0]["plot"], expected);
  EXPECT_NE(testutil::ReadFile(folder + "/exceedance.svg").find("<svg"), std::string::npos);
}

TEST(WcetCommandTest, TextTableAndSameSeedSameResult) {
  testutil::TempDir dir;
  WriteRun(dir.path(), true);
  const auto a = RunRtpulse(
      {"wcet", dir.path(), "--bootstrap", "10", "--block", "500", "--threshold-quantile", "0.98"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("scenario idle"), std::string::npos);
  EXPECT_NE(a.out.find("1e-12"), std::string::npos);
  EXPECT_NE(a.out.find("beyond supported range"), std::string::npos);
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

/// Runs a python3 script from tests/data/wcet, returning its stdout.
std::string Python(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/python3"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = testutil::RunProcess(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

const std::string kWcetData = std::string(RTPULSE_TEST_DATA) + "/wcet/";

// Issue 10 item 6: 10,000 heavy-tailed (xi ~ 0.83), non-stationary (trend, growing burst rate)
// samples used to print minutes at 1e-12 and intervals with a dozen digits. Now every
// estimate is refused, with the failed conditions named, and the model kept in raw_fit.
TEST(WcetCommandTest, HeavyTailedNonStationaryRunGetsNoEstimate) {
  testutil::TempDir dir;
  const std::string values = dir.File("heavy.txt");
  Python({kWcetData + "heavy_nonstationary.py", values, "10000", "10"});
  const auto imported =
      RunRtpulse({"import", values, "--format", "values", "--out", dir.File("run")});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const auto r = RunRtpulse({"wcet", dir.File("run"), "--json", "-", "--bootstrap", "50"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rep = nlohmann::json::parse(r.out)["scenarios"][0]["report"];
  const double threshold = rep["pot"]["threshold_ns"].get<double>();
  const auto truth = nlohmann::json::parse(
      Python({kWcetData + "tail_checks.py", values, fmt::format("{:.17g}", threshold)}));

  EXPECT_EQ(rep["samples"], truth["samples"]);
  EXPECT_EQ(rep["block_maxima"]["blocks"], truth["blocks"]);
  EXPECT_EQ(rep["pot"]["exceedances"], truth["exceedances"]);
  // The checks that refuse, against the formulas in python.
  std::map<std::string, nlohmann::json> checks;
  for (const auto& c : rep["checks"]) checks[c["name"].get<std::string>()] = c;
  EXPECT_NEAR(checks["extremal-index"]["statistic"].get<double>(),
              truth["extremal_index"].get<double>(), 1e-12);
  EXPECT_NEAR(checks["stationarity"]["statistic"].get<double>(),
              truth["stationarity_z"].get<double>(), 1e-9);
  EXPECT_NEAR(checks["stationarity"]["p_value"].get<double>(),
              truth["stationarity_p"].get<double>(), 1e-3 * truth["stationarity_p"].get<double>());
  ASSERT_LT(truth["extremal_index"].get<double>(), 0.7);
  ASSERT_LT(truth["stationarity_p"].get<double>(), 0.05 / 3);
  ASSERT_LT(truth["blocks"].get<int>(), 20);

  const std::string stationarity = fmt::format("stationarity check failed (p = {:.3g} < 0.0167)",
                                               truth["stationarity_p"].get<double>());
  const std::string clusters =
      fmt::format("extremal-index check failed ({:.3g} < 0.7: exceedances cluster)",
                  truth["extremal_index"].get<double>());
  const std::string blocks = fmt::format("only {} blocks of 1000 (an estimate needs at least 20)",
                                         truth["blocks"].get<int>());
  EXPECT_EQ(rep["pot"]["refusal"], clusters + "; " + stationarity);
  EXPECT_EQ(rep["block_maxima"]["refusal"], blocks + "; " + stationarity);
  for (const char* method : {"pot", "block_maxima"}) {
    const auto& m = rep[method];
    EXPECT_FALSE(m["trusted"].get<bool>()) << method;
    ASSERT_EQ(m["levels"].size(), 7u) << method;
    for (const auto& l : m["levels"]) {
      EXPECT_TRUE(l["estimate_ns"].is_null()) << method << l;
      EXPECT_TRUE(l["ci_low_ns"].is_null()) << method << l;
      EXPECT_TRUE(l["ci_high_ns"].is_null()) << method << l;
      EXPECT_EQ(l["refusal"], "no trustworthy estimate: " + m["refusal"].get<std::string>());
    }
    // The model's numbers, for experts, marked.
    EXPECT_TRUE(m["raw_fit"]["untrusted"].get<bool>()) << method;
    EXPECT_EQ(m["raw_fit"]["reason"],
              "no trustworthy estimate: " + m["refusal"].get<std::string>());
    EXPECT_TRUE(m["raw_fit"]["levels"][6]["estimate_ns"].is_number()) << method;
    EXPECT_NEAR(m["min_probability"].get<double>(),
                truth[std::string(method) == "pot" ? "pot_min_probability" : "bm_min_probability"]
                    .get<double>(),
                1e-20);
  }
  // The raw POT model at 1e-12 is the old output's absurd number: tens of minutes.
  EXPECT_GT(rep["pot"]["raw_fit"]["levels"][6]["estimate_ns"].get<double>(), 60e9);

  // Text (stderr with --json -): the refusal in every cell and named, no number anywhere in
  // the table, no run of 8 digits anywhere in the report.
  const std::string& text = r.err;
  EXPECT_NE(text.find("  POT: no trustworthy estimate: " + clusters + "; " + stationarity + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("  Block maxima: no trustworthy estimate: " + blocks + "; " + stationarity + "\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("Supported range per activation: POT none (no trustworthy estimate), block "
                      "maxima none (no trustworthy estimate)"),
            std::string::npos)
      << text;
  std::istringstream lines(text);
  std::string row;
  int rows = 0;
  while (std::getline(lines, row)) {
    if (row.find(dir.path()) != std::string::npos) continue;  // paths may hold digits
    EXPECT_FALSE(std::regex_search(row, std::regex("[0-9]{8}"))) << row;
    if (!std::regex_search(row, std::regex("^ +1e-(0[6-9]|1[0-2])  "))) continue;
    ++rows;
    EXPECT_EQ(row.substr(14).find_first_of("0123456789"), std::string::npos) << row;
    EXPECT_NE(row.find("no trustworthy estimate"), row.rfind("no trustworthy estimate")) << row;
  }
  EXPECT_EQ(rows, 7) << text;
  // Nothing reported, so the plot marks no supported range.
  const std::string gp = testutil::ReadFile(dir.File("run/wcet/heavy/exceedance.gp"));
  EXPECT_NE(gp.find("set yrange"), std::string::npos);
  EXPECT_EQ(gp.find("supported range"), std::string::npos) << gp;
}

// The other side of the rule: 100,000 independent exponential samples. 1e-6 and 1e-7 (the
// limit 10^-2 / 1e5) are printed, near the truth python computes, within 4 standard
// deviations of the estimators (python, from their asymptotic variances); 1e-8 and beyond are
// refused.
TEST(WcetCommandTest, WellBehavedRunIsReportedWithinTheRangeAndRefusedBeyond) {
  testutil::TempDir dir;
  const std::string values = dir.File("exp.txt");
  const auto truth = nlohmann::json::parse(Python({kWcetData + "exponential.py", values, "100000",
                                                   "3", "0.01", "1000", "1e-6", "1e-7", "1e-8"}));
  ASSERT_EQ(
      RunRtpulse({"import", values, "--format", "values", "--out", dir.File("run")}).exit_code, 0);
  const auto r = RunRtpulse({"wcet", dir.File("run"), "--json", "-", "--bootstrap", "100",
                             "--threshold-quantile", "0.99"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rep = nlohmann::json::parse(r.out)["scenarios"][0]["report"];
  ASSERT_EQ(rep["samples"], 100'000);
  for (const char* method : {"pot", "block_maxima"}) {
    const auto& m = rep[method];
    ASSERT_TRUE(m["trusted"].get<bool>()) << method << " " << m["refusal"];
    EXPECT_TRUE(m["refusal"].is_null());
    EXPECT_NEAR(m["min_probability"].get<double>(), truth["min_probability"].get<double>(), 1e-20);
    ASSERT_EQ(m["levels"].size(), 7u);
    for (size_t k = 0; k < 2; ++k) {
      const auto& l = m["levels"][k];
      const auto& t = truth["levels"][k];
      ASSERT_EQ(l["probability"], t["probability"]);
      const double sd = t[std::string(method) == "pot" ? "pot_relative_sd" : "gumbel_relative_sd"];
      const double want = t["truth_ns"].get<double>();
      const double got = l["estimate_ns"].get<double>();
      EXPECT_LT(std::fabs(got - want) / want, 4 * sd) << method << " p " << t["probability"];
      EXPECT_TRUE(l["refusal"].is_null());
      EXPECT_LT(l["ci_low_ns"].get<double>(), got);
      EXPECT_GT(l["ci_high_ns"].get<double>(), got);
      // The table prints the same number (us, one decimal).
      EXPECT_NE(r.err.find(fmt::format("{:.1f} [{:.1f}, {:.1f}]", got / 1e3,
                                       l["ci_low_ns"].get<double>() / 1e3,
                                       l["ci_high_ns"].get<double>() / 1e3)),
                std::string::npos)
          << method << "\n"
          << r.err;
    }
    for (size_t k = 2; k < 7; ++k) {
      const auto& l = m["levels"][k];
      EXPECT_TRUE(l["estimate_ns"].is_null()) << method << k;
      EXPECT_EQ(
          l["refusal"],
          "beyond the supported range: p < 1e-07 (more than 2 orders of magnitude below 1/n)");
    }
    EXPECT_TRUE(m["raw_fit"]["untrusted"].get<bool>());
    EXPECT_TRUE(m["raw_fit"]["levels"][2]["estimate_ns"].is_number());
  }
  EXPECT_NE(r.err.find("Supported range per activation: POT p >= 1e-07, block maxima p >= 1e-07"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("no trustworthy estimate"), std::string::npos) << r.err;
  std::istringstream lines(r.err);
  std::string row;
  int beyond = 0;
  while (std::getline(lines, row)) {
    if (!std::regex_search(row, std::regex("^ +1e-(0[89]|1[0-2])  "))) continue;
    EXPECT_EQ(row.substr(14).find_first_of("0123456789"), std::string::npos) << row;
    EXPECT_NE(row.find("beyond supported range"), row.rfind("beyond supported range")) << row;
    ++beyond;
  }
  EXPECT_EQ(beyond, 5) << r.err;
  // The plot marks where the supported range ends.
  const std::string gp = testutil::ReadFile(dir.File("run/wcet/exp/exceedance.gp"));
  EXPECT_NE(gp.find(fmt::format("supported range ends (p = {:.3g})",
                                truth["min_probability"].get<double>())),
            std::string::npos)
      << gp;
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

namespace rtpulse::cli {
namespace {

/// A one-scenario run whose samples.bin holds `records` in the given file order.
void WriteRunWithRecords(const std::string& dir,
                         const std::vector<measure::SampleRecord>& records) {
  fs::create_directories(dir + "/idle");
  nlohmann::json result = {
      {"schema", "rtpulse.suite"},
      {"schema_version", 1},
      {"status", "complete"},
      {"scenarios",
       {{{"name", "idle"}, {"status", "complete"}, {"samples_file", "idle/samples.bin"}}}}};
  std::ofstream(dir + "/result.json") << result.dump(1);
  auto sink = measure::OpenSamplesFile(dir + "/idle/samples.bin", {0, 1'000'000'000});
  ASSERT_TRUE(sink) << sink.error().message;
  ASSERT_TRUE((*sink)->Write(records.data(), records.size()));
  ASSERT_TRUE((*sink)->Finish(0, false));
}

TEST(WcetCommandTest, DeadlineOrderIsTheSameWhateverTheFileOrder) {
  // Three threads with equal deadlines (ties go to the lower thread), written three ways: in
  // batches of 700 per thread (the streaming merge), one thread after the other (the merge
  // with the largest skew) and backwards (deadlines going back: the in-memory sort). The
  // series, and so every number of the analysis, must be the same.
  std::mt19937_64 rng(9);
  std::vector<std::vector<measure::SampleRecord>> by_thread(3);
  for (uint64_t seq = 0; seq < 12'000; ++seq) {
    for (uint16_t thread = 0; thread < 3; ++thread) {
      measure::SampleRecord r{};
      r.seq = seq;
      r.thread = thread;
      r.expected_ns = 1'000'000'000 + static_cast<int64_t>(seq) * 1'000'000;
      r.actual_ns = r.expected_ns + 1000 + static_cast<int64_t>(rng() % 50'000);
      by_thread[thread].push_back(r);
    }
  }
  std::vector<measure::SampleRecord> batches;
  for (size_t from = 0; from < 12'000; from += 700) {
    for (const auto& t : by_thread) {
      for (size_t i = from; i < std::min<size_t>(from + 700, t.size()); ++i)
        batches.push_back(t[i]);
    }
  }
  std::vector<measure::SampleRecord> serial;
  for (const auto& t : by_thread) serial.insert(serial.end(), t.begin(), t.end());
  std::vector<measure::SampleRecord> backwards(serial.rbegin(), serial.rend());
  testutil::TempDir dir;
  std::vector<nlohmann::json> reports;
  for (const auto* records : {&batches, &serial, &backwards}) {
    const std::string run = dir.File("run" + std::to_string(reports.size()));
    WriteRunWithRecords(run, *records);
    const auto r = RunRtpulse({"wcet", run, "--json", "-", "--bootstrap", "10"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["scenarios"][0]["threads"], 3);
    reports.push_back(doc["scenarios"][0]["report"]);
  }
  EXPECT_EQ(reports[0]["samples"], 36'000);
  EXPECT_EQ(reports[0], reports[1]);
  EXPECT_EQ(reports[0], reports[2]);
}

}  // namespace
}  // namespace rtpulse::cli
