#include "sys/process_facts.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>

namespace rtpulse::sys {
namespace {

TEST(ProcessFactsTest, ProbeReportsThisProcess) {
  const auto facts = ProbeProcess();
  EXPECT_EQ(facts.euid, geteuid());
  EXPECT_FALSE(facts.injected);
  rlimit memlock{};
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &memlock), 0);
  if (memlock.rlim_cur == RLIM_INFINITY) {
    EXPECT_FALSE(facts.memlock_soft_bytes.has_value());
  } else {
    EXPECT_EQ(facts.memlock_soft_bytes, memlock.rlim_cur);
  }
  // capget() and the kernel's own text view must agree.
  std::ifstream status("/proc/self/status");
  std::string line;
  std::optional<uint64_t> cap_eff;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0) cap_eff = std::stoull(line.substr(7), nullptr, 16);
  }
  ASSERT_TRUE(cap_eff.has_value());
  EXPECT_EQ(facts.cap_effective, *cap_eff);
}

TEST(ProcessFactsTest, ParsesTheInjectionFormat) {
  const auto f =
      ParseProcessFacts("euid=1000,cap_eff=0x800000,memlock=8388608:unlimited,rtprio=0:95");
  ASSERT_TRUE(f.has_value()) << f.error().message;
  EXPECT_TRUE(f->injected);
  EXPECT_EQ(f->euid, 1000u);
  EXPECT_TRUE(f->HasCap(ProcessFacts::kCapSysNice));
  EXPECT_FALSE(f->HasCap(ProcessFacts::kCapIpcLock));
  EXPECT_EQ(f->memlock_soft_bytes, 8388608u);
  EXPECT_FALSE(f->memlock_hard_bytes.has_value());
  EXPECT_EQ(f->rtprio_soft, 0u);
  EXPECT_EQ(f->rtprio_hard, 95u);
}

TEST(ProcessFactsTest, RejectsIncompleteOrBadSpecs) {
  for (const char* bad :
       {"", "euid=0", "euid=0,cap_eff=0,memlock=1:1",
        "euid=0,cap_eff=0,memlock=1:1,rtprio=0:0,extra=1",
        "euid=x,cap_eff=0,memlock=1:1,rtprio=0:0", "euid=0,cap_eff=0xZ,memlock=1:1,rtprio=0:0",
        "euid=0,cap_eff=0,memlock=1,rtprio=0:0", "euid=0,cap_eff=0,memlock=1:1,rtprio=0:-1",
        "euid0"}) {
    const auto f = ParseProcessFacts(bad);
    ASSERT_FALSE(f.has_value()) << bad;
    EXPECT_EQ(f.error().code, ExitCode::kUsage);
    EXPECT_NE(f.error().message.find(kProcessFactsEnv), std::string::npos) << f.error().message;
  }
}

}  // namespace
}  // namespace rtpulse::sys
