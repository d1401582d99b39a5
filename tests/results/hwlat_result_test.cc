// rtpulse hwlat's results (results/hwlat_result.h): the samples derived from a noise run with
// causes (each explained gap's unaccounted time above the threshold), MTBF, the histogram,
// the hard limit, the JSON that reads back, hwlatdetect's report and the summary.
#include "results/hwlat_result.h"

#include <gtest/gtest.h>

#include <string>

namespace rtpulse::results {
namespace {

constexpr int64_t kRealtime = 1'700'000'000'000'000'000;
constexpr int64_t kMono = 5'000'000'000;

NoiseEventRow Event(int64_t start, int64_t gap, std::optional<int64_t> unaccounted) {
  NoiseEventRow e;
  e.start_ns = start;
  e.gap_ns = gap;
  if (unaccounted) {
    // The rest of the gap went to an IRQ.
    e.kind_ns = std::array<int64_t, kNoiseCauseKinds>{gap - *unaccounted, 0, 0, 0, 0, *unaccounted};
  }
  return e;
}

/// Two CPUs, 4 s each; threshold 10 us.
NoiseRun Loops() {
  NoiseRun run;
  run.rtpulse_version = "1.2.3";
  run.cmdline = "rtpulse hwlat --cpu-list 1,2";
  run.start_realtime_ns = kRealtime;
  run.start_monotonic_ns = kMono;
  run.end_realtime_ns = kRealtime + 4'000'000'000;
  run.duration_planned_ns = 4'000'000'000;
  run.kernel = "6.1.0";
  run.machine = "x86_64";
  run.explain = true;
  run.warnings = {"running in a virtual machine"};
  NoiseCpu a;
  a.cpu = 1;
  a.duration_ns = 4'000'000'000;
  a.gaps = 100;
  a.kept = {Event(kMono + 1'000'000, 30'000, 25'000),         // sample: 25 us
            Event(kMono + 2'000'000, 40'000, 9'000),          // unaccounted at or below 10 us: none
            Event(kMono + 3'000'000, 12'000, std::nullopt)};  // not explained
  a.events = 4;
  a.events_not_kept = 1;
  NoiseCpu b;
  b.cpu = 2;
  b.duration_ns = 4'000'000'000;
  b.gaps = 200;
  b.kept = {Event(kMono + 1'500'000, 11'000, 10'001)};  // sample: 10.001 us
  b.events = 1;
  run.cpus = {a, b};
  return run;
}

TEST(HwlatResultTest, SamplesAreTheExplainedGapsUnaccountedTimeAboveTheThreshold) {
  const HwlatRun run = HwlatFromNoise(Loops(), 10'000);
  EXPECT_EQ(run.mode, "loop");
  ASSERT_EQ(run.samples.size(), 2u);
  EXPECT_EQ(run.samples[0].cpu, 1) << "in time order across CPUs";
  EXPECT_EQ(run.samples[0].latency_ns, 25'000);
  EXPECT_EQ(run.samples[0].gap_ns, 30'000);
  EXPECT_EQ(run.samples[0].realtime_ns, kRealtime + 1'000'000);
  EXPECT_EQ(run.samples[1].cpu, 2);
  EXPECT_EQ(run.samples[1].latency_ns, 10'001);
  ASSERT_EQ(run.cpus.size(), 2u);
  EXPECT_EQ(run.cpus[0].examined, 2u);
  EXPECT_EQ(run.cpus[0].not_examined, 2u) << "one not explained, one not kept";
  EXPECT_EQ(run.cpus[1].examined, 1u);
  EXPECT_EQ(run.MaxNs(), 25'000);
  EXPECT_DOUBLE_EQ(run.MeasuredSeconds(), 8.0);
  ASSERT_TRUE(run.MtbfSeconds());
  EXPECT_DOUBLE_EQ(*run.MtbfSeconds(), 4.0) << "8 s measured, 2 samples";
  EXPECT_EQ(run.HistogramUs(), (std::map<int64_t, uint64_t>{{11, 1}, {25, 1}}));
  EXPECT_TRUE(run.Failed()) << "the hard limit defaults to the threshold";
  HwlatRun lenient = run;
  lenient.hardlimit_ns = 25'000;
  EXPECT_FALSE(lenient.Failed()) << "at the limit is not above it";
  const HwlatRun none = HwlatFromNoise(Loops(), 30'000);
  EXPECT_TRUE(none.samples.empty());
  EXPECT_FALSE(none.MtbfSeconds()) << "no sample: no MTBF, only a lower bound";
  EXPECT_FALSE(none.Failed());
}

TEST(HwlatResultTest, JsonReadsBackAndCarriesTheDerivedFigures) {
  const HwlatRun run = HwlatFromNoise(Loops(), 10'000);
  const nlohmann::json doc = ToJson(run);
  EXPECT_EQ(doc["count"], 2);
  EXPECT_EQ(doc["max_ns"], 25'000);
  EXPECT_DOUBLE_EQ(doc["mtbf_s"].get<double>(), 4.0);
  EXPECT_EQ(doc["histogram_us"]["25"], 1);
  EXPECT_EQ(doc["failed"], true);
  auto back = HwlatRunFromJson(doc);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(ToJson(*back), doc);
  nlohmann::json broken = doc;
  broken["samples"][1]["latency_ns"] = "big";
  auto bad = HwlatRunFromJson(broken);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("samples.1.latency_ns"), std::string::npos)
      << bad.error().message;
  EXPECT_TRUE(ToJson(HwlatFromNoise(Loops(), 30'000))["mtbf_s"].is_null());
}

TEST(HwlatResultTest, HwlatdetectsReportAndTheSummary) {
  HwlatRun run = HwlatFromNoise(Loops(), 10'000);
  run.hardlimit_ns = 20'000;
  run.mode_reason = "the kernel has no hwlat tracer (CONFIG_HWLAT_TRACER)";
  EXPECT_EQ(FormatHwlatdetectReport(run),
            "hwlatdetect:  test duration 4 seconds\n"
            "   detector: loop\n"
            "   parameters:\n"
            "        CPU list:          1,2\n"
            "        Latency threshold: 10us\n"
            "        Sample window:     4000000us\n"
            "        Sample width:      4000000us\n"
            "     Non-sampling period:  0us\n"
            "\n"
            "Starting test\n"
            "test finished\n"
            "Max Latency: 25us\n"
            "Samples recorded: 2\n"
            "Samples exceeding threshold: 2\n"
            "ts: 1700000000.001000000, inner:25, outer:0, cpu:1\n"
            "ts: 1700000000.001500000, inner:11, outer:0, cpu:2\n");
  const std::string summary = FormatHwlatSummary(run);
  EXPECT_NE(summary.find("hwlat: loop mode (the kernel has no hwlat tracer (CONFIG_HWLAT_TRACER)), "
                         "threshold 10000 ns, hard limit 20000 ns\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("MTBF 4.000 s (2 samples in 8.000 s measured)\n"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("cpu 1: 2 gaps above the threshold were not attributed"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("FAIL: max 25000 ns is above the hard limit 20000 ns\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("warning: running in a virtual machine\n"), std::string::npos);
  const HwlatRun quiet = HwlatFromNoise(Loops(), 30'000);
  EXPECT_NE(FormatHwlatdetectReport(quiet).find("Max Latency: Below threshold\n"),
            std::string::npos);
  EXPECT_NE(FormatHwlatSummary(quiet).find("no sample in 8.000 s measured: MTBF above that\n"),
            std::string::npos);
  EXPECT_NE(FormatHwlatSummary(quiet).find("PASS: max 0 ns, hard limit 30000 ns\n"),
            std::string::npos);
}

}  // namespace
}  // namespace rtpulse::results
