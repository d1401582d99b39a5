// `rtpulse monitor` end to end: the binary on the Pi 5 fixture tree (RTPULSE_SYSROOT) with
// the fake vcgencmd first on PATH, the same code path a Raspberry Pi takes.

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <sstream>

#include "monitor/monitor_test_util.h"
#include "support/subprocess.h"

namespace rtpulse::monitor {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

testutil::ProcessOptions PiEnvironment(const testing::PiFixture& pi) {
  testutil::ProcessOptions o;
  o.extra_env = {"RTPULSE_SYSROOT=" + pi.root(), "PATH=" + pi.bin() + ":/usr/bin:/bin"};
  return o;
}

TEST(MonitorCli, PiFixtureRunWritesLogAndStats) {
  testing::PiFixture pi;
  const std::string out = pi.out() + "/run";
  auto r = testutil::RunRtpulse(
      {"monitor", "--interval", "100ms", "--duration", "1s", "--out", out}, PiEnvironment(pi));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto csv = Lines(testutil::ReadFile(out + "/thermal_power_log.csv"));
  ASSERT_GE(csv.size(), 6u) << "expected about 10 samples in 1 s at 100 ms";
  EXPECT_EQ(csv[0].rfind("timestamp,elapsed_s,temp_zone0_cpu_thermal_c,cpu0_freq_mhz,", 0), 0u);
  EXPECT_NE(csv[0].find(",throttled_raw,under_voltage_now,"), std::string::npos);
  // The fake walks 0x0, 0x50005, 0x50000, then repeats 0x50005: two rising edges each.
  EXPECT_NE(csv[1].find(",0x0,0,0,0,0,1.53,5.1,0.72,"), std::string::npos) << csv[1];
  EXPECT_NE(csv[2].find(",0x50005,1,0,1,0,1.53,5.1,0.72,"), std::string::npos) << csv[2];
  const std::string stats = testutil::ReadFile(out + "/power_thermal_stats.txt");
  EXPECT_NE(stats.find("  under_voltage_now          2\n"), std::string::npos) << stats;
  EXPECT_NE(stats.find("  throttled_now              2\n"), std::string::npos) << stats;
  EXPECT_NE(stats.find("  total                      4\n"), std::string::npos) << stats;
  EXPECT_NE(stats.find("excludes conversion losses"), std::string::npos);
  EXPECT_NE(stats.find("\n  - sampler thread runs at SCHED_IDLE\n"), std::string::npos) << stats;
  EXPECT_EQ(r.out, stats) << "stdout shows the stats file";
}

TEST(MonitorCli, SigtermEndsEarlyWithStats) {
  testing::PiFixture pi;
  auto options = PiEnvironment(pi);
  options.signal = SIGTERM;
  options.signal_after = std::chrono::milliseconds(700);
  auto r = testutil::RunRtpulse({"monitor", "--interval", "100ms", "--out", pi.out()}, options);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_LT(r.signal_to_exit_seconds, 2.0);
  const std::string stats = testutil::ReadFile(pi.out() + "/power_thermal_stats.txt");
  EXPECT_NE(stats.find(" logged (interrupted)\n"), std::string::npos) << stats;
  EXPECT_GE(Lines(testutil::ReadFile(pi.out() + "/thermal_power_log.csv")).size(), 3u);
}

TEST(MonitorCli, BadInputIsOneLineExit2) {
  testutil::TempDir dir;
  auto zero = testutil::RunRtpulse({"monitor", "--interval", "0", "--out", dir.path()});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.err, "rtpulse: error: --interval must be greater than 0 (e.g. 5s or 500ms)\n");
  EXPECT_TRUE(dir.List().empty());
  auto unwritable = testutil::RunRtpulse({"monitor", "--out", "/proc/rtpulse-monitor-test"});
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_EQ(Lines(unwritable.err).size(), 1u) << unwritable.err;
  EXPECT_EQ(unwritable.err.rfind("rtpulse: error: --out '/proc/rtpulse-monitor-test'", 0), 0u)
      << unwritable.err;
}

TEST(MonitorCli, RealMachineWithoutPiSourcesStillRuns) {
  testutil::TempDir dir;
  testutil::ProcessOptions o;
  o.extra_env = {"PATH=" + dir.path()};  // no vcgencmd here
  auto r = testutil::RunRtpulse(
      {"monitor", "--interval", "100ms", "--duration", "300ms", "--out", dir.path()}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("rtpulse: note: vcgencmd: not found on PATH"), std::string::npos);
  const bool thermal = std::filesystem::exists("/sys/class/thermal/thermal_zone0/temp");
  EXPECT_EQ(r.err.find("rtpulse: note: thermal: ") != std::string::npos, !thermal) << r.err;
  EXPECT_GE(Lines(testutil::ReadFile(dir.File("thermal_power_log.csv"))).size(), 3u);
}

}  // namespace
}  // namespace rtpulse::monitor
