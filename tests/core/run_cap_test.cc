// RTPULSE_MAX_RUN_S (core/run_cap.h): unset or empty is no cap, a positive number of seconds
// is the cap in ns, anything else a usage error naming the value; the warning names the
// variable, what was capped and from what to what.
#include "core/run_cap.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace rtpulse {
namespace {

class RunCapTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(kMaxRunEnv); }
};

TEST_F(RunCapTest, UnsetOrEmptyIsNoCapAndSecondsAreNanoseconds) {
  unsetenv(kMaxRunEnv);
  auto none = MaxRunNs();
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  setenv(kMaxRunEnv, "", 1);
  ASSERT_TRUE(MaxRunNs());
  EXPECT_FALSE(MaxRunNs()->has_value());
  setenv(kMaxRunEnv, "2", 1);
  EXPECT_EQ(MaxRunNs()->value_or(0), 2'000'000'000);
  setenv(kMaxRunEnv, "0.25", 1);
  EXPECT_EQ(MaxRunNs()->value_or(0), 250'000'000);
  EXPECT_EQ(MaxRunWarning("-D", "10m", MaxRunSeconds(250'000'000)),
            "RTPULSE_MAX_RUN_S=0.25: -D capped from 10m to 0.25 s (a test aid: the run is "
            "shorter than asked)");
}

TEST_F(RunCapTest, AValueThatIsNoPositiveNumberIsAUsageErrorNamingIt) {
  // 1e-10 s would round to 0 ns, which reads as "no end": refused below 1 ms.
  for (const char* bad : {"abc", "0", "-1", "2s", "nan", "inf", "1e-10", "0.0009"}) {
    setenv(kMaxRunEnv, bad, 1);
    auto cap = MaxRunNs();
    ASSERT_FALSE(cap) << bad;
    EXPECT_EQ(cap.error().code, ExitCode::kUsage);
    EXPECT_NE(cap.error().message.find(std::string("RTPULSE_MAX_RUN_S='") + bad + "'"),
              std::string::npos)
        << cap.error().message;
  }
}

}  // namespace
}  // namespace rtpulse
