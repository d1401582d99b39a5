// The figure API: .dat/.gp text, and gnuplot rendering every format (real gnuplot-nox).
#include "report/figure.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "support/subprocess.h"

namespace rtpulse::report {
namespace {

Figure TwoCurves() {
  Figure f;
  f.name = "demo";
  f.title = "it's a demo";
  f.xlabel = "latency (us)";
  f.ylabel = "count";
  f.logy = true;
  f.kind = PlotKind::kSteps;
  f.notes = {"units: us"};
  f.series = {{"CPU 0", {{1, 10}, {2, 5}}, "", false}, {"CPU 1", {{1, 7}, {3, 1e12}}, "", false}};
  return f;
}

class NoGnuplot final : public CommandRunner {
 public:
  std::string Find(std::string_view) const override { return ""; }
  Expected<CommandOutput> Run(const std::vector<std::string>&,
                              std::chrono::milliseconds) const override {
    return Failure("not reached");
  }
};

TEST(FigureTest, DataHasOneIndexedBlockPerSeries) {
  EXPECT_EQ(FigureData(TwoCurves()),
            "# demo: it's a demo\n# units: us\n# columns: x (latency (us)), y (count)\n"
            "# index 0: CPU 0 (2 points)\n1 10\n2 5\n\n\n"
            "# index 1: CPU 1 (2 points)\n1 7\n\n3 1e+12\n");
}

TEST(FigureTest, ScriptQuotesTextAndReadsTheDataBesideIt) {
  const std::string gp = FigureScript(TwoCurves());
  EXPECT_NE(gp.find("set title 'it''s a demo'\n"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set logscale y 10\n"), std::string::npos);
  EXPECT_NE(gp.find("'demo.dat' index 1 using 1:2 with linespoints"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("\nset terminal"), std::string::npos) << "the script must serve every format";
}

TEST(FigureTest, ParsesFormatLists) {
  auto f = ParseImageFormats("svg,png");
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, (std::vector<ImageFormat>{ImageFormat::kSvg, ImageFormat::kPng}));
  EXPECT_FALSE(ParseImageFormats("png,gif"));
  EXPECT_FALSE(ParseImageFormats(""));
}

TEST(FigureTest, MissingGnuplotIsAResourceErrorNamingThePackage) {
  testutil::TempDir dir;
  NoGnuplot runner;
  RenderOptions options;
  options.runner = &runner;
  auto files = RenderFigure(TwoCurves(), dir.path(), options);
  ASSERT_FALSE(files);
  EXPECT_EQ(files.error().code, ExitCode::kResource);
  EXPECT_NE(files.error().message.find("gnuplot-nox"), std::string::npos);
}

TEST(FigureTest, EmptyFigureIsRefused) {
  testutil::TempDir dir;
  Figure f = TwoCurves();
  for (auto& s : f.series) s.points.clear();
  EXPECT_FALSE(RenderFigure(f, dir.path()));
}

TEST(FigureTest, RendersEveryFormatWithGnuplot) {
  if (SystemCommandRunner().Find("gnuplot").empty()) {
    GTEST_SKIP() << "gnuplot not installed (scripts/install-deps installs gnuplot-nox)";
  }
  testutil::TempDir dir;
  for (PlotKind kind : {PlotKind::kLines, PlotKind::kSteps, PlotKind::kBars}) {
    Figure f = TwoCurves();
    f.kind = kind;
    f.categories = {"a", "b", "c", "d"};
    f.series[1].y2 = true;
    f.y2label = "other";
    auto files = RenderFigure(f, dir.path());
    ASSERT_TRUE(files) << files.error().message;
    ASSERT_EQ(files->images.size(), 3u);
    for (const auto& image : files->images) {
      struct stat st {};
      ASSERT_EQ(::stat(image.c_str(), &st), 0) << image;
      EXPECT_GT(st.st_size, 1000) << image;
    }
    EXPECT_EQ(testutil::ReadFile(files->images[0]).substr(1, 3), "PNG");
    EXPECT_EQ(testutil::ReadFile(files->images[2]).substr(0, 4), "%PDF");
    EXPECT_NE(testutil::ReadFile(files->svg).find("<svg"), std::string::npos);
  }
}

}  // namespace
}  // namespace rtpulse::report
