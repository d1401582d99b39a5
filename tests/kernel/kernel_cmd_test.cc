// `rtpulse kernel verify` end to end: the binary, its output and its exit codes.
#include <gtest/gtest.h>

#include <string>

#include "kernel/run_command.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using testing::RunCommand;

const std::string kData = std::string(RTPULSE_TEST_DATA) + "/kernel/";

std::string Rtpulse(const std::string& args, const std::string& sysroot = "") {
  std::string env = sysroot.empty() ? "" : "RTPULSE_SYSROOT=" + kData + sysroot + " ";
  return env + RTPULSE_BINARY + std::string(" ") + args;
}

TEST(KernelVerifyCli, RtConfigPassesWithExitZero) {
  auto r = RunCommand(Rtpulse("kernel verify --config " + kData + "configs/pi5-rt.config"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("set      CONFIG_PREEMPT_RT=y"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PASS:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Linux 6.12.47 arm64"), std::string::npos) << r.output;
}

TEST(KernelVerifyCli, StockConfigFailsWithExitOneAndSaysWhy) {
  auto r = RunCommand(Rtpulse("kernel verify --config " + kData + "configs/pi5-stock.config"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("missing  CONFIG_PREEMPT_RT=y  (config: absent)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("dropped  CONFIG_EXPERT=y  (config: is not set)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("why: PREEMPT_RT depends on EXPERT"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FAIL:"), std::string::npos) << r.output;
}

TEST(KernelVerifyCli, QuietListsOnlyWhatIsNotSet) {
  auto r = RunCommand(Rtpulse("kernel verify -q --config " + kData + "configs/pi5-stock.config"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output.find("  set "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("missing"), std::string::npos) << r.output;
}

TEST(KernelVerifyCli, NtpPpsFragmentIsExplained) {
  auto r = RunCommand(Rtpulse("kernel verify --config " + kData +
                              "configs/ntp-pps-nohz.config --fragment " + kData +
                              "fragments/ntp-pps.config"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("NTP_PPS depends on !NO_HZ_COMMON"), std::string::npos) << r.output;
}

TEST(KernelVerifyCli, RunningReadsProcConfigGzThroughTheSysroot) {
  auto r = RunCommand(Rtpulse("kernel verify --running", "sysroot-rt"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("/proc/config.gz of the running kernel 6.12.47-v8-16k-rt"),
            std::string::npos)
      << r.output;
}

TEST(KernelVerifyCli, RunningFallsBackToBootConfigAndFails) {
  auto r = RunCommand(Rtpulse("kernel verify --running", "sysroot-boot-config"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("/boot/config-6.12.47+rpt-rpi-2712"), std::string::npos) << r.output;
}

TEST(KernelVerifyCli, RunningWithoutAnyConfigIsExitThree) {
  auto r = RunCommand(Rtpulse("kernel verify --running", "sysroot-no-config"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("rtpulse: error: no config for the running kernel"), std::string::npos)
      << r.output;
}

TEST(KernelVerifyCli, RunningConfigThatContradictsUnameFails) {
  auto r = RunCommand(Rtpulse("kernel verify --running", "sysroot-mismatch"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("problem  the config says PREEMPT_RT"), std::string::npos) << r.output;
}

TEST(KernelVerifyCli, JsonReportIsParseableShape) {
  auto r =
      RunCommand(Rtpulse("kernel verify --json --config " + kData + "configs/pi5-stock.config"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output.front(), '{') << r.output;
  EXPECT_NE(r.output.find("\"ok\": false"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"state\": \"missing\""), std::string::npos) << r.output;
}

TEST(KernelVerifyCli, BadUsageAndBadFilesAreExitTwo) {
  struct Case {
    std::string args;
    std::string says;
  };
  const Case cases[] = {
      {"kernel verify", "exactly one of --config FILE or --running"},
      {"kernel verify --running --config " + kData + "configs/pi5-rt.config", "excludes"},
      {"kernel verify --config /nonexistent/.config", "/nonexistent/.config"},
      {"kernel verify --config " + kData + "configs/pi5-rt.config --fragment " + kData +
           "fragments/bad-line.config",
       "bad-line.config:2: cannot read 'PREEMPT_RT=y'"},
      {"kernel verify --config " + kData + "configs/pi5-rt.config --fragment " + kData +
           "fragments/conflict.config",
       "conflict.config:3: CONFIG_HZ_1000"},
      {"kernel verify --config " + kData + "fragments/../sysroot-rt/proc/config.gz", "cannot read"},
      {"kernel", "A subcommand is required"},
  };
  for (const auto& c : cases) {
    auto r = RunCommand(Rtpulse(c.args));
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(KernelFragmentCli, PrintsTheBuiltInFragment) {
  auto r = RunCommand(Rtpulse("kernel fragment"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("CONFIG_PREEMPT_RT=y"), std::string::npos);
  EXPECT_NE(r.output.find("NTP_PPS"), std::string::npos);  // the reason it is left out
}

}  // namespace
}  // namespace rtpulse
