// Runs the built `rtpulse compare` on result folders written here with results::ToJson and
// checks its outputs: the JSON against tests/data/golden/compare/compare.json (the temp
// folder is replaced by "<tmp>"; RTPULSE_UPDATE_GOLDEN=1 rewrites it), the text and HTML by
// content, and every bad-input path's exit code and message. The golden CIs depend on
// libstdc++'s std::binomial_distribution (the seed is fixed; another standard library may
// draw differently and need RTPULSE_UPDATE_GOLDEN=1).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "results/suite_result.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::cli {
namespace {

namespace fs = std::filesystem;
using results::ScenarioResult;
using results::ScenarioStatus;
using results::SuiteResult;

/// A measured scenario: two threads, `n` samples each from an exponential distribution
/// with the given mean plus a floor, and one outlier of `max_ns`.
ScenarioResult Scenario(const std::string& name, double mean_ns, int64_t max_ns, uint64_t seed,
                        int n = 4000) {
  ScenarioResult s;
  s.name = name;
  s.status = ScenarioStatus::kComplete;
  results::LatencyRun run;
  results::PathRun path;
  path.wake = "abs";
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> dist(1.0 / mean_ns);
  for (int t = 0; t < 2; ++t) {
    results::ProbeResult p;
    p.index = t;
    p.cpu = t;
    p.wake = "abs";
    p.interval_ns = 1'000'000;
    for (int i = 0; i < n; ++i) p.histogram.Record(2'000 + static_cast<int64_t>(dist(rng)));
    if (t == 0) p.histogram.Record(max_ns);
    p.missed_activations = static_cast<uint64_t>(t);
    p.skipped_periods = static_cast<uint64_t>(t);
    p.periods_elapsed = p.histogram.count() + p.skipped_periods;
    path.probes.push_back(std::move(p));
  }
  run.paths.push_back(std::move(path));
  s.latency = std::move(run);
  return s;
}

class CompareCliTest : public ::testing::Test {
 protected:
  /// Writes DIR/result.json for a suite holding `scenarios`.
  std::string WriteRun(const std::string& name, std::vector<ScenarioResult> scenarios,
                       const std::string& status = "complete") {
    SuiteResult suite;
    suite.rtpulse_version = "0.0.0-test";
    suite.status = status;
    suite.system = {{"release", "6.1.0-test"}};
    suite.scenarios = std::move(scenarios);
    const std::string dir = tmp_.File(name);
    fs::create_directories(dir);
    std::ofstream(dir + "/result.json") << results::ToJson(suite).dump(1);
    return dir;
  }

  /// Stock: idle ~10 us, light ~20 us; tuned: idle the same distribution (other seed), light
  /// ~5 us and a much smaller max, and a scenario stock does not have.
  void WriteStockAndTuned() {
    stock_ = WriteRun(
        "stock", {Scenario("idle", 10'000, 294'000, 1), Scenario("light", 20'000, 29'400'000, 2)});
    ScenarioResult pending;
    pending.name = "heavy";
    tuned_ = WriteRun("tuned",
                      {Scenario("idle", 10'000, 290'000, 3), Scenario("light", 5'000, 100'000, 4),
                       Scenario("extra", 5'000, 9'000, 5), pending});
  }

  std::string Normalise(std::string text) const {
    for (size_t at; (at = text.find(tmp_.path())) != std::string::npos;) {
      text.replace(at, tmp_.path().size(), "<tmp>");
    }
    return text;
  }

  testutil::TempDir tmp_;
  std::string stock_;
  std::string tuned_;
};

TEST_F(CompareCliTest, JsonMatchesGolden) {
  WriteStockAndTuned();
  const auto r = testutil::RunRtpulse({"compare", stock_, tuned_, "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string actual = Normalise(r.out);
  const std::string golden = std::string(RTPULSE_TEST_DATA) + "/golden/compare/compare.json";
  if (std::getenv("RTPULSE_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(fs::path(golden).parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << golden << ": review the diff before committing";
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with RTPULSE_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, testutil::ReadFile(golden));

  // What the golden file says, spelled out.
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "rtpulse.compare");
  EXPECT_EQ(j["baseline"], "stock");
  ASSERT_EQ(j["scenarios"].size(), 2u);
  const auto& idle = j["scenarios"][0]["comparisons"][0];
  EXPECT_EQ(idle["ratios"]["p99"]["wording"], "no significant difference");
  EXPECT_FALSE(idle["percentile_differences"][1]["significant"].get<bool>());
  const auto& light = j["scenarios"][1]["comparisons"][0];
  EXPECT_EQ(light["ratios"]["max"]["wording"], "294.0 x lower (-100 %)");
  EXPECT_TRUE(light["percentile_differences"][1]["significant"].get<bool>());
  EXPECT_LT(light["ks"]["p_value_nominal"].get<double>(), 1e-10);
  EXPECT_TRUE(light["max_ci"].is_null());
  ASSERT_EQ(j["missing"].size(), 2u);
  EXPECT_EQ(j["missing"][0]["scenario"], "extra");
  EXPECT_EQ(j["missing"][0]["missing_from"], nlohmann::json({"stock"}));
  EXPECT_EQ(j["missing"][1]["scenario"], "heavy");
  EXPECT_EQ(j["missing"][1]["missing_from"], nlohmann::json({"stock", "tuned"}));
}

// docs/compare.md#context: each run's kernel, preemption model, machine and warnings in all
// three outputs, and a side flagged "not idle" marked beside its figures and in the warnings.
TEST_F(CompareCliTest, EachRunsContextAndAFlaggedSideAreShownBesideTheFigures) {
  ScenarioResult busy_idle = Scenario("idle", 10'000, 294'000, 1);
  const std::string not_idle = "idle scenario was not idle: 96 % busy (stress-ng 1234 82 %)";
  busy_idle.warnings = {not_idle};
  SuiteResult stock;
  stock.rtpulse_version = "0.0.0-test";
  stock.status = "complete";
  stock.system = {{"release", "6.1.0-18-amd64"},
                  {"machine", "x86_64"},
                  {"preemption_model", "PREEMPT_DYNAMIC (voluntary)"},
                  {"hypervisor", "KVM"}};
  stock.warnings = {"running in a virtual machine (KVM): the host can steal time"};
  stock.scenarios = {busy_idle};
  SuiteResult rt = stock;
  rt.system = {{"release", "6.6.51-rt43"},
               {"machine", "aarch64"},
               {"preemption_model", "PREEMPT_RT"},
               {"board", "Raspberry Pi 5 Model B Rev 1.0"},
               {"hypervisor", ""}};
  rt.warnings.clear();
  rt.scenarios = {Scenario("idle", 10'000, 290'000, 3)};
  for (const auto& [name, suite] : {std::pair{"stock", stock}, std::pair{"rt", rt}}) {
    fs::create_directories(tmp_.File(name));
    std::ofstream(tmp_.File(name) + "/result.json") << results::ToJson(suite).dump(1);
  }

  const auto text = testutil::RunRtpulse({"compare", tmp_.File("stock"), tmp_.File("rt")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("run stock: kernel 6.1.0-18-amd64 (PREEMPT_DYNAMIC (voluntary)), x86_64, "
                          "virtual machine (KVM); status complete; 1 warning(s):\n"
                          "  warning: running in a virtual machine (KVM): the host can steal "
                          "time\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(
      text.out.find("run rt: kernel 6.6.51-rt43 (PREEMPT_RT), aarch64, Raspberry Pi 5 Model B "
                    "Rev 1.0, no hypervisor detected; status complete; no warnings\n"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  flagged               yes (1)           no\n"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  flagged: stock: " + not_idle + "\n"), std::string::npos) << text.out;

  const auto json =
      testutil::RunRtpulse({"compare", tmp_.File("stock"), tmp_.File("rt"), "--json", "-"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["runs"][0]["preemption_model"], "PREEMPT_DYNAMIC (voluntary)");
  EXPECT_EQ(j["runs"][0]["hypervisor"], "KVM");
  EXPECT_TRUE(j["runs"][0]["board"].is_null()) << "not recorded: null, not \"\"";
  EXPECT_EQ(j["runs"][0]["warnings"], nlohmann::json::array({stock.warnings[0]}));
  EXPECT_EQ(j["runs"][1]["board"], "Raspberry Pi 5 Model B Rev 1.0");
  EXPECT_EQ(j["runs"][1]["machine"], "aarch64");
  const auto& sides = j["scenarios"][0]["runs"];
  EXPECT_EQ(sides[0]["flags"], nlohmann::json::array({not_idle}));
  EXPECT_TRUE(sides[1]["flags"].empty());
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"].dump();
  EXPECT_EQ(j["warnings"][0], "stock's idle is flagged, so are its comparisons: " + not_idle);

  const std::string html = tmp_.File("c.html");
  const auto page =
      testutil::RunRtpulse({"compare", tmp_.File("stock"), tmp_.File("rt"), "--html", html});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const std::string h = testutil::ReadFile(html);
  EXPECT_NE(h.find("kernel 6.6.51-rt43 (PREEMPT_RT), aarch64"), std::string::npos);
  EXPECT_NE(h.find("running in a virtual machine (KVM)"), std::string::npos);
  EXPECT_NE(h.find("<tr><td>flagged</td><td class=\"flag\">yes (1)</td>"), std::string::npos);
  EXPECT_NE(h.find("flagged: stock: idle scenario was not idle: 96 % busy"), std::string::npos);
}

TEST_F(CompareCliTest, TextTableIsTheDefaultAndReproducible) {
  WriteStockAndTuned();
  const auto one = testutil::RunRtpulse({"compare", stock_, tuned_});
  const auto two = testutil::RunRtpulse({"compare", stock_ + "/result.json", tuned_});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(one.out.find("tuned vs stock"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("294.0 x lower (-100 %)"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("no significant difference"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("missing: extra not measured in stock"), std::string::npos);
  EXPECT_NE(one.out.find("autocorrelated"), std::string::npos);
  EXPECT_NE(one.out.find("no CI is given"), std::string::npos);
  // The same seed gives the same CIs; another seed may not.
  const auto seeded = testutil::RunRtpulse({"compare", stock_, tuned_, "--seed", "7"});
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  EXPECT_NE(seeded.out.find("seed 7"), std::string::npos);
  EXPECT_EQ(testutil::RunRtpulse({"compare", stock_, tuned_}).out, one.out);
}

TEST_F(CompareCliTest, LabelsAndThreeRuns) {
  WriteStockAndTuned();
  const std::string third = WriteRun("third", {Scenario("light", 6'000, 4'000, 9)});
  const auto r =
      testutil::RunRtpulse({"compare", stock_, tuned_, third, "--labels", "A,B,C", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& light = j["scenarios"][1];
  EXPECT_EQ(light["scenario"], "light");
  ASSERT_EQ(light["comparisons"].size(), 2u);
  EXPECT_EQ(light["comparisons"][1]["run"], "C");
  EXPECT_EQ(light["comparisons"][1]["baseline"], "A");
  const auto bad = testutil::RunRtpulse({"compare", stock_, tuned_, "--labels", "A"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--labels 'A' names 1 runs but 2 were given"), std::string::npos)
      << bad.err;
}

TEST_F(CompareCliTest, HtmlIsSelfContainedAndHoldsTheTable) {
  WriteStockAndTuned();
  const std::string html = tmp_.File("compare.html");
  const std::string figures = tmp_.File("figures");
  const auto r =
      testutil::RunRtpulse({"compare", stock_, tuned_, "--html", html, "--figures", figures});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = testutil::ReadFile(html);
  EXPECT_NE(page.find("<table>"), std::string::npos);
  EXPECT_NE(page.find("<th>tuned vs stock</th>"), std::string::npos);
  EXPECT_NE(page.find("294.0 x lower (-100 %)"), std::string::npos);
  EXPECT_NE(page.find("<style>"), std::string::npos);
  for (const char* remote :
       {"src=\"http", "href=\"http", "src='http", "href='http", "@import", "url(http"}) {
    EXPECT_EQ(page.find(remote), std::string::npos) << remote;
  }
  for (const char* stem : {"idle_histogram", "idle_exceedance", "light_histogram"}) {
    EXPECT_TRUE(fs::exists(figures + "/" + stem + ".dat")) << stem;
    EXPECT_TRUE(fs::exists(figures + "/" + stem + ".gp")) << stem;
  }
  if (fs::exists(figures + "/idle_histogram.svg")) {
    EXPECT_NE(page.find("<svg"), std::string::npos) << "figures are embedded inline";
  }
}

TEST_F(CompareCliTest, OneScenarioEachIsComparedWhateverTheNamesAndSaysWhichWithWhich) {
  // Two `rtpulse import` folders of differently named files: stock kernel, then RT kernel.
  const std::string stock =
      WriteRun("stock-kernel", {Scenario("cyclictest_stock", 20'000, 294'000, 1)});
  const std::string rt = WriteRun("rt-kernel", {Scenario("cyclictest_rt", 5'000, 100'000, 4)});
  const auto r = testutil::RunRtpulse({"compare", stock, rt, "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["scenarios"].size(), 1u);
  const auto& s = j["scenarios"][0];
  EXPECT_EQ(s["scenario"], "cyclictest_stock vs cyclictest_rt");
  EXPECT_EQ(s["baseline"], "stock-kernel");
  ASSERT_EQ(s["runs"].size(), 2u);
  EXPECT_EQ(s["runs"][0]["run"], "stock-kernel");
  EXPECT_EQ(s["runs"][0]["scenario"], "cyclictest_stock");
  EXPECT_EQ(s["runs"][1]["run"], "rt-kernel");
  EXPECT_EQ(s["runs"][1]["scenario"], "cyclictest_rt");
  // Ground truth of Scenario(): 2 threads x 4000 samples plus the one outlier, which is the max.
  EXPECT_EQ(s["runs"][0]["samples"], 8001);
  EXPECT_EQ(s["runs"][0]["max_ns"], 294'000);
  EXPECT_EQ(s["runs"][1]["samples"], 8001);
  EXPECT_EQ(s["runs"][1]["max_ns"], 100'000);
  // 294000 / 100000 = 2.94, (100000 - 294000) / 294000 = -66 %.
  EXPECT_EQ(s["comparisons"][0]["ratios"]["max"]["wording"], "2.9 x lower (-66 %)");
  const std::string note =
      "scenario names differ, and each run has one scenario, so they are compared with each "
      "other: stock-kernel 'cyclictest_stock' with rt-kernel 'cyclictest_rt'";
  ASSERT_FALSE(s["notes"].empty());
  EXPECT_EQ(s["notes"][0], note);
  EXPECT_TRUE(j["missing"].empty()) << j["missing"].dump();

  const auto text = testutil::RunRtpulse({"compare", stock, rt});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\ncyclictest_stock vs cyclictest_rt\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  note: " + note + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("rt-kernel vs stock-kernel"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("missing:"), std::string::npos) << text.out;
}

TEST_F(CompareCliTest, DefaultLabelsAreTheFolderNamesWithParentsWhenTheyClash) {
  const std::string jan = WriteRun("2026-01/stock", {Scenario("idle", 10'000, 294'000, 1)});
  const std::string feb = WriteRun("2026-02/stock", {Scenario("idle", 10'000, 290'000, 3)});
  const std::string rt = WriteRun("pi5-preempt-rt-6.6-tuned", {Scenario("idle", 5'000, 90'000, 4)});
  const auto j = nlohmann::json::parse(
      testutil::RunRtpulse({"compare", jan + "/result.json", feb + "/", rt, "--json", "-"}).out);
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][0]["label"], "2026-01/stock");
  EXPECT_EQ(j["runs"][1]["label"], "2026-02/stock");
  EXPECT_EQ(j["runs"][2]["label"], "pi5-preempt-rt-6.6-tuned");
  // The same folder twice: nothing tells them apart, so the second gets #2.
  const auto twice = nlohmann::json::parse(
      testutil::RunRtpulse({"compare", rt, rt + "/result.json", "--json", "-"}).out);
  EXPECT_EQ(twice["runs"][1]["label"], "pi5-preempt-rt-6.6-tuned#2");

  // A label longer than the default 12-character column keeps the columns aligned: each
  // label ends where the numbers under it end.
  const auto text = testutil::RunRtpulse({"compare", jan, rt});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::istringstream lines(text.out);
  std::string header;
  std::string samples;
  for (std::string line; std::getline(lines, line);) {
    if (header.empty() && line.find("pi5-preempt-rt-6.6-tuned") != std::string::npos &&
        line.rfind("  ", 0) == 0) {
      header = line;
    }
    if (samples.empty() && line.rfind("  samples", 0) == 0) samples = line;
  }
  ASSERT_FALSE(header.empty()) << text.out;
  ASSERT_FALSE(samples.empty()) << text.out;
  ASSERT_NE(header.find(" stock "), std::string::npos) << header;  // no clash: the folder name
  const size_t jan_end = header.find(" stock ") + std::string(" stock").size();
  const size_t rt_end =
      header.find("pi5-preempt-rt-6.6-tuned") + std::string("pi5-preempt-rt-6.6-tuned").size();
  ASSERT_GE(samples.size(), rt_end) << samples;
  EXPECT_EQ(samples.substr(jan_end - 4, 4), "8001") << header << "\n" << samples;
  EXPECT_EQ(samples.substr(rt_end - 4, 4), "8001") << header << "\n" << samples;
}

// `report` on the same folders: how many files and where, then the page to open, last; the
// paths themselves with --verbose (each one a file the report wrote).
TEST_F(CompareCliTest, ReportSaysHowManyFilesAndEndsWithThePageToOpen) {
  WriteStockAndTuned();
  const auto listed = testutil::RunRtpulse({"report", stock_, "--formats", "svg", "--verbose"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::vector<std::string> paths;
  std::istringstream lines(listed.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(stock_ + "/", 0) == 0) {
      EXPECT_TRUE(fs::is_regular_file(line)) << line;
      paths.push_back(line);
    }
  }
  ASSERT_GT(paths.size(), 3u) << listed.out;
  const std::string page = stock_ + "/report/index.html";
  EXPECT_NE(std::find(paths.begin(), paths.end(), page), paths.end()) << listed.out;

  const auto quiet = testutil::RunRtpulse({"report", stock_, "--formats", "svg"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "wrote " + std::to_string(paths.size()) +
                           " files (figures, tables, the HTML page) under " + stock_ +
                           "; --verbose lists them\nopen " + page + "\n");
  // Without the page, nothing to open.
  const auto no_html = testutil::RunRtpulse({"report", stock_, "--formats", "svg", "--no-html"});
  ASSERT_EQ(no_html.exit_code, 0) << no_html.err;
  EXPECT_EQ(no_html.out.find("open "), std::string::npos) << no_html.out;
}

TEST_F(CompareCliTest, BadInputIsExit2WithTheReason) {
  WriteStockAndTuned();
  auto r = testutil::RunRtpulse({"compare", stock_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("at least two runs (got 1)"), std::string::npos) << r.err;

  r = testutil::RunRtpulse({"compare"});
  EXPECT_EQ(r.exit_code, 2);

  r = testutil::RunRtpulse({"compare", stock_, tmp_.File("nowhere")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;

  const std::string other = WriteRun("other", {Scenario("net", 5'000, 9'000, 6)});
  r = testutil::RunRtpulse({"compare", stock_, other});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no scenario in common"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stock (" + stock_ + ") has idle, light"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("other (" + other + ") has net"), std::string::npos) << r.err;

  r = testutil::RunRtpulse({"compare", stock_, tuned_, "--bootstrap", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--bootstrap 0"), std::string::npos) << r.err;
}

/// Scenario() with a 3.2 ms stall on thread 0 that swallowed three 1 ms periods (each late
/// 2.2, 1.2 and 0.2 ms: docs/latency.md#per-period-statistics) and no other skipped period, so
/// its per-period statistics are known.
ScenarioResult StalledScenario(const std::string& name, uint64_t seed) {
  ScenarioResult s = Scenario(name, 10'000, 294'000, seed);
  auto& probes = s.latency->paths[0].probes;
  probes[0].histogram.Record(3'200'000);
  for (int64_t late : {2'200'000, 1'200'000, 200'000}) probes[0].skipped_histogram.Record(late);
  probes[0].missed_activations = 1;
  probes[0].skipped_periods = 3;
  probes[1].missed_activations = 0;
  probes[1].skipped_periods = 0;
  for (auto& p : probes) p.periods_elapsed = p.histogram.count() + p.skipped_periods;
  return s;
}

TEST_F(CompareCliTest, PerPeriodRowsSitBesideThePerWakeUpOnesAndImportsReadUnknown) {
  ScenarioResult own = StalledScenario("idle", 11);
  ScenarioResult exact = StalledScenario("idle", 12);
  exact.exact_per_period_percentiles =
      results::ExactPercentileValues{9'001, 9'002, 9'003, 9'004, 9'005};
  ScenarioResult imported = StalledScenario("idle", 13);
  for (auto& p : imported.latency->paths[0].probes) p.per_period_unknown = true;
  const std::string a = WriteRun("own", {own});
  const std::string b = WriteRun("exact", {exact});
  const std::string c = WriteRun("imported", {imported});
  const auto r = testutil::RunRtpulse({"compare", a, b, c, "--json", "-", "--bootstrap", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& runs = j["scenarios"][0]["runs"];
  // Hand computation: every wake-up plus the three swallowed periods.
  uint64_t samples = 0;
  int64_t sum = 0;
  for (const auto& p : own.latency->paths[0].probes) {
    samples += p.histogram.count();
    sum += p.histogram.sum();
  }
  const auto& per = runs[0]["per_period"];
  EXPECT_EQ(per["periods"], samples + 3);
  EXPECT_EQ(runs[0]["samples"], samples);
  EXPECT_EQ(per["max_ns"].get<double>(), 3'200'000.0);
  EXPECT_NEAR(
      per["mean_ns"].get<double>(),
      static_cast<double>(sum + 2'200'000 + 1'200'000 + 200'000) / static_cast<double>(samples + 3),
      1e-6);
  EXPECT_GT(per["mean_ns"].get<double>(), runs[0]["mean_ns"].get<double>());
  EXPECT_EQ(per["percentile_method"], "bucket_upper_edge");
  // The exact per-period percentiles of result.json stand in for the bucket edges.
  EXPECT_EQ(runs[1]["per_period"]["percentile_method"], "exact");
  EXPECT_EQ(runs[1]["per_period"]["p50_ns"].get<double>(), 9'001.0);
  EXPECT_EQ(runs[1]["per_period"]["p99_ns"].get<double>(), 9'003.0);
  EXPECT_EQ(runs[1]["per_period"]["p99.9_ns"].get<double>(), 9'004.0);
  EXPECT_EQ(runs[1]["percentile_method"], "bucket_upper_edge");  // per wake-up not exact
  EXPECT_TRUE(runs[2]["per_period"].is_null());
  EXPECT_NE(j["per_period_percentile_method"].get<std::string>().find("for exact idle"),
            std::string::npos)
      << j["per_period_percentile_method"];

  const auto text = testutil::RunRtpulse({"compare", a, b, c, "--bootstrap", "10"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const size_t block = text.out.find("  per period (every period, each skipped one late");
  ASSERT_NE(block, std::string::npos) << text.out;
  EXPECT_LT(text.out.find("  missed/skipped"), block);  // the per-wake-up rows come first
  const size_t periods = text.out.find("  periods ", block);
  ASSERT_NE(periods, std::string::npos);
  const std::string row = text.out.substr(periods, text.out.find('\n', periods) - periods);
  EXPECT_NE(row.find(std::to_string(samples + 3)), std::string::npos) << row;
  EXPECT_NE(row.find("unknown"), std::string::npos) << row;
  const size_t max_row = text.out.find("  max (us)", periods);
  ASSERT_NE(max_row, std::string::npos);
  EXPECT_NE(text.out.substr(max_row, 40).find("3200.00"), std::string::npos)
      << text.out.substr(max_row, 80);
}

}  // namespace
}  // namespace rtpulse::cli
