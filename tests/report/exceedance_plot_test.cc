// The wcet exceedance plot (report/exceedance_plot.h): its data file against the report's
// curve, real gnuplot rendering, and the three ways it can stop short (no gnuplot, gnuplot
// failing, a folder that cannot be made).
#include "report/exceedance_plot.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/fake_commands.h"
#include "support/subprocess.h"

namespace rtpulse::report {
namespace {

stats::EvtReport ExponentialReport() {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> tail(1.0 / 20'000.0);
  std::vector<double> samples(20'000);
  for (auto& s : samples) s = 50'000.0 + tail(rng);
  stats::EvtOptions options;
  options.bootstrap = 0;
  return stats::EstimateWorstCase(samples, options);
}

/// The data lines of block `index` (0: empirical, 1: model) of exceedance.dat.
std::vector<std::string> Block(const std::string& text, int index) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  int block = 0;
  int blank = 0;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (++blank == 2) ++block;
      continue;
    }
    blank = 0;
    if (line[0] == '#') continue;
    if (block == index) lines.push_back(line);
  }
  return lines;
}

TEST(ExceedancePlotTest, DataHoldsEveryPointOfTheReportsCurveInMicroseconds) {
  const stats::EvtReport r = ExponentialReport();
  ASSERT_FALSE(r.curve.empirical_ns.empty());
  const std::string dat = ExceedanceData(r);
  const auto empirical = Block(dat, 0);
  const auto model = Block(dat, 1);
  ASSERT_EQ(empirical.size(), r.curve.empirical_ns.size());
  ASSERT_EQ(model.size(), r.curve.model_ns.size());
  for (size_t i = 0; i < empirical.size(); ++i) {
    double us = 0, p = 0;
    std::istringstream(empirical[i]) >> us >> p;
    EXPECT_NEAR(us, r.curve.empirical_ns[i] / 1e3, 1e-4) << empirical[i];
    EXPECT_NEAR(p, r.curve.empirical_probability[i], r.curve.empirical_probability[i] * 1e-5);
  }
  for (size_t i = 0; i < model.size(); ++i) {
    std::istringstream fields(model[i]);
    double us = 0;
    std::string pot, bm;
    fields >> us >> pot >> bm;
    EXPECT_NEAR(us, r.curve.model_ns[i] / 1e3, 1e-4);
    const double expected = r.curve.pot_probability[i];
    if (std::isfinite(expected) && expected > 0) {
      EXPECT_NEAR(std::stod(pot), expected, expected * 1e-5) << model[i];
    } else {
      EXPECT_EQ(pot, "NaN") << model[i];
    }
  }
}

TEST(ExceedancePlotTest, RendersTheSvgWithGnuplot) {
  const SystemCommandRunner runner;
  if (runner.Find("gnuplot").empty()) {
    GTEST_SKIP() << "gnuplot not installed (scripts/install-deps installs gnuplot-nox)";
  }
  testutil::TempDir tmp;
  const std::string dir = tmp.path() + "/wcet/it's here";  // a quote gnuplot must survive
  const ExceedancePlot plot = WriteExceedancePlot(dir, "idle", ExponentialReport(), runner);
  ASSERT_TRUE(plot.error.empty()) << plot.error;
  ASSERT_TRUE(plot.rendered) << plot.note;
  EXPECT_EQ(*plot.rendered, dir + "/exceedance.svg");
  EXPECT_FALSE(plot.gnuplot_failed);
  EXPECT_NE(testutil::ReadFile(*plot.rendered).find("<svg"), std::string::npos);
  EXPECT_NE(testutil::ReadFile(plot.script).find("set output 'exceedance.svg'"), std::string::npos);
}

TEST(ExceedancePlotTest, WithoutGnuplotTheFilesStayAndTheNoteSaysHowToRender) {
  testutil::TempDir tmp;
  const testutil::FakeCommands none;
  const ExceedancePlot plot = WriteExceedancePlot(tmp.path(), "idle", ExponentialReport(), none);
  EXPECT_TRUE(plot.error.empty());
  EXPECT_FALSE(plot.rendered);
  EXPECT_FALSE(plot.gnuplot_failed);
  EXPECT_NE(plot.note.find("gnuplot not found"), std::string::npos) << plot.note;
  struct stat st {};
  EXPECT_EQ(::stat(plot.data.c_str(), &st), 0);
  EXPECT_EQ(::stat(plot.script.c_str(), &st), 0);
}

TEST(ExceedancePlotTest, AFailingGnuplotIsReportedWithItsExitCodeAndStderr) {
  testutil::TempDir tmp;
  testutil::FakeCommands failing;
  failing.Install("gnuplot").Answer("gnuplot -e cd '" + tmp.path() + "'; load 'exceedance.gp'",
                                    CommandOutput{.exit_code = 1,
                                                  .timed_out = false,
                                                  .out = "",
                                                  .err = "line 3: unknown terminal",
                                                  .term_signal = 0});
  const ExceedancePlot plot = WriteExceedancePlot(tmp.path(), "idle", ExponentialReport(), failing);
  EXPECT_TRUE(plot.error.empty());
  EXPECT_FALSE(plot.rendered);
  EXPECT_TRUE(plot.gnuplot_failed);
  EXPECT_NE(plot.note.find("exit 1"), std::string::npos) << plot.note;
  EXPECT_NE(plot.note.find("unknown terminal"), std::string::npos) << plot.note;
}

TEST(ExceedancePlotTest, AnSvgLeftByAnEarlierRunIsNotTakenForTheNewOne) {
  testutil::TempDir tmp;
  std::ofstream(tmp.path() + "/exceedance.svg") << "<svg>an earlier run's plot</svg>";
  testutil::FakeCommands silent;  // exits 0 and writes nothing
  silent.Install("gnuplot").Answer(
      "gnuplot -e cd '" + tmp.path() + "'; load 'exceedance.gp'",
      CommandOutput{.exit_code = 0, .timed_out = false, .out = "", .err = "", .term_signal = 0});
  const ExceedancePlot plot = WriteExceedancePlot(tmp.path(), "idle", ExponentialReport(), silent);
  EXPECT_FALSE(plot.rendered);
  EXPECT_TRUE(plot.gnuplot_failed);
  EXPECT_NE(plot.note.find("exceedance.svg"), std::string::npos) << plot.note;
}

TEST(ExceedancePlotTest, AFolderThatCannotBeMadeIsAnErrorAndNothingRuns) {
  testutil::TempDir tmp;
  std::ofstream(tmp.path() + "/file") << "x";
  testutil::FakeCommands gnuplot;
  gnuplot.Install("gnuplot");  // no answers: running it would fail the plot differently
  const ExceedancePlot plot =
      WriteExceedancePlot(tmp.path() + "/file/wcet", "idle", ExponentialReport(), gnuplot);
  EXPECT_FALSE(plot.error.empty());
  EXPECT_FALSE(plot.rendered);
  EXPECT_FALSE(plot.gnuplot_failed);
}

TEST(ExceedancePlotTest, WcetJsonSaysWhatWasDrawnAndTheRunWarnsOfWhatFailed) {
  std::vector<std::string> notes;
  ExceedancePlot drawn;
  drawn.data = "/r/wcet/idle/exceedance.dat";
  drawn.script = "/r/wcet/idle/exceedance.gp";
  drawn.rendered = "/r/wcet/idle/exceedance.svg";
  const nlohmann::json ok = ExceedancePlotJson(drawn, "idle", notes);
  EXPECT_EQ(ok, nlohmann::json({{"data", drawn.data},
                                {"script", drawn.script},
                                {"rendered", "/r/wcet/idle/exceedance.svg"}}));
  EXPECT_TRUE(notes.empty());

  ExceedancePlot failed = drawn;
  failed.rendered.reset();
  failed.gnuplot_failed = true;
  failed.note = "gnuplot exit 1: unknown terminal";
  const nlohmann::json bad = ExceedancePlotJson(failed, "idle", notes);
  EXPECT_TRUE(bad.at("rendered").is_null());
  EXPECT_EQ(bad.at("note"), failed.note);
  EXPECT_EQ(notes, std::vector<std::string>{"idle: gnuplot exit 1: unknown terminal"});

  ExceedancePlot unwritten;
  unwritten.error = "cannot create folder /r/wcet/idle: read-only file system";
  const nlohmann::json none = ExceedancePlotJson(unwritten, "idle", notes);
  EXPECT_FALSE(none.contains("rendered"));
  EXPECT_EQ(notes.back(), unwritten.error);
}

}  // namespace
}  // namespace rtpulse::report
