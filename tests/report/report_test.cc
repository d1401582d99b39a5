// rtpulse report on a synthesised, deterministic run: golden .dat/.gp/.tex files, the HTML's
// content and escaping, and the page rendered by headless Chromium.
//
// Regenerate the golden files after an intended change (the test then reports SKIPPED, since
// it compared nothing):
//   RTPULSE_UPDATE_GOLDEN=1 build/tests/report/report_test --gtest_filter='*Golden*'
#include "report/report.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/atomic_file.h"
#include "report/html_page.h"
#include "report/latex_table.h"
#include "report/run_figures.h"
#include "results/suite_result.h"
#include "support/subprocess.h"

namespace rtpulse::report {
namespace {

using testutil::ReadFile;
using testutil::RunProcess;
using testutil::TempDir;

const std::string kGolden = std::string(RTPULSE_TEST_DATA) + "/golden/report";

results::ProbeResult Probe(int index, int cpu, int64_t base_ns) {
  results::ProbeResult p;
  p.index = index;
  p.cpu = cpu;
  p.tid = 1000 + index;
  p.policy = "fifo";
  p.priority = 80;
  p.interval_ns = 1'000'000;
  p.wake = "nanosleep";
  // A deterministic spread: mostly near base, a tail to a few hundred us.
  for (int64_t i = 0; i < 2000; ++i) p.histogram.Record(base_ns + (i * 7919) % 3000);
  for (int64_t i = 1; i <= 20; ++i) p.histogram.Record(base_ns + i * 15'000);
  p.histogram.Record(base_ns + 612'345);
  p.periods_elapsed = p.histogram.count() + 3;
  p.missed_activations = 2;
  p.skipped_periods = 3;
  return p;
}

results::ScenarioResult Scenario(const std::string& name, int64_t base_ns) {
  results::ScenarioResult s;
  s.name = name;
  s.description = "synthetic <scenario> & \"quotes\"";
  s.status = results::ScenarioStatus::kComplete;
  s.planned_ns = 2'000'000'000;
  s.warnings = {"load warning <script>alert(1)</script>"};
  s.loads = nlohmann::json::array({{{"load", "cpu"},
                                    {"spec", "cpu:2"},
                                    {"cpus", "0-1"},
                                    {"seconds", 2.0},
                                    {"ops", 1000},
                                    {"ops_unit", "loops"},
                                    {"ops_per_second", 500.0},
                                    {"mb_per_second", 0.0},
                                    {"cpu_use", {{{"cpu", 0}, {"busy_percent", 99.0}}}},
                                    {"warnings", nlohmann::json::array()}}});
  results::LatencyRun run;
  run.release = "6.1.0-test";
  run.preemption_model = "PREEMPT_DYNAMIC";
  results::PathRun path;
  path.wake = "nanosleep";
  path.duration_ns = 2'000'000'000;
  path.probes.push_back(Probe(0, 0, base_ns));
  path.probes.push_back(Probe(1, 1, base_ns + 1500));
  run.paths.push_back(std::move(path));
  s.latency = std::move(run);
  return s;
}

results::SuiteResult Suite() {
  results::SuiteResult suite;
  suite.rtpulse_version = "0.0.0-test";
  suite.cmdline = "rtpulse suite --quick";
  suite.status = "complete";
  suite.system = {{"sysname", "Linux"},
                  {"release", "6.1.0-test"},
                  {"preemption_model", "PREEMPT_DYNAMIC"},
                  {"preempt_dynamic_mode", "voluntary"},
                  {"hypervisor", "KVM <vm>"}};
  suite.warnings = {"running in a VM & no PREEMPT_RT"};
  suite.scenarios.push_back(Scenario("idle", 4000));
  suite.scenarios.push_back(Scenario("cpu_50%&<x>", 9000));
  return suite;
}

/// A run folder holding result.json of Suite().
void WriteRun(const std::string& dir) {
  ASSERT_TRUE(WriteFileAtomic(dir + "/result.json", results::ToJson(Suite()).dump(1)));
}

void ExpectGolden(const std::string& produced_path, const std::string& golden_name) {
  const std::string golden_path = kGolden + "/" + golden_name;
  const std::string produced = ReadFile(produced_path);
  if (std::getenv("RTPULSE_UPDATE_GOLDEN") != nullptr) {
    ASSERT_TRUE(WriteFileAtomic(golden_path, produced));
    // Skipped, never passed: an update run compares nothing, so it must not look green.
    GTEST_SKIP() << "rewrote " << golden_path << ": review the diff before committing";
  }
  EXPECT_EQ(produced, ReadFile(golden_path))
      << golden_name << " differs; regenerate with RTPULSE_UPDATE_GOLDEN=1 if intended";
}

bool HaveGnuplot() {
  return !SystemCommandRunner().Find("gnuplot").empty();
}

TEST(ReportTest, MicrosecondClassesPutEachBucketAtItsLowerEdge) {
  Histogram h;
  h.Record(999);
  h.Record(1000);
  h.Record(1001);
  h.Record(-1);
  h.RecordN(2500, 3);
  const auto classes = MicrosecondClasses(h);
  ASSERT_EQ(classes.size(), 4u);
  EXPECT_EQ(classes[0], (std::pair<double, double>{-1, 1}));
  EXPECT_EQ(classes[1], (std::pair<double, double>{0, 1}));
  EXPECT_EQ(classes[2], (std::pair<double, double>{1, 2}));
  EXPECT_EQ(classes[3], (std::pair<double, double>{2, 3}));
}

TEST(ReportTest, ExceedanceStartsAtOneAndOmitsZero) {
  Histogram h;
  for (int64_t v : {100, 200, 300, 400}) h.Record(v);
  const auto points = ExceedancePoints(h);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0], (std::pair<double, double>{0.1, 1.0}));
  EXPECT_EQ(points[1], (std::pair<double, double>{0.1, 0.75}));
  EXPECT_EQ(points[3], (std::pair<double, double>{0.3, 0.25}));
}

TEST(ReportTest, EscapesLatexAndHtml) {
  EXPECT_EQ(LatexEscape("a_b%c&d#e$f{g}h~i^j\\"),
            "a\\_b\\%c\\&d\\#e\\$f\\{g\\}h\\textasciitilde{}i\\textasciicircum{}j"
            "\\textbackslash{}");
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(ReportTest, InlineSvgPrefixesIdsAndDropsTheProlog) {
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<svg a='1'><defs><path id='gpPt0'/></defs>"
      "<use xlink:href='#gpPt0'/><g fill='url(#grad)'/></svg>";
  EXPECT_EQ(InlineSvg(svg, "f-"),
            "<svg a='1'><defs><path id='f-gpPt0'/></defs><use xlink:href='#f-gpPt0'/>"
            "<g fill='url(#f-grad)'/></svg>");
}

TEST(ReportTest, GoldenFiguresAndTable) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  WriteRun(dir.path());
  ReportOptions options;
  options.formats = {ImageFormat::kSvg};
  options.html = false;
  auto out = WriteReport(dir.path(), options);
  ASSERT_TRUE(out) << out.error().message;
  for (const char* name :
       {"histogram_idle", "histogram_cpu_50___x_", "exceedance", "percentiles"}) {
    ExpectGolden(dir.path() + "/figures/" + name + ".dat", std::string(name) + ".dat");
    ExpectGolden(dir.path() + "/figures/" + name + ".gp", std::string(name) + ".gp");
  }
  ExpectGolden(dir.path() + "/tables/summary.tex", "summary.tex");
  // No samples and no monitor log in this run: skipped with notes, never an error.
  ASSERT_FALSE(out->notes.empty());
}

TEST(ReportTest, HtmlIsSelfContainedEscapedAndComplete) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  WriteRun(dir.path());
  ReportOptions options;
  options.extra_sections.push_back([](const results::SuiteResult&) {
    return std::vector<HtmlSection>{{"evt", "Worst-case estimate", "<p>hook works</p>"}};
  });
  auto out = WriteReport(dir.path(), options);
  ASSERT_TRUE(out) << out.error().message;
  const std::string html = ReadFile(dir.path() + "/report/index.html");
  EXPECT_EQ(html.find("<script>alert"), std::string::npos) << "run text must be escaped";
  EXPECT_NE(html.find("load warning &lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("running in a VM &amp; no PREEMPT_RT"), std::string::npos);
  EXPECT_NE(html.find("cpu_50%&amp;&lt;x&gt;"), std::string::npos);
  EXPECT_NE(html.find("<p>hook works</p>"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org"));  // only SVG namespaces
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_LT(html.find("id=\"summary\""), html.find("<svg"));
  size_t svgs = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++svgs;
  EXPECT_EQ(svgs, 4u);  // two histograms, exceedance, percentiles
  for (const auto& path : out->written) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  }
}

TEST(ReportTest, PerPeriodTablesSitBesideThePerWakeUpOnesAndSayUnknownWithout) {
  results::SuiteResult suite = Suite();
  // Scenario "idle": each thread's three skipped periods were late 100, 200 and 300 us, and its
  // samples log gave exact per-period percentiles; the second scenario has no per-period data.
  for (auto& p : suite.scenarios[0].latency->paths[0].probes) {
    for (int64_t late : {100'000, 200'000, 300'000}) p.skipped_histogram.Record(late);
  }
  suite.scenarios[0].exact_per_period_percentiles =
      results::ExactPercentileValues{5'000, 6'000, 7'000, 8'000, 9'000};
  // Hand computation: 2 x (2021 samples + 3 skipped) periods, the min 4.0 us of thread 0, the
  // max 617.8 us (1500 + 4000 + 612345 ns) of thread 1.
  const std::string html = RenderHtml(suite, HtmlInputs{});
  const size_t wake = html.find("<table id=\"summary\">");
  const size_t table = html.find("<table id=\"summary-per-period\">");
  ASSERT_NE(wake, std::string::npos);
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(wake, table);
  EXPECT_NE(html.find("Per wake-up (cyclictest)"), std::string::npos);
  const size_t idle =
      html.find("<tr><td class=\"l\">idle (nanosleep)</td><td>4048</td><td>4.0</td>", table);
  ASSERT_NE(idle, std::string::npos) << html.substr(table, 1200);
  const std::string row = html.substr(idle, html.find("</tr>", idle) - idle);
  EXPECT_NE(row.find("<td>5.0</td><td>6.0</td><td>7.0</td><td>8.0</td><td>9.0</td><td>617.8</td>"),
            std::string::npos)
      << row;
  EXPECT_NE(html.find("cpu_50%&amp;&lt;x&gt; (nanosleep)</td><td class=\"l\" colspan=\"10\">"
                      "unknown",
                      table),
            std::string::npos);
  EXPECT_NE(html.find("Per-period percentiles: nearest-rank (rank = ceil(p/100*N)); value = the "
                      "sample of that rank, exact (from the samples log)."),
            std::string::npos);

  const std::string tex = SummaryTableTex(suite);
  EXPECT_NE(tex.find("idle (nanosleep) & 4048 & 4.0 & "), std::string::npos) << tex;
  EXPECT_NE(tex.find(" & 5.0 & 6.0 & 7.0 & 8.0 & 9.0 & 617.8 & "), std::string::npos) << tex;
  EXPECT_NE(tex.find("cpu\\_50\\%\\&<x> (nanosleep) & \\multicolumn{10}{l}{unknown} \\\\"),
            std::string::npos)
      << tex;
  EXPECT_NE(tex.find("\\caption{Scheduling latency per scenario, per wake-up"), std::string::npos);
}

TEST(ReportTest, BadRunIsAUsageError) {
  TempDir dir;
  auto out = WriteReport(dir.path() + "/nope", {});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ExitCode::kUsage);
}

// --- headless Chromium ---------------------------------------------------------------

std::string Chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

uint32_t BigEndian32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<unsigned char>(s[at])} << 24) |
         (uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
         (uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) |
         uint32_t{static_cast<unsigned char>(s[at + 3])};
}

/// Inflates a PNG's IDAT stream; returns the distinct filtered-row bytes seen (a blank page
/// yields very few distinct values; a page with text and plots many).
size_t DistinctPixelBytes(const std::string& png) {
  std::string idat;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t length = BigEndian32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (type == "IDAT") idat += png.substr(at + 8, length);
    at += 12 + length;
  }
  std::string raw(64 << 20, '\0');
  uLongf raw_size = raw.size();
  if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size,
                 reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK) {
    return 0;
  }
  bool seen[256] = {};
  size_t distinct = 0;
  for (uLongf i = 0; i < raw_size; ++i) {
    const auto b = static_cast<unsigned char>(raw[i]);
    if (!seen[b]) {
      seen[b] = true;
      ++distinct;
    }
  }
  return distinct;
}

TEST(ReportBrowserTest, RendersInHeadlessChromiumWithoutErrors) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed (scripts/install-deps --test)";
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  WriteRun(dir.path());
  auto out = WriteReport(dir.path(), {});
  ASSERT_TRUE(out) << out.error().message;
  const std::string url = "file://" + dir.path() + "/report/index.html";
  const std::string shot = dir.path() + "/shot.png";
  testutil::ProcessOptions po;
  po.timeout = std::chrono::milliseconds(90'000);
  const std::vector<std::string> common = {chromium,
                                           "--headless",
                                           "--no-sandbox",
                                           "--disable-gpu",
                                           "--user-data-dir=" + dir.path() + "/profile",
                                           "--enable-logging=stderr",
                                           "--v=0"};
  auto args = common;
  args.insert(args.end(), {"--screenshot=" + shot, "--window-size=1200,2000", url});
  const auto shot_run = RunProcess(args, po);
  ASSERT_EQ(shot_run.exit_code, 0) << shot_run.err;
  const std::string png = ReadFile(shot);
  ASSERT_GT(png.size(), 24u);
  ASSERT_EQ(png.substr(1, 3), "PNG");
  EXPECT_EQ(BigEndian32(png, 16), 1200u);
  EXPECT_EQ(BigEndian32(png, 20), 2000u);
  EXPECT_GT(png.size(), 30'000u) << "a blank 1200x2000 page compresses to a few KB";
  EXPECT_GT(DistinctPixelBytes(png), 50u) << "screenshot looks blank";

  args = common;
  args.insert(args.end(), {"--dump-dom", url});
  const auto dom = RunProcess(args, po);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_NE(dom.out.find("id=\"rtpulse-errors\" data-errors=\"0\""), std::string::npos)
      << "script errors recorded in the page";
  // The error probe's element must still be empty after the page ran.
  const size_t probe = dom.out.find("id=\"rtpulse-errors\"");
  ASSERT_NE(probe, std::string::npos);
  const size_t open_end = dom.out.find('>', probe);
  EXPECT_EQ(dom.out.compare(open_end, 7, "></div>"), 0) << dom.out.substr(probe, 300);
  EXPECT_NE(dom.out.find("<svg"), std::string::npos);
  EXPECT_NE(dom.out.find("fig-exceedance"), std::string::npos);
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
}

}  // namespace
}  // namespace rtpulse::report
