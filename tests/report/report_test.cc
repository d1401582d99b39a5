// rtpulse report on a synthesised, deterministic run: golden .dat/.gp/.tex files, the HTML's
// content and escaping, and the page rendered by headless Chromium.
//
// Regenerate the golden files after an intended change (the test then reports SKIPPED, since
// it compared nothing):
//   RTPULSE_UPDATE_GOLDEN=1 build/tests/report/report_test --gtest_filter='*Golden*'
#include "report/report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "report/html_page.h"
#include "report/latex_table.h"
#include "report/monitor_log.h"
#include "report/run_figures.h"
#include "results/suite_result.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

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
                                    {"warnings", nlohmann::json::array()}},
                                   // A command counts no work: its rate is null, not 0.
                                   {{"load", "cmd"},
                                    {"spec", "cmd:cpus=1 ./my_app"},
                                    {"cpus", "1"},
                                    {"seconds", 2.0},
                                    {"ops", nullptr},
                                    {"ops_unit", ""},
                                    {"ops_per_second", nullptr},
                                    {"mb_per_second", 0.0},
                                    {"cpu_use", {{{"cpu", 1}, {"busy_percent", 42.0}}}},
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
  for (const char* name : {"histogram_idle", "histogram_idle_full", "histogram_cpu_50___x_",
                           "histogram_cpu_50___x__full", "exceedance", "percentiles"}) {
    ExpectGolden(dir.path() + "/figures/" + name + ".dat", std::string(name) + ".dat");
    ExpectGolden(dir.path() + "/figures/" + name + ".gp", std::string(name) + ".gp");
  }
  ExpectGolden(dir.path() + "/tables/summary.tex", "summary.tex");
  // No samples and no monitor log in this run: skipped with notes, never an error.
  ASSERT_FALSE(out->notes.empty());
}

/// Raw latencies of one CPU of a run on a VM: a body at 20-60 us and `spikes` far outliers
/// (stolen time: several ms).
std::vector<int64_t> SpikyValues(int cpu, const std::vector<int64_t>& spikes) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < 5000; ++i) values.push_back(20'000 + (i * 7919 + cpu * 131) % 40'000);
  values.insert(values.end(), spikes.begin(), spikes.end());
  return values;
}

// Issue 11 item 5: with a few multi-millisecond spikes the linear x axis ran to the max and
// the whole body was a line at 0. The range rule limits the axis, says in the plot and the
// caption how many samples it left out, and keeps the full range beside it. Everything
// printed is recomputed by tests/data/report/histogram_range.py from the raw values.
TEST(ReportTest, HistogramRangeRuleOnAFarOutlier) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  const std::vector<std::vector<int64_t>> raw = {SpikyValues(0, {4'000'123, 15'012'345}),
                                                 SpikyValues(1, {9'500'000})};
  results::SuiteResult suite = Suite();
  results::ScenarioResult spiky = Scenario("spiky", 0);
  auto& probes = spiky.latency->paths[0].probes;
  std::vector<std::string> value_files;
  for (size_t cpu = 0; cpu < raw.size(); ++cpu) {
    probes[cpu].histogram = Histogram();
    std::string text;
    for (int64_t v : raw[cpu]) {
      probes[cpu].histogram.Record(v);
      text += std::to_string(v) + "\n";
    }
    value_files.push_back(dir.path() + "/values_cpu" + std::to_string(cpu) + ".txt");
    ASSERT_TRUE(WriteFileAtomic(value_files.back(), text));
  }
  suite.scenarios = {spiky};
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/result.json", results::ToJson(suite).dump(1)));
  ReportOptions options;
  options.formats = {ImageFormat::kSvg};
  auto out = WriteReport(dir.path(), options);
  ASSERT_TRUE(out) << out.error().message;

  std::vector<std::string> argv = {"/usr/bin/python3",
                                   std::string(RTPULSE_TEST_DATA) + "/report/histogram_range.py",
                                   dir.path() + "/figures", "histogram_spiky"};
  argv.insert(argv.end(), value_files.begin(), value_files.end());
  const auto truth = RunProcess(argv);
  ASSERT_EQ(truth.exit_code, 0) << truth.err;
  const size_t rule_at = truth.out.find("\nrule: ");
  ASSERT_EQ(truth.out.rfind("label: ", 0), 0u) << truth.out;
  ASSERT_NE(rule_at, std::string::npos) << truth.out;
  const std::string label = truth.out.substr(7, rule_at - 7);
  const std::string rule = truth.out.substr(rule_at + 7, truth.out.size() - rule_at - 8);
  EXPECT_EQ(label,
            "3 samples beyond 600 us (max 15012.3 us) not drawn; all classes in "
            "histogram_spiky_full");  // the ground truth injected above

  const std::string gp = ReadFile(dir.path() + "/figures/histogram_spiky.gp");
  EXPECT_NE(gp.find("set label 1 '" + label + "'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xrange [*:600]"), std::string::npos) << gp;
  EXPECT_NE(ReadFile(dir.path() + "/figures/histogram_spiky.dat").find("# " + rule + "\n"),
            std::string::npos)
      << rule;
  const std::string full_gp = ReadFile(dir.path() + "/figures/histogram_spiky_full.gp");
  EXPECT_NE(full_gp.find("set xrange [*:*]"), std::string::npos);
  EXPECT_EQ(full_gp.find("set label"), std::string::npos) << "the full range leaves out nothing";

  const std::string html = ReadFile(dir.path() + "/report/index.html");
  const size_t figure = html.find("<figure id=\"fig-histogram_spiky\">");
  ASSERT_NE(figure, std::string::npos);
  const size_t caption = html.find("<figcaption>", figure);
  const std::string caption_text = html.substr(caption, html.find(" Files:", caption) - caption);
  EXPECT_NE(caption_text.find(HtmlEscape(label) + "."), std::string::npos)
      << "the caption states the samples left out: " << caption_text;
  EXPECT_NE(html.find("fig-histogram_spiky_full"), std::string::npos);
  ExpectGolden(dir.path() + "/figures/histogram_spiky.dat", "histogram_spiky.dat");
  ExpectGolden(dir.path() + "/figures/histogram_spiky.gp", "histogram_spiky.gp");
  ExpectGolden(dir.path() + "/figures/histogram_spiky_full.dat", "histogram_spiky_full.dat");
  ExpectGolden(dir.path() + "/figures/histogram_spiky_full.gp", "histogram_spiky_full.gp");
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
  EXPECT_NE(html.find("<td>500 loops/s</td>"), std::string::npos);
  EXPECT_NE(html.find("cmd:cpus=1 ./my_app</td><td class=\"l\">1</td><td>2.0</td><td>-</td>"),
            std::string::npos)
      << "an uncounted rate is '-', never 0";
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org"));  // only SVG namespaces
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_LT(html.find("id=\"summary\""), html.find("<svg"));
  // Issue 35 item 5: the first screen is the run's status, the verdict and the warnings,
  // before the summary table and every figure.
  const size_t first = html.find("<section id=\"first-screen\">");
  ASSERT_NE(first, std::string::npos);
  EXPECT_LT(html.find("Run status: <b>"), html.find("id=\"summary\""));
  EXPECT_LT(first, html.find("<h2 id=\"warnings\">"));
  EXPECT_LT(html.find("running in a VM &amp; no PREEMPT_RT"), html.find("id=\"summary\""));
  EXPECT_LT(html.find("No budget given"), html.find("id=\"summary\""));
  size_t svgs = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++svgs;
  EXPECT_EQ(svgs, 6u);  // two histograms (limited and full range), exceedance, percentiles
  for (const auto& path : out->written) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  }
}

size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Issue 11 item 5: a VM's five environment warnings, recorded by the run and again by every
// scenario's latency run, filled the Warnings section six times over. Each distinct text is
// listed once, with where it applies.
TEST(ReportTest, HtmlListsEachDistinctWarningOnceWithItsScenarios) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  results::SuiteResult suite = Suite();
  const std::vector<std::string> machine = {"not PREEMPT_RT", "running in a VM (KVM)",
                                            "governor is powersave", "SMT on", "no isolated CPUs"};
  suite.warnings = machine;
  suite.scenarios.push_back(Scenario("net", 5000));
  for (auto& s : suite.scenarios) s.latency->warnings = machine;
  suite.scenarios[1].latency->warnings.push_back("probe 1 degraded");  // cpu_50%&<x> only
  suite.scenarios[2].warnings.push_back("probe 1 degraded");           // and net
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/result.json", results::ToJson(suite).dump(1)));
  ReportOptions options;
  options.formats = {ImageFormat::kSvg};
  auto out = WriteReport(dir.path(), options);
  ASSERT_TRUE(out) << out.error().message;
  const std::string html = ReadFile(dir.path() + "/report/index.html");
  const size_t from = html.find("<h2 id=\"warnings\">");
  const size_t to = html.find("</section>", from);  // the end of the first screen
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const std::string section = html.substr(from, to - from);
  EXPECT_EQ(CountOf(section, "<li"), 7u) << section;  // 5 machine, load warning, degraded
  for (const auto& w : machine) {
    EXPECT_EQ(CountOf(section, "<li class=\"warn\">" + w +
                                   " <span class=\"note\">(whole run; "
                                   "scenarios idle, cpu_50%&amp;&lt;x&gt;, net)</span></li>"),
              1u)
        << w << "\n"
        << section;
  }
  EXPECT_EQ(CountOf(section,
                    "load warning &lt;script&gt;alert(1)&lt;/script&gt; <span "
                    "class=\"note\">(scenarios idle, cpu_50%&amp;&lt;x&gt;, net)"),
            1u)
      << section;
  EXPECT_EQ(CountOf(section,
                    "probe 1 degraded <span class=\"note\">(scenarios "
                    "cpu_50%&amp;&lt;x&gt;, net)"),
            1u)
      << section;
}

constexpr int64_t kMonitorT0 = 1'700'000'000'000'000'000;  // 2023-11-14T22:13:20.000Z

/// thermal_power_log.csv with one row a second from kMonitorT0; `scenarios` (one per row)
/// fills a `scenario` column, none when empty (a log written before the column existed).
std::string MonitorCsv(const std::vector<std::string>& scenarios, int rows) {
  std::string csv = "timestamp,elapsed_s,temp_zone0_cpu_thermal_c,throttled_raw,cpu_busy_pct";
  csv += scenarios.empty() ? "\n" : ",scenario\n";
  for (int r = 0; r < rows; ++r) {
    csv += fmt::format("2023-11-14T22:13:{:02}.000Z,{}.000,{},0x0,{}", 20 + r, r, 50 + r,
                       r == 0 ? "" : std::to_string(10 * r));
    csv += scenarios.empty() ? "\n" : "," + scenarios[static_cast<size_t>(r)] + "\n";
  }
  return csv;
}

// Issue 11 item 5: the monitor figures show where each scenario started (from result.json),
// and the `scenario` column is read back; a log without it still reads as before.
TEST(ReportTest, MonitorFiguresMarkScenarioStartsAndReadTheScenarioColumn) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  results::SuiteResult suite = Suite();
  suite.scenarios[0].start_realtime_ns = kMonitorT0 + 500 * kNsPerMs;
  suite.scenarios[0].end_realtime_ns = kMonitorT0 + 12'000 * kNsPerMs;
  suite.scenarios[1].start_realtime_ns = kMonitorT0 + 12'250 * kNsPerMs;
  suite.scenarios[1].end_realtime_ns = kMonitorT0 + 19'500 * kNsPerMs;
  suite.scenarios.push_back(Scenario("never", 0));  // pending: no start, no marker
  suite.scenarios.back().status = results::ScenarioStatus::kPending;
  std::vector<std::string> cells(20, "");
  for (size_t r = 1; r <= 12; ++r) cells[r] = "idle";
  for (size_t r = 13; r < 20; ++r) cells[r] = "cpu_50%&<x>";
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/result.json", results::ToJson(suite).dump(1)));
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/thermal_power_log.csv", MonitorCsv(cells, 20)));

  auto log = ReadMonitorLog(dir.path() + "/thermal_power_log.csv");
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_EQ(log->scenario, cells);
  ASSERT_EQ(log->columns.size(), 2u);  // throttled_raw is text; scenario is not a series
  EXPECT_EQ(log->columns[0].name, "temp_zone0_cpu_thermal_c");
  EXPECT_EQ(log->columns[1].name, "cpu_busy_pct");
  EXPECT_EQ(log->columns[0].values[19], 69.0);

  ReportOptions options;
  options.formats = {ImageFormat::kSvg};
  auto out = WriteReport(dir.path(), options);
  ASSERT_TRUE(out) << out.error().message;
  for (const char* name : {"monitor_temperature", "monitor_cpu"}) {
    SCOPED_TRACE(name);
    const std::string gp = ReadFile(dir.path() + "/figures/" + name + ".gp");
    // 0.5 s and 12.25 s after the first row: the injected starts.
    EXPECT_NE(gp.find("set arrow 1 from first 0.5, graph 0 to first 0.5, graph 1 nohead"),
              std::string::npos)
        << gp;
    EXPECT_NE(gp.find("set label 1 'idle' at first 0.5, graph 0.98 rotate by 90"),
              std::string::npos);
    EXPECT_NE(gp.find("set arrow 2 from first 12.25, graph 0 to first 12.25, graph 1 nohead"),
              std::string::npos);
    EXPECT_NE(gp.find("set label 2 'cpu_50%&<x>' at first 12.25,"), std::string::npos);
    EXPECT_EQ(gp.find("set arrow 3"), std::string::npos) << "a scenario that never started";
  }
  const std::string html = ReadFile(dir.path() + "/report/index.html");
  EXPECT_NE(html.find("Temperatures over the whole run (thermal_power_log.csv). Dotted lines: "
                      "where each scenario started."),
            std::string::npos);

  // A log written before the column existed: the same values, no scenario cells.
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/old.csv", MonitorCsv({}, 20)));
  auto old = ReadMonitorLog(dir.path() + "/old.csv");
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_TRUE(old->scenario.empty());
  ASSERT_EQ(old->columns.size(), 2u);
  EXPECT_EQ(old->columns[0].values, log->columns[0].values);
}

// Found by fuzz_monitor_log (docs/fuzzing.md): a year whose nanoseconds since 1970 do not fit
// in 64 bits overflowed the arithmetic (UBSan: signed integer overflow). Such a timestamp, and
// any field out of range, is malformed (-1) and the row still reads.
TEST(ReportTest, MonitorTimestampsOutOfRangeAreMalformedNotOverflowed) {
  // Ground truth from python3: calendar.timegm((2023, 11, 14, 22, 13, 20)) = 1700000000 and
  // calendar.timegm((2261, 12, 31, 23, 59, 59)) = 9214646399.
  EXPECT_EQ(ParseUtcTimestampNs("2023-11-14T22:13:20.123Z"), 1'700'000'000'123'000'000);
  EXPECT_EQ(ParseUtcTimestampNs("2261-12-31T23:59:59.999Z"), 9'214'646'399'999'000'000);
  EXPECT_EQ(ParseUtcTimestampNs("2262-05-01T12:00:05.123Z"), -1);
  EXPECT_EQ(ParseUtcTimestampNs("4052-05-01T12:00:05.123Z"), -1);
  EXPECT_EQ(ParseUtcTimestampNs("-2147483648-01-01T00:00:00.000Z"), -1);
  EXPECT_EQ(ParseUtcTimestampNs("2023-13-14T22:13:20.000Z"), -1);
  EXPECT_EQ(ParseUtcTimestampNs("2023-11-14T22:13:20.-5Z"), -1);
  EXPECT_EQ(ParseUtcTimestampNs("2023-11-14T22:13:20.1000Z"), -1);

  testutil::TempDir dir;
  const std::string csv = dir.File("thermal_power_log.csv");
  std::ofstream(csv) << "timestamp,elapsed_s,temp_zone0_cpu_thermal_c\n"
                        "2023-11-14T22:13:20.000Z,0.0,51.2\n"
                        "4052-05-01T12:00:05.123Z,5.0,52.0\n";
  auto log = ReadMonitorLog(csv);
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_EQ(log->realtime_ns.size(), 2u);
  EXPECT_EQ(log->realtime_ns[0], 1'700'000'000'000'000'000);
  EXPECT_EQ(log->realtime_ns[1], -1);
  ASSERT_EQ(log->columns.size(), 1u);
  EXPECT_DOUBLE_EQ(log->columns[0].values[1], 52.0);
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
