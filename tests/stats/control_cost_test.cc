#include "stats/control_cost.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::stats {
namespace {

constexpr int64_t kMs = 1'000'000;

std::vector<ReplayJob> ConstantJobs(size_t n, int64_t sample_ns, int64_t actuation_ns) {
  return std::vector<ReplayJob>(n, ReplayJob{sample_ns, actuation_ns, true});
}

ReplayResult MustReplay(const std::vector<ReplayJob>& jobs, const ReplaySettings& s = {}) {
  auto r = ReplayControlCost(jobs, s);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : ReplayResult{};
}

/// Runs tests/stats/control_cost_truth.py (scipy's expm and Gauss-Legendre quadrature, its own
/// model from the documented parameters, nothing of rtpulse) on `what`: a jobs file or
/// "design".
nlohmann::json RunTruth(const std::string& what, const ReplaySettings& s, int64_t horizon_ns) {
  auto num = [](double v) { return fmt::format("{:.17g}", v); };
  const std::vector<std::pair<const char*, std::string>> options = {
      {"--period-ns", std::to_string(s.period_ns)},
      {"--horizon-ns", std::to_string(horizon_ns)},
      {"--peak-step-ns", std::to_string(s.peak_step_ns)},
      {"--inertia", num(s.inertia_kg_m2)},
      {"--torque", num(s.torque_per_unit_nm)},
      {"--tau", num(s.motor_time_constant_s)},
      {"--kp", num(s.kp > 0 ? s.kp : 1.656)},  // The documented default gains.
      {"--kd", num(s.kd > 0 ? s.kd : 0.1932)},
      {"--q-angle", num(s.q_angle)},
      {"--q-rate", num(s.q_rate)},
      {"--r-command", num(s.r_command)},
      {"--initial-angle", num(s.initial_angle_rad)},
      {"--dist", num(s.disturbance_nm)},
      {"--dist-at", num(s.disturbance_at_s)},
      {"--dist-on", num(s.disturbance_on_s)},
      {"--dist-repeat", num(s.disturbance_repeat_s)},
  };
  std::vector<std::string> argv = {
      "/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tests/stats/control_cost_truth.py",
      what};
  for (const auto& [flag, value] : options) {
    argv.emplace_back(flag);
    argv.push_back(value);
  }
  const auto r = testutil::RunProcess(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

/// The truth's replay of `jobs` under `s`, both timings.
nlohmann::json Truth(const std::vector<ReplayJob>& jobs, const ReplaySettings& s) {
  testutil::TempDir dir;
  {
    std::ofstream out(dir.File("jobs.csv"));
    for (const ReplayJob& j : jobs) {
      out << j.sample_offset_ns << ',' << j.actuation_offset_ns << ',' << (j.executed ? 1 : 0)
          << '\n';
    }
  }
  const int64_t horizon_ns = s.horizon_s > 0 ? std::llround(s.horizon_s * 1e9)
                                             : static_cast<int64_t>(jobs.size()) * s.period_ns;
  return RunTruth(dir.File("jobs.csv"), s, horizon_ns);
}

void ExpectMatchesTruth(const ReplayResult& r, const nlohmann::json& t) {
  ASSERT_TRUE(t.contains("cost")) << t.dump();
  const double cost = t["cost"].get<double>();
  const double ideal = t["ideal_cost"].get<double>();
  EXPECT_NEAR(r.cost, cost, 1e-6 * cost);
  EXPECT_NEAR(r.ideal_cost, ideal, 1e-6 * ideal);
  // The percentage from the truth's two costs (1e-6 relative on each: 2e-4 points at most).
  EXPECT_NEAR(r.cost_increase_pct, 100.0 * (cost / ideal - 1.0), 2e-4);
  EXPECT_NEAR(r.peak_error_rad, t["peak_rad"].get<double>(), 1e-6 * r.peak_error_rad);
  EXPECT_NEAR(r.ideal_peak_error_rad, t["ideal_peak_rad"].get<double>(),
              1e-6 * r.ideal_peak_error_rad);
  EXPECT_EQ(r.worst_stall_ns, t["worst_stall_ns"].get<int64_t>());
}

TEST(ControlCostTest, DefaultsAreTheDocumentedOnes) {
  // docs/control.md, "Control cost" lists these numbers; the truth script gets them from here.
  const ReplaySettings s;
  EXPECT_EQ(s.period_ns, 4 * kMs);
  EXPECT_DOUBLE_EQ(s.inertia_kg_m2, 0.0023);
  EXPECT_DOUBLE_EQ(s.torque_per_unit_nm, 0.25);
  EXPECT_DOUBLE_EQ(s.motor_time_constant_s, 0.02);
  EXPECT_DOUBLE_EQ(kDefaultKp, 1.656);
  EXPECT_DOUBLE_EQ(kDefaultKd, 0.1932);
  EXPECT_DOUBLE_EQ(s.q_angle, 1.0);
  EXPECT_DOUBLE_EQ(s.q_rate, 0.01);
  EXPECT_DOUBLE_EQ(s.r_command, 0.01);
  EXPECT_DOUBLE_EQ(s.initial_angle_rad, 0.0);
  EXPECT_DOUBLE_EQ(s.disturbance_nm, 0.02);
  EXPECT_DOUBLE_EQ(s.disturbance_at_s, 0.2);
  EXPECT_DOUBLE_EQ(s.disturbance_on_s, 0.25);
  EXPECT_DOUBLE_EQ(s.disturbance_repeat_s, 0.5);
  EXPECT_EQ(s.peak_step_ns, kMs / 2);
  // The default gains are the pole placement the docs state: J tau s^3 + J s^2 + K kd s + K kp
  // = J tau (s + 20)(s^2 + 30 s + 450).
  const double j_tau = s.inertia_kg_m2 * s.motor_time_constant_s;
  EXPECT_NEAR(s.torque_per_unit_nm * kDefaultKd / j_tau, 1050.0, 1e-9);
  EXPECT_NEAR(s.torque_per_unit_nm * kDefaultKp / j_tau, 9000.0, 1e-9);
}

TEST(ControlCostTest, DefaultGainsAreStableWithMargin) {
  // docs/control.md: per-period eigenvalue moduli 0.943 under ideal timing, 0.948 with a full
  // period of delay (scipy, from the model's parameters).
  const auto design = RunTruth("design", ReplaySettings{}, 0);
  ASSERT_TRUE(design.contains("no_delay")) << design.dump();
  EXPECT_NEAR(design["no_delay"].get<double>(), 0.943, 5e-4);
  EXPECT_NEAR(design["period_delay"].get<double>(), 0.948, 5e-4);
}

TEST(ControlCostTest, ZeroDelayCostsTheIdeal) {
  const ReplayResult r = MustReplay(ConstantJobs(1000, 0, 0));
  EXPECT_GT(r.ideal_cost, 0.0);
  EXPECT_DOUBLE_EQ(r.cost, r.ideal_cost);
  EXPECT_NEAR(r.cost_increase_pct, 0.0, 1e-10);
  EXPECT_DOUBLE_EQ(r.peak_error_rad, r.ideal_peak_error_rad);
  EXPECT_EQ(r.worst_stall_ns, 4 * kMs);
  EXPECT_EQ(r.jobs, 1000u);
  EXPECT_EQ(r.skipped, 0u);
  EXPECT_EQ(r.beyond_horizon, 0u);
  EXPECT_DOUBLE_EQ(r.horizon_s, 4.0);
  EXPECT_EQ(DescribeReplayResult(r).rfind("+0.0 % cost vs ideal timing; worst stall 4.0 ms", 0), 0u)
      << DescribeReplayResult(r);
}

TEST(ControlCostTest, ConstantDelayMatchesScipy) {
  // Sampled 0.1 ms after each release, applied 1 ms after it.
  const auto jobs = ConstantJobs(1000, kMs / 10, kMs);
  const ReplaySettings s;
  const ReplayResult r = MustReplay(jobs, s);
  EXPECT_GT(r.cost, r.ideal_cost);
  // The gusts' steady offset d / (K kp) = 0.0483 rad bounds the peak from below.
  EXPECT_GT(r.ideal_peak_error_rad, 0.02 / (0.25 * 1.656));
  ExpectMatchesTruth(r, Truth(jobs, s));
}

TEST(ControlCostTest, JitterSkipsAndAnInitialAngleMatchScipy) {
  // Varying offsets (a deterministic LCG), a skipped release, an overrun past the next
  // release, a 10 degree start and non-default gains: every path of the replay.
  std::vector<ReplayJob> jobs;
  uint64_t state = 12345;
  for (int k = 0; k < 200; ++k) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t sample = static_cast<int64_t>((state >> 33) % 300'000);
    const int64_t exec = 50'000 + static_cast<int64_t>((state >> 13) % 1'500'000);
    jobs.push_back({sample, sample + exec, true});
  }
  jobs[60].executed = false;
  jobs[61].actuation_offset_ns = 5 * kMs;  // Lands after release 62's sample.
  ReplaySettings s;
  s.initial_angle_rad = 0.1745;
  s.kp = 2.0;
  s.kd = 0.25;
  s.disturbance_at_s = 0.1;
  s.disturbance_on_s = 0.15;
  s.disturbance_repeat_s = 0.3;
  const ReplayResult r = MustReplay(jobs, s);
  EXPECT_EQ(r.skipped, 1u);
  EXPECT_EQ(r.jobs, 199u);
  EXPECT_DOUBLE_EQ(r.peak_error_rad, 0.1745);  // The start is the peak.
  ExpectMatchesTruth(r, Truth(jobs, s));
}

TEST(ControlCostTest, LongerDelayNeverCostsLess) {
  double previous = -1;
  for (const int64_t delay_us : {0, 500, 1000, 2000, 3000}) {
    const ReplayResult r = MustReplay(ConstantJobs(500, 0, delay_us * 1000));
    EXPECT_GT(r.cost, previous) << "delay " << delay_us << " us";
    previous = r.cost;
  }
}

TEST(ControlCostTest, TwoSkippedReleasesStallTwelveMilliseconds) {
  // The first gust starts at 0.2 s = release 50; releases 51 and 52 are lost in its transient.
  auto jobs = ConstantJobs(250, 0, 0);
  jobs[51].executed = false;
  jobs[52].executed = false;
  const ReplaySettings s;
  const ReplayResult r = MustReplay(jobs, s);
  EXPECT_EQ(r.worst_stall_ns, 12 * kMs);
  EXPECT_EQ(r.skipped, 2u);
  EXPECT_EQ(r.jobs, 248u);
  EXPECT_GT(r.cost, r.ideal_cost);
  EXPECT_GT(r.cost_increase_pct, 0.0);
  ExpectMatchesTruth(r, Truth(jobs, s));

  auto one = ConstantJobs(250, 0, 0);
  one[51].executed = false;
  const ReplayResult single = MustReplay(one, s);
  EXPECT_EQ(single.worst_stall_ns, 8 * kMs);
  EXPECT_GT(single.cost, single.ideal_cost);
  EXPECT_LT(single.cost, r.cost);
}

TEST(ControlCostTest, HorizonCutsAndCountsLateActuations) {
  auto jobs = ConstantJobs(100, 0, kMs);
  ReplaySettings s;
  s.horizon_s = 0.3985;  // Job 99 (released at 0.396 s) actuates at 0.397 s, inside it.
  const ReplayResult in = MustReplay(jobs, s);
  EXPECT_EQ(in.beyond_horizon, 0u);
  s.horizon_s = 0.3965;  // Now after it.
  const ReplayResult cut = MustReplay(jobs, s);
  EXPECT_EQ(cut.beyond_horizon, 1u);
  EXPECT_DOUBLE_EQ(cut.horizon_s, 0.3965);
  EXPECT_NE(DescribeReplayResult(cut).find("1 actuation(s) after the horizon not replayed"),
            std::string::npos);
  ExpectMatchesTruth(cut, Truth(jobs, s));
}

TEST(ControlCostTest, StepResponseSettles) {
  // No gusts, a 10 degree start: the loop settles, so the cost after 2 s adds (almost) nothing.
  ReplaySettings s;
  s.disturbance_nm = 0;
  s.initial_angle_rad = 0.1745;
  const ReplayResult two = MustReplay(ConstantJobs(500, 0, 0), s);
  const ReplayResult four = MustReplay(ConstantJobs(1000, 0, 0), s);
  EXPECT_GT(two.ideal_cost, 0.0);
  EXPECT_NEAR(four.ideal_cost, two.ideal_cost, 1e-12 * two.ideal_cost);
}

TEST(ControlCostTest, NoIdealCostSaysSo) {
  ReplaySettings s;
  s.disturbance_nm = 0;
  const ReplayResult r = MustReplay(ConstantJobs(10, 0, kMs), s);
  EXPECT_DOUBLE_EQ(r.ideal_cost, 0.0);
  EXPECT_TRUE(std::isnan(r.cost_increase_pct));
  EXPECT_EQ(DescribeReplayResult(r).rfind("cost vs ideal timing unknown (the ideal cost is 0)", 0),
            0u)
      << DescribeReplayResult(r);
}

TEST(ControlCostTest, DescribesTheResultInOneSentence) {
  ReplayResult r;
  r.cost_increase_pct = 4.234;
  r.worst_stall_ns = 9'000'000;
  r.peak_error_rad = 0.8 * 3.14159265358979323846 / 180.0;
  r.ideal_peak_error_rad = 0.6 * 3.14159265358979323846 / 180.0;
  EXPECT_EQ(DescribeReplayResult(r),
            "+4.2 % cost vs ideal timing; worst stall 9.0 ms, peak error 0.80 deg (ideal 0.60 "
            "deg)");
}

TEST(ControlCostTest, AStallThatLosesControlIsSaidSoNotPrintedAsANumber) {
  // A 1.5 s stall from the first gust on (release 50): the plant coasts open-loop under the
  // gust, far beyond the small-angle model. The result says control was lost.
  auto jobs = ConstantJobs(1000, 0, 0);
  for (size_t k = 51; k < 51 + 375; ++k) jobs[k].executed = false;
  const ReplayResult r = MustReplay(jobs);
  EXPECT_TRUE(r.outside_model);
  EXPECT_GT(r.peak_error_rad, kReplayModelRangeRad);
  const std::string text = DescribeReplayResult(r);
  EXPECT_EQ(text.rfind("control lost: under the measured timing (worst stall 1504.0 ms)", 0), 0u)
      << text;
  EXPECT_EQ(text.find("% cost"), std::string::npos) << text;
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;

  // Within the model's range nothing is flagged.
  EXPECT_FALSE(MustReplay(ConstantJobs(500, 0, kMs)).outside_model);

  // An unbounded error reads as such, not as "inf".
  ReplayResult unbounded;
  unbounded.outside_model = true;
  unbounded.cost = std::numeric_limits<double>::infinity();
  unbounded.peak_error_rad = std::numeric_limits<double>::infinity();
  unbounded.worst_stall_ns = 2'000'000'000;
  EXPECT_EQ(DescribeReplayResult(unbounded),
            "control lost: under the measured timing (worst stall 2000.0 ms) the attitude error "
            "grows without bound (ideal timing 0.00 deg), beyond the linearised model's 29 deg "
            "range, so no cost percentage is given");
}

TEST(ControlCostTest, ASmallIncreaseIsNotPrintedAsZero) {
  EXPECT_EQ(FormatCostIncreasePct(4.234), "+4.2");
  EXPECT_EQ(FormatCostIncreasePct(0.0), "+0.0");
  EXPECT_EQ(FormatCostIncreasePct(0.004234), "+0.0042");
  EXPECT_EQ(FormatCostIncreasePct(-0.05), "-0.05");
  EXPECT_EQ(FormatCostIncreasePct(0.1), "+0.1");
}

TEST(ControlCostTest, DescribesEverySetting) {
  const std::string text = DescribeReplaySettings(ReplaySettings{});
  for (const char* number :
       {"J = 0.0023 kg m^2", "K = 0.25 N m", "tau = 0.02 s", "kp = 1.656 1/rad",
        "kd = 0.1932 s/rad (defaults)", "period 4 ms", "1 angle^2 + 0.01 rate^2 + 0.01 u^2",
        "initial angle 0 rad", "0.02 N m gusts of 0.25 s every 0.5 s from 0.2 s",
        "horizon: the releases' span", "Van Loan", "every 0.5 ms"}) {
    EXPECT_NE(text.find(number), std::string::npos) << number << " in\n" << text;
  }
  ReplaySettings single;
  single.disturbance_repeat_s = 0;
  single.disturbance_on_s = 0;
  single.horizon_s = 2;
  const std::string step = DescribeReplaySettings(single);
  EXPECT_NE(step.find("a 0.02 N m step from 0.2 s on"), std::string::npos) << step;
  EXPECT_NE(step.find("horizon: 2 s"), std::string::npos) << step;
}

TEST(ControlCostTest, BadInputNamesTheJobAndTheFix) {
  auto expect_usage = [](const std::vector<ReplayJob>& jobs, const ReplaySettings& s,
                         const std::vector<std::string>& words) {
    const auto r = ReplayControlCost(jobs, s);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ExitCode::kUsage);
    for (const auto& w : words) {
      EXPECT_NE(r.error().message.find(w), std::string::npos) << w << " in " << r.error().message;
    }
  };
  expect_usage({}, {}, {"no job to replay"});
  auto negative = ConstantJobs(10, 0, kMs);
  negative[3].sample_offset_ns = -5;
  expect_usage(negative, {}, {"job 3", "sample offset -5 ns", ">= 0"});
  auto before = ConstantJobs(10, 0, kMs);
  before[7] = {200'000, 100'000, true};
  expect_usage(before, {}, {"job 7", "actuation offset 100000 ns", "sample offset 200000 ns"});
  // A skipped release's offsets mean nothing and are not judged.
  auto skipped = ConstantJobs(10, 0, kMs);
  skipped[4] = {-1, -1, false};
  EXPECT_TRUE(ReplayControlCost(skipped, {}).has_value());
  ReplaySettings zero_period;
  zero_period.period_ns = 0;
  expect_usage(ConstantJobs(10, 0, 0), zero_period, {"period 0", "> 0"});
  ReplaySettings gust;
  gust.disturbance_on_s = 0.6;  // Longer than its 0.5 s repeat.
  expect_usage(ConstantJobs(10, 0, 0), gust, {"disturbance repeat 0.5", "duration <= repeat"});
  ReplaySettings endless;
  endless.horizon_s = 1e300;
  expect_usage(ConstantJobs(10, 0, 0), endless, {"horizon of 1e+300 s", "shorter horizon"});
}

}  // namespace
}  // namespace rtpulse::stats
