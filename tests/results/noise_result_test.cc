// rtpulse noise's results (results/noise_result.h): the figures derived from a CPU's record,
// the JSON document in oslat's layout with rtpulse's exact block, which reads back, oslat's
// text and the events file.
#include "results/noise_result.h"

#include <gtest/gtest.h>

#include <string>

namespace rtpulse::results {
namespace {

/// 2 s on CPU 3: 1,000,000 gaps, 3 events of 10, 20 and 30 us (60 us of noise).
NoiseRun NoiseExample() {
  NoiseRun run;
  run.rtpulse_version = "1.2.3";
  run.cmdline = "rtpulse noise -c 3";
  run.start_realtime_ns = 1'700'000'000'000'000'000;
  run.end_realtime_ns = run.start_realtime_ns + 2'000'000'000;
  run.policy = "fifo";
  run.priority = 95;
  run.threshold_ns = 5000;
  run.bucket_width_ns = 1000;
  run.duration_planned_ns = 2'000'000'000;
  run.kernel = "6.1.0-rt #1 SMP PREEMPT_RT";
  run.machine = "aarch64";
  run.realtime_kernel = true;
  run.warnings = {"RT throttling is on"};
  NoiseCpu c;
  c.cpu = 3;
  c.tid = 42;
  c.duration_ns = 2'000'000'000;
  c.gaps = 1'000'000;
  c.min_gap_ns = 35;
  c.max_gap_ns = 30'000;
  c.histogram = {999'997, 0, 0, 3};  // 4 buckets: the last holds the 10, 20 and 30 us gaps
  c.events = 3;
  c.noise_ns = 60'000;
  c.kept = {{100, 10'000}, {200'000, 20'000}, {900'000, 30'000}};
  run.cpus.push_back(c);
  return run;
}

TEST(NoiseResultTest, AvailableNoisePerSecondAndMeanGapComeFromTheRecord) {
  const NoiseRun run = NoiseExample();
  const NoiseCpu& c = run.cpus[0];
  EXPECT_DOUBLE_EQ(c.AvailablePercent(), 100.0 * (1 - 60'000.0 / 2e9));
  EXPECT_DOUBLE_EQ(c.NoisePerSecondNs(), 30'000.0);
  EXPECT_DOUBLE_EQ(c.MeanGapNs(), 2000.0);
  EXPECT_DOUBLE_EQ(NoiseCpu{}.AvailablePercent(), 0.0) << "no duration: nothing to give";
}

TEST(NoiseResultTest, JsonHasOslatsLayoutAndReadsBack) {
  const NoiseRun run = NoiseExample();
  const nlohmann::json doc = ToJson(run);
  const nlohmann::json& t = doc["thread"]["0"];
  EXPECT_EQ(t["cpu"], 3);
  EXPECT_EQ(t["min"], 1) << "oslat's whole us, rounded up";
  EXPECT_EQ(t["max"], 30);
  EXPECT_DOUBLE_EQ(t["avg"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(t["duration"].get<double>(), 2.0);
  EXPECT_EQ(t["histogram"]["1"], 999'997);
  EXPECT_EQ(t["histogram"]["4"], 3);
  EXPECT_EQ(doc["num_threads"], 1);
  EXPECT_EQ(doc["return_code"], 0);
  EXPECT_EQ(doc["rtpulse"]["cpus"][0]["available_percent"], run.cpus[0].AvailablePercent());
  auto back = NoiseRunFromJson(doc);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(ToJson(*back), doc);
  nlohmann::json broken = doc;
  broken["rtpulse"]["cpus"][0]["noise_ns"] = "lots";
  auto bad = NoiseRunFromJson(broken);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("rtpulse.cpus.0.noise_ns"), std::string::npos)
      << bad.error().message;
}

TEST(NoiseResultTest, OslatTextSummaryAndEvents) {
  NoiseRun run = NoiseExample();
  const std::string text = FormatOslatText(run);
  EXPECT_NE(text.find("        Core:\t 3\n    001 (us):\t 999997\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    004 (us):\t 3 (including overflows)\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("     Minimum:\t 1 (us)\n     Average:\t 2.000 (us)\n     Maximum:\t 30 (us)\n"
                "     Max-Min:\t 29 (us)\n    Duration:\t 2.000 (sec)\n"),
      std::string::npos)
      << text;
  run.bucket_width_ns = 500;
  EXPECT_NE(FormatOslatText(run).find("    500 (ns):\t 999997\n    1000 (ns):\t 0\n"),
            std::string::npos)
      << "a width that is not whole us is labelled in ns";
  const std::string summary = FormatNoiseSummary(run);
  EXPECT_NE(summary.find("99.9970"), std::string::npos) << summary;
  EXPECT_NE(summary.find("warning: RT throttling is on"), std::string::npos) << summary;
  EXPECT_EQ(FormatNoiseEvents(run),
            "cpu,start_ns,gap_ns\n3,100,10000\n3,200000,20000\n3,900000,30000\n");
}

}  // namespace
}  // namespace rtpulse::results
