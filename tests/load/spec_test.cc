#include "load/spec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rtpulse::load {
namespace {

std::string ErrorOf(const std::vector<std::string>& args) {
  auto specs = ParseLoadSpecs(args);
  if (specs) return "";
  EXPECT_EQ(specs.error().code, ExitCode::kUsage) << specs.error().message;
  return specs.error().message;
}

TEST(LoadSpec, ParsesCommonAndOwnKeys) {
  auto s = ParseLoadSpec("memory:cpus=0,mb=16,nice=5,intensity=40");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->name, "memory");
  EXPECT_EQ(s->params.cpus, std::vector<int>{0});
  EXPECT_EQ(s->params.nice, 5);
  EXPECT_EQ(s->params.intensity, 40);
  EXPECT_EQ(s->params.Option("mb", ""), "16");
}

TEST(LoadSpec, CommaInsideACpuListStaysInTheList) {
  const auto online = load::LocalCpuScope().online;
  ASSERT_FALSE(online.empty());
  const std::string list = std::to_string(online.front()) + "," + std::to_string(online.back());
  auto s = ParseLoadSpec("cpu:cpus=" + list + ",intensity=10");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->params.cpus.front(), online.front());
  EXPECT_EQ(s->params.cpus.back(), online.back());
  EXPECT_EQ(s->params.intensity, 10);
}

TEST(LoadSpec, NoCpusMeansEveryOnlineCpu) {
  auto s = ParseLoadSpec("cpu");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->params.cpus, load::LocalCpuScope().online);
}

TEST(LoadSpec, SplitsOnPlusAndAcrossArguments) {
  auto specs = ParseLoadSpecs({"cpu:cpus=0+switch:cpus=0", "net:proto=tcp,cpus=0"});
  ASSERT_TRUE(specs) << specs.error().message;
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[1].name, "switch");
  EXPECT_EQ((*specs)[2].params.Option("proto", ""), "tcp");
}

TEST(LoadSpec, StressNgKeepsItsArgumentsVerbatim) {
  auto s = ParseLoadSpec("stress-ng:cpus=0,nice=3 --cpu 2 --vm 1 --vm-bytes 10%");
  if (!s && s.error().code == ExitCode::kResource) GTEST_SKIP() << s.error().message;
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->params.args,
            (std::vector<std::string>{"--cpu", "2", "--vm", "1", "--vm-bytes", "10%"}));
  EXPECT_EQ(s->params.nice, 3);
  EXPECT_EQ(s->params.cpus, std::vector<int>{0});
}

TEST(LoadSpec, RejectsBadInputWithTheValueAndTheFix) {
  EXPECT_EQ(ErrorOf({"cpu:intensity=0"}),
            "load 'cpu:intensity=0': intensity=0 is not valid; give a duty cycle from 1 to 100 "
            "(percent)");
  EXPECT_NE(ErrorOf({"cpu:intensity=101"}).find("intensity=101 is not valid"), std::string::npos);
  EXPECT_NE(ErrorOf({"cpu:cpus=4095"}).find("CPU 4095 is not online"), std::string::npos);
  EXPECT_EQ(ErrorOf({"cpu:cpus=x"}),
            "load 'cpu:cpus=x': cpus=x is not a CPU list; give e.g. "
            "cpus=0-1,3");
  EXPECT_EQ(ErrorOf({"cpu:cpu=0"}), "load 'cpu:cpu=0': unknown option 'cpu'. Did you mean 'cpus'?");
  EXPECT_EQ(ErrorOf({"cpu:mb=5"}),
            "load 'cpu:mb=5': unknown option 'mb' (options: cpus, nice, policy, prio, intensity)");
  EXPECT_EQ(ErrorOf({"cpu:fast"}), "load 'cpu:fast': 'fast' is not key=value");
  EXPECT_EQ(ErrorOf({"cpu:nice=1,nice=2"}), "load 'cpu:nice=1,nice=2': option 'nice' given twice");
  EXPECT_EQ(ErrorOf({"cpu:policy=fifo"}),
            "load 'cpu:policy=fifo': policy fifo/rr needs prio=1..99");
  EXPECT_EQ(ErrorOf({"cpu:prio=5"}), "load 'cpu:prio=5': prio= needs policy=fifo or policy=rr");
  EXPECT_NE(ErrorOf({"cpu:policy=deadline"}).find("policy=deadline is not known"),
            std::string::npos);
  EXPECT_EQ(ErrorOf({"cpu:policy=normal"}),
            "load 'cpu:policy=normal': policy=normal is not known; give policy=other, batch, "
            "idle, fifo or rr");
  EXPECT_NE(ErrorOf({"net:proto=sctp"}).find("proto=sctp is not known"), std::string::npos);
  EXPECT_NE(ErrorOf({"memory:mb=0"}).find("mb=0 is not valid"), std::string::npos);
  EXPECT_NE(ErrorOf({"io:dir=/nonexistent/x"}).find("dir=/nonexistent/x is not a writable"),
            std::string::npos);
  EXPECT_EQ(ErrorOf({"cpu++cpu"}), "empty load in 'cpu++cpu'; join loads as cpu+memory");
  EXPECT_EQ(ErrorOf({"cpux"}), "unknown load 'cpux'. Did you mean 'cpu'?");
  EXPECT_EQ(ErrorOf({}), "no load given; give e.g. cpu:cpus=0 (see docs/loads.md)");
}

}  // namespace
}  // namespace rtpulse::load
