// The control figures: their .dat files against tests/report/control_figures_truth.py over
// the same jobs.csv files, the standard/stress pairing, and real gnuplot rendering.
#include "report/control_figures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/command_runner.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::report {
namespace {

constexpr int64_t kControlFigPeriodNs = 4'000'000;

/// A 250 Hz run: latency and execution from a seeded generator (`spread` scales the
/// latency, as a stress load would), every 151st job stalls 6 ms.
std::vector<results::ControlJobRow> ControlFigRun(size_t jobs, uint64_t seed, int64_t spread) {
  std::vector<results::ControlJobRow> rows;
  uint64_t state = seed;
  auto next = [&](uint64_t mod) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % mod);
  };
  int64_t release = 5'000'000'000;
  for (size_t k = 0; k < jobs; ++k) {
    results::ControlJobRow r;
    r.job = k;
    r.release_ns = release;
    // Whole-us values for some jobs, so the CDF has repeated response times.
    const int64_t latency = k % 3 == 0 ? 20'000 : 2'000 + next(static_cast<uint64_t>(spread));
    const int64_t exec =
        k % 151 == 75 ? 6'000'000 : (k % 3 == 0 ? 200'000 : 150'000 + next(90'000));
    r.start_ns = release + latency;
    r.end_ns = r.start_ns + exec;
    r.miss = latency + exec > kControlFigPeriodNs;
    r.skipped_before = !rows.empty() && rows.back().miss ? 1 : 0;
    release += kControlFigPeriodNs * (1 + (r.miss ? 1 : 0));
    rows.push_back(r);
  }
  return rows;
}

bool ControlFigHaveGnuplot() {
  return !SystemCommandRunner().Find("gnuplot").empty();
}

TEST(ControlFiguresTest, DataFilesHoldExactlyThePlottedValuesOfJobsCsv) {
  if (!ControlFigHaveGnuplot()) {
    GTEST_SKIP() << "gnuplot not installed (scripts/install-deps installs gnuplot-nox)";
  }
  testutil::TempDir run;
  struct Spec {
    std::string scenario, configuration;
    bool stress;
    size_t jobs;
    uint64_t seed;
    int64_t spread;
  };
  const std::vector<Spec> specs = {{"fifo-99", "fifo:99", false, 2000, 1, 30'000},
                                   {"other-0", "other:0", false, 500, 2, 60'000},
                                   {"fifo-99-stress", "fifo:99", true, 2000, 3, 900'000},
                                   {"rr-50-stress", "rr:50", true, 700, 4, 400'000}};
  std::vector<ControlFigureInput> inputs;
  std::vector<std::string> argv = {
      "/usr/bin/python3",
      std::string(RTPULSE_SOURCE_DIR) + "/tests/report/control_figures_truth.py",
      run.File("figures")};
  for (const auto& s : specs) {
    // Through the files, as the command and a later reader see them.
    const std::string folder = run.File(s.scenario);
    ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
    ASSERT_TRUE(
        results::WriteJobLog(folder + "/jobs.csv", ControlFigRun(s.jobs, s.seed, s.spread)));
    auto rows = results::ReadJobLog(folder + "/jobs.csv");
    ASSERT_TRUE(rows) << rows.error().message;
    inputs.push_back({s.scenario, s.configuration, s.stress, std::move(*rows)});
    argv.push_back(fmt::format("{},{},{},{}", s.scenario, s.configuration, s.stress ? 1 : 0,
                               folder + "/jobs.csv"));
  }
  std::vector<std::string> notes;
  ASSERT_TRUE(WriteControlFigures(run.path(), inputs, {}, &notes));
  EXPECT_TRUE(notes.empty());
  for (const char* name : {"control_response_cdf", "control_response_boxes"}) {
    for (const char* ext : {"dat", "gp", "png", "svg", "pdf"}) {
      struct stat st {};
      const std::string path = run.File("figures") + "/" + name + "." + ext;
      ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
      EXPECT_GT(st.st_size, 200) << path;
    }
    EXPECT_EQ(testutil::ReadFile(run.File("figures") + "/" + name + ".png").substr(1, 3), "PNG");
  }
  const auto truth = testutil::RunProcess(argv);
  EXPECT_EQ(truth.exit_code, 0) << truth.out << truth.err;
  EXPECT_EQ(truth.out, "ok\n");
  // The check can fail: the same figures against another configuration's jobs.csv.
  std::vector<std::string> wrong = argv;
  wrong[4] = wrong[5];
  wrong[4].replace(0, wrong[4].find(','), "fifo-99");
  const auto mismatch = testutil::RunProcess(wrong);
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.out << mismatch.err;
  EXPECT_NE(mismatch.out.find("control_response_cdf.dat differs"), std::string::npos)
      << mismatch.out;
  const std::string boxes = testutil::ReadFile(run.File("figures") + "/control_response_boxes.dat");
  EXPECT_NE(boxes.find(kControlBoxRule), std::string::npos);
}

TEST(ControlFiguresTest, PairingComesFromTheConfigurationFieldNotTheName) {
  // Names that suggest the opposite pairing: only the fields count.
  const std::vector<ControlFigureInput> inputs = {
      {"fifo-99-stress", "fifo:99", false, ControlFigRun(50, 1, 10'000)},
      {"rr-50", "fifo:99", true, ControlFigRun(50, 2, 10'000)},
      {"fifo-99", "rr:50", false, ControlFigRun(50, 3, 10'000)}};
  auto f = ControlBoxFigure(inputs);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->categories, (std::vector<std::string>{"fifo:99", "rr:50"}));
  ASSERT_EQ(f->series.size(), 2u);
  EXPECT_EQ(f->series[0].title, "standard");
  EXPECT_EQ(f->series[1].title, "stress");
  ASSERT_EQ(f->boxes.size(), 2u);
  ASSERT_EQ(f->boxes[0].size(), 2u);  // fifo:99 and rr:50 standard
  EXPECT_DOUBLE_EQ(f->boxes[0][0].x, 0);
  EXPECT_DOUBLE_EQ(f->boxes[0][1].x, 1);
  ASSERT_EQ(f->boxes[1].size(), 1u);  // fifo:99 stress
  EXPECT_DOUBLE_EQ(f->boxes[1][0].x, 0);
  // Side by side: the standard box left of the category, the stress box right of it.
  const std::string gp = FigureScript(*f);
  EXPECT_NE(gp.find("index 0 using ($1-0.2):3:2:6:5 with candlesticks whiskerbars 0.5"),
            std::string::npos)
      << gp;
  EXPECT_NE(gp.find("index 1 using ($1+0.2):3:2:6:5 with candlesticks whiskerbars 0.5"),
            std::string::npos)
      << gp;
  EXPECT_NE(gp.find("set xtics ('fifo:99' 0, 'rr:50' 1)"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set logscale y"), std::string::npos);

  auto twice = ControlBoxFigure({inputs[0], inputs[0]});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, ExitCode::kUsage);
  EXPECT_NE(twice.error().message.find("'fifo:99' without stress"), std::string::npos)
      << twice.error().message;
}

TEST(ControlFiguresTest, ConfigurationsWithoutJobsAreSaidNotDrawn) {
  const std::vector<ControlFigureInput> inputs = {
      {"fifo-99", "fifo:99", false, {}}, {"rr-50", "rr:50", false, ControlFigRun(20, 5, 1000)}};
  const Figure cdf = ControlCdfFigure(inputs);
  ASSERT_EQ(cdf.series.size(), 1u);
  EXPECT_EQ(cdf.labels, (std::vector<std::string>{"fifo-99: no jobs, no curve"}));
  auto boxes = ControlBoxFigure(inputs);
  ASSERT_TRUE(boxes);
  ASSERT_EQ(boxes->boxes.size(), 1u);
  ASSERT_EQ(boxes->boxes[0].size(), 1u);
  EXPECT_DOUBLE_EQ(boxes->boxes[0][0].x, 1);  // rr:50 keeps its category slot
  EXPECT_NE(std::find(boxes->labels.begin(), boxes->labels.end(), "fifo-99: no jobs, no box"),
            boxes->labels.end());

  // Jobs whose release is unknown have no response: left out of both figures, and said so.
  std::vector<results::ControlJobRow> restarted = ControlFigRun(20, 5, 1000);
  restarted[3].release_known = false;
  restarted[3].release_ns = restarted[3].start_ns;
  const std::vector<ControlFigureInput> partly = {{"deadline-1ms", "deadline", false, restarted}};
  const Figure partly_cdf = ControlCdfFigure(partly);
  ASSERT_EQ(partly_cdf.series.size(), 1u);
  EXPECT_EQ(partly_cdf.series[0].title.rfind("deadline-1ms (N=19,", 0), 0u)
      << partly_cdf.series[0].title;
  const std::string not_drawn =
      "deadline-1ms: 1 of 20 jobs not drawn, their release unknown (SCHED_DEADLINE restarted "
      "its period): no response";
  EXPECT_EQ(partly_cdf.labels, (std::vector<std::string>{not_drawn}));
  auto partly_boxes = ControlBoxFigure(partly);
  ASSERT_TRUE(partly_boxes);
  EXPECT_NE(std::find(partly_boxes->labels.begin(), partly_boxes->labels.end(), not_drawn),
            partly_boxes->labels.end());

  testutil::TempDir run;
  std::vector<std::string> notes;
  ASSERT_TRUE(WriteControlFigures(run.path(), {inputs[0]}, {}, &notes));
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "control_response_cdf: not drawn, no configuration has a job",
                       "control_response_boxes: not drawn, no configuration has a job"}));
  EXPECT_TRUE(run.List().empty());  // no empty figures folder either
}

TEST(ControlFiguresTest, CdfEndsAtTheMaximumWithItsShare) {
  std::vector<results::ControlJobRow> rows;
  const int64_t responses[] = {3'000, 1'000, 3'000, 2'500};
  for (size_t k = 0; k < 4; ++k) {
    results::ControlJobRow r;
    r.job = k;
    r.release_ns = static_cast<int64_t>(k) * kControlFigPeriodNs;
    r.start_ns = r.release_ns + 100;
    r.end_ns = r.release_ns + responses[k];
    rows.push_back(r);
  }
  const Figure f = ControlCdfFigure({{"x", "fifo:99", false, rows}});
  ASSERT_EQ(f.series.size(), 1u);
  EXPECT_EQ(f.series[0].points,
            (std::vector<std::pair<double, double>>{{1.0, 1.0}, {2.5, 0.75}, {3.0, 0.5}}));
}

}  // namespace
}  // namespace rtpulse::report
