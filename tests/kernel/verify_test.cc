#include "kernel/verify.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kernel/running_config.h"
#include "support/test_paths.h"

namespace rtpulse::kernel {
namespace {

KernelConfig ParseOrDie(const std::string& text) {
  auto config = KernelConfig::Parse(text, "test");
  if (!config) ADD_FAILURE() << config.error().message;
  return std::move(config).value();
}

KernelConfig Fixture(const std::string& name) {
  std::ifstream in(std::string(RTPULSE_TEST_DATA) + "/kernel/configs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return ParseOrDie(text.str());
}

KernelConfig BuiltInFragment() {
  auto fragment = KernelConfig::Parse(DefaultFragment(), "rt.config", true);
  if (!fragment) ADD_FAILURE() << fragment.error().message;
  return std::move(fragment).value();
}

const OptionCheck& Find(const VerifyReport& report, const std::string& name) {
  for (const auto& c : report.checks) {
    if (c.name == name) return c;
  }
  static const OptionCheck kNone{};
  ADD_FAILURE() << name << " not in report";
  return kNone;
}

TEST(VerifyTest, BuiltInFragmentAsksForTheRtOptionsAndNotNtpPps) {
  const auto fragment = BuiltInFragment();
  for (const char* name : {"EXPERT", "PREEMPT_RT", "HZ_1000", "NO_HZ_FULL", "HIGH_RES_TIMERS",
                           "CPU_FREQ_DEFAULT_GOV_PERFORMANCE", "PPS", "PPS_CLIENT_GPIO"}) {
    EXPECT_TRUE(fragment.Get(name).has_value() && fragment.Get(name) != "n") << name;
  }
  EXPECT_EQ(fragment.Get("PROVE_LOCKING"), "n");
  EXPECT_EQ(fragment.Get("NTP_PPS"), std::nullopt) << "NTP_PPS cannot coexist with NO_HZ_FULL";
}

TEST(VerifyTest, APi5RtConfigPassesTheBuiltInFragment) {
  const auto report = Verify(BuiltInFragment(), Fixture("pi5-rt.config"));
  for (const auto& c : report.checks) {
    EXPECT_EQ(c.state, OptionState::kSet) << c.name << ": " << c.reason;
  }
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.Count(OptionState::kSet), report.checks.size());
}

TEST(VerifyTest, StockKernelWithoutExpertExplainsTheFallback) {
  const auto report = Verify(BuiltInFragment(), Fixture("pi5-stock.config"));
  EXPECT_FALSE(report.ok());
  const auto& rt = Find(report, "PREEMPT_RT");
  EXPECT_EQ(rt.state, OptionState::kMissing);
  EXPECT_NE(rt.reason.find("depends on EXPERT"), std::string::npos) << rt.reason;
  EXPECT_NE(rt.reason.find("fell back to PREEMPT"), std::string::npos) << rt.reason;
  EXPECT_NE(rt.reason.find("CONFIG_EXPERT=y"), std::string::npos) << rt.reason;
  EXPECT_EQ(Find(report, "EXPERT").state, OptionState::kDropped);
  const auto& hz = Find(report, "HZ_1000");
  EXPECT_EQ(hz.state, OptionState::kMissing);
  EXPECT_NE(hz.reason.find("CONFIG_HZ=250"), std::string::npos) << hz.reason;
  EXPECT_EQ(Find(report, "NO_HZ_FULL").state, OptionState::kDropped);
  EXPECT_EQ(Find(report, "IKCONFIG").state, OptionState::kDropped);  // m, asked y
  EXPECT_EQ(Find(report, "IKCONFIG").reason, "built as a module, asked built in");
  EXPECT_EQ(Find(report, "PPS_CLIENT_GPIO").state, OptionState::kSet);
  EXPECT_EQ(Find(report, "PROVE_LOCKING").state, OptionState::kSet);  // asked off, is off
  EXPECT_EQ(Find(report, "KASAN").state, OptionState::kSet);          // asked off, absent
}

TEST(VerifyTest, OldTreeWithoutArchSupportsRtNamesThePatchAnd612) {
  const auto report =
      Verify(ParseOrDie("CONFIG_EXPERT=y\nCONFIG_PREEMPT_RT=y\n"), Fixture("rpi-6.6-norts.config"));
  const auto& rt = Find(report, "PREEMPT_RT");
  EXPECT_EQ(rt.state, OptionState::kMissing);
  EXPECT_NE(rt.reason.find("6.6.78"), std::string::npos) << rt.reason;
  EXPECT_NE(rt.reason.find("6.12"), std::string::npos) << rt.reason;
  EXPECT_NE(rt.reason.find("RT patch"), std::string::npos) << rt.reason;
  EXPECT_EQ(Find(report, "EXPERT").state, OptionState::kSet);
}

TEST(VerifyTest, NewTreeWithoutArchSupportsRtBlamesTheArchitecture) {
  const auto report =
      Verify(ParseOrDie("CONFIG_PREEMPT_RT=y\n"),
             ParseOrDie("# Linux/mips 6.12.1 Kernel Configuration\nCONFIG_EXPERT=y\n"
                        "CONFIG_PREEMPT=y\n"));
  const auto& rt = Find(report, "PREEMPT_RT");
  EXPECT_NE(rt.reason.find("architecture (mips) cannot select PREEMPT_RT"), std::string::npos)
      << rt.reason;
}

TEST(VerifyTest, NtpPpsBesideNoHzFullIsExplained) {
  const auto report =
      Verify(ParseOrDie("CONFIG_NO_HZ_FULL=y\nCONFIG_NTP_PPS=y\n"), Fixture("ntp-pps-nohz.config"));
  EXPECT_EQ(Find(report, "NO_HZ_FULL").state, OptionState::kSet);
  const auto& pps = Find(report, "NTP_PPS");
  EXPECT_EQ(pps.state, OptionState::kMissing);
  EXPECT_NE(pps.reason.find("!NO_HZ_COMMON"), std::string::npos) << pps.reason;
  EXPECT_NE(pps.reason.find("cannot coexist"), std::string::npos) << pps.reason;
  EXPECT_FALSE(report.ok());
}

TEST(VerifyTest, ModuleRequestIsSatisfiedByBuiltInButNotTheReverse) {
  const auto config = ParseOrDie("CONFIG_A=y\nCONFIG_B=m\n");
  const auto report = Verify(ParseOrDie("CONFIG_A=m\nCONFIG_B=y\n"), config);
  EXPECT_EQ(Find(report, "A").state, OptionState::kSet);
  EXPECT_EQ(Find(report, "B").state, OptionState::kDropped);
}

TEST(VerifyTest, OffRequestFailsWhenSomethingSelectsIt) {
  const auto report = Verify(ParseOrDie("# CONFIG_PROVE_LOCKING is not set\n"),
                             ParseOrDie("CONFIG_PROVE_LOCKING=y\n"));
  const auto& c = Find(report, "PROVE_LOCKING");
  EXPECT_EQ(c.state, OptionState::kDropped);
  EXPECT_NE(c.reason.find("another option selects it"), std::string::npos) << c.reason;
}

TEST(VerifyTest, ValuesCompareExactly) {
  const auto report = Verify(ParseOrDie("CONFIG_HZ=1000\nCONFIG_NR_CPUS=4\n"),
                             ParseOrDie("CONFIG_HZ=1000\nCONFIG_NR_CPUS=256\n"));
  EXPECT_EQ(Find(report, "HZ").state, OptionState::kSet);
  EXPECT_EQ(Find(report, "NR_CPUS").state, OptionState::kDropped);
  EXPECT_EQ(*Find(report, "NR_CPUS").actual, "256");
}

TEST(VerifyTest, EmptyFragmentIsTriviallyOk) {
  const auto report = Verify(ParseOrDie(""), ParseOrDie("CONFIG_A=y\n"));
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.checks.empty());
}

TEST(VerifyTest, RunningVersionWithoutPreemptRtContradictsAnRtConfig) {
  const auto fragment = BuiltInFragment();
  const auto config = Fixture("pi5-rt.config");
  VerifyReport report = Verify(fragment, config);
  CheckRunningVersion(fragment, config, "#1 SMP PREEMPT_RT Sat Nov 29", report);
  EXPECT_TRUE(report.ok());
  CheckRunningVersion(fragment, config, "#1 SMP PREEMPT Debian", report);
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_NE(report.problems[0].find("another build"), std::string::npos);
  EXPECT_FALSE(report.ok());
}

TEST(VerifyTest, StateNames) {
  EXPECT_EQ(StateName(OptionState::kSet), "set");
  EXPECT_EQ(StateName(OptionState::kDropped), "dropped");
  EXPECT_EQ(StateName(OptionState::kMissing), "missing");
}

}  // namespace
}  // namespace rtpulse::kernel
