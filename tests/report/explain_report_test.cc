// The report's "Why was it late" part (report/explain_section.h) on a run folder whose
// result.json carries "explain": the HTML's tables parsed back and compared with result.json
// itself (read as plain JSON here, not through rtpulse's reader), the worst 20 spikes with
// their window links, the text file, the unavailable reason, and no section without explain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/command_runner.h"
#include "report/explain_section.h"
#include "report/report.h"
#include "results/suite_result.h"
#include "support/subprocess.h"

namespace rtpulse::report {
namespace {

using testutil::ReadFile;
using testutil::TempDir;

results::ProbeResult WhyProbe() {
  results::ProbeResult p;
  p.cpu = 1;
  p.tid = 77;
  p.policy = "fifo";
  p.priority = 80;
  p.interval_ns = 1'000'000;
  p.wake = "abs";
  for (int64_t i = 0; i < 500; ++i) p.histogram.Record(3'000 + i * 11);
  p.periods_elapsed = p.histogram.count();
  return p;
}

/// 25 explained spikes of distinct lateness (some equal, to pin the tie order), parts adding
/// up, a cause table, windows under <scenario>/explain/.
results::ExplainResult WhyExplain(const std::string& scenario) {
  results::ExplainResult e;
  e.threshold_ns = 50'000;
  e.active = true;
  e.instance = "rtpulse-1";
  e.events_enabled = {"sched:sched_switch"};
  for (int i = 0; i < 25; ++i) {
    results::SpikeExplanation s;
    s.thread = 0;
    s.cpu = 1;
    s.seq = 100 + static_cast<uint64_t>(i);
    s.expected_ns = 1'000'000'000 + i * 1'000'000;
    // 60 us .. 300 us, with spikes 7 and 8 equal.
    s.latency_ns = 60'000 + ((i * 37) % 25) * 10'001;
    if (i == 8) s.latency_ns = 60'000 + ((7 * 37) % 25) * 10'001;
    const int64_t hog = s.latency_ns * 3 / 4;
    s.parts = {{"thread", "hog 4242 fifo 90", hog, 1},
               {"unaccounted", "unaccounted", s.latency_ns - hog, 1}};
    s.chain = i % 2 == 0 ? "direct" : "deferred";
    s.chain_thread = i % 2 == 0 ? "" : "ktimers/1";
    s.complete = i != 3;
    s.incomplete_reason = i == 3 ? "lost events on cpu 1" : "";
    s.verdict = "+" + std::to_string(s.latency_ns / 1000) + " us: hog <b>";
    s.window_file = scenario + "/explain/spike-" + std::to_string(i) + "-cpu1.txt";
    e.spikes.push_back(s);
  }
  e.spikes_seen = 27;
  e.spikes_explained = 25;
  e.spikes_not_explained = 2;
  int64_t hog_total = 0, un_total = 0, hog_max = 0, un_max = 0;
  for (const auto& s : e.spikes) {
    hog_total += s.parts[0].ns;
    un_total += s.parts[1].ns;
    hog_max = std::max(hog_max, s.parts[0].ns);
    un_max = std::max(un_max, s.parts[1].ns);
  }
  e.causes_by_time = {{"thread", "hog 4242 fifo 90", hog_total, 25, hog_max},
                      {"unaccounted", "unaccounted", un_total, 25, un_max}};
  e.causes_by_count = e.causes_by_time;
  e.cost = results::ExplainCostResult{1000, 4000, 5'000, 9'000, 5'200, 9'500};
  e.notes = {"2 spikes in the cost phase were not explained"};
  return e;
}

results::ScenarioResult WhyScenario(const std::string& name,
                                    std::optional<results::ExplainResult> explain) {
  results::ScenarioResult s;
  s.name = name;
  s.status = results::ScenarioStatus::kComplete;
  results::LatencyRun run;
  results::PathRun path;
  path.wake = "abs";
  path.probes.push_back(WhyProbe());
  run.paths.push_back(path);
  run.explain = std::move(explain);
  s.latency = run;
  return s;
}

bool WhyHaveGnuplot() {
  return !SystemCommandRunner().Find("gnuplot").empty();
}

/// The rows of the HTML table with `id`, each as its cells' data-ns values (or text).
std::vector<std::vector<std::string>> WhyTableRows(const std::string& html, const std::string& id,
                                                   const std::string& row_class) {
  std::vector<std::vector<std::string>> rows;
  const size_t start = html.find("<table id=\"" + id + "\">");
  if (start == std::string::npos) return rows;
  const size_t end = html.find("</table>", start);
  const std::string table = html.substr(start, end - start);
  const std::regex row_re("<tr class=\"" + row_class + "\">(.*?)</tr>");
  const std::regex cell_re("<td[^>]*?(?: data-ns=\"(-?[0-9]+)\")?>(.*?)</td>");
  for (auto r = std::sregex_iterator(table.begin(), table.end(), row_re);
       r != std::sregex_iterator(); ++r) {
    const std::string cells = (*r)[1];
    std::vector<std::string> row;
    for (auto c = std::sregex_iterator(cells.begin(), cells.end(), cell_re);
         c != std::sregex_iterator(); ++c) {
      row.push_back((*c)[1].matched ? (*c)[1].str() : (*c)[2].str());
    }
    rows.push_back(row);
  }
  return rows;
}

/// "123.456" (exact us text) -> 123456 ns.
int64_t WhyNsOfUsText(const std::string& text) {
  const size_t dot = text.find('.');
  return std::stoll(text.substr(0, dot)) * 1000 + std::stoll(text.substr(dot + 1));
}

TEST(ExplainReport, HtmlAndTextCarryResultJsonsNumbers) {
  if (!WhyHaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  results::SuiteResult suite;
  suite.status = "complete";
  suite.scenarios.push_back(WhyScenario("idle", WhyExplain("idle")));
  suite.scenarios.push_back(WhyScenario("plain", std::nullopt));
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/result.json", results::ToJson(suite).dump(1)));
  auto out = WriteReport(dir.path(), {});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(
      std::find(out->written.begin(), out->written.end(), dir.path() + "/tables/why_late.txt"),
      out->written.end());

  // The truth: result.json as plain JSON.
  const auto j = nlohmann::json::parse(ReadFile(dir.path() + "/result.json"));
  const auto& e = j["scenarios"][0]["latency"]["rtpulse"]["explain"];
  ASSERT_TRUE(e.is_object());
  EXPECT_FALSE(j["scenarios"][1]["latency"]["rtpulse"].contains("explain"));

  const std::string html = ReadFile(dir.path() + "/report/index.html");
  ASSERT_NE(html.find("id=\"why-late\""), std::string::npos);
  EXPECT_NE(html.find("id=\"why-late-idle\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"why-late-plain\""), std::string::npos) << "plain ran without explain";
  EXPECT_EQ(html.find("hog <b>"), std::string::npos) << "verdicts are escaped";

  for (const char* table : {"causes_by_time", "causes_by_count"}) {
    const std::string id = std::string("why-late-idle-") +
                           (std::string(table) == "causes_by_time" ? "by-time" : "by-count");
    const auto rows = WhyTableRows(html, id, "cause");
    ASSERT_EQ(rows.size(), e[table].size()) << id;
    for (size_t i = 0; i < rows.size(); ++i) {
      ASSERT_EQ(rows[i].size(), 5u);
      EXPECT_EQ(rows[i][0], e[table][i]["kind"]);
      EXPECT_EQ(rows[i][1], e[table][i]["name"]);
      EXPECT_EQ(std::stoll(rows[i][2]), e[table][i]["total_ns"].get<int64_t>());
      EXPECT_EQ(std::stoull(rows[i][3]), e[table][i]["spikes"].get<uint64_t>());
      EXPECT_EQ(std::stoll(rows[i][4]), e[table][i]["max_ns"].get<int64_t>());
    }
  }

  // The worst 20 by lateness, computed here from the JSON (stable: earlier first on ties).
  std::vector<nlohmann::json> spikes(e["spikes"].begin(), e["spikes"].end());
  std::stable_sort(spikes.begin(), spikes.end(), [](const auto& a, const auto& b) {
    return a["latency_ns"].template get<int64_t>() > b["latency_ns"].template get<int64_t>();
  });
  spikes.resize(20);
  const auto rows = WhyTableRows(html, "why-late-idle-spikes", "spike");
  ASSERT_EQ(rows.size(), 20u);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 7u);
    EXPECT_EQ(std::stoull(rows[i][2]), spikes[i]["seq"].get<uint64_t>()) << i;
    EXPECT_EQ(std::stoll(rows[i][3]), spikes[i]["latency_ns"].get<int64_t>()) << i;
    const std::string file = spikes[i]["window_file"];
    EXPECT_EQ(rows[i][6], "<a href=\"../" + file + "\">" + file + "</a>") << i;
  }
  EXPECT_NE(html.find("(incomplete: lost events on cpu 1)"), std::string::npos);
  EXPECT_NE(html.find("27 spikes, 25 explained, 2 not explained"), std::string::npos);
  EXPECT_NE(html.find("p99 9.500 us with it (4000 samples)"), std::string::npos);

  // The text file: the same tables and spikes.
  const std::string text = ReadFile(dir.path() + "/tables/why_late.txt");
  EXPECT_NE(text.find("Why was it late: idle"), std::string::npos);
  EXPECT_EQ(text.find("Why was it late: plain"), std::string::npos);
  const std::regex cause_re(
      R"(\n  (\S+) +(-?[0-9]+\.[0-9]{3}) +([0-9]+) +(-?[0-9]+\.[0-9]{3})  ([^\n]+))");
  std::vector<std::smatch> causes;
  for (auto m = std::sregex_iterator(text.begin(), text.end(), cause_re);
       m != std::sregex_iterator(); ++m) {
    causes.push_back(*m);
  }
  ASSERT_EQ(causes.size(), e["causes_by_time"].size() + e["causes_by_count"].size());
  for (size_t i = 0; i < e["causes_by_time"].size(); ++i) {
    EXPECT_EQ(causes[i][1].str(), e["causes_by_time"][i]["kind"]);
    EXPECT_EQ(WhyNsOfUsText(causes[i][2]), e["causes_by_time"][i]["total_ns"].get<int64_t>());
    EXPECT_EQ(WhyNsOfUsText(causes[i][4]), e["causes_by_time"][i]["max_ns"].get<int64_t>());
    EXPECT_EQ(causes[i][5].str(), e["causes_by_time"][i]["name"]);
  }
  const std::regex spike_re(R"(\n  T:([0-9]+) cpu ([0-9]+) seq ([0-9]+) (-?[0-9]+\.[0-9]{3}) us)");
  std::vector<std::smatch> listed;
  for (auto m = std::sregex_iterator(text.begin(), text.end(), spike_re);
       m != std::sregex_iterator(); ++m) {
    listed.push_back(*m);
  }
  ASSERT_EQ(listed.size(), 20u);
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(std::stoull(listed[i][3]), spikes[i]["seq"].get<uint64_t>()) << i;
    EXPECT_EQ(WhyNsOfUsText(listed[i][4]), spikes[i]["latency_ns"].get<int64_t>()) << i;
  }
  EXPECT_NE(text.find("window: " + spikes[0]["window_file"].get<std::string>()), std::string::npos);
}

TEST(ExplainReport, AnInactiveTraceShowsItsReasonAndNoTables) {
  if (!WhyHaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  results::ExplainResult e;
  e.threshold_ns = 100'000;
  e.active = false;
  e.unavailable_reason = "no tracefs at /nonexistent: mount it <here>";
  e.spikes_seen = 3;
  e.spikes_not_explained = 3;
  results::SuiteResult suite;
  suite.status = "complete";
  suite.scenarios.push_back(WhyScenario("idle", e));
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/result.json", results::ToJson(suite).dump(1)));
  ReportOptions options;
  options.out_dir = dir.path() + "/elsewhere";
  auto out = WriteReport(dir.path(), options);
  ASSERT_TRUE(out) << out.error().message;
  const std::string html = ReadFile(dir.path() + "/elsewhere/report/index.html");
  EXPECT_NE(html.find("The kernel trace did not run: no tracefs at /nonexistent: mount it "
                      "&lt;here&gt;"),
            std::string::npos);
  EXPECT_NE(html.find("3 spikes, 0 explained, 3 not explained"), std::string::npos);
  EXPECT_EQ(html.find("id=\"why-late-idle-by-time\""), std::string::npos);
  const std::string text = ReadFile(dir.path() + "/elsewhere/tables/why_late.txt");
  EXPECT_NE(text.find("the kernel trace did not run: no tracefs at /nonexistent"),
            std::string::npos);
}

TEST(ExplainReport, WindowLinksFollowTheRunFolderFromAnotherOutDir) {
  results::SuiteResult suite;
  suite.scenarios.push_back(WhyScenario("idle", WhyExplain("idle")));
  const HtmlSection section = ExplainHtmlSection(suite, "../../run/");
  EXPECT_NE(section.html.find("href=\"../../run/idle/explain/spike-2-cpu1.txt\""),
            std::string::npos);
  // Spike 2 is the latest of all (so among the worst 20).
  suite.scenarios[0].latency->explain->spikes[2].window_file = "/tmp/w/spike-1.txt";
  EXPECT_NE(ExplainHtmlSection(suite, "../").html.find("href=\"/tmp/w/spike-1.txt\""),
            std::string::npos);
}

TEST(ExplainReport, AFolderWithoutExplainHasNoSection) {
  if (!WhyHaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  results::SuiteResult suite;
  suite.status = "complete";
  suite.scenarios.push_back(WhyScenario("idle", std::nullopt));
  EXPECT_FALSE(HasExplain(suite));
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/result.json", results::ToJson(suite).dump(1)));
  auto out = WriteReport(dir.path(), {});
  ASSERT_TRUE(out) << out.error().message;
  const std::string html = ReadFile(dir.path() + "/report/index.html");
  EXPECT_EQ(html.find("why-late"), std::string::npos);
  EXPECT_EQ(
      std::find(out->written.begin(), out->written.end(), dir.path() + "/tables/why_late.txt"),
      out->written.end());
}

}  // namespace
}  // namespace rtpulse::report
