// rtpulse noise's results (results/noise_result.h): the figures derived from a CPU's record,
// the JSON document in oslat's layout with rtpulse's exact block, which reads back, oslat's
// text and the events file.
#include "results/noise_result.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

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
  for (const auto& [start, gap] :
       {std::pair<int64_t, int64_t>{100, 10'000}, {200'000, 20'000}, {900'000, 30'000}}) {
    NoiseEventRow& e = c.kept.emplace_back();
    e.start_ns = start;
    e.gap_ns = gap;
  }
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

// --explain: the causes of the example's events (two of three explained), written, read
// back, summarised and listed per event.
TEST(NoiseResultTest, CausesAreWrittenReadBackSummarisedAndListedPerEvent) {
  NoiseRun run = NoiseExample();
  run.explain = true;
  NoiseCpu& c = run.cpus[0];
  // Event 0: 10 us = 6 irq + 4 unaccounted; event 1: 20 us = 15 thread + 5 switch-in.
  c.kept[0].kind_ns = std::array<int64_t, kNoiseCauseKinds>{6000, 0, 0, 0, 0, 4000};
  c.kept[0].largest = "irq 11 arch_timer";
  c.kept[1].kind_ns = std::array<int64_t, kNoiseCauseKinds>{0, 0, 15000, 5000, 0, 0};
  c.kept[1].largest = "thread hog \"x\" 800 rt 99";
  NoiseCauses& causes = c.causes.emplace();
  causes.explained = 2;
  causes.not_explained = 1;
  causes.explained_ns = 30'000;
  causes.kind_ns = {6000, 0, 15000, 5000, 0, 4000};
  causes.kind_events = {1, 0, 1, 1, 0, 1};
  causes.rows = {{"thread", "hog \"x\" 800 rt 99", 15000, 1, 15000},
                 {"irq", "irq 11 arch_timer", 6000, 1, 6000},
                 {"switch-in", "switch-in", 5000, 1, 5000},
                 {"unaccounted", "unaccounted", 4000, 1, 4000}};
  const nlohmann::json doc = ToJson(run);
  const nlohmann::json& j = doc["rtpulse"]["cpus"][0]["causes"];
  EXPECT_EQ(j["explained"], 2);
  EXPECT_EQ(j["not_explained"], 1);
  EXPECT_EQ(j["by_kind"]["thread"]["ns"], 15000);
  EXPECT_EQ(j["by_kind"]["switch-in"]["events"], 1);
  EXPECT_EQ(j["rows"][0]["name"], "hog \"x\" 800 rt 99");
  auto back = NoiseRunFromJson(doc);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(ToJson(*back), doc);
  ASSERT_TRUE(back->cpus[0].causes);
  EXPECT_EQ(back->cpus[0].causes->kind_ns, causes.kind_ns);

  const std::string summary = FormatNoiseSummary(run);
  EXPECT_NE(summary.find("cpu 3 causes: 2 of 3 events explained (30000 ns): irq 20.0 % (6000 ns "
                         "in 1 events), thread 50.0 % (15000 ns in 1 events), switch-in 16.7 % "
                         "(5000 ns in 1 events), unaccounted 13.3 % (4000 ns in 1 events)\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("  thread hog \"x\" 800 rt 99: 15000 ns in 1 events, at most 15000 ns "
                         "in one\n"),
            std::string::npos)
      << summary;
  EXPECT_EQ(FormatNoiseEvents(run),
            "cpu,start_ns,gap_ns,irq_ns,softirq_ns,thread_ns,switch-in_ns,idle_ns,unaccounted_ns,"
            "largest\n"
            "3,100,10000,6000,0,0,0,0,4000,\"irq 11 arch_timer\"\n"
            "3,200000,20000,0,0,15000,5000,0,0,\"thread hog \"\"x\"\" 800 rt 99\"\n"
            "3,900000,30000,,,,,,,\n")
      << "an event not explained has empty cause fields";

  // A file from before --explain: no "explain", no "causes".
  nlohmann::json old = ToJson(NoiseExample());
  old["rtpulse"].erase("explain");
  auto read_old = NoiseRunFromJson(old);
  ASSERT_TRUE(read_old) << read_old.error().message;
  EXPECT_FALSE(read_old->explain);
  EXPECT_FALSE(read_old->cpus[0].causes);
}

}  // namespace
}  // namespace rtpulse::results
